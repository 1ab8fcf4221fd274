// Names of keys, game-controller axes and buttons and hat directions, as written in mapping files,
// resolved to SDL's numbers. Kept apart so the engine can parse mapping files without SDL.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace sim::input {

/// SDL key name ("Space", "Up", "W", "Left Shift", "[" ...; SDL_GetKeyFromName, case-insensitive)
/// to its keycode. nullopt for an unknown name.
std::optional<int> keyFromName(const std::string& name);
/// SDL's name of a keycode ("Up", "W").
std::string keyName(int keycode);

/// Game-controller axis ("leftx", "lefty", "rightx", "righty", "lefttrigger", "righttrigger").
std::optional<int> gamepadAxisFromName(const std::string& name);
/// Game-controller button ("a", "b", "x", "y", "back", "guide", "start", "leftstick",
/// "rightstick", "leftshoulder", "rightshoulder", "dpup", "dpdown", "dpleft", "dpright", ...).
std::optional<int> gamepadButtonFromName(const std::string& name);
std::vector<std::string> gamepadAxisNames();
std::vector<std::string> gamepadButtonNames();
std::string gamepadAxisName(int axis);
std::string gamepadButtonName(int button);

/// Hat direction "up", "right", "down", "left" to SDL_HAT_UP etc.
std::optional<int> hatDirectionFromName(const std::string& name);
std::string hatDirectionName(int direction);

}  // namespace sim::input
