#include "scoring_loader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>

namespace sim::engine::detail {

namespace {

std::string knownNames(const std::vector<std::string>& names) {
  std::string known;
  for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
  return known;
}

// Scene items by name for located lookups.
struct Names {
  const Scene& scene;
  std::map<std::string, std::vector<int>> groups;

  std::vector<std::string> bodies() const {
    std::vector<std::string> out;
    for (const auto& b : scene.model.bodies) out.push_back(b.name);
    return out;
  }
  int body(const Context& ctx, const YAML::Node& node, const std::string& key) const {
    const std::string name = ctx.string(node, key);
    const int b = scene.model.findBody(name);
    if (b < 0) {
      ctx.fail(node, key,
               fmt::format("no body \"{}\" in scene {} (known: {})", name, scene.file,
                           knownNames(bodies())));
    }
    return b;
  }
  // A body or a group name: its bodies.
  std::vector<int> bodiesOf(const Context& ctx, const YAML::Node& node,
                            const std::string& key) const {
    const std::string name = ctx.string(node, key);
    if (auto it = groups.find(name); it != groups.end()) return it->second;
    const int b = scene.model.findBody(name);
    if (b < 0) {
      std::vector<std::string> group_names;
      for (const auto& [g, members] : groups) group_names.push_back(g);
      ctx.fail(node, key,
               fmt::format("no body or group \"{}\" (groups: {}; bodies of {}: {})", name,
                           group_names.empty() ? "none" : knownNames(group_names), scene.file,
                           knownNames(bodies())));
    }
    return {b};
  }
  std::vector<int> bodyList(const Context& ctx, const YAML::Node& node,
                            const std::string& key) const {
    if (!node.IsSequence() || node.size() == 0)
      ctx.fail(node, key, "expected a list of body names");
    std::vector<int> out;
    for (std::size_t i = 0; i < node.size(); ++i)
      out.push_back(body(ctx, node[i], fmt::format("{}[{}]", key, i)));
    return out;
  }
  // A list of motor or joint names (default: every one, filtered by `keep`).
  template <typename Items, typename Keep>
  std::vector<int> itemList(const Context& ctx, const MapReader& m, const char* key,
                            const Items& items, const char* kind, Keep keep) const {
    std::vector<int> out;
    if (!m.has(key)) {
      for (std::size_t i = 0; i < items.size(); ++i)
        if (keep(items[i])) out.push_back(static_cast<int>(i));
      return out;
    }
    const YAML::Node list = m.value(key);
    if (!list.IsSequence() || list.size() == 0)
      ctx.fail(list, m.join(key), fmt::format("expected a list of {} names", kind));
    std::vector<std::string> known;
    for (const auto& item : items) known.push_back(item.name);
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string at = fmt::format("{}[{}]", m.join(key), i);
      const std::string name = ctx.string(list[i], at);
      int found = -1;
      for (std::size_t k = 0; k < items.size(); ++k)
        if (items[k].name == name) found = static_cast<int>(k);
      if (found < 0) {
        ctx.fail(list[i], at,
                 fmt::format("no {} \"{}\" in scene {} (known: {})", kind, name, scene.file,
                             knownNames(known)));
      }
      if (!keep(items[static_cast<std::size_t>(found)])) {
        ctx.fail(
            list[i], at,
            fmt::format("{} \"{}\" has no limits (joints[].limits in {})", kind, name, scene.file));
      }
      out.push_back(found);
    }
    return out;
  }
};

double nonNegative(const Context& ctx, const MapReader& m, const char* key, double fallback) {
  if (!m.has(key)) return fallback;
  const double v = ctx.number(m.value(key), m.join(key));
  if (v < 0.0)
    ctx.fail(m.value(key), m.join(key), fmt::format("expected a number >= 0, got {:g}", v));
  return v;
}

int expectationByName(const Context& ctx, const YAML::Node& node, const std::string& key,
                      const Scenario& scenario) {
  const std::string name = ctx.string(node, key);
  int found = -1;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < scenario.expectations.size(); ++i) {
    names.push_back(scenario.expectations[i].name);
    if (scenario.expectations[i].name != name) continue;
    if (found >= 0) ctx.fail(node, key, fmt::format("several expectations are named \"{}\"", name));
    found = static_cast<int>(i);
  }
  if (found < 0) {
    ctx.fail(node, key,
             fmt::format("no expectation named \"{}\" in `expect` (known: {})", name,
                         names.empty() ? "none" : knownNames(names)));
  }
  return found;
}

