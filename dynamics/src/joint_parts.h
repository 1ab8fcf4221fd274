// Internal header, not API: the parts joints are built from, each a few rows with its effective
// mass, solved together (rows.h explains rows).
#pragma once

#include <algorithm>
#include <cmath>

#include "rows.h"

namespace sim::dynamics::detail {

/// Three rows keeping two anchor points together (ball joint and the point part of a hinge):
///   C = (x_b + r_b) - (x_a + r_a),  Cdot = v_b + w_b x r_b - v_a - w_a x r_a.
///
/// Curvature target: a velocity-level row alone lets the anchor leave the constraint at second
/// order each step (a swinging link moves along the tangent, not the arc), and the projection at
/// the next step then removes that part of the velocity: the velocity-projection energy loss of
/// order (w h)^2 per step. Targeting Cdot = -(h/2) (w_b x (w_b x r_b) - w_a x (w_a x r_a)), the
/// quadratic-in-velocity part of the anchor's acceleration, makes the step follow the chord of the
/// arc, so C(x + h v) = O(h^3) and the loss cancels to higher order.
struct PointPart {
  Vec3 r_a = Vec3::Zero(), r_b = Vec3::Zero();
  Mat3 k_inv = Mat3::Zero();
  Vec3 bias = Vec3::Zero();  ///< Target anchor velocity difference (m/s).

  void setCurvatureTarget(const SolverBody& a, const SolverBody& b, double h) {
    bias = -0.5 * h * (b.w.cross(b.w.cross(r_b)) - a.w.cross(a.w.cross(r_a)));
  }

