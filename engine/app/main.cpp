// simtrainer: the command-line program. Subcommands: run, play, test, replay, report, validate,
// devices. Exit codes: 0 success; 1 the run failed (numerical fault, or a scenario expectation
// failed); 2 usage or load error (bad flag, unreadable or invalid scene, bad --set); 3 replay
// divergence; 4 internal error.
#include <dynamics/elastica.h>
#include <dynamics/identify.h>
#include <dynamics/simulator.h>
#include <engine/identify_csv.h>
#include <engine/input_mapping.h>
#include <engine/live_view.h>
#include <engine/recording.h>
#include <engine/replayer.h>
#include <engine/report.h>
#include <engine/run.h>
#include <engine/scenario.h>
#include <engine/scene.h>
#include <engine/session_view.h>
#include <engine/trace.h>
#include <engine/urdf.h>
#include <input/devices.h>
#include <input/input_system.h>
#include <render/view.h>

#include <CLI/CLI.hpp>

#include "report_command.h"
#include "threads_option.h"
#ifdef SIMTRAINER_NET
#include "net_commands.h"
#endif
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kExitOk = 0;
constexpr int kExitRunFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitDiverged = 3;
constexpr int kExitInternal = 4;

// Set by SIGINT/SIGTERM: the loops stop after the current step and flush their files.
std::atomic<bool> g_interrupt{false};
extern "C" void onInterrupt(int) {
  g_interrupt.store(true);
}

// One line on stderr (scene validation may report several problems, one per line).
void printError(const std::string& message) {
  std::fprintf(stderr, "simtrainer: error: %s\n", message.c_str());
}

// What the scene loader let through but the user should know (unsupported URDF elements, ...).
void logSceneWarnings(const sim::engine::Scene& scene) {
  for (const std::string& warning : scene.warnings) spdlog::warn("{}", warning);
}

std::vector<sim::engine::Override> parseOverrides(const std::vector<std::string>& texts) {
  std::vector<sim::engine::Override> overrides;
  for (const std::string& text : texts) overrides.push_back(sim::engine::parseOverride(text));
  return overrides;
}

// How `run`, `play` and `replay` show the scene: windows, a screenshot, or nothing.
struct ViewArgs {
  std::string screenshot;            // PNG file
  double at_s = -1.0;                // simulated time of the screenshot; < 0: the end of the run
  std::string camera;                // a scene camera by name
  std::vector<std::string> windows;  // one window per camera (--window, repeatable)
  int screen = 0;                    // X screen of the windows
  std::string size = "1280x720";
  std::string shadows = "auto";
  bool no_insets = false;
};

bool haveDisplay() {
  const char* display = std::getenv("DISPLAY");
  return display != nullptr && *display != '\0';
}

sim::engine::ViewSetup viewSetup(const ViewArgs& args) {
  sim::engine::ViewSetup setup;
  setup.camera = args.camera;
  setup.shadows = args.shadows == "on"    ? sim::render::Shadows::On
                  : args.shadows == "off" ? sim::render::Shadows::Off
                                          : sim::render::Shadows::Auto;
  setup.insets = !args.no_insets;
  setup.screen = args.screen;
  if (std::sscanf(args.size.c_str(), "%dx%d", &setup.width, &setup.height) != 2 ||
      setup.width < 16 || setup.height < 16 || setup.width > 8192 || setup.height > 8192) {
    throw std::invalid_argument("--size: expected WIDTHxHEIGHT, e.g. 1280x720, got " + args.size);
  }
  return setup;
}

void logScreenshots(sim::engine::SessionView& view) {
  for (const auto& warning : view.view().bodies().warnings()) spdlog::warn("3D view: {}", warning);
  view.setScreenshotListener([](const std::string& saved) {
    if (saved.rfind("error: ", 0) == 0) {
      spdlog::error("screenshot: {}", saved.substr(7));
    } else {
      spdlog::info("screenshot saved: {}", saved);
    }
  });
}

// The windows (when not headless and there is a display) and the screenshot of a run, drawn on
// this thread while the run's loop goes on on another (engine/live_view.h).
class Viewing {
 public:
  // Throws a usage error (std::invalid_argument) for a bad --size, --camera, --screen or a
  // screenshot without a display.
  Viewing(const sim::engine::Scene& scene, bool headless, const ViewArgs& args, double end_s) {
    sim::engine::ViewSetup setup = viewSetup(args);
    const bool want_window = !headless && haveDisplay();
    if (!headless && !haveDisplay()) {
      spdlog::info("no display (DISPLAY is not set): running headless");
    }
    if (!want_window && args.screenshot.empty()) return;
    if (!haveDisplay()) {
      throw std::invalid_argument(
          "--screenshot needs an X display for its offscreen buffer (DISPLAY is not set); run "
          "under xvfb-run");
    }
    std::vector<std::unique_ptr<sim::engine::SessionView>> windows;
    std::unique_ptr<sim::engine::SessionView> shot_view;
    try {
      if (want_window) {
        std::vector<std::string> cameras = args.windows;
        if (cameras.empty()) cameras.push_back(args.camera);
        for (std::size_t i = 0; i < cameras.size(); ++i) {
          sim::engine::ViewSetup window = setup;
          window.camera = cameras[i];
          window.window_x = 40 + static_cast<int>(i) * (setup.width / 2 + 20);
          window.window_y = 40 + static_cast<int>(i) * 30;
          windows.push_back(std::make_unique<sim::engine::SessionView>(scene, window));
          logScreenshots(*windows.back());
        }
      }
      if (!args.screenshot.empty() && (windows.empty() || !args.windows.empty())) {
        // Without a window, or with several: the screenshot from --camera in its own buffer.
        sim::engine::ViewSetup offscreen = setup;
        offscreen.offscreen = true;
        shot_view = std::make_unique<sim::engine::SessionView>(scene, offscreen);
      }
    } catch (const sim::render::RenderError& e) {
      if (!args.screenshot.empty() || args.screen != 0 || !args.windows.empty()) {
        throw std::invalid_argument(std::string("3D view: ") + e.what());
      }
      spdlog::warn("no window ({}): running headless", e.what());
      return;
    }
    windowed_ = !windows.empty();
    sim::engine::LiveViewOptions options;
    options.screenshot = args.screenshot;
    options.screenshot_at_s = args.at_s >= 0.0 ? args.at_s : end_s;
    if (const char* delay = std::getenv("SIMTRAINER_DRAW_DELAY_MS")) {
      // A deliberately slow view (tests and demonstrations of dropped frames).
      options.draw_delay = std::chrono::milliseconds(std::atoi(delay));
    }
    live_ =
        std::make_unique<sim::engine::LiveView>(std::move(windows), std::move(shot_view), options);
    screenshot_ = !args.screenshot.empty();
    screenshot_path_ = args.screenshot;
  }

