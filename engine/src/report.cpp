// The after-action report of one session: the graded replay and its screenshots
// (engine/report.h). The page itself is made by report_html.cpp.
#include <engine/recording.h>
#include <engine/report.h>
#include <engine/run.h>
#include <engine/session_view.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

namespace sim::engine {

namespace {

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void writeText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.flush();
  if (!out) throw ResultError(path + ": cannot write");
}

// Keeps the `capacity` largest penalties (by points, then by value; the earlier on a tie).
void keepWorst(std::vector<Moment>& worst, const Penalty& p, const Session& session,
               std::size_t capacity) {
  if (!(p.points > 0.0) || p.kind == "time") return;
  auto larger = [](const Penalty& a, const Penalty& b) {
    return a.points > b.points || (a.points == b.points && a.value > b.value);
  };
  const auto at = std::find_if(worst.begin(), worst.end(),
                               [&](const Moment& m) { return larger(p, m.penalty); });
  if (at == worst.end() && worst.size() >= capacity) return;
  worst.insert(at, Moment{p, session.state()});
  if (worst.size() > capacity) worst.pop_back();
}

// A fixed camera 2.5 m from the body a penalty is about (the first named, else the motor's or
// joint's body), looking at it from the bearing and height of the report's camera.
CameraDef closeUp(const Scene& scene, const std::string& camera_name, const Moment& moment) {
  const dynamics::Model& model = scene.model;
  int body = -1;
  for (const std::string& name : moment.penalty.bodies) {
    const int b = model.findBody(name);
    if (b >= 0 && !model.bodies[static_cast<std::size_t>(b)].is_static) {
      body = b;
      break;
    }
  }
  if (body < 0 && !moment.penalty.item.empty()) {
    if (const int m = model.findMotor(moment.penalty.item); m >= 0) {
      body = model.joints[static_cast<std::size_t>(model.motors[static_cast<std::size_t>(m)].joint)]
                 .body_b;
    } else if (const int j = model.findJoint(moment.penalty.item); j >= 0) {
      body = model.joints[static_cast<std::size_t>(j)].body_b;
    }
  }
  const CameraDef* base = nullptr;
  for (const CameraDef& c : scene.cameras)
    if (c.name == camera_name) base = &c;
  if (!base && scene.default_camera >= 0)
    base = &scene.cameras[static_cast<std::size_t>(scene.default_camera)];
  const dynamics::State& state = moment.state.dynamics;
  const render::ViewCamera from = SessionView::cameraAt(scene, base, state);
  const dynamics::Vec3 eye(from.eye_m[0], from.eye_m[1], from.eye_m[2]);
  const dynamics::Vec3 target(from.target_m[0], from.target_m[1], from.target_m[2]);
  dynamics::Vec3 back = eye - target;
  if (!(back.norm() > 1e-6)) back = dynamics::Vec3(-1.0, -1.2, 0.9);
  CameraDef close;
  close.name = "report: close-up";
  close.kind = CameraDef::Kind::Fixed;
  close.target_m = body >= 0 ? state.bodies[static_cast<std::size_t>(body)].position_m : target;
  close.position_m = close.target_m + 2.5 * back.normalized();
  close.fov_deg = 50.0;
  return close;
}

}  // namespace

std::vector<ReportPlot> defaultPlots(const Scene& scene, const ScoringDef& scoring) {
  std::vector<ReportPlot> plots;
  const dynamics::Model& model = scene.model;
  if (!model.motors.empty()) {
    ReportPlot voltages{"Motor voltages (u)", {}}, speeds{"Motor speeds (rotor rad/s)", {}};
    for (const auto& m : model.motors) {
      voltages.signals.push_back("motor." + m.name + ".voltage");
      speeds.signals.push_back("motor." + m.name + ".speed");
    }
    plots.push_back(voltages);
    plots.push_back(speeds);
  }
  if (scoring.load >= 0) {
    const std::string load = model.bodies[static_cast<std::size_t>(scoring.load)].name;
    plots.push_back(ReportPlot{"Load height (m)", {"body." + load + ".z"}});
    ReportPlot grip{"Grip force (N)", {}};
    for (int b : scoring.load_held_by) {
      grip.signals.push_back("contact." + load + "." +
                             model.bodies[static_cast<std::size_t>(b)].name + ".force");
    }
    if (!grip.signals.empty()) plots.push_back(grip);
  }
  return plots;
}

