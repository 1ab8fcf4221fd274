// Convex pairs (dynamics/src/collision_convex.cpp): cylinders against spheres, planes, boxes and
// each other to the analytic distances and rim points, a box-shaped hull against box-box, and
// GJK/EPA pairs with a face.
#include <dynamics/shapes.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <set>

#include <gtest/gtest.h>

#include "collision.h"
#include "shape_test_util.h"

namespace sim::dynamics {
namespace {

using namespace shape_testing;
constexpr double kPi = std::numbers::pi;

// Largest coordinate difference between the point sets of two manifolds (each point of `a`
// matched to its nearest in `b`; infinite when the counts differ).
double pointSetDifference(const detail::Manifold& a, const detail::Manifold& b) {
  if (a.count != b.count) return 1e300;
  double worst = 0.0;
  for (int i = 0; i < a.count; ++i) {
    double best = 1e300;
    for (int j = 0; j < b.count; ++j) {
      const auto& p = a.points[i];
      const auto& q = b.points[j];
      best = std::min(best, std::max({(p.on_a - q.on_a).cwiseAbs().maxCoeff(),
                                      (p.on_b - q.on_b).cwiseAbs().maxCoeff(),
                                      std::abs(p.separation - q.separation)}));
    }
    worst = std::max(worst, best);
  }
  return worst;
}

// A sphere against a cylinder's side, cap and rim: the separation is the analytic distance
// between the solids (exact formulas, so 1e-12 is rounding only).
TEST(Cylinder, SphereDistancesToSideCapAndRimAreExact) {
  const auto c =
      place(cylinder(0.1, 0.2), Vec3::Zero(), Quat(Eigen::AngleAxisd(0.3, Vec3::UnitX())));
  const Mat3 axes = c.axes;
  detail::Manifold m;
  // Side: centre 0.105 from the axis, at mid height: separation 0.105 - 0.1 - 0.01 = -0.005.
  const auto side = place(sphere(0.01), axes * Vec3(0.105, 0, 0.05));
  ASSERT_TRUE(detail::collide(side, c, kMargin, m));
  ASSERT_EQ(m.count, 1);
  EXPECT_NEAR(m.points[0].separation, -0.005, 1e-12);
  EXPECT_NEAR((m.normal + axes.col(0)).norm(), 0.0, 1e-12);  // from the sphere toward the axis
  // Cap: centre 0.203 above the middle, off-axis: separation 0.203 - 0.2 - 0.01 = -0.007.
  const auto cap = place(sphere(0.01), axes * Vec3(0.03, -0.04, 0.203));
  ASSERT_TRUE(detail::collide(cap, c, kMargin, m));
  EXPECT_NEAR(m.points[0].separation, -0.007, 1e-12);
  EXPECT_NEAR((m.normal + axes.col(2)).norm(), 0.0, 1e-12);
  // Rim: centre 0.003 beyond the rim diagonally: distance 0.003 * sqrt(2) minus the radius.
  const auto rim = place(sphere(0.01), axes * Vec3(0.103, 0, 0.203));
  ASSERT_TRUE(detail::collide(rim, c, kMargin, m));
  EXPECT_NEAR(m.points[0].separation, 0.003 * std::sqrt(2.0) - 0.01, 1e-12);
  // Centre inside, nearer the side than the caps: pushed out through the side.
  const auto inside = place(sphere(0.01), axes * Vec3(0.0, 0.095, 0.0));
  ASSERT_TRUE(detail::collide(inside, c, kMargin, m));
  EXPECT_NEAR(m.points[0].separation, -0.015, 1e-12);
  EXPECT_NEAR((m.normal + axes.col(1)).norm(), 0.0, 1e-12);
  // Beyond the margin.
  EXPECT_FALSE(detail::collide(place(sphere(0.01), axes * Vec3(0.121, 0, 0)), c, kMargin, m));
}

// Upright on a plane, 2 mm deep: four rim points, all exactly 2 mm deep, spanning the rim.
TEST(Cylinder, UprightOnPlaneGivesFourExactRimPoints) {
  const auto ground = place(plane(), Vec3::Zero());
  const auto c = place(cylinder(0.1, 0.2), Vec3(0.3, -0.2, 0.198),
                       Quat(Eigen::AngleAxisd(0.7, Vec3::UnitZ())));
  detail::Manifold m;
  ASSERT_TRUE(detail::collide(c, ground, kMargin, m));
  EXPECT_NEAR((m.normal + Vec3::UnitZ()).norm(), 0.0, 1e-15);
  ASSERT_EQ(m.count, 4);
  std::set<std::uint32_t> ids;
  for (int i = 0; i < m.count; ++i) {
    EXPECT_NEAR(m.points[i].separation, -0.002, 1e-12);
    EXPECT_NEAR((m.points[i].on_a - Vec3(0.3, -0.2, 0.0)).head<2>().norm(), 0.1, 1e-12);
    ids.insert(m.points[i].feature);
  }
  EXPECT_EQ(ids.size(), 4u);
  // Swapped order: same points, flipped normal.
  ASSERT_TRUE(detail::collide(ground, c, kMargin, m));
  EXPECT_NEAR((m.normal - Vec3::UnitZ()).norm(), 0.0, 1e-15);
  EXPECT_EQ(m.count, 4);
}

// Lying on its side (axis along x, turned 0.4 rad about it), 1 mm deep: the contact line's two
// ends at +-half_length; tilted 30 degrees: a single point on the lower rim at the exact depth.
TEST(Cylinder, LyingAndTiltedOnPlane) {
  const auto ground = place(plane(), Vec3::Zero());
  const Quat lying =
      Quat(Eigen::AngleAxisd(kPi / 2, Vec3::UnitY())) * Quat(Eigen::AngleAxisd(0.4, Vec3::UnitZ()));
  const auto c = place(cylinder(0.1, 0.2), Vec3(0, 0, 0.099), lying);
  detail::Manifold m;
  ASSERT_TRUE(detail::collide(c, ground, kMargin, m));
  ASSERT_EQ(m.count, 2);
  double xs[2];
  for (int i = 0; i < 2; ++i) {
    EXPECT_NEAR(m.points[i].separation, -0.001, 1e-12);
    EXPECT_NEAR(m.points[i].on_a.y(), 0.0, 1e-12);
    xs[i] = m.points[i].on_a.x();
  }
  EXPECT_NEAR(std::min(xs[0], xs[1]), -0.2, 1e-12);
  EXPECT_NEAR(std::max(xs[0], xs[1]), 0.2, 1e-12);

  const double tilt = kPi / 6;
  const Quat q(Eigen::AngleAxisd(tilt, Vec3::UnitY()));
  // Lowest rim point height: z - h cos(tilt) - r sin(tilt); put it 0.5 mm below the ground.
  const double z = 0.2 * std::cos(tilt) + 0.1 * std::sin(tilt) - 0.0005;
  ASSERT_TRUE(detail::collide(place(cylinder(0.1, 0.2), Vec3(0, 0, z), q), ground, kMargin, m));
  ASSERT_EQ(m.count, 1);
  EXPECT_NEAR(m.points[0].separation, -0.0005, 1e-12);
}

// A cylinder standing on a box (GJK/EPA normal, cap clipped against the box face): four points
// on the rim, depth to EPA's tolerance (1e-9 is far below the 1e-4 m slop).
TEST(Cylinder, StandingOnABoxRestsOnFourRimPoints) {
  const auto b = place(box(Vec3(0.5, 0.5, 0.1)), Vec3::Zero());
  const auto c = place(cylinder(0.1, 0.2), Vec3(0.1, 0.05, 0.1 + 0.2 - 0.001));
  detail::Manifold m;
  ASSERT_TRUE(detail::collide(b, c, kMargin, m));
  EXPECT_NEAR((m.normal - Vec3::UnitZ()).norm(), 0.0, 1e-9);
  ASSERT_EQ(m.count, 4);
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(m.points[i].separation, -0.001, 1e-9);
    EXPECT_NEAR((m.points[i].on_b - Vec3(0.1, 0.05, 0)).head<2>().norm(), 0.1, 1e-9);
  }
  // Separated by 3 mm (GJK distance path): speculative points at +3 mm.
  const auto above = place(cylinder(0.1, 0.2), Vec3(0.1, 0.05, 0.1 + 0.2 + 0.003));
  ASSERT_TRUE(detail::collide(b, above, kMargin, m));
  ASSERT_EQ(m.count, 4);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(m.points[i].separation, 0.003, 1e-9);
}

// Two cylinders lying side by side, parallel: two points at the overlap's ends, depth exact to
// EPA's tolerance; crossed at right angles: one point.
TEST(Cylinder, CylinderPairsParallelAndCrossed) {
  const Quat along_x(Eigen::AngleAxisd(kPi / 2, Vec3::UnitY()));
  const auto a = place(cylinder(0.1, 0.3), Vec3::Zero(), along_x);
  const auto b = place(cylinder(0.1, 0.3), Vec3(0.1, 0, 0.198), along_x);
  detail::Manifold m;
  ASSERT_TRUE(detail::collide(a, b, kMargin, m));
  ASSERT_EQ(m.count, 2);
  for (int i = 0; i < 2; ++i) EXPECT_NEAR(m.points[i].separation, -0.002, 1e-9);
  const Quat along_y(Eigen::AngleAxisd(kPi / 2, Vec3::UnitX()));
  const auto crossed = place(cylinder(0.1, 0.3), Vec3(0, 0, 0.197), along_y);
  ASSERT_TRUE(detail::collide(a, crossed, kMargin, m));
  ASSERT_EQ(m.count, 1);
  EXPECT_NEAR(m.points[0].separation, -0.003, 1e-9);
  EXPECT_NEAR((m.normal - Vec3::UnitZ()).norm(), 0.0, 1e-6);
}

// A hull of a box's corners behaves as the box: the same normal, separations and points as
// box-box at face, offset-face, tilted and crossed-edge poses, in both orders (1e-12: the two
// paths compute the same quantities through different but exact-to-rounding formulas).
TEST(ConvexHull, BoxHullMatchesBoxBox) {
  const Vec3 half_a(0.5, 0.3, 0.2), half_b(0.25, 0.2, 0.15);
  const ShapeDef box_a = box(half_a), box_b = box(half_b);
  const ShapeDef hull_a = hull(boxCorners(half_a)), hull_b = hull(boxCorners(half_b));
  struct Pose {
    Vec3 x;
    Quat q;
  };
  // Generic poses: where clipping leaves more than four points, their depths differ, so the
  // reduction's choice does not hinge on the order of exactly tied candidates (the two paths
  // list a face's corners in different orders).
  const Pose poses[] = {
      {Vec3(0.05, 0.0, 0.348), Quat(Eigen::AngleAxisd(0.3, Vec3::UnitZ()))},
      {Vec3(0.1, 0.05, 0.348),
       Quat(Eigen::AngleAxisd(0.3, Vec3::UnitZ()) * Eigen::AngleAxisd(0.01, Vec3::UnitX()))},
      {Vec3(0.55, 0.0, 0.345), Quat(Eigen::AngleAxisd(0.02, Vec3(1, 2, 0).normalized()))},
      {Vec3(-0.3, 0.2, 0.36), Quat(Eigen::AngleAxisd(0.2, Vec3(1, 1, 3).normalized()))},
      {Vec3(0.0, 0.0, 0.38),
       Quat(Eigen::AngleAxisd(kPi / 4, Vec3::UnitX()) * Eigen::AngleAxisd(kPi / 4, Vec3::UnitY()))},
      {Vec3(0.7, 0.4, 0.1), Quat(Eigen::AngleAxisd(0.7, Vec3(2, -1, 1).normalized()))},
  };
  int compared = 0;
  for (std::size_t pi = 0; pi < std::size(poses); ++pi) {
    const Pose& pose = poses[pi];
    for (int order = 0; order < 2; ++order) {
      SCOPED_TRACE(testing::Message() << "pose " << pi << " order " << order);
      const auto ba = place(order == 0 ? box_a : box_b, Vec3::Zero());
      const auto bb = place(order == 0 ? box_b : box_a, pose.x, pose.q);
      // Order 0: the large box's hull first; order 1: the small box first, the large as a hull.
      const auto ha = place(order == 0 ? hull_a : box_b, Vec3::Zero());
      const auto hb = place(order == 0 ? box_b : hull_a, pose.x, pose.q);
      detail::Manifold expected, got;
      const bool hit = detail::collide(ba, bb, kMargin, expected);
      ASSERT_EQ(detail::collide(ha, hb, kMargin, got), hit);
      if (!hit) continue;
      ++compared;
      EXPECT_NEAR((got.normal - expected.normal).norm(), 0.0, 1e-12);
      ASSERT_EQ(got.count, expected.count);
      EXPECT_LE(pointSetDifference(expected, got), 1e-12);
    }
  }
  EXPECT_GE(compared, 8);
  // Hull against hull too.
  const auto h1 = place(hull_a, Vec3::Zero());
  const auto h2 = place(hull_b, poses[0].x, poses[0].q);
  detail::Manifold expected, got;
  ASSERT_TRUE(detail::collide(place(box_a, Vec3::Zero()), place(box_b, poses[0].x, poses[0].q),
                              kMargin, expected));
  ASSERT_TRUE(detail::collide(h1, h2, kMargin, got));
  EXPECT_NEAR((got.normal - expected.normal).norm(), 0.0, 1e-12);
  EXPECT_LE(pointSetDifference(expected, got), 1e-12);
}

// GJK/EPA pairs with a face: a capsule lying on a box hull's top face gives its two segment
// ends; a cylinder standing on a two-triangle mesh gives rim points with the face normal.
TEST(ConvexHull, CapsuleOnHullAndCylinderOnMesh) {
  const ShapeDef hb = hull(boxCorners(Vec3(0.5, 0.5, 0.1)));
  ShapeDef cap;
  cap.type = ShapeType::Capsule;
  cap.radius_m = 0.05;
  cap.half_length_m = 0.2;
  const auto table = place(hb, Vec3::Zero());
  const auto lying =
      place(cap, Vec3(0.1, 0.0, 0.148), Quat(Eigen::AngleAxisd(kPi / 2, Vec3::UnitY())));
  detail::Manifold m;
  ASSERT_TRUE(detail::collide(lying, table, kMargin, m));
  ASSERT_EQ(m.count, 2);
  EXPECT_NEAR((m.normal + Vec3::UnitZ()).norm(), 0.0, 1e-12);
  for (int i = 0; i < 2; ++i) EXPECT_NEAR(m.points[i].separation, -0.002, 1e-9);
  EXPECT_NEAR(std::abs(m.points[0].on_a.x() - m.points[1].on_a.x()), 0.4, 1e-9);

  const auto mesh = makeTriangleMesh(
      {Vec3(-2, -2, 0), Vec3(2, -2, 0), Vec3(2, 2, 0), Vec3(-2, 2, 0)}, {{0, 1, 2}, {0, 2, 3}});
  const ShapeDef mesh_def = meshShape(mesh);
  const auto ground = place(mesh_def, Vec3::Zero());
  const ShapeDef can = cylinder(0.1, 0.2);
  const auto standing = place(can, Vec3(0.5, -0.3, 0.199));  // wholly over one triangle
  std::vector<detail::Manifold> ms;
  detail::collideAll(standing, ground, kMargin, ms);
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].count, 4);
  EXPECT_NEAR((ms[0].normal + Vec3::UnitZ()).norm(), 0.0, 1e-12);
  for (int i = 0; i < ms[0].count; ++i) EXPECT_NEAR(ms[0].points[i].separation, -0.001, 1e-9);
}

}  // namespace
}  // namespace sim::dynamics
