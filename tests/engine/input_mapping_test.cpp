// Input mapping files (parsing and their located errors) and the engine's run loop driven by an
// SDL virtual joystick: pult -> scheme -> motor voltages, hot unplug and replug mid-run, and the
// recorded session replaying bit-identically with no device present.
#include <engine/input_mapping.h>
#include <engine/recording.h>
#include <engine/run.h>
#include <engine/scenario.h>
#include <engine/scene.h>
#include <input/input_system.h>
#include <input/names.h>

#include "../input/virtual_device.h"

#include <SDL.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

namespace sim::engine {
namespace {

const std::string kSourceDir = SIMTRAINER_SOURCE_DIR;

PultDef testPult() {
  PultDef p;
  p.controls = {{"lift", ControlKind::Axis, -1.0, 1.0, 0.0, 2},
                {"grip", ControlKind::Button, -1.0, 1.0, 0.0, 2},
                {"lights", ControlKind::Toggle, -1.0, 1.0, 0.0, 2},
                {"gear", ControlKind::Switch, -1.0, 1.0, 0.0, 3}};
  return p;
}

TEST(InputMapping, ReadsEveryKindOfBinding) {
  const std::string yaml = R"(
devices:
  - {name: pad, type: gamepad}
  - {name: panel, type: joystick, product: "Desk Panel", guid: 03000000AAAA0000BBBB000000000000}
calibration:
  - guid: 03000000aaaa0000bbbb000000000000
    axes:
      - {axis: 2, min: -30000, centre: 100, max: 31000}
bindings:
  - {control: lift, device: pad, axis: lefty, dead_zone: 0.1, expo: 0.4, invert: true}
  - {control: lift, keys: [Down, Up], rate: 1.5}
  - control: lift
    negative: {device: panel, hat: 0, direction: down}
    positive: {device: pad, button: dpup}
    hold: true
  - {control: grip, device: pad, axis: righttrigger, threshold: 0.3}
  - {control: grip, key: Space}
  - {control: lights, device: panel, button: 4, action: hold}
  - {control: gear, device: panel, button: 5, position: 2}
  - {control: gear, key: PageDown, step: -1}
  - {control: gear, device: panel, axis: 3}
)";
  const input::Mapping m = loadInputMappingFromString(yaml, "m.yaml", testPult());
  ASSERT_EQ(m.devices.size(), 2u);
  EXPECT_EQ(m.devices[1].kind, input::DeviceKind::Joystick);
  EXPECT_EQ(m.devices[1].name, "Desk Panel");
  EXPECT_EQ(m.devices[1].guid, "03000000aaaa0000bbbb000000000000") << "GUIDs compare in lower case";
  ASSERT_EQ(m.calibrations.size(), 1u);
  EXPECT_EQ(m.calibrations[0].axes[0].centre, 100.0);
  ASSERT_EQ(m.bindings.size(), 9u);
  const auto& b = m.bindings;
  EXPECT_EQ(b[0].source.kind, input::Source::Kind::Axis);
  EXPECT_EQ(b[0].source.index, *input::gamepadAxisFromName("lefty"));
  EXPECT_EQ(b[0].shape.dead_zone, 0.1);
  EXPECT_EQ(b[0].shape.expo, 0.4);
  EXPECT_TRUE(b[0].shape.invert);
  EXPECT_EQ(b[0].line, 10);
  EXPECT_TRUE(b[1].isPair());
  EXPECT_EQ(b[1].positive.index, *input::keyFromName("Up"));
  EXPECT_EQ(b[1].rate, 1.5);
  EXPECT_EQ(b[2].negative.kind, input::Source::Kind::Hat);
  EXPECT_EQ(b[2].negative.hat_direction, SDL_HAT_DOWN);
  EXPECT_EQ(b[2].positive.index, *input::gamepadButtonFromName("dpup"));
  EXPECT_TRUE(b[2].hold);
  EXPECT_EQ(b[3].threshold, 0.3);
  EXPECT_EQ(b[5].action, input::DigitalAction::Hold);
  EXPECT_EQ(b[5].source.index, 4);
  EXPECT_EQ(b[6].action, input::DigitalAction::Position);
  EXPECT_EQ(b[6].position, 2);
  EXPECT_EQ(b[7].action, input::DigitalAction::Step);
  EXPECT_EQ(b[7].step, -1);
  EXPECT_TRUE(b[8].source.analog());
}

struct BadCase {
  const char* yaml;
  int line;
  const char* key;
  const char* message;  // a part of it
};

TEST(InputMapping, ErrorsNameFileLineAndKey) {
  const BadCase cases[] = {
      {"bindings:\n  - {control: lfit, key: Up}\n", 2, "bindings[0].control",
       "no pult control named \"lfit\" (known: lift, grip, lights, gear)"},
      {"devices: [{name: pad}]\nbindings:\n  - {control: lift, device: pad, axis: leftz}\n", 3,
       "bindings[0].axis", "unknown game-controller axis \"leftz\""},
      {"devices: [{name: pad}]\nbindings:\n  - {control: grip, device: pad, button: q}\n", 3,
       "bindings[0].button", "unknown game-controller button \"q\""},
      {"devices: [{name: pad}]\nbindings:\n  - control: lift\n    device: pad\n    axis: leftx\n   "
       " dead_zone: 1.5\n",
       6, "bindings[0].dead_zone", "expected a number in [0, 1), got 1.5"},
      {"devices: [{name: pad}]\nbindings:\n  - {control: lift, device: pad, axis: leftx, expo: "
       "-1}\n",
       3, "bindings[0].expo", "[0, 1]"},
      {"bindings:\n  - {control: grip, key: NoSuchKey}\n", 2, "bindings[0].key",
       "unknown key name \"NoSuchKey\""},
      {"bindings:\n  - {control: grip, device: stick, button: 1}\n", 2, "bindings[0].device",
       "no device named \"stick\""},
      {"bindings:\n  - {control: lift, key: Up}\n", 2, "bindings[0]",
       "axis control \"lift\" needs an axis input or a pair"},
      {"bindings:\n  - {control: gear, key: Up}\n", 2, "bindings[0]", "give position"},
      {"bindings:\n  - {control: gear, key: Up, position: 3}\n", 2, "bindings[0].position",
       "positions 0 .. 2, got 3"},
      {"bindings:\n  - {control: lift, keys: [Down]}\n", 2, "bindings[0].keys", "two key names"},
      {"bindings:\n  - {control: lights, key: L, action: flip}\n", 2, "bindings[0].action",
       "expected toggle or hold"},
      {"bindings:\n  - {control: grip, key: G, dead_zone: 0.1}\n", 2, "bindings[0].dead_zone",
       "applies to an axis input only"},
      {"devices: [{name: p, type: joystick}]\nbindings:\n  - {control: lift, device: p, axis: x}\n",
       3, "bindings[0].axis", "expected a number 0 .. 255 (a raw joystick's axes"},
      {"devices: [{name: p, type: joystick}]\nbindings:\n  - {control: grip, device: p, hat: 0, "
       "direction: north}\n",
       3, "bindings[0].direction", "expected up, right, down or left"},
      {"devices: [{name: p, type: wheel}]\n", 1, "devices[p].type", "expected gamepad or joystick"},
      {"devices: [{name: p, guid: 1234}]\n", 1, "devices[p].guid", "32 hex digits"},
      {"calibration:\n  - guid: 03000000aaaa0000bbbb000000000000\n    axes:\n      - {axis: 0, "
       "min: 10, centre: 0, max: 20}\n",
       4, "calibration[0].axes[0]", "min <= centre <= max"},
      {"bindings:\n  - {control: grip, key: G, colour: red}\n", 2, "bindings[0].colour",
       "unknown key"},
      {"bindngs: []\n", 1, "bindngs", "unknown key"},
      {"bindings:\n  - {control: lift\n", 3, "", ""},  // YAML syntax error: the reader's line
  };
  for (const BadCase& c : cases) {
    try {
      loadInputMappingFromString(c.yaml, "pult.yaml", testPult());
      ADD_FAILURE() << "expected an error for:\n" << c.yaml;
    } catch (const SceneError& e) {
      EXPECT_EQ(e.file(), "pult.yaml");
      EXPECT_EQ(e.line(), c.line) << e.what();
      EXPECT_EQ(e.key(), c.key) << e.what();
      EXPECT_NE(e.message().find(c.message), std::string::npos) << e.what();
    }
  }
}

TEST(InputMapping, MissingFileIsAnError) {
  EXPECT_THROW(loadInputMapping("/nonexistent/mapping.yaml", testPult()), SceneError);
}

std::filesystem::path tempFile(const std::string& name) {
  return std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
}

// A mapping for the grasp scene's pult: lift on the stick's axis 0, grip on its button 0.
std::filesystem::path writeStickMapping(const std::string& name, const std::string& product) {
  const auto path = tempFile(name);
  std::ofstream out(path);
  out << "devices:\n"
         "  - {name: stick, type: joystick, product: "
      << product
      << "}\n"
         "bindings:\n"
         "  - {control: lift, device: stick, axis: 0}\n"
         "  - {control: grip, device: stick, button: 0}\n";
  return path;
}

// The columns of a trace CSV, by header name.
std::map<std::string, std::vector<double>> readTrace(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> names;
  std::stringstream header(line);
  for (std::string cell; std::getline(header, cell, ',');) names.push_back(cell);
  std::map<std::string, std::vector<double>> columns;
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::size_t i = 0;
    for (std::string cell; std::getline(row, cell, ','); ++i)
      columns[names.at(i)].push_back(std::stod(cell));
  }
  return columns;
}

