#include <input/input_system.h>

#include <SDL.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace sim::input {
namespace {

constexpr Uint32 kSubsystems = SDL_INIT_JOYSTICK | SDL_INIT_GAMECONTROLLER;

std::string guidText(SDL_JoystickGUID guid) {
  char text[33] = {};
  SDL_JoystickGetGUIDString(guid, text, sizeof text);
  return text;
}

// SDL axis units to [-1, 1]; -32768 and 32767 are both full travel.
double normalise(Sint16 raw) {
  return std::clamp(raw / 32767.0, -1.0, 1.0);
}

double calibrated(double raw, const AxisCalibration& c) {
  const double span = raw >= c.centre ? c.max - c.centre : c.centre - c.min;
  if (!(span > 0.0)) return 0.0;
  return std::clamp((raw - c.centre) / span, -1.0, 1.0);
}

double shaped(double n, const AxisShape& s) {
  if (s.invert) n = -n;
  const double a = std::abs(n);
  if (a <= s.dead_zone) return 0.0;
  n = std::copysign((a - s.dead_zone) / (1.0 - s.dead_zone), n);
  return (1.0 - s.expo) * n + s.expo * n * n * n;
}

// (-1, 0, +1) -> (lo, neutral, hi), piecewise linear: a stick at rest gives the neutral value.
double through(double n, double lo, double neutral, double hi) {
  return n >= 0.0 ? neutral + n * (hi - neutral) : neutral + n * (neutral - lo);
}

}  // namespace

struct InputSystem::Slot {
  SDL_GameController* pad = nullptr;
  SDL_Joystick* joystick = nullptr;  // the pad's joystick, or the raw joystick
  SDL_JoystickID instance = -1;
  std::string name, guid;
  const Calibration* calibration = nullptr;
  std::map<int, Uint8> hats;  // last value per hat, for press edges
  bool connected() const { return joystick != nullptr; }
};

InputSystem::InputSystem(Mapping mapping, const InputOptions& options)
    : mapping_(std::move(mapping)), options_(options) {
  // Mappings built in code skip the file checks: refuse indices that would read out of bounds.
  const auto devices = static_cast<int>(mapping_.devices.size());
  auto sourceOk = [&](const Source& s) {
    return s.kind == Source::Kind::None || s.kind == Source::Kind::Key ||
           (s.device >= 0 && s.device < devices);
  };
  for (const Binding& b : mapping_.bindings) {
    if (b.control < 0 || b.control >= static_cast<int>(mapping_.controls.size()) ||
        !sourceOk(b.source) || !sourceOk(b.negative) || !sourceOk(b.positive) ||
        (!b.source.valid() && !b.isPair())) {
      throw InputError(
          mapping_.file + ":" + std::to_string(b.line) +
          ": binding refers to a control or device that does not exist, or has no input");
    }
  }
  // Joysticks must keep reporting while our window (later) lacks focus or there is none at all;
  // and SDL must leave SIGINT/SIGTERM to the engine, which flushes its files on them.
  SDL_SetHint(SDL_HINT_JOYSTICK_ALLOW_BACKGROUND_EVENTS, "1");
  SDL_SetHint(SDL_HINT_NO_SIGNAL_HANDLERS, "1");
  if (SDL_InitSubSystem(kSubsystems) != 0) {
    throw InputError(std::string("SDL joystick initialisation failed: ") + SDL_GetError());
  }
  if (!options_.gamecontrollerdb.empty()) {
    loaded_mappings_ = SDL_GameControllerAddMappingsFromFile(options_.gamecontrollerdb.c_str());
    if (loaded_mappings_ < 0) {
      const std::string error = SDL_GetError();
      SDL_QuitSubSystem(kSubsystems);
      throw InputError("cannot load game controller database " + options_.gamecontrollerdb + ": " +
                       error);
    }
    say(loaded_mappings_ > 0
            ? "loaded " + std::to_string(loaded_mappings_) +
                  " controller mappings for this platform from " + options_.gamecontrollerdb
            : "warning: no controller mappings for this platform in " + options_.gamecontrollerdb +
                  " (is it a gamecontrollerdb.txt file?)");
  }
  for (std::size_t d = 0; d < mapping_.devices.size(); ++d)
    slots_.push_back(std::make_unique<Slot>());
  binding_state_.resize(mapping_.bindings.size());
  for (const ControlSpec& c : mapping_.controls) latched_.push_back(c.initial);
  rescan();
}

InputSystem::~InputSystem() {
  for (const auto& slot : slots_) {
    if (slot->pad)
      SDL_GameControllerClose(slot->pad);
    else if (slot->joystick)
      SDL_JoystickClose(slot->joystick);
  }
  SDL_QuitSubSystem(kSubsystems);
}

