// Motor faults (engine/session.h): a faulted drive must move exactly as a healthy drive given the
// faulted voltage (the second method here: the same scene with that constant voltage), and the
// session keeps showing the commanded voltage (the fault does not compound from step to step).
#include <engine/recording.h>
#include <engine/scenario.h>
#include <engine/scene.h>
#include <engine/session.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
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

// A scenario's `faults:` reach the session at their time and the recording, which replays.
TEST(MotorFault, ScenarioFaultsAreRecordedAndReplay) {
  const std::string file = std::string(SIMTRAINER_SOURCE_DIR) + "/scenes/inline.scenario.yaml";
  const sim::engine::Scenario scenario = sim::engine::loadScenarioFromString(
      "scene: wg7152.yaml\nduration: 1\nfaults:\n  - {at: 0.25, motor: drive, fault: reversed}\n"
      "  - {at: 0.5, motor: drive, fault: weak, value: 0.25}\nexpect:\n"
      "  - {signal: time, min: 0.99}\n",
      file);
  ASSERT_EQ(scenario.faults.size(), 2u);
  const std::string rec = (std::filesystem::temp_directory_path() /
                           ("simtrainer_fault_" + std::to_string(::getpid()) + ".rec")).string();
  sim::engine::PlayOptions options;
  options.record_path = rec;
  sim::engine::playScenario(scenario, options);
  const sim::engine::Recording r = sim::engine::readRecording(rec);
  std::remove(rec.c_str());
  const double h = scenario.scene.model.solver.time_step_s;
  ASSERT_EQ(r.faults.size(), 2u);
  // The first step at or after t = 0.25 s (steps are sums of h: allow the 1e-9 s of rounding).
  EXPECT_NEAR(static_cast<double>(r.faults.begin()->first) * h, 0.25, h);
  EXPECT_EQ(r.faults.begin()->second.at(0).second.kind, MotorFault::Kind::Reversed);
  EXPECT_EQ(r.faults.rbegin()->second.at(0).second.value, 0.25);
  const sim::engine::ReplayResult replayed = sim::engine::replay(r, true);
  EXPECT_FALSE(replayed.diverged) << "diverged at step " << replayed.diverged_step;
}

TEST(MotorFault, ScenarioFaultOfAnUnknownMotorNamesTheLine) {
  const std::string file = std::string(SIMTRAINER_SOURCE_DIR) + "/scenes/inline.scenario.yaml";
  try {
    sim::engine::loadScenarioFromString(
        "scene: wg7152.yaml\nduration: 1\nfaults:\n  - {at: 0.25, motor: nosuch, fault: stuck}\n"
        "expect:\n  - {signal: time, min: 0.99}\n",
        file);
    FAIL() << "no error";
  } catch (const sim::engine::SceneError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(":4"), std::string::npos) << what;
    EXPECT_NE(what.find("nosuch"), std::string::npos) << what;
  }
}

}  // namespace
