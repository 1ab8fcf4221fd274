#include <engine/input_mapping.h>
#include <engine/scene.h>
#include <input/names.h>

#include "yaml_reader.h"

#include <cctype>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>

namespace sim::engine {

using detail::Context;
using detail::MapReader;
using input::Binding;
using Kind = input::ControlKind;
using input::DeviceKind;
using input::DigitalAction;
using input::Source;

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& n : names) text += (text.empty() ? "" : ", ") + n;
  return text;
}

bool isGuid(const std::string& text) {
  if (text.size() != 32) return false;
  for (char ch : text)
    if (!std::isxdigit(static_cast<unsigned char>(ch))) return false;
  return true;
}

std::string lower(std::string text) {
  for (char& ch : text) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return text;
}

class Parser {
 public:
  Parser(Context& ctx, input::Mapping& m) : ctx_(ctx), m_(m) {}

  void devices(const MapReader& top) {
    for (const auto& [node, path] : detail::listItems(ctx_, top, "devices")) {
      const MapReader item(ctx_, node, path, {"name", "type", "product", "guid"});
      input::DeviceSpec d;
      d.id = item.string("name");
      if (item.has("type")) {
        const std::string type = item.string("type");
        if (type == "gamepad")
          d.kind = DeviceKind::Gamepad;
        else if (type == "joystick")
          d.kind = DeviceKind::Joystick;
        else
          ctx_.failAt(item.keyLine("type"), item.join("type"),
                      "expected gamepad or joystick, got \"" + type + "\"");
      }
      if (item.has("product")) d.name = item.string("product");
      if (item.has("guid")) d.guid = guid(item, "guid");
      m_.devices.push_back(d);
    }
  }

  void calibrations(const MapReader& top) {
    for (const auto& [node, path] : detail::listItems(ctx_, top, "calibration", false)) {
      const MapReader item(ctx_, node, path, {"guid", "axes"});
      input::Calibration c;
      c.guid = guid(item, "guid");
      for (const auto& [axis_node, axis_path] : detail::listItems(ctx_, item, "axes", false)) {
        const MapReader a(ctx_, axis_node, axis_path, {"axis", "min", "centre", "max"});
        input::AxisCalibration ac;
        a.require("axis");
        ac.axis = a.integer("axis", -1);
        if (ac.axis < 0)
          ctx_.failAt(a.keyLine("axis"), a.join("axis"), "expected an axis number >= 0");
        ac.min = a.number("min");
        ac.centre = a.number("centre", 0.5 * (ac.min + a.number("max")));
        ac.max = a.number("max");
        // centre may equal an end: a pedal rests at one end and reads 0 .. 1.
        if (!(ac.min < ac.max && ac.min <= ac.centre && ac.centre <= ac.max)) {
          ctx_.failAt(a.line(), a.path(),
                      fmt::format("expected min <= centre <= max and min < max, got {} / {} / {}",
                                  ac.min, ac.centre, ac.max));
        }
        c.axes.push_back(ac);
      }
      m_.calibrations.push_back(c);
    }
  }

  void bindings(const MapReader& top) {
    for (const auto& [node, path] : detail::listItems(ctx_, top, "bindings", false)) {
      binding(MapReader(ctx_, node, path,
                        {"control", "device", "axis", "button", "hat", "direction", "key", "keys",
                         "negative", "positive", "dead_zone", "expo", "invert", "threshold",
                         "action", "position", "step", "rate", "hold"}));
    }
  }

 private:
  std::string guid(const MapReader& item, const std::string& key) {
    const std::string text = item.string(key);
    if (!isGuid(text)) {
      ctx_.failAt(item.keyLine(key), item.join(key),
                  "expected a GUID of 32 hex digits (as `simtrainer devices` prints), got \"" +
                      text + "\"");
    }
    return lower(text);
  }

