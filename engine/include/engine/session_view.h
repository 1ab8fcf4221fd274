// The engine's side of the 3D view: turns a Session (poses, pult, motors, run statistics) into
// what render::SceneView draws (body poses, HUD values, the camera of the scene's choice). The
// render library sees only these plain values, never the solver (STYLE §1).
#pragma once

#include <engine/run.h>
#include <engine/scene.h>
#include <engine/session.h>
#include <render/view.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace sim::engine {

struct ViewSetup {
  int width = 1280;  ///< Pixels.
  int height = 720;
  bool offscreen = false;  ///< Pixel buffer (screenshots) instead of a window.
  std::string camera;      ///< A camera of the scene by name; empty: its default camera.
  render::Shadows shadows = render::Shadows::Auto;  ///< See render::Shadows.
  int shadow_map_size = 2048;  ///< Texels per side of each camera's shadow map.
  bool insets = true;      ///< Draw the scene's inset cameras (`cameras[].inset`).
};

class SessionView {
 public:
  /// Throws render::RenderError when no window or pixel buffer can be made, and
  /// std::invalid_argument for an unknown camera name (listing the scene's cameras).
  SessionView(const Scene& scene, const ViewSetup& setup);

  /// Draws the session's current state with the HUD: `stats` gives the timing figures and
  /// faults, `notes` extra lines (scenario progress).
  void show(const Session& session, const RunResult& stats,
            const std::vector<std::string>& notes = {});
  /// As show(), and returns the picture.
  render::RgbImage capture(const Session& session, const RunResult& stats,
                           const std::vector<std::string>& notes = {});
  bool closed() const { return view_->closed(); }

  /// Window keys: F1 … F7 select the scene's cameras in order, F12 the overview, F8 toggles the
  /// debug overlay, Print saves a screenshot (see setScreenshotDirectory); with a run control, F9
  /// pauses and resumes, F10 runs one frame while paused, F11 resets to the start.
  /// Every other key goes to `sink` as an SDL keycode (what input::InputSystem::keyEvent takes),
  /// so the keyboard layout drives the pult from the window.
  void setKeySink(std::function<void(int sdl_keycode, bool down)> sink);
  /// Where the Print key saves its PNGs, named <scene>_<simulated time>s.png (default: the
  /// current directory).
  void setScreenshotDirectory(std::string directory) { shot_dir_ = std::move(directory); }
  /// Called with the path of every screenshot the Print key saved, or with "error: ..." when one
  /// could not be written (the run goes on).
  void setScreenshotListener(std::function<void(const std::string&)> listener) {
    shot_listener_ = std::move(listener);
  }
  /// The loop's control that F9, F10 and F11 act on (and the HUD reports); may be null.
  void setRunControl(RunControl* control) { control_ = control; }
  /// SDL keycode of an OpenSceneGraph key symbol, or -1 for keys SDL does not name.
  static int sdlKeycode(int osg_key);

  /// The debug overlay: collision wireframes, joint axes (yellow, 0.3 m), contact normals (red,
  /// 2 mm per N of normal force, 2 cm to 0.5 m) and friction forces (green, same scale).
  void setDebugOverlay(bool on) { view_->setDebugOverlay(on); }
  /// The overlay's lines for a session's state (what prepare() draws when the overlay is on).
  void debugLines(const Session& session, std::vector<render::DebugLine>& lines) const;

  /// The HUD values for a session (also what tests compare with traces).
  render::HudState hudState(const Session& session, const RunResult& stats,
                            const std::vector<std::string>& notes) const;
  /// As above, into `hud` (its vectors keep their capacity): what every frame uses.
  void hudState(const Session& session, const RunResult& stats,
                const std::vector<std::string>& notes, render::HudState& hud) const;
  /// Where a scene camera looks from in a given state. Without cameras (camera == nullptr):
  /// an overview of the dynamic bodies from the south-west, above.
  static render::ViewCamera cameraAt(const Scene& scene, const CameraDef* camera,
                                     const dynamics::State& state);

  render::SceneView& view() { return *view_; }

 private:
  void prepare(const Session& session, const RunResult& stats,
               const std::vector<std::string>& notes);
  void onKey(int osg_key, bool down);

  const Scene& scene_;
  const CameraDef* camera_ = nullptr;
  const CameraDef* orbiting_ = nullptr;  // the orbit camera the mouse controls, if any
  std::vector<const CameraDef*> inset_cameras_;  // by inset index of the view
  std::function<void(int, bool)> sink_;
  std::string shot_dir_ = ".";
  std::function<void(const std::string&)> shot_listener_;
  bool shot_requested_ = false;
  RunControl* control_ = nullptr;
  // Per-frame buffers, reused so that drawing a frame allocates nothing once they have grown.
  std::vector<render::DebugLine> debug_lines_;
  std::vector<render::BodyPose> poses_;
  render::HudState hud_state_;
  std::unique_ptr<render::SceneView> view_;
};

}  // namespace sim::engine
