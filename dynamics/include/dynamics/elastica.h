// Large-deflection Euler–Bernoulli leaf spring (the elastica), SPEC §5: the reference that
// replaces the seed's FEM when fitting a flexure's planar-spring tables (seed 001's synthesis).
//
// The leaf is clamped at the origin along +x and bends in the x-y plane. Arc length s in [0, L]:
//   x' = cos φ, y' = sin φ, φ' = m / EI, m' = F_x sin φ − F_y cos φ,
// with (F_x, F_y) a fixed-direction force at the tip and m the bending moment. A rigid lever of
// length `lever` continues the tip tangent and carries the force at its end, so the tip moment is
// M_tip = lever (F_y cos φ_L − F_x sin φ_L) + moment. Shooting on m(0) (secant iterations on the
// tip-moment residual, RK4 in s) solves the two-point problem.
#pragma once

#include <dynamics/math.h>

#include <vector>

namespace sim::dynamics {

struct LeafSpring {
  double youngs_modulus_Pa = 2.95e9;  ///< E (seed 001: PETG)
  double length_m = 0.04;             ///< L
  double width_m = 0.04;              ///< W (out of the bending plane)
  double thickness_m = 0.0008;        ///< t (bending)
  double lever_m = 0.0;               ///< rigid lever beyond the tip, along its tangent

  double bendingStiffness() const {  ///< EI (N m^2)
    return youngs_modulus_Pa * width_m * thickness_m * thickness_m * thickness_m / 12.0;
  }
  double axialStiffness() const {  ///< E W t / L (N/m)
    return youngs_modulus_Pa * width_m * thickness_m / length_m;
  }
};

/// The leaf's tip (x, y, tip angle φ) and the tip moment, for a load on the lever's end.
struct ElasticaTip {
  double x = 0, y = 0, angle = 0;
  double tip_moment = 0;  ///< N m, at the leaf's tip (lever moment included)
  bool converged = false;
};

/// Solves the elastica for a force (F_x, F_y) (N, fixed direction) at the lever's end and a pure
/// moment (N m) on the lever. `steps` RK4 steps over the length.
ElasticaTip solveElastica(const LeafSpring& leaf, double force_x, double force_y, double moment,
                          int steps = 400);

}  // namespace sim::dynamics

#include <dynamics/flexure.h>

namespace sim::dynamics {

/// One load case of the fit: a force F across the undeformed lever (along +y, fixed direction,
/// as the seed's dynamometer on its guide) at the lever's end, and the elastica's answer.
struct ElasticaSample {
  double force_N = 0;
  ElasticaTip tip;
};

/// The seed's synthesis without FEM: elastica samples, then the planar spring (compliance centre
/// a L, output b L = (1 - a) L beyond it, a chosen to minimise the drift ranges Δx² + Δy², seed
/// 001's F2) with secant-stiffness tables solved from eq. 2 at every sample (the A1..A7 system),
/// and the PRB torsion spring (λ by golden section on seed 001's F1, torque table).
struct FlexureFit {
  double a = 0, b = 0;
  /// False when no compliance centre gives positive k_x, k_y secants at every sample: eq. 2 then
  /// carries the load through its coupling with negative translational secants, and `planar` is
  /// a static model only (validateFlexure rejects it for the solver).
  bool positive_secants = false;
  double a_drift_optimum = 0;  ///< F2's optimum over all centres (reported; used when positive)
  FlexureDef planar;
  double lambda = 0;
  FlexureDef prb;
  std::vector<ElasticaSample> samples;
};

/// `samples` (odd) loads from -F to F, F giving a tip angle of `max_angle_rad`.
FlexureFit fitFlexure(const LeafSpring& leaf, double max_angle_rad, int samples);

/// The leaf tip (x, y, angle) each model predicts under force F across the lever's end (static
/// solve of the spring with the load's moment arm following the rotation). Planar: the output
/// frame origin at (a L + x, y), the tip b L beyond it; PRB: pivot at ((1 - λ) L, 0), tip λ L
/// beyond it. `ok` false when the static solve fails.
ElasticaTip planarModelTip(const FlexureFit& fit, const LeafSpring& leaf, double force_N);
ElasticaTip prbModelTip(const FlexureFit& fit, const LeafSpring& leaf, double force_N);

}  // namespace sim::dynamics
