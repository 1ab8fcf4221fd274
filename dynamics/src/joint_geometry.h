// Internal header, not API: joint coordinates and their exact velocity Jacobians.
//
// A joint's frames give world axes n0 (the joint axis), n1, n2 on each side (SPEC §2.2: i = body
// a, j = body b). The hinge angle alpha turns frame b about n0 relative to frame a:
//   n_b1 = cos(alpha) n_a1 + sin(alpha) n_a2,
// so with C = n_a1.n_b1 and S = n_a2.n_b1, alpha = atan2(S, C). Differentiating,
//   d(alpha)/dt = (C dS - S dC) / (C^2 + S^2) = w . (omega_b - omega_a),
//   w = (C (n_b1 x n_a2) - S (n_b1 x n_a1)) / (C^2 + S^2),
// which equals n_a0 when the hinge's other rows hold. Using the exact w keeps the motor row
// consistent with its position function even while the hinge is slightly violated.
//
// A prismatic coordinate is s = d.n_a0 with d the vector from anchor a to anchor b.
//
// jointCoordinate() is the one definition of a joint's coordinate: the initial state, the
// sensors (Simulator::measureJointPosition) and the solver all measure it through it.
#pragma once

#include <dynamics/math.h>
#include <dynamics/model.h>
#include <dynamics/state.h>

#include <vector>

#include <cmath>
#include <numbers>

namespace sim::dynamics::detail {

/// Wraps an angle to (-pi, pi].
inline double wrapAngle(double a) {
  // Within (-pi, pi) the remainder is a itself, exactly (the nearest multiple of 2 pi is 0): the
  // solver's every unwrap of a hinge angle, a step's turn, skips the library call.
  if (std::abs(a) < std::numbers::pi) return a;
  constexpr double kTwoPi = 2.0 * std::numbers::pi;
  a = std::remainder(a, kTwoPi);
  if (a <= -std::numbers::pi) a += kTwoPi;
  return a;
}

/// World-space joint frames of the two sides.
struct JointFrames {
  Vec3 anchor_a, anchor_b;  ///< Anchor points (world).
  Vec3 arm_a, arm_b;        ///< Anchor minus centre of mass (world).
  Mat3 axes_a, axes_b;      ///< Columns n0, n1, n2 (world).
};

inline JointFrames computeFrames(const Vec3& x_a, const Quat& q_a, const Frame& f_a,
                                 const Vec3& x_b, const Quat& q_b, const Frame& f_b) {
  JointFrames f;
  f.arm_a = q_a * f_a.position;
  f.arm_b = q_b * f_b.position;
  f.anchor_a = x_a + f.arm_a;
  f.anchor_b = x_b + f.arm_b;
  f.axes_a = (q_a * f_a.rotation).toRotationMatrix();
  f.axes_b = (q_b * f_b.rotation).toRotationMatrix();
  return f;
}

/// Hinge angle in (-pi, pi].
inline double hingeAngle(const JointFrames& f) {
  const double c = f.axes_a.col(1).dot(f.axes_b.col(1));
  const double s = f.axes_a.col(2).dot(f.axes_b.col(1));
  return std::atan2(s, c);
}

/// Exact gradient of the hinge angle with respect to omega_b (minus it for omega_a).
inline Vec3 hingeAngleGradient(const JointFrames& f) {
  const Vec3 a1 = f.axes_a.col(1), a2 = f.axes_a.col(2), b1 = f.axes_b.col(1);
  const double c = a1.dot(b1);
  const double s = a2.dot(b1);
  const double n = c * c + s * s;
  if (n < 1e-12) return f.axes_a.col(0);  // frames crossed: fall back to the axis
  return (c * b1.cross(a2) - s * b1.cross(a1)) / n;
}

inline double prismaticPosition(const JointFrames& f) {
  return (f.anchor_b - f.anchor_a).dot(f.axes_a.col(0));
}

/// Rotation vector taking orientation qa to qb (world axes), the shorter way.
inline Vec3 rotationError(const Quat& qa, const Quat& qb) {
  Quat e = qb * qa.conjugate();
  if (e.w() < 0.0) e.coeffs() = -e.coeffs();
  return 2.0 * e.vec();
}

/// Whether the coordinate is an angle (continued across +-pi when unwrapped).
inline bool angularCoordinate(JointType type) {
  return type == JointType::Hinge || type == JointType::Flexure;
}

/// The joint's coordinate at frames f: a hinge's or flexure's angle in (-pi, pi] (a flexure's is
/// its deformation's θ, the hinge angle about its bending axis), a slider's displacement (m); 0
/// for ball and fixed joints, which have none.
inline double jointCoordinate(JointType type, const JointFrames& f) {
  if (angularCoordinate(type)) return hingeAngle(f);
  if (type == JointType::Prismatic) return prismaticPosition(f);
  return 0.0;
}

/// The coordinate measured as `measured` continued from `reference` (the last one): angles
/// continue across +-pi, so a joint may turn many times.
inline double unwrapCoordinate(JointType type, double measured, double reference) {
  if (!angularCoordinate(type)) return measured;
  return reference + wrapAngle(measured - reference);
}

/// The frames of joint `def` at the poses of `bodies` (a state's; the world for kWorld).
inline JointFrames computeFrames(const JointDef& def, const std::vector<BodyState>& bodies) {
  const BodyState world;
  const BodyState& a =
      def.body_a == kWorld ? world : bodies.at(static_cast<std::size_t>(def.body_a));
  const BodyState& b = bodies.at(static_cast<std::size_t>(def.body_b));
  return computeFrames(a.position_m, a.orientation, def.frame_a, b.position_m, b.orientation,
                       def.frame_b);
}

}  // namespace sim::dynamics::detail
