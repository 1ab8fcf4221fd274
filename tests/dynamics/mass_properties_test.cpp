// Mass properties of shapes (dynamics/src/mass_properties.cpp) against textbook formulas.
#include <dynamics/shapes.h>

#include <cmath>
#include <numbers>

#include <gtest/gtest.h>

#include "collision.h"
#include "shape_test_util.h"

namespace sim::dynamics {
namespace {

using namespace shape_testing;
constexpr double kPi = std::numbers::pi;

// Box and cylinder against their textbook formulas (to rounding); a box hull against the box
// (the tetrahedron decomposition is exact for polyhedra: 1e-12 relative); a 512-gon prism hull
// against the cylinder (the polygon's area is short by (2 pi / N)^2 / 6 = 2.5e-5 relative).
TEST(MassProperties, MatchAnalyticFormulas) {
  const double rho = 7800.0;
  const auto b = computeMassProperties(box(Vec3(0.1, 0.2, 0.3)), rho);
  ASSERT_TRUE(b);
  const double mb = rho * 0.2 * 0.4 * 0.6;
  EXPECT_NEAR(b->mass_kg, mb, 1e-12 * mb);
  EXPECT_NEAR(b->inertia_kgm2(0, 0), mb * (0.16 + 0.36) / 12, 1e-12 * mb);
  EXPECT_NEAR(b->inertia_kgm2(1, 1), mb * (0.04 + 0.36) / 12, 1e-12 * mb);
  EXPECT_NEAR(b->inertia_kgm2(2, 2), mb * (0.04 + 0.16) / 12, 1e-12 * mb);

  const auto c = computeMassProperties(cylinder(0.1, 0.25), rho);
  ASSERT_TRUE(c);
  const double mc = rho * kPi * 0.01 * 0.5;
  EXPECT_NEAR(c->mass_kg, mc, 1e-12 * mc);
  EXPECT_NEAR(c->inertia_kgm2(2, 2), 0.5 * mc * 0.01, 1e-12 * mc);
  EXPECT_NEAR(c->inertia_kgm2(0, 0), mc * (3 * 0.01 + 0.25) / 12, 1e-12 * mc);

  // The box as a hull, placed off-centre and turned: centre and rotated inertia follow the pose.
  ShapeDef hb = hull(boxCorners(Vec3(0.1, 0.2, 0.3)));
  hb.pose.position = Vec3(1, 2, 3);
  hb.pose.rotation = Quat(Eigen::AngleAxisd(0.4, Vec3(1, 2, 3).normalized()));
  const auto h = computeMassProperties(hb, rho);
  ASSERT_TRUE(h);
  const Mat3 R = hb.pose.rotation.toRotationMatrix();
  EXPECT_NEAR(h->mass_kg, mb, 1e-12 * mb);
  EXPECT_NEAR((h->center_m - Vec3(1, 2, 3)).norm(), 0.0, 1e-12);
  EXPECT_NEAR((h->inertia_kgm2 - R * b->inertia_kgm2 * R.transpose()).norm(), 0.0, 1e-12 * mb);

  std::vector<Vec3> prism;
  const int n = 512;
  for (int i = 0; i < n; ++i)
    for (double z : {-0.25, 0.25})
      prism.emplace_back(0.1 * std::cos(2 * kPi * i / n), 0.1 * std::sin(2 * kPi * i / n), z);
  ShapeDef hp;
  hp.type = ShapeType::ConvexHull;
  hp.hull = makeConvexHull(prism);
  ASSERT_TRUE(hp.hull);
  EXPECT_EQ(hp.hull->faces.size(), static_cast<std::size_t>(n + 2));  // caps merged into 512-gons
  const auto p = computeMassProperties(hp, rho);
  ASSERT_TRUE(p);
  EXPECT_NEAR(p->mass_kg, mc, 3e-5 * mc);
  EXPECT_NEAR(p->inertia_kgm2(2, 2), c->inertia_kgm2(2, 2), 1e-4 * c->inertia_kgm2(2, 2));
  EXPECT_NEAR(p->inertia_kgm2(0, 0), c->inertia_kgm2(0, 0), 1e-4 * c->inertia_kgm2(0, 0));
  EXPECT_NEAR(p->center_m.norm(), 0.0, 1e-12);

  // Two half boxes combine into the whole box (parallel axes).
  ShapeDef lower = box(Vec3(0.1, 0.2, 0.15)), upper = lower;
  lower.pose.position = Vec3(0, 0, -0.15);
  upper.pose.position = Vec3(0, 0, 0.15);
  const MassProperties whole = combineMassProperties(
      {*computeMassProperties(lower, rho), *computeMassProperties(upper, rho)});
  EXPECT_NEAR(whole.mass_kg, mb, 1e-12 * mb);
  EXPECT_NEAR((whole.inertia_kgm2 - b->inertia_kgm2).norm(), 0.0, 1e-12 * mb);
  // Shapes without volume have no mass properties.
  EXPECT_FALSE(computeMassProperties(plane(), rho));
  EXPECT_FALSE(computeMassProperties(box(Vec3::Ones()), 0.0));
}

}  // namespace
}  // namespace sim::dynamics