TEST(InputRun, VirtualJoystickDrivesSchemeThroughUnplugAndReplugAndReplaysWithoutIt) {
  const Scene scene = loadScene(kSourceDir + "/scenes/grasp.yaml", {});
  ASSERT_EQ(scene.stepsPerFrame(), 4);
  const auto mapping_file = writeStickMapping("simtrainer_input_mapping.yaml", "Engine Stick");
  input::InputSystem input(loadInputMapping(mapping_file.string(), scene.pult));
  std::unique_ptr<input::test::VirtualDevice> stick;
  auto plug = [&] {
    stick = std::make_unique<input::test::VirtualDevice>("Engine Stick", 1, 1, 0);
  };
  plug();

  RunOptions options;
  options.duration_s = 40.0 / 60.0;  // 40 frames
  options.trace_path = tempFile("simtrainer_input_trace.csv").string();
  options.record_path = tempFile("simtrainer_input.rec").string();
  options.input = &input;
  options.before_frame = [&](std::uint64_t frame) {
    if (frame == 0) stick->axis(0, 32767);    // lift full up
    if (frame == 10) stick->button(0, true);  // grip pressed: the scheme's latch closes the jaws
    if (frame == 12) stick->button(0, false);
    if (frame == 20) stick->detach();  // unplugged with the stick still pushed
    if (frame == 30) {                 // plugged in again, pulled fully down
      plug();
      stick->axis(0, -32768);
    }
  };
  const RunResult result = runHeadless(scene, options);
  ASSERT_FALSE(result.fault);
  ASSERT_EQ(result.frames, 40u);

  // Motor voltages out of the scheme, per frame (trace row 4f + 1 is the first step of frame f).
  const auto trace = readTrace(options.trace_path);
  const auto& lift_u = trace.at("motor.lift.voltage");
  const auto& jaws_u = trace.at("motor.jaws.voltage");
  ASSERT_EQ(lift_u.size(), 161u);
  auto at = [](const std::vector<double>& column, int frame) {
    return column[static_cast<std::size_t>(4 * frame + 1)];
  };
  for (int f = 0; f < 40; ++f) {
    const double lift = f < 20 ? 1.0 : (f < 30 ? 0.0 : -1.0);
    EXPECT_EQ(at(lift_u, f), lift) << "frame " << f;
    EXPECT_EQ(at(jaws_u, f), f < 10 ? -1.0 : 1.0) << "frame " << f;
  }

  // The recording replays bit for bit with the device gone (it is detached at frame 20 of the
  // recording run and no input system exists for the replay).
  stick.reset();
  const Recording recording = readRecording(options.record_path);
  EXPECT_TRUE(recording.complete);
  ASSERT_EQ(recording.pult.count(80), 1u);
  EXPECT_EQ(recording.pult.at(80)[0], 0.0) << "pult lift at the unplug frame's first step";
  const ReplayResult replayed = replay(recording, true);
  EXPECT_FALSE(replayed.diverged) << "step " << replayed.diverged_step;
  EXPECT_EQ(replayed.steps, result.steps);
  EXPECT_TRUE(replayed.final_state == result.final_state);
  for (const auto& f : {mapping_file, std::filesystem::path(options.trace_path),
                        std::filesystem::path(options.record_path)})
    std::filesystem::remove(f);
}

