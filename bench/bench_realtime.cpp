// A trainee's windowed session held to the wall clock: the MF-4 grip scenario played in a real
// window (engine/live_view.h: simulation on its own thread, drawing from snapshots) for a given
// wall time, while real key events are typed into the window through the X server (XTest). It
// reports the simulated time over the wall time, the simulation's overruns and resyncs, the
// drawn frames per second and the draw time, and the latency from each key event to the motor
// voltage it causes. Needs an X server; on this project's standard machine:
//
//   xvfb-run -a -s "-screen 0 1920x1080x24" build/bin/bench_realtime --seconds 60
//   taskset -c 0 xvfb-run -a -s "-screen 0 1920x1080x24" build/bin/bench_realtime --seconds 60
//
// Options: --seconds S (wall time, default 60), --size WxH (1280x720), --shadows on|off (on),
// --no-insets, --camera NAME (follow), --threads N (the step's threads, default 1).
//
// Keys: `steer` (Left/Right in the default keyboard layout; the scenario's timeline leaves it to
// the operator) is pressed for 150 ms about every 0.6 s at varying phases of the frame. A press
// raises steer at the next frame start and the left track's voltage u = drive - steer with it;
// a release lets it spring back. The latency runs from the moment the key event is sent to the
// end of the first step whose steer value (and the voltage computed from it) moved the new way;
// it is also split into its parts, and timed to the end of that frame.
#include <engine/input_mapping.h>
#include <engine/live_view.h>
#include <engine/scenario.h>
#include <input/input_system.h>

