// Internal header, not API: a spring–damper expressed as a soft constraint row.
//
// A row with position error C, velocity Cdot and accumulated impulse lambda (per step) is solved
// as Cdot + (bias / dt) C + gamma lambda = 0. With gamma and bias from the stiffness k and damping
// c below this is the implicit-Euler step of the force -k C - c Cdot, so any stiffness is stable at
// any step (Catto, "Soft Constraints", GDC 2011). The iteration's impulse update is
// d_lambda = -(Cdot + bias C / dt + gamma lambda) / (K + gamma) with K = J M^-1 J^T.
#pragma once

namespace sim::dynamics::detail {

struct SoftRowCoefficients {
  double gamma = 0.0;  ///< Compliance: 1 / (dt (c + dt k)), row velocity per unit impulse.
  double bias = 0.0;   ///< Fraction of C removed per step: dt k / (c + dt k), in [0, 1).
};

/// Precondition: stiffness >= 0, damping >= 0, stiffness + damping > 0, dt > 0.
inline SoftRowCoefficients softRowCoefficients(double stiffness, double damping, double dt) {
  const double denom = damping + dt * stiffness;
  return {1.0 / (dt * denom), dt * stiffness / denom};
}

}  // namespace sim::dynamics::detail

#include <Eigen/Dense>

namespace sim::dynamics::detail {

/// The same implicit-Euler step for n coupled rows whose force is -W(C) - D Cdot with a tangent
/// stiffness S = dW/dC that need not be diagonal or symmetric (the flexure's planar spring,
/// seed 001 eq. 2): the rows solve Cdot + bias + Gamma lambda = 0 with
/// Gamma = (dt (D + dt S))^-1 and bias = (D + dt S)^-1 W. For diagonal S and W = S C this is
/// softRowCoefficients row by row. Cross terms left explicit would make stiff, unequal
/// stiffnesses flutter at the engine step; here they are implicit too.
/// Precondition: D + dt S invertible (S with a positive-definite symmetric part suffices).
template <int N>
struct SoftBlockCoefficients {
  Eigen::Matrix<double, N, N> gamma;
  Eigen::Matrix<double, N, 1> bias;  ///< Row speed (m/s or rad/s), not a fraction.
};

template <int N>
SoftBlockCoefficients<N> softBlockCoefficients(const Eigen::Matrix<double, N, N>& stiffness,
                                               const Eigen::Matrix<double, N, 1>& damping,
                                               const Eigen::Matrix<double, N, 1>& load, double dt) {
  Eigen::Matrix<double, N, N> a = dt * stiffness;
  a.diagonal() += damping;
  const Eigen::PartialPivLU<Eigen::Matrix<double, N, N>> lu(a);
  return {lu.inverse() / dt, lu.solve(load)};
}

}  // namespace sim::dynamics::detail