void InputSystem::say(const std::string& line) const {
  if (options_.log) options_.log(line);
}

// Claims connected, unclaimed joysticks for unconnected device specs: by GUID, then by name,
// then specs that take any device of their kind.
void InputSystem::rescan() {
  const int count = SDL_NumJoysticks();
  for (int pass = 0; pass < 3; ++pass) {
    for (int i = 0; i < count; ++i) {
      const SDL_JoystickID instance = SDL_JoystickGetDeviceInstanceID(i);
      const bool taken = std::any_of(slots_.begin(), slots_.end(), [&](const auto& s) {
        return s->connected() && s->instance == instance;
      });
      if (taken || instance < 0) continue;
      const std::string guid = guidText(SDL_JoystickGetDeviceGUID(i));
      const char* raw_name = SDL_JoystickNameForIndex(i);
      const std::string name = raw_name ? raw_name : "";
      const bool is_pad = SDL_IsGameController(i) == SDL_TRUE;
      const char* pad_name_c = is_pad ? SDL_GameControllerNameForIndex(i) : nullptr;
      const std::string pad_name = pad_name_c ? pad_name_c : "";
      for (std::size_t d = 0; d < mapping_.devices.size(); ++d) {
        const DeviceSpec& spec = mapping_.devices[d];
        Slot& slot = *slots_[d];
        if (slot.connected()) continue;
        if (spec.kind == DeviceKind::Gamepad && !is_pad) continue;
        const bool match = pass == 0 ? !spec.guid.empty() && spec.guid == guid
                           : pass == 1
                               ? !spec.name.empty() && (spec.name == name || spec.name == pad_name)
                               : spec.guid.empty() && spec.name.empty();
        if (!match) continue;
        if (spec.kind == DeviceKind::Gamepad) {
          slot.pad = SDL_GameControllerOpen(i);
          slot.joystick = slot.pad ? SDL_GameControllerGetJoystick(slot.pad) : nullptr;
        } else {
          slot.joystick = SDL_JoystickOpen(i);
        }
        if (!slot.joystick) {
          say("cannot open " + name + " for device " + spec.id + ": " + SDL_GetError());
          if (slot.pad) SDL_GameControllerClose(slot.pad);
          slot.pad = nullptr;
          continue;
        }
        slot.instance = SDL_JoystickInstanceID(slot.joystick);
        slot.name = spec.kind == DeviceKind::Gamepad && !pad_name.empty() ? pad_name : name;
        slot.guid = guid;
        slot.calibration = nullptr;
        if (spec.kind == DeviceKind::Joystick) {
          for (const Calibration& c : mapping_.calibrations) {
            if (c.guid == guid) slot.calibration = &c;
          }
        }
        say("device " + spec.id + ": connected " + slot.name + " (guid " + guid + ")");
        break;
      }
    }
  }
}

void InputSystem::disconnect(std::size_t d) {
  Slot& slot = *slots_[d];
  if (!slot.connected()) return;
  if (slot.pad)
    SDL_GameControllerClose(slot.pad);
  else
    SDL_JoystickClose(slot.joystick);
  say("device " + mapping_.devices[d].id + ": disconnected " + slot.name);
  slot = Slot{};
  // Latched controls driven by this device return to neutral with it.
  for (std::size_t b = 0; b < mapping_.bindings.size(); ++b) {
    const Binding& binding = mapping_.bindings[b];
    const int dev = static_cast<int>(d);
    if (binding.source.device == dev || binding.negative.device == dev ||
        binding.positive.device == dev) {
      const auto c = static_cast<std::size_t>(binding.control);
      latched_[c] = mapping_.controls[c].initial;
      binding_state_[b] = BindingState{};
    }
  }
}

void InputSystem::keyEvent(int keycode, bool down) {
  if (down) {
    if (keys_down_.insert(keycode).second) {
      ++press_events_[{static_cast<int>(Source::Kind::Key), -1, keycode, 0}];
    }
  } else {
    keys_down_.erase(keycode);
  }
}

void InputSystem::releaseAllKeys() {
  keys_down_.clear();
}

