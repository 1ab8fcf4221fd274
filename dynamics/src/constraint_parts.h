// Internal header, not API: the reusable pieces constraints are built from.
//
// Every part works on SolverBody velocities. A part's Jacobian J maps body velocities to the
// constraint's velocity Cdot; an impulse lambda changes velocities by M^-1 J^T lambda; the
// effective mass is K^-1 with K = J M^-1 J^T. Equality parts accumulate impulses without bounds;
// inequality and friction rows clamp the accumulated impulse (sequential impulses, Catto 2005).
#pragma once

#include <dynamics/math.h>

#include <Eigen/Dense>

#include <vector>

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

/// Bodies that are links of a mechanism solved as one block (RowBlock). An impulse on such a link
/// moves the whole mechanism: its velocity response is not the link's own inverse mass but the
/// block's constrained one (for a jaw on a geared lift, the rotor's reflected inertia). Contact
/// rows that see the link through this response converge in a few sweeps where rows that see
/// the bare link (0.1 kg against hundreds of kilograms reflected) need many.
class BlockArticulation {
 public:
  /// The block `body` is a link of, or -1.
  virtual int blockOf(int body) const = 0;
  bool isLink(int body) const { return blockOf(body) >= 0; }
  /// (v; w) change of `body` per unit (force; torque) on it while its block's rows hold, or
  /// nullptr when the body is not a link of a block.
  virtual const Mat6* response(int body) = 0;
  /// Applies the rest of the mechanism's response to `wrench` on `body` (the other links, the
  /// rotors and the block's impulses; the body's own velocity has already taken response*wrench).
  virtual void propagate(int body, const Vec6& wrench, std::vector<SolverBody>& bodies,
                         std::vector<double>& rotor_speed) = 0;