  // A source written in `item`'s keys device/axis/button/hat/direction/key.
  Source source(const MapReader& item, bool allow_axis) {
    Source s;
    int given = 0;
    for (const char* k : {"axis", "button", "hat", "key"}) given += item.has(k) ? 1 : 0;
    if (given != 1) {
      ctx_.failAt(item.line(), item.path(),
                  given == 0 ? "missing the input: give one of axis, button, hat, key (or keys, or "
                               "negative and positive)"
                             : "give only one of axis, button, hat, key");
    }
    if (item.has("key")) {
      item.forbid("device", "a key needs no device");
      const std::string name = item.string("key");
      const auto code = input::keyFromName(name);
      if (!code)
        ctx_.failAt(item.keyLine("key"), item.join("key"),
                    "unknown key name \"" + name +
                        "\" (SDL key names: Space, Return, Up, W, Left Shift, F1, ...)");
      s.kind = Source::Kind::Key;
      s.index = *code;
      return s;
    }
    const std::string dev_name = item.string("device");
    s.device = -1;
    for (std::size_t d = 0; d < m_.devices.size(); ++d)
      if (m_.devices[d].id == dev_name) s.device = static_cast<int>(d);
    if (s.device < 0) {
      std::vector<std::string> known;
      for (const auto& d : m_.devices) known.push_back(d.id);
      ctx_.failAt(item.keyLine("device"), item.join("device"),
                  fmt::format("no device named \"{}\" (known: {})", dev_name,
                              known.empty() ? "none; declare it under devices" : joined(known)));
    }
    const bool pad = m_.devices[static_cast<std::size_t>(s.device)].kind == DeviceKind::Gamepad;
    if (item.has("axis")) {
      if (!allow_axis)
        ctx_.failAt(item.keyLine("axis"), item.join("axis"),
                    "an axis cannot be one of a pair (use button, hat or key)");
      s.kind = Source::Kind::Axis;
      s.index = pad ? named(item, "axis", input::gamepadAxisFromName, input::gamepadAxisNames(),
                            "game-controller axis")
                    : number(item, "axis");
    } else if (item.has("button")) {
      s.kind = Source::Kind::Button;
      s.index = pad ? named(item, "button", input::gamepadButtonFromName,
                            input::gamepadButtonNames(), "game-controller button")
                    : number(item, "button");
    } else {
      if (pad)
        ctx_.failAt(item.keyLine("hat"), item.join("hat"),
                    "a gamepad has no hats; its d-pad is buttons dpup, dpdown, dpleft, dpright");
      s.kind = Source::Kind::Hat;
      s.index = number(item, "hat");
      const std::string dir = item.string("direction");
      const auto d = input::hatDirectionFromName(dir);
      if (!d)
        ctx_.failAt(item.keyLine("direction"), item.join("direction"),
                    "expected up, right, down or left, got \"" + dir + "\"");
      s.hat_direction = *d;
    }
    if (!item.has("hat")) item.forbid("direction", "direction applies to a hat only");
    return s;
  }

  template <typename Lookup>
  int named(const MapReader& item, const char* key, Lookup lookup,
            const std::vector<std::string>& names, const char* what) {
    const std::string name = item.string(key);
    const auto value = lookup(name);
    if (!value) {
      ctx_.failAt(item.keyLine(key), item.join(key),
                  fmt::format("unknown {} \"{}\" (known: {})", what, name, joined(names)));
    }
    return *value;
  }

  int number(const MapReader& item, const char* key) {
    const YAML::Node node = item.value(key);
    const auto value = node.IsScalar() ? detail::parseNumber(node.Scalar()) : std::nullopt;
    if (!value || *value != std::floor(*value) || *value < 0.0 || *value > 255.0) {
      ctx_.failAt(item.keyLine(key), item.join(key),
                  "expected a number 0 .. 255 (a raw joystick's axes, buttons and hats are "
                  "numbered; names are for type: gamepad), got " +
                      detail::describe(node));
    }
    return static_cast<int>(*value);
  }

  double bounded(const MapReader& item, const char* key, double fallback, double lo, double hi,
                 bool hi_open) {
    if (!item.has(key)) return fallback;
    const double v = item.number(key);
    if (v < lo || v > hi || (hi_open && v == hi)) {
      ctx_.failAt(
          item.keyLine(key), item.join(key),
          fmt::format("expected a number in [{}, {}{}, got {}", lo, hi, hi_open ? ")" : "]", v));
    }
    return v;
  }

