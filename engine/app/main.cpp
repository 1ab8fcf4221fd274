// simtrainer: the command-line program. Subcommands: run, play, test, replay, validate, devices.
// Exit codes: 0 success; 1 the run failed (numerical fault, or a scenario expectation failed);
// 2 usage or load error (bad flag, unreadable or invalid scene, bad --set); 3 replay divergence;
// 4 internal error.
#include <dynamics/elastica.h>
#include <dynamics/identify.h>
#include <dynamics/simulator.h>
#include <engine/identify_csv.h>
#include <engine/input_mapping.h>
#include <engine/recording.h>
#include <engine/run.h>
#include <engine/scenario.h>
#include <engine/scene.h>
#include <engine/session_view.h>
#include <engine/trace.h>
#include <input/devices.h>
#include <input/input_system.h>
#include <render/view.h>

#include <CLI/CLI.hpp>

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
#include <fstream>
#include <limits>
#include <functional>
#include <memory>
#include <thread>
#include <exception>
#include <string>
#include <vector>

namespace {

constexpr int kExitOk = 0;
constexpr int kExitRunFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitDiverged = 3;
constexpr int kExitInternal = 4;

// Set by SIGINT/SIGTERM: the loops stop after the current step and flush their files.
std::atomic<bool> g_interrupt{false};
extern "C" void onInterrupt(int) { g_interrupt.store(true); }

// One line on stderr (scene validation may report several problems, one per line).
void printError(const std::string& message) {
  std::fprintf(stderr, "simtrainer: error: %s\n", message.c_str());
}

std::vector<sim::engine::Override> parseOverrides(const std::vector<std::string>& texts) {
  std::vector<sim::engine::Override> overrides;
  for (const std::string& text : texts) overrides.push_back(sim::engine::parseOverride(text));
  return overrides;
}

// How `run` and `play` show the scene: a window, screenshots, or nothing.
struct ViewArgs {
  std::string screenshot;  // PNG file
  double at_s = -1.0;      // simulated time of the screenshot; < 0: the end of the run
  std::string camera;      // a scene camera by name
  std::string size = "1280x720";
  std::string shadows = "auto";
  bool no_insets = false;
};

bool haveDisplay() {
  const char* display = std::getenv("DISPLAY");
  return display != nullptr && *display != '\0';
}

// The window (when not headless and there is a display) and/or the screenshot taker of a run.
class Viewing {
 public:
  // Throws a usage error (std::invalid_argument) for a bad --size, --camera or a screenshot
  // without a display.
  Viewing(const sim::engine::Scene& scene, bool headless, const ViewArgs& args, double end_s)
      : args_(args), shot_at_s_(args.at_s >= 0.0 ? args.at_s : end_s) {
    sim::engine::ViewSetup setup;
    setup.camera = args.camera;
    setup.shadows = args.shadows == "on"    ? sim::render::Shadows::On
                    : args.shadows == "off" ? sim::render::Shadows::Off
                                            : sim::render::Shadows::Auto;
    setup.insets = !args.no_insets;
    if (std::sscanf(args.size.c_str(), "%dx%d", &setup.width, &setup.height) != 2 ||
        setup.width < 16 || setup.height < 16 || setup.width > 8192 || setup.height > 8192) {
      throw std::invalid_argument("--size: expected WIDTHxHEIGHT, e.g. 1280x720, got " + args.size);
    }
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
    setup.offscreen = !want_window;
    try {
      view_ = std::make_unique<sim::engine::SessionView>(scene, setup);
      windowed_ = want_window;
      for (const auto& warning : view_->view().bodies().warnings()) spdlog::warn("3D view: {}", warning);
      view_->setScreenshotListener([](const std::string& saved) {
        if (saved.rfind("error: ", 0) == 0) {
          spdlog::error("screenshot: {}", saved.substr(7));
        } else {
          spdlog::info("screenshot saved: {}", saved);
        }
      });
    } catch (const sim::render::RenderError& e) {
      if (!args.screenshot.empty()) throw std::invalid_argument(std::string("3D view: ") + e.what());
      spdlog::warn("no window ({}): running headless", e.what());
    }
  }

