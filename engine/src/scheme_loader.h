// Internal header, not API: the scene keys `pult` and `scheme` (scheme_loader.cpp).
#pragma once

#include <engine/scene.h>

#include "yaml_reader.h"

namespace sim::engine::detail {

/// Reads `pult` and `scheme` of the scene's top-level map. Needs the model's bodies, joints and
/// motors (signals and outputs name them), so it runs after they are read.
void readPultAndScheme(Context& ctx, const MapReader& top, Scene& scene);

}  // namespace sim::engine::detail