  static Mat3 effectiveMassInverse(const SolverBody& a, const SolverBody& b, const Vec3& r_a,
                                   const Vec3& r_b) {
    const Mat3 sa = skew(r_a), sb = skew(r_b);
    return Mat3::Identity() * (a.inv_mass + b.inv_mass) - sa * a.inv_inertia * sa -
           sb * b.inv_inertia * sb;
  }
  void setArms(const Vec3& ra, const Vec3& rb) {
    r_a = ra;
    r_b = rb;
  }
  void setup(const SolverBody& a, const SolverBody& b, const Vec3& ra, const Vec3& rb) {
    setArms(ra, rb);
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
///   Curvature target as for PointPart: the velocity-quadratic part of d2/dt2 (a1.b),
///   (w_a x (w_a x a1)).b + 2 (w_a x a1).(w_b x b) + a1.(w_b x (w_b x b)), times -h/2.
struct HingeRotationPart {
  Vec3 u1 = Vec3::Zero(), u2 = Vec3::Zero();
  Eigen::Matrix2d k_inv = Eigen::Matrix2d::Zero();
  Eigen::Vector2d bias = Eigen::Vector2d::Zero();

  void setCurvatureTarget(const SolverBody& a, const SolverBody& b, const Vec3& a1, const Vec3& b2,
                          const Vec3& c2, double h) {
    const Vec3 da1 = a.w.cross(a1), dda1 = a.w.cross(da1);
    auto quadratic = [&](const Vec3& v) {
      const Vec3 dv = b.w.cross(v);
      return dda1.dot(v) + 2.0 * da1.dot(dv) + a1.dot(b.w.cross(dv));
    };
    bias = {-0.5 * h * quadratic(b2), -0.5 * h * quadratic(c2)};
  }

  void setDirections(const Vec3& a1, const Vec3& b2, const Vec3& c2) {
    u1 = b2.cross(a1);
    u2 = c2.cross(a1);
  }
  void setup(const SolverBody& a, const SolverBody& b, const Vec3& a1, const Vec3& b2,
             const Vec3& c2) {
    setDirections(a1, b2, c2);
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

/// A body's velocities, held apart from its SolverBody while a block works on them.
struct BodyVelocities {
  double v[3], w[3];
  static BodyVelocities of(const SolverBody& b) {
    return {{b.v[0], b.v[1], b.v[2]}, {b.w[0], b.w[1], b.w[2]}};
  }
  void storeTo(SolverBody& b) const {
    for (int r = 0; r < 3; ++r) {
      b.v[r] = v[r];
      b.w[r] = w[r];
    }
  }
};

/// A point part and m angular rows (hinge: the two rows of HingeRotationPart; fixed: three world
/// axes) solved as one (3+m)-row block, so an anchor far from a light body's centre of mass does
/// not make the point and rotation rows undo each other between iterations.
///   rows 0-2: Cdot = v_b + w_b x r_b - v_a - w_a x r_a;  rows 3..: Cdot = (w_b - w_a).u_k.
template <int M>
struct PointRotationBlock {
  using Vec = Eigen::Matrix<double, 3 + M, 1>;
  using Mat = Eigen::Matrix<double, 3 + M, 3 + M>;
  Vec3 r_a = Vec3::Zero(), r_b = Vec3::Zero();  ///< Anchor arms (world).
  Eigen::Matrix<double, 3, M> u = Eigen::Matrix<double, 3, M>::Zero();
  Mat k_inv = Mat::Zero();
  Vec bias = Vec::Zero();
  // Angular velocity change per unit impulse: dw_b = turn_b * lambda, dw_a = -turn_a * lambda
  // (I^-1 [r x . , u]), set up once so the sweep's update is one product.
  Eigen::Matrix<double, 3, 3 + M> turn_a = Eigen::Matrix<double, 3, 3 + M>::Zero();
  Eigen::Matrix<double, 3, 3 + M> turn_b = Eigen::Matrix<double, 3, 3 + M>::Zero();

  void setup(const SolverBody& a, const SolverBody& b, const PointPart& point,
             const Eigen::Matrix<double, 3, M>& directions) {
    r_a = point.r_a;
    r_b = point.r_b;
    u = directions;
    // turn = I^-1 [skew(r) | u], column by column: skew(r) e_k = r x e_k has one zero entry.
    auto fillTurn = [this](Eigen::Matrix<double, 3, 3 + M>& turn, const Mat3& inv_i,
                           const Vec3& r) {
      turn.col(0) = inv_i.col(1) * r.z() - inv_i.col(2) * r.y();
      turn.col(1) = inv_i.col(2) * r.x() - inv_i.col(0) * r.z();
      turn.col(2) = inv_i.col(0) * r.y() - inv_i.col(1) * r.x();
      for (int m = 0; m < M; ++m) turn.col(3 + m) = inv_i * u.col(m);
    };
    fillTurn(turn_a, a.inv_inertia, r_a);
    fillTurn(turn_b, b.inv_inertia, r_b);
    // K = J M^-1 J^T from the turn matrices: the angular Jacobian rows are [skew(r_a); -u^T] on a
    // and [-skew(r_b); u^T] on b, and I^-1 J^T is -turn_a on a, turn_b on b. So the point rows are
    // (1/m_a + 1/m_b)[1 0] - r_a x turn_a - r_b x turn_b (column-wise) and the rotation block is
    // u^T (I_a^-1 + I_b^-1) u; nothing is multiplied twice.
    Eigen::Matrix<double, 3, 3 + M> top;
    for (int k = 0; k < 3 + M; ++k)
      top.col(k) = -(r_a.cross(turn_a.col(k)) + r_b.cross(turn_b.col(k)));
    top.template leftCols<3>().diagonal().array() += a.inv_mass + b.inv_mass;
    // Block inverse through the Schur complement S = C - B^T A^-1 B, with A's inverse from its
    // cofactors (A is symmetric: its upper triangle is used) and a closed-form MxM inverse; no
    // pivoting search and no full K assembled on this per-substep path.
    const double a00 = top(0, 0), a01 = top(0, 1), a02 = top(0, 2);
    const double a11 = top(1, 1), a12 = top(1, 2), a22 = top(2, 2);
    const double c00 = a11 * a22 - a12 * a12, c01 = a02 * a12 - a01 * a22,
                 c02 = a01 * a12 - a02 * a11;
    const double det = a00 * c00 + a01 * c01 + a02 * c02;
    const double scale = std::max({1.0, std::abs(a00), std::abs(a01), std::abs(a02), std::abs(a11),
                                   std::abs(a12), std::abs(a22)});
    k_inv.setZero();
    if (det > 1e-300 * scale) {
      const double inv_det = 1.0 / det;
      Mat3 a_inv;
      a_inv(0, 0) = c00 * inv_det;
      a_inv(0, 1) = a_inv(1, 0) = c01 * inv_det;
      a_inv(0, 2) = a_inv(2, 0) = c02 * inv_det;
      a_inv(1, 1) = (a00 * a22 - a02 * a02) * inv_det;
      a_inv(1, 2) = a_inv(2, 1) = (a01 * a02 - a00 * a12) * inv_det;
      a_inv(2, 2) = (a00 * a11 - a01 * a01) * inv_det;
      const Eigen::Matrix<double, 3, M> b_blk = top.template rightCols<M>();
      const Eigen::Matrix<double, 3, M> ab = a_inv * b_blk;
      const Eigen::Matrix<double, M, M> schur =
          u.transpose() * (turn_a.template rightCols<M>() + turn_b.template rightCols<M>()) -
          b_blk.transpose() * ab;
      if (schur.determinant() > 0.0) {
        const Eigen::Matrix<double, M, M> s_inv = schur.inverse();
        const Eigen::Matrix<double, 3, M> ab_s = ab * s_inv;
        k_inv.template topLeftCorner<3, 3>() = a_inv + ab_s * ab.transpose();
        k_inv.template topRightCorner<3, M>() = -ab_s;
        k_inv.template bottomLeftCorner<M, 3>() = -ab_s.transpose();
        k_inv.template bottomRightCorner<M, M>() = s_inv;
      }
    }
    bias.template head<3>() = point.bias;
  }
  /// lambda = -scale K^-1 c for the rows' errors c (velocities minus targets, or positions).
  void impulseFor(const double (&c)[3 + M], double scale, double (&lambda)[3 + M]) const {
    for (int i = 0; i < 3 + M; ++i) {
      double sum = 0.0;
      for (int j = 0; j < 3 + M; ++j) sum += k_inv(i, j) * c[j];
      lambda[i] = -scale * sum;
    }
  }
  /// Row r of the angular changes the impulse lambda gives a (-turn_a lambda) and b (turn_b
  /// lambda).
  void turnsFor(const double (&lambda)[3 + M], int r, double& turn_a_r, double& turn_b_r) const {
    double ta = 0.0, tb = 0.0;
    for (int j = 0; j < 3 + M; ++j) {
      ta += turn_a(r, j) * lambda[j];
      tb += turn_b(r, j) * lambda[j];
    }
    turn_a_r = -ta;
    turn_b_r = tb;
  }
  /// One exact block update: the impulse that brings the block's rows to their targets, applied.
  /// Adds the linear and angular impulses (world) to `linear`, `angular`; returns max |lambda|.
  double solve(SolverBody& a, SolverBody& b, Vec3& linear, Vec3& angular) const {
    BodyVelocities va = BodyVelocities::of(a), vb = BodyVelocities::of(b);
    const double largest = solve(a.inv_mass, b.inv_mass, va, vb, linear, angular);
    va.storeTo(a);
    vb.storeTo(b);
    return largest;
  }
  /// The same on the bodies' velocities held apart (a chain's sweep hands a body's new velocities
  /// to the next joint in registers; BodyVelocities).
  ///
  /// Written on scalars on purpose: Eigen's fixed-size expressions here spilled 3-vectors to the
  /// stack as scalars and reloaded them as pairs, and the velocities the previous joint had just
  /// written were read the same way; the failed store forwarding stalled each joint of a chain
  /// sweep (the sweep is one dependency chain along the bodies). Four-double vectors in lanes
  /// (the same IEEE operations) took 22 % fewer instructions and 1-2 % more time: the shuffles lay
  /// on that chain (bench/README.md, "The chain's runs and the pile's first impacts").
  double solve(double inv_mass_a, double inv_mass_b, BodyVelocities& a, BodyVelocities& b,
               Vec3& linear, Vec3& angular) const {
    constexpr int n = 3 + M;
    const double wa0 = a.w[0], wa1 = a.w[1], wa2 = a.w[2];
    const double wb0 = b.w[0], wb1 = b.w[1], wb2 = b.w[2];
    double c[n];  // row velocities minus their targets
    c[0] = (b.v[0] + (wb1 * r_b[2] - wb2 * r_b[1])) - (a.v[0] + (wa1 * r_a[2] - wa2 * r_a[1]));
    c[1] = (b.v[1] + (wb2 * r_b[0] - wb0 * r_b[2])) - (a.v[1] + (wa2 * r_a[0] - wa0 * r_a[2]));
    c[2] = (b.v[2] + (wb0 * r_b[1] - wb1 * r_b[0])) - (a.v[2] + (wa0 * r_a[1] - wa1 * r_a[0]));
    const double dw0 = wb0 - wa0, dw1 = wb1 - wa1, dw2 = wb2 - wa2;
    for (int m = 0; m < M; ++m) c[3 + m] = u(0, m) * dw0 + u(1, m) * dw1 + u(2, m) * dw2;
    for (int i = 0; i < n; ++i) c[i] -= bias[i];
    double lambda[n];
    impulseFor(c, 1.0, lambda);
    double largest = 0.0;
    for (int i = 0; i < n; ++i) largest = std::max(largest, std::abs(lambda[i]));
    for (int r = 0; r < 3; ++r) {
      double dw_a = 0.0, dw_b = 0.0;
      turnsFor(lambda, r, dw_a, dw_b);
      a.v[r] -= inv_mass_a * lambda[r];
      a.w[r] += dw_a;
      b.v[r] += inv_mass_b * lambda[r];
      b.w[r] += dw_b;
      linear[r] += lambda[r];
      double l = 0.0;
      for (int m = 0; m < M; ++m) l += u(r, m) * lambda[3 + m];
      angular[r] += l;
    }
    return largest;
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
