// The engine's side of the 3D view: turns a frame snapshot (poses, pult, motors, run figures) into
// what render::SceneView draws (body poses, HUD values, the camera of the scene's choice). The
// render library sees only these plain values, never the solver (STYLE §1). A SessionView lives
// on the view's thread; its keys may arrive on a window's key thread, and those meant for the
// simulation (the pult, pause, step, reset, seek) go straight into an OperatorQueue.
#pragma once

#include <engine/frame_snapshot.h>
#include <engine/operator_queue.h>
#include <engine/run.h>
#include <engine/scene.h>
#include <engine/session.h>
#include <render/view.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace sim::engine {

struct ViewSetup {
  int width = 1280;  ///< Pixels.
  int height = 720;
  bool offscreen = false;  ///< Pixel buffer (screenshots) instead of a window.
  std::string camera;      ///< A camera of the scene by name; empty: its default camera.
  render::Shadows shadows = render::Shadows::Auto;  ///< See render::Shadows.
  int shadow_map_size = 2048;  ///< Texels per side of each camera's shadow map.
  bool insets = true;          ///< Draw the scene's inset cameras (`cameras[].inset`).
  int screen = 0;              ///< X screen of the window (`--screen`).
  int window_x = 40;           ///< Window position on its screen, pixels.
  int window_y = 40;
  /// Read the window's keys on a thread of their own, so they reach the simulation while a
  /// frame is being drawn (render::ViewOptions::key_thread).
  bool key_thread = true;
};

/// The view's own figures, shown in the HUD beside the simulation's.
struct DrawFigures {
  double frames_per_second = 0.0;
  double mean_ms = 0.0;
  double p99_ms = 0.0;
};

class SessionView {
 public:
  /// Throws render::RenderError when no window or pixel buffer can be made, and
  /// std::invalid_argument for an unknown camera name (listing the scene's cameras).
  SessionView(const Scene& scene, const ViewSetup& setup);

  /// Draws a snapshot with the HUD.
  void show(const FrameSnapshot& snapshot);
  /// As show(), and returns the picture.
  render::RgbImage capture(const FrameSnapshot& snapshot);
  /// Both from a session on the caller's thread (a snapshot taken first): `stats` gives the
  /// timing figures and faults, `notes` extra lines (scenario progress).
  void show(const Session& session, const RunResult& stats,
            const std::vector<std::string>& notes = {});
  render::RgbImage capture(const Session& session, const RunResult& stats,
                           const std::vector<std::string>& notes = {});
  bool closed() const { return view_->closed(); }

  /// Window keys: F1 … F7 select the scene's cameras in order, F12 the overview, F8 toggles the
  /// debug overlay, Print saves a screenshot (see setScreenshotDirectory); these act on the view
  /// at its next frame. F9 (pause and resume), F10 (one frame while paused), F11 (reset) and
  /// every other key, as an SDL keycode for the pult's keyboard layout, go to `queue`; in a
  /// replay (setReplayMode) Left/Right seek ∓5 s, Home/End go to the start/end and -/+ change
  /// the speed instead. Null: those keys are dropped.
  void setOperatorQueue(OperatorQueue* queue) { queue_.store(queue); }
  /// A replay: the seek and speed keys, and the HUD's timeline bar at the bottom.
  void setReplayMode(bool replay);
  /// A graded exercise: the HUD's score panel (running score, penalties as they happen).
  void setScored(bool scored);
  /// Where the Print key saves its PNGs, named <scene>_<simulated time>s.png (default: the
  /// current directory).
  void setScreenshotDirectory(std::string directory) { shot_dir_ = std::move(directory); }
  /// Called with the path of every screenshot the Print key saved, or with "error: ..." when one
  /// could not be written (the run goes on).
  void setScreenshotListener(std::function<void(const std::string&)> listener) {
    shot_listener_ = std::move(listener);
  }
  /// SDL keycode of an OpenSceneGraph key symbol, or -1 for keys SDL does not name.
  static int sdlKeycode(int osg_key);

  /// The debug overlay: collision wireframes, joint axes (yellow, 0.3 m), contact normals (red,
  /// 2 mm per N of normal force, 2 cm to 0.5 m) and friction forces (green, same scale).
  void setDebugOverlay(bool on);
  /// The overlay is on: snapshots for this view should carry contacts. Any thread.
  bool wantsContacts() const { return overlay_.load(); }
  /// The overlay's lines for a snapshot (what show() draws when the overlay is on).
  void debugLines(const FrameSnapshot& snapshot, std::vector<render::DebugLine>& lines) const;

  /// The draw figures the HUD shows (set by whoever times the drawing).
  void setDrawFigures(const DrawFigures& figures) { draw_ = figures; }
  /// The HUD values for a snapshot (also what tests compare with traces).
  render::HudState hudState(const FrameSnapshot& snapshot) const;
  /// As above, into `hud` (its vectors keep their capacity): what every frame uses.
  void hudState(const FrameSnapshot& snapshot, render::HudState& hud) const;
  /// Where a scene camera looks from with the bodies at `poses`. Without cameras
  /// (camera == nullptr): an overview of the dynamic bodies from the south-west, above.
  static render::ViewCamera cameraAt(const Scene& scene, const CameraDef* camera,
                                     std::span<const render::BodyPose> poses);
  static render::ViewCamera cameraAt(const Scene& scene, const CameraDef* camera,
                                     const dynamics::State& state);
  /// The camera of the main view (nullptr: the overview).
  const CameraDef* camera() const { return camera_; }

  render::SceneView& view() { return *view_; }

 private:
  void prepare(const FrameSnapshot& snapshot);
  void onKey(int osg_key, bool down);  // any thread
  void applyViewKeys();                // the view's thread, before a frame
  void viewKey(int osg_key);           // the view's thread
  void relayout();                     // the HUD for the replay and score flags

  const Scene& scene_;
  const CameraDef* camera_ = nullptr;
  const CameraDef* orbiting_ = nullptr;          // the orbit camera the mouse controls, if any
  std::vector<const CameraDef*> inset_cameras_;  // by inset index of the view
  std::atomic<OperatorQueue*> queue_{nullptr};
  std::atomic<bool> replay_keys_{false};
  bool scored_ = false;
  std::atomic<bool> overlay_{false};
  std::thread::id view_thread_ = std::this_thread::get_id();  // the one that made the view
  std::mutex view_keys_mutex_;
  std::vector<int> view_keys_;  // from other threads: key-downs for the view, for its next frame
  std::string shot_dir_ = ".";
  std::function<void(const std::string&)> shot_listener_;
  bool shot_requested_ = false;
  DrawFigures draw_;
  // Per-frame buffers, reused so that drawing a frame allocates nothing once they have grown.
  FrameSnapshot own_snapshot_;  // for show(session, ...)
  std::vector<render::DebugLine> debug_lines_;
  render::HudState hud_state_;
  std::unique_ptr<render::SceneView> view_;
};

}  // namespace sim::engine