void InputSystem::pumpEvents() {
  SDL_PumpEvents();
  SDL_Event events[64];
  // Only our events: window and quit events stay queued for whoever owns the window.
  while (true) {
    const int n = SDL_PeepEvents(events, 64, SDL_GETEVENT, SDL_JOYAXISMOTION, 0x6FF);
    if (n <= 0) break;
    for (int i = 0; i < n; ++i) {
      const SDL_Event& e = events[i];
      auto slotOf = [&](SDL_JoystickID id) -> int {
        for (std::size_t d = 0; d < slots_.size(); ++d)
          if (slots_[d]->connected() && slots_[d]->instance == id) return static_cast<int>(d);
        return -1;
      };
      switch (e.type) {
        case SDL_JOYDEVICEADDED: rescan(); break;  // at once: its button events may follow
        case SDL_JOYDEVICEREMOVED:
          if (const int d = slotOf(e.jdevice.which); d >= 0)
            disconnect(static_cast<std::size_t>(d));
          break;
        case SDL_JOYBUTTONDOWN:
          if (const int d = slotOf(e.jbutton.which);
              d >= 0 && !slots_[static_cast<std::size_t>(d)]->pad)
            ++press_events_[{static_cast<int>(Source::Kind::Button), d, e.jbutton.button, 0}];
          break;
        case SDL_CONTROLLERBUTTONDOWN:
          if (const int d = slotOf(e.cbutton.which);
              d >= 0 && slots_[static_cast<std::size_t>(d)]->pad)
            ++press_events_[{static_cast<int>(Source::Kind::Button), d, e.cbutton.button, 0}];
          break;
        case SDL_JOYHATMOTION:
          if (const int d = slotOf(e.jhat.which); d >= 0) {
            // A press is a direction newly in the hat's value: up -> up-right presses right only.
            Uint8& before = slots_[static_cast<std::size_t>(d)]->hats[e.jhat.hat];
            for (int dir : {SDL_HAT_UP, SDL_HAT_RIGHT, SDL_HAT_DOWN, SDL_HAT_LEFT}) {
              if ((e.jhat.value & dir) && !(before & dir)) {
                ++press_events_[{static_cast<int>(Source::Kind::Hat), d, e.jhat.hat, dir}];
              }
            }
            before = e.jhat.value;
          }
          break;
        default: break;
      }
    }
  }
  if (options_.sdl_keyboard) {
    while (true) {
      const int n = SDL_PeepEvents(events, 64, SDL_GETEVENT, SDL_KEYDOWN, SDL_KEYUP);
      if (n <= 0) break;
      for (int i = 0; i < n; ++i) {
        if (events[i].key.repeat) continue;
        keyEvent(events[i].key.keysym.sym, events[i].type == SDL_KEYDOWN);
      }
    }
  }
  // A device that went away without its event (or before we saw it) is lost all the same.
  for (std::size_t d = 0; d < slots_.size(); ++d) {
    if (slots_[d]->connected() && !SDL_JoystickGetAttached(slots_[d]->joystick)) disconnect(d);
  }
}

bool InputSystem::connected(const Source& s) const {
  if (s.kind == Source::Kind::Key) return true;
  return s.device >= 0 && slots_[static_cast<std::size_t>(s.device)]->connected();
}

double InputSystem::readAxis(const Source& s) const {
  if (s.kind != Source::Kind::Axis || !connected(s)) return 0.0;
  const Slot& slot = *slots_[static_cast<std::size_t>(s.device)];
  if (slot.pad) {
    return normalise(
        SDL_GameControllerGetAxis(slot.pad, static_cast<SDL_GameControllerAxis>(s.index)));
  }
  const Sint16 raw = SDL_JoystickGetAxis(slot.joystick, s.index);
  if (slot.calibration) {
    for (const AxisCalibration& c : slot.calibration->axes) {
      if (c.axis == s.index) return calibrated(raw, c);
    }
  }
  return normalise(raw);
}

// Whether a digital source is down now.
bool InputSystem::level(const Source& s, const Binding& b) const {
  if (!connected(s)) return false;
  switch (s.kind) {
    case Source::Kind::Key: return keys_down_.count(s.index) != 0;
    case Source::Kind::Axis: {
      const double n = shaped(readAxis(s), b.shape);
      return b.threshold >= 0.0 ? n >= b.threshold : n <= b.threshold;
    }
    case Source::Kind::Button: {
      const Slot& slot = *slots_[static_cast<std::size_t>(s.device)];
      return slot.pad ? SDL_GameControllerGetButton(
                            slot.pad, static_cast<SDL_GameControllerButton>(s.index)) != 0
                      : SDL_JoystickGetButton(slot.joystick, s.index) != 0;
    }
    case Source::Kind::Hat:
      return (SDL_JoystickGetHat(slots_[static_cast<std::size_t>(s.device)]->joystick, s.index) &
              s.hat_direction) != 0;
    case Source::Kind::None: break;
  }
  return false;
}

// Presses since the last sample: counted events for keys, buttons and hats (so taps shorter than
// a frame count), rising edges between samples for an axis read as a button.
int InputSystem::presses(const Source& s, bool level_now, bool& prev) const {
  int count = 0;
  if (s.kind == Source::Kind::Axis) {
    count = level_now && !prev ? 1 : 0;
  } else if (auto it =
                 press_events_.find({static_cast<int>(s.kind), s.device, s.index, s.hat_direction});
             it != press_events_.end()) {
    count = it->second;
  }
  prev = level_now;
  return count;
}

