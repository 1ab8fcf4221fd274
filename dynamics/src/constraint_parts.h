// Internal header, not API: the reusable pieces constraints are built from.
//
// Every part works on SolverBody velocities. A part's Jacobian J maps body velocities to the
// constraint's velocity Cdot; an impulse lambda changes velocities by M^-1 J^T lambda; the
// effective mass is K^-1 with K = J M^-1 J^T. Equality parts accumulate impulses without bounds;
// inequality and friction rows clamp the accumulated impulse (sequential impulses, Catto 2005).
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

/// Cross-product matrix: skew(a) b = a x b.
inline Mat3 skew(const Vec3& a) {
  Mat3 m;
  m << 0, -a.z(), a.y(), a.z(), 0, -a.x(), -a.y(), a.x(), 0;
  return m;
}

/// One scalar row acting along a joint coordinate (hinge angle or prismatic displacement):
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

/// Three rows keeping two anchor points together (ball joint and the point part of a hinge):
///   C = (x_b + r_b) - (x_a + r_a),  Cdot = v_b + w_b x r_b - v_a - w_a x r_a.
struct PointPart {
  Vec3 r_a = Vec3::Zero(), r_b = Vec3::Zero();
  Mat3 k_inv = Mat3::Zero();

  static Mat3 effectiveMassInverse(const SolverBody& a, const SolverBody& b, const Vec3& r_a,
                                   const Vec3& r_b) {
    const Mat3 sa = skew(r_a), sb = skew(r_b);
    return Mat3::Identity() * (a.inv_mass + b.inv_mass) - sa * a.inv_inertia * sa -
           sb * b.inv_inertia * sb;
  }
  void setup(const SolverBody& a, const SolverBody& b, const Vec3& ra, const Vec3& rb) {
    r_a = ra;
    r_b = rb;
    const Mat3 k = effectiveMassInverse(a, b, ra, rb);
    k_inv = k.determinant() != 0.0 ? Mat3(k.inverse()) : Mat3::Zero();
  }
  Vec3 velocity(const SolverBody& a, const SolverBody& b) const {
    return b.v + b.w.cross(r_b) - a.v - a.w.cross(r_a);
  }
  void apply(SolverBody& a, SolverBody& b, const Vec3& p) const {
    a.v -= a.inv_mass * p;
    a.w -= a.inv_inertia * r_a.cross(p);
    b.v += b.inv_mass * p;
    b.w += b.inv_inertia * r_b.cross(p);
  }
};

/// Two rows keeping the hinge axis a1 (on a) perpendicular to b's axes b2, c2:
///   C = (a1.b2, a1.c2),  Cdot_k = (w_b - w_a).u_k,  u1 = b2 x a1, u2 = c2 x a1.
struct HingeRotationPart {
  Vec3 u1 = Vec3::Zero(), u2 = Vec3::Zero();
  Eigen::Matrix2d k_inv = Eigen::Matrix2d::Zero();

  void setup(const SolverBody& a, const SolverBody& b, const Vec3& a1, const Vec3& b2,
             const Vec3& c2) {
    u1 = b2.cross(a1);
    u2 = c2.cross(a1);
    const Mat3 inv = a.inv_inertia + b.inv_inertia;
    Eigen::Matrix2d k;
    const Vec3 i1 = inv * u1, i2 = inv * u2;
    k << u1.dot(i1), u1.dot(i2), u2.dot(i1), u2.dot(i2);
    k_inv = k.determinant() != 0.0 ? Eigen::Matrix2d(k.inverse()) : Eigen::Matrix2d::Zero();
  }
  Eigen::Vector2d velocity(const SolverBody& a, const SolverBody& b) const {
    const Vec3 dw = b.w - a.w;
    return {dw.dot(u1), dw.dot(u2)};
  }
  /// Applies the angular impulse L (world) to both bodies.
  static void applyAngular(SolverBody& a, SolverBody& b, const Vec3& l) {
    a.w -= a.inv_inertia * l;
    b.w += b.inv_inertia * l;
  }
};

/// Three rows locking relative rotation: Cdot = w_b - w_a, K = I_a^-1 + I_b^-1.
struct RotationPart {
  Mat3 k_inv = Mat3::Zero();
  void setup(const SolverBody& a, const SolverBody& b) {
    const Mat3 k = a.inv_inertia + b.inv_inertia;
    k_inv = k.determinant() != 0.0 ? Mat3(k.inverse()) : Mat3::Zero();
  }
};

/// Two rows keeping anchor b on the line through anchor a along n0 (prismatic):
///   C_k = d.n_k (k = 1, 2), d = anchor_b - anchor_a; Jacobians as AxisRow with n = n_k.
struct LineRows {
  AxisRow row1, row2;
  Eigen::Matrix2d k_inv = Eigen::Matrix2d::Zero();
  void setup(const SolverBody& a, const SolverBody& b, const Vec3& r_a, const Vec3& r_b,
             const Vec3& d, const Vec3& n1, const Vec3& n2) {
    row1.setup(a, b, n1, -(r_a + d).cross(n1), r_b.cross(n1));
    row2.setup(a, b, n2, -(r_a + d).cross(n2), r_b.cross(n2));
    const double k12 = (a.inv_mass + b.inv_mass) * n1.dot(n2) + row1.ang_a.dot(row2.dw_a) +
                       row1.ang_b.dot(row2.dw_b);
    Eigen::Matrix2d k;
    k << row1.k, k12, k12, row2.k;
    k_inv = k.determinant() != 0.0 ? Eigen::Matrix2d(k.inverse()) : Eigen::Matrix2d::Zero();
  }
};

}  // namespace sim::dynamics::detail