  bool windowed() const { return windowed_; }
  bool active() const { return live_ != nullptr; }
  // Calls `f` with every view (windows and the screenshot's).
  template <class F>
  void forEachView(F f) {
    if (!live_) return;
    for (std::size_t i = 0; i < live_->windowCount(); ++i) {
      if (auto* window = live_->window(i)) f(*window);
    }
    if (auto* shot = live_->screenshotView()) f(*shot);
  }
  sim::engine::LiveView& live() { return *live_; }

  // Runs `simulate` with the view on this thread when there is one, else directly.
  template <class Simulate>
  auto run(Simulate simulate) -> decltype(simulate()) {
    if (!live_) return simulate();
    return live_->run(simulate);
  }

  // After the run: "" or why the screenshot is missing.
  std::string screenshotProblem() const {
    if (!screenshot_) return {};
    if (!live_->screenshotError().empty()) return "screenshot: " + live_->screenshotError();
    if (!live_->screenshotTaken()) return "the run ended before the screenshot time (--at)";
    spdlog::info("screenshot at t = {:.3f} s: {}", live_->screenshotTime(), screenshot_path_);
    return {};
  }

 private:
  std::unique_ptr<sim::engine::LiveView> live_;
  bool windowed_ = false;
  bool screenshot_ = false;
  std::string screenshot_path_;
};

void addViewOptions(CLI::App* command, ViewArgs& args) {
  command
      ->add_option("--screenshot", args.screenshot,
                   "Save a PNG of the 3D view (offscreen when headless; needs an X display, "
                   "e.g. xvfb-run)")
      ->option_text("FILE.png");
  command->add_option("--at", args.at_s, "Simulated time of the screenshot (default: the end)")
      ->option_text("SECONDS")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--camera", args.camera, "View from this camera of the scene")
      ->option_text("NAME");
  command
      ->add_option("--window", args.windows,
                   "Open a window for this camera of the scene (repeatable: one window each, "
                   "all drawing the same simulation; closing the last ends the run)")
      ->option_text("CAMERA")
      ->allow_extra_args(false);
  command->add_option("--screen", args.screen, "X screen for the windows (default 0)")
      ->option_text("N")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--size", args.size, "Window or screenshot size (default 1280x720)")
      ->option_text("WxH");
  command
      ->add_option("--shadows", args.shadows,
                   "Sun shadows: on, off, or auto (default: on with a hardware OpenGL driver, "
                   "off with a software one such as Mesa llvmpipe)")
      ->option_text("auto|on|off")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  command->add_flag("--no-insets", args.no_insets,
                    "Do not draw the scene's picture-in-picture cameras (cameras[].inset)");
}

struct RunArgs {
  std::string scene;
  bool headless = false;
  bool realtime = false;
  double duration_s = 10.0;
  std::string trace;
  int trace_every = 1;
  std::string record;
  std::vector<std::string> sets;
  std::string input;             // mapping file, or "keyboard" for the generated layout
  std::string gamecontrollerdb;  // SDL controller database (gamecontrollerdb.txt format)
  ViewArgs view;
  bool duration_given = false;
  simtrainer_app::ResultArgs result;
  int threads = 1;
};

// The operator's devices for `run --input`: a mapping file, or the default keyboard layout. With
// a window, keys come from it (`keys_from_window`), and a run without --input gets the default
// keyboard layout when the scene has a pult.
std::unique_ptr<sim::input::InputSystem> openInput(const RunArgs& args,
                                                   const sim::engine::Scene& scene,
                                                   bool keys_from_window) {
  std::string source = args.input;
  if (source.empty() && keys_from_window && !scene.pult.controls.empty()) source = "keyboard";
  if (source.empty()) return nullptr;
  sim::input::Mapping mapping;
  if (source == "keyboard") {
    std::vector<std::string> unbound;
    mapping = sim::input::defaultKeyboardMapping(sim::engine::inputControls(scene.pult), &unbound);
    for (const auto& name : unbound)
      spdlog::warn("default keyboard layout: no key left for control {}", name);
  } else {
    mapping = sim::engine::loadInputMapping(args.input, scene.pult);
  }
  sim::input::InputOptions options;
  options.gamecontrollerdb = args.gamecontrollerdb;
  options.sdl_keyboard = !keys_from_window;
  options.log = [](const std::string& line) { spdlog::info("input: {}", line); };
  auto system = std::make_unique<sim::input::InputSystem>(std::move(mapping), options);
  spdlog::info("input mapping {}:", system->mapping().file);
  for (const auto& line : sim::input::describeMapping(system->mapping()))
    spdlog::info("  {}", line);
  for (const auto& d : system->devices()) {
    if (!d.connected) spdlog::info("input: device {} not connected (waiting for it)", d.id);
  }
  return system;
}

