// Pult control faults (engine/session.h ControlFault): a stuck axis shows its held value whatever
// the operator, a station or the timeline sets. Second method: a scenario whose `faults:` stick
// the lift axis must run bit for bit as the same scenario whose timeline sets that value at the
// same times; recordings carry the fault as `a` lines and replay bit for bit, with or without
// them (the pult lines carry the held value, so recordings from before `a` lines still replay).
// Scene: scenes/grasp.yaml (axis `lift` -> dead zone -> the lift motor).
#include <engine/recording.h>
#include <engine/scenario.h>
#include <engine/scene.h>
#include <engine/session.h>

#include <gtest/gtest.h>

#include "replay_check.h"

#include <cstdio>
#include <fstream>
#include <string>

namespace {

using sim::engine::ControlFault;
using sim::engine::Session;

const std::string kScenes = std::string(SIMTRAINER_SOURCE_DIR) + "/scenes";

sim::engine::Scenario scenario(const std::string& faults, const std::string& timeline) {
  return sim::engine::loadScenarioFromString("scene: grasp.yaml\nduration: 2.5\n" + faults +
                                                 "timeline:\n" + timeline +
                                                 "expect:\n  - {signal: time, min: 2.49}\n",
                                             kScenes + "/inline.scenario.yaml");
}

int liftControl(const Session& s) {
  return s.scene().pult.find("lift");
}

TEST(ControlFault, StuckAxisIgnoresSetsAndNeutralUntilCleared) {
  Session s(sim::engine::loadScene(kScenes + "/grasp.yaml"));
  const int lift = liftControl(s);
  ASSERT_GE(lift, 0);
  s.setControl(lift, 0.3);
  s.setControlFault(lift, {ControlFault::Kind::AxisStuck, 2.0});  // admitted: the axis ends at 1
  EXPECT_EQ(s.state().pult.values[static_cast<std::size_t>(lift)], 1.0);
  EXPECT_EQ(s.controlFaults()[static_cast<std::size_t>(lift)].value, 1.0);
  s.setControl(lift, -0.5);
  EXPECT_EQ(s.state().pult.values[static_cast<std::size_t>(lift)], 1.0);
  s.neutralPult();
  EXPECT_EQ(s.state().pult.values[static_cast<std::size_t>(lift)], 1.0);
  const sim::engine::SessionState saved = s.state();
  s.restore(saved);
  EXPECT_EQ(s.state().pult.values[static_cast<std::size_t>(lift)], 1.0);
  s.setControlFault(lift, {});
  EXPECT_EQ(s.state().pult.values[static_cast<std::size_t>(lift)], 1.0)
      << "cleared: stays until set";
  s.setControl(lift, -0.5);
  EXPECT_EQ(s.state().pult.values[static_cast<std::size_t>(lift)], -0.5);
}

// The lift axis is commanded down (-0.4) all along; stuck at +0.6 over [0.5, 1.5) s it lifts. The
// same run with the timeline setting 0.6 at 0.5 s and -0.4 at 1.5 s must give the same bits.
TEST(ControlFault, ScenarioAxisStuckRunsAsTheHeldValueOnTheTimeline) {
  const auto faulted = scenario(
      "faults:\n  - {at: 0.5, control: lift, fault: axis_stuck, value: 0.6}\n"
      "  - {at: 1.5, control: lift, fault: none}\n",
      "  - {at: 0, control: lift, set: -0.4}\n");
  ASSERT_EQ(faulted.faults.size(), 2u);
  EXPECT_EQ(faulted.faults[0].control, faulted.scene.pult.find("lift"));
  const auto scripted = scenario("",
                                 "  - {at: 0, control: lift, set: -0.4}\n"
                                 "  - {at: 0.5, control: lift, set: 0.6}\n"
                                 "  - {at: 1.5, control: lift, set: -0.4}\n");
  const auto healthy = scenario("", "  - {at: 0, control: lift, set: -0.4}\n");
  const sim::engine::ScenarioResult a = sim::engine::playScenario(faulted);
  const sim::engine::ScenarioResult b = sim::engine::playScenario(scripted);
  const sim::engine::ScenarioResult c = sim::engine::playScenario(healthy);
  ASSERT_TRUE(a.passed()) << a.failureSummary();
  EXPECT_EQ(a.final_hash, b.final_hash);
  EXPECT_EQ(a.run.final_state, b.run.final_state);
  EXPECT_NE(a.final_hash, c.final_hash) << "the fault must change the run";
}

// Without `value` the axis holds what it shows when the fault strikes: -0.4 here, although the
// timeline moves it to 0.8 at 1.0 s. Equal to a timeline that never moves it before 2.0 s.
TEST(ControlFault, ScenarioAxisStuckWithoutValueHoldsTheCurrentValue) {
  const auto faulted = scenario(
      "faults:\n  - {at: 0.5, control: lift, fault: axis_stuck}\n  - {at: 2.0, control: lift, "
      "fault: none}\n",
      "  - {at: 0, control: lift, set: -0.4}\n  - {at: 1.0, control: lift, set: 0.8}\n");
  const auto scripted = scenario(
      "", "  - {at: 0, control: lift, set: -0.4}\n  - {at: 2.0, control: lift, set: 0.8}\n");
  EXPECT_EQ(sim::engine::playScenario(faulted).final_hash,
            sim::engine::playScenario(scripted).final_hash);
}

TEST(ControlFault, RecordedAsALinesAndReplayedBitIdentically) {
  const auto faulted = scenario(
      "faults:\n  - {at: 0.5, control: lift, fault: axis_stuck, value: 0.6}\n"
      "  - {at: 1.5, control: lift, fault: none}\n",
      "  - {at: 0, control: lift, set: -0.4}\n");
  const std::string rec = sim::engine::testing::tempRecording("control_fault");
  sim::engine::PlayOptions options;
  options.record_path = rec;
  const sim::engine::ScenarioResult played = sim::engine::playScenario(faulted, options);
  const sim::engine::Recording r = sim::engine::readRecording(rec);
  ASSERT_EQ(r.control_faults.size(), 2u);
  const double dt = faulted.scene.model.solver.time_step_s;
  auto it = r.control_faults.begin();
  EXPECT_NEAR(static_cast<double>(it->first) * dt, 0.5, 1e-9);
  EXPECT_EQ(it->second.at(0).first, faulted.scene.pult.find("lift"));
  EXPECT_EQ(it->second.at(0).second.kind, ControlFault::Kind::AxisStuck);
  EXPECT_EQ(it->second.at(0).second.value, 0.6);
  ++it;
  EXPECT_EQ(it->second.at(0).second.kind, ControlFault::Kind::None);
  const sim::engine::ReplayResult replayed = sim::engine::replay(r, true);
  EXPECT_FALSE(replayed.diverged) << "diverged at step " << replayed.diverged_step;
  EXPECT_EQ(replayed.final_state, played.run.final_state);
  // A recording without `a` lines (an older file) still reads and replays: its pult lines carry
  // the held value.
  const std::string old_format = rec + ".old";
  {
    std::ifstream in(rec);
    std::ofstream out(old_format);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("a ", 0) != 0) out << line << '\n';
  }
  const sim::engine::Recording old = sim::engine::readRecording(old_format);
  EXPECT_TRUE(old.control_faults.empty());
  const sim::engine::ReplayResult old_replayed = sim::engine::replay(old, true);
  EXPECT_FALSE(old_replayed.diverged) << "diverged at step " << old_replayed.diverged_step;
  std::remove(rec.c_str());
  std::remove(old_format.c_str());
}

void expectScenarioError(const std::string& fault, const std::string& needle) {
  sim::engine::testing::expectFaultError(kScenes, "grasp.yaml", fault, needle);
}

TEST(ControlFault, ScenarioErrorsNameTheFileAndLine) {
  expectScenarioError("{at: 0.5, control: nosuch, fault: axis_stuck}", "nosuch");
  expectScenarioError("{at: 0.5, control: lift, fault: stuck}", "axis_stuck or none");
  expectScenarioError("{at: 0.5, control: lift, fault: axis_stuck, value: 1.5}", "cannot show 1.5");
  expectScenarioError("{at: 0.5, control: grip, fault: axis_stuck, value: 0.5}", "cannot show 0.5");
  expectScenarioError("{at: 0.5, control: lift, fault: none, value: 0.5}", "only axis_stuck");
  expectScenarioError("{at: 0.5, control: lift, motor: lift, fault: axis_stuck}",
                      "one of motor, signal or control");
}

}  // namespace