  bool windowed() const { return windowed_; }
  bool active() const { return view_ != nullptr; }

  sim::engine::FrameObserver observer() {
    if (!view_) return {};
    return [this](const sim::engine::Session& session, const sim::engine::RunResult& so_far,
                  const std::vector<std::string>& notes) {
      const bool last = so_far.fault.has_value() || g_interrupt.load();
      if (!args_.screenshot.empty() && !shot_taken_ &&
          (session.time() >= shot_at_s_ - 1e-9 || last)) {
        sim::render::writePng(view_->capture(session, so_far, notes), args_.screenshot);
        shot_taken_ = true;
        spdlog::info("screenshot at t = {:.3f} s: {}", session.time(), args_.screenshot);
        return windowed_ ? !view_->closed() : true;
      }
      if (windowed_) {
        view_->show(session, so_far, notes);
        return !view_->closed();
      }
      return true;
    };
  }
  void setKeySink(std::function<void(int, bool)> sink) {
    if (view_) view_->setKeySink(std::move(sink));
  }
  void setRunControl(sim::engine::RunControl* control) {
    if (view_) view_->setRunControl(control);
  }
  bool screenshotMissing() const { return !args_.screenshot.empty() && !shot_taken_; }

 private:
  ViewArgs args_;
  double shot_at_s_;
  std::unique_ptr<sim::engine::SessionView> view_;
  bool windowed_ = false;
  bool shot_taken_ = false;
};

void addViewOptions(CLI::App* command, ViewArgs& args) {
  command->add_option("--screenshot", args.screenshot,
                      "Save a PNG of the 3D view (offscreen when headless; needs an X display, "
                      "e.g. xvfb-run)")
      ->option_text("FILE.png");
  command->add_option("--at", args.at_s, "Simulated time of the screenshot (default: the end)")
      ->option_text("SECONDS")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--camera", args.camera, "View from this camera of the scene")
      ->option_text("NAME");
  command->add_option("--size", args.size, "Window or screenshot size (default 1280x720)")
      ->option_text("WxH");
  command->add_option("--shadows", args.shadows,
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
    for (const auto& name : unbound) spdlog::warn("default keyboard layout: no key left for control {}", name);
  } else {
    mapping = sim::engine::loadInputMapping(args.input, scene.pult);
  }
  sim::input::InputOptions options;
  options.gamecontrollerdb = args.gamecontrollerdb;
  options.sdl_keyboard = !keys_from_window;
  options.log = [](const std::string& line) { spdlog::info("input: {}", line); };
  auto system = std::make_unique<sim::input::InputSystem>(std::move(mapping), options);
  spdlog::info("input mapping {}:", system->mapping().file);
  for (const auto& line : sim::input::describeMapping(system->mapping())) spdlog::info("  {}", line);
  for (const auto& d : system->devices()) {
    if (!d.connected) spdlog::info("input: device {} not connected (waiting for it)", d.id);
  }
  return system;
}

int runCommand(const RunArgs& args) {
  const auto scene = sim::engine::loadScene(args.scene, parseOverrides(args.sets));
  Viewing viewing(scene, args.headless, args.view, args.duration_s);
  sim::engine::RunOptions options;
  options.duration_s = args.duration_s;
  options.trace_path = args.trace;
  options.trace_every = args.trace_every;
  options.record_path = args.record;
  options.realtime = args.realtime || viewing.windowed();  // a window shows real time
  options.after_frame = viewing.observer();
  options.interrupt = &g_interrupt;
  // A window is an interactive session: pause, step and reset keys, and without --duration it
  // runs until the window is closed.
  sim::engine::RunControl control;
  if (viewing.windowed()) {
    options.control = &control;
    viewing.setRunControl(&control);
    if (!args.duration_given) options.duration_s = std::numeric_limits<double>::infinity();
  }
  const auto input = openInput(args, scene, viewing.windowed());
  options.input = input.get();
  if (input && viewing.windowed()) {
    viewing.setKeySink([system = input.get()](int key, bool down) { system->keyEvent(key, down); });
  }
  const auto result = sim::engine::runHeadless(scene, options);
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
  if (viewing.screenshotMissing()) {
    printError("the run ended before the screenshot time (--at)");
    return kExitRunFailed;
  }
  return kExitOk;
}

int validateCommand(const std::string& path, const std::vector<std::string>& sets,
                    const std::string& input) {
  const auto scene = sim::engine::loadScene(path, parseOverrides(sets));
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
    const auto mapping = input == "keyboard"
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
  std::string input;             // as RunArgs::input; empty: no devices (the script alone)
  std::string gamecontrollerdb;
  ViewArgs view;
};

int playCommand(const PlayArgs& args) {
  const auto scenario = sim::engine::loadScenario(args.scenario);
  Viewing viewing(scenario.scene, args.headless, args.view, scenario.duration_s);
  sim::engine::PlayOptions options;
  options.trace_path = args.trace;
  options.record_path = args.record;
  options.interrupt = &g_interrupt;
  options.realtime = viewing.windowed();
  options.after_frame = viewing.observer();
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
        spdlog::warn("input: control {} is on the scenario's timeline; the timeline drives it, not "
                     "the devices", scenario.scene.pult.controls[c].name);
      }
    }
    options.input = input.get();
    if (viewing.windowed()) {
      viewing.setKeySink([system = input.get()](int key, bool down) { system->keyEvent(key, down); });
    }
  }
  const auto result = sim::engine::playScenario(scenario, options);
  if (result.run.interrupted) printError("interrupted; trace and recording are complete up to the last step");
  fmt::print("scenario {} ({}): {}\n", result.name, result.file, result.passed() ? "PASSED" : "FAILED");
  fmt::print("  {} steps, {:.6g} s simulated in {:.3g} s (real-time factor {:.4g})\n",
             result.run.steps, result.run.sim_time_s, result.run.wall_time_s,
             result.run.realTimeFactor());
  printScenarioResult(result);
  if (result.run.render_time.count() > 0) {
    fmt::print("  render {:.3f} ms per frame (mean), {:.3f} ms (max)\n",
               1e3 * result.run.render_time.mean(), 1e3 * result.run.render_time.max());
  }
  std::fflush(stdout);
  if (viewing.screenshotMissing()) {
    printError("the scenario ended before the screenshot time (--at)");
    return kExitRunFailed;
  }
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
  const int jobs = args.jobs > 0 ? args.jobs : std::max(1u, std::thread::hardware_concurrency());
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
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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
    if (!r.loaded) fmt::print("  ERROR {}\n", r.load_error);
    else printScenarioResult(r);
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
  std::string to_scenario;
};

