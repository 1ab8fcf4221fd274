// The elastica reference (dynamics/elastica.h) against Bisshopp & Drucker (1945), and the
// seed 001 synthesis fitted to it (SPEC §5): why the planar spring needs a negative k_x for a
// leaf, both fitted models scored at the lever's end on loads they were not fitted to, Table 1.
#include <dynamics/elastica.h>

#include "validation_record.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>
#include <vector>

namespace sim::dynamics {
namespace {

TEST(Elastica, CantileverEndLoadMatchesBisshoppDrucker) {
  // Bisshopp & Drucker's table for a cantilever under a vertical tip load, alpha = P L^2 / EI:
  // tip deflection y/L, horizontal shortening (L - x)/L and tip angle, given to 5 digits.
  struct Row {
    double alpha, y, dx, angle;
  };
  const Row rows[] = {{1.0, 0.30172, 0.05643, 0.46135},
                      {2.0, 0.49346, 0.16064, 0.78175},
                      {5.0, 0.71379, 0.38763, 1.21537},
                      {10.0, 0.81061, 0.55500, 1.43029}};
  LeafSpring leaf;  // the seed's PETG leaf, no lever
  const double ei = leaf.bendingStiffness(), len = leaf.length_m;
  for (const Row& r : rows) {
    const ElasticaTip tip = solveElastica(leaf, 0.0, r.alpha * ei / (len * len), 0.0);
    ASSERT_TRUE(tip.converged) << r.alpha;
    // Half a unit in the table's last digit, plus RK4's error at 400 steps (< 1e-9).
    EXPECT_NEAR(tip.y / len, r.y, 6e-6) << r.alpha;
    EXPECT_NEAR(1.0 - tip.x / len, r.dx, 6e-6) << r.alpha;
    EXPECT_NEAR(tip.angle, r.angle, 6e-6) << r.alpha;
  }
}

TEST(Elastica, PureMomentBendsIntoACircle) {
  // Second closed form: a tip moment M gives constant curvature M / EI.
  LeafSpring leaf;
  const double m = 0.05, k = m / leaf.bendingStiffness(), len = leaf.length_m;
  const ElasticaTip tip = solveElastica(leaf, 0.0, 0.0, m);
  ASSERT_TRUE(tip.converged);
  EXPECT_NEAR(tip.angle, k * len, 1e-12);
  EXPECT_NEAR(tip.x, std::sin(k * len) / k, 1e-12);
  EXPECT_NEAR(tip.y, (1.0 - std::cos(k * len)) / k, 1e-12);
}

// Seed 001's specimen: PETG, E = 2.95 GPa, L = W = 40 mm, t = 0.8 mm, lever 120 mm; the load is a
// force across the lever's end (the seed's dynamometer on its guide).
LeafSpring seedLeaf() {
  LeafSpring leaf;
  leaf.lever_m = 0.12;
  return leaf;
}
constexpr double kDeg = std::numbers::pi / 180.0;

// Force across the lever's end that turns the leaf's tip by `angle`, by bisection.
double forceFor(const LeafSpring& leaf, double angle) {
  double lo = 0.0, hi = 1e-3;
  while (solveElastica(leaf, 0.0, hi, 0.0).angle < angle) hi *= 2.0;
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    (solveElastica(leaf, 0.0, mid, 0.0).angle < angle ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// Why seed 001's stiffness synthesis degenerates for a leaf. Eq. 2's force rows, written out here,
// under the load (0, F) at the centre's deformation (x, y, θ):
//   k_x (x cos θ + ½ y sin θ) + ½ k_y y sin θ = 0,   −½ k_x x sin θ + k_y (y cos θ − ½ x sin θ) =
//   F.
// With k_x, k_y > 0 the first row allows only x = −(k_x + k_y) y tan θ / (2 k_x): the centre can
// drift along the flexure only against y θ. A bending leaf's centre drifts the other way, by its
// kinematics and without axial force (outward by ≈ L θ²/12 at a = ½). So for every centre a in
// [0, 1] some of the elastica's samples need k_x ≤ 0 or k_y ≤ 0 (the seed's per-sample A1..A7
// solve), and away from F2's optimum (a ≈ 0.465, where the drift across vanishes and the secants
// are erratic) k_x is negative at every sample.
TEST(Elastica, Seed001PlanarSpringNeedsANegativeAxialStiffnessForTheLeaf) {
  const LeafSpring leaf = seedLeaf();
  const double len = leaf.length_m;
  std::vector<ElasticaTip> tips;
  std::vector<double> forces;
  for (int i = 1; i <= 8; ++i) {
    forces.push_back(forceFor(leaf, 4.0 * i * kDeg));
    tips.push_back(solveElastica(leaf, 0.0, forces.back(), 0.0));
  }
  int all_negative = 0;
  for (int k = 0; k <= 100; ++k) {
    const double a = k / 100.0, b = 1.0 - a;
    bool positive_everywhere = true, kx_negative_everywhere = true;
    for (std::size_t i = 0; i < tips.size(); ++i) {
      const ElasticaTip& t = tips[i];
      const double x = t.x - a * len - b * len * std::cos(t.angle);
      const double y = t.y - b * len * std::sin(t.angle);
      const double c = std::cos(t.angle), s = std::sin(t.angle);
      Eigen::Matrix2d rows;
      rows << x * c + 0.5 * y * s, 0.5 * y * s, -0.5 * x * s, y * c - 0.5 * x * s;
      const Eigen::Vector2d k_xy = rows.fullPivLu().solve(Eigen::Vector2d(0.0, forces[i]));
      positive_everywhere = positive_everywhere && k_xy.x() > 0.0 && k_xy.y() > 0.0;
      kx_negative_everywhere = kx_negative_everywhere && k_xy.x() < 0.0;
    }
    EXPECT_FALSE(positive_everywhere) << "a = " << a;
    if (std::abs(a - 0.465) > 0.05) {
      EXPECT_TRUE(kx_negative_everywhere) << "a = " << a;
    }
    all_negative += kx_negative_everywhere ? 1 : 0;
  }
  std::printf(
      "centres a = 0, 0.01, ..., 1 where every sample (4..32 deg) needs k_x < 0: %d of 101; "
      "none has k_x, k_y > 0 at every sample\n",
      all_negative);
  EXPECT_FALSE(fitFlexure(leaf, 32.0 * kDeg, 21).positive_secants);  // the library agrees
}

// The lever's end (the seed's marker) and the output angle under force F across the lever's end
// of `leaf`, for the elastica and each fitted model.
struct Pose {
  Vec3 end;
  double angle;
};
Pose poseOf(const ElasticaTip& t, const LeafSpring& leaf) {
  return {Vec3(t.x + leaf.lever_m * std::cos(t.angle), t.y + leaf.lever_m * std::sin(t.angle), 0.0),
          t.angle};
}

struct Score {
  double planar = 0, prb = 0;              // largest end-point error / largest end deflection
  double planar_angle = 0, prb_angle = 0;  // largest output-angle error (rad)
};

// 61 loads up to the force for `max_angle` on `leaf`: most are not among the fit's loads (and
// none when the lever differs from the fit's).
Score score(const FlexureFit& fit, const LeafSpring& leaf, double max_angle) {
  const double f_max = forceFor(leaf, max_angle);
  const Vec3 rest(leaf.length_m + leaf.lever_m, 0, 0);
  Score out;
  double deflection = 0.0;
  for (int i = -30; i <= 30; ++i) {
    const double f = f_max * i / 30.0;
    const ElasticaTip ref = solveElastica(leaf, 0.0, f, 0.0);
    const ElasticaTip pl = planarModelTip(fit, leaf, f);
    const ElasticaTip pr = prbModelTip(fit, leaf, f);
    EXPECT_TRUE(ref.converged && pl.converged && pr.converged) << f;
    const Pose r = poseOf(ref, leaf), a = poseOf(pl, leaf), b = poseOf(pr, leaf);
    deflection = std::max(deflection, (r.end - rest).norm());
    out.planar = std::max(out.planar, (a.end - r.end).norm());
    out.prb = std::max(out.prb, (b.end - r.end).norm());
    out.planar_angle = std::max(out.planar_angle, std::abs(a.angle - r.angle));
    out.prb_angle = std::max(out.prb_angle, std::abs(b.angle - r.angle));
  }
  out.planar /= deflection;
  out.prb /= deflection;
  return out;
}

// The fit is scored where the seed measures, the lever's end, on loads it was not fitted to: fitted
// on 10 loads to ±32°, scored on 61 loads to ±30°. Both models place the lever's end within 0.5 %
// of its largest deflection (the PRB fitted at that same point); only the planar spring also turns
// the output by the leaf's tip angle: the PRB turns it by its pseudo-link angle, which is the axis
// drift it ignores (seed 001's argument for the planar spring). Neither is a joint model for other
// loads: with the lever changed (another ratio of force to moment) both miss by percents, printed
// and recorded for docs/validation/README.md.
TEST(Elastica, FittedModelsScoredAtTheLeverEndOnLoadsTheyWereNotFittedTo) {
  const LeafSpring leaf = seedLeaf();
  const FlexureFit fit = fitFlexure(leaf, 32.0 * kDeg, 11);
  ASSERT_EQ(fit.samples.size(), 10u);
  ASSERT_TRUE(validateFlexure(fit.prb).empty());
  const Score s = score(fit, leaf, 30.0 * kDeg);
  std::printf(
      "planar: a = %.4f, k_x = %.4g N/m, k_y = %.4g N/m, T'(0) = %.5g N m/rad (EI/L = %.5g); "
      "PRB: lambda = %.4f (at the tip %.4f)\n",
      fit.a, fit.planar.k_x.stiffness, fit.planar.k_y.stiffness, fit.planar.k_z.tangent(0.0),
      leaf.bendingStiffness() / leaf.length_m, fit.lambda, fit.lambda_tip);
  std::printf(
      "lever end, 61 loads to 30 deg: planar %.3f %% (angle %.2e rad), PRB %.3f %% (angle "
      "%.2e rad)\n",
      100 * s.planar, s.planar_angle, 100 * s.prb, s.prb_angle);
  EXPECT_LT(s.planar, 0.005);
  EXPECT_LT(s.prb, 0.005);
  EXPECT_LT(s.planar_angle, 1e-3);
  EXPECT_GT(s.prb_angle, 10.0 * s.planar_angle);
  EXPECT_GT(s.prb_angle, 0.01);
  sim::test::recordValidation(
      "Seed 001 leaf (elastica), lever 120 mm: lever-end error over ±30°, fitted to 10 other loads",
      "planar spring closer than the PRB (Fig. 5, discussion)",
      sim::test::fmt("planar %.2f %%", 100 * s.planar) +
          sim::test::fmt(" (angle %.1e rad), ", s.planar_angle) +
          sim::test::fmt("PRB %.3f %%", 100 * s.prb) +
          sim::test::fmt(" (angle %.1e rad)", s.prb_angle),
      "0.5 % of the largest deflection; angle 1e-3 rad");
  std::string other;
  for (const double lever : {0.0, 0.04, 1.0}) {
    LeafSpring changed = leaf;
    changed.lever_m = lever;
    const Score o = score(fit, changed, 30.0 * kDeg);
    std::printf("same fit, lever %.2f m: planar %.2f %%, PRB %.2f %%\n", lever, 100 * o.planar,
                100 * o.prb);
    other += std::string(lever == 0.0 ? "" : "; ") + sim::test::fmt("lever %g m: ", lever) +
             sim::test::fmt("planar %.1f %%, ", 100 * o.planar) +
             sim::test::fmt("PRB %.1f %%", 100 * o.prb);
  }
  sim::test::recordValidation(
      "Seed 001 leaf: the same fits under other levers (other force/moment ratios)", "not reported",
      other, "none: a limit of both models, not a check");
}

// Seed 001 Table 1 against the elastica of a plain leaf (the seed's LS hinge is a 3D-printed leaf
// spring of the same specimen size; its FEM and measured data are not available). The load range
// behind the table is not given: λ varies by 0.0013 between ±10° and ±45° for the leaf, so the
// tolerance is the table's last digit plus the difference between a printed part and a 2D leaf,
// 0.02. The centre a, b and the drifts Δx, Δy are not reproduced (printed for the report): F2 as
// printed, min Δx² + Δy², puts the leaf's centre at a = 0.465 with Δx ≫ Δy, where the table has
// Δx ≪ Δy for every hinge.
TEST(Elastica, Seed001Table1LeafSpringLambda) {
  const LeafSpring leaf = seedLeaf();
  const FlexureFit fit = fitFlexure(leaf, 32.0 * kDeg, 21);
  std::printf(
      "Table 1 LS: lambda 0.78, a 0.64, b 0.36, dx 0.14 mm, dy 5.68 mm; leaf to 32 deg: lambda "
      "%.4f, F2 centre a %.3f, b %.3f, dx %.3f mm, dy %.3f mm\n",
      fit.lambda_tip, fit.a_f2, 1.0 - fit.a_f2, 1e3 * fit.drift_x_m, 1e3 * fit.drift_y_m);
  EXPECT_NEAR(fit.lambda_tip, 0.78, 0.02);  // LS
  EXPECT_NEAR(fit.lambda_tip, 0.77, 0.02);  // TRLS(2x)
  sim::test::recordValidation("Seed 001 Table 1, λ of the PRB (F1 at the leaf's end), leaf to ±32°",
                              "LS 0.78, TRLS(2x) 0.77", sim::test::fmt("%.4f", fit.lambda_tip),
                              "0.02 (2-digit table; printed 3D part vs 2D leaf)");
  sim::test::recordValidation(
      "Seed 001 Table 1, planar-spring centre a, b and drifts Δx, Δy (F2), leaf to ±32°",
      "LS a 0.64, b 0.36, Δx 0.14 mm, Δy 5.68 mm",
      sim::test::fmt("a %.3f, ", fit.a_f2) + sim::test::fmt("b %.3f, ", 1.0 - fit.a_f2) +
          sim::test::fmt("Δx %.2f mm, ", 1e3 * fit.drift_x_m) +
          sim::test::fmt("Δy %.2f mm: not reproduced", 1e3 * fit.drift_y_m),
      "none (not asserted)");
}

}  // namespace
}  // namespace sim::dynamics
