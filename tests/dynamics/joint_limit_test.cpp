// Joint limits (dynamics/src/joint_limit.cpp): a hinge stops at its limit and a pendulum rests on
// it under gravity.
#include <dynamics/samples.h>
#include <dynamics/simulator.h>

#include <cmath>
#include <numbers>

#include <gtest/gtest.h>

#include "fixture.h"

namespace sim::dynamics {
namespace {

constexpr double kPi = std::numbers::pi;

TEST(Limits, HingeStopsAtItsLimit) {
  Model m = samples::pendulum(1.0, kPi / 2.0, 1e-3);  // released horizontal
  m.joints[0].limit_enabled = true;
  m.joints[0].lower_limit = -0.3;
  m.joints[0].upper_limit = 0.3;
  Simulator sim(std::move(m));
  State s = sim.initialState();
  EXPECT_NEAR(s.joints[0].position, kPi / 2.0, 1e-12);  // starts beyond its upper limit
  checkedSteps(sim, s, 3000);
  // Pushed back inside and resting on the lower limit (gravity pulls toward 0, it swings and
  // settles against nothing: it must stay within the limits once inside).
  double lo = 1e9, hi = -1e9;
  for (int n = 0; n < 3000; ++n) {
    checkedStep(sim, s);
    lo = std::min(lo, s.joints[0].position);
    hi = std::max(hi, s.joints[0].position);
  }
  EXPECT_GE(lo, -0.3 - 1e-3);
  EXPECT_LE(hi, 0.3 + 1e-3);
}

TEST(Limits, PendulumRestsOnLimitUnderGravity) {
  Model m = samples::pendulum(1.0, 0.0, 1e-3);
  m.joints[0].limit_enabled = true;  // hanging straight down is outside [0.5, 1.0]
  m.joints[0].lower_limit = 0.5;
  m.joints[0].upper_limit = 1.0;
  Simulator sim(std::move(m));
  State s = sim.initialState();
  checkedSteps(sim, s, 4000);
  // Gravity pulls it to the lower limit where it rests; split impulses leave < 1e-4 rad.
  EXPECT_NEAR(s.joints[0].position, 0.5, 1e-4);
  EXPECT_NEAR(s.joints[0].speed, 0.0, 1e-3);
  // The limit carries the gravity torque m g L sin(0.5).
  const JointReaction r = sim.jointReaction(s, 0);
  EXPECT_NEAR(std::abs(r.axis_force), 9.81 * std::sin(0.5), 0.02);
}

}  // namespace
}  // namespace sim::dynamics
