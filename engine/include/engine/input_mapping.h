// Input mapping files (docs/input.md): which device inputs and keys drive which pult controls.
// Parsed here with the scene files' YAML reader, into the plain structs of input/mapping.h.
#pragma once

#include <engine/scheme.h>
#include <input/mapping.h>

#include <string>
#include <vector>

namespace sim::engine {

/// The pult's controls as the input system sees them.
std::vector<input::ControlSpec> inputControls(const PultDef& pult);

/// Reads a mapping file for `pult`. Throws SceneError naming the file, line and key: unknown key,
/// control, device, axis, button or key name, a binding that does not fit its control, a value
/// out of range. An unreadable file is a SceneError at line 0.
input::Mapping loadInputMapping(const std::string& path, const PultDef& pult);
input::Mapping loadInputMappingFromString(const std::string& yaml, const std::string& file,
                                          const PultDef& pult);

}  // namespace sim::engine
