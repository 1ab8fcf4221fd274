// Internal header, not API: GJK distance and EPA penetration between convex shapes given by
// their support mappings, in double precision and without allocation.
//
// Round shapes (spheres, capsules) are a core (point, segment) plus a radius: GJK runs on the
// cores, so their distance is exact up to the iteration tolerance and the radius is subtracted
// afterwards. When the cores overlap, EPA expands the GJK simplex over the full shapes (cores
// grown by their radii) to the face of the Minkowski difference nearest the origin.
#pragma once

#include <dynamics/shapes.h>

#include <array>

namespace sim::dynamics::detail {

/// A convex set in world coordinates by its support mapping, plus a rounding radius.
struct ConvexSupport {
  enum class Kind { Point, Segment, Box, Cylinder, Hull, Triangle };
  Kind kind = Kind::Point;
  Vec3 center = Vec3::Zero();
  Mat3 axes = Mat3::Identity();      ///< Columns: local x, y, z in world axes.
  Vec3 half_extents = Vec3::Zero();  ///< Box.
  double half_length = 0.0;          ///< Segment (along local z) and cylinder.
  double cylinder_radius = 0.0;      ///< Cylinder.
  double radius = 0.0;               ///< Rounding: sphere and capsule radius (0 otherwise).
  const ConvexHullData* hull = nullptr;
  std::array<Vec3, 3> triangle{{Vec3::Zero(), Vec3::Zero(), Vec3::Zero()}};  ///< Corners (world).

  /// The core's farthest point in direction d (d need not be unit; ties resolved by index).
  Vec3 support(const Vec3& d) const;
  /// The full shape's farthest point (the core's plus the rounding).
  Vec3 supportRounded(const Vec3& d) const;
};

/// Result of a GJK or EPA query between shapes a and b.
struct GjkResult {
  bool overlap = false;      ///< The cores overlap (distance not defined; run EPA).
  double distance = 0.0;     ///< Distance between the cores (m) when apart.
  Vec3 on_a = Vec3::Zero();  ///< Closest points of the cores (GJK) or deepest points (EPA).
  Vec3 on_b = Vec3::Zero();
  Vec3 normal = Vec3::UnitZ();  ///< Unit, from a toward b.
  /// GJK's final simplex (Minkowski difference points and their sources), EPA's start.
  int simplex_size = 0;
  std::array<Vec3, 4> w, wa, wb;

  GjkResult() {
    w.fill(Vec3::Zero());
    wa.fill(Vec3::Zero());
    wb.fill(Vec3::Zero());
  }
};

/// Distance between the cores of a and b (radii ignored).
GjkResult gjkDistance(const ConvexSupport& a, const ConvexSupport& b);

/// Penetration of the full (rounded) shapes after gjkDistance() reported an overlap: the normal
/// from a to b along which b must move by `depth` to separate, and the deepest points. Returns
/// false if the polytope degenerates (the caller then has no contact normal).
bool epaPenetration(const ConvexSupport& a, const ConvexSupport& b, const GjkResult& gjk,
                    Vec3& normal, double& depth, Vec3& on_a, Vec3& on_b);

}  // namespace sim::dynamics::detail
