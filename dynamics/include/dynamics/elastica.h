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

/// Seed 001's synthesis without FEM: elastica samples under a force across the lever's end, then
/// two models, each with a few parameters fitted by least squares (not tables through the samples,
/// so they can be scored on loads they were not fitted to):
///  - planar spring (eq. 2): compliance centre a L, output b L = (1 - a) L beyond it (a + b = 1
///    as in all of the seed's fits), linear k_x, k_y, torque T(θ) = k1 θ + k3 θ³ (as a table);
///    (a, k_x, k_y, k1, k3) fitted to the lever end's position and the output angle. For a leaf
///    k_x comes out negative: with k_x, k_y > 0 eq. 2 cannot move the centre the way a bending
///    leaf's moves (`positive_secants`; docs/dynamics.md), so the fit is a static model only
///    (validateFlexure rejects a negative k_x for the solver).
///  - PRB torsion spring: pivot (1 - λ) L, λ by seed 001's F1 on the lever's end (where both
///    models are scored), T(Θ) = k1 Θ + k3 Θ³ on the pseudo-link angle.
/// Also the seed's own figures, for Table 1: λ by F1 at the leaf's tip, and the centre a by F2
/// (min Δx² + Δy² of the centre's drift over the samples) with its drift ranges.
struct FlexureFit {
  std::vector<ElasticaSample> samples;  ///< the loads fitted to
  double a = 0, b = 0;
  FlexureDef planar;
  double lambda = 0;  ///< PRB pivot parameter, fitted at the lever's end
  FlexureDef prb;
  double lambda_tip = 0;                ///< seed 001's F1 at the leaf's tip (Table 1's λ)
  double a_f2 = 0;                      ///< seed 001's F2 optimum
  double drift_x_m = 0, drift_y_m = 0;  ///< Δx (along the flexure), Δy at a_f2 (Table 1)
  /// Whether any centre a in [0, 1] lets eq. 2's force rows carry every sample with positive
  /// secants k_x, k_y (the seed's per-sample stiffness solve, its A1..A7 system).
  bool positive_secants = false;
  double rms_error = 0;  ///< planar fit: RMS of the residuals (lever end / (L + lever), angle)
  /// The planar fit found an optimum (RMS residual below 1 %) whose static solves converge at every
  /// sample; false beyond ~±50° for the seed's leaf (eq. 2 with a negative k_x loses its nearby
  /// equilibrium), and `planar` is then not to be used.
  bool planar_ok = false;
};

/// `samples` (odd, >= 5) loads from -F to F, F giving a tip angle of `max_angle_rad`.
FlexureFit fitFlexure(const LeafSpring& leaf, double max_angle_rad, int samples);

/// The leaf tip (x, y, angle) each model predicts under force F across the lever's end (static
/// solve of the spring with the load's moment arm following the rotation). Planar: the output
/// frame origin at (a L + x, y), the tip b L beyond it; PRB: pivot at ((1 - λ) L, 0), tip λ L
/// beyond it. `ok` false when the static solve fails.
ElasticaTip planarModelTip(const FlexureFit& fit, const LeafSpring& leaf, double force_N);
ElasticaTip prbModelTip(const FlexureFit& fit, const LeafSpring& leaf, double force_N);

}  // namespace sim::dynamics
