#include <engine/snapshot.h>

namespace sim::engine {

std::vector<render::BodyVisual> bodyVisuals(const Scene& scene) {
  std::vector<render::BodyVisual> visuals;
  visuals.reserve(scene.model.bodies.size());
  for (std::size_t i = 0; i < scene.model.bodies.size(); ++i) {
    render::BodyVisual visual;
    visual.name = scene.model.bodies[i].name;
    if (i < scene.looks.size()) visual.box_size_m = scene.looks[i].box_size_m;
    // Static bodies (ground, fixtures) are drawn darker.
    if (scene.model.bodies[i].is_static) visual.color_rgba = {0.4f, 0.4f, 0.42f, 1.0f};
    visuals.push_back(std::move(visual));
  }
  return visuals;
}

std::vector<render::BodyPose> bodyPoses(const dynamics::State& state) {
  std::vector<render::BodyPose> poses;
  poses.reserve(state.bodies.size());
  for (const auto& body : state.bodies) {
    const auto& p = body.position_m;
    const auto& q = body.orientation;
    poses.push_back({{p.x(), p.y(), p.z()}, {q.w(), q.x(), q.y(), q.z()}});
  }
  return poses;
}

}  // namespace sim::engine