PenaltyRule readPenalty(Context& ctx, const YAML::Node& node, const std::string& path,
                        const Names& names, const ScoringDef& scoring, const Scenario& scenario) {
  const MapReader m(
      ctx, node, path,
      {"kind",        "name",        "points",     "max_points", "critical",  "during",
       "between",     "min_impulse", "min_speed",  "motors",     "fraction",  "for",
       "joints",      "body",        "held_by",    "below",      "max_angle", "max_jerk",
       "jerk_window", "target",      "per_second", "until"});
  PenaltyRule r;
  r.line = m.line();
  const std::string kind = m.string("kind");
  using K = PenaltyRule::Kind;
  const std::map<std::string, K> kinds = {{"collision", K::Collision},
                                          {"motor_overload", K::MotorOverload},
                                          {"joint_limit", K::JointLimit},
                                          {"load_dropped", K::LoadDropped},
                                          {"swing", K::Swing},
                                          {"time", K::Time}};
  const auto kind_it = kinds.find(kind);
  if (kind_it == kinds.end()) {
    ctx.fail(
        m.value("kind"), m.join("kind"),
        "expected collision, motor_overload, joint_limit, load_dropped, swing or time, got \"" +
            kind + "\"");
  }
  r.kind = kind_it->second;
  // Keys of other kinds are mistakes, not options.
  const std::map<K, std::vector<const char*>> own = {
      {K::Collision, {"between", "min_impulse", "min_speed"}},
      {K::MotorOverload, {"motors", "fraction", "for"}},
      {K::JointLimit, {"joints", "min_speed"}},
      {K::LoadDropped, {"body", "held_by", "below"}},
      {K::Swing, {"body", "held_by", "max_angle", "max_jerk", "jerk_window"}},
      {K::Time, {"target", "per_second", "until"}}};
  const std::vector<const char*>& mine = own.at(r.kind);
  for (const auto& entry : own) {
    for (const char* key : entry.second) {
      if (std::find_if(mine.begin(), mine.end(),
                       [&](const char* k) { return std::string(k) == key; }) == mine.end()) {
        m.forbid(key, fmt::format("not a key of a {} penalty", kind));
      }
    }
  }
  if (r.kind == K::Time) {
    m.forbid("points", "a time penalty gives `per_second` instead of `points`");
    r.points = nonNegative(ctx, m, "per_second", 0.0);
    if (!m.has("per_second")) m.require("per_second");
  } else {
    m.require("points");
    r.points = nonNegative(ctx, m, "points", 0.0);
  }
  if (m.has("max_points")) r.max_points = nonNegative(ctx, m, "max_points", 0.0);
  r.critical = m.boolean("critical", false);
  if (m.has("during")) {
    const auto w = ctx.numbers(m.value("during"), m.join("during"), 2, "a window [from, to] in s");
    if (!(w[0] >= 0.0 && w[0] <= w[1]))
      ctx.fail(m.value("during"), m.join("during"), "expected 0 <= from <= to");
    r.from_s = w[0];
    r.to_s = w[1];
  }
  std::string default_name;
  switch (r.kind) {
    case K::Collision: {
      const YAML::Node between = m.require("between");
      if (!between.IsSequence() || between.size() != 2) {
        ctx.fail(between, m.join("between"), "expected [A, B]: two bodies or groups");
      }
      r.side_a = names.bodiesOf(ctx, between[0], m.join("between") + "[0]");
      r.side_b = names.bodiesOf(ctx, between[1], m.join("between") + "[1]");
      r.min_impulse_Ns = nonNegative(ctx, m, "min_impulse", 0.0);
      r.min_speed_mps = nonNegative(ctx, m, "min_speed", 0.0);
      default_name = fmt::format("collision {} / {}", between[0].Scalar(), between[1].Scalar());
      break;
    }
    case K::MotorOverload:
      r.motors = names.itemList(ctx, m, "motors", scenario.scene.model.motors, "motor",
                                [](const auto&) { return true; });
      r.fraction = m.positive("fraction");
      r.for_s = nonNegative(ctx, m, "for", 0.0);
      default_name = "motor overload";
      break;
    case K::JointLimit:
      r.joints = names.itemList(ctx, m, "joints", scenario.scene.model.joints, "joint",
                                [](const dynamics::JointDef& j) { return j.limit_enabled; });
      if (r.joints.empty())
        ctx.fail(node, path,
                 fmt::format("the scene {} has no joints with limits", scenario.scene.file));
      r.min_joint_speed = nonNegative(ctx, m, "min_speed", 0.0);
      default_name = "joint limit struck";
      break;
    case K::LoadDropped:
    case K::Swing: {
      if (m.has("body")) {
        r.body = names.body(ctx, m.value("body"), m.join("body"));
      } else if (scoring.load >= 0) {
        r.body = scoring.load;
      } else {
        ctx.fail(node, m.join("body"), "missing (give body, or scoring.load)");
      }
      r.held_by = m.has("held_by")
                      ? names.bodyList(ctx, m.value("held_by"), m.join("held_by"))
                      : (r.body == scoring.load ? scoring.load_held_by : std::vector<int>{});
      if (r.kind == K::LoadDropped) {
        r.below_m = m.number("below");
        if (r.held_by.empty() && !m.has("during")) {
          ctx.fail(node, path,
                   "say when the load should be held: held_by (or load.held_by) or during");
        }
        default_name = "load dropped";
      } else {
        if (!m.has("max_angle") && !m.has("max_jerk")) {
          ctx.fail(node, m.join("max_angle"),
                   "missing (give max_angle in rad, max_jerk in m/s^3, or both)");
        }
        if (m.has("max_angle")) {
          r.max_angle_rad = m.positive("max_angle");
          if (r.max_angle_rad > std::numbers::pi) {
            ctx.fail(m.value("max_angle"), m.join("max_angle"), "expected an angle in (0, pi] rad");
          }
        }
        if (m.has("max_jerk")) r.max_jerk_mps3 = m.positive("max_jerk");
        if (m.has("jerk_window")) {
          if (!m.has("max_jerk")) m.forbid("jerk_window", "only with max_jerk");
          r.jerk_window_s = m.positive("jerk_window");
          const double h = scenario.scene.model.solver.time_step_s;
          if (r.jerk_window_s < h * (1.0 - 1e-9) || r.jerk_window_s > 10.0) {
            ctx.fail(m.value("jerk_window"), m.join("jerk_window"),
                     fmt::format("expected a window from one time step ({} s) to 10 s", h));
          }
        }
        default_name = "load swings";
      }
      break;
    }
    case K::Time:
      r.target_s = nonNegative(ctx, m, "target", 0.0);
      if (!m.has("target")) m.require("target");
      if (m.has("until"))
        r.until_task = expectationByName(ctx, m.value("until"), m.join("until"), scenario);
      default_name = "over time";
      break;
  }
  r.name = m.has("name") ? m.string("name") : default_name;
  return r;
}

}  // namespace

