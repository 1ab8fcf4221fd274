// GJK (dynamics/src/gjk.cpp) between random hulls against the brute-force polytope distance.
#include <dynamics/shapes.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include <gtest/gtest.h>

#include "collision.h"
#include "gjk.h"
#include "shape_test_util.h"

namespace sim::dynamics {
namespace {

using namespace shape_testing;
constexpr double kPi = std::numbers::pi;

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
  return std::min(
      {segmentSegment(p, p, a, b), segmentSegment(p, p, b, c), segmentSegment(p, p, c, a)});
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

std::vector<std::array<Vec3, 3>> worldTriangles(const ConvexHullData& h, const Vec3& x,
                                                const Quat& q) {
  std::vector<std::array<Vec3, 3>> tris;
  for (const auto& f : h.faces)
    for (int k = 1; k + 1 < f.count; ++k)
      tris.push_back({x + q * h.vertices[h.face_vertices[f.first]],
                      x + q * h.vertices[h.face_vertices[f.first + k]],
                      x + q * h.vertices[h.face_vertices[f.first + k + 1]]});
  return tris;
}

double bruteDistance(const std::vector<std::array<Vec3, 3>>& a,
                     const std::vector<std::array<Vec3, 3>>& b) {
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

// GJK between two random hulls at random separated poses equals the brute-force polytope
// distance (minimum over vertex-triangle and edge-edge pairs) to 1e-9 m: GJK stops at a relative
// 1e-12 on |v|^2, so the residual is far below that.
TEST(ConvexHull, GjkDistanceMatchesBruteForce) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  int tested = 0;
  for (int trial = 0; trial < 40; ++trial) {
    ShapeDef ha = hull(randomCloud(rng, 12, 0.2)), hb = hull(randomCloud(rng, 12, 0.15));
    const Quat qa =
        Quat(Eigen::AngleAxisd(kPi * u(rng), Vec3(u(rng), u(rng), u(rng)).normalized()));
    const Quat qb =
        Quat(Eigen::AngleAxisd(kPi * u(rng), Vec3(u(rng), u(rng), u(rng)).normalized()));
    const Vec3 xa(u(rng), u(rng), u(rng));
    const Vec3 xb = xa + 0.4 * Vec3(u(rng), u(rng), u(rng)).normalized();
    const double brute =
        bruteDistance(worldTriangles(*ha.hull, xa, qa), worldTriangles(*hb.hull, xb, qb));
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

}  // namespace
}  // namespace sim::dynamics
