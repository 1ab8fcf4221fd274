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

std::array<double, 3> arr(const Vec3& v) {
  return {v.x(), v.y(), v.z()};
}

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
      default: layout.controls.push_back({control.name, 0.0, 1.0}); break;
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
  options.screen = setup.screen;
  options.window_x = setup.window_x;
  options.window_y = setup.window_y;
  options.key_thread = setup.key_thread;
  options.title =
      "simtrainer: " + scene.name + (camera_ ? " (" + camera_->name + ")" : std::string());
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
  std::vector<render::BodyPose> poses;
  bodyPoses(state, poses);
  return cameraAt(scene, camera, poses);
}

render::ViewCamera SessionView::cameraAt(const Scene& scene, const CameraDef* camera,
                                         std::span<const render::BodyPose> poses) {
  const auto position = [&](std::size_t b) {
    const auto& p = poses[b].position_m;
    return Vec3(p[0], p[1], p[2]);
  };
  const auto orientation = [&](std::size_t b) {
    const auto& q = poses[b].orientation_wxyz;
    return Quat(q[0], q[1], q[2], q[3]);
  };
  render::ViewCamera view;
  if (camera == nullptr) {
    // Overview: the mean of the dynamic bodies, seen from 5 m south-west and 3.5 m up.
    Vec3 centre = Vec3::Zero();
    int count = 0;
    for (std::size_t i = 0; i < scene.model.bodies.size() && i < poses.size(); ++i) {
      if (scene.model.bodies[i].is_static) continue;
      centre += position(i);
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
  const Vec3 p = position(b);
  const Quat q = orientation(b);
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

render::HudState SessionView::hudState(const FrameSnapshot& snapshot) const {
  render::HudState hud;
  hudState(snapshot, hud);
  return hud;
}

void SessionView::hudState(const FrameSnapshot& snapshot, render::HudState& hud) const {
  hud.status.clear();
  auto out = std::back_inserter(hud.status);
  fmt::format_to(out, "{}  t {:.2f} s  real-time factor {:.2f}  sim {:.2f} ms/frame  overruns {}",
                 scene_.name, snapshot.time_s, snapshot.sim.real_time_factor,
                 snapshot.sim.frame_work_ms, snapshot.sim.overruns);
  if (draw_.frames_per_second > 0.0) {
    fmt::format_to(out, "  |  drawn {:.0f}/s  {:.0f} ms (p99 {:.0f})", draw_.frames_per_second,
                   draw_.mean_ms, draw_.p99_ms);
  }
  hud.controls = snapshot.pult;
  hud.motors = snapshot.motor_voltage;
  hud.speeds = snapshot.motor_speed;
  hud.notes = snapshot.notes;
  hud.warnings.clear();
  if (!snapshot.fault.empty()) hud.warnings.push_back("NUMERICAL FAULT: " + snapshot.fault);
  if (snapshot.paused) {
    hud.warnings.emplace_back(snapshot.replay ? "PAUSED: F9 resume, F10 one frame, Left/Right seek"
                                              : "PAUSED: F9 resume, F10 one frame, F11 reset");
  }
  if (snapshot.reset_refused) {
    hud.warnings.emplace_back("reset refused: the session is being recorded or is a scenario");
  }
  if (snapshot.sim.behind) {
    hud.warnings.push_back(
        fmt::format("slower than real time: the simulation cannot keep up "
                    "({} frames overran)",
                    snapshot.sim.overruns));
  }
  hud.score.clear();
  hud.score_events.clear();
  if (snapshot.score.scored) {
    fmt::format_to(std::back_inserter(hud.score), "score {:.0f}/100  (pass {:g}){}",
                   snapshot.score.score, snapshot.score.pass_mark,
                   snapshot.score.critical ? "  FAILED" : "");
    const auto& recent = snapshot.score.recent;
    // The panel is about 300 px wide: longer texts are cut (the report has them whole).
    constexpr std::size_t kChars = 42;
    for (std::size_t i = recent.size() > 3 ? recent.size() - 3 : 0; i < recent.size(); ++i) {
      const std::string& text = recent[i].text;
      hud.score_events.push_back(text.size() <= kChars ? text : text.substr(0, kChars - 3) + "...");
    }
  }
  render::HudTimeline& timeline = hud.timeline;
  timeline.shown = snapshot.replay;
  if (snapshot.replay) {
    const ReplayStatus& replay = snapshot.replay_status;
    const double duration = replay.duration_s > 0.0 ? replay.duration_s : 1.0;
    timeline.position = std::clamp(snapshot.time_s / duration, 0.0, 1.0);
    timeline.label.clear();
    fmt::format_to(
        std::back_inserter(timeline.label),
        "replay {:.1f} / {:.1f} s  x{:g}   F9 pause  F10 step  Left/Right 5 s  Home/End  -/+ speed",
        snapshot.time_s, replay.duration_s, replay.speed);
    const std::size_t marks = replay.marks ? replay.marks->size() : 0;
    timeline.marks.resize(marks);
    for (std::size_t i = 0; i < marks; ++i) {
      const TimelineMark& mark = (*replay.marks)[i];
      render::HudTimelineMark& m = timeline.marks[i];
      m.position = std::clamp(mark.time_s / duration, 0.0, 1.0);
      switch (mark.kind) {
        case TimelineMark::Kind::Fault: m.rgb = {1.0f, 0.25f, 0.2f}; break;
        case TimelineMark::Kind::Change: m.rgb = {0.3f, 0.6f, 1.0f}; break;
        case TimelineMark::Kind::Passed: m.rgb = {0.3f, 0.9f, 0.3f}; break;
        case TimelineMark::Kind::Failed: m.rgb = {1.0f, 0.1f, 0.8f}; break;
        case TimelineMark::Kind::Penalty: m.rgb = {1.0f, 0.6f, 0.0f}; break;
      }
    }
  }
}

int SessionView::sdlKeycode(int osg_key) {
  using Key = osgGA::GUIEventAdapter::KeySymbol;
  if (osg_key >= 0x20 && osg_key < 0x7f) {  // printable: SDL names them by their character
    const char c =
        static_cast<char>(osg_key >= 'A' && osg_key <= 'Z' ? osg_key - 'A' + 'a' : osg_key);
    return input::keyFromName(std::string(1, c == ' ' ? ' ' : c)).value_or(c == ' ' ? 32 : -1);
  }
  static const std::pair<int, const char*> kNamed[] = {{Key::KEY_Up, "Up"},
                                                       {Key::KEY_Down, "Down"},
                                                       {Key::KEY_Left, "Left"},
                                                       {Key::KEY_Right, "Right"},
                                                       {Key::KEY_Return, "Return"},
                                                       {Key::KEY_Tab, "Tab"},
                                                       {Key::KEY_BackSpace, "Backspace"},
                                                       {Key::KEY_Escape, "Escape"},
                                                       {Key::KEY_Page_Up, "PageUp"},
                                                       {Key::KEY_Page_Down, "PageDown"},
                                                       {Key::KEY_Home, "Home"},
                                                       {Key::KEY_End, "End"},
                                                       {Key::KEY_Insert, "Insert"},
                                                       {Key::KEY_Delete, "Delete"},
                                                       {Key::KEY_Shift_L, "Left Shift"},
                                                       {Key::KEY_Shift_R, "Right Shift"},
                                                       {Key::KEY_Control_L, "Left Ctrl"},
                                                       {Key::KEY_Control_R, "Right Ctrl"},
                                                       {Key::KEY_Alt_L, "Left Alt"},
                                                       {Key::KEY_Alt_R, "Right Alt"},
                                                       {Key::KEY_KP_Enter, "Keypad Enter"}};
  for (const auto& [key, name] : kNamed) {
    if (key == osg_key) return input::keyFromName(name).value_or(-1);
  }
  if (osg_key >= Key::KEY_F1 && osg_key <= Key::KEY_F12) {
    return input::keyFromName("F" + std::to_string(osg_key - Key::KEY_F1 + 1)).value_or(-1);
  }
  return -1;
}

void SessionView::setReplayMode(bool replay) {
  replay_keys_.store(replay);
  relayout();
}

void SessionView::setScored(bool scored) {
  scored_ = scored;
  relayout();
}

void SessionView::relayout() {
  render::HudLayout layout = hudLayout(scene_);
  layout.timeline = replay_keys_.load();
  layout.score = scored_;
  view_->setHud(layout);
}

void SessionView::setDebugOverlay(bool on) {
  view_->setDebugOverlay(on);
  overlay_.store(on);
}

void SessionView::onKey(int key, bool down) {
  using Key = osgGA::GUIEventAdapter::KeySymbol;
  if (key == render::kAllKeysUp) {
    if (OperatorQueue* queue = queue_.load()) queue->push({OperatorEvent::Kind::AllKeysUp});
    return;
  }
  const bool view_key = key == Key::KEY_F8 || key == Key::KEY_Print ||
                        (key >= Key::KEY_F1 && key <= Key::KEY_F7) || key == Key::KEY_F12;
  if (view_key) {
    if (!down) return;
    if (std::this_thread::get_id() == view_thread_) {
      viewKey(key);  // in the view's own event traversal: acts at once, as before
    } else {
      std::lock_guard lock(view_keys_mutex_);
      view_keys_.push_back(key);
    }
    return;
  }
  OperatorQueue* queue = queue_.load();
  if (queue == nullptr) return;
  OperatorEvent event;
  if (key == Key::KEY_F9 || key == Key::KEY_F10 || key == Key::KEY_F11) {
    if (!down) return;
    event.kind = key == Key::KEY_F9    ? OperatorEvent::Kind::TogglePause
                 : key == Key::KEY_F10 ? OperatorEvent::Kind::StepFrame
                                       : OperatorEvent::Kind::Reset;
    queue->push(event);
    return;
  }
  if (replay_keys_.load()) {
    if (!down) return;
    switch (key) {
      case Key::KEY_Left:
        event.kind = OperatorEvent::Kind::SeekBy;
        event.value = -5.0;
        break;
      case Key::KEY_Right:
        event.kind = OperatorEvent::Kind::SeekBy;
        event.value = 5.0;
        break;
      case Key::KEY_Home: event.kind = OperatorEvent::Kind::SeekToStart; break;
      case Key::KEY_End: event.kind = OperatorEvent::Kind::SeekToEnd; break;
      case '-':
      case Key::KEY_KP_Subtract: event.kind = OperatorEvent::Kind::Slower; break;
      case '+':
      case '=':
      case Key::KEY_KP_Add: event.kind = OperatorEvent::Kind::Faster; break;
      default: return;  // a replay has no pult to drive
    }
    queue->push(event);
    return;
  }
  const int code = sdlKeycode(key);
  if (code < 0) return;
  event.kind = OperatorEvent::Kind::Key;
  event.key = code;
  event.down = down;
  queue->push(event);
}

void SessionView::applyViewKeys() {
  std::vector<int> keys;
  {
    std::lock_guard lock(view_keys_mutex_);
    keys.swap(view_keys_);
  }
  for (const int key : keys) viewKey(key);
}

void SessionView::viewKey(int key) {
  using Key = osgGA::GUIEventAdapter::KeySymbol;
  if (key == Key::KEY_F8) {
    setDebugOverlay(!view_->debugOverlay());
  } else if (key == Key::KEY_Print) {
    shot_requested_ = true;  // taken by the next show()
  } else if (key >= Key::KEY_F1 && key <= Key::KEY_F7) {
    const auto index = static_cast<std::size_t>(key - Key::KEY_F1);
    if (index < scene_.cameras.size()) camera_ = &scene_.cameras[index];
  } else if (key == Key::KEY_F12) {
    camera_ = nullptr;
  }
}

void SessionView::debugLines(const FrameSnapshot& snapshot,
                             std::vector<render::DebugLine>& lines) const {
  lines.clear();
  const auto f = [](const Vec3& v) {
    return std::array<float, 3>{static_cast<float>(v.x()), static_cast<float>(v.y()),
                                static_cast<float>(v.z())};
  };
  for (const dynamics::JointDef& joint : scene_.model.joints) {
    const auto b = static_cast<std::size_t>(joint.body_b);
    if (b >= snapshot.poses.size()) continue;
    const auto& pose = snapshot.poses[b];
    const Quat q(pose.orientation_wxyz[0], pose.orientation_wxyz[1], pose.orientation_wxyz[2],
                 pose.orientation_wxyz[3]);
    const Vec3 p(pose.position_m[0], pose.position_m[1], pose.position_m[2]);
    const Vec3 anchor = p + q * joint.frame_b.position;
    const Vec3 axis = q * (joint.frame_b.rotation * Vec3::UnitX());
    lines.push_back({f(anchor - 0.15 * axis), f(anchor + 0.15 * axis), {1.0f, 0.9f, 0.0f, 1.0f}});
  }
  for (const dynamics::ContactReport& contact : snapshot.contacts) {
    const auto scaled = [](const Vec3& force) {
      const double n = force.norm();
      if (!(n > 0.0)) return Vec3(Vec3::Zero());
      return Vec3(force / n * std::clamp(0.002 * n, 0.02, 0.5));
    };
    const Vec3& p = contact.point_m;
    lines.push_back(
        {f(p), f(p + scaled(contact.normal * contact.normal_force_N)), {1.0f, 0.15f, 0.1f, 1.0f}});
    if (contact.friction_force_N.norm() > 1e-9) {
      lines.push_back({f(p), f(p + scaled(contact.friction_force_N)), {0.2f, 1.0f, 0.2f, 1.0f}});
    }
  }
}

void SessionView::prepare(const FrameSnapshot& snapshot) {
  applyViewKeys();
  if (view_->debugOverlay()) {
    debugLines(snapshot, debug_lines_);
    view_->setDebugLines(debug_lines_);
  }
  // An orbit camera hands the view to the mouse from its start pose; the others follow the state.
  if (camera_ != nullptr && camera_->kind == CameraDef::Kind::Orbit) {
    if (orbiting_ != camera_ || !view_->orbiting()) {
      view_->orbitFrom(cameraAt(scene_, camera_, snapshot.poses));
      orbiting_ = camera_;
    }
  } else {
    orbiting_ = nullptr;
    view_->setCamera(cameraAt(scene_, camera_, snapshot.poses));
  }
  // Inset views follow the state too (an orbit camera there stays at its start pose); the one
  // showing the main view's camera is hidden rather than drawn twice.
  for (std::size_t i = 0; i < inset_cameras_.size(); ++i) {
    const bool shown = inset_cameras_[i] != camera_;
    view_->setInsetVisible(i, shown);
    if (shown) view_->setInsetCamera(i, cameraAt(scene_, inset_cameras_[i], snapshot.poses));
  }
  hudState(snapshot, hud_state_);
  view_->updateHud(hud_state_);
}

void SessionView::show(const FrameSnapshot& snapshot) {
  prepare(snapshot);
  view_->frame(snapshot.poses);  // handles the events since the last frame
  if (shot_requested_) {
    shot_requested_ = false;
    const std::string path =
        fmt::format("{}/{}_{:.3f}s.png", shot_dir_, scene_.name, snapshot.time_s);
    try {
      render::writePng(view_->capture(snapshot.poses), path);
      if (shot_listener_) shot_listener_(path);
    } catch (const render::RenderError& e) {
      if (shot_listener_) shot_listener_(std::string("error: ") + e.what());
    }
  }
}

render::RgbImage SessionView::capture(const FrameSnapshot& snapshot) {
  prepare(snapshot);
  return view_->capture(snapshot.poses);
}

void SessionView::show(const Session& session, const RunResult& stats,
                       const std::vector<std::string>& notes) {
  takeSnapshot(session, stats, notes, wantsContacts(), own_snapshot_);
  show(own_snapshot_);
}

render::RgbImage SessionView::capture(const Session& session, const RunResult& stats,
                                      const std::vector<std::string>& notes) {
  takeSnapshot(session, stats, notes, wantsContacts(), own_snapshot_);
  return capture(own_snapshot_);
}

}  // namespace sim::engine
