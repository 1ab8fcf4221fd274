// Internal header, not API: small helpers shared by the narrow-phase files (manifold editing,
// closest points of segments, rounded pairs, the four-point reduction).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "collision.h"

namespace sim::dynamics::detail {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Feature ids: the top bits say which generator made the point.
constexpr std::uint32_t kFaceContact = 0u << 28, kEdgeContact = 1u << 28;

inline void flip(Manifold& m) {
  m.normal = -m.normal;
  for (int i = 0; i < m.count; ++i) {
    std::swap(m.points[i].on_a, m.points[i].on_b);
  }
}

inline void addPoint(Manifold& m, const Vec3& on_a, const Vec3& on_b, std::uint32_t feature) {
  m.points[m.count++] = {on_a, on_b, m.normal.dot(on_b - on_a), feature};
}

/// Keeps four of `n` candidate points: the deepest, the one farthest from it, then the two that
/// span the largest area with them (the support polygon a resting body needs).
inline int reduceToFour(ManifoldPoint* p, int n, const Vec3& normal) {
  if (n <= 4) return n;
  auto swapTo = [&](int slot, int from) { std::swap(p[slot], p[from]); };
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (p[i].separation < p[best].separation) best = i;
  swapTo(0, best);
  best = 1;
  for (int i = 2; i < n; ++i)
    if ((p[i].on_b - p[0].on_b).squaredNorm() > (p[best].on_b - p[0].on_b).squaredNorm()) best = i;
  swapTo(1, best);
  auto area = [&](const Vec3& a, const Vec3& b, const Vec3& c) {
    return (b - a).cross(c - a).dot(normal);
  };
  best = 2;
  for (int i = 3; i < n; ++i)
    if (std::abs(area(p[0].on_b, p[1].on_b, p[i].on_b)) >
        std::abs(area(p[0].on_b, p[1].on_b, p[best].on_b)))
      best = i;
  swapTo(2, best);
  const double side = area(p[0].on_b, p[1].on_b, p[2].on_b) >= 0.0 ? 1.0 : -1.0;
  best = 3;
  double best_gain = -kInf;
  for (int i = 3; i < n; ++i) {
    // Area gained outside the triangle: the point on the far side of one of its edges.
    const double g = std::max({-side * area(p[0].on_b, p[1].on_b, p[i].on_b),
                               -side * area(p[1].on_b, p[2].on_b, p[i].on_b),
                               -side * area(p[2].on_b, p[0].on_b, p[i].on_b)});
    if (g > best_gain) {
      best_gain = g;
      best = i;
    }
  }
  swapTo(3, best);
  return 4;
}

/// Closest points of segments p1 + s d1 and p2 + t d2 (s, t in [0, 1]).
inline void closestSegmentPoints(const Vec3& p1, const Vec3& d1, const Vec3& p2, const Vec3& d2,
                                 Vec3& c1, Vec3& c2) {
  const Vec3 r = p1 - p2;
  const double a = d1.squaredNorm(), e = d2.squaredNorm(), f = d2.dot(r);
  double s = 0.0, t = 0.0;
  if (a <= 1e-300 && e <= 1e-300) {
    s = t = 0.0;
  } else if (a <= 1e-300) {
    t = std::clamp(f / e, 0.0, 1.0);
  } else {
    const double c = d1.dot(r);
    if (e <= 1e-300) {
      s = std::clamp(-c / a, 0.0, 1.0);
    } else {
      const double b = d1.dot(d2);
      const double denom = a * e - b * b;
      s = denom > 1e-12 * a * e ? std::clamp((b * f - c * e) / denom, 0.0, 1.0) : 0.0;
      t = (b * s + f) / e;
      if (t < 0.0) {
        t = 0.0;
        s = std::clamp(-c / a, 0.0, 1.0);
      } else if (t > 1.0) {
        t = 1.0;
        s = std::clamp((b - c) / a, 0.0, 1.0);
      }
    }
  }
  c1 = p1 + s * d1;
  c2 = p2 + t * d2;
}

/// Two cores at closest points c_a, c_b with radii: one point along the line between them.
inline bool roundedPair(const Vec3& c_a, double r_a, const Vec3& c_b, double r_b, double margin,
                        const Vec3& fallback_normal, std::uint32_t feature, Manifold& m) {
  const Vec3 d = c_b - c_a;
  const double dist = d.norm();
  if (dist - r_a - r_b > margin) return false;
  m.normal = dist > 1e-12 ? Vec3(d / dist) : fallback_normal;
  m.count = 0;
  addPoint(m, c_a + r_a * m.normal, c_b - r_b * m.normal, feature);
  return true;
}

// A plane shape: its local +z is the outward normal, its centre a point on it.
inline bool pointsOnPlane(const Vec3* pts, const double* radii, int n, const WorldShape& plane,
                          double margin, Manifold& m) {
  const Vec3 up = plane.axes.col(2);
  // Normal from the other shape (a) to the plane (b): into the plane.
  m.normal = -up;
  m.count = 0;
  ManifoldPoint cand[8];
  int c = 0;
  for (int i = 0; i < n; ++i) {
    const double h = up.dot(pts[i] - plane.center) - radii[i];
    if (h > margin) continue;
    const Vec3 on_a = pts[i] - radii[i] * up;
    cand[c++] = {on_a, on_a - h * up, h, static_cast<std::uint32_t>(i)};
  }
  c = reduceToFour(cand, c, m.normal);
  for (int i = 0; i < c; ++i) m.points[m.count++] = cand[i];
  return m.count > 0;
}

}  // namespace sim::dynamics::detail
