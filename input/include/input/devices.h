// Operator control devices: the joysticks and game controllers SDL2 can see. This is the first,
// read-only part of the input subsystem; reading a pult state per frame arrives with its issue.
#pragma once

#include <string>
#include <vector>

namespace sim::input {

/// One joystick as SDL2 reports it at enumeration time.
struct InputDevice {
  int index = 0;                    ///< SDL device index (valid until devices change).
  std::string name;                 ///< Product name, or "(unnamed)".
  std::string guid;                 ///< SDL joystick GUID as 32 hex digits.
  bool is_game_controller = false;  ///< SDL has a game-controller mapping for it.
  std::string controller_name;      ///< Mapping name when is_game_controller.
  int axes = 0;
  int buttons = 0;
  int hats = 0;
  bool opened = false;  ///< False when the device could not be opened (counts are then 0).
};

/// Enumerates the connected joysticks and game controllers. Initialises the SDL joystick and
/// game-controller subsystems for the call only and needs no window or display. An empty list
/// means no devices. `gamecontrollerdb` (optional) is a gamecontrollerdb.txt-format file loaded
/// first, so devices it maps show as game controllers. Throws std::runtime_error with SDL's
/// message if SDL cannot initialise, InputError (input_system.h) if the file cannot be read.
std::vector<InputDevice> listInputDevices(const std::string& gamecontrollerdb = {});

}  // namespace sim::input
