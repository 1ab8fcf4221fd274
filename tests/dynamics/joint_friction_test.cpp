// Joint friction (dynamics/src/joint_friction.cpp) in the solver: a breakaway torque holds below it
// and slips above, viscous damping decays a swing.
#include <dynamics/samples.h>
#include <dynamics/simulator.h>

#include <cmath>

#include <gtest/gtest.h>

#include "fixture.h"

namespace sim::dynamics {
namespace {

TEST(JointFriction, BreakawayHoldsBelowAndSlipsAbove) {
  auto finalAngle = [](double breakaway) {
    Model m = samples::pendulum(1.0, 0.5, 1e-3);
    m.joints[0].friction.breakaway = breakaway;
    Simulator sim(std::move(m));
    State s = sim.initialState();
    checkedSteps(sim, s, 2000);
    return s.joints[0].position;
  };
  const double gravity_torque = 9.81 * std::sin(0.5);         // 4.70 N m at release
  EXPECT_NEAR(finalAngle(gravity_torque * 1.05), 0.5, 1e-6);  // held
  EXPECT_LT(finalAngle(gravity_torque * 0.9), 0.45);          // slips
}

TEST(JointFriction, ViscousDampingDecaysTheSwing) {
  Model m = samples::pendulum(1.0, 0.3, 1e-3);
  m.joints[0].friction.viscous = 2.0;  // N m s/rad on I = 1 kg m^2: decay time 1 s
  Simulator sim(std::move(m));
  State s = sim.initialState();
  checkedSteps(sim, s, 6000);
  EXPECT_LT(std::abs(s.joints[0].position), 0.3 * std::exp(-5.0) * 1.5);
}

}  // namespace
}  // namespace sim::dynamics