ScoringDef readScoring(Context& ctx, const YAML::Node& node, const std::string& path,
                       const Scenario& scenario) {
  const MapReader top(ctx, node, path, {"pass_mark", "load", "groups", "penalties", "tasks"});
  ScoringDef def;
  def.enabled = true;
  def.pass_mark = top.number("pass_mark");
  if (!(def.pass_mark >= 0.0 && def.pass_mark <= 100.0)) {
    ctx.fail(top.value("pass_mark"), top.join("pass_mark"),
             fmt::format("expected a pass mark in [0, 100], got {:g}", def.pass_mark));
  }
  Names names{scenario.scene, {}};
  if (top.has("groups")) {
    const YAML::Node groups = top.value("groups");
    if (!groups.IsMap())
      ctx.fail(groups, top.join("groups"), "expected a map of group name: [bodies]");
    for (const auto& entry : groups) {
      const std::string name = entry.first.Scalar();
      const std::string key = top.join("groups") + "." + name;
      if (scenario.scene.model.findBody(name) >= 0) {
        ctx.fail(entry.first, key,
                 fmt::format("\"{}\" is a body of {}; give the group another name", name,
                             scenario.scene.file));
      }
      names.groups[name] = names.bodyList(ctx, entry.second, key);
    }
  }
  if (top.has("load")) {
    const MapReader load(ctx, top.value("load"), top.join("load"), {"body", "held_by"});
    def.load = names.body(ctx, load.require("body"), load.join("body"));
    if (load.has("held_by"))
      def.load_held_by = names.bodyList(ctx, load.value("held_by"), load.join("held_by"));
  }
  for (const auto& [item, item_path] : listItems(ctx, top, "penalties")) {
    def.penalties.push_back(readPenalty(ctx, item, item_path, names, def, scenario));
  }
  std::vector<char> listed(scenario.expectations.size(), 0);
  for (const auto& [item, item_path] : listItems(ctx, top, "tasks", false)) {
    const MapReader m(ctx, item, item_path, {"expect", "points", "critical"});
    TaskDef t;
    t.line = m.line();
    t.expectation = expectationByName(ctx, m.require("expect"), m.join("expect"), scenario);
    if (listed[static_cast<std::size_t>(t.expectation)])
      ctx.fail(m.value("expect"), m.join("expect"), "task given twice");
    listed[static_cast<std::size_t>(t.expectation)] = 1;
    m.require("points");
    t.points = nonNegative(ctx, m, "points", 0.0);
    t.critical = m.boolean("critical", false);
    def.tasks.push_back(t);
  }
  return def;
}

