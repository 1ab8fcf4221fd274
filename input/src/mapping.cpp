#include <input/mapping.h>
#include <input/names.h>

#include <SDL.h>

#include <cstdio>

namespace sim::input {
namespace {

Source key(const char* name) {
  Source s;
  s.kind = Source::Kind::Key;
  s.index = keyFromName(name).value_or(SDLK_UNKNOWN);
  return s;
}

// Key pools of the default layout, in the order controls take them. Pairs are (negative,
// positive) / (down, up); chosen so no key is in two pools.
constexpr const char* kAxisPairs[][2] = {{"Down", "Up"}, {"Left", "Right"}, {"S", "W"}, {"A", "D"},
                                         {"F", "R"},     {"G", "T"},        {"H", "Y"}, {"J", "U"},
                                         {"K", "I"},     {"L", "O"}};
constexpr const char* kSingleKeys[] = {"Space", "Return", "Z", "X",   "C",        "V",
                                       "B",     "N",      "M", "Tab", "Backspace"};
constexpr const char* kSwitchPairs[][2] = {{"PageDown", "PageUp"},
                                           {"Home", "End"},
                                           {"1", "2"},
                                           {"3", "4"},
                                           {"5", "6"},
                                           {"7", "8"},
                                           {"9", "0"}};

// A key pair drives an axis from neutral to full in half a second and springs back when let go.
constexpr double kDefaultKeyRate = 2.0;  // full deflections per second

std::string sourceText(const Mapping& m, const Source& s) {
  const std::string dev = s.device >= 0 && s.device < static_cast<int>(m.devices.size())
                              ? m.devices[static_cast<std::size_t>(s.device)].id + " "
                              : std::string();
  const bool pad = s.device >= 0 && s.device < static_cast<int>(m.devices.size()) &&
                   m.devices[static_cast<std::size_t>(s.device)].kind == DeviceKind::Gamepad;
  switch (s.kind) {
    case Source::Kind::Key: return keyName(s.index);
    case Source::Kind::Axis:
      return dev + "axis " + (pad ? gamepadAxisName(s.index) : std::to_string(s.index));
    case Source::Kind::Button:
      return dev + "button " + (pad ? gamepadButtonName(s.index) : std::to_string(s.index));
    case Source::Kind::Hat:
      return dev + "hat " + std::to_string(s.index) + " " + hatDirectionName(s.hat_direction);
    case Source::Kind::None: break;
  }
  return "-";
}

}  // namespace

Mapping defaultKeyboardMapping(const std::vector<ControlSpec>& controls,
                               std::vector<std::string>* unbound) {
  Mapping m;
  m.file = "(default keyboard layout)";
  m.controls = controls;
  std::size_t pairs = 0, singles = 0, switches = 0;
  for (std::size_t c = 0; c < controls.size(); ++c) {
    Binding b;
    b.control = static_cast<int>(c);
    switch (controls[c].kind) {
      case ControlKind::Axis:
        if (pairs == std::size(kAxisPairs)) break;
        b.negative = key(kAxisPairs[pairs][0]);
        b.positive = key(kAxisPairs[pairs][1]);
        b.rate = kDefaultKeyRate;
        ++pairs;
        m.bindings.push_back(b);
        continue;
      case ControlKind::Button:
      case ControlKind::Toggle:
        if (singles == std::size(kSingleKeys)) break;
        b.source = key(kSingleKeys[singles++]);
        b.action =
            controls[c].kind == ControlKind::Button ? DigitalAction::Press : DigitalAction::Toggle;
        m.bindings.push_back(b);
        continue;
      case ControlKind::Switch:
        if (switches == std::size(kSwitchPairs)) break;
        b.action = DigitalAction::Step;
        b.source = key(kSwitchPairs[switches][0]);
        b.step = -1;
        m.bindings.push_back(b);
        b.source = key(kSwitchPairs[switches][1]);
        b.step = 1;
        m.bindings.push_back(b);
        ++switches;
        continue;
    }
    if (unbound) unbound->push_back(controls[c].name);
  }
  return m;
}

std::vector<std::string> describeMapping(const Mapping& m) {
  std::vector<std::string> lines;
  for (const Binding& b : m.bindings) {
    const ControlSpec& c = m.controls[static_cast<std::size_t>(b.control)];
    std::string text = c.name + ": ";
    if (b.isPair()) {
      text += sourceText(m, b.negative) + " / " + sourceText(m, b.positive);
      char rate[64];
      std::snprintf(rate, sizeof rate, " (axis, %g /s%s)", b.rate, b.hold ? ", holds" : "");
      text += b.rate > 0.0 ? rate : " (axis)";
    } else {
      text += sourceText(m, b.source);
      std::string shape;
      if (b.source.analog()) {
        char buffer[64];
        if (b.shape.dead_zone > 0.0) {
          std::snprintf(buffer, sizeof buffer, ", dead zone %g", b.shape.dead_zone);
          shape += buffer;
        }
        if (b.shape.expo > 0.0) {
          std::snprintf(buffer, sizeof buffer, ", expo %g", b.shape.expo);
          shape += buffer;
        }
        if (b.shape.invert) shape += ", inverted";
        if (c.kind == ControlKind::Button || c.kind == ControlKind::Toggle) {
          std::snprintf(buffer, sizeof buffer, ", pressed at %g", b.threshold);
          shape += buffer;
        }
      }
      switch (c.kind) {
        case ControlKind::Axis: text += " (axis" + shape + ")"; break;
        case ControlKind::Button: text += " (button" + shape + ")"; break;
        case ControlKind::Toggle:
          text += (b.action == DigitalAction::Hold ? " (toggle, on while held" : " (toggle") +
                  shape + ")";
          break;
        case ControlKind::Switch:
          if (b.source.analog())
            text += " (switch" + shape + ")";
          else if (b.action == DigitalAction::Step)
            text += b.step < 0 ? " (switch down)" : " (switch up)";
          else
            text += " (switch to " + std::to_string(b.position) + ")";
          break;
      }
    }
    lines.push_back(text);
  }
  return lines;
}

}  // namespace sim::input
