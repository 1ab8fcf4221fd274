#include <dynamics/identify.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace sim::dynamics::identify {

namespace {

// Continued fraction of the regularised incomplete beta function (modified Lentz), valid for
// x < (a + 1) / (a + b + 2); the caller uses the symmetry I_x(a,b) = 1 − I_{1−x}(b,a) otherwise.
double betaContinuedFraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  constexpr double kEps = 1e-15;
  double c = 1.0;
  double d = 1.0 - (a + b) * x / (a + 1.0);
  if (std::abs(d) < kTiny) d = kTiny;
  d = 1.0 / d;
  double h = d;
  for (int m = 1; m <= 500; ++m) {
    const double m2 = 2.0 * m;
    double num = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
    d = 1.0 + num * d;
    if (std::abs(d) < kTiny) d = kTiny;
    c = 1.0 + num / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    h *= d * c;
    num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
    d = 1.0 + num * d;
    if (std::abs(d) < kTiny) d = kTiny;
    c = 1.0 + num / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::abs(delta - 1.0) < kEps) break;
  }
  return h;
}

double regularisedBeta(double a, double b, double x) {
  if (x <= 0.0) return 0.0;
  if (x >= 1.0) return 1.0;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1.0) / (a + b + 2.0)) return front * betaContinuedFraction(a, b, x) / a;
  return 1.0 - front * betaContinuedFraction(b, a, 1.0 - x) / b;
}

double studentTCdf(double t, int dof) {
  const double nu = dof;
  const double tail = 0.5 * regularisedBeta(0.5 * nu, 0.5, nu / (nu + t * t));
  return t >= 0.0 ? 1.0 - tail : tail;
}

}  // namespace

