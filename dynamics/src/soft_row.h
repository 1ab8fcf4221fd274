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
