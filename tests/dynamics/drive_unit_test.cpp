// Seed 000 drive unit (dynamics/drive_unit.h) against analytic steady states: the stall torque
// and twist (elasticity M/c plus the backlash gap) and the efficiency curve of eq. 27, which the
// identification tool must then recover from the simulated drive.
#include <dynamics/drive_unit.h>
#include <dynamics/identify.h>

#include <gtest/gtest.h>

#include "validation_record.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace dr = sim::dynamics::drive;

namespace {

TEST(DriveUnit, ValidationNamesTheField) {
  dr::DriveUnitParams p;
  EXPECT_EQ(dr::validate(p), "");
  p.c = 0.0;
  EXPECT_EQ(dr::validate(p), "c: must be > 0");
  p = dr::DriveUnitParams{};
  p.friction.sigma0 = -1.0;
  EXPECT_EQ(dr::validate(p).rfind("friction.sigma0", 0), 0u);
}

TEST(DriveUnit, BacklashFunctionsEq16And17) {
  EXPECT_EQ(dr::backlashB(0.005, 0.01), 0.0);
  EXPECT_DOUBLE_EQ(dr::backlashB(0.015, 0.01), 0.005);
  EXPECT_DOUBLE_EQ(dr::backlashB(-0.015, 0.01), -0.005);
  EXPECT_EQ(dr::backlashBPrime(0.005, 0.01), 0.0);
  EXPECT_EQ(dr::backlashBPrime(-0.02, 0.01), 1.0);
}

TEST(DriveUnit, StallTorqueAndTwistWithBacklash) {
  // Output held, constant voltage: the current settles at U/R (no back-EMF), the gearbox
  // transmits M1 = i k_M U / R, and the twist is the gap plus the elastic part M1/c.
  dr::DriveUnitParams p;
  p.backlash = 0.01;
  dr::DriveUnitState s;
  const double U = 6.0, dt = 1e-6;
  dr::DriveUnitOutputs out;
  for (int k = 0; k < 300000; ++k) out = dr::stepDriveUnit(p, s, U, 0.0, dt, true);
  const double stall = p.ratio * p.k_M * U / p.R;  // 1.0475 N m
  // 0.3 s is > 50 time constants of the K_V1 damping (J1 i²/K_V1 = 5 ms): settled to 1e-6.
  EXPECT_NEAR(out.M1_Nm, stall, 1e-6 * stall);
  EXPECT_NEAR(s.alpha1_rad - s.alpha2_rad, p.backlash + stall / p.c, 1e-6 * stall / p.c);
  // Reversed voltage: the input crosses the gap and winds up the other way.
  for (int k = 0; k < 300000; ++k) out = dr::stepDriveUnit(p, s, -U, 0.0, dt, true);
  EXPECT_NEAR(out.M1_Nm, -stall, 1e-6 * stall);
  EXPECT_NEAR(s.alpha1_rad - s.alpha2_rad, -p.backlash - stall / p.c, 1e-6 * stall / p.c);
  sim::test::recordValidation(
      "Seed 000 drive unit (standalone), output held, U = ±6 V, θ_bn = 0.01 rad",
      "eq. 24 at rest: M1 = i k_M U / R, twist = θ_bn + M1/c",
      sim::test::fmt("M1 %.6f N m (", out.M1_Nm) + sim::test::fmt("%.6f); ", -stall) +
          sim::test::fmt("twist %.6e rad (", s.alpha1_rad - s.alpha2_rad) +
          sim::test::fmt("%.6e)", -p.backlash - stall / p.c),
      "1e-6 relative (0.3 s = 60 time constants)");
}

TEST(DriveUnit, SteadyEfficiencyFollowsEq27AndIdentifiesBack) {
  // At 48 V the output turns at ~35 rad/s, 3.4 Stribeck speeds: g(Ω2) = M_C to 2e-6, so the
  // steady state obeys M1 − (|M1| K_ML + 1) M_C = M_out, i.e. η = M_out/M1 = eq. 27.
  const dr::DriveUnitParams p;
  std::vector<double> m1s, etas;
  double worst = 0.0;  // largest |η − eq. 27|
  for (double load : {0.03, 0.05, 0.08, 0.12, 0.2, 0.3, 0.45}) {
    dr::DriveUnitState s;
    dr::DriveUnitOutputs out;
    for (int k = 0; k < 30000; ++k) out = dr::stepDriveUnit(p, s, 48.0, load, 1e-5);
    ASSERT_GT(s.omega2_radps, 30.0);
    const double eta = load / out.M1_Nm;
    const double expected =
        sim::dynamics::identify::efficiencyModel(out.M1_Nm, p.K_ML, p.friction.curve.coulomb);
    EXPECT_NEAR(eta, expected, 1e-5) << "load " << load;
    worst = std::max(worst, std::abs(eta - expected));
    m1s.push_back(out.M1_Nm);
    etas.push_back(eta);
  }
  // The identification tool recovers the drive's own K_ML and M_C from its simulated curve.
  const auto fit = sim::dynamics::identify::fitEfficiency(m1s, etas);
  EXPECT_NEAR(fit.K_ML, p.K_ML, 1e-3 * p.K_ML);
  EXPECT_NEAR(fit.M_C_Nm, p.friction.curve.coulomb, 1e-4 * p.friction.curve.coulomb);
  sim::test::recordValidation(
      "Seed 000 drive unit (standalone) at 48 V under 7 loads: efficiency M_out/M1, identified "
      "back",
      "eq. 27 with K_ML = 3.266, M_C = 0.0405 N m",
      sim::test::fmt("η off eq. 27 by at most %.1e; ", worst) +
          sim::test::fmt("identified K_ML %.4f, ", fit.K_ML) +
          sim::test::fmt("M_C %.6f N m", fit.M_C_Nm),
      "η to 1e-5 at each load; K_ML 1e-3, M_C 1e-4 relative");
}

}  // namespace