double studentTQuantile(double prob, int dof) {
  if (dof < 1) throw std::invalid_argument("Student t quantile: degrees of freedom must be >= 1");
  if (!(prob > 0.0 && prob < 1.0))
    throw std::invalid_argument("Student t quantile: probability must be in (0, 1)");
  if (prob == 0.5) return 0.0;
  if (prob < 0.5) return -studentTQuantile(1.0 - prob, dof);
  // The CDF is monotonic: bracket, then bisect to machine precision (cheap, and exact enough
  // for any dof without special cases).
  double lo = 0.0;
  double hi = 1.0;
  while (studentTCdf(hi, dof) < prob) {
    lo = hi;
    hi *= 2.0;
    if (hi > 1e300) return std::numeric_limits<double>::infinity();
  }
  for (int i = 0; i < 200 && hi - lo > 1e-15 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (studentTCdf(mid, dof) < prob ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

LeastSquaresResult leastSquares(const ResidualFn& residuals, const Eigen::VectorXd& p0,
                                int num_residuals, int max_iterations) {
  const int np = static_cast<int>(p0.size());
  if (num_residuals <= np) {
    throw std::invalid_argument("least squares: " + std::to_string(num_residuals) +
                                " data points for " + std::to_string(np) +
                                " parameters; need more points than parameters");
  }
  LeastSquaresResult result;
  Eigen::VectorXd p = p0;
  Eigen::VectorXd r(num_residuals);
  Eigen::MatrixXd jac(num_residuals, np);
  residuals(p, r, jac);
  double cost = r.squaredNorm();
  double lambda = 1e-3;
  Eigen::VectorXd rTrial(num_residuals);
  Eigen::MatrixXd jTrial(num_residuals, np);
  for (int it = 0; it < max_iterations; ++it) {
    result.iterations = it + 1;
    const Eigen::MatrixXd jtj = jac.transpose() * jac;
    const Eigen::VectorXd g = jac.transpose() * r;
    // Marquardt scaling: damping proportional to diag(JᵀJ) keeps the step unit-free.
    Eigen::MatrixXd a = jtj;
    a.diagonal() += lambda * jtj.diagonal();
    const Eigen::VectorXd step = a.ldlt().solve(-g);
    const Eigen::VectorXd trial = p + step;
    residuals(trial, rTrial, jTrial);
    const double trialCost = rTrial.squaredNorm();
    if (std::isfinite(trialCost) && trialCost <= cost) {
      const bool small =
          step.norm() <= 1e-12 * (p.norm() + 1e-12) || cost - trialCost <= 1e-15 * cost;
      p = trial;
      r = rTrial;
      jac = jTrial;
      cost = trialCost;
      lambda = std::max(lambda * 0.1, 1e-12);
      if (small) {
        result.converged = true;
        break;
      }
    } else {
      lambda *= 10.0;
      if (lambda > 1e12) {
        result.converged = true;  // no decrease possible: at a minimum to working precision
        break;
      }
    }
  }
  result.params = p;
  result.residual_sum_sq = cost;
  result.dof = num_residuals - np;
  result.residual_variance = cost / result.dof;
  const Eigen::MatrixXd jtj = jac.transpose() * jac;
  Eigen::FullPivLU<Eigen::MatrixXd> lu(jtj);
  if (!lu.isInvertible()) {
    throw std::invalid_argument(
        "least squares: the Jacobian is rank-deficient at the optimum; the parameters are not "
        "identifiable from these data");
  }
  const Eigen::MatrixXd cov = result.residual_variance * lu.inverse();
  result.std_error = cov.diagonal().cwiseSqrt();
  result.half_width = studentTQuantile(0.975, result.dof) * result.std_error;
  return result;
}

double efficiencyModel(double input_torque_Nm, double K_ML, double M_C_Nm) {
  return (input_torque_Nm * (1.0 - K_ML * M_C_Nm) - M_C_Nm) / input_torque_Nm;
}

EfficiencyFit fitEfficiency(std::span<const double> torque_Nm, std::span<const double> efficiency) {
  if (torque_Nm.size() != efficiency.size()) {
    throw std::invalid_argument("efficiency fit: " + std::to_string(torque_Nm.size()) +
                                " torques but " + std::to_string(efficiency.size()) +
                                " efficiencies");
  }
  const int n = static_cast<int>(torque_Nm.size());
  if (n < 3) {
    throw std::invalid_argument("efficiency fit: " + std::to_string(n) +
                                " data rows; need at least 3 to fit K_ML and M_C with a "
                                "residual variance");
  }
  for (int k = 0; k < n; ++k) {
    if (!(torque_Nm[k] > 0.0) || !std::isfinite(torque_Nm[k]) || !std::isfinite(efficiency[k])) {
      throw std::invalid_argument("efficiency fit: data row " + std::to_string(k + 1) +
                                  ": torque must be a finite number > 0 and efficiency finite");
    }
  }
  // Start: the linear fit of η = a − b / M1.
  Eigen::MatrixXd a(n, 2);
  Eigen::VectorXd y(n);
  for (int k = 0; k < n; ++k) {
    a(k, 0) = 1.0;
    a(k, 1) = -1.0 / torque_Nm[k];
    y(k) = efficiency[k];
  }
  const Eigen::Vector2d ab = a.colPivHouseholderQr().solve(y);
  Eigen::VectorXd p0(2);
  p0(1) = ab(1);
  p0(0) = std::abs(ab(1)) > 0.0 ? (1.0 - ab(0)) / ab(1) : 0.0;

  const auto residuals = [&](const Eigen::VectorXd& p, Eigen::VectorXd& r, Eigen::MatrixXd& j) {
    const double kml = p(0);
    const double mc = p(1);
    for (int k = 0; k < n; ++k) {
      r(k) = efficiencyModel(torque_Nm[k], kml, mc) - efficiency[k];
      j(k, 0) = -mc;                        // ∂η/∂K_ML
      j(k, 1) = -kml - 1.0 / torque_Nm[k];  // ∂η/∂M_C
    }
  };
  const LeastSquaresResult fit = leastSquares(residuals, p0, n);
  EfficiencyFit out;
  out.K_ML = fit.params(0);
  out.M_C_Nm = fit.params(1);
  out.K_ML_half_width = fit.half_width(0);
  out.M_C_half_width = fit.half_width(1);
  out.residual_std = std::sqrt(fit.residual_variance);
  out.dof = fit.dof;
  out.t_quantile = studentTQuantile(0.975, fit.dof);
  return out;
}

}  // namespace sim::dynamics::identify