ReportDef readReport(Context& ctx, const YAML::Node& node, const std::string& path,
                     const Scenario& scenario) {
  const MapReader top(ctx, node, path, {"signals", "camera"});
  ReportDef def;
  def.line = top.line();
  const Scene& scene = scenario.scene;
  if (top.has("camera")) {
    def.camera = top.string("camera");
    bool known = false;
    std::vector<std::string> cameras;
    for (const CameraDef& c : scene.cameras) {
      known = known || c.name == def.camera;
      cameras.push_back(c.name);
    }
    if (!known) {
      ctx.fail(top.value("camera"), top.join("camera"),
               fmt::format("no camera \"{}\" in scene {} (known: {})", def.camera, scene.file,
                           cameras.empty() ? "none" : knownNames(cameras)));
    }
  }
  if (!top.has("signals")) return def;
  const YAML::Node list = top.value("signals");
  if (!list.IsSequence() || list.size() == 0)
    ctx.fail(list, top.join("signals"), "expected a list of signals (a list in it: one plot)");
  std::vector<SensorDef> scratch;
  auto resolve = [&](const YAML::Node& item, const std::string& key) {
    const std::string text = ctx.string(item, key);
    std::string error;
    if (!resolveSignal(text, scene.model, scene.pult, scene.scheme, scratch, error))
      ctx.fail(item, key, error);
    return text;
  };
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string key = fmt::format("{}[{}]", top.join("signals"), i);
    ReportPlot plot;
    if (list[i].IsSequence()) {
      if (list[i].size() == 0) ctx.fail(list[i], key, "expected signal names");
      for (std::size_t k = 0; k < list[i].size(); ++k)
        plot.signals.push_back(resolve(list[i][k], fmt::format("{}[{}]", key, k)));
    } else {
      plot.signals.push_back(resolve(list[i], key));
    }
    for (const std::string& s : plot.signals) plot.title += (plot.title.empty() ? "" : ", ") + s;
    def.plots.push_back(plot);
  }
  return def;
}

}  // namespace sim::engine::detail