#include <x11_input.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
constexpr unsigned long kXkRight = 0xff53;

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size()))) - 1;
  return v[std::min(rank, v.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 60.0;
  std::string size = "1280x720", shadows = "on", camera = "follow";
  bool insets = true;
  int threads = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--seconds" && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (arg == "--size" && i + 1 < argc) {
      size = argv[++i];
    } else if (arg == "--shadows" && i + 1 < argc) {
      shadows = argv[++i];
    } else if (arg == "--no-insets") {
      insets = false;
    } else if (arg == "--camera" && i + 1 < argc) {
      camera = argv[++i];
    } else if (arg == "--threads" && i + 1 < argc) {
      threads = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr,
                   "usage: bench_realtime [--seconds S] [--size WxH] [--shadows on|off] "
                   "[--no-insets] [--camera NAME] [--threads N]\n");
      return 2;
    }
  }
  using namespace sim::engine;
  Scenario scenario = loadScenario(std::string(SIMTRAINER_SOURCE_DIR) +
                                   "/scenes/scenarios/mf4_grip_lift.scenario.yaml");
  scenario.duration_s = 1e9;  // the wall time ends the run; after its timeline the robot holds
  ViewSetup setup;
  if (std::sscanf(size.c_str(), "%dx%d", &setup.width, &setup.height) != 2) return 2;
  setup.camera = camera;
  setup.shadows = shadows == "on" ? sim::render::Shadows::On : sim::render::Shadows::Off;
  setup.insets = insets;
  std::vector<std::unique_ptr<SessionView>> windows;
  windows.push_back(std::make_unique<SessionView>(scenario.scene, setup));
  SessionView& view = *windows.back();
  const unsigned long xwindow = view.view().nativeWindow();
  const bool shadows_on = view.view().shadowsOn();
  const std::size_t inset_count = view.view().insetCount();
  const std::string renderer = view.view().glRenderer();
  LiveView live(std::move(windows), nullptr, {});

  sim::input::InputOptions input_options;
  input_options.sdl_keyboard = false;
  sim::input::InputSystem keyboard(
      sim::input::defaultKeyboardMapping(inputControls(scenario.scene.pult)), input_options);
  const auto steer = static_cast<std::size_t>(scenario.scene.pult.find("steer"));
  std::size_t left_motor = 0;
  while (scenario.scene.model.motors[left_motor].name != "drive_left") ++left_motor;

  // Key events sent (time, press), read by the simulation thread's observers.
  std::mutex sent_mutex;
  std::vector<std::pair<Clock::time_point, bool>> sent;
  std::atomic<bool> stop{false};
  std::vector<double> latencies_ms, frame_end_ms, delivery_ms, applied_ms, step_ms;
  std::size_t matched = 0, voltage_followed = 0;
  double last_steer = 0.0;
  int direction = 0;  // +1 rising (held), -1 falling (released), 0 still
  std::size_t next_event = 0;
  bool frame_end_pending = false;  // a key's voltage came in this frame: time the frame's end too
  const auto drive_control = static_cast<std::size_t>(scenario.scene.pult.find("drive"));

  PlayOptions options;
  options.realtime = true;
  options.threads = threads;
  options.input = &keyboard;
  options.operator_events = &live.operatorQueue();
  // The latency split: sent -> seen by the window's key thread (the X server), seen -> applied
  // to the pult at the next frame start (the wait for the frame), applied -> the end of the step
  // that computed the voltage from it. Keys are matched in order.
  std::vector<Clock::time_point> seen_at, applied_at;
  std::size_t next_seen = 0;
  options.on_operator_key = [&](const OperatorEvent& e) {
    const auto now = Clock::now();
    std::lock_guard lock(sent_mutex);
    if (next_seen < sent.size() && sent[next_seen].second == e.down) {
      delivery_ms.push_back(1e3 *
                            std::chrono::duration<double>(e.at - sent[next_seen].first).count());
    }
    seen_at.push_back(e.at);
    applied_at.push_back(now);
    ++next_seen;
  };
  // The voltage is computed in the first step after the pult changed; its end is when the motor
  // has the voltage the key caused (the frame's further steps, the recording and the snapshot
  // for the view come after it and are measured separately, to the frame's end).
  options.after_step = [&](const Session& session, const sim::dynamics::StepReport&) {
    const auto now = Clock::now();
    const double s = session.state().pult.values[steer];
    const int moved = s > last_steer ? 1 : (s < last_steer ? -1 : 0);
    {
      std::lock_guard lock(sent_mutex);
      // The oldest key event not yet matched: its effect is this step's new direction.
      if (next_event < sent.size() && moved != 0 && moved != direction &&
          (moved > 0) == sent[next_event].second && sent[next_event].first <= now) {
        latencies_ms.push_back(1e3 *
                               std::chrono::duration<double>(now - sent[next_event].first).count());
        if (next_event < seen_at.size()) {
          applied_ms.push_back(
              1e3 *
              std::chrono::duration<double>(applied_at[next_event] - seen_at[next_event]).count());
          step_ms.push_back(1e3 *
                            std::chrono::duration<double>(now - applied_at[next_event]).count());
        }
        ++matched;
        // The voltage of this step follows: u = clamp(drive - steer).
        const double expected =
            std::clamp(session.state().pult.values[drive_control] - s, -1.0, 1.0);
        if (session.dynamics().motors[left_motor].voltage == expected) ++voltage_followed;
        frame_end_pending = true;
        ++next_event;
      }
    }
    if (moved != 0) direction = moved;
    last_steer = s;
  };
  const FrameObserver draw = live.observer();
  options.after_frame = [&](const Session& session, const RunResult& so_far,
                            const std::vector<std::string>& notes) {
    if (frame_end_pending) {
      std::lock_guard lock(sent_mutex);
      frame_end_ms.push_back(
          1e3 * std::chrono::duration<double>(Clock::now() - sent[next_event - 1].first).count());
      frame_end_pending = false;
    }
    return draw(session, so_far, notes) && !stop.load();
  };

  std::thread typist([&] {
    sim::x11_input::SyntheticInput x;
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // the window is up and drawn
    x.focus(xwindow);
    std::uint32_t lcg = 12345;
    const auto start = Clock::now();
    while (Clock::now() - start < std::chrono::duration<double>(seconds - 2.0)) {
      lcg = lcg * 1664525u + 1013904223u;
      // 500-700 ms apart: every phase of the 16.7 ms frame comes up.
      std::this_thread::sleep_for(std::chrono::microseconds(500000 + (lcg >> 8) % 200000));
      for (const bool down : {true, false}) {
        {
          std::lock_guard lock(sent_mutex);
          sent.emplace_back(Clock::now(), down);
        }
        x.key(kXkRight, down);
        if (down) std::this_thread::sleep_for(std::chrono::milliseconds(150));
      }
    }
  });
  std::thread timer([&] {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop.store(true);
  });
  const auto wall_start = Clock::now();
  ScenarioResult result = live.run([&] { return playScenario(scenario, options); });
  const double wall = std::chrono::duration<double>(Clock::now() - wall_start).count();
  typist.join();
  timer.join();
  live.addFigures(result.run);
  const RunResult& r = result.run;
  std::printf("bench_realtime: %s in a %dx%d window, shadows %s, %zu inset(s), %s, camera %s\n",
              scenario.name.c_str(), setup.width, setup.height, shadows_on ? "on" : "off",
              inset_count, renderer.c_str(), camera.c_str());
  std::printf(
      "simulation: %llu frames, %.3f s simulated in %.3f s wall: simulated/wall %.4f; "
      "overruns %llu, resyncs %llu (%.3f s lost); work per frame mean %.3f ms, p99 %.3f ms\n",
      static_cast<unsigned long long>(r.frames), r.sim_time_s, r.wall_time_s,
      r.wall_time_s > 0 ? r.sim_time_s / r.wall_time_s : 0.0,
      static_cast<unsigned long long>(r.overruns), static_cast<unsigned long long>(r.resyncs),
      r.lost_s, 1e3 * r.frame_time.mean(), 1e3 * r.frame_time.p99());
  std::printf(
      "view: %llu frames drawn in %.1f s (%.2f per second), draw time mean %.1f ms, p99 %.1f ms\n",
      static_cast<unsigned long long>(r.drawn_frames), wall,
      r.draw_wall_s > 0 ? static_cast<double>(r.drawn_frames) / r.draw_wall_s : 0.0,
      1e3 * r.draw_time.mean(), 1e3 * r.draw_time.p99());
  std::printf(
      "keys: %zu events typed, %zu seen in the pult, %zu with the voltage following in the same "
      "step; key -> voltage latency p50 %.2f ms, p99 %.2f ms, max %.2f ms (frame period "
      "%.2f ms)\n",
      sent.size(), matched, voltage_followed, percentile(latencies_ms, 0.5),
      percentile(latencies_ms, 0.99), percentile(latencies_ms, 1.0),
      1e3 / scenario.scene.frame_rate_hz);
  auto split = [](const char* what, const std::vector<double>& v) {
    std::printf("  %s: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", what, percentile(v, 0.5),
                percentile(v, 0.99), percentile(v, 1.0));
  };
  split("sent -> seen by the window's key thread (X server)", delivery_ms);
  split("seen -> applied at the next frame start (waiting for the frame)", applied_ms);
  split("applied -> the end of the step that computed the voltage", step_ms);
  split("(for comparison: sent -> the end of that frame, snapshot for the view included)",
        frame_end_ms);
  return 0;
}
