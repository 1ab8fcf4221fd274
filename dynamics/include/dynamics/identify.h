// Parameter identification: nonlinear least squares with linearised 95 % confidence intervals,
// and the drive models that are identified with it (seed 000, eq. 27). Pure math on Eigen; file
// reading lives in the engine (engine/identify_csv.h).
#pragma once

#include <Eigen/Dense>

#include <functional>
#include <span>
#include <string>
#include <vector>

namespace sim::dynamics::identify {

/// Residuals r(p) = model(p) − data (size n) and their Jacobian dr/dp (n × p) at p.
using ResidualFn =
    std::function<void(const Eigen::VectorXd& p, Eigen::VectorXd& r, Eigen::MatrixXd& jacobian)>;

struct LeastSquaresResult {
  Eigen::VectorXd params;          ///< Estimate at the optimum.
  Eigen::VectorXd std_error;       ///< sqrt(diag(s² (JᵀJ)⁻¹)), J at the optimum.
  Eigen::VectorXd half_width;      ///< t_{0.975, n−p} · std_error: the 95 % interval is ± this.
  double residual_sum_sq = 0.0;    ///< Σ r² at the optimum.
  double residual_variance = 0.0;  ///< s² = Σ r² / (n − p).
  int dof = 0;                     ///< n − p.
  int iterations = 0;
  bool converged = false;
};

/// Levenberg–Marquardt from p0 (damping shrinks to Gauss–Newton near the optimum), then the
/// linearised covariance s² (JᵀJ)⁻¹ and Student-t intervals. Throws std::invalid_argument when
/// n ≤ p (no residual variance) or JᵀJ is singular at the optimum (parameters not identifiable).
LeastSquaresResult leastSquares(const ResidualFn& residuals, const Eigen::VectorXd& p0,
                                int num_residuals, int max_iterations = 100);

/// Quantile of Student's t distribution: the x with P(T ≤ x) = prob, dof ≥ 1, 0 < prob < 1.
double studentTQuantile(double prob, int dof);

/// Seed 000 eq. 27: steady-state efficiency at input torque M1 reduced to the output (N m),
/// η = (M1 (1 − K_ML M_C) − M_C) / M1.
double efficiencyModel(double input_torque_Nm, double K_ML, double M_C_Nm);

struct EfficiencyFit {
  double K_ML = 0.0;    ///< Friction growth with transmitted torque (1/(N m)).
  double M_C_Nm = 0.0;  ///< Coulomb friction torque (N m).
  double K_ML_half_width = 0.0;
  double M_C_half_width = 0.0;
  double residual_std = 0.0;  ///< s, efficiency units.
  int dof = 0;
  double t_quantile = 0.0;  ///< t_{0.975, dof} used for the intervals.
};

/// Fits K_ML and M_C of eq. 27 to (torque, efficiency) pairs. Eq. 27 is η = a − b/M1 with
/// a = 1 − K_ML M_C, b = M_C: linear in (a, b), so that linear solution is the exact start
/// and Levenberg–Marquardt on (K_ML, M_C) only confirms it; the intervals come from the
/// Jacobian in (K_ML, M_C). Throws std::invalid_argument naming the problem (fewer than 3
/// points, a torque ≤ 0, sizes differ, not identifiable).
EfficiencyFit fitEfficiency(std::span<const double> torque_Nm, std::span<const double> efficiency);

}  // namespace sim::dynamics::identify