GradedReplay gradeRecording(const std::string& recording_path, const ReportOptions& options) {
  GradedReplay g;
  g.recording = recording_path;
  const Recording recording = readRecording(recording_path);
  std::unique_ptr<Scenario> scenario;
  if (!recording.header.scenario_path.empty()) {
    scenario = std::make_unique<Scenario>(loadScenario(recording.header.scenario_path));
    if (scenario->source_hash != recording.header.scenario_hash) {
      const std::string what = fmt::format(
          "{}: the scenario {} has changed since it was recorded (hash {:016x}, recorded {:016x})",
          recording_path, recording.header.scenario_path, scenario->source_hash,
          recording.header.scenario_hash);
      if (!options.force)
        throw RecordingError(what + "; --force grades the session with it as it is now");
      g.warnings.push_back(what + ": graded with it as it is now (--force)");
    }
  }
  g.scene = loadScene(recording.scene_path, recording.overrides);
  if (g.scene.source_hash != recording.scene_hash) {
    const std::string what = fmt::format(
        "{}: the scene {} has changed since it was recorded (hash {:016x}, recorded {:016x})",
        recording_path, recording.scene_path, g.scene.source_hash, recording.scene_hash);
    if (!options.force)
      throw RecordingError(what + "; --force replays it as it is now, unverified");
    g.warnings.push_back(what + ": replayed as it is now (--force)");
  }
  if (options.force)
    g.warnings.push_back("replayed without checking the recorded state hashes (--force)");
  const Scene& scene = g.scene;
  std::unique_ptr<Scorer> scorer =
      scenario ? std::make_unique<Scorer>(*scenario) : std::make_unique<Scorer>(scene);

  // The signals to plot, resolved on the replayed scene.
  std::vector<ReportPlot> plots;
  if (scenario) {
    g.camera = scenario->report.camera;
    plots = scenario->report.plots.empty() ? defaultPlots(scene, scenario->scoring)
                                           : scenario->report.plots;
  } else {
    plots = defaultPlots(scene, ScoringDef{});
  }
  std::vector<SensorDef> sensors;
  std::vector<std::vector<SignalRef>> refs;
  for (const ReportPlot& plot : plots) {
    PlotData data{plot.title, {}};
    refs.emplace_back();
    for (const std::string& signal : plot.signals) {
      std::string error;
      const auto ref = resolveSignal(signal, scene.model, scene.pult, scene.scheme, sensors, error);
      if (!ref)
        throw RecordingError(
            fmt::format("{}: report signal {}: {}", recording_path, signal, error));
      refs.back().push_back(*ref);
      data.series.push_back(SignalSeries{signal, {}, {}});
    }
    g.plots.push_back(std::move(data));
  }

  const std::uint64_t total = recording.hashes.size();
  const std::uint64_t every =
      std::max<std::uint64_t>(1, (total + static_cast<std::uint64_t>(options.max_samples) - 1) /
                                     static_cast<std::uint64_t>(std::max(1, options.max_samples)));
  std::vector<double> values;
  std::size_t penalties_seen = 0;
  ReplayOptions replay_options;
  replay_options.verify = !options.force;
  replay_options.allow_changed_scene = options.force;
  replay_options.on_step = [&](const Session& session, const dynamics::StepReport* report) {
    scorer->sample(session, report);
    if (!options.collect) return;
    const std::uint64_t step = session.stepIndex();
    if (step % every == 0 || step == total) {
      session.readSensors(sensors, values);
      for (std::size_t p = 0; p < refs.size(); ++p) {
        for (std::size_t k = 0; k < refs[p].size(); ++k) {
          SignalSeries& series = g.plots[p].series[k];
          series.t_s.push_back(session.time());
          series.value.push_back(session.signal(refs[p][k], values));
        }
      }
    }
    const std::vector<Penalty>& penalties = scorer->penalties();
    for (; penalties_seen < penalties.size(); ++penalties_seen)
      keepWorst(g.worst, penalties[penalties_seen], session, 3);
  };
  const ReplayResult replayed = replay(recording, replay_options);
  if (replayed.diverged) {
    throw ReplayDiverged(fmt::format(
        "{}: the replay differs from the recording at step {}{}: this build or its scene does not "
        "reproduce the "
        "session (--force reports it anyway, unverified)",
        recording_path, replayed.diverged_step,
        replayed.diverged_body.empty() ? std::string()
                                       : ", first differing body: " + replayed.diverged_body));
  }
  g.verified = replay_options.verify;

  // Complete: every step of the scenario's duration replayed without a fault (a plain scene:
  // the session ended normally).
  const bool fault = recording.outcome == "fault" || !scorer->stats().fault.empty();
  bool complete = false;
  if (scenario) {
    complete = !fault && total == stepCount(scenario->duration_s, scene.model.solver.time_step_s);
  } else {
    complete = recording.complete && (recording.outcome == "ok" || recording.outcome == "closed");
  }
  scorer->finish(complete);
  g.result = resultHeader(scene, scenario.get(), recording.header.trainee, recording.header.started,
                          recording_path);
  g.result.build = recording.build;
  g.result.scene.hash = recording.scene_hash;
  takeGrade(g.result, *scorer);
  setOutcome(g.result, complete, recording.complete ? recording.outcome : "killed",
             scorer->stats().fault);
  return g;
}

