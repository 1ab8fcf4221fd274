// Cylinders, convex hulls and triangle meshes (dynamics/src/collision_convex.cpp, gjk.cpp,
// convex_hull.cpp, triangle_mesh.cpp, mass_properties.cpp) against independent answers: analytic
// distances, box-box's manifold for a box-shaped hull, brute-force distances, hull invariants,
// analytic mass properties.
#include <dynamics/shapes.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "contact_test_util.h"

#include "collision.h"
#include "gjk.h"

namespace sim::dynamics {
namespace {

using contact_testing::cylinder;

constexpr double kPi = std::numbers::pi;
constexpr double kMargin = 0.01;

ShapeDef sphere(double radius) {
  ShapeDef s;
  s.type = ShapeType::Sphere;
  s.radius_m = radius;
  return s;
}

ShapeDef box(const Vec3& half) {
  ShapeDef s;
  s.type = ShapeType::Box;
  s.half_extents_m = half;
  return s;
}

ShapeDef plane() {
  ShapeDef s;
  s.type = ShapeType::Plane;
  return s;
}

std::vector<Vec3> boxCorners(const Vec3& half) {
  std::vector<Vec3> c;
  for (int i = 0; i < 8; ++i)
    c.emplace_back(i & 1 ? half.x() : -half.x(), i & 2 ? half.y() : -half.y(), i & 4 ? half.z() : -half.z());
  return c;
}

ShapeDef hull(const std::vector<Vec3>& points) {
  ShapeDef s;
  s.type = ShapeType::ConvexHull;
  std::string error;
  s.hull = makeConvexHull(points, &error);
  EXPECT_TRUE(s.hull) << error;
  return s;
}

detail::WorldShape place(const ShapeDef& def, const Vec3& x, const Quat& q = Quat::Identity()) {
  return detail::placeShape(def, 0, x, q, kMargin);
}

// ---- cylinder ---------------------------------------------------------------------------------

// A sphere against a cylinder's side, cap and rim: the separation is the analytic distance
// between the solids (exact formulas, so 1e-12 is rounding only).
TEST(Cylinder, SphereDistancesToSideCapAndRimAreExact) {
  const auto c = place(cylinder(0.1, 0.2), Vec3::Zero(), Quat(Eigen::AngleAxisd(0.3, Vec3::UnitX())));
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
  const auto c = place(cylinder(0.1, 0.2), Vec3(0.3, -0.2, 0.198), Quat(Eigen::AngleAxisd(0.7, Vec3::UnitZ())));
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
  const Quat lying = Quat(Eigen::AngleAxisd(kPi / 2, Vec3::UnitY())) * Quat(Eigen::AngleAxisd(0.4, Vec3::UnitZ()));
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

// ---- convex hull ------------------------------------------------------------------------------

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
      {Vec3(0.1, 0.05, 0.348), Quat(Eigen::AngleAxisd(0.3, Vec3::UnitZ()) * Eigen::AngleAxisd(0.01, Vec3::UnitX()))},
      {Vec3(0.55, 0.0, 0.345), Quat(Eigen::AngleAxisd(0.02, Vec3(1, 2, 0).normalized()))},
      {Vec3(-0.3, 0.2, 0.36), Quat(Eigen::AngleAxisd(0.2, Vec3(1, 1, 3).normalized()))},
      {Vec3(0.0, 0.0, 0.38), Quat(Eigen::AngleAxisd(kPi / 4, Vec3::UnitX()) * Eigen::AngleAxisd(kPi / 4, Vec3::UnitY()))},
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
  ASSERT_TRUE(detail::collide(place(box_a, Vec3::Zero()), place(box_b, poses[0].x, poses[0].q), kMargin, expected));
  ASSERT_TRUE(detail::collide(h1, h2, kMargin, got));
  EXPECT_NEAR((got.normal - expected.normal).norm(), 0.0, 1e-12);
  EXPECT_LE(pointSetDifference(expected, got), 1e-12);
}

// Brute-force distance between two convex point sets: minimum over vertex-face, edge-edge of
// the hulls is what GJK computes; here approximated from above by the closest points of the two
// point clouds' triangles (exact for polytopes: the minimum is attained on a pair of faces).
double segmentSegment(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1);

double pointTriangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
  // Minimise over the triangle by its interior projection or its edges.
  const Vec3 n = (b - a).cross(c - a).normalized();
  const Vec3 proj = p - n.dot(p - a) * n;
  const double w0 = (b - proj).cross(c - proj).dot(n), w1 = (c - proj).cross(a - proj).dot(n),
               w2 = (a - proj).cross(b - proj).dot(n);
  if (w0 >= 0 && w1 >= 0 && w2 >= 0) return std::abs(n.dot(p - a));
  return std::min({segmentSegment(p, p, a, b), segmentSegment(p, p, b, c), segmentSegment(p, p, c, a)});
}

double segmentSegment(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1) {
  // Dense sampling plus local refinement is enough at the 1e-9 level for a test: use the exact
  // clamped solution instead.
  const Vec3 d1 = p1 - p0, d2 = q1 - q0, r = p0 - q0;
  const double a = d1.squaredNorm(), e = d2.squaredNorm(), f = d2.dot(r);
  double s = 0, t = 0;
  if (a < 1e-30 && e < 1e-30) return r.norm();
  if (a < 1e-30) {
    t = std::clamp(f / e, 0.0, 1.0);
  } else {
    const double c = d1.dot(r);
    if (e < 1e-30) {
      s = std::clamp(-c / a, 0.0, 1.0);
    } else {
      const double b = d1.dot(d2), den = a * e - b * b;
      s = den > 1e-20 ? std::clamp((b * f - c * e) / den, 0.0, 1.0) : 0.0;
      t = (b * s + f) / e;
      if (t < 0) {
        t = 0;
        s = std::clamp(-c / a, 0.0, 1.0);
      } else if (t > 1) {
        t = 1;
        s = std::clamp((b - c) / a, 0.0, 1.0);
      }
    }
  }
  return ((p0 + s * d1) - (q0 + t * d2)).norm();
}

std::vector<std::array<Vec3, 3>> worldTriangles(const ConvexHullData& h, const Vec3& x, const Quat& q) {
  std::vector<std::array<Vec3, 3>> tris;
  for (const auto& f : h.faces)
    for (int k = 1; k + 1 < f.count; ++k)
      tris.push_back({x + q * h.vertices[h.face_vertices[f.first]], x + q * h.vertices[h.face_vertices[f.first + k]],
                      x + q * h.vertices[h.face_vertices[f.first + k + 1]]});
  return tris;
}

double bruteDistance(const std::vector<std::array<Vec3, 3>>& a, const std::vector<std::array<Vec3, 3>>& b) {
  double best = 1e300;
  for (const auto& ta : a)
    for (const auto& tb : b) {
      for (int i = 0; i < 3; ++i) {
        best = std::min(best, pointTriangle(ta[i], tb[0], tb[1], tb[2]));
        best = std::min(best, pointTriangle(tb[i], ta[0], ta[1], ta[2]));
        for (int j = 0; j < 3; ++j)
          best = std::min(best, segmentSegment(ta[i], ta[(i + 1) % 3], tb[j], tb[(j + 1) % 3]));
      }
    }
  return best;
}

std::vector<Vec3> randomCloud(std::mt19937& rng, int n, double radius) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<Vec3> pts;
  while (static_cast<int>(pts.size()) < n) {
    const Vec3 p(u(rng), u(rng), u(rng));
    if (p.norm() <= 1.0) pts.push_back(radius * p);
  }
  return pts;
}