int runCommand(const RunArgs& args) {
  const auto scene = sim::engine::loadScene(args.scene, parseOverrides(args.sets));
  logSceneWarnings(scene);
  Viewing viewing(scene, args.headless, args.view, args.duration_s);
  sim::engine::RunOptions options;
  options.duration_s = args.duration_s;
  options.trace_path = args.trace;
  options.trace_every = args.trace_every;
  options.record_path = args.record;
  options.realtime = args.realtime || viewing.windowed();  // a window shows real time
  options.threads = args.threads;
  options.interrupt = &g_interrupt;
  // A window is an interactive session: pause, step and reset keys, and without --duration it
  // runs until the window is closed.
  if (viewing.active()) {
    options.after_frame = viewing.live().observer();
    options.operator_events = &viewing.live().operatorQueue();
  }
  if (viewing.windowed() && !args.duration_given) {
    options.duration_s = std::numeric_limits<double>::infinity();
  }
  const auto input = openInput(args, scene, viewing.windowed());
  options.input = input.get();
  // The result file: statistics of the session (a plain scene is not graded).
  sim::engine::Scorer scorer(scene);
  std::optional<simtrainer_app::ResultOutput> result_file;
  if (!args.result.path.empty()) {
    options.record_header.trainee = args.result.trainee;
    options.record_header.started = sim::engine::utcNow();
    result_file.emplace(args.result,
                        sim::engine::resultHeader(scene, nullptr, args.result.trainee,
                                                  options.record_header.started, args.record),
                        &scorer);
    options.after_step = [&scorer](const sim::engine::Session& session,
                                   const sim::dynamics::StepReport& report) {
      scorer.sample(session, &report);
    };
  }
  auto result = viewing.run([&] { return sim::engine::runHeadless(scene, options); });
  if (viewing.active()) viewing.live().addFigures(result);
  if (result_file) {
    scorer.finish(!result.fault && !result.interrupted);
    result_file->finish(!result.fault && !result.interrupted, simtrainer_app::outcomeOf(result),
                        result.fault ? result.fault->describe() : "");
  }
  std::fputs(sim::engine::formatSummary(scene, result).c_str(), stdout);
  std::fflush(stdout);
  if (result.interrupted) {
    printError("interrupted; trace and recording are complete up to the last step");
    return kExitRunFailed;
  }
  if (result.fault) {
    printError(fmt::format("run stopped by a numerical fault: {}", result.fault->describe()));
    return kExitRunFailed;
  }
  if (const std::string problem = viewing.screenshotProblem(); !problem.empty()) {
    printError(problem);
    return kExitRunFailed;
  }
  return kExitOk;
}

int validateCommand(const std::string& path, const std::vector<std::string>& sets,
                    const std::string& input) {
  const auto scene = sim::engine::loadScene(path, parseOverrides(sets));
  logSceneWarnings(scene);
  const auto& model = scene.model;
  fmt::print(
      "{}: ok: {} bodies, {} joints, {} motors, {} repeaters, {} inputs; "
      "time step {} s, {} substeps\n",
      path, model.bodies.size(), model.joints.size(), model.motors.size(), model.repeaters.size(),
      scene.inputs.size(), model.solver.time_step_s, model.solver.substeps);
  for (const auto& motor : model.motors) {
    fmt::print("motor {}: Mp {} N m, w_xx {} rad/s, r {}, I_m {} kg m^2\n", motor.name,
               motor.stall_torque_Nm, motor.no_load_speed_radps, motor.gear_ratio,
               motor.rotorInertia());
  }
  if (!input.empty()) {
    // Checks the mapping against this scene's pult without opening any device.
    const auto mapping =
        input == "keyboard"
            ? sim::input::defaultKeyboardMapping(sim::engine::inputControls(scene.pult))
            : sim::engine::loadInputMapping(input, scene.pult);
    fmt::print("{}: ok: {} devices, {} bindings\n", mapping.file, mapping.devices.size(),
               mapping.bindings.size());
    for (const auto& line : sim::input::describeMapping(mapping)) fmt::print("  {}\n", line);
  }
  return kExitOk;
}

void printScenarioResult(const sim::engine::ScenarioResult& r) {
  for (const auto& e : r.expectations) {
    fmt::print("  {} {}: {}\n", e.passed ? "ok  " : "FAIL", e.name, e.detail);
  }
  if (r.run.fault) fmt::print("  FAIL numerical fault: {}\n", r.run.fault->describe());
}

struct PlayArgs {
  std::string scenario;
  bool headless = false;
  std::string trace;
  std::string record;
  std::string input;  // as RunArgs::input; empty: no devices (the script alone)
  std::string gamecontrollerdb;
  ViewArgs view;
  simtrainer_app::ResultArgs result;
  int threads = 1;
};

int playCommand(const PlayArgs& args) {
  const auto scenario = sim::engine::loadScenario(args.scenario);
  logSceneWarnings(scenario.scene);
  Viewing viewing(scenario.scene, args.headless, args.view, scenario.duration_s);
  sim::engine::PlayOptions options;
  options.trace_path = args.trace;
  options.record_path = args.record;
  options.interrupt = &g_interrupt;
  options.realtime = viewing.windowed();
  options.threads = args.threads;
  if (viewing.active()) {
    options.after_frame = viewing.live().observer();
    options.operator_events = &viewing.live().operatorQueue();
  }
  if (scenario.scoring.enabled) {
    viewing.forEachView([](sim::engine::SessionView& v) { v.setScored(true); });
  }
  // Devices only when asked: a scenario plays its script alone unless an operator joins it.
  std::unique_ptr<sim::input::InputSystem> input;
  if (!args.input.empty()) {
    RunArgs devices;
    devices.input = args.input;
    devices.gamecontrollerdb = args.gamecontrollerdb;
    input = openInput(devices, scenario.scene, viewing.windowed());
    const std::vector<char> driven = sim::engine::timelineDrivenControls(scenario);
    std::vector<char> warned(driven.size(), 0);
    for (const sim::input::Binding& b : input->mapping().bindings) {
      const auto c = static_cast<std::size_t>(b.control);
      if (c < driven.size() && driven[c] && !warned[c]) {
        warned[c] = 1;
        spdlog::warn(
            "input: control {} is on the scenario's timeline; the timeline drives it, not "
            "the devices",
            scenario.scene.pult.controls[c].name);
      }
    }
    options.input = input.get();
  }
  // The grader, also for the result file (written at once, and when the session ends or throws).
  sim::engine::Scorer scorer(scenario);
  options.scorer = &scorer;
  options.trainee = args.result.trainee;
  options.started = sim::engine::utcNow();
  std::optional<simtrainer_app::ResultOutput> result_file;
  if (!args.result.path.empty()) {
    result_file.emplace(args.result,
                        sim::engine::resultHeader(scenario.scene, &scenario, options.trainee,
                                                  options.started, args.record),
                        &scorer);
  }
  auto result = viewing.run([&] { return sim::engine::playScenario(scenario, options); });
  if (viewing.active()) viewing.live().addFigures(result.run);
  if (result_file) {
    result_file->finish(result.complete, simtrainer_app::outcomeOf(result.run),
                        result.run.fault ? result.run.fault->describe() : "");
  }
  if (result.run.interrupted)
    printError("interrupted; trace and recording are complete up to the last step");
  fmt::print("scenario {} ({}): {}\n", result.name, result.file,
             result.passed() ? "PASSED" : "FAILED");
  fmt::print("  {} steps, {:.6g} s simulated in {:.3g} s (real-time factor {:.4g})\n",
             result.run.steps, result.run.sim_time_s, result.run.wall_time_s,
             result.run.realTimeFactor());
  fmt::print("{}", sim::engine::formatSolveSummary(scenario.scene.model.solver, result.run, "  "));
  printScenarioResult(result);
  simtrainer_app::printGrade(result);
  if (result.run.frames > 0 && options.realtime) {
    fmt::print(
        "  simulation: {} frames, {} overran, {} resyncs; work per frame mean {:.3f} ms, p99 "
        "{:.3f} ms\n",
        result.run.frames, result.run.overruns, result.run.resyncs,
        1e3 * result.run.frame_time.mean(), 1e3 * result.run.frame_time.p99());
  }
  if (result.run.drawn_frames > 0) {
    fmt::print(
        "  view: {} frames drawn ({:.3g} per second), draw time mean {:.3f} ms, p99 {:.3f} ms\n",
        result.run.drawn_frames,
        result.run.draw_wall_s > 0.0
            ? static_cast<double>(result.run.drawn_frames) / result.run.draw_wall_s
            : 0.0,
        1e3 * result.run.draw_time.mean(), 1e3 * result.run.draw_time.p99());
  }
  std::fflush(stdout);
  if (const std::string problem = viewing.screenshotProblem(); !problem.empty()) {
    printError(problem);
    return kExitRunFailed;
  }
  // A graded exercise passes by its score; a regression scenario by its expectations.
  if (result.score.scored) return result.score.passed ? kExitOk : kExitRunFailed;
  return result.passed() ? kExitOk : kExitRunFailed;
}