void InputSystem::sample(double dt_s, std::vector<double>& values) {
  pumpEvents();
  const std::size_t n = mapping_.controls.size();
  values.resize(std::max(values.size(), n));
  // Scratch kept between samples: no allocation per frame once sized.
  std::vector<double>& deviation = deviation_;
  std::vector<char>& bound = bound_;
  std::vector<char>& pressed = pressed_;
  deviation.assign(n, 0.0);
  bound.assign(n, 0);
  pressed.assign(n, 0);
  for (std::size_t bi = 0; bi < mapping_.bindings.size(); ++bi) {
    const Binding& b = mapping_.bindings[bi];
    BindingState& st = binding_state_[bi];
    const auto c = static_cast<std::size_t>(b.control);
    const ControlSpec& control = mapping_.controls[c];
    bound[c] = 1;
    const double top = control.kind == ControlKind::Switch ? control.positions - 1 : control.max;
    const double bottom = control.kind == ControlKind::Switch ? 0.0 : control.min;
    if (b.isPair()) {
      const bool neg = level(b.negative, b), pos = level(b.positive, b);
      int p_neg = presses(b.negative, neg, st.prev_neg),
          p_pos = presses(b.positive, pos, st.prev_pos);
      // A tap shorter than a frame still moves the axis for this frame.
      const double target = ((pos || p_pos > 0) ? 1.0 : 0.0) - ((neg || p_neg > 0) ? 1.0 : 0.0);
      const bool driven = neg || pos || p_neg > 0 || p_pos > 0;
      if (driven || !b.hold) {
        if (b.rate > 0.0) {
          const double step = b.rate * dt_s;
          st.pair += std::clamp(target - st.pair, -step, step);
        } else {
          st.pair = target;
        }
      }
      deviation[c] += through(st.pair, bottom, control.initial, top) - control.initial;
      continue;
    }
    if (b.source.analog() && control.kind == ControlKind::Axis) {
      if (connected(b.source)) {
        deviation[c] += through(shaped(readAxis(b.source), b.shape), control.min, control.initial,
                                control.max) -
                        control.initial;
      }
      continue;
    }
    if (b.source.analog() && control.kind == ControlKind::Switch) {
      // A switch on an axis (a rotary knob): the position nearest the reading.
      if (connected(b.source)) {
        latched_[c] =
            std::round(through(shaped(readAxis(b.source), b.shape), 0.0, control.initial, top));
      }
      continue;
    }
    // A lost device's digital inputs do nothing: disconnect() already put their controls back.
    if (!connected(b.source)) continue;
    const bool now = level(b.source, b);
    bool prev = st.prev;
    const int count = presses(b.source, now, prev);
    st.prev = prev;
    switch (b.action) {
      case DigitalAction::Press:
        if (now || count > 0) pressed[c] = 1;
        break;
      case DigitalAction::Toggle:
        if (count % 2 == 1) latched_[c] = latched_[c] >= 0.5 ? 0.0 : 1.0;
        break;
      case DigitalAction::Hold: {
        // Written when this input's own reading changes, so other inputs of the toggle still
        // work; a tap shows for one sample.
        const double held = (now || count > 0) ? 1.0 : 0.0;
        if (held != st.written) latched_[c] = held;
        st.written = held;
        break;
      }
      case DigitalAction::Position:
        if (count > 0) latched_[c] = b.position;
        break;
      case DigitalAction::Step:
        if (count > 0) latched_[c] = std::clamp(latched_[c] + b.step * count, 0.0, top);
        break;
    }
  }
  press_events_.clear();
  for (std::size_t c = 0; c < n; ++c) {
    if (!bound[c]) continue;
    const ControlSpec& control = mapping_.controls[c];
    switch (control.kind) {
      case ControlKind::Axis:
        values[c] = std::clamp(control.initial + deviation[c], control.min, control.max);
        break;
      case ControlKind::Button: values[c] = pressed[c] ? 1.0 : control.initial; break;
      case ControlKind::Toggle: values[c] = latched_[c]; break;
      case ControlKind::Switch: values[c] = latched_[c]; break;
    }
  }
}

std::vector<DeviceStatus> InputSystem::devices() const {
  std::vector<DeviceStatus> list;
  for (std::size_t d = 0; d < slots_.size(); ++d) {
    list.push_back(
        {mapping_.devices[d].id, slots_[d]->connected(), slots_[d]->name, slots_[d]->guid});
  }
  return list;
}

}  // namespace sim::input