  Source pairSource(const MapReader& item, const char* key) {
    const YAML::Node node = item.value(key);
    const MapReader sub(ctx_, node, item.join(key),
                        {"device", "button", "hat", "direction", "key", "axis"});
    return source(sub, false);
  }

  void binding(const MapReader& item) {
    Binding b;
    b.line = item.line();
    const std::string control = item.string("control");
    b.control = -1;
    for (std::size_t c = 0; c < m_.controls.size(); ++c)
      if (m_.controls[c].name == control) b.control = static_cast<int>(c);
    if (b.control < 0) {
      std::vector<std::string> known;
      for (const auto& c : m_.controls) known.push_back(c.name);
      ctx_.failAt(item.keyLine("control"), item.join("control"),
                  fmt::format("no pult control named \"{}\" (known: {})", control,
                              known.empty() ? "none" : joined(known)));
    }
    const input::ControlSpec& spec = m_.controls[static_cast<std::size_t>(b.control)];

    const bool pair = item.has("keys") || item.has("negative") || item.has("positive");
    if (pair) {
      for (const char* k : {"axis", "button", "hat", "key", "device", "direction"}) {
        item.forbid(
            k,
            fmt::format(
                "not with a pair (keys or negative/positive): give the pair's inputs inside it"));
      }
      if (spec.kind != Kind::Axis) {
        ctx_.failAt(item.line(), item.path(),
                    fmt::format("a pair of inputs drives an axis, and \"{}\" is not one", control));
      }
      if (item.has("keys")) {
        item.forbid("negative", "give either keys or negative and positive");
        item.forbid("positive", "give either keys or negative and positive");
        const YAML::Node keys = item.value("keys");
        if (!keys.IsSequence() || keys.size() != 2) {
          ctx_.failAt(item.keyLine("keys"), item.join("keys"),
                      "expected two key names [negative, positive], e.g. [Down, Up]");
        }
        Source* targets[2] = {&b.negative, &b.positive};
        for (std::size_t i = 0; i < 2; ++i) {
          const std::string key = fmt::format("{}[{}]", item.join("keys"), i);
          const std::string name = ctx_.string(keys[i], key);
          const auto code = input::keyFromName(name);
          if (!code) ctx_.fail(keys[i], key, "unknown key name \"" + name + "\"");
          targets[i]->kind = Source::Kind::Key;
          targets[i]->index = *code;
        }
      } else {
        if (!item.has("negative") || !item.has("positive")) {
          ctx_.failAt(item.line(), item.path(), "a pair needs both negative and positive");
        }
        b.negative = pairSource(item, "negative");
        b.positive = pairSource(item, "positive");
      }
      b.rate = bounded(item, "rate", 0.0, 0.0, 1e6, false);
      b.hold = item.boolean("hold", false);
      for (const char* k :
           {"dead_zone", "expo", "invert", "threshold", "action", "position", "step"}) {
        item.forbid(k, "does not apply to a pair of inputs");
      }
      m_.bindings.push_back(b);
      return;
    }
    item.forbid("rate", "rate applies to a pair of inputs (keys, or negative and positive)");
    item.forbid("hold", "hold applies to a pair of inputs (keys, or negative and positive)");
    b.source = source(item, true);
    const bool analog = b.source.analog();
    if (analog) {
      b.shape.dead_zone = bounded(item, "dead_zone", 0.0, 0.0, 1.0, true);
      b.shape.expo = bounded(item, "expo", 0.0, 0.0, 1.0, false);
      b.shape.invert = item.boolean("invert", false);
    } else {
      for (const char* k : {"dead_zone", "expo", "invert", "threshold"})
        item.forbid(k, "applies to an axis input only");
    }
    const bool as_digital = !analog || spec.kind == Kind::Button || spec.kind == Kind::Toggle;
    if (analog && as_digital) {
      b.threshold = bounded(item, "threshold", 0.5, -1.0, 1.0, false);
      if (b.threshold == 0.0)
        ctx_.failAt(item.keyLine("threshold"), item.join("threshold"),
                    "a threshold of 0 would always be pressed at rest");
    } else {
      item.forbid("threshold", "threshold applies to an axis driving a button or toggle");
    }
    std::string action = item.has("action") ? item.string("action") : "";
    switch (spec.kind) {
      case Kind::Axis:
        if (!analog) {
          ctx_.failAt(item.line(), item.path(),
                      fmt::format("axis control \"{}\" needs an axis input or a pair (keys: [down, "
                                  "up], or negative and positive)",
                                  control));
        }
        item.forbid("action", "action applies to toggles");
        break;
      case Kind::Button:
        if (!action.empty() && action != "press")
          item.forbid("action", "a button only takes action: press");
        b.action = DigitalAction::Press;
        break;
      case Kind::Toggle:
        if (action.empty() || action == "toggle")
          b.action = DigitalAction::Toggle;
        else if (action == "hold")
          b.action = DigitalAction::Hold;
        else
          ctx_.failAt(item.keyLine("action"), item.join("action"),
                      "expected toggle or hold, got \"" + action + "\"");
        break;
      case Kind::Switch:
        item.forbid("action", "a switch takes position or step instead");
        if (analog) {
          item.forbid("position", "a switch on an axis follows the axis");
          item.forbid("step", "a switch on an axis follows the axis");
          b.action = DigitalAction::Position;
        } else if (item.has("position")) {
          item.forbid("step", "give either position or step");
          b.action = DigitalAction::Position;
          b.position = item.integer("position", 0);
          if (b.position < 0 || b.position >= spec.positions) {
            ctx_.failAt(item.keyLine("position"), item.join("position"),
                        fmt::format("switch \"{}\" has positions 0 .. {}, got {}", control,
                                    spec.positions - 1, b.position));
          }
        } else if (item.has("step")) {
          b.action = DigitalAction::Step;
          b.step = item.integer("step", 1);
          if (b.step == 0)
            ctx_.failAt(item.keyLine("step"), item.join("step"),
                        "expected a non-zero number of positions");
        } else {
          ctx_.failAt(
              item.line(), item.path(),
              fmt::format(
                  "switch \"{}\": give position (where the input puts it) or step (+1 / -1)",
                  control));
        }
        break;
    }
    if (spec.kind != Kind::Switch) {
      item.forbid("position", "position applies to switches");
      item.forbid("step", "step applies to switches");
    }
    m_.bindings.push_back(b);
  }

