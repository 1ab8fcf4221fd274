// Flexure hinges (SPEC §5, seed 001): a compliant joint replaced by a planar spring at its
// compliance centre, or by the simpler pseudo-rigid-body (PRB) torsion spring.
//
// Coordinates. The joint frames sit at the compliance centre; the frame's x-axis is the bending
// axis (as for a hinge), its y-axis points along the flexure from base to output (the paper's Ox)
// and its z-axis completes the plane of bending (the paper's Oy). The deformation q = (x, y, θ)
// is the output frame's origin in the base frame's (y, z) coordinates and the rotation of the
// output about the axis (the hinge angle).
//
// Planar spring, seed 001 eq. 2 (k_x, k_y, k_z secant stiffnesses at the current deformation):
//   f_x = k_x x cos θ + ½ (k_x + k_y) y sin θ
//   f_y = k_y y cos θ − ½ (k_x + k_y) x sin θ
//   τ   = ½ (x cos θ + y sin θ)(y cos θ − x sin θ)(k_y − k_x) + T(θ)
// where T(θ) = k_z(θ) sin θ in the paper; we take T(θ) as the torque characteristic itself (k_z θ
// when linear) so that a table of torque against angle is reproduced exactly under pure torque.
// (f_x, f_y, τ) is the wrench the spring exerts against the deformation: the output body feels
// −(f_x, f_y) at its frame origin and −τ about the axis, the base the opposite.
#pragma once

#include <dynamics/math.h>

#include <string>
#include <vector>

namespace sim::dynamics {

/// A stiffness characteristic: load (N or N m) against deformation (m or rad). Linear with
/// `stiffness` when the table is empty; otherwise piecewise linear through the table's points
/// (deformation strictly increasing) and extended linearly beyond its ends.
struct StiffnessCurve {
  double stiffness = 0.0;           ///< N/m or N m/rad, > 0 (linear curve).
  std::vector<double> deformation;  ///< m or rad, strictly increasing (table).
  std::vector<double> load;         ///< N or N m, same length, same sign as the deformation.

  bool isTable() const { return !deformation.empty(); }
  double loadAt(double q) const;
  /// Slope dload/dq at q (N/m or N m/rad).
  double tangent(double q) const;
  /// load(q) / q, the tangent at q = 0.
  double secant(double q) const;
};

enum class FlexureModel {
  PlanarSpring,   ///< three soft rows (x, y, θ), seed 001 eq. 2
  TorsionSpring,  ///< PRB: a pin (x = y = 0 held) with a torsion spring on θ
};

struct FlexureDef {
  FlexureModel model = FlexureModel::PlanarSpring;
  StiffnessCurve k_x;  ///< Along the flexure (N/m); PlanarSpring only.
  StiffnessCurve k_y;  ///< Across the flexure in the bending plane (N/m); PlanarSpring only.
  StiffnessCurve k_z;  ///< Rotation about the axis (N m/rad).
  double damping_linear = 0.0;   ///< N s/m on x and y.
  double damping_angular = 0.0;  ///< N m s/rad on θ.
};

/// The spring's wrench (f_x, f_y, τ) at deformation q = (x, y, θ) (see the header comment).
/// TorsionSpring: (0, 0, T(θ)).
Vec3 flexureWrench(const FlexureDef& def, const Vec3& q);

/// d wrench / d q (3x3, by central differences of flexureWrench).
Mat3 flexureTangent(const FlexureDef& def, const Vec3& q);

/// The static deformation under an applied wrench: solves flexureWrench(q) = load by damped
/// Newton from q = 0. For TorsionSpring x = y = 0 and only load.z() is used. Returns false when
/// it does not converge (q is then the last iterate).
bool flexureDeflection(const FlexureDef& def, const Vec3& load, Vec3& q);

/// Problems with the definition, each as "field: message" with field relative to the flexure
/// ("k_x.table", "damping_linear", ...). Empty when valid.
std::vector<std::string> validateFlexure(const FlexureDef& def);

}  // namespace sim::dynamics
