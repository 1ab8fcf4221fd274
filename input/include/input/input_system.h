// Operator input: the devices of a Mapping, opened through SDL2 and sampled once per frame into
// pult values. Joysticks are hot-pluggable: a device unplugged mid-session stops driving its
// controls in the same sample (they return to neutral), and one plugged in (again) is claimed by
// the mapping's device specs (GUID first, then name). Keys arrive as events (keyEvent), from SDL's
// event queue now and from the window later.
#pragma once

#include <input/mapping.h>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace sim::input {

/// Setup problems the user can fix: an unreadable controller database, SDL failing to start.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct InputOptions {
  /// A file in SDL's gamecontrollerdb.txt format, loaded after SDL_GAMECONTROLLERCONFIG (which
  /// SDL itself reads at start); empty for none. Unreadable: InputError.
  std::string gamecontrollerdb;
  /// Take key events from SDL's event queue (SDL_KEYDOWN/UP; there is a window of SDL's). Off
  /// when keys come from elsewhere through keyEvent().
  bool sdl_keyboard = true;
  /// Connects, disconnects and other notices, one line each; none when empty.
  std::function<void(const std::string&)> log;
};

/// A mapping device and what is plugged in for it.
struct DeviceStatus {
  std::string id;
  bool connected = false;
  std::string name;  ///< Of the connected device.
  std::string guid;
};

class InputSystem {
 public:
  /// Starts SDL's joystick and game-controller subsystems (no window or display needed, events
  /// also while no window has focus), loads the controller database and claims the devices that
  /// are already connected. Throws InputError.
  explicit InputSystem(Mapping mapping, const InputOptions& options = {});
  ~InputSystem();
  InputSystem(const InputSystem&) = delete;
  InputSystem& operator=(const InputSystem&) = delete;

  /// One frame: handles pending device, button and key events, then writes every bound control
  /// into `values` (one per mapping control; unbound controls are left as they are). `dt_s` is
  /// the time since the previous sample (key-pair travel rates).
  void sample(double dt_s, std::vector<double>& values);

  /// A key went down or up (SDL keycode). Repeats (key held) are ignored. Counted at the next
  /// sample, so a tap shorter than a frame still registers once.
  void keyEvent(int keycode, bool down);
  /// Every key up, e.g. when the window loses keyboard focus (its key-up events go elsewhere).
  void releaseAllKeys();

  std::vector<DeviceStatus> devices() const;
  const Mapping& mapping() const { return mapping_; }
  /// Controller mappings loaded from InputOptions::gamecontrollerdb.
  int loadedMappings() const { return loaded_mappings_; }

 private:
  struct Slot;
  void pumpEvents();
  void rescan();
  void disconnect(std::size_t device);
  double readAxis(const Source& source) const;  // n in [-1, 1]; 0 when disconnected
  bool connected(const Source& source) const;
  bool level(const Source& source, const Binding& binding) const;
  int presses(const Source& source, bool level_now, bool& prev) const;
  void say(const std::string& line) const;

  Mapping mapping_;
  InputOptions options_;
  int loaded_mappings_ = 0;
  std::vector<std::unique_ptr<Slot>> slots_;  // one per mapping device
  std::set<int> keys_down_;
  // Press events since the last sample: (kind, device, index, direction) -> count.
  std::map<std::tuple<int, int, int, int>, int> press_events_;
  struct BindingState {
    double pair = 0.0;  // key-pair position in [-1, 1]
    bool prev = false;  // level at the previous sample (edges of axes-as-buttons, Hold)
    bool prev_neg = false, prev_pos = false;
    double written = -1.0;  // DigitalAction::Hold: what it last wrote (-1: nothing yet)
  };
  std::vector<BindingState> binding_state_;
  std::vector<double> latched_;  // toggles and switches: where they were put
  std::vector<double> deviation_;
  std::vector<char> bound_, pressed_;
};

}  // namespace sim::input
