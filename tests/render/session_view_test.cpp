// The MF-4 scene in the 3D view (offscreen, under Xvfb): the picture is not blank, the robot's
// pixels are where the camera projects its link meshes, moving the arm moves them, and the HUD's
// motor bars show the values the trace records for the same frame.
#include <engine/run.h>
#include <engine/scenario.h>
#include <engine/scene.h>
#include <engine/session.h>
#include <engine/session_view.h>
#include <engine/snapshot.h>

#include <engine/input_mapping.h>
#include <input/input_system.h>
#include <input/names.h>

#include <osgGA/GUIEventAdapter>

#include <osg/Image>
#include <osgDB/ReadFile>

#include <gtest/gtest.h>

#include "pixels.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <unistd.h>

namespace sim::engine {
namespace {

namespace fs = std::filesystem;
using dynamics::Quat;
using dynamics::Vec3;

const fs::path kSource = SIMTRAINER_SOURCE_DIR;
const std::vector<std::string> kRobot = {"chassis",  "track_left", "track_right", "turret",
                                         "shoulder", "elbow",      "wrist_pitch", "wrist_roll",
                                         "jaw_left", "jaw_right"};

using render_testing::Box2;
using render_testing::whitePixels;

class Mf4View : public ::testing::Test {
 protected:
  void SetUp() override {
    scene_ = loadScene((kSource / "scenes/mf4.yaml").string());
    visuals_ = bodyVisuals(scene_);
    ViewSetup setup;
    setup.width = 640;
    setup.height = 360;
    setup.offscreen = true;
    setup.camera = "site";
    view_ = std::make_unique<SessionView>(scene_, setup);
    for (std::size_t i = 0; i < scene_.model.bodies.size(); ++i) {
      robot_.push_back(std::find(kRobot.begin(), kRobot.end(), scene_.model.bodies[i].name) !=
                       kRobot.end());
    }
  }

  // Bounding box of the robot's mesh vertices as projected by the view's camera.
  Box2 projectedRobot(const dynamics::State& state) const {
    Box2 box;
    for (std::size_t b = 0; b < visuals_.size(); ++b) {
      if (!robot_[b]) continue;
      const Quat q = state.bodies[b].orientation;
      const Vec3 p = state.bodies[b].position_m;
      for (const render::MeshPart& part : visuals_[b].meshes) {
        const auto& o = part.pose.orientation_wxyz;
        const Quat qp(o[0], o[1], o[2], o[3]);
        const Vec3 pp(part.pose.position_m[0], part.pose.position_m[1], part.pose.position_m[2]);
        for (const auto& v : part.vertices_m) {
          const Vec3 world = q * (qp * Vec3(v[0], v[1], v[2]) + pp) + p;
          const auto pixel = view_->view().project({world.x(), world.y(), world.z()});
          box.add(pixel[0] - 0.5, pixel[1] - 0.5);
        }
      }
    }
    return box;
  }

