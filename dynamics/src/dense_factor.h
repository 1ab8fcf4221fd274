// Internal header, not API: the solver's small dense factorizations, in one place.
//
// Why hand-written: the systems here are small (a joint's 6 rows, a motor block's tens, a
// mechanism's few rotors) and are factored every substep, where Eigen's general paths cost
// several times more: its pivoted LDLT and LU search for pivots the positive definite systems
// here do not need, and on dynamic sizes it takes its blocked, general-size route. So each is
// written as plain loops on storage sized once, with the structure it can use (SmallLdlt skips a
// row's envelope; a follower's 6 x 6 rows split into 3 x 3 blocks). The routines keep their own
// orders of operations: each one's rounding is part of the physics' bits (the pinned state
// hashes), so they are not folded into one another.
//
//   SmallLdlt            a RowBlock's K (motor blocks): up-looking/right-looking LDL^T with
//                        envelopes, refactoring only trailing rows
//   lastInverseColumn    the last column of a joint's 6 x 6 K^-1 (its axis response)
//   choleskyInPlace/Solve, invertSpd   a reduced mechanism's rotor-space inertia
//   invertBlocks, invert6              a follower's 6 x 6 rows (reduced mechanisms)
#pragma once

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <vector>

#include "check.h"
#include "rows.h"

namespace sim::dynamics::detail {

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
    // K is J M^-1 J^T (+ compliance): symmetric positive semi-definite, so no pivot may come out
    // clearly negative (a redundant row's is zero to rounding, kept out below). A non-finite one
    // comes from a non-finite state, which the step's fault check reports.
    SIM_VALIDATE(!(d < -1e-9 * std::abs(k_ii)),
                 "a motor block's K is not positive semi-definite (negative pivot)");
    const bool redundant = !(d > 1e-14 * std::abs(k_ii));
    d_[i] = redundant ? 0.0 : d;
    d_inv_[i] = redundant ? 0.0 : 1.0 / d;
  }
  RowMajor work_;        // factorLeading's partly eliminated K (lower triangle)
  Eigen::VectorXd ldc_;  // factorLeading's current column of L D
  Eigen::Index start(Eigen::Index i) const { return start_[static_cast<std::size_t>(i)]; }
  Eigen::Index n_ = 0;
  RowMajor l_, ld_;  // unit lower triangle (strictly lower part, from each row's start) and L D
  Eigen::VectorXd d_, d_inv_;
  std::vector<Eigen::Index> start_;  // per row: its first nonzero column (the envelope)
};

/// Column N - 1 of K^-1 for a small symmetric positive semidefinite K, by an unpivoted LDL^T (K is
/// taken by value and overwritten): L^-T D^-1 L^-1 e_last, where L^-1 e_last = e_last. False when a
/// pivot falls below 1e-12 of K's largest diagonal entry (K singular, e.g. both sides static); x
/// is then left unset.
template <int N>
bool lastInverseColumn(Eigen::Matrix<double, N, N> k, Eigen::Matrix<double, N, 1>& x) {
  double d[N];
  const double scale = k.diagonal().maxCoeff();
  bool invertible = scale > 0.0;
  for (int j = 0; j < N && invertible; ++j) {
    double dj = k(j, j);
    for (int p = 0; p < j; ++p) dj -= k(j, p) * k(j, p) * d[p];
    invertible = dj > 1e-12 * scale;
    d[j] = dj;
    for (int i = j + 1; i < N && invertible; ++i) {
      double v = k(i, j);
      for (int p = 0; p < j; ++p) v -= k(i, p) * k(j, p) * d[p];
      k(i, j) = v / dj;  // L, below the diagonal
    }
  }
  if (!invertible) return false;
  x = Eigen::Matrix<double, N, 1>::Unit(N - 1) / d[N - 1];
  for (int i = N - 2; i >= 0; --i)
    for (int p = i + 1; p < N; ++p) x[i] -= k(p, i) * x[p];
  return true;
}

/// Cholesky factor of the leading m x m block of `s` in place (lower triangle). The matrices here
/// are a handful of rows (rotors, active limits), so plain loops on storage sized once.
inline bool choleskyInPlace(Eigen::MatrixXd& s, Eigen::Index m) {
  for (Eigen::Index j = 0; j < m; ++j) {
    double d = s(j, j);
    for (Eigen::Index p = 0; p < j; ++p) d -= s(j, p) * s(j, p);
    if (!(d > 0.0)) return false;
    const double root = std::sqrt(d);
    s(j, j) = root;
    for (Eigen::Index i = j + 1; i < m; ++i) {
      double v = s(i, j);
      for (Eigen::Index p = 0; p < j; ++p) v -= s(i, p) * s(j, p);
      s(i, j) = v / root;
    }
  }
  return true;
}

