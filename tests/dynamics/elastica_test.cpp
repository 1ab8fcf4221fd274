// The elastica reference (dynamics/elastica.h) against Bisshopp & Drucker (1945), and the
// seed 001 synthesis: a planar spring fitted from it reproduces the leaf's end-point path, a PRB
// torsion spring less well (SPEC §5).
#include <dynamics/elastica.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <numbers>

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

TEST(Elastica, FittedPlanarSpringFollowsTheLeafBetterThanPrb) {
  // Seed 001 specimen: PETG E = 2.95 GPa, L = W = 40 mm, t = 0.8 mm, lever 120 mm. Fit on 21
  // loads up to ±32°, then compare on 61 loads up to ±30° (mostly between the fit's points).
  // The end point is the lever's end (the seed's marker is on the lever): the planar spring turns
  // the output by the leaf's tip angle and moves its centre, the PRB spring turns it by the
  // pseudo-link angle about a fixed pivot, which is what "ignores the axis drift" costs.
  // Error: largest end-point distance over the largest end-point deflection.
  LeafSpring leaf;
  leaf.lever_m = 0.12;
  const double deg = std::numbers::pi / 180.0;
  const FlexureFit fit = fitFlexure(leaf, 32.0 * deg, 21);
  ASSERT_TRUE(validateFlexure(fit.prb).empty());
  double f30 = 0.0;  // force for 30°, by bisection on the elastica
  for (double lo = 0.0, hi = fit.samples.back().force_N, it = 0; it < 60; ++it) {
    f30 = 0.5 * (lo + hi);
    (solveElastica(leaf, 0.0, f30, 0.0).angle < 30.0 * deg ? lo : hi) = f30;
  }
  auto leverEnd = [&](const ElasticaTip& t) {
    return Vec3(t.x + leaf.lever_m * std::cos(t.angle), t.y + leaf.lever_m * std::sin(t.angle), 0);
  };
  const Vec3 rest(leaf.length_m + leaf.lever_m, 0, 0);
  double max_deflection = 0.0, planar_error = 0.0, prb_error = 0.0;
  for (int i = -30; i <= 30; ++i) {
    const double f = f30 * i / 30.0;
    const ElasticaTip ref = solveElastica(leaf, 0.0, f, 0.0);
    const ElasticaTip pl = planarModelTip(fit, leaf, f);
    const ElasticaTip pr = prbModelTip(fit, leaf, f);
    ASSERT_TRUE(ref.converged && pl.converged && pr.converged) << f;
    max_deflection = std::max(max_deflection, (leverEnd(ref) - rest).norm());
    planar_error = std::max(planar_error, (leverEnd(pl) - leverEnd(ref)).norm());
    prb_error = std::max(prb_error, (leverEnd(pr) - leverEnd(ref)).norm());
  }
  planar_error /= max_deflection;
  prb_error /= max_deflection;
  std::printf("a = %.3f, b = %.3f (positive secants: %d), lambda = %.4f; planar %.3f %%, PRB %.3f %%\n",
              fit.a, fit.b, fit.positive_secants, fit.lambda, 100 * planar_error, 100 * prb_error);
  EXPECT_LT(planar_error, 0.02);           // SPEC §5: within 2 % over ±30°
  EXPECT_GT(prb_error, 2.0 * planar_error);  // the paper: PRB ignores the axis drift
}

}  // namespace
}  // namespace sim::dynamics
