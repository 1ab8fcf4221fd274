#include <engine/recording.h>
#include <engine/scenario.h>
#include <engine/session.h>
#include <engine/trace.h>
#include <input/input_system.h>

#include "markup.h"
#include "scoring_loader.h"
#include "session_outputs.h"
#include "yaml_reader.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

namespace sim::engine {

namespace {

using namespace detail;

constexpr double kTimeEps = 1e-9;  // s: sample times are sums of steps

// The pult control named by the entry's `control` key, or an error listing the known ones.
int controlOf(Context& ctx, const MapReader& m, const Scene& scene) {
  const std::string control = m.string("control");
  const int index = scene.pult.find(control);
  if (index < 0) {
    std::string known;
    for (const ControlDef& c : scene.pult.controls) known += (known.empty() ? "" : ", ") + c.name;
    ctx.fail(
        m.value("control"), m.join("control"),
        fmt::format("no pult control \"{}\" in scene {} (known: {})", control, scene.file, known));
  }
  return index;
}

TimelineAction readAction(Context& ctx, const YAML::Node& node, const std::string& path,
                          const Scene& scene) {
  const MapReader m(ctx, node, path,
                    {"at", "control", "set", "ramp", "pulse", "hold", "over", "for"});
  TimelineAction a;
  a.line = m.line();
  a.at_s = m.number("at");
  if (a.at_s < 0.0) ctx.fail(m.value("at"), m.join("at"), "expected a time >= 0");
  a.control = controlOf(ctx, m, scene);
  int kinds = 0;
  for (const char* k : {"set", "ramp", "pulse", "hold"}) kinds += m.has(k) ? 1 : 0;
  if (kinds != 1) ctx.fail(node, path, "expected exactly one of set, ramp, pulse, hold");
  if (m.has("set")) {
    a.kind = TimelineAction::Kind::Set;
    a.value = m.number("set");
  } else if (m.has("ramp")) {
    a.kind = TimelineAction::Kind::Ramp;
    a.value = m.number("ramp");
    a.duration_s = m.positive("over");
  } else {
    a.kind = m.has("pulse") ? TimelineAction::Kind::Pulse : TimelineAction::Kind::Hold;
    a.value = m.number(m.has("pulse") ? "pulse" : "hold");
    a.duration_s = m.positive("for");
  }
  if (a.kind != TimelineAction::Kind::Ramp) m.forbid("over", "only a ramp has `over`");
  if (a.kind == TimelineAction::Kind::Set || a.kind == TimelineAction::Kind::Ramp) {
    m.forbid("for", "only a pulse or a hold has `for`");
  }
  return a;
}

ScheduledFault readFault(Context& ctx, const YAML::Node& node, const std::string& path,
                         const Scene& scene) {
  const MapReader m(ctx, node, path, {"at", "motor", "signal", "control", "fault", "value"});
  ScheduledFault f;
  f.line = m.line();
  f.at_s = m.number("at");
  if (f.at_s < 0.0) ctx.fail(m.value("at"), m.join("at"), "expected a time >= 0");
  if (m.has("control")) {
    for (const char* other : {"motor", "signal"})
      m.forbid(other, "give one of motor, signal or control");
    f.motor = -1;
    f.control = controlOf(ctx, m, scene);
    const std::string control = m.string("control");
    const std::string kind = m.string("fault");
    if (!parseControlFaultKind(kind, f.control_fault.kind)) {
      ctx.fail(m.value("fault"), m.join("fault"),
               "expected axis_stuck or none, got \"" + kind + "\"");
    }
    if (f.control_fault.kind == ControlFault::Kind::AxisStuck && m.has("value")) {
      const ControlDef& def = scene.pult.controls[static_cast<std::size_t>(f.control)];
      f.control_fault.value = m.number("value");
      if (def.admit(f.control_fault.value) != f.control_fault.value) {
        ctx.fail(m.value("value"), m.join("value"),
                 fmt::format("control \"{}\" cannot show {:g} (it would show {:g})", control,
                             f.control_fault.value, def.admit(f.control_fault.value)));
      }
    } else if (f.control_fault.kind == ControlFault::Kind::AxisStuck) {
      f.hold_current = true;
    } else {
      m.forbid("value", "only axis_stuck (the value held) has a value");
    }
    return f;
  }
  if (m.has("signal")) {
    m.forbid("motor", "give either motor or signal");
    f.motor = -1;
    f.signal = m.string("signal");
    std::string error;
    f.sensor = schemeSensorIndex(scene, f.signal, error);
    if (f.sensor < 0) ctx.fail(m.value("signal"), m.join("signal"), error);
    const std::string kind = m.string("fault");
    if (!parseSensorFaultKind(kind, f.sensor_fault.kind)) {
      ctx.fail(m.value("fault"), m.join("fault"),
               "expected noise, dropout or none, got \"" + kind + "\"");
    }
    if (f.sensor_fault.kind == SensorFault::Kind::Noise) {
      f.sensor_fault.value = m.number("value");
      if (!(f.sensor_fault.value > 0.0 && std::isfinite(f.sensor_fault.value))) {
        ctx.fail(m.value("value"), m.join("value"), "expected a standard deviation > 0");
      }
    } else {
      m.forbid("value", "only noise (the standard deviation) has a value");
    }
    return f;
  }
  const std::string motor = m.string("motor");
  f.motor = -1;
  std::string known;
  for (std::size_t i = 0; i < scene.model.motors.size(); ++i) {
    if (scene.model.motors[i].name == motor) f.motor = static_cast<int>(i);
    known += (known.empty() ? "" : ", ") + scene.model.motors[i].name;
  }
  if (f.motor < 0) {
    ctx.fail(m.value("motor"), m.join("motor"),
             fmt::format("no motor \"{}\" in scene {} (known: {})", motor, scene.file, known));
  }
  const std::string kind = m.string("fault");
  if (!parseMotorFaultKind(kind, f.fault.kind)) {
    ctx.fail(m.value("fault"), m.join("fault"),
             "expected stuck, weak, reversed, brake_released or none, got \"" + kind + "\"");
  }
  if (f.fault.kind == MotorFault::Kind::Weak) {
    f.fault.value = m.has("value") ? m.number("value") : 0.5;
    if (!(f.fault.value >= 0.0 && f.fault.value <= 1.0))
      ctx.fail(m.value("value"), m.join("value"), "expected a factor in [0, 1]");
  } else if (f.fault.kind == MotorFault::Kind::Stuck) {
    f.fault.value = m.has("value") ? m.number("value") : 0.0;
    if (!(f.fault.value >= -1.0 && f.fault.value <= 1.0))
      ctx.fail(m.value("value"), m.join("value"), "expected a voltage in [-1, 1]");
  } else {
    m.forbid("value", "only stuck (the held voltage) and weak (the factor) have a value");
  }
  if (f.fault.kind == MotorFault::Kind::BrakeReleased &&
      !(scene.model.motors[static_cast<std::size_t>(f.motor)].brake_torque > 0.0)) {
    ctx.fail(m.value("fault"), m.join("fault"),
             fmt::format("motor \"{}\" has no brake (motors[].brake in {})", motor, scene.file));
  }
  return f;
}

std::string boundsText(const Expectation& e) {
  if (e.min && e.max) return fmt::format("in [{:.9g}, {:.9g}]", *e.min, *e.max);
  if (e.min) return fmt::format(">= {:.9g}", *e.min);
  return fmt::format("<= {:.9g}", *e.max);
}

Expectation readExpectation(Context& ctx, const YAML::Node& node, const std::string& path,
                            Scenario& scenario) {
  const MapReader m(ctx, node, path, {"name", "signal", "at", "during", "by", "min", "max"});
  Expectation e;
  e.line = m.line();
  const std::string signal = m.string("signal");
  std::string error;
  auto ref = resolveSignal(signal, scenario.scene.model, scenario.scene.pult, scenario.scene.scheme,
                           scenario.sensors, error);
  if (!ref) ctx.fail(m.value("signal"), m.join("signal"), error);
  e.signal = *ref;
  if (m.has("min")) e.min = m.number("min");
  if (m.has("max")) e.max = m.number("max");
  if (!e.min && !e.max) ctx.fail(node, m.join("min"), "missing (give min, max or both)");
  if (e.min && e.max && *e.min > *e.max) ctx.fail(node, m.join("max"), "expected max >= min");
  int kinds = 0;
  for (const char* k : {"at", "during", "by"}) kinds += m.has(k) ? 1 : 0;
  if (kinds > 1) ctx.fail(node, path, "give at most one of at, during, by (none: at the end)");
  std::string when = "at the end";
  if (m.has("at")) {
    e.kind = Expectation::Kind::At;
    e.from_s = e.to_s = m.number("at");
    when = fmt::format("at {:g} s", e.from_s);
  } else if (m.has("during")) {
    e.kind = Expectation::Kind::During;
    const auto w = ctx.numbers(m.value("during"), m.join("during"), 2, "a window [from, to] in s");
    e.from_s = w[0];
    e.to_s = w[1];
    if (!(w[0] <= w[1])) ctx.fail(m.value("during"), m.join("during"), "expected from <= to");
    when = fmt::format("during [{:g}, {:g}] s", w[0], w[1]);
  } else if (m.has("by")) {
    e.kind = Expectation::Kind::By;
    e.to_s = m.number("by");
    when = fmt::format("by {:g} s", e.to_s);
  }
  if (e.kind != Expectation::Kind::End && e.to_s > scenario.duration_s + kTimeEps) {
    ctx.fail(node, path,
             fmt::format("checks at {:g} s, after the scenario ends ({:g} s)", e.to_s,
                         scenario.duration_s));
  }
  e.name = m.has("name") ? m.string("name") : fmt::format("{} {} {}", signal, boundsText(e), when);
  return e;
}

bool within(const Expectation& e, double v) {
  return (!e.min || v >= *e.min) && (!e.max || v <= *e.max);
}

// A value with 6 significant digits, or as many more as it takes for the printed value to fall
// on the same side of the bounds as the value itself ("0.52 expected in [0.52, 0.52]" misleads).
std::string shown(const Expectation& e, double v) {
  for (int digits = 6; digits < 17; ++digits) {
    std::string text = fmt::format("{:.{}g}", v, digits);
    if (!std::isfinite(v) || within(e, std::strtod(text.c_str(), nullptr)) == within(e, v))
      return text;
  }
  return fmt::format("{}", v);
}

std::string observed(const Expectation& e, double v, double t) {
  return fmt::format("{} = {} at t = {:.6g} s, expected {}", e.signal.text, shown(e, v), t,
                     boundsText(e));
}

void decide(ExpectationResult& r, bool passed, double t, std::string detail) {
  r.decided = true;
  r.passed = passed;
  r.time_s = t;
  r.detail = std::move(detail);
}

}  // namespace

Scenario loadScenarioFromString(const std::string& yaml, const std::string& file) {
  Context ctx;
  ctx.file = file;
  const YAML::Node root = parseYaml(yaml, file);
  if (!root.IsDefined() || root.IsNull()) ctx.failAt(0, "", "the scenario file is empty");
  const MapReader top(ctx, root, "",
                      {"name", "description", "scene", "set", "duration", "timeline", "faults",
                       "changes", "expect", "scoring", "report"});
  Scenario s;
  s.file = file;
  s.name =
      top.has("name") ? top.string("name") : std::filesystem::path(file).stem().stem().string();
  std::vector<Override> overrides;
  if (top.has("set")) {
    const YAML::Node set = top.value("set");
    if (!set.IsMap()) ctx.fail(set, "set", "expected a map of scene key: number");
    for (const auto& entry : set) {
      const std::string key = entry.first.Scalar();
      try {
        overrides.push_back(
            parseOverride(key + "=" + (entry.second.IsScalar() ? entry.second.Scalar() : "")));
      } catch (const SceneError& e) {
        ctx.fail(entry.second, "set." + key, e.message());
      }
    }
  }
  const std::string scene_path =
      (std::filesystem::path(file).parent_path() / top.string("scene")).lexically_normal().string();
  if (std::error_code ec; !std::filesystem::is_regular_file(scene_path, ec)) {
    ctx.fail(top.value("scene"), "scene", fmt::format("no scene file {}", scene_path));
  }
  try {
    s.scene = loadScene(scene_path, overrides);
  } catch (const SceneError& e) {
    // A `set:` key the scene does not have is this file's mistake: name its line.
    const std::string prefix = "--set ";
    if (e.key().rfind(prefix, 0) != 0 || !top.has("set")) throw;
    const std::string key = e.key().substr(prefix.size());
    const YAML::Node set = top.value("set");
    for (const auto& entry : set) {
      if (entry.first.Scalar() == key)
        ctx.fail(entry.first, "set." + key, e.message() + " (scene " + scene_path + ")");
    }
    throw;
  }
  s.duration_s = top.positive("duration");
  // Something scheduled after the end would silently never happen.
  auto within_run = [&](const YAML::Node& node, const std::string& path, double at_s) {
    if (at_s > s.duration_s + kTimeEps) {
      ctx.fail(node["at"], path + ".at",
               fmt::format("at {:g} s is after the scenario ends ({:g} s)", at_s, s.duration_s));
    }
  };
  for (const auto& [node, path] : listItems(ctx, top, "timeline", false)) {
    s.timeline.push_back(readAction(ctx, node, path, s.scene));
    within_run(node, path, s.timeline.back().at_s);
  }
  for (const auto& [node, path] : listItems(ctx, top, "faults", false)) {
    s.faults.push_back(readFault(ctx, node, path, s.scene));
    within_run(node, path, s.faults.back().at_s);
  }
  for (const auto& [node, path] : listItems(ctx, top, "changes", false)) {
    const MapReader m(ctx, node, path, {"at", "set", "value"});
    ScheduledChange c;
    c.line = m.line();
    c.at_s = m.number("at");
    if (c.at_s < 0.0) ctx.fail(m.value("at"), m.join("at"), "expected a time >= 0");
    // Checked now, alone on the scenario's scene: a bad key, value or structure change is an
    // error naming this line, not a failure in the middle of the run.
    const std::string key = m.string("set");
    const YAML::Node value = m.require("value");
    try {
      c.change = parseOverride(key + "=" + (value.IsScalar() ? value.Scalar() : ""));
    } catch (const SceneError& e) {
      ctx.fail(value, m.join("value"), e.message());
    }
    std::string why;
    try {
      std::vector<Override> with = overrides;
      with.push_back(c.change);
      why = sameStructure(s.scene, loadScene(s.scene.file, with));
    } catch (const SceneInvalid& e) {
      why = e.what();
    } catch (const SceneError& e) {
      why = e.what();
    }
    if (!why.empty()) ctx.fail(m.value("set"), m.join("set"), "cannot change " + key + ": " + why);
    within_run(node, path, c.at_s);
    s.changes.push_back(c);
  }
  std::stable_sort(
      s.changes.begin(), s.changes.end(),
      [](const ScheduledChange& a, const ScheduledChange& b) { return a.at_s < b.at_s; });
  for (const auto& [node, path] : listItems(ctx, top, "expect")) {
    s.expectations.push_back(readExpectation(ctx, node, path, s));
  }
  if (top.has("scoring")) s.scoring = readScoring(ctx, top.value("scoring"), "scoring", s);
  if (top.has("report")) s.report = readReport(ctx, top.value("report"), "report", s);
  s.source_hash = 14695981039346656037ull;
  hashBytes(s.source_hash, yaml);
  return s;
}

Scenario loadScenario(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SceneError(path, 0, "", "cannot open scenario file");
  std::stringstream text;
  text << in.rdbuf();
  return loadScenarioFromString(text.str(), path);
}

namespace {

// Value after the first `count` actions of the control's timeline, at time t.
double valueAfter(const Scenario& s, int control, std::size_t count, double t) {
  double v = s.scene.pult.controls[static_cast<std::size_t>(control)].initial;
  for (std::size_t k = 0; k < count; ++k) {
    const TimelineAction& a = s.timeline[k];
    if (a.control != control || t + kTimeEps < a.at_s) continue;
    switch (a.kind) {
      case TimelineAction::Kind::Set: v = a.value; break;
      case TimelineAction::Kind::Ramp: {
        const double from = valueAfter(s, control, k, a.at_s);
        const double f = std::min(1.0, (t - a.at_s) / a.duration_s);
        v = from + std::max(0.0, f) * (a.value - from);
        break;
      }
      case TimelineAction::Kind::Pulse:
        if (t + kTimeEps < a.at_s + a.duration_s) v = a.value;
        break;
      case TimelineAction::Kind::Hold:
        v = t + kTimeEps < a.at_s + a.duration_s
                ? a.value
                : s.scene.pult.controls[static_cast<std::size_t>(control)].initial;
        break;
    }
  }
  return v;
}

}  // namespace

double timelineValue(const Scenario& scenario, int control, double t_s) {
  return valueAfter(scenario, control, scenario.timeline.size(), t_s);
}

ExpectationChecker::ExpectationChecker(const Scenario& scenario)
    : scenario_(scenario), checks_(scenario.expectations.size()) {
  for (const Expectation& e : scenario.expectations)
    results_.push_back(ExpectationResult{e.name, false, "", false, 0.0});
}

void ExpectationChecker::sample(const Session& session) {
  session.readSensors(scenario_.sensors, sensors_);
  const double t = session.time();
  for (std::size_t i = 0; i < checks_.size(); ++i) {
    const Expectation& e = scenario_.expectations[i];
    Check& c = checks_[i];
    ExpectationResult& r = results_[i];
    const double v = session.signal(e.signal, sensors_);
    c.sampled = true;
    c.last_value = v;
    c.last_t = t;
    if (e.kind == Expectation::Kind::During && t + kTimeEps >= e.from_s && t - kTimeEps <= e.to_s) {
      if (!c.in_window || v < c.low) c.low = v, c.low_t = t;
      if (!c.in_window || v > c.high) c.high = v, c.high_t = t;
      c.in_window = true;
    }
    if (r.decided) continue;
    switch (e.kind) {
      case Expectation::Kind::At:
        if (t + kTimeEps >= e.from_s) decide(r, within(e, v), t, observed(e, v, t));
        break;
      case Expectation::Kind::During:
        if (t + kTimeEps < e.from_s) break;
        if (t - kTimeEps > e.to_s) {
          decide(r, true, e.to_s,
                 fmt::format("{} stayed {} during [{:g}, {:g}] s", e.signal.text, boundsText(e),
                             e.from_s, e.to_s));
        } else if (!within(e, v)) {
          decide(r, false, t, observed(e, v, t));
        }
        break;
      case Expectation::Kind::By:
        if (t - kTimeEps > e.to_s) {
          decide(r, false, t,
                 fmt::format("{} never {} by {:g} s (last {})", e.signal.text, boundsText(e),
                             e.to_s, shown(e, v)));
        } else if (within(e, v)) {
          decide(r, true, t, observed(e, v, t));
        }
        break;
      case Expectation::Kind::End: break;
    }
  }
}

void ExpectationChecker::addRange(const Expectation& e, const Check& c, ExpectationResult& r,
                                  bool cut_short) {
  if (!c.in_window) return;
  r.detail += fmt::format("; {} the window {} ranged from {} (t = {:.6g} s) to {} (t = {:.6g} s)",
                          cut_short ? "in what ran of" : "over", e.signal.text, shown(e, c.low),
                          c.low_t, shown(e, c.high), c.high_t);
}

void ExpectationChecker::finish(double end_t) {
  for (std::size_t i = 0; i < checks_.size(); ++i) {
    const Expectation& e = scenario_.expectations[i];
    const Check& c = checks_[i];
    ExpectationResult& r = results_[i];
    // A `during`'s range is added once, here: its window has closed or the run has ended.
    if (e.kind == Expectation::Kind::During) addRange(e, checks_[i], r, end_t + kTimeEps < e.to_s);
    if (r.decided) continue;
    switch (e.kind) {
      case Expectation::Kind::At:
        decide(r, false, end_t,
               fmt::format("the run ended at {:.6g} s before {:g} s", end_t, e.from_s));
        break;
      case Expectation::Kind::During:
        if (end_t + kTimeEps >= e.to_s) {
          decide(r, true, e.to_s,
                 fmt::format("{} stayed {} during [{:g}, {:g}] s", e.signal.text, boundsText(e),
                             e.from_s, e.to_s));
        } else {
          decide(r, false, end_t,
                 fmt::format("the run ended at {:.6g} s inside the window", end_t));
        }
        break;
      case Expectation::Kind::By:
        decide(r, false, end_t,
               fmt::format("{} never {} by {:g} s (last {} at {:.6g} s)", e.signal.text,
                           boundsText(e), e.to_s, shown(e, c.last_value), c.last_t));
        break;
      case Expectation::Kind::End:
        decide(r, within(e, c.last_value), c.last_t, observed(e, c.last_value, c.last_t));
        break;
    }
  }
}

bool ScenarioResult::passed() const {
  if (!loaded || run.fault || run.interrupted) return false;
  for (const ExpectationResult& e : expectations)
    if (!e.passed) return false;
  return true;
}

std::string ScenarioResult::failureSummary() const {
  std::string text;
  if (!loaded) return load_error;
  if (run.fault) text += "numerical fault: " + run.fault->describe() + "\n";
  for (const ExpectationResult& e : expectations)
    if (!e.passed) text += fmt::format("expectation failed: {}: {}\n", e.name, e.detail);
  return text;
}

void applyDueFaults(const std::vector<ScheduledFault>& faults, std::vector<char>& applied,
                    Session& session) {
  for (std::size_t k = 0; k < faults.size(); ++k) {
    if (applied[k] || faults[k].at_s > session.time() + kTimeEps) continue;
    if (faults[k].sensor >= 0) {
      session.setSensorFault(faults[k].sensor, faults[k].sensor_fault);
    } else if (faults[k].control >= 0) {
      ControlFault f = faults[k].control_fault;
      if (faults[k].hold_current)
        f.value = session.state().pult.values[static_cast<std::size_t>(faults[k].control)];
      session.setControlFault(faults[k].control, f);
    } else {
      session.setMotorFault(faults[k].motor, faults[k].fault);
    }
    applied[k] = 1;
  }
}

std::vector<char> timelineDrivenControls(const Scenario& scenario) {
  std::vector<char> driven(scenario.scene.pult.controls.size(), 0);
  for (const TimelineAction& a : scenario.timeline) driven[static_cast<std::size_t>(a.control)] = 1;
  return driven;
}

ScenarioResult playScenario(const Scenario& scenario, const PlayOptions& options) {
  ScenarioResult result;
  result.file = scenario.file;
  result.name = scenario.name;
  result.loaded = true;
  Session session(scenario.scene);
  session.setThreads(options.threads);
  result.run.threads = session.threads();
  RecordingHeader header{scenario.file, scenario.source_hash, options.trainee, options.started};
  detail::SessionOutputs outputs(session, options.trace_path, options.trace_every,
                                 options.record_path, header);
  std::unique_ptr<Scorer> own_scorer;
  if (!options.scorer) own_scorer = std::make_unique<Scorer>(scenario);
  Scorer& scorer = options.scorer ? *options.scorer : *own_scorer;
  const std::vector<char> driven = timelineDrivenControls(scenario);
  std::vector<char> faults_applied(scenario.faults.size(), 0);
  std::size_t changes_applied = 0;
  auto applyTimeline = [&]() {
    applyDueFaults(scenario.faults, faults_applied, session);
    for (; changes_applied < scenario.changes.size() &&
           scenario.changes[changes_applied].at_s <= session.time() + kTimeEps;
         ++changes_applied) {
      std::vector<Override> overrides = session.scene().overrides;
      overrides.push_back(scenario.changes[changes_applied].change);
      const std::string why = session.changeScene(loadScene(scenario.scene.file, overrides));
      if (!why.empty()) {
        throw SceneError(scenario.file, scenario.changes[changes_applied].line, "changes", why);
      }
    }
    for (std::size_t c = 0; c < driven.size(); ++c)
      if (driven[c])
        session.setControl(static_cast<int>(c),
                           timelineValue(scenario, static_cast<int>(c), session.time()));
  };
  applyTimeline();
  scorer.sample(session);
  const std::uint64_t steps =
      stepCount(scenario.duration_s, scenario.scene.model.solver.time_step_s);
  const auto start = std::chrono::steady_clock::now();
  const auto steps_per_frame = static_cast<std::uint64_t>(scenario.scene.stepsPerFrame());
  const double frame_dt =
      static_cast<double>(steps_per_frame) * scenario.scene.model.solver.time_step_s;
  FramePacer pacer(frame_dt, options.realtime);
  // The timeline's controls stay its own: applyTimeline sets them at every step, after the
  // devices are sampled. No reset: a scenario's timeline and expectations run once.
  detail::OperatorFrame operator_frame(options.operator_events, options.input, nullptr,
                                       options.on_operator_key, false);
  std::vector<std::string> notes;
  std::uint64_t done = 0;  // steps
  bool healthy = true;
  while (done < steps && healthy) {
    if (options.interrupt && options.interrupt->load()) {
      result.run.interrupted = true;
      break;
    }
    const auto frame_start = std::chrono::steady_clock::now();
    pacer.beginFrame();
    if (options.before_frame) options.before_frame(result.run.frames);
    operator_frame.takeEvents();
    operator_frame.sampleInto(session, frame_dt);
    const bool runs = operator_frame.runsSteps();
    for (std::uint64_t k = 0; runs && k < steps_per_frame && done < steps; ++k, ++done) {
      applyTimeline();
      healthy = outputs.step(session, result.run);
      scorer.sample(session, &outputs.lastReport());  // the grader ignores a faulted step
      if (options.after_step) options.after_step(session, outputs.lastReport());
      if (!healthy) break;  // a numerical fault ends the run at once
    }
    if (!healthy) break;
    ++result.run.frames;
    result.run.frame_time.add(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - frame_start).count());
    result.run.paused = operator_frame.control().paused;
    result.run.reset_refused = operator_frame.control().reset_refused;
    if (options.after_frame) {
      notes.assign(1,
                   fmt::format("scenario {}: {:.1f} / {:.1f} s, {} expectations", scenario.name,
                               session.time(), scenario.duration_s, scenario.expectations.size()));
      result.run.score = scorer.live();  // the HUD's score panel
      if (!detail::observeFrame(options.after_frame, session, result.run, pacer, start, notes)) {
        break;
      }
    }
    pacer.endFrame();
    if (!runs) {
      result.run.paused_wall_s +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - frame_start).count();
    }
  }
  result.run.overruns = pacer.overruns();
  result.run.resyncs = pacer.resyncs();
  result.run.lost_s = pacer.lostSeconds();
  result.run.wall_time_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.run.sim_time_s = session.time();
  outputs.finish(session, result.run);
  result.complete = result.run.steps == steps && !result.run.fault;
  scorer.finish(result.complete);
  result.expectations = scorer.expectations();
  result.score = scorer.sheet();
  result.stats = scorer.stats();
  result.run.score = scorer.live();
  result.run.final_state = session.dynamics();
  result.final_hash = session.hash();
  return result;
}

