// What binds operator devices to pult controls: plain data, filled by the engine from a mapping
// file (docs/input.md) or generated for a pult (defaultKeyboardMapping), and consumed by
// InputSystem. Names are resolved to numbers before they get here, so nothing in this header needs
// SDL; the name tables (keyFromName, ...) live in input/names.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sim::input {

/// The pult's view of one control, as the input system needs it (mirrors engine ControlDef).
enum class ControlKind { Axis, Button, Toggle, Switch };

struct ControlSpec {
  std::string name;
  ControlKind kind = ControlKind::Axis;
  double min = -1.0, max = 1.0;  ///< Axis range.
  double initial = 0.0;          ///< Neutral value: a released stick, a lost device.
  int positions = 2;             ///< Switch positions 0 .. positions - 1.
};

/// How a device is opened: through SDL's game-controller mapping (named axes and buttons, the
/// same on every pad) or as a raw joystick (numbered axes, buttons and hats; panels, pedals).
enum class DeviceKind { Gamepad, Joystick };

/// A device the mapping expects. A connected device is claimed by the first unclaimed spec whose
/// `guid` equals its GUID; failing that, by the first whose `name` equals its name; a spec with
/// neither takes any device of its kind.
struct DeviceSpec {
  std::string id;  ///< The mapping's name for it, used by bindings.
  DeviceKind kind = DeviceKind::Gamepad;
  std::string name;  ///< SDL joystick name (or game-controller name) to match; empty: any.
  std::string guid;  ///< 32 hex digits as `simtrainer devices` prints; empty: any.
};

/// Raw-joystick axis calibration: raw readings (SDL units, -32768 .. 32767) at the ends and at
/// rest. Readings map to -1 at `min`, 0 at `centre`, +1 at `max`, linearly in between.
struct AxisCalibration {
  int axis = 0;
  double min = -32768.0, centre = 0.0, max = 32767.0;
};

/// Calibration of every raw joystick with this GUID (lower-case hex).
struct Calibration {
  std::string guid;
  std::vector<AxisCalibration> axes;
};

/// One physical input.
struct Source {
  enum class Kind { None, Key, Axis, Button, Hat };
  Kind kind = Kind::None;
  int device = -1;        ///< Index into Mapping::devices (not for keys).
  int index = 0;          ///< Keycode (SDL_Keycode), or axis / button / hat number. Gamepads:
                          ///< SDL_GameControllerAxis / SDL_GameControllerButton.
  int hat_direction = 0;  ///< Hat: SDL_HAT_UP, _RIGHT, _DOWN or _LEFT.
  bool valid() const { return kind != Kind::None; }
  bool analog() const { return kind == Kind::Axis; }
};

/// Shaping of an analog source, applied in this order to the reading n in [-1, 1]: invert
/// (n -> -n), dead zone (|n| <= dead_zone gives 0, the rest rescaled to full travel), expo curve
/// (n -> (1 - expo) n + expo n^3: finer control near centre, same end points).
struct AxisShape {
  double dead_zone = 0.0;  ///< [0, 1)
  double expo = 0.0;       ///< [0, 1]
  bool invert = false;
};

/// What a digital source (key, button, hat direction, or an axis past `threshold`) does.
enum class DigitalAction {
  Press,     ///< button: 1 while held
  Toggle,    ///< toggle: flips on each press
  Hold,      ///< toggle: on when pressed, off when released (a latching hardware switch)
  Position,  ///< switch: goes to `position` on press and stays (bound to an axis: follows it)
  Step,      ///< switch: moves by `step` positions on press, clamped to the ends
};

/// One binding of one control.
struct Binding {
  int control = 0;  ///< Index into Mapping::controls.
  int line = 0;     ///< In the mapping file, for messages.

  /// Analog binding (an axis control, or a switch from an axis): `source` is an axis. A reading
  /// n maps through (-1, 0, +1) -> (min, initial, max) of the control, piecewise linearly.
  /// Digital binding: `source` is a key, button, hat direction (or an axis read as pressed past
  /// `threshold`), doing `action`.
  /// Axis from two digital sources: `negative` and `positive` set.
  Source source;
  AxisShape shape;
  DigitalAction action = DigitalAction::Press;
  double threshold = 0.5;  ///< An axis as a digital source: pressed at n >= threshold.
  int position = 0;        ///< DigitalAction::Position.
  int step = 1;            ///< DigitalAction::Step.

  Source negative, positive;  ///< A pair of digital sources driving an axis.
  /// The pair's travel rate (full deflection per second; 0 = jumps at once). Released: returns
  /// to neutral at the same rate, unless `hold` (a lever that stays where it was left).
  double rate = 0.0;
  bool hold = false;

  bool isPair() const { return negative.valid(); }
};

struct Mapping {
  std::string file;  ///< Where it came from ("(default keyboard layout)" when generated).
  std::vector<ControlSpec> controls;
  std::vector<DeviceSpec> devices;
  std::vector<Calibration> calibrations;
  std::vector<Binding> bindings;
};

/// A keyboard layout that drives every control of `controls` (docs/input.md, "Default keyboard
/// layout"): axes by key pairs (arrows, then W/S, A/D, ...), buttons and toggles by single keys
/// (Space, Return, Z, X, ...), switches by a key pair stepping down/up. Controls beyond the key
/// pools stay unbound and are listed in `unbound`.
Mapping defaultKeyboardMapping(const std::vector<ControlSpec>& controls,
                               std::vector<std::string>* unbound = nullptr);

/// One line per binding, e.g. "lift: Down / Up (axis, 2 /s)", for printing the layout.
std::vector<std::string> describeMapping(const Mapping& mapping);

}  // namespace sim::input