struct TestArgs {
  std::vector<std::string> paths;
  int jobs = 0;
  std::string junit;
};

int testCommand(const TestArgs& args) {
  const auto files = sim::engine::findScenarios(args.paths);
  if (files.empty()) {
    printError("no scenario files (*.scenario.yaml) found");
    return kExitUsage;
  }
  const int jobs = args.jobs > 0 ? args.jobs : simtrainer_app::machineCores();
  const auto start = std::chrono::steady_clock::now();
  const auto results = sim::engine::runScenarios(
      files, jobs, [](const sim::engine::ScenarioResult& r, std::size_t done, std::size_t total) {
        const int width = 30;
        const int filled = static_cast<int>(width * done / total);
        std::fprintf(stderr, "[%s%s] %zu/%zu %s %s (%.2f s)\n", std::string(filled, '#').c_str(),
                     std::string(width - filled, '.').c_str(), done, total,
                     r.passed() ? "pass" : (r.loaded ? "FAIL" : "ERROR"), r.name.c_str(),
                     r.run.wall_time_s);
      });
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::size_t passed = 0, errors = 0;
  fmt::print("{:<40} {:>7} {:>9} {:>10} {:>8}\n", "scenario", "result", "sim s", "wall s", "RTF");
  for (const auto& r : results) {
    passed += r.passed() ? 1 : 0;
    errors += r.loaded ? 0 : 1;
    fmt::print("{:<40} {:>7} {:>9.3f} {:>10.3f} {:>8.1f}\n", r.name,
               r.passed() ? "pass" : (r.loaded ? "FAIL" : "ERROR"), r.run.sim_time_s,
               r.run.wall_time_s, r.run.realTimeFactor());
  }
  for (const auto& r : results) {
    if (r.passed()) continue;
    fmt::print("\n{} ({}):\n", r.name, r.file);
    if (!r.loaded)
      fmt::print("  ERROR {}\n", r.load_error);
    else
      printScenarioResult(r);
  }
  fmt::print("\n{} of {} scenarios passed ({} load errors) in {:.2f} s on {} threads\n", passed,
             results.size(), errors, wall, jobs);
  std::fflush(stdout);
  if (!args.junit.empty()) {
    std::ofstream out(args.junit, std::ios::binary);
    out << sim::engine::junitXml(results, wall);
    out.flush();
    if (!out) {
      printError("cannot write " + args.junit);
      return kExitUsage;
    }
  }
  if (errors > 0) return kExitUsage;
  return passed == results.size() ? kExitOk : kExitRunFailed;
}

struct ReplayArgs {
  std::string recording;
  bool verify = false;
  bool headless = false;
  double speed = 1.0;
  std::string to_scenario;
  ViewArgs view;
  simtrainer_app::ResultArgs result;
};

int replayHeadless(const ReplayArgs& args);

