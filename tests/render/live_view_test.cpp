// The windowed session (engine/live_view.h) in real OpenSceneGraph windows under Xvfb: a slow view
// neither slows the simulated world nor changes its trace or recording; keys typed into a window
// (real X events through XTest) reach the simulation while a frame is being drawn; two windows
// show two cameras and close independently, the recording flushed when the last one closes; a
// replay in a window pauses, steps and seeks with real keys to the recorded states. Timing
// assertions are loose (the figures come from bench_realtime).
#include <engine/input_mapping.h>
#include <engine/live_view.h>
#include <engine/recording.h>
#include <engine/replayer.h>
#include <engine/scenario.h>
#include <engine/scene.h>
#include <input/input_system.h>

#include <x11_input.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>
#include <thread>

namespace sim::engine {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
const fs::path kSource = SIMTRAINER_SOURCE_DIR;

// X keysyms used below (X11/keysymdef.h).
constexpr unsigned long kXkUp = 0xff52, kXkLeft = 0xff51, kXkF9 = 0xffc6, kXkF10 = 0xffc7;

std::string temp(const std::string& tag) {
  return (fs::temp_directory_path() / ("simtrainer_live_" + tag + "_" + std::to_string(::getpid())))
      .string();
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::unique_ptr<SessionView> window(const Scene& scene, const std::string& camera, int width = 320,
                                    int height = 180) {
  ViewSetup setup;
  setup.width = width;
  setup.height = height;
  setup.camera = camera;
  setup.shadows = render::Shadows::Off;
  auto view = std::make_unique<SessionView>(scene, setup);
  EXPECT_NE(view->view().nativeWindow(), 0u) << "a real window, not a pixel buffer";
  return view;
}

std::vector<std::unique_ptr<SessionView>> windows(std::unique_ptr<SessionView> first) {
  std::vector<std::unique_ptr<SessionView>> list;
  list.push_back(std::move(first));
  return list;
}

// The MF-4 grip scenario's first 3 s with a view that takes 200 ms per frame (5 frames/s): the
// simulation still runs 180 frames in about 3 s of wall time, and its trace and recording equal,
// byte for byte, those of a headless run of the same scenario.
TEST(LiveView, ASlowViewNeitherSlowsTheWorldNorChangesItsTraceOrRecording) {
  Scenario scenario =
      loadScenario((kSource / "scenes/scenarios/mf4_grip_lift.scenario.yaml").string());
  scenario.duration_s = 3.0;
  const std::string trace_a = temp("a.csv"), trace_b = temp("b.csv");
  const std::string rec_a = temp("a.rec"), rec_b = temp("b.rec");
  PlayOptions headless;
  headless.trace_path = trace_a;
  headless.record_path = rec_a;
  const auto headless_start = Clock::now();
  playScenario(scenario, headless);
  const double headless_wall = std::chrono::duration<double>(Clock::now() - headless_start).count();
  // The timing claims need a world that alone runs well inside real time (here 3 s in under
  // 1.5 s; an optimised build takes about 0.1 s). An instrumented build (the sanitizer runs,
  // several times slower) on a loaded machine may not: then only the byte-for-byte claims are
  // checked, and the log says why.
  const bool world_keeps_real_time = headless_wall < 0.5 * scenario.duration_s;

  LiveViewOptions slow;
  slow.draw_delay = std::chrono::milliseconds(200);
  LiveView live(windows(window(scenario.scene, "follow")), nullptr, slow);
  PlayOptions windowed;
  windowed.trace_path = trace_b;
  windowed.record_path = rec_b;
  windowed.realtime = true;
  windowed.after_frame = live.observer();
  windowed.operator_events = &live.operatorQueue();
  const auto start = Clock::now();
  ScenarioResult result = live.run([&] { return playScenario(scenario, windowed); });
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  live.addFigures(result.run);

  EXPECT_EQ(result.run.frames, 180u);
  if (world_keeps_real_time) {
    const double frames_by_the_clock = result.run.wall_time_s * 60.0;
    EXPECT_NEAR(static_cast<double>(result.run.frames), frames_by_the_clock,
                0.1 * frames_by_the_clock)
        << "wall time " << result.run.wall_time_s << " s";
    EXPECT_LT(wall, 3.0 * 1.1 + 0.5);
    EXPECT_LE(result.run.drawn_frames, 18u) << "the view drew at most one frame per 200 ms";
    EXPECT_GE(result.run.drawn_frames, 5u);
    EXPECT_EQ(result.run.resyncs, 0u);
  } else {
    std::cout << "timing not checked: the headless world alone took " << headless_wall
              << " s for 3 s (this build or machine cannot hold real time)\n";
  }

  const std::string a = readFile(trace_a), b = readFile(trace_b);
  EXPECT_GT(a.size(), 1000u);
  EXPECT_TRUE(a == b) << "traces differ";
  const std::string ra = readFile(rec_a), rb = readFile(rec_b);
  EXPECT_GT(ra.size(), 1000u);
  EXPECT_TRUE(ra == rb) << "recordings differ";
  for (const auto& f : {trace_a, trace_b, rec_a, rec_b}) std::remove(f.c_str());
}

// A key typed into the window while the view spends 300 ms on each frame reaches the pult at the
// simulation's next frame start, not at the view's next frame: the window's keys are read on a
// thread of their own. The grasp scene's `lift` axis is Up/Down in the default keyboard layout.
TEST(LiveView, KeysTypedIntoTheWindowReachThePultWhileAFrameIsDrawn) {
  const Scene scene = loadScene((kSource / "scenes/grasp.yaml").string());
  input::InputOptions input_options;
  input_options.sdl_keyboard = false;
  input::InputSystem keyboard(input::defaultKeyboardMapping(inputControls(scene.pult)),
                              input_options);
  LiveViewOptions slow;
  slow.draw_delay = std::chrono::milliseconds(300);
  LiveView live(windows(window(scene, "")), nullptr, slow);
  const unsigned long xwindow = live.window(0)->view().nativeWindow();
  RunOptions options;
  options.duration_s = 2.0;
  options.realtime = true;
  options.input = &keyboard;
  options.operator_events = &live.operatorQueue();
  const FrameObserver draw = live.observer();
  const int lift = scene.pult.find("lift");
  std::vector<double> lift_values;
  options.after_frame = [&](const Session& session, const RunResult& so_far,
                            const std::vector<std::string>& notes) {
    lift_values.push_back(session.state().pult.values[static_cast<std::size_t>(lift)]);
    return draw(session, so_far, notes);
  };
  std::atomic<long long> pressed_ns{0};
  std::vector<double> latency_s;  // on the simulation thread
  options.on_operator_key = [&](const OperatorEvent& e) {
    if (e.down)
      latency_s.push_back(std::chrono::duration<double>(Clock::now().time_since_epoch()).count() -
                          1e-9 * static_cast<double>(pressed_ns.load()));
  };
  std::thread typist([&] {
    x11_input::SyntheticInput x;
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    x.focus(xwindow);
    pressed_ns.store(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
            .count());
    x.key(kXkUp, true);
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    x.key(kXkUp, false);
  });
  live.run([&] { return runHeadless(scene, options); });
  typist.join();
  ASSERT_EQ(latency_s.size(), 1u) << "one press reached the simulation";
  // Read between the view's frames it could wait up to 300 ms; on the key thread it waits for
  // the simulation's next frame (16.7 ms) and scheduling.
  EXPECT_LT(latency_s[0], 0.1) << "key to pult " << latency_s[0] << " s";
  ASSERT_EQ(lift_values.size(), 120u);
  EXPECT_NEAR(*std::max_element(lift_values.begin(), lift_values.end()), 1.0, 1e-12)
      << "held 0.7 s: full";
  EXPECT_NEAR(lift_values.back(), 0.0, 1e-12) << "springs back when released";
}

// Two windows, one per camera: the same snapshot gives two different pictures; closing the first
// window (as a window manager does) leaves the second drawing and the run going; closing the last
// ends the run, and its recording is complete and replays.
TEST(LiveView, TwoWindowsShowTwoCamerasAndCloseIndependently) {
  const Scene scene = loadScene((kSource / "scenes/mf4.yaml").string());
  std::vector<std::unique_ptr<SessionView>> views;
  views.push_back(window(scene, "follow"));
  views.push_back(window(scene, "gripper"));
  {
    Session session(scene);
    RunResult stats;
    const render::RgbImage a = views[0]->capture(session, stats);
    const render::RgbImage b = views[1]->capture(session, stats);
    ASSERT_EQ(a.rgb.size(), b.rgb.size());
    std::size_t differ = 0;
    for (std::size_t i = 0; i < a.rgb.size(); i += 3) {
      differ +=
          a.rgb[i] != b.rgb[i] || a.rgb[i + 1] != b.rgb[i + 1] || a.rgb[i + 2] != b.rgb[i + 2];
    }
    EXPECT_GT(differ, a.rgb.size() / 3 / 5) << "over a fifth of the pixels differ";
  }
  const unsigned long first = views[0]->view().nativeWindow();
  const unsigned long second = views[1]->view().nativeWindow();
  LiveView live(std::move(views), nullptr, {});
  const std::string rec = temp("two.rec");
  RunOptions options;
  options.duration_s = std::numeric_limits<double>::infinity();
  options.realtime = true;
  options.record_path = rec;
  options.operator_events = &live.operatorQueue();
  options.after_frame = live.observer();
  std::atomic<std::size_t> open_after_first{0};
  std::thread closer([&] {
    x11_input::SyntheticInput x;
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    x.requestClose(first);
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
    open_after_first.store(1);
    x.requestClose(second);
  });
  const auto start = Clock::now();
  const RunResult result = live.run([&] { return runHeadless(scene, options); });
  closer.join();
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_TRUE(result.closed);
  EXPECT_EQ(live.openWindows(), 0u);
  EXPECT_GT(wall, 1.3) << "closing the first window did not end the run";
  EXPECT_LT(wall, 5.0);
  const Recording recording = readRecording(rec);
  std::remove(rec.c_str());
  EXPECT_TRUE(recording.complete) << "the recording was closed when the last window was";
  EXPECT_EQ(recording.outcome, "closed");
  EXPECT_EQ(recording.hashes.size(), result.steps);
  EXPECT_FALSE(replay(recording, true).diverged);
}

// A recorded session replayed in a window: F9 pauses, F10 runs one frame, Left seeks 5 s back,
// typed as real keys; the states reached hash as recorded.
TEST(LiveView, ReplayInAWindowPausesStepsAndSeeksWithRealKeys) {
  Scenario scenario =
      loadScenario((kSource / "scenes/scenarios/mf4_grip_lift.scenario.yaml").string());
  scenario.duration_s = 12.0;
  const std::string rec = temp("replay.rec");
  PlayOptions record;
  record.record_path = rec;
  playScenario(scenario, record);
  Replayer replayer(readRecording(rec));
  std::remove(rec.c_str());
  const std::uint64_t initial = replayer.session().hash();
  const Scene scene = replayer.session().scene();
  auto view = window(scene, "follow");
  view->setReplayMode(true);
  const unsigned long xwindow = view->view().nativeWindow();
  LiveView live(windows(std::move(view)), nullptr, {});
  ReplayStatus status;
  status.marks = std::make_shared<const std::vector<TimelineMark>>();
  ReplayPlayOptions options;
  options.realtime = true;
  options.speed = 4.0;  // 16 steps a frame: 12 s in 3 s
  options.hold_at_end = true;
  options.status = &status;
  options.operator_events = &live.operatorQueue();
  const FrameObserver draw = live.observer([&status](FrameSnapshot& s) {
    s.replay = true;
    s.replay_status = status;
  });
  std::vector<std::uint64_t> steps;
  bool all_recorded = true;
  std::atomic<bool> done{false};
  options.after_frame = [&](const Session& session, const RunResult& so_far,
                            const std::vector<std::string>& notes) {
    steps.push_back(session.stepIndex());
    const std::uint64_t s = session.stepIndex();
    all_recorded =
        all_recorded && session.hash() == (s == 0 ? initial : replayer.recording().hashes[s - 1]);
    return draw(session, so_far, notes) && !done.load();
  };
  std::thread typist([&] {
    x11_input::SyntheticInput x;
    const auto type = [&](unsigned long key) {
      x.key(key, true);
      x.key(key, false);
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    };
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    x.focus(xwindow);
    type(kXkF9);    // pause, at about 6 s
    type(kXkF10);   // one frame: 16 steps
    type(kXkLeft);  // 5 s back, still paused
    type(kXkF9);    // resume
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    done.store(true);
  });
  live.run([&] { return playRecording(replayer, options); });
  typist.join();
  ASSERT_GT(steps.size(), 20u);
  EXPECT_TRUE(all_recorded) << "every frame's state hashes as recorded";
  // Find the pause (a run of equal steps), the one-frame step (+16), the seek (-1200) and the
  // resumption (increasing again).
  std::size_t paused = 0, stepped = 0, back = 0;
  for (std::size_t i = 1; i < steps.size(); ++i) {
    const auto d = static_cast<std::int64_t>(steps[i]) - static_cast<std::int64_t>(steps[i - 1]);
    if (d == 0) ++paused;
    if (d == 4 && paused > 0) ++stepped;  // F10: one frame of 4 steps at any speed
    if (d == -1200 || (d < 0 && steps[i] == 0)) ++back;
  }
  EXPECT_GT(paused, 3u) << "F9 paused";
  EXPECT_EQ(stepped, 1u) << "F10 ran one frame";
  EXPECT_EQ(back, 1u) << "Left went back 5 s (1200 steps)";
  EXPECT_GT(steps.back(), steps[steps.size() - 2]) << "F9 resumed";
}

}  // namespace
}  // namespace sim::engine
