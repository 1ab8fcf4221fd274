// Parameter changes while a session runs (Session::changeScene, engine/session.h): the scene is
// loaded again with one more override and the session goes on from its state. Checked against
// the analytic WG-7152 solution (SPEC §2.4) and against a session loaded with the override from
// the start; structure changes are refused with the reason; a recorded change replays.
#include <engine/recording.h>
#include <engine/run.h>
#include <engine/scenario.h>
#include <engine/scene.h>
#include <engine/session.h>

#include <gtest/gtest.h>

#include "replay_check.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <string>

namespace {

using sim::engine::loadScene;
using sim::engine::parseOverride;
using sim::engine::Session;

const std::string kScene = std::string(SIMTRAINER_SOURCE_DIR) + "/scenes/wg7152.yaml";

// At step 0 the change is the same as loading with the override: bit-identical states after.
TEST(ParameterChange, AtTheStartEqualsLoadingWithTheOverride) {
  Session changed(loadScene(kScene));
  ASSERT_EQ(changed.changeScene(loadScene(kScene, {parseOverride("motors.drive.Mp=0.3")})), "");
  Session loaded(loadScene(kScene, {parseOverride("motors.drive.Mp=0.3")}));
  for (int i = 0; i < 300; ++i) {
    changed.step();
    loaded.step();
  }
  EXPECT_EQ(changed.hash(), loaded.hash());
  EXPECT_EQ(changed.scene().overrides.size(), 1u);
}

// Mid-run: the link runs at w_xx / r = 0.1026 rad/s; doubling the no-load speed (98 rpm) takes it
// to 0.2052 rad/s along the analytic first-order response from its current speed,
// w(t) = w_inf + (w_0 - w_inf) exp(-t / T), T = (I_L + r^2 I_m) w_xx / (r^2 Mp) with the new
// w_xx and I_m = Mp t_m / w_xx. Tolerance 1e-6 rad/s, the accuracy of tests/dynamics' pin.
TEST(ParameterChange, MidRunFollowsTheAnalyticResponseOfTheNewMotor) {
  Session s(loadScene(kScene));
  while (s.time() < 10.0 - 1e-9) s.step();
  const double w0 = s.dynamics().joints[0].speed;
  const double t0 = s.time();
  ASSERT_EQ(s.changeScene(loadScene(kScene, {parseOverride("motors.drive.w_xx_rpm=98")})), "");
  const sim::dynamics::MotorDef& mo = s.scene().model.motors[0];
  const double w_xx = 98.0 * std::numbers::pi / 30.0;
  ASSERT_NEAR(mo.no_load_speed_radps, w_xx, 1e-12);
  const double r = mo.gear_ratio;
  const double T = (30.833 + r * r * mo.rotorInertia()) * w_xx / (r * r * mo.stall_torque_Nm);
  const double w_inf = w_xx / r;
  double worst = 0.0;
  while (s.time() < 15.0 - 1e-9) {
    s.step();
    const double analytic = w_inf + (w0 - w_inf) * std::exp(-(s.time() - t0) / T);
    worst = std::max(worst, std::abs(s.dynamics().joints[0].speed - analytic));
  }
  EXPECT_LT(worst, 1e-6);
  EXPECT_GT(s.dynamics().joints[0].speed, 0.19);
}

TEST(ParameterChange, StructureChangesAreRefusedWithTheReason) {
  Session s(loadScene(kScene));
  for (int i = 0; i < 10; ++i) s.step();
  const std::uint64_t before = s.hash();
  EXPECT_NE(
      s.changeScene(loadScene(kScene, {parseOverride("solver.time_step=0.005")})).find("time step"),
      std::string::npos);
  EXPECT_NE(
      s.changeScene(loadScene(kScene, {parseOverride("frame_rate=25")})).find("steps per frame"),
      std::string::npos);
  const std::string other = std::string(SIMTRAINER_SOURCE_DIR) + "/scenes/grasp.yaml";
  EXPECT_NE(s.changeScene(loadScene(other)).find("bodies"), std::string::npos);
  EXPECT_EQ(s.hash(), before) << "a refused change leaves the session as it was";
  EXPECT_TRUE(s.scene().overrides.empty());
}

// A change recorded as a `c` line replays bit for bit, and diverges at its step without it.
TEST(ParameterChange, RecordedChangeReplays) {
  const std::string rec = sim::engine::testing::tempRecording("change");
  sim::engine::RunOptions options;
  options.duration_s = 3.0;
  options.record_path = rec;
  std::uint64_t frame = 0;
  options.before_steps = [&frame](Session& session) {
    if (frame++ == 60) {
      ASSERT_EQ(session.changeScene(loadScene(kScene, {parseOverride("motors.drive.b=0.5")})), "");
    }
  };
  const sim::engine::RunResult run = sim::engine::runHeadless(loadScene(kScene), options);
  const sim::engine::Recording r = sim::engine::readRecording(rec);
  ASSERT_EQ(r.changes.size(), 1u);
  const std::uint64_t step = r.changes.begin()->first;
  EXPECT_EQ(r.changes.begin()->second.at(0).path, "motors.drive.b");
  sim::engine::testing::expectReplayNeedsLines(rec, "c ", step, run.final_state);
}

// A scenario's `changes:`: doubling the no-load speed at 2 s lifts the link's speed from
// at most 0.1026 rad/s towards 0.2052 rad/s (by 12 s within 0.1 % of it: T = 1.63 s with t_m = 1
// s); the recorded run replays. A bad change is an error naming its line.
TEST(ParameterChange, ScenarioChangesApplyAtTheirTimeAndReplay) {
  const std::string file = std::string(SIMTRAINER_SOURCE_DIR) + "/scenes/inline.scenario.yaml";
  const sim::engine::Scenario scenario = sim::engine::loadScenarioFromString(
      "scene: wg7152.yaml\nduration: 12\nchanges:\n  - {at: 2.0, set: motors.drive.w_xx_rpm, "
      "value: 98}\n"
      "expect:\n  - {signal: joint.hinge.speed, at: 1.99, max: 0.1027}\n"
      "  - {signal: joint.hinge.speed, min: 0.201, max: 0.2053}\n",
      file);
  ASSERT_EQ(scenario.changes.size(), 1u);
  const std::string rec = sim::engine::testing::tempRecording("change_scenario");
  sim::engine::PlayOptions options;
  options.record_path = rec;
  const sim::engine::ScenarioResult result = sim::engine::playScenario(scenario, options);
  for (const auto& e : result.expectations) EXPECT_TRUE(e.passed) << e.name << ": " << e.detail;
  const sim::engine::Recording r = sim::engine::readRecording(rec);
  std::remove(rec.c_str());
  ASSERT_EQ(r.changes.size(), 1u);
  EXPECT_NEAR(static_cast<double>(r.changes.begin()->first) * 0.01, 2.0, 0.01);
  const sim::engine::ReplayResult replayed = sim::engine::replay(r, true);
  EXPECT_FALSE(replayed.diverged) << "diverged at step " << replayed.diverged_step;

  auto error = [&](const std::string& change) {
    try {
      sim::engine::loadScenarioFromString("scene: wg7152.yaml\nduration: 1\nchanges:\n  - " +
                                              change + "\nexpect:\n  - {signal: time, min: 0.99}\n",
                                          file);
    } catch (const sim::engine::SceneError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string unknown = error("{at: 1, set: motors.nosuch.Mp, value: 1}");
  EXPECT_NE(unknown.find(":4"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("nosuch"), std::string::npos) << unknown;
  const std::string structure = error("{at: 1, set: solver.time_step, value: 0.005}");
  EXPECT_NE(structure.find(":4"), std::string::npos) << structure;
  EXPECT_NE(structure.find("time step"), std::string::npos) << structure;
  EXPECT_NE(error("{at: 1, set: motors.drive.Mp, value: x}").find("expected a number"),
            std::string::npos);
}

}  // namespace