// `replay` with a window (or a screenshot): the session drawn in 3D as it was, with pause, step,
// seek and speed keys and a timeline of its events.
int replayInView(const ReplayArgs& args) {
  auto recording =
      sim::engine::readRecording(args.recording, sim::engine::RecordingRead::UpToDamage);
  if (!recording.damage.empty()) {
    spdlog::warn("{}; replaying the {} steps before it (its last complete frame)", recording.damage,
                 recording.hashes.size());
  } else if (!recording.complete) {
    spdlog::warn("{}: the recording has no end line (the run was killed); replaying its {} steps",
                 args.recording, recording.hashes.size());
  }
  sim::engine::Replayer replayer(std::move(recording));
  // The view keeps its own copy: a parameter change in the recording replaces the session's.
  const sim::engine::Scene scene = replayer.session().scene();
  const double duration = static_cast<double>(replayer.steps()) * replayer.timeStep();
  Viewing viewing(scene, args.headless, args.view, duration);
  if (!viewing.active()) return replayHeadless(args);  // no window could be made
  viewing.forEachView([](sim::engine::SessionView& v) { v.setReplayMode(true); });
  // The timeline: the recorded faults and changes, and for a scenario's recording its
  // expectations (when each was decided, passed or failed) and penalties, from a graded replay.
  std::vector<sim::engine::TimelineMark> marks =
      sim::engine::recordingMarks(replayer.recording(), replayer.timeStep());
  std::string grade_note;
  if (!replayer.recording().header.scenario_path.empty()) {
    try {
      sim::engine::ReportOptions grading;
      grading.collect = false;
      grading.screenshots = false;
      const sim::engine::GradedReplay graded = sim::engine::gradeRecording(args.recording, grading);
      using Kind = sim::engine::TimelineMark::Kind;
      for (const auto& task : graded.result.score.tasks) {
        if (task.time_s > 0.0 || task.done) {
          marks.push_back({task.time_s, task.done ? Kind::Passed : Kind::Failed, task.name});
        }
      }
      for (const auto& penalty : graded.result.score.penalties) {
        marks.push_back({penalty.time_s, Kind::Penalty, penalty.text});
      }
      if (graded.result.score.scored) {
        grade_note = fmt::format("graded: score {:.0f}/100 (pass {:g}), {} penalties",
                                 graded.result.score.score, graded.result.score.pass_mark,
                                 graded.result.score.penalties.size());
      }
    } catch (const std::exception& e) {
      spdlog::warn(
          "the recording's scenario cannot be graded ({}); its timeline shows faults and changes "
          "only",
          e.what());
    }
  }
  sim::engine::ReplayStatus status;
  status.marks = std::make_shared<const std::vector<sim::engine::TimelineMark>>(std::move(marks));
  sim::engine::ReplayPlayOptions options;
  options.realtime = viewing.windowed();
  options.speed = args.speed;
  options.hold_at_end = viewing.windowed();
  options.stop_at_s =
      args.view.screenshot.empty() ? -1.0 : (args.view.at_s >= 0.0 ? args.view.at_s : duration);
  options.interrupt = &g_interrupt;
  options.status = &status;
  options.operator_events = &viewing.live().operatorQueue();
  options.after_frame =
      viewing.live().observer([&status, &grade_note](sim::engine::FrameSnapshot& snapshot) {
        snapshot.replay = true;
        snapshot.replay_status = status;
        if (!grade_note.empty()) snapshot.notes.push_back(grade_note);
      });
  auto result = viewing.run([&] { return sim::engine::playRecording(replayer, options); });
  viewing.live().addFigures(result);
  fmt::print("replayed {} of {} ({} steps played, seeks included); at step {}, t = {:.3f} s\n",
             args.recording, replayer.recording().scene_path, result.steps, replayer.step(),
             replayer.session().time());
  std::fflush(stdout);
  if (const std::string problem = viewing.screenshotProblem(); !problem.empty()) {
    printError(problem);
    return kExitRunFailed;
  }
  return result.interrupted ? kExitRunFailed : kExitOk;
}

int replayCommand(const ReplayArgs& args) {
  if (!args.result.path.empty()) return simtrainer_app::replayToResult(args.recording, args.result);
  if (!args.verify && args.to_scenario.empty() &&
      ((!args.headless && haveDisplay()) || !args.view.screenshot.empty())) {
    return replayInView(args);
  }
  if (!args.headless && !haveDisplay() && !args.verify && args.to_scenario.empty()) {
    spdlog::info("no display (DISPLAY is not set): replaying headless");
  }
  return replayHeadless(args);
}

int replayHeadless(const ReplayArgs& args) {
  const auto recording = sim::engine::readRecording(args.recording);
  if (!recording.complete) {
    spdlog::warn("{}: the recording has no end line (the run was killed); replaying its {} steps",
                 args.recording, recording.hashes.size());
  }
  if (!args.to_scenario.empty()) {
    const auto scene = sim::engine::loadScene(recording.scene_path, recording.overrides);
    std::ofstream out(args.to_scenario, std::ios::binary);
    out << sim::engine::recordingToScenario(recording, scene.model.solver.time_step_s);
    out.flush();
    if (!out) {
      printError("cannot write " + args.to_scenario);
      return kExitUsage;
    }
    fmt::print("wrote {}\n", args.to_scenario);
    return kExitOk;
  }
  const auto result = sim::engine::replay(recording, args.verify);
  if (result.diverged) {
    printError(fmt::format("replay diverges at step {}{}", result.diverged_step,
                           result.diverged_body.empty()
                               ? std::string()
                               : ", first differing body: " + result.diverged_body));
    return kExitDiverged;
  }
  fmt::print("replayed {} steps of {}{}; final hash {:016x}\n", result.steps, recording.scene_path,
             args.verify ? ", every step identical to the recording" : "", result.final_hash);
  return kExitOk;
}

int devicesCommand(const std::string& gamecontrollerdb) {
  const auto devices = sim::input::listInputDevices(gamecontrollerdb);
  if (devices.empty()) {
    fmt::print("no joysticks or game controllers found\n");
    return kExitOk;
  }
  for (const auto& d : devices) {
    fmt::print("{}: {}{} guid {} axes {} buttons {} hats {}{}\n", d.index, d.name,
               d.is_game_controller ? fmt::format(" [game controller: {}]", d.controller_name)
                                    : std::string(),
               d.guid, d.axes, d.buttons, d.hats, d.opened ? "" : " (could not open)");
  }
  return kExitOk;
}

// `identify efficiency`: eq. 27 of seed 000 fitted to a measured efficiency table.
int identifyEfficiencyCommand(const std::string& path) {
  const auto table = sim::engine::readEfficiencyTable(path);
  sim::dynamics::identify::EfficiencyFit fit;
  try {
    fit = sim::dynamics::identify::fitEfficiency(table.torque_Nm, table.efficiency);
  } catch (const std::invalid_argument& e) {
    throw sim::engine::IdentifyError(path + ": " + e.what());
  }
  fmt::print("efficiency model (seed 000 eq. 27): eta = (M1 (1 - K_ML M_C) - M_C) / M1\n");
  fmt::print("data: {} rows from {}\n", table.torque_Nm.size(), path);
  fmt::print(
      "fit: nonlinear least squares (Levenberg-Marquardt, started from the exact linear fit "
      "of eta = a - b/M1)\n");
  fmt::print("K_ML = {:.5g} 1/(N m)   95% CI [{:.5g}, {:.5g}]\n", fit.K_ML,
             fit.K_ML - fit.K_ML_half_width, fit.K_ML + fit.K_ML_half_width);
  fmt::print("M_C  = {:.5g} N m       95% CI [{:.5g}, {:.5g}]\n", fit.M_C_Nm,
             fit.M_C_Nm - fit.M_C_half_width, fit.M_C_Nm + fit.M_C_half_width);
  fmt::print("residual std {:.3g}, {} degrees of freedom, t(0.975) = {:.4f}\n", fit.residual_std,
             fit.dof, fit.t_quantile);
  return kExitOk;
}