namespace {

// Runs `work` for the scenario file `path`; an error it throws becomes the result's load_error.
template <class Work>
ScenarioResult reportingErrors(const std::string& path, Work&& work) {
  ScenarioResult r;
  try {
    return work();
  } catch (const SceneInvalid& e) {
    for (const SceneError& error : e.errors()) r.load_error += std::string(error.what()) + "\n";
  } catch (const std::exception& e) {
    r.load_error = e.what();
  }
  r.file = path;
  r.name = std::filesystem::path(path).stem().stem().string();
  return r;
}

}  // namespace

ScenarioResult runScenarioFile(const std::string& path) {
  return reportingErrors(path, [&] { return playScenario(loadScenario(path)); });
}

std::vector<std::string> findScenarios(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(p, ec)) {
        const std::string name = entry.path().filename().string();
        if (entry.is_regular_file() && name.size() > 14 &&
            name.compare(name.size() - 14, 14, ".scenario.yaml") == 0) {
          files.push_back(entry.path().string());
        }
      }
    } else {
      files.push_back(p);  // a missing file becomes a failed result naming it
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<ScenarioResult> runScenarios(
    const std::vector<std::string>& files, int jobs,
    const std::function<void(const ScenarioResult&, std::size_t, std::size_t)>& progress) {
  std::vector<ScenarioResult> results(files.size());
  // Every file is loaded here, before any worker starts: a model file's reader runs in a forked
  // child (isolated_call.h), and a fork while other threads allocate can leave the child waiting
  // for a lock no thread of it will release (seen under AddressSanitizer, whose allocator has no
  // fork handlers in GCC 12: a reader stopped at its 60 s limit).
  std::vector<std::optional<Scenario>> scenarios(files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    results[i] = reportingErrors(files[i], [&] {
      scenarios[i] = loadScenario(files[i]);
      return ScenarioResult{};
    });
  }
  std::atomic<std::size_t> next{0};
  std::size_t done = 0;
  std::mutex lock;
  auto worker = [&]() {
    for (std::size_t i = next++; i < files.size(); i = next++) {
      if (scenarios[i]) {
        results[i] = reportingErrors(files[i], [&] { return playScenario(*scenarios[i]); });
        scenarios[i].reset();
      }
      const std::lock_guard<std::mutex> guard(lock);
      ++done;
      if (progress) progress(results[i], done, files.size());
    }
  };
  const int threads = std::max(1, std::min<int>(jobs, static_cast<int>(files.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  // One run's results are told apart by name (JUnit test cases, the summary): a second file with
  // a name already taken fails, naming the first.
  std::map<std::string, std::size_t> first;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (!results[i].load_error.empty()) continue;
    const auto [it, fresh] = first.emplace(results[i].name, i);
    if (fresh) continue;
    results[i].loaded = false;  // reported as a load error: the file must change
    results[i].load_error = fmt::format(
        "{}: the scenario name \"{}\" is also that of {} in this run; give one a "
        "different `name`\n",
        files[i], results[i].name, files[it->second]);
  }
  return results;
}

std::string junitXml(const std::vector<ScenarioResult>& results, double wall_time_s) {
  std::size_t failures = 0, errors = 0;
  for (const ScenarioResult& r : results) {
    if (!r.loaded)
      ++errors;
    else if (!r.passed())
      ++failures;
  }
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml += fmt::format(
      "<testsuites tests=\"{0}\" failures=\"{1}\" errors=\"{2}\" time=\"{3:.3f}\">\n"
      "  <testsuite name=\"simtrainer scenarios\" tests=\"{0}\" failures=\"{1}\" errors=\"{2}\" "
      "time=\"{3:.3f}\">\n",
      results.size(), failures, errors, wall_time_s);
  for (const ScenarioResult& r : results) {
    xml +=
        fmt::format("    <testcase classname=\"scenarios\" name=\"{}\" file=\"{}\" time=\"{:.3f}\"",
                    detail::escapeMarkup(r.name), detail::escapeMarkup(r.file), r.run.wall_time_s);
    if (r.passed()) {
      xml += "/>\n";
      continue;
    }
    const std::string summary = r.failureSummary();
    const std::string first = summary.substr(0, summary.find('\n'));
    xml += fmt::format(">\n      <{0} message=\"{1}\">{2}</{0}>\n    </testcase>\n",
                       r.loaded ? "failure" : "error", detail::escapeMarkup(first),
                       detail::escapeMarkup(summary));
  }
  xml += "  </testsuite>\n</testsuites>\n";
  return xml;
}

}  // namespace sim::engine
