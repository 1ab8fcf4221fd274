// Internal to the assetgen tool: triangle meshes built from boxes, cylinders and wedges, and the
// mass properties of the solids they stand for. Plain Eigen, no Assimp.
#pragma once

#include <Eigen/Geometry>

#include <array>
#include <string>
#include <vector>

namespace sim::assetgen {

using Vec3 = Eigen::Vector3d;

/// Linear RGBA in [0, 1].
struct Colour {
  double r = 0.8, g = 0.8, b = 0.8, a = 1.0;
};

// Colours and axes the MF-4 assets and the example robots share.
inline constexpr Colour kDarkGrey{0.25, 0.26, 0.27, 1.0};
inline constexpr Colour kOrange{0.95, 0.45, 0.05, 1.0};
inline const Vec3 kX = Vec3::UnitX();
inline const Vec3 kY = Vec3::UnitY();
inline const Vec3 kZ = Vec3::UnitZ();

/// A solid primitive for mass properties: volume (m³), centroid (m, link frame) and inertia about
/// the centroid per unit mass (m², link axes).
struct Solid {
  double volume = 0.0;
  Vec3 centroid = Vec3::Zero();
  Eigen::Matrix3d inertiaPerMass = Eigen::Matrix3d::Zero();
};

/// One single-colour triangle mesh in its link's frame, with outward flat or smooth normals.
struct Mesh {
  std::string name;
  Colour colour;
  std::vector<Vec3> vertices;
  std::vector<Vec3> normals;
  std::vector<std::array<unsigned, 3>> triangles;
  std::vector<Solid> solids;  ///< What the shapes stand for, for massProperties().

  /// Axis-aligned box between corners `lo` and `hi`.
  void box(const Vec3& lo, const Vec3& hi);
  /// Box of edge lengths `size` centred at `pose`'s origin with `pose`'s axes.
  void box(const Eigen::Isometry3d& pose, const Vec3& size);
  /// Closed cylinder: centre, unit axis, radius, length (m); `segments` around.
  void cylinder(const Vec3& centre, const Vec3& axis, double radius, double length,
                int segments = 24);
  /// Ramp: a right triangular prism rising along +x from height 0 at x = 0 to `height` at
  /// x = `run`, `width` across y (centred), base on z = 0. Not counted in mass properties.
  void wedge(double run, double height, double width);

 private:
  // One flat quad (counter-clockwise seen from outside) with normal n.
  void quad(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d, const Vec3& n);
  void triangle(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& n);
};

/// Mass, centre of mass (link frame) and inertia about the centre of mass (link axes), kg·m².
struct MassProperties {
  double mass = 0.0;
  Vec3 com = Vec3::Zero();
  Eigen::Matrix3d inertia = Eigen::Matrix3d::Zero();
};

/// `mass` spread with uniform density over all solids of `meshes` (overlaps count twice).
MassProperties massProperties(const std::vector<Mesh>& meshes, double mass);

}  // namespace sim::assetgen