// `identify flexure`: seed 001's synthesis with the elastica in place of FEM.
struct FlexureArgs {
  sim::dynamics::LeafSpring leaf{2.95e9, 0.04, 0.04, 0.0008, 0.12};
  double max_angle_deg = 32.0;
  int samples = 21;
  std::string out, prb_out;
};

void writeFlexureTables(const std::string& path, const std::string& header,
                        const sim::dynamics::FlexureDef& def) {
  std::ofstream out(path);
  if (!out) throw sim::engine::IdentifyError("cannot write " + path);
  out << header << "dof,deformation,load\n";
  const std::pair<const char*, const sim::dynamics::StiffnessCurve*> curves[] = {
      {"x", &def.k_x}, {"y", &def.k_y}, {"z", &def.k_z}};
  for (const auto& [dof, c] : curves) {
    if (!c->isTable() && c->stiffness != 0.0) {  // linear: two points, extended beyond them
      for (const double q : {-1e-3, 1e-3})
        out << fmt::format("{},{:.17g},{:.17g}\n", dof, q, c->stiffness * q);
    }
    for (std::size_t i = 0; i < c->deformation.size(); ++i)
      out << fmt::format("{},{:.17g},{:.17g}\n", dof, c->deformation[i], c->load[i]);
  }
}