// `play --input`: a scenario as an exercise. The timeline presses grip (close the jaws) at 0.1 s;
// the operator's stick drives lift, which the timeline leaves alone, and the stick's grip button
// is pressed too but must change nothing: the timeline owns grip (a press would toggle the jaws
// open again). The expectations grade what the operator did, and the recording replays.
TEST(InputPlay, OperatorDrivesWhatTheTimelineLeavesAndTheRecordingReplays) {
  const auto scenario_file = tempFile("simtrainer_input_exercise.scenario.yaml");
  {
    std::ofstream out(scenario_file);
    out << "name: exercise\n"
           "scene: "
        << kSourceDir
        << "/scenes/grasp.yaml\n"
           "duration: 0.5\n"
           "timeline:\n"
           "  - {at: 0.1, control: grip, pulse: 1, for: 0.1}\n"
           "expect:\n"
           // The palm starts at 0.15 m and the lift runs at up to 0.15 m/s: at least 4 cm by 0.5 s
           // if, and only if, the operator's stick drove it.
           "  - {name: the operator lifted, signal: body.palm.z, min: 0.19, by: 0.5}\n";
  }
  const Scenario scenario = loadScenario(scenario_file.string());
  ASSERT_EQ(scenario.scene.stepsPerFrame(), 4);
  const auto mapping_file =
      writeStickMapping("simtrainer_input_exercise_mapping.yaml", "Exercise Stick");
  input::InputSystem input(loadInputMapping(mapping_file.string(), scenario.scene.pult));
  auto stick = std::make_unique<input::test::VirtualDevice>("Exercise Stick", 1, 1, 0);
  PlayOptions options;
  options.trace_path = tempFile("simtrainer_input_exercise.csv").string();
  options.record_path = tempFile("simtrainer_input_exercise.rec").string();
  options.input = &input;
  std::uint64_t frames_seen = 0;
  options.before_frame = [&](std::uint64_t frame) {
    ++frames_seen;
    if (frame == 0) stick->axis(0, 32767);    // lift full up, from the first frame
    if (frame == 20) stick->button(0, true);  // the timeline's control: ignored
    if (frame == 22) stick->button(0, false);
  };
  const ScenarioResult result = playScenario(scenario, options);
  EXPECT_EQ(frames_seen, 30u);
  EXPECT_TRUE(result.passed()) << (result.expectations.empty() ? ""
                                                               : result.expectations[0].detail);

  const auto trace = readTrace(options.trace_path);
  const auto& lift_u = trace.at("motor.lift.voltage");
  const auto& jaws_u = trace.at("motor.jaws.voltage");
  ASSERT_EQ(lift_u.size(), 121u);
  auto at = [](const std::vector<double>& column, int frame) {
    return column[static_cast<std::size_t>(4 * frame + 1)];
  };
  for (int f = 0; f < 30; ++f) {
    EXPECT_EQ(at(lift_u, f), 1.0) << "frame " << f;  // the operator's stick
    if (f <= 5) {
      EXPECT_EQ(at(jaws_u, f), -1.0) << "frame " << f;
    } else if (f >= 7) {
      EXPECT_EQ(at(jaws_u, f), 1.0) << "frame " << f;  // closed by the timeline, and stays
    }
  }

  stick.reset();
  const Recording recording = readRecording(options.record_path);
  EXPECT_TRUE(recording.complete);
  const ReplayResult replayed = replay(recording, true);
  EXPECT_FALSE(replayed.diverged) << "step " << replayed.diverged_step;
  EXPECT_TRUE(replayed.final_state == result.run.final_state);
  for (const auto& f : {scenario_file, mapping_file, std::filesystem::path(options.trace_path),
                        std::filesystem::path(options.record_path)})
    std::filesystem::remove(f);
}

TEST(InputRun, KeyboardLayoutWithoutKeysChangesNothing) {
  // The default layout with no key pressed leaves the pult at its initial values: the same run.
  const Scene scene = loadScene(kSourceDir + "/scenes/grasp.yaml", {});
  input::InputOptions no_keys;
  no_keys.sdl_keyboard = false;
  input::InputSystem input(input::defaultKeyboardMapping(inputControls(scene.pult)), no_keys);
  RunOptions plain;
  plain.duration_s = 0.5;
  RunOptions with_input = plain;
  with_input.input = &input;
  const RunResult a = runHeadless(scene, plain);
  const RunResult b = runHeadless(scene, with_input);
  EXPECT_TRUE(a.final_state == b.final_state);
}

}  // namespace
}  // namespace sim::engine