ReportFiles writeReport(const std::string& input, const std::string& out_dir,
                        const ReportOptions& options) {
  ReportFiles files;
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec)
    throw ResultError(
        fmt::format("{}: cannot create the report directory: {}", out_dir, ec.message()));
  const std::string head = readBytes(input).substr(0, 64);
  const bool is_result = head.find_first_not_of(" \t\r\n") != std::string::npos &&
                         head[head.find_first_not_of(" \t\r\n")] == '{';
  GradedReplay g;
  if (is_result) {
    const ResultFile result = readResultFile(input);
    if (!result.recording.empty() && std::filesystem::exists(result.recording)) {
      g = gradeRecording(result.recording, options);
    } else {
      g.result = result;
      files.screenshot_note =
          result.recording.empty()
              ? "The session was not recorded (no --record): no plots or screenshots."
              : "The recording " + result.recording + " is not there: no plots or screenshots.";
    }
  } else {
    g = gradeRecording(input, options);
  }
  if (!g.recording.empty()) {
    files.result = (std::filesystem::path(out_dir) / "result.json").string();
    writeResultFile(files.result, g.result);
  }

  // Screenshots of the worst moments, offscreen through the session's own view.
  std::vector<std::string> shots;
  if (!g.worst.empty() && options.screenshots) {
    const char* display = std::getenv("DISPLAY");
    if (display == nullptr || *display == '\0') {
      files.screenshot_note =
          "No X display (DISPLAY is not set): the screenshots of the worst moments are left out; "
          "run the report under xvfb-run to have them.";
    } else {
      try {
        Session session(g.scene);
        const std::string png = (std::filesystem::path(out_dir) / ".shot.png").string();
        for (const Moment& m : g.worst) {
          // A close-up of the body at fault, from the bearing of the report's camera.
          Scene shot_scene = g.scene;
          shot_scene.cameras.push_back(closeUp(g.scene, g.camera, m));
          ViewSetup setup;
          setup.offscreen = true;
          setup.width = options.width;
          setup.height = options.height;
          setup.camera = shot_scene.cameras.back().name;
          SessionView view(shot_scene, setup);
          session.restore(m.state);
          RunResult stats;
          stats.sim_time_s = session.time();
          stats.steps = session.stepIndex();
          render::writePng(view.capture(session, stats, {m.penalty.text}), png);
          shots.push_back(readBytes(png));
        }
        std::filesystem::remove(png, ec);
      } catch (const std::exception& e) {
        shots.clear();
        files.screenshot_note = std::string("The screenshots could not be drawn: ") + e.what();
      }
    }
  } else if (g.worst.empty() && files.screenshot_note.empty() && !g.recording.empty()) {
    files.screenshot_note = "No penalties: no worst moments to show.";
  }
  files.screenshots = static_cast<int>(shots.size());
  files.html = (std::filesystem::path(out_dir) / "index.html").string();
  writeText(files.html, reportHtml(g, shots, files.screenshot_note));
  return files;
}

}  // namespace sim::engine