int identifyFlexureCommand(const FlexureArgs& args) {
  const double deg = 3.14159265358979323846 / 180.0;
  sim::dynamics::FlexureFit fit;
  try {
    fit = sim::dynamics::fitFlexure(args.leaf, args.max_angle_deg * deg, args.samples);
  } catch (const std::invalid_argument& e) {  // the least-squares fit found no optimum
    throw sim::engine::IdentifyError(std::string("flexure fit failed: ") + e.what());
  }
  if (!fit.planar_ok) {
    throw sim::engine::IdentifyError(fmt::format(
        "flexure fit failed: no planar spring follows the elastica up to {:g} deg (RMS residual "
        "{:.2g}, or no static equilibrium at some load); try a smaller --max-angle",
        args.max_angle_deg, fit.rms_error));
  }
  const auto& l = args.leaf;
  const std::string specimen = fmt::format(
      "# leaf E = {:g} Pa, L = {:g} m, W = {:g} m, t = {:g} m, lever {:g} m; elastica, {} loads "
      "across the lever's end up to {:g} deg\n",
      l.youngs_modulus_Pa, l.length_m, l.width_m, l.thickness_m, l.lever_m, args.samples,
      args.max_angle_deg);
  fmt::print("elastica: {} loads up to {:g} deg (force {:.5g} N at the lever's end)\n",
             args.samples, args.max_angle_deg, fit.samples.back().force_N);
  fmt::print(
      "planar spring (least squares on the lever end and the output angle): a = {:.4f}, b = "
      "{:.4f}, k_x = {:.5g} N/m, k_y = {:.5g} N/m, T'(0) = {:.5g} N m/rad, rms residual "
      "{:.2g}\n",
      fit.a, fit.b, fit.planar.k_x.stiffness, fit.planar.k_y.stiffness, fit.planar.k_z.tangent(0.0),
      fit.rms_error);
  fmt::print("PRB torsion spring (F1 at the lever end): lambda = {:.4f}, k_z(0) = {:.5g} N m/rad\n",
             fit.lambda, fit.prb.k_z.tangent(0.0));
  fmt::print(
      "seed 001 Table 1 figures: lambda (F1 at the leaf's tip) = {:.4f}; F2 centre a = {:.3f}, "
      "drift dx = {:.3f} mm, dy = {:.3f} mm\n",
      fit.lambda_tip, fit.a_f2, 1e3 * fit.drift_x_m, 1e3 * fit.drift_y_m);
  if (!args.out.empty()) {
    writeFlexureTables(
        args.out,
        specimen + fmt::format("# planar spring (seed 001 eq. 2): a = {:.6f}, b = "
                               "{:.6f}{}\n",
                               fit.a, fit.b,
                               fit.planar.k_x.stiffness > 0.0 && fit.planar.k_y.stiffness > 0.0
                                   ? ""
                                   : "; negative k_x or k_y: static model only"),
        fit.planar);
    fmt::print("wrote {}\n", args.out);
  }
  if (!args.prb_out.empty()) {
    writeFlexureTables(
        args.prb_out,
        specimen + fmt::format("# PRB torsion spring: lambda = {:.6f} (seed 001's F1 at the "
                               "lever's end)\n",
                               fit.lambda),
        fit.prb);
    fmt::print("wrote {}\n", args.prb_out);
  }
  if (!fit.positive_secants) {
    fmt::print(
        "note: no compliance centre lets eq. 2 carry these loads with positive k_x, k_y "
        "(a bending leaf's centre drifts without axial force); the planar spring's negative "
        "k_x makes it a static model only, which a scene rejects (docs/dynamics.md)\n");
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("simtrainer"));
  spdlog::set_pattern("simtrainer: %l: %v");
  std::signal(SIGINT, onInterrupt);
  std::signal(SIGTERM, onInterrupt);

  CLI::App app{"simtrainer: real-time training simulator for robot operators"};
  app.require_subcommand(1);
  // URDF packages (package://NAME/...): accepted before or after the subcommand.
  std::vector<std::string> packagePaths;
  app.add_option("--package-path", packagePaths,
                 "Directory searched first for URDF packages (package://NAME/...), before "
                 "ROS_PACKAGE_PATH (repeatable)")
      ->option_text("DIR");
  app.fallthrough();

  RunArgs run;
  auto* runCmd = app.add_subcommand(
      "run", "Run a scene: a 3D window when there is a display, else headless; print a summary");
  runCmd->add_option("SCENE", run.scene, "Scene file (YAML), or a robot (URDF) for a quick look")
      ->required();
  runCmd->add_flag("--headless", run.headless, "Run without a window");
  runCmd->add_flag("--realtime", run.realtime,
                   "Pace frames to the wall clock (default headless: as fast as possible)");
  auto* durationOption =
      runCmd
          ->add_option(
              "--duration", run.duration_s,
              "Simulated time to run, seconds (default 10; with a window: until it is closed)")
          ->check(CLI::Validator(
              [](std::string& text) -> std::string {
                try {
                  const double value = std::stod(text);
                  if (value >= 0.0 && value <= 1e9) return "";
                } catch (const std::exception&) {
                }
                return "expected a number of seconds >= 0, got " + text;
              },
              "SECONDS"));
  runCmd->add_option("--trace", run.trace, "Write a CSV trace to FILE")->option_text("FILE.csv");
  runCmd->add_option("--trace-every", run.trace_every, "Record every Nth step (default 1)")
      ->check(CLI::PositiveNumber);
  runCmd->add_option("--record", run.record, "Record the session (replay with `simtrainer replay`)")
      ->option_text("FILE");
  runCmd
      ->add_option("--set", run.sets,
                   "Override a numeric scene parameter, e.g. motors.drive.t_m=0.5 (repeatable)")
      ->option_text("KEY=VALUE")
      ->allow_extra_args(false);
  runCmd
      ->add_option("--input", run.input,
                   "Drive the pult from devices bound by a mapping file (docs/input.md), or "
                   "`keyboard` for the default keyboard layout")
      ->option_text("MAPPING.yaml|keyboard");
  auto* dbOption =
      runCmd
          ->add_option("--gamecontrollerdb", run.gamecontrollerdb,
                       "Load SDL game-controller mappings (gamecontrollerdb.txt format)")
          ->option_text("FILE");
  dbOption->needs("--input");
  addViewOptions(runCmd, run.view);
  simtrainer_app::addResultOptions(runCmd, run.result);
  simtrainer_app::addThreadsOption(runCmd, run.threads);

  std::string validateScene;
  std::vector<std::string> validateSets;
  auto* validateCmd = app.add_subcommand("validate", "Load and check a scene, then exit");
  validateCmd->add_option("SCENE", validateScene, "Scene file (YAML) or robot (URDF)")->required();
  validateCmd->add_option("--set", validateSets, "Override a numeric scene parameter")
      ->option_text("KEY=VALUE")
      ->allow_extra_args(false);
  std::string validateInput;
  validateCmd
      ->add_option("--input", validateInput,
                   "Also check an input mapping file (or `keyboard`) against the scene's pult")
      ->option_text("MAPPING.yaml|keyboard");

  PlayArgs play;
  auto* playCmd = app.add_subcommand("play", "Play a scenario and check its expectations");
  playCmd->add_option("SCENARIO", play.scenario, "Scenario file (*.scenario.yaml)")->required();
  playCmd->add_flag("--headless", play.headless, "Run without a window");
  playCmd->add_option("--trace", play.trace, "Write a CSV trace to FILE")->option_text("FILE.csv");
  playCmd->add_option("--record", play.record, "Record the session")->option_text("FILE");
  playCmd
      ->add_option("--input", play.input,
                   "An operator drives the controls the timeline does not, from devices bound by a "
                   "mapping file (docs/input.md) or `keyboard`")
      ->option_text("MAPPING.yaml|keyboard");
  playCmd
      ->add_option("--gamecontrollerdb", play.gamecontrollerdb,
                   "Load SDL game-controller mappings (gamecontrollerdb.txt format)")
      ->option_text("FILE")
      ->needs("--input");
  addViewOptions(playCmd, play.view);
  simtrainer_app::addResultOptions(playCmd, play.result);
  simtrainer_app::addThreadsOption(playCmd, play.threads);

  ReplayArgs replayArgs;
  auto* replayCmd = app.add_subcommand(
      "replay",
      "Replay a recorded session: in 3D when there is a display (pause, step, seek, "
      "speed), else headless");
  replayCmd->add_option("RECORDING", replayArgs.recording, "Recording file")->required();
  replayCmd->add_flag("--verify", replayArgs.verify,
                      "Compare every step with the recording; exit 3 at the first difference "
                      "(headless)");
  replayCmd->add_flag("--headless", replayArgs.headless, "Replay without a window");
  replayCmd
      ->add_option("--speed", replayArgs.speed,
                   "Replay speed, 0.25 to 8 (default 1; -/+ in the window)")
      ->check(CLI::Range(0.25, 8.0));
  addViewOptions(replayCmd, replayArgs.view);
  replayCmd
      ->add_option("--to-scenario", replayArgs.to_scenario,
                   "Write a scenario reproducing the recording instead")
      ->option_text("FILE.scenario.yaml");
  simtrainer_app::addResultOptions(replayCmd, replayArgs.result, false);

  simtrainer_app::ReportCommand reportCmd(app);

  TestArgs test;
  auto* testCmd = app.add_subcommand("test", "Run every scenario under the paths (regression)");
  testCmd->add_option("PATH", test.paths, "Scenario files or directories")->required();
  testCmd->add_option("-j,--jobs", test.jobs, "Parallel runs (default: one per core)")
      ->check(CLI::PositiveNumber);
  testCmd->add_option("--junit", test.junit, "Write JUnit XML to FILE")->option_text("FILE.xml");

  auto* devicesCmd = app.add_subcommand("devices", "List joysticks and game controllers (SDL2)");
  std::string devicesDb;
  devicesCmd
      ->add_option("--gamecontrollerdb", devicesDb,
                   "Load SDL game-controller mappings (gamecontrollerdb.txt format) first")
      ->option_text("FILE");

  auto* identifyCmd =
      app.add_subcommand("identify", "Identify drive parameters from measured data");
  identifyCmd->require_subcommand(1);
  std::string efficiencyData;
  auto* identifyEfficiencyCmd = identifyCmd->add_subcommand(
      "efficiency", "Fit K_ML and M_C (seed 000 eq. 27) to an efficiency table, with 95% CIs");
  identifyEfficiencyCmd
      ->add_option("DATA", efficiencyData, "CSV with columns torque_Nm,efficiency ('#' comments)")
      ->required();

  FlexureArgs flexureArgs;
  auto* identifyFlexureCmd = identifyCmd->add_subcommand(
      "flexure",
      "Fit planar-spring and PRB tables of a leaf-spring flexure from the elastica "
      "(seed 001 synthesis)");
  identifyFlexureCmd->add_option("--E", flexureArgs.leaf.youngs_modulus_Pa, "Young's modulus (Pa)")
      ->capture_default_str();
  identifyFlexureCmd->add_option("--L", flexureArgs.leaf.length_m, "leaf length (m)")
      ->capture_default_str();
  identifyFlexureCmd->add_option("--W", flexureArgs.leaf.width_m, "leaf width (m)")
      ->capture_default_str();
  identifyFlexureCmd->add_option("--t", flexureArgs.leaf.thickness_m, "leaf thickness (m)")
      ->capture_default_str();
  identifyFlexureCmd->add_option("--lever", flexureArgs.leaf.lever_m, "lever length (m)")
      ->capture_default_str();
  identifyFlexureCmd
      ->add_option("--max-angle", flexureArgs.max_angle_deg, "largest tip angle (deg)")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 80.0));
  identifyFlexureCmd->add_option("--samples", flexureArgs.samples, "loads (odd)")
      ->capture_default_str()
      ->check(CLI::Range(5, 401));
  identifyFlexureCmd->add_option("--out", flexureArgs.out, "planar-spring tables (CSV)");
  identifyFlexureCmd->add_option("--prb-out", flexureArgs.prb_out, "PRB torque table (CSV)");