// GJK between two random hulls at random separated poses equals the brute-force polytope
// distance (minimum over vertex-triangle and edge-edge pairs) to 1e-9 m: GJK stops at a relative
// 1e-12 on |v|^2, so the residual is far below that.
TEST(ConvexHull, GjkDistanceMatchesBruteForce) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  int tested = 0;
  for (int trial = 0; trial < 40; ++trial) {
    ShapeDef ha = hull(randomCloud(rng, 12, 0.2)), hb = hull(randomCloud(rng, 12, 0.15));
    const Quat qa = Quat(Eigen::AngleAxisd(kPi * u(rng), Vec3(u(rng), u(rng), u(rng)).normalized()));
    const Quat qb = Quat(Eigen::AngleAxisd(kPi * u(rng), Vec3(u(rng), u(rng), u(rng)).normalized()));
    const Vec3 xa(u(rng), u(rng), u(rng));
    const Vec3 xb = xa + 0.4 * Vec3(u(rng), u(rng), u(rng)).normalized();
    const double brute = bruteDistance(worldTriangles(*ha.hull, xa, qa), worldTriangles(*hb.hull, xb, qb));
    detail::ConvexSupport a, b;
    a.kind = b.kind = detail::ConvexSupport::Kind::Hull;
    a.hull = ha.hull.get();
    b.hull = hb.hull.get();
    a.center = xa;
    a.axes = qa.toRotationMatrix();
    b.center = xb;
    b.axes = qb.toRotationMatrix();
    const detail::GjkResult g = detail::gjkDistance(a, b);
    if (brute < 1e-6) continue;  // overlapping or touching: not this test
    ++tested;
    ASSERT_FALSE(g.overlap) << "trial " << trial;
    EXPECT_NEAR(g.distance, brute, 1e-9) << "trial " << trial;
    EXPECT_NEAR((g.on_b - g.on_a).norm(), g.distance, 1e-12);
  }
  EXPECT_GE(tested, 20);
}

