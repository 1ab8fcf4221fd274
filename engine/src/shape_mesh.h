// Internal header, not API: the drawn surface of a collision shape (defined in snapshot.cpp),
// shared by the snapshot of a scene's looks and by URDF visuals made of boxes, cylinders and
// spheres.
#pragma once

#include <dynamics/model.h>
#include <render/body_graph.h>

namespace sim::engine {

/// Flat- or smooth-shaded triangles of the shape in its own frame; empty for a missing hull or
/// mesh. A plane is a 200 m square of its surface.
render::MeshPart shapeMesh(const dynamics::ShapeDef& shape);

}  // namespace sim::engine