#ifdef SIMTRAINER_NET
  simtrainer_app::NetCommands net(app);
#endif

  // Usage errors: one line and exit code 2; --help prints help and exits 0.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    printError(fmt::format("{} (see simtrainer --help)", e.what()));
    return kExitUsage;
  }

  sim::engine::setPackagePath(packagePaths);
  try {
    if (*runCmd) {
      run.duration_given = durationOption->count() > 0;
      return simtrainer_app::guardResult(run.result, [&] { return runCommand(run); });
    }
    if (*playCmd)
      return simtrainer_app::guardResult(play.result, [&] { return playCommand(play); });
    if (*replayCmd)
      return simtrainer_app::guardResult(replayArgs.result,
                                         [&] { return replayCommand(replayArgs); });
    if (reportCmd.chosen()) return reportCmd.run();
    if (*testCmd) return testCommand(test);
    if (*validateCmd) return validateCommand(validateScene, validateSets, validateInput);
    if (*devicesCmd) return devicesCommand(devicesDb);
    if (*identifyEfficiencyCmd) return identifyEfficiencyCommand(efficiencyData);
    if (*identifyFlexureCmd) {
      const auto& l = flexureArgs.leaf;
      if (!(l.youngs_modulus_Pa > 0 && l.length_m > 0 && l.width_m > 0 && l.thickness_m > 0 &&
            l.lever_m >= 0)) {
        printError("identify flexure: E, L, W, t must be > 0 and lever >= 0");
        return kExitUsage;
      }
      flexureArgs.samples |= 1;
      return identifyFlexureCommand(flexureArgs);
    }

#ifdef SIMTRAINER_NET
    simtrainer_app::NetHooks hooks;
    hooks.interrupt = &g_interrupt;
    hooks.make_view = [](const sim::engine::Scene& scene, bool headless, const std::string& camera,
                         const std::string& size) -> sim::engine::FrameObserver {
      // A station draws in its own receive loop: the session it shows is the server's, so a
      // slow picture only shows older states, it never slows the class.
      if (headless || !haveDisplay()) {
        if (!headless) spdlog::info("no display (DISPLAY is not set): running headless");
        return {};
      }
      ViewArgs view;
      view.camera = camera;
      view.size = size;
      std::shared_ptr<sim::engine::SessionView> window;
      try {
        window = std::make_shared<sim::engine::SessionView>(scene, viewSetup(view));
      } catch (const sim::render::RenderError& e) {
        spdlog::warn("no window ({}): running headless", e.what());
        return {};
      }
      logScreenshots(*window);
      return [window](const sim::engine::Session& session, const sim::engine::RunResult& so_far,
                      const std::vector<std::string>& notes) {
        window->show(session, so_far, notes);
        return !window->closed();
      };
    };
    hooks.open_input = [](const sim::engine::Scene& scene, const std::string& source) {
      RunArgs args;
      args.input = source;
      return openInput(args, scene, false);
    };
    if (const int code = net.run(hooks); code >= 0) return code;
#endif
  } catch (const sim::engine::SceneError& e) {
    printError(e.what());
    return kExitUsage;
  } catch (const sim::engine::SceneInvalid& e) {
    for (const auto& error : e.errors()) printError(error.what());
    return kExitUsage;
  } catch (const sim::dynamics::ModelInvalid& e) {
    for (const auto& error : e.errors()) printError(error.field + ": " + error.message);
    return kExitUsage;
  } catch (const sim::engine::RecordingError& e) {
    printError(e.what());
    return kExitUsage;
  } catch (const sim::engine::ResultError& e) {
    printError(e.what());
    return kExitUsage;
  } catch (const sim::engine::IdentifyError& e) {
    printError(e.what());
    return kExitUsage;
  } catch (const sim::engine::TraceError& e) {
    printError(e.what());
    return kExitUsage;
  } catch (const sim::input::InputError& e) {
    printError(e.what());
    return kExitUsage;
  } catch (const std::invalid_argument& e) {  // bad view options (--size, --camera, no display)
    printError(e.what());
    return kExitUsage;
  } catch (const sim::render::RenderError& e) {
    printError(e.what());
    return kExitRunFailed;
  } catch (const std::exception& e) {
    printError(e.what());
    return kExitInternal;
  }
  return kExitUsage;
}
