#include <input/devices.h>
#include <input/input_system.h>

#include <SDL.h>

#include <stdexcept>
#include <string>

namespace sim::input {
namespace {

constexpr Uint32 kSubsystems = SDL_INIT_JOYSTICK | SDL_INIT_GAMECONTROLLER;

// Keeps the SDL joystick subsystems up for one scope.
class SdlJoystickScope {
 public:
  SdlJoystickScope() {
    // Joystick events must arrive even when no window of ours has focus (headless runs); SIGINT
    // stays the engine's.
    SDL_SetHint(SDL_HINT_JOYSTICK_ALLOW_BACKGROUND_EVENTS, "1");
    SDL_SetHint(SDL_HINT_NO_SIGNAL_HANDLERS, "1");
    if (SDL_InitSubSystem(kSubsystems) != 0) {
      throw std::runtime_error(std::string("SDL joystick initialisation failed: ") +
                               SDL_GetError());
    }
  }
  ~SdlJoystickScope() { SDL_QuitSubSystem(kSubsystems); }
  SdlJoystickScope(const SdlJoystickScope&) = delete;
  SdlJoystickScope& operator=(const SdlJoystickScope&) = delete;
};

std::string guidString(SDL_JoystickGUID guid) {
  char text[33] = {};
  SDL_JoystickGetGUIDString(guid, text, sizeof text);
  return text;
}

}  // namespace

std::vector<InputDevice> listInputDevices(const std::string& gamecontrollerdb) {
  SdlJoystickScope scope;
  if (!gamecontrollerdb.empty() &&
      SDL_GameControllerAddMappingsFromFile(gamecontrollerdb.c_str()) < 0) {
    throw InputError("cannot load game controller database " + gamecontrollerdb + ": " +
                     SDL_GetError());
  }
  std::vector<InputDevice> devices;
  const int count = SDL_NumJoysticks();
  if (count < 0) {
    throw std::runtime_error(std::string("SDL_NumJoysticks failed: ") + SDL_GetError());
  }
  for (int i = 0; i < count; ++i) {
    InputDevice device;
    device.index = i;
    const char* name = SDL_JoystickNameForIndex(i);
    device.name = name ? name : "(unnamed)";
    device.guid = guidString(SDL_JoystickGetDeviceGUID(i));
    device.is_game_controller = SDL_IsGameController(i) == SDL_TRUE;
    if (device.is_game_controller) {
      const char* mapped = SDL_GameControllerNameForIndex(i);
      device.controller_name = mapped ? mapped : "";
    }
    // Open briefly to read the control counts; a device may refuse (permissions).
    if (SDL_Joystick* joystick = SDL_JoystickOpen(i)) {
      device.opened = true;
      device.axes = SDL_JoystickNumAxes(joystick);
      device.buttons = SDL_JoystickNumButtons(joystick);
      device.hats = SDL_JoystickNumHats(joystick);
      SDL_JoystickClose(joystick);
    }
    devices.push_back(std::move(device));
  }
  return devices;
}

}  // namespace sim::input