  Scene scene_;
  std::vector<render::BodyVisual> visuals_;
  std::unique_ptr<SessionView> view_;
  std::vector<bool> robot_;
};

TEST_F(Mf4View, EveryLinkIsDrawnFromTheRobotModel) {
  for (const std::string& name : kRobot) {
    const int b = scene_.model.findBody(name);
    ASSERT_GE(b, 0) << name;
    const auto& meshes = visuals_[static_cast<std::size_t>(b)].meshes;
    ASSERT_FALSE(meshes.empty()) << name;
    EXPECT_GT(meshes.front().vertices_m.size(), 8u) << name;
  }
}

TEST_F(Mf4View, RobotPixelsFollowTheArm) {
  Session session(scene_);
  RunResult stats;
  for (int i = 0; i < 480; ++i) session.step();  // 2 s: the arm settles on its holding PIDs

  const render::RgbImage picture = view_->capture(session, stats);
  std::set<std::uint32_t> colours;
  for (std::size_t i = 0; i + 2 < picture.rgb.size(); i += 3) {
    colours.insert(picture.rgb[i] << 16 | picture.rgb[i + 1] << 8 | picture.rgb[i + 2]);
  }
  EXPECT_GT(colours.size(), 50u) << "a blank or flat picture";
  if (std::getenv("SIMTRAINER_KEEP_SCREENSHOT"))
    render::writePng(picture, "/tmp/mf4_view_test.png");

  const auto poses = bodyPoses(session.dynamics());
  int count = 0;
  const Box2 mask = whitePixels(view_->view().captureMask(poses, robot_), &count);
  const Box2 projected = projectedRobot(session.dynamics());
  EXPECT_GT(count, 1000);
  EXPECT_NEAR(mask.x0, projected.x0, 1.0);
  EXPECT_NEAR(mask.x1, projected.x1, 1.0);
  EXPECT_NEAR(mask.y0, projected.y0, 1.0);
  EXPECT_NEAR(mask.y1, projected.y1, 1.0);

  // Raise the shoulder for 1.5 s through the pult: the arm's pixels move with it.
  const render::RgbImage before = view_->view().captureMask(poses, robot_);
  const int shoulder = scene_.pult.find("shoulder");
  ASSERT_GE(shoulder, 0);
  session.setControl(shoulder, 1.0);
  for (int i = 0; i < 360; ++i) session.step();
  const auto raised = bodyPoses(session.dynamics());
  const render::RgbImage after = view_->view().captureMask(raised, robot_);
  int changed = 0;
  for (std::size_t i = 0; i < before.rgb.size(); i += 3) changed += before.rgb[i] != after.rgb[i];
  EXPECT_GT(changed, 300);
  const Box2 lifted = whitePixels(after, &count);
  const Box2 lifted_projection = projectedRobot(session.dynamics());
  EXPECT_NEAR(lifted.y0, lifted_projection.y0, 1.0);
  EXPECT_LT(lifted.y0, mask.y0 - 5.0) << "the raised arm reaches higher in the picture";
}

// Reads a CSV trace: column name -> values per row.
std::map<std::string, std::vector<double>> readTrace(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> names;
  std::stringstream header(line);
  for (std::string name; std::getline(header, name, ',');) names.push_back(name);
  std::map<std::string, std::vector<double>> columns;
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::string cell;
    for (std::size_t c = 0; c < names.size() && std::getline(row, cell, ','); ++c) {
      columns[names[c]].push_back(std::stod(cell));
    }
  }
  return columns;
}

// The grip scenario with a trace: at t = 14 s (jaws closed, arm lifting) the HUD's voltage and
// speed bars in the picture span what the trace holds for that frame.
TEST_F(Mf4View, HudBarsMatchTheTraceAtTheSameFrame) {
  Scenario scenario =
      loadScenario((kSource / "scenes/scenarios/mf4_grip_lift.scenario.yaml").string());
  scenario.duration_s = 14.0;
  const fs::path trace =
      fs::temp_directory_path() / ("simtrainer_hud_trace_" + std::to_string(::getpid()) + ".csv");
  PlayOptions options;
  options.trace_path = trace.string();
  // The scenario's scene is its own copy: view it, not the fixture's.
  ViewSetup setup;
  setup.width = 960;
  setup.height = 540;
  setup.offscreen = true;
  SessionView view(scenario.scene, setup);
  render::RgbImage picture;
  double shot_time = -1.0;
  options.after_frame = [&](const Session& session, const RunResult& so_far,
                            const std::vector<std::string>& notes) {
    if (shot_time < 0.0 && session.time() >= 14.0 - 1e-9) {
      picture = view.capture(session, so_far, notes);
      shot_time = session.time();
    }
    return true;
  };
  const ScenarioResult result = playScenario(scenario, options);
  ASSERT_GT(shot_time, 0.0);
  const auto columns = readTrace(trace.string());
  fs::remove(trace);
  const auto& times = columns.at("time");
  const auto row = static_cast<std::size_t>(std::min_element(times.begin(), times.end(),
                                                             [&](double a, double b) {
                                                               return std::abs(a - shot_time) <
                                                                      std::abs(b - shot_time);
                                                             }) -
                                            times.begin());
  ASSERT_NEAR(times[row], shot_time, 1e-9);

  const render::Hud& hud = *view.view().hud();
  const auto fillSpan = [&](const render::HudBarGeometry& bar, double* x0, double* x1) {
    const int y = picture.height - 1 - static_cast<int>((bar.y0 + bar.y1) / 2);
    *x0 = 1e9;
    *x1 = -1e9;
    for (int x = static_cast<int>(bar.x0) - 2; x < static_cast<int>(bar.x1) + 2; ++x) {
      const std::uint8_t* p = picture.pixel(x, y);
      if (p[0] == render::Hud::kFillRgb[0] && p[1] == render::Hud::kFillRgb[1] &&
          p[2] == render::Hud::kFillRgb[2]) {
        *x0 = std::min(*x0, double(x));
        *x1 = std::max(*x1, double(x + 1));
      }
    }
    if (*x1 < *x0) *x0 = *x1 = -1.0;  // no fill drawn
  };
  int nonzero = 0;
  for (std::size_t m = 0; m < scenario.scene.model.motors.size(); ++m) {
    const auto& motor = scenario.scene.model.motors[m];
    SCOPED_TRACE(motor.name);
    const double u = columns.at("motor." + motor.name + ".voltage")[row];
    const double w = columns.at("motor." + motor.name + ".speed")[row];
    for (const auto& [bar, value, full] :
         {std::tuple{hud.motorBars()[m], u, 1.0},
          std::tuple{hud.speedBars()[m], w, motor.no_load_speed_radps}}) {
      const double mid = (bar.x0 + bar.x1) / 2;
      const double end = mid + (bar.x1 - bar.x0) / 2 * std::clamp(value / full, -1.0, 1.0);
      double x0 = 0, x1 = 0;
      fillSpan(bar, &x0, &x1);
      if (std::abs(end - mid) < 1.0) continue;  // under a pixel: nothing to measure
      ++nonzero;
      EXPECT_NEAR(x0, std::min(mid, end), 1.0) << "value " << value;
      EXPECT_NEAR(x1, std::max(mid, end), 1.0) << "value " << value;
    }
  }
  EXPECT_GE(nonzero, 4) << "the scenario moves several motors at 14 s";
}

// Keys typed into the view reach the pult through the default keyboard layout (Up raises the
// grasp scene's `lift` axis at 2 full deflections per second and it springs back on release),
// and F-keys switch cameras without reaching the pult.
TEST(WindowKeys, DriveThePultAndSwitchCameras) {
  const Scene scene = loadScene((kSource / "scenes/grasp.yaml").string());
  input::InputOptions input_options;
  input_options.sdl_keyboard = false;
  input::InputSystem keyboard(input::defaultKeyboardMapping(inputControls(scene.pult)),
                              input_options);
  ViewSetup setup;
  setup.width = 320;
  setup.height = 180;
  setup.offscreen = true;
  SessionView view(scene, setup);
  OperatorQueue keys;
  view.setOperatorQueue(&keys);
  using Key = osgGA::GUIEventAdapter::KeySymbol;
  RunOptions options;
  options.duration_s = 2.0;
  options.input = &keyboard;
  options.operator_events = &keys;
  const int lift = scene.pult.find("lift");
  std::vector<double> lift_values;
  options.before_frame = [&](std::uint64_t frame) {
    if (frame == 5) view.view().queueKey(Key::KEY_Up, true);
    if (frame == 60) view.view().queueKey(Key::KEY_Up, false);
  };
  options.after_frame = [&](const Session& session, const RunResult& so_far,
                            const std::vector<std::string>& notes) {
    view.show(session, so_far, notes);
    lift_values.push_back(session.state().pult.values[static_cast<std::size_t>(lift)]);
    return true;
  };
  runHeadless(scene, options);
  // A key typed during frame k's drawing is sampled into the pult at frame k + 1.
  ASSERT_GE(lift_values.size(), 120u);
  EXPECT_EQ(lift_values[4], 0.0);
  EXPECT_GT(lift_values[20], 0.1);           // rising while held
  EXPECT_NEAR(lift_values[55], 1.0, 1e-12);  // full after 0.5 s
  EXPECT_NEAR(lift_values.back(), 0.0, 1e-12) << "springs back when released";

  EXPECT_EQ(SessionView::sdlKeycode('w'), input::keyFromName("W").value());
  EXPECT_EQ(SessionView::sdlKeycode('W'), input::keyFromName("W").value());
  EXPECT_EQ(SessionView::sdlKeycode(Key::KEY_Page_Up), input::keyFromName("PageUp").value());
  EXPECT_EQ(SessionView::sdlKeycode(Key::KEY_Space), input::keyFromName("Space").value());
}

TEST_F(Mf4View, FunctionKeysSelectCameras) {
  Session session(scene_);
  RunResult stats;
  OperatorQueue queue;
  view_->setOperatorQueue(&queue);
  using Key = osgGA::GUIEventAdapter::KeySymbol;
  const auto gripper = SessionView::cameraAt(scene_, &scene_.cameras[2], session.dynamics());
  view_->view().queueKey(Key::KEY_F3, true);
  view_->show(session, stats);  // the key is handled in this frame's event traversal
  view_->show(session, stats);  // and the camera used from the next
  EXPECT_EQ(view_->view().camera().eye_m, gripper.eye_m);
  view_->view().queueKey(Key::KEY_F12, true);
  view_->show(session, stats);
  view_->show(session, stats);
  EXPECT_EQ(view_->view().camera().eye_m,
            SessionView::cameraAt(scene_, nullptr, session.dynamics()).eye_m);
  std::vector<OperatorEvent> forwarded;
  queue.takeAll(forwarded);
  EXPECT_TRUE(forwarded.empty()) << "camera keys do not reach the simulation";
}

// The orbit camera hands the view to the mouse: a drag turns the eye about the target (same
// distance), and selecting another camera ends it.
TEST_F(Mf4View, OrbitCameraFollowsTheMouse) {
  Session session(scene_);
  RunResult stats;
  using Key = osgGA::GUIEventAdapter::KeySymbol;
  view_->view().queueKey(Key::KEY_F4, true);
  view_->show(session, stats);
  view_->show(session, stats);
  ASSERT_TRUE(view_->view().orbiting());
  const render::ViewCamera start = view_->view().camera();
  const auto distance = [](const render::ViewCamera& c) {
    return (Vec3(c.eye_m[0], c.eye_m[1], c.eye_m[2]) -
            Vec3(c.target_m[0], c.target_m[1], c.target_m[2]))
        .norm();
  };
  EXPECT_NEAR((Vec3(start.eye_m[0], start.eye_m[1], start.eye_m[2]) - Vec3(-1.5, -7.5, 4.5)).norm(),
              0.0, 1e-6);
  view_->view().queueDrag(320, 180, 420, 150);
  view_->show(session, stats);
  view_->show(session, stats);
  const render::ViewCamera turned = view_->view().camera();
  EXPECT_GT((Vec3(turned.eye_m[0], turned.eye_m[1], turned.eye_m[2]) -
             Vec3(start.eye_m[0], start.eye_m[1], start.eye_m[2]))
                .norm(),
            0.5);
  EXPECT_NEAR(distance(turned), distance(start), 1e-6 * distance(start));
  view_->view().queueKey(Key::KEY_F1, true);
  view_->show(session, stats);
  view_->show(session, stats);
  EXPECT_FALSE(view_->view().orbiting());
}

// A 320 × 180 pixel buffer for the window-key tests.
ViewSetup smallOffscreen() {
  ViewSetup setup;
  setup.width = 320;
  setup.height = 180;
  setup.offscreen = true;
  return setup;
}

// Print saves the picture of the frame being shown, named after the scene and the time, and
// reports it; a directory that cannot be written is reported, the run goes on.
TEST(WindowKeys, PrintSavesAScreenshot) {
  const Scene scene = loadScene((kSource / "scenes/grasp.yaml").string());
  SessionView view(scene, smallOffscreen());
  const fs::path dir =
      fs::temp_directory_path() / ("simtrainer_print_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  view.setScreenshotDirectory(dir.string());
  std::vector<std::string> saved;
  view.setScreenshotListener([&](const std::string& path) { saved.push_back(path); });
  using Key = osgGA::GUIEventAdapter::KeySymbol;
  RunOptions options;
  options.duration_s = 1.0;
  int frame = 0;
  options.after_frame = [&](const Session& session, const RunResult& so_far,
                            const std::vector<std::string>& notes) {
    if (frame == 5) view.view().queueKey(Key::KEY_Print, true);
    if (frame == 6) view.setScreenshotDirectory("/nonexistent/dir");
    if (frame == 7) view.view().queueKey(Key::KEY_Print, true);
    view.show(session, so_far, notes);
    return ++frame < 10;
  };
  runHeadless(scene, options);
  ASSERT_EQ(saved.size(), 2u);
  EXPECT_EQ(saved[0], (dir / "grasp_0.100s.png").string());  // frame 5 at 60 Hz, shown at t = 6/60
  osg::ref_ptr<osg::Image> image = osgDB::readImageFile(saved[0]);
  ASSERT_TRUE(image.valid());
  EXPECT_EQ(image->s(), 320);
  EXPECT_EQ(saved[1].rfind("error: /nonexistent/dir/grasp_", 0), 0u) << saved[1];
  fs::remove_all(dir);
}

// F9 pauses (time stands still, frames still drawn), F10 runs exactly one frame, F11 returns to
// the initial state, F9 again resumes; the HUD says it is paused.
TEST(WindowKeys, PauseStepAndReset) {
  const Scene scene = loadScene((kSource / "scenes/grasp.yaml").string());
  SessionView view(scene, smallOffscreen());
  OperatorQueue commands;
  view.setOperatorQueue(&commands);
  using Key = osgGA::GUIEventAdapter::KeySymbol;
  RunOptions options;
  options.duration_s = std::numeric_limits<double>::infinity();
  options.operator_events = &commands;
  const double frame_s = scene.stepsPerFrame() * scene.model.solver.time_step_s;
  std::vector<double> times;
  bool hud_says_paused = false;
  options.after_frame = [&](const Session& session, const RunResult& so_far,
                            const std::vector<std::string>& notes) {
    const std::size_t frame = times.size();
    if (frame == 10) view.view().queueKey(Key::KEY_F9, true);   // pause
    if (frame == 20) view.view().queueKey(Key::KEY_F10, true);  // one frame
    if (frame == 30) view.view().queueKey(Key::KEY_F11, true);  // reset
    if (frame == 40) view.view().queueKey(Key::KEY_F9, true);   // resume
    view.show(session, so_far, notes);
    FrameSnapshot snapshot;
    takeSnapshot(session, so_far, notes, false, snapshot);
    for (const auto& w : view.hudState(snapshot).warnings) {
      hud_says_paused = hud_says_paused || w.rfind("PAUSED", 0) == 0;
    }
    times.push_back(session.time());
    return frame < 50;
  };
  runHeadless(scene, options);
  ASSERT_EQ(times.size(), 51u);
  // The key typed while drawing frame k acts from frame k + 1.
  EXPECT_NEAR(times[10], 11 * frame_s, 1e-9);
  EXPECT_EQ(times[15], times[11]) << "paused";
  EXPECT_NEAR(times[21], times[20] + frame_s, 1e-9) << "one frame";
  EXPECT_EQ(times[25], times[21]) << "paused again after it";
  EXPECT_EQ(times[31], 0.0) << "reset to the start";
  EXPECT_EQ(times[39], 0.0) << "still paused";
  EXPECT_NEAR(times[45], 5 * frame_s, 1e-9) << "running again";
  EXPECT_TRUE(hud_says_paused);
}

// F8 shows the debug overlay: a line per joint axis, per contact normal and per contact with
// friction, over the collision wireframes; the picture changes, and F8 again hides it.
TEST_F(Mf4View, DebugOverlayShowsJointsAndContacts) {
  Session session(scene_);
  RunResult stats;
  for (int i = 0; i < 240; ++i) session.step();  // 1 s: the tracks rest on the floor
  const auto contacts = session.simulator().contacts(session.dynamics());
  ASSERT_FALSE(contacts.empty());
  std::size_t friction = 0;
  for (const auto& c : contacts) friction += c.friction_force_N.norm() > 1e-9 ? 1 : 0;

  const render::RgbImage plain = view_->capture(session, stats);
  using Key = osgGA::GUIEventAdapter::KeySymbol;
  view_->view().queueKey(Key::KEY_F8, true);
  view_->show(session, stats);
  ASSERT_TRUE(view_->view().debugOverlay());
  const render::RgbImage overlay = view_->capture(session, stats);
  EXPECT_EQ(view_->view().debugLineCount(),
            scene_.model.joints.size() + contacts.size() + friction);
  int changed = 0;
  for (std::size_t i = 0; i < plain.rgb.size(); i += 3) {
    changed += plain.rgb[i] != overlay.rgb[i] || plain.rgb[i + 1] != overlay.rgb[i + 1];
  }
  EXPECT_GT(changed, 500);
  if (std::getenv("SIMTRAINER_KEEP_SCREENSHOT")) render::writePng(overlay, "/tmp/mf4_overlay.png");
  view_->view().queueKey(Key::KEY_F8, true);
  view_->show(session, stats);
  EXPECT_FALSE(view_->view().debugOverlay());
  EXPECT_EQ(view_->capture(session, stats).rgb, plain.rgb) << "the same picture as before";
}

}  // namespace
}  // namespace sim::engine
