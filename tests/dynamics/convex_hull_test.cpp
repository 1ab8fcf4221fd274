// Quickhull (dynamics/src/convex_hull.cpp): hull invariants (Euler, containment, edges) on a cube
// with interior and duplicate points and on random clouds; degenerate input refused with a reason.
#include <dynamics/shapes.h>

#include <algorithm>
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "collision.h"
#include "shape_test_util.h"

namespace sim::dynamics {
namespace {

using namespace shape_testing;

// Euler's formula and the containment of every input point in every face plane. The plane
// tolerance is 1e-9 of the cloud's size: quickhull counts points within 1e-11 of it as on the
// hull, and planes are pushed out to the farthest vertex, so only rounding remains.
void expectValidHull(const ConvexHullData& h, const std::vector<Vec3>& points) {
  const int v = static_cast<int>(h.vertices.size()), e = static_cast<int>(h.edges.size()),
            f = static_cast<int>(h.faces.size());
  EXPECT_EQ(v - e + f, 2);
  double size = 0.0;
  for (const Vec3& p : points) size = std::max(size, p.cwiseAbs().maxCoeff());
  double worst = -1e300;
  for (const auto& face : h.faces) {
    EXPECT_NEAR(face.normal.norm(), 1.0, 1e-12);
    for (const Vec3& p : points) worst = std::max(worst, face.normal.dot(p) - face.offset);
  }
  EXPECT_LE(worst, 1e-9 * size);
  // Every edge borders two different faces; every face has >= 3 corners.
  for (const auto& ed : h.edges) EXPECT_NE(ed.face_left, ed.face_right);
  for (const auto& face : h.faces) EXPECT_GE(face.count, 3);
}

TEST(Quickhull, CubeWithInteriorAndDuplicatePointsHasSixQuads) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-0.999, 0.999);
  std::vector<Vec3> pts = boxCorners(Vec3(1, 1, 1));
  for (int i = 0; i < 200; ++i) pts.emplace_back(u(rng), u(rng), u(rng));
  for (int i = 0; i < 8; ++i) pts.push_back(pts[i]);  // duplicate corners
  pts.emplace_back(1.0, 0.3, -0.2);                   // on a face
  pts.emplace_back(1.0, 1.0, 0.5);                    // on an edge
  std::shuffle(pts.begin(), pts.end(), rng);
  std::string error;
  const auto h = makeConvexHull(pts, &error);
  ASSERT_TRUE(h) << error;
  EXPECT_EQ(h->vertices.size(), 8u);
  EXPECT_EQ(h->faces.size(), 6u);
  EXPECT_EQ(h->edges.size(), 12u);
  for (const auto& f : h->faces) {
    EXPECT_EQ(f.count, 4);
    EXPECT_NEAR(f.offset, 1.0, 1e-15);
    EXPECT_NEAR(f.normal.cwiseAbs().maxCoeff(), 1.0, 1e-15);  // axis-aligned
  }
  expectValidHull(*h, pts);
}

TEST(Quickhull, RandomCloudsContainAllPointsAndSatisfyEuler) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 30; ++trial) {
    const int n = 4 + trial * 17;
    std::vector<Vec3> pts = randomCloud(rng, n, 0.5 + trial * 0.1);
    // Shift far from the origin for some clouds: tolerances are relative to the cloud.
    if (trial % 3 == 0)
      for (Vec3& p : pts) p += Vec3(100, -50, 20);
    std::string error;
    const auto h = makeConvexHull(pts, &error);
    ASSERT_TRUE(h) << "trial " << trial << ": " << error;
    SCOPED_TRACE(testing::Message() << "trial " << trial);
    expectValidHull(*h, pts);
  }
  // Points on a sphere: every point is a vertex.
  std::vector<Vec3> sphere_pts;
  for (int i = 0; i < 300; ++i) {
    const double z = 1.0 - 2.0 * (i + 0.5) / 300.0, phi = i * 2.399963229728653;
    sphere_pts.emplace_back(std::sqrt(1 - z * z) * std::cos(phi),
                            std::sqrt(1 - z * z) * std::sin(phi), z);
  }
  const auto h = makeConvexHull(sphere_pts);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->vertices.size(), 300u);
  expectValidHull(*h, sphere_pts);
}

TEST(Quickhull, DegenerateInputIsRejectedWithAReason) {
  std::string error;
  EXPECT_FALSE(makeConvexHull({Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0)}, &error));
  EXPECT_NE(error.find("at least 4"), std::string::npos) << error;
  EXPECT_FALSE(makeConvexHull(
      {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(1, 1, 0), Vec3(0.5, 0.2, 0)}, &error));
  EXPECT_NE(error.find("plane"), std::string::npos) << error;
  EXPECT_FALSE(
      makeConvexHull({Vec3(0, 0, 0), Vec3(1, 1, 1), Vec3(2, 2, 2), Vec3(3, 3, 3)}, &error));
  EXPECT_NE(error.find("line"), std::string::npos) << error;
  EXPECT_FALSE(makeConvexHull(
      {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, std::nan(""))}, &error));
  EXPECT_NE(error.find("not finite"), std::string::npos) << error;
}

}  // namespace
}  // namespace sim::dynamics