 protected:
  ~BlockArticulation() = default;
};

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

  void setCurvatureTarget(const SolverBody& a, const SolverBody& b, const Vec3& a1,
                          const Vec3& b2, const Vec3& c2, double h) {
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
    auto fillTurn = [this](Eigen::Matrix<double, 3, 3 + M>& turn, const Mat3& inv_i, const Vec3& r) {
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
    for (int k = 0; k < 3 + M; ++k) top.col(k) = -(r_a.cross(turn_a.col(k)) + r_b.cross(turn_b.col(k)));
    top.template leftCols<3>().diagonal().array() += a.inv_mass + b.inv_mass;
    // Block inverse through the Schur complement S = C - B^T A^-1 B, with A's inverse from its
    // cofactors (A is symmetric: its upper triangle is used) and a closed-form MxM inverse; no
    // pivoting search and no full K assembled on this per-substep path.
    const double a00 = top(0, 0), a01 = top(0, 1), a02 = top(0, 2);
    const double a11 = top(1, 1), a12 = top(1, 2), a22 = top(2, 2);
    const double c00 = a11 * a22 - a12 * a12, c01 = a02 * a12 - a01 * a22, c02 = a01 * a12 - a02 * a11;
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
  /// Row r of the angular changes the impulse lambda gives a (-turn_a lambda) and b (turn_b lambda).
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
  ///
  /// Written on scalars on purpose: Eigen's fixed-size expressions here spilled 3-vectors to the
  /// stack as scalars and reloaded them as pairs, and the velocities the previous joint had just
  /// written were read the same way; the failed store forwarding stalled each joint of a chain
  /// sweep (the sweep is one dependency chain along the bodies).
  double solve(SolverBody& a, SolverBody& b, Vec3& linear, Vec3& angular) const {
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
      a.v[r] -= a.inv_mass * lambda[r];
      a.w[r] += dw_a;
      b.v[r] += b.inv_mass * lambda[r];
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

namespace sim::dynamics::detail {

/// Where a block row's accumulated impulse is kept in the state (warm start and reactions).
enum class ImpulseSink {
  JointLinear, JointAngular, JointLimit, MotorCoupling, MotorBacklash, MotorCharacteristic,
  Repeater, RepeaterBacklash
};

/// x . y over n contiguous doubles with four independent partial sums, combined in a fixed order
/// (the result does not depend on the data's alignment).
inline double dotSpan(const double* x, const double* y, Eigen::Index n) {
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  Eigen::Index i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += x[i] * y[i];
    s1 += x[i + 1] * y[i + 1];
    s2 += x[i + 2] * y[i + 2];
    s3 += x[i + 3] * y[i + 3];
  }
  for (; i < n; ++i) s0 += x[i] * y[i];
  return (s0 + s1) + (s2 + s3);
}

/// LDL^T of a small symmetric positive definite matrix, without pivoting, over flat arrays sized
/// once. A RowBlock's K (J M^-1 J^T + compliance + a relative regularisation) is SPD, for which the
/// unpivoted factor is backward stable like Cholesky. The factor is computed a row at a time
/// ("up-looking": row i needs only rows < i), so a caller can stop after some rows, read the
/// Schur complement of the rows factored so far, change a later diagonal and go on, or refactor
/// only the trailing rows whose K changed. The leading rows, the bulk, are factored column by
/// column instead (factorLeading: the same factor, with independent updates).
///
/// Row i of L is nonzero only from the first nonzero of row i of K on (its envelope: elimination
/// never fills in before it), and every loop here starts there. A chain of joints ordered along
/// the chain (a motorised arm) has a narrow envelope, so its factor and solves cost about n b^2
/// and n b for half-bandwidth b instead of n^3 / 6 and n^2. L and L D are kept row-major so every
/// inner product runs over contiguous memory, with four partial sums (dotSpan: the compiler may
/// not reorder a reduction under -ffp-contract=off and no -ffast-math). A pivot below 1e-14 of
/// its diagonal marks a row redundant with earlier ones: it gets no impulse.
class SmallLdlt {
 public:
  void resize(Eigen::Index n) {
    n_ = n;
    l_.resize(n, n);
    ld_.resize(n, n);
    d_.resize(n);
    d_inv_.resize(n);
    start_.resize(static_cast<std::size_t>(n));
  }

  /// Eliminates columns [0, columns) from rows [0, rows) of K (rows >= columns): the factor of
  /// the leading rows and the L entries of the others against them, as factorRows(k, 0, columns)
  /// and eliminateRow(k, i, 0, columns) for the rest would give, but "right-looking": each column
  /// updates the rows below it at once, so the work is independent short vector updates instead
  /// of a chain of inner products each waiting on the last (the up-looking order's latency).
  void factorLeading(const Eigen::MatrixXd& k, Eigen::Index columns, Eigen::Index rows) {
    work_.resize(rows, rows);
    ldc_.resize(rows);
    for (Eigen::Index i = 0; i < rows; ++i) {
      Eigen::Index s = 0;
      while (s < i && k(i, s) == 0.0) ++s;
      start_[static_cast<std::size_t>(i)] = s;
      for (Eigen::Index j = s; j <= i; ++j) work_(i, j) = k(i, j);
    }
    for (Eigen::Index c = 0; c < columns; ++c) {
      setPivotFrom(c, work_(c, c), k(c, c));
      const double d = d_[c], d_inv = d_inv_[c];
      // Column c of L and L D for the rows below it (none where a row's envelope starts later),
      // then each such row's remaining entries lose their part: those before `columns`, and the
      // diagonal of the leading rows.
      for (Eigen::Index i = c + 1; i < rows; ++i) {
        if (start(i) > c) {
          ldc_[i] = 0.0;
          continue;
        }
        const double l = work_(i, c) * d_inv;
        l_(i, c) = l;
        ld_(i, c) = ldc_[i] = l * d;
      }
      for (Eigen::Index i = c + 1; i < rows; ++i) {
        if (start(i) > c) continue;
        const double l = l_(i, c);
        if (l == 0.0) continue;
        double* w = &work_(i, 0);
        const Eigen::Index top = std::min(i, columns - 1);
        for (Eigen::Index j = c + 1; j <= top; ++j) w[j] -= l * ldc_[j];
      }
    }
  }

  /// Factors rows [from, to) of K; rows before `from` must be factored already.
  void factorRows(const Eigen::MatrixXd& k, Eigen::Index from, Eigen::Index to) {
    for (Eigen::Index i = from; i < to; ++i) {
      eliminateRow(k, i, 0, i);
      setPivot(i, k(i, i));
    }
  }

  /// Columns [first, last) of row i of L, from row i of K (below the diagonal; read when
  /// `first` is 0, which also finds the row's envelope), its columns before `first` and the rows
  /// before `last` (factored).
  void eliminateRow(const Eigen::MatrixXd& k, Eigen::Index i, Eigen::Index first,
                    Eigen::Index last) {
    if (first == 0) {
      Eigen::Index s = 0;
      while (s < i && k(i, s) == 0.0) ++s;
      start_[static_cast<std::size_t>(i)] = s;
    }
    const Eigen::Index si = start(i);
    for (Eigen::Index c = std::max(first, si); c < last; ++c) {
      const Eigen::Index s = std::max(si, start(c));
      const double l = (k(i, c) - dotSpan(&l_(i, s), &ld_(c, s), c - s)) * d_inv_[c];
      l_(i, c) = l;
      ld_(i, c) = l * d_[c];
    }
  }

  /// Sum over the first `count` columns of L_im^2 d_m for an eliminated row i: K_ii minus this is
  /// the Schur complement of those rows, K_ii - K_iH K_HH^-1 K_Hi.
  double eliminatedSquare(Eigen::Index i, Eigen::Index count) const {
    const Eigen::Index s = start(i);
    if (count <= s) return 0.0;
    return dotSpan(&l_(i, s), &ld_(i, s), count - s);
  }

  /// The pivot of an eliminated row i whose diagonal entry of K is `k_ii`.
  void setPivot(Eigen::Index i, double k_ii) {
    setPivotFrom(i, k_ii - eliminatedSquare(i, i), k_ii);
  }

  /// X = K^-1 X for a block of right-hand sides, in place; rows of X are contiguous so every
  /// elimination step is one short vector update. L^T is applied by rows of L: once x_i is
  /// final, its part is taken out of the rows before it.
  template <int Cols>
  void solveInPlace(Eigen::Matrix<double, Eigen::Dynamic, Cols, Eigen::RowMajor>& x) const {
    for (Eigen::Index i = 0; i < n_; ++i)
      for (Eigen::Index j = start(i); j < i; ++j)
        if (const double l = l_(i, j); l != 0.0) x.row(i) -= l * x.row(j);
    for (Eigen::Index i = 0; i < n_; ++i) x.row(i) *= d_inv_[i];
    for (Eigen::Index i = n_ - 1; i >= 0; --i)
      for (Eigen::Index j = start(i); j < i; ++j)
        if (const double l = l_(i, j); l != 0.0) x.row(j) -= l * x.row(i);
  }

  /// x = K^-1 b (x may not alias b).
  void solve(const Eigen::VectorXd& b, Eigen::VectorXd& x) const {
    x.resize(n_);
    for (Eigen::Index i = 0; i < n_; ++i) {
      const Eigen::Index s = start(i);
      x[i] = b[i] - dotSpan(&l_(i, s), &x[s], i - s);
    }
    x.array() *= d_inv_.array();
    for (Eigen::Index i = n_ - 1; i > 0; --i) {
      const double xi = x[i];
      const double* l = &l_(i, 0);
      for (Eigen::Index j = start(i); j < i; ++j) x[j] -= xi * l[j];
    }
  }

 private:
  using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  /// Pivot d of row i, K's diagonal k_ii before elimination: a pivot below 1e-14 of it marks the
  /// row redundant.
  void setPivotFrom(Eigen::Index i, double d, double k_ii) {
    const bool redundant = !(d > 1e-14 * std::abs(k_ii));
    d_[i] = redundant ? 0.0 : d;
    d_inv_[i] = redundant ? 0.0 : 1.0 / d;
  }
  RowMajor work_;         // factorLeading's partly eliminated K (lower triangle)
  Eigen::VectorXd ldc_;   // factorLeading's current column of L D
  Eigen::Index start(Eigen::Index i) const { return start_[static_cast<std::size_t>(i)]; }
  Eigen::Index n_ = 0;
  RowMajor l_, ld_;  // unit lower triangle (strictly lower part, from each row's start) and L D
  Eigen::VectorXd d_, d_inv_;
  std::vector<Eigen::Index> start_;  // per row: its first nonzero column (the envelope)
};

/// One scalar row of a RowBlock: Cdot = lin_a.v_a + ang_a.w_a + lin_b.v_b + ang_b.w_b
/// + rotor_coef * w_rotor, driven to `target` (soft rows: Cdot + compliance * lambda = target;
/// unilateral rows: Cdot >= target with lambda >= 0).
struct BlockRow {
  int a = 0, b = 0, rotor = -1;
  Vec3 lin_a = Vec3::Zero(), ang_a = Vec3::Zero(), lin_b = Vec3::Zero(), ang_b = Vec3::Zero();
  Vec3 dv_a = Vec3::Zero(), dw_a = Vec3::Zero(), dv_b = Vec3::Zero(), dw_b = Vec3::Zero();
  ///< dv, dw: M^-1 J^T, the velocity change per unit impulse.
  double rotor_coef = 0.0, rotor_dw = 0.0;
  double compliance = 0.0, target = 0.0;
  bool unilateral = false;
  bool active = true;  ///< Unilateral rows: currently in the active set.
  double sign = 1.0;   ///< JointLimit: +1 lower, -1 upper limit; MotorBacklash: the flank.
  ImpulseSink sink = ImpulseSink::JointLinear;
  int owner = 0;  ///< Joint, motor or repeater index the sink refers to.
};

/// A group of rows solved together exactly (block Gauss-Seidel): the motors of one connected
/// mechanism, the joints they drive (directly or through repeaters) and those joints' limits.
/// Solving rotors with the links they drive removes the slow convergence that the large reflected
/// rotor inertias (r^2 I_m) cause between separate scalar rows, e.g. along a motorised arm.
/// Limits enter through a small active-set loop.
struct RowBlock {
  std::vector<BlockRow> rows;
  Eigen::MatrixXd k_full;  ///< J M^-1 J^T + diag(compliance), all rows
  Eigen::MatrixXd k;       ///< the same with inactive unilateral rows replaced by identity
  SmallLdlt ldlt;
  Eigen::VectorXd residual, delta, predicted;
  Eigen::VectorXd released;  ///< impulse change of released unilateral rows (-accumulated)
  /// After order(): rows [0, first_motor) are the equality rows of joints and transmissions,
  /// [first_motor, first_unilateral) the motors' characteristic rows, the rest unilateral (limits,
  /// backlash flanks). The factor then yields the motors' constrained inertia on the way
  /// (factorEqualities) and an active-set change refactors only the trailing unilateral rows.
  Eigen::Index first_motor = 0, first_unilateral = 0;
  std::vector<BlockRow> ordered;  ///< scratch of order()
  /// add() leaves dv, dw zero: a block solved in rotor coordinates never reads them.
  bool skip_moves = false;

  void clear() { rows.clear(); }

  /// Puts the rows in the order described at first_motor, keeping their order within each kind.
  void order() {
    ordered.clear();
    auto kind = [](const BlockRow& r) {
      return r.sink == ImpulseSink::MotorCharacteristic ? 1 : r.unilateral ? 2 : 0;
    };
    for (int want = 0; want < 3; ++want) {
      if (want == 1) first_motor = static_cast<Eigen::Index>(ordered.size());
      if (want == 2) first_unilateral = static_cast<Eigen::Index>(ordered.size());
      for (const BlockRow& r : rows)
        if (kind(r) == want) ordered.push_back(r);
    }
    rows.swap(ordered);
  }

  BlockRow& add(const std::vector<SolverBody>& bodies, int a, int b, const Vec3& lin_a,
                const Vec3& ang_a, const Vec3& lin_b, const Vec3& ang_b, ImpulseSink sink,
                int owner) {
    BlockRow r;
    r.a = a;
    r.b = b;
    r.lin_a = lin_a;
    r.ang_a = ang_a;
    r.lin_b = lin_b;
    r.ang_b = ang_b;
    if (!skip_moves) {
      r.dv_a = bodies[a].inv_mass * lin_a;
      r.dw_a = bodies[a].inv_inertia * ang_a;
      r.dv_b = bodies[b].inv_mass * lin_b;
      r.dw_b = bodies[b].inv_inertia * ang_b;
    }
    r.sink = sink;
    r.owner = owner;
    rows.push_back(r);
    return rows.back();
  }

  /// Assembles K from the rows' Jacobians; rotor_inv_inertia[i] is 1 / I_m of rotor i.
  void assemble(const std::vector<double>& rotor_inv_inertia) {
    const auto n = static_cast<Eigen::Index>(rows.size());
    k_full.resize(n, n);
    for (Eigen::Index i = 0; i < n; ++i) {
      const BlockRow& ri = rows[i];
      for (Eigen::Index j = 0; j <= i; ++j) {
        const BlockRow& rj = rows[j];
        double s = 0.0;
        if (ri.a == rj.a) s += ri.lin_a.dot(rj.dv_a) + ri.ang_a.dot(rj.dw_a);
        if (ri.a == rj.b) s += ri.lin_a.dot(rj.dv_b) + ri.ang_a.dot(rj.dw_b);
        if (ri.b == rj.a) s += ri.lin_b.dot(rj.dv_a) + ri.ang_b.dot(rj.dw_a);
        if (ri.b == rj.b) s += ri.lin_b.dot(rj.dv_b) + ri.ang_b.dot(rj.dw_b);
        if (ri.rotor >= 0 && ri.rotor == rj.rotor)
          s += ri.rotor_coef * rj.rotor_coef * rotor_inv_inertia[ri.rotor];
        k_full(i, j) = s;
        k_full(j, i) = s;
      }
      k_full(i, i) += ri.compliance;
      // A row that cannot move anything (both sides static) would make K singular.
      if (k_full(i, i) <= 0.0) k_full(i, i) = 1.0;
    }
    residual.resize(n);
    released.resize(n);
    delta.resize(n);
    predicted.resize(n);
  }

  /// Factors K of rows put in order() (as buildBlocks does, with the motors' compliance known).
  void factor() {
    factorEqualities();
    factorMotorsAndLimits();
  }

  /// Starts the factor of K (as copyRegularised() describes): factors the equality rows and
  /// eliminates the motor rows against them. The motors' diagonals may then still change
  /// (addMotorCompliance) before factorMotorsAndLimits() finishes.
  void factorEqualities() {
    const auto n = static_cast<Eigen::Index>(rows.size());
    k.resize(n, n);
    ldlt.resize(n);
    for (Eigen::Index i = 0; i < first_unilateral; ++i) copyRegularised(i);
    ldlt.factorLeading(k, first_motor, first_unilateral);
  }

  /// Inverse of the inertia that motor row i sees when the equality rows hold:
  /// K_ii - K_iH K_HH^-1 K_Hi, read off the factor begun by factorEqualities().
  double constrainedMobility(Eigen::Index i) const {
    return k_full(i, i) - ldlt.eliminatedSquare(i, first_motor);
  }

  /// Adds a motor row's compliance to K (before factorMotorsAndLimits()).
  void addMotorCompliance(Eigen::Index i, double compliance) {
    rows[i].compliance = compliance;
    k_full(i, i) += compliance;
    copyRegularised(i);
  }

  void factorMotorsAndLimits() {
    for (Eigen::Index i = first_motor; i < first_unilateral; ++i) {
      ldlt.eliminateRow(k, i, first_motor, i);
      ldlt.setPivot(i, k(i, i));
    }
    factorUnilateral();
  }

  /// Refactors the unilateral rows after their active set changed; the rows before them do not
  /// depend on it.
  void factorUnilateral() {
    const auto n = static_cast<Eigen::Index>(rows.size());
    for (Eigen::Index i = first_unilateral; i < n; ++i) copyRegularised(i);
    ldlt.factorRows(k, first_unilateral, n);
  }

  /// The factor is of K restricted to the active rows. Rows may be redundant (the two jaws'
  /// limits of a repeater pair reach their stops together), which makes K singular; a relative
  /// 1e-12 on the diagonal keeps the factor finite and picks the even split of the redundant
  /// impulses. An inactive row is a row of the identity. Only row i's lower triangle is read.
  void copyRegularised(Eigen::Index i) {
    if (!rows[i].active) {
      k.row(i).head(i + 1).setZero();
      k(i, i) = 1.0;
      return;
    }
    k.row(i).head(i) = k_full.col(i).head(i).transpose();  // K is symmetric
    for (Eigen::Index c = first_unilateral; c < i; ++c)
      if (!rows[c].active) k(i, c) = 0.0;
    k(i, i) = k_full(i, i) * (1.0 + 1e-12);
  }
};

}  // namespace sim::dynamics::detail