// ---- quickhull --------------------------------------------------------------------------------

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
  for (int i = 0; i < 8; ++i) pts.push_back(pts[i]);                     // duplicate corners
  pts.emplace_back(1.0, 0.3, -0.2);                                      // on a face
  pts.emplace_back(1.0, 1.0, 0.5);                                       // on an edge
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
    sphere_pts.emplace_back(std::sqrt(1 - z * z) * std::cos(phi), std::sqrt(1 - z * z) * std::sin(phi), z);
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
  EXPECT_FALSE(makeConvexHull({Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(1, 1, 0), Vec3(0.5, 0.2, 0)}, &error));
  EXPECT_NE(error.find("plane"), std::string::npos) << error;
  EXPECT_FALSE(makeConvexHull({Vec3(0, 0, 0), Vec3(1, 1, 1), Vec3(2, 2, 2), Vec3(3, 3, 3)}, &error));
  EXPECT_NE(error.find("line"), std::string::npos) << error;
  EXPECT_FALSE(makeConvexHull({Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, std::nan(""))}, &error));
  EXPECT_NE(error.find("not finite"), std::string::npos) << error;
}

// ---- mass properties --------------------------------------------------------------------------

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

// ---- triangle mesh ----------------------------------------------------------------------------

// A flat grid of n x n squares (two triangles each) of edge `cell`, centred at the origin.
std::shared_ptr<const TriangleMeshData> grid(int n, double cell) {
  std::vector<Vec3> v;
  std::vector<std::array<int, 3>> t;
  for (int j = 0; j <= n; ++j)
    for (int i = 0; i <= n; ++i) v.emplace_back((i - 0.5 * n) * cell, (j - 0.5 * n) * cell, 0.0);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const int a = j * (n + 1) + i, b = a + 1, c = a + n + 2, d = a + n + 1;
      t.push_back({a, b, c});
      t.push_back({a, c, d});
    }
  std::string error;
  auto mesh = makeTriangleMesh(v, t, &error);
  EXPECT_TRUE(mesh) << error;
  return mesh;
}

TEST(TriangleMesh, BuildValidatesAndMarksInternalEdges) {
  std::string error;
  EXPECT_FALSE(makeTriangleMesh({Vec3::Zero(), Vec3::UnitX(), Vec3::UnitY()}, {{0, 1, 3}}, &error));
  EXPECT_NE(error.find("out of range"), std::string::npos) << error;
  EXPECT_FALSE(makeTriangleMesh({Vec3::Zero()}, {}, &error));
  const auto mesh = grid(4, 0.5);
  ASSERT_TRUE(mesh);
  // Interior edges of a flat grid are inactive; boundary edges active. A 4 x 4 grid has
  // 16 boundary edges among its 32 triangles' 96 edge slots.
  int active_edges = 0;
  for (std::uint8_t a : mesh->active) active_edges += (a & 1) + (a >> 1 & 1) + (a >> 2 & 1);
  EXPECT_EQ(active_edges, 16);
  EXPECT_EQ(mesh->order.size(), 32u);
}