int replayCommand(const ReplayArgs& args) {
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
                           result.diverged_body.empty() ? std::string()
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
  fmt::print("fit: nonlinear least squares (Levenberg-Marquardt, started from the exact linear fit "
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
      for (const double q : {-1e-3, 1e-3}) out << fmt::format("{},{:.17g},{:.17g}\n", dof, q, c->stiffness * q);
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
  fmt::print("planar spring (least squares on the lever end and the output angle): a = {:.4f}, b = "
             "{:.4f}, k_x = {:.5g} N/m, k_y = {:.5g} N/m, T'(0) = {:.5g} N m/rad, rms residual "
             "{:.2g}\n",
             fit.a, fit.b, fit.planar.k_x.stiffness, fit.planar.k_y.stiffness,
             fit.planar.k_z.tangent(0.0), fit.rms_error);
  fmt::print("PRB torsion spring (F1 at the lever end): lambda = {:.4f}, k_z(0) = {:.5g} N m/rad\n",
             fit.lambda, fit.prb.k_z.tangent(0.0));
  fmt::print("seed 001 Table 1 figures: lambda (F1 at the leaf's tip) = {:.4f}; F2 centre a = {:.3f}, "
             "drift dx = {:.3f} mm, dy = {:.3f} mm\n",
             fit.lambda_tip, fit.a_f2, 1e3 * fit.drift_x_m, 1e3 * fit.drift_y_m);
  if (!args.out.empty()) {
    writeFlexureTables(args.out,
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
    writeFlexureTables(args.prb_out,
                       specimen + fmt::format("# PRB torsion spring: lambda = {:.6f} (seed 001's F1 at the "
                                              "lever's end)\n", fit.lambda),
                       fit.prb);
    fmt::print("wrote {}\n", args.prb_out);
  }
  if (!fit.positive_secants) {
    fmt::print("note: no compliance centre lets eq. 2 carry these loads with positive k_x, k_y "
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

  RunArgs run;
  auto* runCmd = app.add_subcommand(
      "run", "Run a scene: a 3D window when there is a display, else headless; print a summary");
  runCmd->add_option("SCENE", run.scene, "Scene file (YAML)")->required();
  runCmd->add_flag("--headless", run.headless, "Run without a window");
  runCmd->add_flag("--realtime", run.realtime,
                   "Pace frames to the wall clock (default headless: as fast as possible)");
  auto* durationOption = runCmd->add_option(
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
  auto* dbOption = runCmd
      ->add_option("--gamecontrollerdb", run.gamecontrollerdb,
                   "Load SDL game-controller mappings (gamecontrollerdb.txt format)")
      ->option_text("FILE");
  dbOption->needs("--input");
  addViewOptions(runCmd, run.view);

  std::string validateScene;
  std::vector<std::string> validateSets;
  auto* validateCmd = app.add_subcommand("validate", "Load and check a scene, then exit");
  validateCmd->add_option("SCENE", validateScene, "Scene file (YAML)")->required();
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

  ReplayArgs replayArgs;
  auto* replayCmd = app.add_subcommand("replay", "Replay a recorded session");
  replayCmd->add_option("RECORDING", replayArgs.recording, "Recording file")->required();
  replayCmd->add_flag("--verify", replayArgs.verify,
                      "Compare every step with the recording; exit 3 at the first difference");
  replayCmd->add_option("--to-scenario", replayArgs.to_scenario,
                        "Write a scenario reproducing the recording instead")
      ->option_text("FILE.scenario.yaml");

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

  auto* identifyCmd = app.add_subcommand("identify", "Identify drive parameters from measured data");
  identifyCmd->require_subcommand(1);
  std::string efficiencyData;
  auto* identifyEfficiencyCmd = identifyCmd->add_subcommand(
      "efficiency", "Fit K_ML and M_C (seed 000 eq. 27) to an efficiency table, with 95% CIs");
  identifyEfficiencyCmd
      ->add_option("DATA", efficiencyData, "CSV with columns torque_Nm,efficiency ('#' comments)")
      ->required();

  FlexureArgs flexureArgs;
  auto* identifyFlexureCmd = identifyCmd->add_subcommand(
      "flexure", "Fit planar-spring and PRB tables of a leaf-spring flexure from the elastica "
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
  identifyFlexureCmd->add_option("--max-angle", flexureArgs.max_angle_deg, "largest tip angle (deg)")
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

  try {
    if (*runCmd) {
      run.duration_given = durationOption->count() > 0;
      return runCommand(run);
    }
    if (*playCmd) return playCommand(play);
    if (*replayCmd) return replayCommand(replayArgs);
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
      ViewArgs view;
      view.camera = camera;
      view.size = size;
      auto viewing = std::make_shared<Viewing>(scene, headless, view, 0.0);
      if (!viewing->active()) return {};
      auto observer = viewing->observer();
      return [viewing, observer](const sim::engine::Session& session,
                                 const sim::engine::RunResult& so_far,
                                 const std::vector<std::string>& notes) {
        return observer(session, so_far, notes);
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
