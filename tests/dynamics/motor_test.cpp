// Pins the motor rows (dynamics/src/motor.cpp; SPEC §2.1-2.4) against the analytic
// DC-motor solution and against the kinematic relations the constraints must enforce.
#include <dynamics/samples.h>
#include <dynamics/simulator.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numbers>

#include <gtest/gtest.h>

#include "fixture.h"
#include "validation_record.h"

namespace sim::dynamics {
namespace {

// Tolerances can be scaled for exotic platforms (like MuJoCo's MJTOL_SCALE).
double tol(double t) {
  const char* s = std::getenv("SIMTRAINER_TOL_SCALE");
  return s ? t * std::atof(s) : t;
}

struct Wg7152Case {
  double t_m;
  double expected_T;  // SPEC §2.4
};

class Wg7152Test : public ::testing::TestWithParam<Wg7152Case> {};

// eq. 8 with b = 0, u = 1: w_L(t) = (w_xx / r)(1 - exp(-t / T)).
TEST_P(Wg7152Test, LinkSpeedMatchesAnalyticSolution) {
  const Wg7152Case c = GetParam();
  Simulator sim(samples::wg7152(c.t_m, 0.01));
  const MotorDef& mo = sim.model().motors[0];
  const double r = mo.gear_ratio, w_xx = mo.no_load_speed_radps, mp = mo.stall_torque_Nm;
  const double i_l = 30.833;
  const double T = (i_l + r * r * mo.rotorInertia()) * w_xx / (r * r * mp);
  ASSERT_NEAR(T, c.expected_T, 5e-5);  // the paper's rounding of T
  State s = sim.initialState();
  double max_error = 0.0;
  for (int n = 1; n <= 1000; ++n) {
    const StepReport rep = sim.step(s);
    ASSERT_EQ(rep.fault.kind, Fault::Kind::None);
    const double analytic = (w_xx / r) * (1.0 - std::exp(-s.time_s / T));
    max_error = std::max(max_error, std::abs(s.joints[0].speed - analytic));
    // The motor constraint holds: joint speed = rotor speed / r.
    ASSERT_NEAR(s.joints[0].speed, s.motors[0].speed_radps / r, 1e-9);
  }
  // The paper's agreement is 1e-6; the exponential-fitted characteristic row is exact for this
  // linear system, so what remains is the iterative solve (tolerance 1e-10 N m s).
  EXPECT_LE(max_error, tol(1e-6)) << "t_m = " << c.t_m;
  EXPECT_NEAR(s.joints[0].speed, 0.1026, 5e-5);  // w_L^max of the paper, reached by 10 s
  std::printf(
      "WG-7152, t_m = %g s: largest |w_L - analytic| over 10 s = %.3e rad/s, w_L(10 s) = "
      "%.6f rad/s, T = %.4f s\n",
      c.t_m, max_error, s.joints[0].speed, T);
  sim::test::recordValidation(
      sim::test::fmt("Seed 004 Fig. 4: WG-7152 link speed, t_m = %g s, dt = 0.01 s", c.t_m),
      sim::test::fmt("analytic curve to ε = 1e-6; w_max 0.1026 rad/s, T = %.4f s", c.expected_T),
      sim::test::fmt("largest error %.2e rad/s; ", max_error) +
          sim::test::fmt("w_L(10 s) %.5f rad/s; ", s.joints[0].speed) +
          sim::test::fmt("T %.4f s", T),
      "1e-6 rad/s (the paper's ε); T to 5e-5 s (its rounding)");
}

INSTANTIATE_TEST_SUITE_P(PaperFigure4, Wg7152Test,
                         ::testing::Values(Wg7152Case{1.0, 1.3164}, Wg7152Case{0.5, 0.8164}));

// Errors against a fine-step reference shrink at least linearly with the step for a nonlinear,
// gravity-loaded link with bearing friction.
TEST(MotorConvergence, FirstOrderOrBetterWithGravityAndFriction) {
  auto speedAt = [](double dt, double t_end) {
    Model m = samples::wg7152GravityLoaded(0.5, dt, 0.3);
    m.solver.velocity_tolerance = 1e-13;
    m.solver.velocity_iterations = 200;
    m.solver.position_iterations = 20;
    m.solver.position_tolerance_m = 1e-12;
    Simulator sim(std::move(m));
    State s = sim.initialState();
    const int steps = static_cast<int>(std::lround(t_end / dt));
    checkedSteps(sim, s, steps);
    return s.joints[0].speed;
  };
  const double t_end = 2.0;
  const double reference = speedAt(0.01 / 64, t_end);
  std::vector<double> errors;
  for (double dt : {0.02, 0.01, 0.005}) errors.push_back(std::abs(speedAt(dt, t_end) - reference));
  for (std::size_t i = 1; i < errors.size(); ++i) {
    const double order = std::log2(errors[i - 1] / errors[i]);
    // First order is 1.0; allow 0.8 for the fine reference's own error and pre-asymptotic terms.
    EXPECT_GE(order, 0.8) << "errors " << errors[i - 1] << " -> " << errors[i];
  }
  EXPECT_GT(errors.front(), 0.0);  // the gravity case is genuinely not exact
}

// Motor on a link whose parent moves: joint speed = w_m / r at every step.
TEST(MotorOnMovingParent, JointSpeedFollowsRotor) {
  Simulator sim(samples::twoLinkArm(0.01));
  State s = sim.initialState();
  const double r = sim.model().motors[1].gear_ratio;
  double parent_speed = 0.0;
  for (int n = 0; n < 500; ++n) {
    const StepReport rep = sim.step(s);
    ASSERT_EQ(rep.fault.kind, Fault::Kind::None);
    // Velocity solve stops at 1e-10 N m s; the joint-speed residual it leaves is far smaller
    // than 1e-8 rad/s for these inertias.
    ASSERT_NEAR(s.joints[1].speed, s.motors[1].speed_radps / r, 1e-8) << "step " << n;
    ASSERT_NEAR(s.joints[0].speed, s.motors[0].speed_radps / sim.model().motors[0].gear_ratio,
                1e-8);
    // Positions follow too: joint angle = a_m / r to the split-impulse tolerance.
    ASSERT_NEAR(s.joints[1].position, s.motors[1].angle_rad / r, 1e-6);
    parent_speed = s.joints[0].speed;
  }
  EXPECT_GT(std::abs(parent_speed), 0.05);  // the parent really moves
  EXPECT_LT(s.joints[1].speed, -0.01);      // and so does the driven joint (u = -0.7)
}

// A multi-turn joint: no jump when the angle passes +-pi.
TEST(MotorMultiTurn, AngleIsContinuousOverSeveralTurns) {
  Model m = samples::wg7152(0.5, 0.01);
  m.motors[0].gear_ratio = 2.0;                        // fast enough to make turns in a few seconds
  m.bodies[0].inertia_kgm2 = Mat3::Identity() * 0.01;  // T = 0.4 s
  Simulator sim(std::move(m));
  State s = sim.initialState();
  double previous = s.joints[0].position;
  for (int n = 0; n < 2000; ++n) {
    checkedStep(sim, s);
    ASSERT_LT(std::abs(s.joints[0].position - previous), 0.1) << "jump at step " << n;
    ASSERT_NEAR(s.joints[0].position, s.motors[0].angle_rad / 2.0, 1e-6);
    previous = s.joints[0].position;
  }
  EXPECT_GT(s.joints[0].position, 4 * std::numbers::pi);  // more than two turns
}

// The drive's torque limit (MotorDef::max_torque, a URDF joint's effort) on WG-7152 from rest at
// u = 1. Closed form: while r Mp (1 - w_m / w_xx) exceeds the limit L the joint accelerates at
// L / (I_L + r^2 I_m), a ramp up to w1 = (w_xx / r)(1 - L / (r Mp)); then eq. 8's exponential
// from w1 with the time constant T. The limit is applied to the voltage at each substep's start
// speed, so the joint torque lags it by r Mp dw_m / w_xx = L h / T per step (dw_m = r L h / I,
// r^2 Mp / w_xx = I / T): the ramp ends at most w1 h / T slow, an error first order in the step,
// checked against that bound and by halving the step.
TEST(MotorLimits, TorqueLimitFollowsTheRampThenTheCharacteristic) {
  double bound = 0.0;
  auto largestError = [&bound](double dt, double* final_speed) {
    Model model = samples::wg7152(1.0, dt);
    MotorDef& mo = model.motors[0];
    const double r = mo.gear_ratio, w_xx = mo.no_load_speed_radps, mp = mo.stall_torque_Nm;
    const double limit = 0.4 * r * mp;
    mo.max_torque = limit;
    const double inertia = 30.833 + r * r * mo.rotorInertia();
    const double T = inertia * w_xx / (r * r * mp);
    const double w1 = (w_xx / r) * (1.0 - limit / (r * mp));
    const double t1 = w1 * inertia / limit;
    bound = w1 * dt / T;
    const auto analytic = [&](double t) {
      return t <= t1 ? limit * t / inertia
                     : (w_xx / r) * (1.0 - (limit / (r * mp)) * std::exp(-(t - t1) / T));
    };
    Simulator sim(model);
    State s = sim.initialState();
    double largest = 0.0, largest_torque = 0.0;
    const int steps = static_cast<int>(std::lround(4.0 / dt));
    for (int n = 0; n < steps; ++n) {
      s.motors[0].voltage = 1.0;
      checkedStep(sim, s);
      largest = std::max(largest, std::abs(s.joints[0].speed - analytic(s.time_s)));
      largest_torque = std::max(largest_torque, r * s.motors[0].torque_Nm);
    }
    // The torque at the joint never exceeds the limit (it lags below it, never above).
    EXPECT_LE(largest_torque, limit * (1.0 + 1e-12)) << "dt = " << dt;
    *final_speed = s.joints[0].speed;
    return largest;
  };
  double speed_coarse = 0.0, speed_fine = 0.0;
  const double coarse = largestError(0.01, &speed_coarse);
  const double coarse_bound = bound;
  const double fine = largestError(0.005, &speed_fine);
  std::printf(
      "WG-7152 with a 0.4 r Mp torque limit: largest speed error %.3e rad/s at 0.01 s "
      "(bound w1 h / T %.3e), %.3e at 0.005 s (ratio %.3f)\n",
      coarse, coarse_bound, fine, fine / coarse);
  EXPECT_LT(coarse, coarse_bound);
  EXPECT_LT(fine, bound);
  EXPECT_GT(fine / coarse, 0.4);  // first order: halving the step halves the error
  EXPECT_LT(fine / coarse, 0.6);
  EXPECT_NEAR(speed_fine, speed_coarse, 2e-4);
}

// The drive's speed limit (MotorDef::max_speed, a URDF joint's velocity): the voltage is capped at
// max_speed r / w_xx, so from rest the joint follows eq. 8 scaled to the limit,
// w(t) = max_speed (1 - exp(-t / T)), exact as the unlimited motor's (1e-6 rad/s, the paper's ε).
TEST(MotorLimits, SpeedLimitScalesTheCharacteristic) {
  Model model = samples::wg7152(1.0, 0.01);
  MotorDef& mo = model.motors[0];
  const double r = mo.gear_ratio, w_xx = mo.no_load_speed_radps, mp = mo.stall_torque_Nm;
  const double max_speed = 0.3 * w_xx / r;
  mo.max_speed = max_speed;
  const double T = (30.833 + r * r * mo.rotorInertia()) * w_xx / (r * r * mp);
  Simulator sim(model);
  State s = sim.initialState();
  double largest = 0.0;
  for (int n = 0; n < 1000; ++n) {
    s.motors[0].voltage = 1.0;
    checkedStep(sim, s);
    largest = std::max(largest,
                       std::abs(s.joints[0].speed - max_speed * (1.0 - std::exp(-s.time_s / T))));
  }
  EXPECT_LE(largest, tol(1e-6));
  EXPECT_NEAR(s.joints[0].speed, max_speed, 1e-3 * max_speed);
  // Reversed, the limit holds the other way.
  for (int n = 0; n < 2000; ++n) {
    s.motors[0].voltage = -1.0;
    checkedStep(sim, s);
  }
  EXPECT_NEAR(s.joints[0].speed, -max_speed, 1e-3 * max_speed);
}

// Limits must be positive, and act on the passport characteristic only.
TEST(MotorLimits, ModelRejectsBadLimits) {
  Model model = samples::wg7152(1.0, 0.01);
  model.motors[0].max_torque = 0.0;
  EXPECT_THROW(Simulator{model}, std::invalid_argument);
  model.motors[0].max_torque = 1.0;
  model.motors[0].max_speed = -1.0;
  EXPECT_THROW(Simulator{model}, std::invalid_argument);
  model.motors[0].max_speed = 1.0;
  EXPECT_NO_THROW(Simulator{model});
  model.motors[0].drive = DriveDef{};
  EXPECT_THROW(Simulator{model}, std::invalid_argument);
}

}  // namespace
}  // namespace sim::dynamics