/// x = (L L^T)^-1 x for the factor of choleskyInPlace().
template <typename Vector>
inline void choleskySolve(const Eigen::MatrixXd& l, Eigen::Index m, Vector&& x) {
  for (Eigen::Index i = 0; i < m; ++i) {
    double v = x[i];
    for (Eigen::Index p = 0; p < i; ++p) v -= l(i, p) * x[p];
    x[i] = v / l(i, i);
  }
  for (Eigen::Index i = m - 1; i >= 0; --i) {
    double v = x[i];
    for (Eigen::Index p = i + 1; p < m; ++p) v -= l(p, i) * x[p];
    x[i] = v / l(i, i);
  }
}

inline void symmetrise(Eigen::MatrixXd& m) {
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < i; ++j) m(i, j) = m(j, i) = 0.5 * (m(i, j) + m(j, i));
}

/// out = m^-1 when one off-diagonal 3 x 3 block of m is zero, as a hinge's rows (point rows, then
/// rotation rows: lower left zero) and a slider's (rotation rows first: upper left zero) have it:
/// two 3 x 3 inverses instead of a 6 x 6 elimination. False when the form does not apply.
inline bool invertBlocks(const Mat6& m, Mat6& out) {
  const auto p = m.topLeftCorner<3, 3>(), q = m.topRightCorner<3, 3>();
  const auto r = m.bottomLeftCorner<3, 3>(), s = m.bottomRightCorner<3, 3>();
  const double scale = m.cwiseAbs().maxCoeff();
  auto inverse = [scale](const Mat3& a, Mat3& inv) {
    bool ok = false;
    double det = 0.0;
    a.computeInverseAndDetWithCheck(inv, det, ok, 0.0);
    return ok && std::abs(det) > 1e-12 * scale * scale * scale;
  };
  Mat3 a_inv, b_inv;
  if (r.isZero(0.0)) {  // [[P, Q], [0, S]]^-1 = [[P^-1, -P^-1 Q S^-1], [0, S^-1]]
    if (!inverse(p, a_inv) || !inverse(s, b_inv)) return false;
    out.topLeftCorner<3, 3>() = a_inv;
    out.topRightCorner<3, 3>().noalias() = -(a_inv * q * b_inv);
    out.bottomLeftCorner<3, 3>().setZero();
    out.bottomRightCorner<3, 3>() = b_inv;
    return true;
  }
  if (p.isZero(0.0)) {  // [[0, Q], [R, S]]^-1 = [[-R^-1 S Q^-1, R^-1], [Q^-1, 0]]
    if (!inverse(r, a_inv) || !inverse(q, b_inv)) return false;
    out.topLeftCorner<3, 3>().noalias() = -(a_inv * s * b_inv);
    out.topRightCorner<3, 3>() = a_inv;
    out.bottomLeftCorner<3, 3>() = b_inv;
    out.bottomRightCorner<3, 3>().setZero();
    return true;
  }
  return false;
}

/// out = m^-1 by Gauss-Jordan elimination with partial pivoting, in plain loops (Eigen's LU takes
/// its general dynamic-size path here, several times slower). False when a pivot falls below
/// 1e-12 of the largest entry: the rows do not fix all six freedoms.
inline bool invert6(const Mat6& m, Mat6& out) {
  Mat6 a = m;
  out.setIdentity();
  const double scale = m.cwiseAbs().maxCoeff();
  for (int c = 0; c < 6; ++c) {
    int p = c;
    for (int r = c + 1; r < 6; ++r)
      if (std::abs(a(r, c)) > std::abs(a(p, c))) p = r;
    if (!(std::abs(a(p, c)) > 1e-12 * scale)) return false;
    if (p != c) {
      a.row(p).swap(a.row(c));
      out.row(p).swap(out.row(c));
    }
    const double inv = 1.0 / a(c, c);
    a.row(c) *= inv;
    out.row(c) *= inv;
    for (int r = 0; r < 6; ++r) {
      if (r == c) continue;
      const double f = a(r, c);
      if (f == 0.0) continue;
      a.row(r) -= f * a.row(c);
      out.row(r) -= f * out.row(c);
    }
  }
  return true;
}

/// out = m^-1 for a symmetric positive definite m (work: scratch of the same size).
inline bool invertSpd(const Eigen::MatrixXd& m, Eigen::MatrixXd& work, Eigen::MatrixXd& out) {
  const Eigen::Index n = m.rows();
  work = m;
  if (!choleskyInPlace(work, n)) return false;
  out.setIdentity(n, n);
  for (Eigen::Index c = 0; c < n; ++c) choleskySolve(work, n, out.col(c));
  symmetrise(out);
  return true;
}

}  // namespace sim::dynamics::detail