  Context& ctx_;
  input::Mapping& m_;
};

}  // namespace

std::vector<input::ControlSpec> inputControls(const PultDef& pult) {
  std::vector<input::ControlSpec> controls;
  for (const ControlDef& c : pult.controls) {
    input::ControlSpec s;
    s.name = c.name;
    s.kind = c.kind == ControlKind::Axis     ? input::ControlKind::Axis
             : c.kind == ControlKind::Button ? input::ControlKind::Button
             : c.kind == ControlKind::Toggle ? input::ControlKind::Toggle
                                             : input::ControlKind::Switch;
    s.min = c.min;
    s.max = c.max;
    s.initial = c.initial;
    s.positions = c.positions;
    controls.push_back(s);
  }
  return controls;
}

input::Mapping loadInputMappingFromString(const std::string& yaml, const std::string& file,
                                          const PultDef& pult) {
  Context ctx;
  ctx.file = file;
  const YAML::Node root = detail::parseYaml(yaml, file);
  if (!root.IsDefined() || root.IsNull()) ctx.failAt(0, "", "the mapping file is empty");
  const MapReader top(ctx, root, "", {"devices", "calibration", "bindings"});
  input::Mapping m;
  m.file = file;
  m.controls = inputControls(pult);
  Parser parser(ctx, m);
  parser.devices(top);
  parser.calibrations(top);
  parser.bindings(top);
  return m;
}

input::Mapping loadInputMapping(const std::string& path, const PultDef& pult) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SceneError(path, 0, "", "cannot open the input mapping file");
  std::ostringstream text;
  text << in.rdbuf();
  return loadInputMappingFromString(text.str(), path, pult);
}

}  // namespace sim::engine
