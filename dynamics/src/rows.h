// Internal header, not API: the solver's bodies and rows.
//
// Every constraint works on SolverBody velocities through rows. A row's Jacobian J maps the two
// bodies' velocities to the constraint's speed Cdot; an impulse lambda changes them by
// M^-1 J^T lambda; the effective mass is 1 / K with K = J M^-1 J^T. Equality rows accumulate
// impulses without bounds; inequality and friction rows clamp the accumulated impulse (sequential
// impulses, Catto 2005).
//
// One row representation, Row: a row's linear and angular parts on each of its two bodies. Rows
// whose linear parts are opposite on the two bodies (one direction pulls one body and pushes the
// other) are kept in a compact form where the sweeps run over them: AxisRow (a joint's axis, a
// slider's line rows) and ContactRow (contacts.h; eight at a time in SIMD lanes in
// contact_batches.h). A compact row stores its direction once, with I^-1 of its angular parts,
// and takes its speed from the bodies' velocity difference: three dot products and fewer loads
// than a Row's four, on the paths that run every sweep. The forms are not converted into one
// another inside the solver: each form's order of operations is part of the physics' bits.
#pragma once

#include <dynamics/math.h>

#include <Eigen/Dense>

namespace sim::dynamics::detail {

/// Hot per-body data of the solver: velocities, inverse mass, world inverse inertia.
struct SolverBody {
  Vec3 v = Vec3::Zero();  ///< Linear velocity of the centre of mass (m/s).
  Vec3 w = Vec3::Zero();  ///< Angular velocity (rad/s, world).
  double inv_mass = 0.0;
  Mat3 inv_inertia = Mat3::Zero();  ///< World-frame inverse inertia.
};

using Vec6 = Eigen::Matrix<double, 6, 1>;  ///< (linear; angular) velocity or (force; torque).
using Mat6 = Eigen::Matrix<double, 6, 6>;

/// Small rotation of a quaternion by the world rotation vector dtheta (first order, renormalised).
inline Quat rotateBy(const Quat& q, const Vec3& dtheta) {
  const Quat dq(0.0, dtheta.x(), dtheta.y(), dtheta.z());
  Quat r = q;
  r.coeffs() += 0.5 * (dq * q).coeffs();
  return r.normalized();
}

/// Cross-product matrix: skew(a) b = a x b.
inline Mat3 skew(const Vec3& a) {
  Mat3 m;
  m << 0, -a.z(), a.y(), a.z(), 0, -a.x(), -a.y(), a.x(), 0;
  return m;
}

/// One scalar row on two bodies: Cdot = lin_a.v_a + ang_a.w_a + lin_b.v_b + ang_b.w_b.
struct Row {
  Vec3 lin_a = Vec3::Zero(), ang_a = Vec3::Zero(), lin_b = Vec3::Zero(), ang_b = Vec3::Zero();

  double velocity(const SolverBody& a, const SolverBody& b) const {
    return lin_a.dot(a.v) + ang_a.dot(a.w) + lin_b.dot(b.v) + ang_b.dot(b.w);
  }
  /// Applies the impulse l to both bodies: M^-1 J^T l.
  void apply(SolverBody& a, SolverBody& b, double l) const {
    a.v += (a.inv_mass * l) * lin_a;
    a.w += a.inv_inertia * (l * ang_a);
    b.v += (b.inv_mass * l) * lin_b;
    b.w += b.inv_inertia * (l * ang_b);
  }
};

/// K = J M^-1 J^T of the N rows rows[index[0]], ..., rows[index[N - 1]].
template <int N>
Eigen::Matrix<double, N, N> gram(const Row* rows, const int* index, const SolverBody& a,
                                 const SolverBody& b) {
  Eigen::Matrix<double, N, N> k;
  for (int i = 0; i < N; ++i) {
    const Row& ri = rows[index[i]];
    for (int j = 0; j <= i; ++j) {
      const Row& rj = rows[index[j]];
      k(i, j) = k(j, i) =
          a.inv_mass * ri.lin_a.dot(rj.lin_a) + ri.ang_a.dot(a.inv_inertia * rj.ang_a) +
          b.inv_mass * ri.lin_b.dot(rj.lin_b) + ri.ang_b.dot(b.inv_inertia * rj.ang_b);
    }
  }
  return k;
}

/// A compact row whose linear parts are opposite (lin_a = -lin, lin_b = lin): along a joint
/// coordinate (hinge angle or prismatic displacement) or a slider's line.
///   Cdot = lin.(v_b - v_a) + ang_a.w_a + ang_b.w_b.
struct AxisRow {
  Vec3 lin = Vec3::Zero(), ang_a = Vec3::Zero(), ang_b = Vec3::Zero();
  Vec3 dw_a = Vec3::Zero(), dw_b = Vec3::Zero();  ///< I^-1 ang: angular change per unit impulse.
  double inv_mass_a = 0.0, inv_mass_b = 0.0;
  double k = 0.0;  ///< J M^-1 J^T (1/kg or 1/(kg m^2)).

  void setup(const SolverBody& a, const SolverBody& b, const Vec3& lin_, const Vec3& ang_a_,
             const Vec3& ang_b_) {
    lin = lin_;
    ang_a = ang_a_;
    ang_b = ang_b_;
    inv_mass_a = a.inv_mass;
    inv_mass_b = b.inv_mass;
    dw_a = a.inv_inertia * ang_a;
    dw_b = b.inv_inertia * ang_b;
    k = (inv_mass_a + inv_mass_b) * lin.squaredNorm() + ang_a.dot(dw_a) + ang_b.dot(dw_b);
  }
  double velocity(const SolverBody& a, const SolverBody& b) const {
    return lin.dot(b.v - a.v) + ang_a.dot(a.w) + ang_b.dot(b.w);
  }
  void apply(SolverBody& a, SolverBody& b, double lambda) const {
    a.v -= (inv_mass_a * lambda) * lin;
    b.v += (inv_mass_b * lambda) * lin;
    a.w += lambda * dw_a;
    b.w += lambda * dw_b;
  }
};

}  // namespace sim::dynamics::detail