ShapeDef meshShape(std::shared_ptr<const TriangleMeshData> mesh) {
  ShapeDef s;
  s.type = ShapeType::TriangleMesh;
  s.mesh = std::move(mesh);
  return s;
}

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
  const auto mesh = makeTriangleMesh({Vec3(-2, -2, 0), Vec3(2, -2, 0), Vec3(2, 2, 0), Vec3(-2, 2, 0)},
                                     {{0, 1, 2}, {0, 2, 3}});
  ASSERT_TRUE(mesh);
  const ShapeDef mesh_def = meshShape(mesh);
  const auto ground = place(mesh_def, Vec3::Zero());
  const auto flat = place(plane(), Vec3::Zero());
  const ShapeDef hb = hull(boxCorners(Vec3(0.1, 0.1, 0.1)));
  const auto body = place(hb, Vec3(0.02, -0.01, 0.099), Quat(Eigen::AngleAxisd(0.3, Vec3::UnitZ())));
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

// GJK/EPA pairs with a face: a capsule lying on a box hull's top face gives its two segment
// ends; a cylinder standing on a two-triangle mesh gives rim points with the face normal.
TEST(ConvexHull, CapsuleOnHullAndCylinderOnMesh) {
  const ShapeDef hb = hull(boxCorners(Vec3(0.5, 0.5, 0.1)));
  ShapeDef cap;
  cap.type = ShapeType::Capsule;
  cap.radius_m = 0.05;
  cap.half_length_m = 0.2;
  const auto table = place(hb, Vec3::Zero());
  const auto lying = place(cap, Vec3(0.1, 0.0, 0.148), Quat(Eigen::AngleAxisd(kPi / 2, Vec3::UnitY())));
  detail::Manifold m;
  ASSERT_TRUE(detail::collide(lying, table, kMargin, m));
  ASSERT_EQ(m.count, 2);
  EXPECT_NEAR((m.normal + Vec3::UnitZ()).norm(), 0.0, 1e-12);
  for (int i = 0; i < 2; ++i) EXPECT_NEAR(m.points[i].separation, -0.002, 1e-9);
  EXPECT_NEAR(std::abs(m.points[0].on_a.x() - m.points[1].on_a.x()), 0.4, 1e-9);

  const auto mesh = makeTriangleMesh({Vec3(-2, -2, 0), Vec3(2, -2, 0), Vec3(2, 2, 0), Vec3(-2, 2, 0)},
                                     {{0, 1, 2}, {0, 2, 3}});
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

// validate() names the bad field of the new shapes.
TEST(ShapeValidation, NewShapeFieldsAreChecked) {
  Model m;
  BodyDef b;
  b.name = "b";
  b.shapes.push_back(cylinder(0.0, 0.1));
  b.shapes.push_back(cylinder(0.1, -1.0));
  ShapeDef no_hull;
  no_hull.type = ShapeType::ConvexHull;
  b.shapes.push_back(no_hull);
  b.shapes.push_back(meshShape(grid(1, 1.0)));  // on a dynamic body
  m.bodies.push_back(b);
  std::set<std::string> fields;
  for (const ModelError& e : validate(m)) fields.insert(e.field);
  EXPECT_TRUE(fields.count("bodies[b].shapes[0].radius"));
  EXPECT_TRUE(fields.count("bodies[b].shapes[1].half_length"));
  EXPECT_TRUE(fields.count("bodies[b].shapes[2].points"));
  EXPECT_TRUE(fields.count("bodies[b].shapes[3].type"));
  EXPECT_EQ(fields.size(), 4u);
  EXPECT_FALSE(detail::pairSupported(ShapeType::TriangleMesh, ShapeType::Plane));
  EXPECT_FALSE(detail::pairSupported(ShapeType::TriangleMesh, ShapeType::TriangleMesh));
  EXPECT_TRUE(detail::pairSupported(ShapeType::TriangleMesh, ShapeType::Cylinder));
}

}  // namespace
}  // namespace sim::dynamics
