#include <engine/session_view.h>
#include <engine/snapshot.h>
#include <input/names.h>

#include <osgGA/GUIEventAdapter>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>

namespace sim::engine {

namespace {

using dynamics::Quat;
using dynamics::Vec3;

std::array<double, 3> arr(const Vec3& v) { return {v.x(), v.y(), v.z()}; }

render::HudLayout hudLayout(const Scene& scene) {
  render::HudLayout layout;
  for (const ControlDef& control : scene.pult.controls) {
    switch (control.kind) {
      case ControlKind::Axis:
        layout.controls.push_back({control.name, control.min, control.max});
        break;
      case ControlKind::Switch:
        layout.controls.push_back({control.name, 0.0, static_cast<double>(control.positions - 1)});
        break;
      default:
        layout.controls.push_back({control.name, 0.0, 1.0});
        break;
    }
  }
  for (const dynamics::MotorDef& motor : scene.model.motors) {
    layout.motors.push_back({motor.name, -1.0, 1.0});
    // Rotor speed in rad/s, full scale at the no-load speed.
    layout.speeds.push_back({motor.name, -motor.no_load_speed_radps, motor.no_load_speed_radps});
  }
  return layout;
}

}  // namespace

SessionView::SessionView(const Scene& scene, const ViewSetup& setup) : scene_(scene) {
  if (!setup.camera.empty()) {
    std::string known;
    for (const CameraDef& camera : scene.cameras) {
      if (camera.name == setup.camera) camera_ = &camera;
      known += (known.empty() ? "" : ", ") + camera.name;
    }
    if (camera_ == nullptr) {
      throw std::invalid_argument(fmt::format("no camera named \"{}\" in {} (cameras: {})",
                                              setup.camera, scene.file,
                                              known.empty() ? "none" : known));
    }
  } else if (scene.default_camera >= 0) {
    camera_ = &scene.cameras[static_cast<std::size_t>(scene.default_camera)];
  }
  render::ViewOptions options;
  options.width = setup.width;
  options.height = setup.height;
  options.offscreen = setup.offscreen;
  options.shadows = setup.shadows;
  options.shadow_map_size = setup.shadow_map_size;
  options.title = "simtrainer: " + scene.name;
  const std::vector<render::BodyVisual> visuals = bodyVisuals(scene);
  view_ = std::make_unique<render::SceneView>(visuals, options);
  for (const CameraDef& camera : scene.cameras) {
    if (!camera.inset || !setup.insets) continue;
    const auto& [x, y, w, h] = *camera.inset;
    view_->addInset({x, y, w, h});
    inset_cameras_.push_back(&camera);
  }
  view_->setHud(hudLayout(scene));
  view_->setKeyHandler([this](int key, bool down) { onKey(key, down); });
}

render::ViewCamera SessionView::cameraAt(const Scene& scene, const CameraDef* camera,
                                         const dynamics::State& state) {
  render::ViewCamera view;
  if (camera == nullptr) {
    // Overview: the mean of the dynamic bodies, seen from 5 m south-west and 3.5 m up.
    Vec3 centre = Vec3::Zero();
    int count = 0;
    for (std::size_t i = 0; i < scene.model.bodies.size(); ++i) {
      if (scene.model.bodies[i].is_static) continue;
      centre += state.bodies[i].position_m;
      ++count;
    }
    if (count > 0) centre /= count;
    view.target_m = arr(centre);
    view.eye_m = arr(centre + Vec3(-4.0, -4.0, 3.5));
    return view;
  }
  view.fov_deg = camera->fov_deg;
  using Kind = CameraDef::Kind;
  if (camera->kind == Kind::Fixed || camera->kind == Kind::Orbit || camera->body < 0) {
    view.eye_m = arr(camera->position_m);
    view.target_m = arr(camera->target_m);
    return view;
  }
  const auto b = static_cast<std::size_t>(camera->body);
  const Vec3& p = state.bodies[b].position_m;
  const Quat& q = state.bodies[b].orientation;
  if (camera->kind == Kind::Follow) {
    // Behind the body along its heading (yaw only, so the view does not pitch with the body).
    const Vec3 forward = q * Vec3::UnitX();
    const double yaw = std::atan2(forward.y(), forward.x());
    const Quat heading(Eigen::AngleAxisd(yaw, Vec3::UnitZ()));
    view.eye_m = arr(p + heading * camera->position_m);
    view.target_m = arr(p);
    return view;
  }
  // Onboard: fixed in the body's reference frame.
  const Vec3 reference = b < scene.looks.size() ? scene.looks[b].reference.position : Vec3::Zero();
  const Vec3 eye = p + q * (reference + camera->position_m);
  const Vec3 direction = q * camera->direction;
  Vec3 up = q * Vec3::UnitZ();
  if (std::abs(up.dot(direction)) > 0.99) up = q * Vec3::UnitX();
  view.eye_m = arr(eye);
  view.target_m = arr(eye + direction);
  view.up = arr(up);
  return view;
}

render::HudState SessionView::hudState(const Session& session, const RunResult& stats,
                                       const std::vector<std::string>& notes) const {
  render::HudState hud;
  hudState(session, stats, notes, hud);
  return hud;
}

void SessionView::hudState(const Session& session, const RunResult& stats,
                           const std::vector<std::string>& notes, render::HudState& hud) const {
  const double frame_ms = stats.frame_time.count() > 0 ? 1e3 * stats.frame_time.mean() : 0.0;
  hud.status.clear();
  fmt::format_to(std::back_inserter(hud.status),
                 "{}  t {:.2f} s  real-time factor {:.2f}  frame {:.1f} ms  overruns {}",
                 scene_.name, session.time(), stats.realTimeFactor(), frame_ms, stats.overruns);
  hud.controls = session.state().pult.values;
  hud.motors.clear();
  hud.speeds.clear();
  for (const auto& motor : session.dynamics().motors) {
    hud.motors.push_back(motor.voltage);
    hud.speeds.push_back(motor.speed_radps);
  }
  hud.notes = notes;
  hud.warnings.clear();
  if (stats.fault) hud.warnings.push_back("NUMERICAL FAULT: " + stats.fault->describe());
  if (control_ != nullptr && control_->paused) {
    hud.warnings.emplace_back("PAUSED: F9 resume, F10 one frame, F11 reset");
  }
  if (control_ != nullptr && control_->reset_refused) {
    hud.warnings.emplace_back("reset refused: the session is being recorded");
  }
  if (stats.overruns > 0) {
    hud.warnings.push_back(fmt::format("slower than real time: {} frames overran", stats.overruns));
  }
}

int SessionView::sdlKeycode(int osg_key) {
  using Key = osgGA::GUIEventAdapter::KeySymbol;
  if (osg_key >= 0x20 && osg_key < 0x7f) {  // printable: SDL names them by their character
    const char c = static_cast<char>(osg_key >= 'A' && osg_key <= 'Z' ? osg_key - 'A' + 'a' : osg_key);
    return input::keyFromName(std::string(1, c == ' ' ? ' ' : c)).value_or(c == ' ' ? 32 : -1);
  }
  static const std::pair<int, const char*> kNamed[] = {
      {Key::KEY_Up, "Up"},           {Key::KEY_Down, "Down"},         {Key::KEY_Left, "Left"},
      {Key::KEY_Right, "Right"},     {Key::KEY_Return, "Return"},     {Key::KEY_Tab, "Tab"},
      {Key::KEY_BackSpace, "Backspace"}, {Key::KEY_Escape, "Escape"}, {Key::KEY_Page_Up, "PageUp"},
      {Key::KEY_Page_Down, "PageDown"}, {Key::KEY_Home, "Home"},      {Key::KEY_End, "End"},
      {Key::KEY_Insert, "Insert"},   {Key::KEY_Delete, "Delete"},     {Key::KEY_Shift_L, "Left Shift"},
      {Key::KEY_Shift_R, "Right Shift"}, {Key::KEY_Control_L, "Left Ctrl"},
      {Key::KEY_Control_R, "Right Ctrl"}, {Key::KEY_Alt_L, "Left Alt"}, {Key::KEY_Alt_R, "Right Alt"},
      {Key::KEY_KP_Enter, "Keypad Enter"}};
  for (const auto& [key, name] : kNamed) {
    if (key == osg_key) return input::keyFromName(name).value_or(-1);
  }
  if (osg_key >= Key::KEY_F1 && osg_key <= Key::KEY_F12) {
    return input::keyFromName("F" + std::to_string(osg_key - Key::KEY_F1 + 1)).value_or(-1);
  }
  return -1;
}

void SessionView::setKeySink(std::function<void(int sdl_keycode, bool down)> sink) {
  sink_ = std::move(sink);
}

void SessionView::onKey(int key, bool down) {
  using Key = osgGA::GUIEventAdapter::KeySymbol;
  if (key == Key::KEY_F8) {
    if (down) view_->setDebugOverlay(!view_->debugOverlay());
    return;
  }
  if (key == Key::KEY_Print) {
    if (down) shot_requested_ = true;  // taken by the next show()
    return;
  }
  if (key >= Key::KEY_F1 && key <= Key::KEY_F7) {
    const auto index = static_cast<std::size_t>(key - Key::KEY_F1);
    if (down && index < scene_.cameras.size()) camera_ = &scene_.cameras[index];
    return;
  }
  if (key == Key::KEY_F9 || key == Key::KEY_F10 || key == Key::KEY_F11) {
    if (down && control_ != nullptr) {
      if (key == Key::KEY_F9) control_->paused = !control_->paused;
      if (key == Key::KEY_F10 && control_->paused) ++control_->step_frames;
      if (key == Key::KEY_F11) control_->reset = true;
    }
    return;
  }
  if (key == Key::KEY_F12) {
    if (down) camera_ = nullptr;
    return;
  }
  const int code = sdlKeycode(key);
  if (code >= 0 && sink_) sink_(code, down);
}

void SessionView::debugLines(const Session& session,
                             std::vector<render::DebugLine>& lines) const {
  lines.clear();
  const auto f = [](const Vec3& v) {
    return std::array<float, 3>{static_cast<float>(v.x()), static_cast<float>(v.y()),
                                static_cast<float>(v.z())};
  };
  const dynamics::State& state = session.dynamics();
  for (const dynamics::JointDef& joint : scene_.model.joints) {
    const auto b = static_cast<std::size_t>(joint.body_b);
    const Vec3 anchor = state.bodies[b].position_m + state.bodies[b].orientation * joint.frame_b.position;
    const Vec3 axis = state.bodies[b].orientation * (joint.frame_b.rotation * Vec3::UnitX());
    lines.push_back({f(anchor - 0.15 * axis), f(anchor + 0.15 * axis), {1.0f, 0.9f, 0.0f, 1.0f}});
  }
  for (const dynamics::ContactReport& contact : session.simulator().contacts(state)) {
    const auto scaled = [](const Vec3& force) {
      const double n = force.norm();
      if (!(n > 0.0)) return Vec3(Vec3::Zero());
      return Vec3(force / n * std::clamp(0.002 * n, 0.02, 0.5));
    };
    const Vec3& p = contact.point_m;
    lines.push_back({f(p), f(p + scaled(contact.normal * contact.normal_force_N)), {1.0f, 0.15f, 0.1f, 1.0f}});
    if (contact.friction_force_N.norm() > 1e-9) {
      lines.push_back({f(p), f(p + scaled(contact.friction_force_N)), {0.2f, 1.0f, 0.2f, 1.0f}});
    }
  }
}

void SessionView::prepare(const Session& session, const RunResult& stats,
                          const std::vector<std::string>& notes) {
  if (view_->debugOverlay()) {
    debugLines(session, debug_lines_);
    view_->setDebugLines(debug_lines_);
  }
  // An orbit camera hands the view to the mouse from its start pose; the others follow the state.
  if (camera_ != nullptr && camera_->kind == CameraDef::Kind::Orbit) {
    if (orbiting_ != camera_ || !view_->orbiting()) {
      view_->orbitFrom(cameraAt(scene_, camera_, session.dynamics()));
      orbiting_ = camera_;
    }
  } else {
    orbiting_ = nullptr;
    view_->setCamera(cameraAt(scene_, camera_, session.dynamics()));
  }
  // Inset views follow the state too (an orbit camera there stays at its start pose); the one
  // showing the main view's camera is hidden rather than drawn twice.
  for (std::size_t i = 0; i < inset_cameras_.size(); ++i) {
    const bool shown = inset_cameras_[i] != camera_;
    view_->setInsetVisible(i, shown);
    if (shown) view_->setInsetCamera(i, cameraAt(scene_, inset_cameras_[i], session.dynamics()));
  }
  hudState(session, stats, notes, hud_state_);
  view_->updateHud(hud_state_);
}

void SessionView::show(const Session& session, const RunResult& stats,
                       const std::vector<std::string>& notes) {
  prepare(session, stats, notes);
  bodyPoses(session.dynamics(), poses_);
  view_->frame(poses_);  // handles the keys typed since the last frame
  if (shot_requested_) {
    shot_requested_ = false;
    const std::string path = fmt::format("{}/{}_{:.3f}s.png", shot_dir_, scene_.name, session.time());
    try {
      render::writePng(view_->capture(poses_), path);
      if (shot_listener_) shot_listener_(path);
    } catch (const render::RenderError& e) {
      if (shot_listener_) shot_listener_(std::string("error: ") + e.what());
    }
  }
}

render::RgbImage SessionView::capture(const Session& session, const RunResult& stats,
                                      const std::vector<std::string>& notes) {
  prepare(session, stats, notes);
  bodyPoses(session.dynamics(), poses_);
  return view_->capture(poses_);
}

}  // namespace sim::engine
