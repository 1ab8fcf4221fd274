// Shapes against triangle meshes (dynamics/src/collision_mesh.cpp): no bumps at internal edges
// and vertices, a box hull on two triangles as on a plane.
#include <dynamics/shapes.h>

#include <cmath>
#include <set>

#include <gtest/gtest.h>

#include "collision.h"
#include "shape_test_util.h"

namespace sim::dynamics {
namespace {

using namespace shape_testing;

// A sphere on a flat grid right over an internal vertex and over an internal edge: every
// manifold has the face normal and the plane distance (no bump from the joins), and each
// manifold's feature ids differ.
TEST(TriangleMesh, SphereOverInternalEdgesSeesAPlane) {
  const ShapeDef mesh = meshShape(grid(4, 0.5));  // outlives the placed shape's raw pointer
  const auto ground = place(mesh, Vec3::Zero());
  for (const Vec3& at : {Vec3(0.0, 0.0, 0.098), Vec3(0.25, 0.0, 0.098), Vec3(0.1, 0.1, 0.098)}) {
    const auto ball = place(sphere(0.1), at);
    std::vector<detail::Manifold> ms;
    detail::collideAll(ball, ground, kMargin, ms);
    ASSERT_FALSE(ms.empty());
    std::set<std::uint32_t> ids;
    for (const auto& m : ms) {
      EXPECT_NEAR((m.normal + Vec3::UnitZ()).norm(), 0.0, 1e-12);
      for (int i = 0; i < m.count; ++i) {
        EXPECT_NEAR(m.points[i].separation, -0.002, 1e-12);
        ids.insert(m.points[i].feature);
      }
    }
    std::size_t points = 0;
    for (const auto& m : ms) points += static_cast<std::size_t>(m.count);
    EXPECT_EQ(ids.size(), points);
  }
  // Beyond the mesh's boundary edge the edge is active: the normal tilts toward the sphere.
  const auto off = place(sphere(0.1), Vec3(1.05, 0.1, 0.05));
  std::vector<detail::Manifold> ms;
  detail::collideAll(off, ground, kMargin, ms);
  ASSERT_FALSE(ms.empty());
  // From the sphere (outside x = 1, above) toward the edge: along (-1, 0, -1) / sqrt(2).
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_NEAR((ms[0].normal - Vec3(-1, 0, -1).normalized()).norm(), 0.0, 1e-12);
  EXPECT_NEAR(ms[0].points[0].separation, 0.05 * std::sqrt(2.0) - 0.1, 1e-12);
}

// A box-shaped hull on a two-triangle ground equals the hull on a plane: the same normal and
// four points at the same depth (the diagonal is an inactive, flat edge).
TEST(TriangleMesh, HullBoxOnTwoTrianglesMatchesPlane) {
  const auto mesh = makeTriangleMesh(
      {Vec3(-2, -2, 0), Vec3(2, -2, 0), Vec3(2, 2, 0), Vec3(-2, 2, 0)}, {{0, 1, 2}, {0, 2, 3}});
  ASSERT_TRUE(mesh);
  const ShapeDef mesh_def = meshShape(mesh);
  const auto ground = place(mesh_def, Vec3::Zero());
  const auto flat = place(plane(), Vec3::Zero());
  const ShapeDef hb = hull(boxCorners(Vec3(0.1, 0.1, 0.1)));
  const auto body =
      place(hb, Vec3(0.02, -0.01, 0.099), Quat(Eigen::AngleAxisd(0.3, Vec3::UnitZ())));
  detail::Manifold on_plane;
  ASSERT_TRUE(detail::collide(body, flat, kMargin, on_plane));
  ASSERT_EQ(on_plane.count, 4);
  std::vector<detail::Manifold> ms;
  detail::collideAll(body, ground, kMargin, ms);
  ASSERT_EQ(ms.size(), 2u);  // the box straddles the diagonal: one manifold per triangle
  int points = 0;
  for (const auto& m : ms) {
    EXPECT_NEAR((m.normal + Vec3::UnitZ()).norm(), 0.0, 1e-12);
    for (int i = 0; i < m.count; ++i) EXPECT_NEAR(m.points[i].separation, -0.001, 1e-12);
    points += m.count;
  }
  EXPECT_GE(points, 4);
}

}  // namespace
}  // namespace sim::dynamics
