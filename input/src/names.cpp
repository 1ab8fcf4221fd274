#include <input/names.h>

#include <SDL.h>

#include <algorithm>
#include <cctype>

namespace sim::input {

std::optional<int> keyFromName(const std::string& name) {
  if (name.empty()) return {};
  const SDL_Keycode key = SDL_GetKeyFromName(name.c_str());
  if (key == SDLK_UNKNOWN) return {};
  return static_cast<int>(key);
}

std::string keyName(int keycode) {
  const char* name = SDL_GetKeyName(static_cast<SDL_Keycode>(keycode));
  return name && *name ? name : "key " + std::to_string(keycode);
}

std::optional<int> gamepadAxisFromName(const std::string& name) {
  const auto axis = SDL_GameControllerGetAxisFromString(name.c_str());
  // SDL also accepts a prefix match ("left" -> leftx); insist on the exact name.
  if (axis == SDL_CONTROLLER_AXIS_INVALID || gamepadAxisName(axis) != name) return {};
  return static_cast<int>(axis);
}

std::optional<int> gamepadButtonFromName(const std::string& name) {
  const auto button = SDL_GameControllerGetButtonFromString(name.c_str());
  if (button == SDL_CONTROLLER_BUTTON_INVALID || gamepadButtonName(button) != name) return {};
  return static_cast<int>(button);
}

std::string gamepadAxisName(int axis) {
  const char* name = SDL_GameControllerGetStringForAxis(static_cast<SDL_GameControllerAxis>(axis));
  return name ? name : "";
}

std::string gamepadButtonName(int button) {
  const char* name =
      SDL_GameControllerGetStringForButton(static_cast<SDL_GameControllerButton>(button));
  return name ? name : "";
}

std::vector<std::string> gamepadAxisNames() {
  std::vector<std::string> names;
  for (int a = 0; a < SDL_CONTROLLER_AXIS_MAX; ++a) names.push_back(gamepadAxisName(a));
  return names;
}

std::vector<std::string> gamepadButtonNames() {
  std::vector<std::string> names;
  for (int b = 0; b < SDL_CONTROLLER_BUTTON_MAX; ++b) names.push_back(gamepadButtonName(b));
  return names;
}

std::optional<int> hatDirectionFromName(const std::string& name) {
  if (name == "up") return SDL_HAT_UP;
  if (name == "right") return SDL_HAT_RIGHT;
  if (name == "down") return SDL_HAT_DOWN;
  if (name == "left") return SDL_HAT_LEFT;
  return {};
}

std::string hatDirectionName(int direction) {
  switch (direction) {
    case SDL_HAT_UP: return "up";
    case SDL_HAT_RIGHT: return "right";
    case SDL_HAT_DOWN: return "down";
    case SDL_HAT_LEFT: return "left";
    default: return "?";
  }
}

}  // namespace sim::input
