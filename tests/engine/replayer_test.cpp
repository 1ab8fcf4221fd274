// Replaying with seeking (engine/replayer.h): the state after seeking to any step, backwards or
// forwards, hashes as the recording says it was then, also across recorded faults and parameter
// changes; the replay loop's pause, one-frame step, seek and speed keys; a damaged recording is
// replayed to its last complete frame.
#include <engine/recording.h>
#include <engine/replayer.h>
#include <engine/scenario.h>

#include <gtest/gtest.h>

#include "replay_check.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace sim::engine {
namespace {

const std::string kDir = std::string(SIMTRAINER_SOURCE_DIR) + "/tests/engine/data";

// The servo of the sensor-fault tests with noise, a dropout that holds a reading, a cleared fault
// and a parameter change (the motor's stall torque halved): every kind of event a seek must undo.
Recording recordEventfulServo(const std::string& tag) {
  const Scenario scenario = loadScenarioFromString(
      "scene: sensor_servo.yaml\nduration: 6\nfaults:\n"
      "  - {at: 0.5, signal: joint.hinge.position, fault: noise, value: 0.01}\n"
      "  - {at: 1.7, signal: joint.hinge.position, fault: dropout}\n"
      "  - {at: 3.1, signal: joint.hinge.position, fault: none}\n"
      "  - {at: 4.0, motor: drive, fault: weak, value: 0.5}\n"
      "changes:\n  - {at: 2.5, set: motors.drive.Mp, value: 8}\n"
      "expect:\n  - {signal: time, min: 5.99}\n",
      kDir + "/inline.scenario.yaml");
  const std::string rec = testing::tempRecording(tag);
  PlayOptions options;
  options.record_path = rec;
  playScenario(scenario, options);
  Recording recording = readRecording(rec);
  std::remove(rec.c_str());
  return recording;
}

std::uint64_t recordedHash(const Recording& r, std::uint64_t step, std::uint64_t initial) {
  return step == 0 ? initial : r.hashes.at(step - 1);
}

TEST(Replayer, SeekingAnywhereGivesTheRecordedStateAcrossFaultsAndChanges) {
  const Recording recording = recordEventfulServo("seek");
  ASSERT_EQ(recording.changes.size(), 1u);
  ASSERT_EQ(recording.sensor_faults.size(), 3u);
  ASSERT_EQ(recording.faults.size(), 1u);
  Replayer replayer(recording, 1.0);  // a saved point every second (100 steps)
  const std::uint64_t initial = replayer.session().hash();
  const std::uint64_t end = replayer.steps();
  ASSERT_EQ(end, 600u);
  // Forward to the end once (the saved points are made on the way), then jump about: before and
  // after each event, on and between saved points, backwards and forwards.
  const std::vector<std::uint64_t> targets = {end, 10,  333, 180, 251, 249, 599,
                                              0,   401, 100, 399, 600, 1};
  for (const std::uint64_t target : targets) {
    replayer.seek(target);
    ASSERT_EQ(replayer.step(), target);
    EXPECT_EQ(replayer.session().hash(), recordedHash(recording, target, initial))
        << "at step " << target;
  }
  EXPECT_GE(replayer.savedPoints(), 6u);
  // And onwards step by step from a point reached by seeking back: still the recorded run.
  replayer.seek(240);
  while (!replayer.atEnd()) {
    replayer.stepOnce();
    ASSERT_TRUE(replayer.matches()) << "diverged at step " << replayer.step();
  }
}

// A stuck pult axis (the grasp's lift, stuck at +0.6 over [0.5, 1.5) s while the timeline
// commands -0.4): seeking into, out of and across the fault gives the recorded states.
TEST(Replayer, SeekingAcrossAStuckPultAxisGivesTheRecordedStates) {
  const Scenario scenario = loadScenarioFromString(
      std::string("scene: ") + SIMTRAINER_SOURCE_DIR +
          "/scenes/grasp.yaml\nduration: 2.5\n"
          "timeline:\n  - {at: 0, control: lift, set: -0.4}\n"
          "faults:\n  - {at: 0.5, control: lift, fault: axis_stuck, value: 0.6}\n"
          "  - {at: 1.5, control: lift, fault: none}\n"
          "expect:\n  - {signal: time, min: 2.49}\n",
      kDir + "/inline.scenario.yaml");
  const std::string rec = testing::tempRecording("stuck");
  PlayOptions options;
  options.record_path = rec;
  playScenario(scenario, options);
  const Recording recording = readRecording(rec);
  std::remove(rec.c_str());
  ASSERT_EQ(recording.control_faults.size(), 2u);
  Replayer replayer(recording, 0.25);
  const std::uint64_t initial = replayer.session().hash();
  const std::uint64_t end = replayer.steps();
  for (const std::uint64_t target : {end, end / 2, 10ul, end - 1, end / 3, 3 * end / 4, 0ul, end}) {
    replayer.seek(target);
    EXPECT_EQ(replayer.session().hash(), recordedHash(recording, target, initial))
        << "at step " << target;
  }
}

// A seek that did not undo the parameter change or the faults would be caught: the same seek in
// a replayer whose restore skipped them gives other hashes. Shown by the recording itself: the
// states before and after each event differ, so a wrong restore cannot hash as recorded.
TEST(Replayer, EventsChangeTheStateSoASeekThatIgnoredThemWouldShow) {
  const Recording recording = recordEventfulServo("events");
  Replayer with_events(recording, 1.0);
  Recording without = recording;
  without.changes.clear();
  without.sensor_faults.clear();
  without.faults.clear();
  Replayer plain(without, 1.0);
  with_events.seek(599);
  plain.seek(599);
  EXPECT_NE(with_events.session().hash(), plain.session().hash());
  EXPECT_TRUE(with_events.matches());
  EXPECT_FALSE(plain.matches());
}

// The replay loop: F9 pauses (time stands), F10 runs one frame, a seek of -0.5 s goes back
// exactly, + doubles the speed (twice the steps per frame), and the run stops at the end.
TEST(Replayer, PauseStepSeekAndSpeedKeys) {
  const Recording recording = recordEventfulServo("keys");
  Replayer replayer(recording, 1.0);
  const std::uint64_t initial = replayer.session().hash();
  OperatorQueue queue;
  ReplayPlayOptions options;
  options.realtime = false;
  options.operator_events = &queue;
  std::vector<std::uint64_t> steps;  // after each frame
  options.before_frame = [&](std::uint64_t frame) {
    const auto push = [&](OperatorEvent::Kind kind, double value = 0.0) {
      OperatorEvent e;
      e.kind = kind;
      e.value = value;
      queue.push(e);
    };
    if (frame == 10) push(OperatorEvent::Kind::TogglePause);
    if (frame == 15) push(OperatorEvent::Kind::StepFrame);
    if (frame == 20) push(OperatorEvent::Kind::TogglePause);
    if (frame == 40) push(OperatorEvent::Kind::SeekBy, -0.5);
    if (frame == 50) push(OperatorEvent::Kind::Faster);
  };
  bool every_seek_matched = true;
  options.after_frame = [&](const Session& session, const RunResult&,
                            const std::vector<std::string>&) {
    steps.push_back(session.stepIndex());
    every_seek_matched = every_seek_matched &&
                         session.hash() == recordedHash(recording, session.stepIndex(), initial);
    return true;
  };
  const RunResult result = playRecording(replayer, options);
  // sensor_servo: 0.01 s steps, 60 Hz frames -> 2 steps per frame.
  ASSERT_GE(steps.size(), 50u);
  EXPECT_EQ(steps[9], 20u);
  EXPECT_EQ(steps[10], 20u) << "paused";
  EXPECT_EQ(steps[14], 20u);
  EXPECT_EQ(steps[15], 22u) << "one frame";
  EXPECT_EQ(steps[19], 22u);
  EXPECT_EQ(steps[20], 24u) << "running again";
  EXPECT_EQ(steps[39], 62u);
  EXPECT_EQ(steps[40], 14u) << "0.5 s (50 steps) back from 62, then a frame";
  EXPECT_EQ(steps[49], 32u);
  EXPECT_EQ(steps[50], 36u) << "twice the speed: 4 steps a frame";
  EXPECT_TRUE(every_seek_matched);
  EXPECT_EQ(replayer.step(), replayer.steps()) << "played to the end";
  EXPECT_EQ(result.frames, steps.size());
}

// A recording damaged in the middle is read up to its last complete frame before the damage and
// replays there exactly; the strict reader names the file and line.
TEST(Replayer, ADamagedRecordingReplaysToItsLastCompleteFrame) {
  const std::string rec = testing::tempRecording("damaged");
  const Scenario scenario = loadScenarioFromString(
      "scene: sensor_servo.yaml\nduration: 6\nexpect:\n  - {signal: time, min: 5.99}\n",
      kDir + "/inline.scenario.yaml");
  PlayOptions options;
  options.record_path = rec;
  playScenario(scenario, options);
  std::stringstream text;
  {
    std::ifstream in(rec);
    text << in.rdbuf();
  }
  std::string damaged = text.str();  // the hash of step 301 made unreadable
  const std::size_t at = damaged.find("\nh 301 ");
  ASSERT_NE(at, std::string::npos);
  damaged.replace(at + 7, 4, "zz!?");
  const std::size_t line =
      static_cast<std::size_t>(std::count(
          damaged.begin(), damaged.begin() + static_cast<std::ptrdiff_t>(at) + 1, '\n')) +
      1;
  {
    std::ofstream out(rec, std::ios::binary | std::ios::trunc);
    out << damaged;
  }
  try {
    readRecording(rec);
    FAIL() << "a damaged recording read strictly";
  } catch (const RecordingError& e) {
    EXPECT_NE(std::string(e.what()).find(rec + ":" + std::to_string(line) + ":"), std::string::npos)
        << e.what();
  }
  const Recording cut = readRecording(rec, RecordingRead::UpToDamage);
  std::remove(rec.c_str());
  EXPECT_EQ(cut.hashes.size(), 300u)
      << "the last frame that ended before step 301 (2 steps a frame)";
  EXPECT_NE(cut.damage.find(":" + std::to_string(line) + ":"), std::string::npos) << cut.damage;
  EXPECT_FALSE(cut.complete);
  Replayer replayer(cut);
  while (!replayer.atEnd()) {
    replayer.stepOnce();
    ASSERT_TRUE(replayer.matches()) << "diverged at step " << replayer.step();
  }
  EXPECT_EQ(replayer.step(), 300u);
}

}  // namespace
}  // namespace sim::engine
