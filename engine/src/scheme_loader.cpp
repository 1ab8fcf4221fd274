// Scene keys `pult` and `scheme`: controls, blocks wired by named signals, and motor outputs.
// Blocks are read in file order, their inputs resolved once every block name is known, and then
// sorted so each block follows the blocks it reads (Kahn's algorithm, ties in file order, so the
// order is deterministic). What is left unsorted is an algebraic loop, reported with its blocks.
#include "scheme_loader.h"

#include <dynamics/model.h>

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <string_view>

namespace sim::engine {

namespace {

struct BlockSpec {
  const char* name;
  BlockType type;
  std::vector<const char*> keys;  // besides name and type
};

// Every block type with the keys it accepts.
const std::vector<BlockSpec>& blockSpecs() {
  static const std::vector<BlockSpec> specs = {
      {"constant", BlockType::Constant, {"value"}},
      {"gain", BlockType::Gain, {"input", "k"}},
      {"sum", BlockType::Sum, {"inputs", "weights"}},
      {"product", BlockType::Product, {"inputs"}},
      {"saturation", BlockType::Saturation, {"input", "min", "max"}},
      {"dead_zone", BlockType::DeadZone, {"input", "width", "rescale"}},
      {"rate_limiter", BlockType::RateLimiter, {"input", "rate"}},
      {"integrator", BlockType::Integrator, {"input", "k", "initial", "min", "max", "reset"}},
      {"delay", BlockType::Delay, {"input"}},
      {"pid", BlockType::Pid, {"setpoint", "measurement", "kp", "ki", "kd", "min", "max"}},
      {"lag", BlockType::Lag, {"input", "tau"}},
      {"lookup", BlockType::Lookup, {"input", "table"}},
      {"comparator", BlockType::Comparator, {"input", "reference", "hysteresis"}},
      {"switch", BlockType::Switch, {"condition", "then", "else"}},
      {"selector", BlockType::Selector, {"index", "inputs"}},
      {"latch", BlockType::Latch, {"input", "initial", "reset"}},
      {"timer", BlockType::Timer, {"input"}},
      {"abs", BlockType::Abs, {"input"}},
      {"sqrt", BlockType::Sqrt, {"input"}},
      {"min", BlockType::Min, {"inputs"}},
      {"max", BlockType::Max, {"inputs"}},
      {"norm", BlockType::Norm, {"inputs"}},
      {"deadband", BlockType::Deadband, {"input", "width"}},
  };
  return specs;
}

// A block input still in text form, resolved once all block names are known.
struct PendingInput {
  std::string text;
  std::string key;  // "scheme.blocks[x].input"
  int line = 0;
};

struct PendingBlock {
  BlockDef def;
  std::vector<PendingInput> inputs;
};

std::optional<double> literal(const std::string& text) {
  return detail::parseNumber(text);
}

std::vector<std::string> splitDots(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto dot = text.find('.', start);
    parts.push_back(text.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
}

template <typename Items>
int indexOf(const Items& items, const std::string& name) {
  for (std::size_t i = 0; i < items.size(); ++i)
    if (items[i].name == name) return static_cast<int>(i);
  return -1;
}

int addSensor(std::vector<SensorDef>& sensors, const SensorDef& s) {
  for (std::size_t i = 0; i < sensors.size(); ++i)
    if (sensors[i] == s) return static_cast<int>(i);
  sensors.push_back(s);
  return static_cast<int>(sensors.size()) - 1;
}

// body.<name>.<field>, joint.<name>.<field>, motor.<name>.<field>, contact.<a>[.<b>].force.
std::optional<SensorDef> parseSensor(const std::vector<std::string>& p,
                                     const dynamics::Model& model, std::string& error) {
  SensorDef s;
  const std::string& kind = p[0];
  auto need = [&](std::size_t n, const char* form) {
    if (p.size() == n) return true;
    error = fmt::format("expected {}", form);
    return false;
  };
  auto find = [&](auto const& items, const char* what) {
    const int index = indexOf(items, p[1]);
    if (index < 0) error = fmt::format("no {} named \"{}\"", what, p[1]);
    return index;
  };
  if (kind == "body") {
    if (!need(3, "body.<name>.<x|y|z|vx|vy|vz|speed|roll|pitch|yaw|tilt>")) return {};
    if ((s.index = find(model.bodies, "body")) < 0) return {};
    static const std::map<std::string, std::pair<SensorKind, int>> fields = {
        {"x", {SensorKind::BodyPosition, 0}},  {"y", {SensorKind::BodyPosition, 1}},
        {"z", {SensorKind::BodyPosition, 2}},  {"vx", {SensorKind::BodyVelocity, 0}},
        {"vy", {SensorKind::BodyVelocity, 1}}, {"vz", {SensorKind::BodyVelocity, 2}},
        {"speed", {SensorKind::BodySpeed, 0}}, {"roll", {SensorKind::BodyAngle, 0}},
        {"pitch", {SensorKind::BodyAngle, 1}}, {"yaw", {SensorKind::BodyAngle, 2}},
        {"tilt", {SensorKind::BodyAngle, 3}}};
    const auto it = fields.find(p[2]);
    if (it == fields.end()) {
      error = fmt::format(
          "unknown body field \"{}\" (expected x, y, z, vx, vy, vz, speed, roll, pitch, yaw, tilt)",
          p[2]);
      return {};
    }
    s.kind = it->second.first;
    s.axis = it->second.second;
    return s;
  }
  if (kind == "joint") {
    if (!need(3, "joint.<name>.<position|angle|speed>")) return {};
    if ((s.index = find(model.joints, "joint")) < 0) return {};
    if (p[2] == "position" || p[2] == "angle")
      s.kind = SensorKind::JointPosition;
    else if (p[2] == "speed")
      s.kind = SensorKind::JointSpeed;
    else {
      error = fmt::format("unknown joint field \"{}\" (expected position, angle, speed)", p[2]);
      return {};
    }
    return s;
  }
  if (kind == "motor") {
    if (!need(3, "motor.<name>.<speed|angle|voltage|torque>")) return {};
    if ((s.index = find(model.motors, "motor")) < 0) return {};
    static const std::map<std::string, SensorKind> fields = {{"speed", SensorKind::MotorSpeed},
                                                             {"angle", SensorKind::MotorAngle},
                                                             {"voltage", SensorKind::MotorVoltage},
                                                             {"torque", SensorKind::MotorTorque}};
    const auto it = fields.find(p[2]);
    if (it == fields.end()) {
      error =
          fmt::format("unknown motor field \"{}\" (expected speed, angle, voltage, torque)", p[2]);
      return {};
    }
    s.kind = it->second;
    return s;
  }
  // contact.<a>.force or contact.<a>.<b>.force
  if (p.size() < 3 || p.size() > 4 || p.back() != "force") {
    error = "expected contact.<body>.force or contact.<body>.<other body>.force";
    return {};
  }
  s.kind = SensorKind::ContactForce;
  if ((s.index = find(model.bodies, "body")) < 0) return {};
  if (p.size() == 4) {
    s.other = indexOf(model.bodies, p[2]);
    if (s.other < 0) {
      error = fmt::format("no body named \"{}\"", p[2]);
      return {};
    }
  }
  return s;
}

}  // namespace

std::optional<SignalRef> resolveSignal(const std::string& text, const dynamics::Model& model,
                                       const PultDef& pult, const SchemeDef& scheme,
                                       std::vector<SensorDef>& sensors, std::string& error) {
  SignalRef ref;
  ref.text = text;
  if (auto value = literal(text)) {
    ref.source = SignalRef::Source::Constant;
    ref.constant = *value;
    return ref;
  }
  if (text == "time") {
    ref.source = SignalRef::Source::Sensor;
    ref.index = addSensor(sensors, SensorDef{SensorKind::Time});
    return ref;
  }
  const std::vector<std::string> parts = splitDots(text);
  const std::string& head = parts[0];
  if (head == "pult") {
    ref.source = SignalRef::Source::Pult;
    ref.index = parts.size() == 2 ? pult.find(parts[1]) : -1;
    if (ref.index < 0) {
      std::string known;
      for (const ControlDef& c : pult.controls) known += (known.empty() ? "" : ", ") + c.name;
      error = fmt::format("no pult control \"{}\" (known: {})", text.substr(5), known);
      return {};
    }
    return ref;
  }
  if (head == "body" || head == "joint" || head == "motor" || head == "contact") {
    auto sensor = parseSensor(parts, model, error);
    if (!sensor) return {};
    ref.source = SignalRef::Source::Sensor;
    ref.index = addSensor(sensors, *sensor);
    return ref;
  }
  ref.source = SignalRef::Source::Block;
  ref.index = parts.size() == 1 ? scheme.find(text) : -1;
  if (ref.index < 0) {
    error = fmt::format(
        "no signal \"{}\" (expected a block name, a number, time, pult.<control>, "
        "body.<name>.<field>, joint.<name>.<field>, motor.<name>.<field> or contact.<body>.force)",
        text);
    return {};
  }
  return ref;
}

namespace detail {

namespace {

ControlDef readControl(Context& ctx, const YAML::Node& node, const std::string& path) {
  MapReader m(ctx, node, path, {"name", "type", "min", "max", "initial", "positions"});
  ControlDef c;
  c.name = m.string("name");
  if (c.name.find('.') != std::string::npos)
    ctx.fail(m.value("name"), m.join("name"), "names may not contain '.'");
  const std::string type = m.has("type") ? m.string("type") : "axis";
  static const std::map<std::string, ControlKind> kinds = {{"axis", ControlKind::Axis},
                                                           {"button", ControlKind::Button},
                                                           {"toggle", ControlKind::Toggle},
                                                           {"switch", ControlKind::Switch}};
  const auto it = kinds.find(type);
  if (it == kinds.end()) {
    ctx.fail(
        m.value("type"), m.join("type"),
        fmt::format("unknown control type \"{}\" (expected axis, button, toggle, switch)", type));
  }
  c.kind = it->second;
  if (c.kind != ControlKind::Axis) {
    m.forbid("min", "only an axis has a range");
    m.forbid("max", "only an axis has a range");
  }
  if (c.kind != ControlKind::Switch) m.forbid("positions", "only a switch has positions");
  c.min = m.number("min", -1.0);
  c.max = m.number("max", 1.0);
  if (!(c.min < c.max))
    ctx.fail(node, m.join("max"), fmt::format("expected max > min, got [{}, {}]", c.min, c.max));
  c.positions = m.integer("positions", 2);
  if (c.positions < 2)
    ctx.fail(m.value("positions"), m.join("positions"), "expected at least 2 positions");
  c.initial =
      m.number("initial", c.kind == ControlKind::Axis ? std::clamp(0.0, c.min, c.max) : 0.0);
  if (c.admit(c.initial) != c.initial) {
    ctx.fail(m.value("initial"), m.join("initial"),
             fmt::format("{} is not a value this control can take", c.initial));
  }
  return c;
}

// A signal key: a name or a number.
PendingInput pendingInput(Context& ctx, const MapReader& m, const std::string& key) {
  const YAML::Node node = m.require(key);
  if (!node.IsScalar())
    ctx.fail(node, m.join(key), "expected a signal name or a number, got " + describe(node));
  return PendingInput{node.Scalar(), m.join(key), lineOf(node)};
}

std::vector<PendingInput> pendingInputs(Context& ctx, const MapReader& m, const std::string& key,
                                        std::size_t at_least) {
  const YAML::Node list = m.require(key);
  if (!list.IsSequence() || list.size() < at_least) {
    ctx.fail(
        list, m.join(key),
        fmt::format("expected a list of at least {} signals, got {}", at_least, describe(list)));
  }
  std::vector<PendingInput> inputs;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string k = fmt::format("{}[{}]", m.join(key), i);
    if (!list[i].IsScalar())
      ctx.fail(list[i], k, "expected a signal name or a number, got " + describe(list[i]));
    inputs.push_back(PendingInput{list[i].Scalar(), k, lineOf(list[i])});
  }
  return inputs;
}

PendingBlock readBlock(Context& ctx, const YAML::Node& node, const std::string& path) {
  if (!node.IsMap()) ctx.fail(node, path, "expected a map of keys, got " + describe(node));
  const YAML::Node type_node = node["type"];
  if (!type_node) ctx.fail(node, path + ".type", "missing (required)");
  const std::string type = ctx.string(type_node, path + ".type");
  const BlockSpec* spec = nullptr;
  for (const BlockSpec& s : blockSpecs())
    if (type == s.name) spec = &s;
  if (!spec) {
    std::string known;
    for (const BlockSpec& s : blockSpecs())
      known += (known.empty() ? "" : ", ") + std::string(s.name);
    ctx.fail(type_node, path + ".type",
             fmt::format("unknown block type \"{}\" (expected one of: {})", type, known));
  }
  std::vector<const char*> keys = {"name", "type"};
  keys.insert(keys.end(), spec->keys.begin(), spec->keys.end());
  // MapReader takes an initializer list; check the keys here with the same message.
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    if (std::find_if(keys.begin(), keys.end(), [&](const char* k) { return key == k; }) ==
        keys.end()) {
      std::string list;
      for (const char* k : keys) list += (list.empty() ? "" : ", ") + std::string(k);
      ctx.fail(entry.first, path + "." + key,
               fmt::format("unknown key for a {} block (expected one of: {})", type, list));
    }
  }
  MapReader m(ctx, node, path,
              {"name",      "type",        "value",     "input",   "inputs", "k",       "weights",
               "min",       "max",         "width",     "rescale", "rate",   "initial", "reset",
               "setpoint",  "measurement", "kp",        "ki",      "kd",     "tau",     "table",
               "reference", "hysteresis",  "condition", "then",    "else",   "index"});
  PendingBlock p;
  BlockDef& b = p.def;
  b.name = m.string("name");
  b.type = spec->type;
  b.line = m.line();
  if (b.name.find('.') != std::string::npos || literal(b.name) || b.name == "time") {
    ctx.fail(m.value("name"), m.join("name"),
             "a block name may not contain '.', be a number or be \"time\"");
  }
  auto one = [&](const char* key) { p.inputs.push_back(pendingInput(ctx, m, key)); };
  auto optionalOne = [&](const char* key) {
    if (m.has(key)) one(key);
  };
  switch (b.type) {
    case BlockType::Constant: b.value = m.number("value"); break;
    case BlockType::Gain:
      one("input");
      b.k = m.number("k");
      break;
    case BlockType::Sum:
      p.inputs = pendingInputs(ctx, m, "inputs", 1);
      b.weights.assign(p.inputs.size(), 1.0);
      if (m.has("weights")) {
        const YAML::Node w = m.value("weights");
        if (!w.IsSequence() || w.size() != p.inputs.size()) {
          ctx.fail(w, m.join("weights"),
                   fmt::format("expected {} numbers, one per input", p.inputs.size()));
        }
        for (std::size_t i = 0; i < w.size(); ++i)
          b.weights[i] = ctx.number(w[i], fmt::format("{}[{}]", m.join("weights"), i));
      }
      break;
    case BlockType::Product: p.inputs = pendingInputs(ctx, m, "inputs", 1); break;
    case BlockType::Saturation:
      one("input");
      b.lo = m.number("min");
      b.hi = m.number("max");
      break;
    case BlockType::DeadZone:
      one("input");
      b.width = m.number("width");
      b.rescale = m.boolean("rescale", false);
      if (!(b.width >= 0.0 && b.width < 1.0))
        ctx.fail(m.value("width"), m.join("width"), "expected a width in [0, 1)");
      break;
    case BlockType::RateLimiter:
      one("input");
      b.rate = m.positive("rate");
      break;
    case BlockType::Integrator:
      one("input");
      optionalOne("reset");
      b.k = m.number("k", 1.0);
      b.initial = m.number("initial", 0.0);
      b.lo = m.number("min", -1e300);
      b.hi = m.number("max", 1e300);
      break;
    case BlockType::Delay: one("input"); break;
    case BlockType::Pid:
      one("setpoint");
      one("measurement");
      b.kp = m.number("kp", 0.0);
      b.ki = m.number("ki", 0.0);
      b.kd = m.number("kd", 0.0);
      b.lo = m.number("min", -1.0);
      b.hi = m.number("max", 1.0);
      if (!m.has("kp") && !m.has("ki") && !m.has("kd")) {
        ctx.fail(node, m.join("kp"),
                 "missing: a pid needs at least one of kp, ki, kd (without them it outputs 0)");
      }
      break;
    case BlockType::Lag:
      one("input");
      b.tau = m.positive("tau");
      break;
    case BlockType::Lookup: {
      one("input");
      const YAML::Node t = m.require("table");
      if (!t.IsSequence() || t.size() < 2)
        ctx.fail(t, m.join("table"), "expected a list of at least 2 [x, y] pairs");
      for (std::size_t i = 0; i < t.size(); ++i) {
        const auto xy =
            ctx.numbers(t[i], fmt::format("{}[{}]", m.join("table"), i), 2, "a pair [x, y]");
        if (!b.table_x.empty() && !(xy[0] > b.table_x.back())) {
          ctx.fail(t[i], fmt::format("{}[{}]", m.join("table"), i), "x must increase strictly");
        }
        b.table_x.push_back(xy[0]);
        b.table_y.push_back(xy[1]);
      }
      break;
    }
    case BlockType::Comparator:
      one("input");
      if (m.has("reference"))
        one("reference");
      else
        p.inputs.push_back(PendingInput{"0", m.join("reference"), m.line()});
      b.hysteresis = m.number("hysteresis", 0.0);
      break;
    case BlockType::Switch:
      one("condition");
      one("then");
      one("else");
      break;
    case BlockType::Selector: {
      one("index");
      auto choices = pendingInputs(ctx, m, "inputs", 1);
      p.inputs.insert(p.inputs.end(), choices.begin(), choices.end());
      break;
    }
    case BlockType::Latch:
      one("input");
      optionalOne("reset");
      b.initial = m.boolean("initial", false) ? 1.0 : 0.0;
      break;
    case BlockType::Timer: one("input"); break;
    case BlockType::Abs:
    case BlockType::Sqrt: one("input"); break;
    case BlockType::Min:
    case BlockType::Max:
    case BlockType::Norm: p.inputs = pendingInputs(ctx, m, "inputs", 1); break;
    case BlockType::Deadband:
      one("input");
      b.width = m.number("width");
      if (!(b.width >= 0.0)) ctx.fail(m.value("width"), m.join("width"), "expected a width >= 0");
      break;
  }
  if (b.lo > b.hi)
    ctx.fail(node, m.join("max"), fmt::format("expected max >= min, got [{}, {}]", b.lo, b.hi));
  return p;
}

// Sorts blocks so every feedthrough input is computed first; reports a loop by its blocks.
std::vector<int> dependencyOrder(Context& ctx, const std::vector<PendingBlock>& blocks) {
  const std::size_t n = blocks.size();
  std::vector<std::vector<int>> readers(n);
  std::vector<int> pending(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (outputsFromMemory(blocks[i].def.type))
      continue;  // evaluated from memory: no ordering needed
    for (const SignalRef& in : blocks[i].def.inputs) {
      if (in.source != SignalRef::Source::Block || outputsFromMemory(blocks[in.index].def.type))
        continue;
      readers[in.index].push_back(static_cast<int>(i));
      ++pending[i];
    }
  }
  std::vector<int> order;
  std::vector<char> done(n, 0);
  while (order.size() < n) {
    int next = -1;  // lowest-numbered ready block: file order among equals
    for (std::size_t i = 0; i < n && next < 0; ++i)
      if (!done[i] && pending[i] == 0) next = static_cast<int>(i);
    if (next < 0) break;
    done[next] = 1;
    order.push_back(next);
    for (int r : readers[next]) --pending[r];
  }
  if (order.size() < n) {
    std::string names;
    int first = -1;
    for (std::size_t i = 0; i < n; ++i) {
      if (done[i]) continue;
      if (first < 0) first = static_cast<int>(i);
      names += (names.empty() ? "" : ", ") + blocks[i].def.name;
    }
    ctx.failAt(blocks[first].def.line, fmt::format("scheme.blocks[{}]", blocks[first].def.name),
               fmt::format("algebraic loop through blocks {} (break it with a delay or an "
                           "integrator)",
                           names));
  }
  return order;
}

SchemeOutput readOutput(Context& ctx, const YAML::Node& node, const std::string& path,
                        const Scene& scene, std::vector<PendingInput>& signal_texts) {
  MapReader m(ctx, node, path, {"motor", "signal"});
  SchemeOutput out;
  out.motor = findByName(ctx, m, "motor", scene.model.motors, "motor");
  signal_texts.push_back(pendingInput(ctx, m, "signal"));
  return out;
}

}  // namespace

void readPultAndScheme(Context& ctx, const MapReader& top, Scene& scene) {
  for (const auto& [node, path] : listItems(ctx, top, "pult")) {
    scene.pult.controls.push_back(readControl(ctx, node, path));
  }
  if (!top.has("scheme")) return;
  const MapReader m(ctx, top.value("scheme"), "scheme", {"evaluate", "blocks", "outputs"});
  if (m.has("evaluate")) {
    const std::string when = m.string("evaluate");
    if (when != "step" && when != "frame") {
      ctx.fail(m.value("evaluate"), m.join("evaluate"),
               fmt::format("expected step or frame, got \"{}\"", when));
    }
    scene.scheme.per_frame = when == "frame";
  }
  std::vector<PendingBlock> blocks;
  for (const auto& [node, path] : listItems(ctx, m, "blocks"))
    blocks.push_back(readBlock(ctx, node, path));
  // Resolve inputs against the blocks in file order, then sort and renumber.
  SchemeDef& scheme = scene.scheme;
  for (const PendingBlock& p : blocks) scheme.blocks.push_back(p.def);
  auto resolve = [&](const PendingInput& in) {
    std::string error;
    auto ref = resolveSignal(in.text, scene.model, scene.pult, scheme, scheme.sensors, error);
    if (!ref) ctx.failAt(in.line, in.key, error);
    return *ref;
  };
  for (std::size_t i = 0; i < blocks.size(); ++i)
    for (const PendingInput& in : blocks[i].inputs) blocks[i].def.inputs.push_back(resolve(in));
  std::vector<PendingInput> output_signals;
  for (const auto& [node, path] : listItems(ctx, m, "outputs", false)) {
    scheme.outputs.push_back(readOutput(ctx, node, path, scene, output_signals));
  }
  for (std::size_t i = 0; i < scheme.outputs.size(); ++i) {
    scheme.outputs[i].signal = resolve(output_signals[i]);
    for (std::size_t j = 0; j < i; ++j) {
      if (scheme.outputs[j].motor == scheme.outputs[i].motor) {
        ctx.failAt(output_signals[i].line, fmt::format("scheme.outputs[{}].motor", i),
                   fmt::format("motor \"{}\" already has an output",
                               scene.model.motors[scheme.outputs[i].motor].name));
      }
    }
  }
  const std::vector<int> order = dependencyOrder(ctx, blocks);
  std::vector<int> new_index(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) new_index[order[k]] = static_cast<int>(k);
  auto renumber = [&](SignalRef& ref) {
    if (ref.source == SignalRef::Source::Block) ref.index = new_index[ref.index];
  };
  scheme.blocks.clear();
  for (int i : order) {
    scheme.blocks.push_back(blocks[i].def);
    for (SignalRef& ref : scheme.blocks.back().inputs) renumber(ref);
  }
  for (SchemeOutput& out : scheme.outputs) renumber(out.signal);
}

}  // namespace detail

}  // namespace sim::engine
