// Plain snapshots handed from the simulation to the render subsystem (STYLE §1): render never
// sees solver structures, only names, sizes and poses.
#pragma once

#include <dynamics/state.h>
#include <engine/scene.h>
#include <render/body_graph.h>

#include <vector>

namespace sim::engine {

/// How each body of the scene looks, in model order.
std::vector<render::BodyVisual> bodyVisuals(const Scene& scene);

/// Where each body is in `state`, in model order.
std::vector<render::BodyPose> bodyPoses(const dynamics::State& state);
/// As above, into `poses` (resized; no allocation once it has the size): for every frame.
void bodyPoses(const dynamics::State& state, std::vector<render::BodyPose>& poses);

}  // namespace sim::engine
