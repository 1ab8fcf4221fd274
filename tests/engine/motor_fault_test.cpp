// Motor faults (engine/session.h): a faulted drive must move exactly as a healthy drive given the
// faulted voltage (the second method here: the same scene with that constant voltage), and the
// session keeps showing the commanded voltage (the fault does not compound from step to step).
#include <engine/scene.h>
#include <engine/session.h>

#include <gtest/gtest.h>

#include <string>

namespace {

using sim::engine::MotorFault;
using sim::engine::Session;

const std::string kScene = std::string(SIMTRAINER_SOURCE_DIR) + "/scenes/wg7152.yaml";

Session withVoltage(double u) {
  return Session(sim::engine::loadScene(kScene, {sim::engine::parseOverride("motors.drive.u=" + std::to_string(u))}));
}

// Both sessions run 600 steps; the joint and rotor must agree bit for bit (the solver sees the
// same voltage on every step, so any difference would be a fault applied differently).
void expectSameMotion(Session& faulted, Session& reference) {
  for (int i = 0; i < 600; ++i) {
    faulted.step();
    reference.step();
  }
  EXPECT_EQ(faulted.dynamics().joints[0].position, reference.dynamics().joints[0].position);
  EXPECT_EQ(faulted.dynamics().motors[0].speed_radps, reference.dynamics().motors[0].speed_radps);
  EXPECT_NE(faulted.dynamics().joints[0].position, 0.0);
}

TEST(MotorFault, ReversedMovesAsTheNegatedVoltage) {
  Session faulted = withVoltage(1.0);
  faulted.setMotorFault(0, {MotorFault::Kind::Reversed, 0.0});
  Session reference = withVoltage(-1.0);
  expectSameMotion(faulted, reference);
  EXPECT_EQ(faulted.dynamics().motors[0].voltage, 1.0) << "the state keeps the commanded voltage";
}

TEST(MotorFault, WeakMovesAsTheScaledVoltageWithoutCompounding) {
  Session faulted = withVoltage(0.8);
  faulted.setMotorFault(0, {MotorFault::Kind::Weak, 0.5});
  Session reference = withVoltage(0.4);
  expectSameMotion(faulted, reference);
  EXPECT_EQ(faulted.dynamics().motors[0].voltage, 0.8);
}

TEST(MotorFault, StuckHoldsItsVoltageAndClearingRestoresTheCommand) {
  Session faulted = withVoltage(1.0);
  faulted.setMotorFault(0, {MotorFault::Kind::Stuck, 0.25});
  Session reference = withVoltage(0.25);
  expectSameMotion(faulted, reference);
  // Healthy again: from the same state, the faulted session now follows the command (1.0).
  faulted.setMotorFault(0, {});
  Session healthy = withVoltage(1.0);
  healthy.restore(faulted.state());
  for (int i = 0; i < 100; ++i) {
    faulted.step();
    healthy.step();
  }
  EXPECT_EQ(faulted.hash(), healthy.hash());
}

}  // namespace
