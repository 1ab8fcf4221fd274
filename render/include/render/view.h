// A 3D view of the bodies through OpenSceneGraph: a window when there is a display, or an
// offscreen pixel buffer (GLX pbuffer; under Xvfb with Mesa in CI). Lit by a sun, over a ground
// grid, under a sky colour. Reads only plain snapshots (BodyVisual, BodyPose).
#pragma once

#include <render/body_graph.h>
#include <render/hud.h>

#include <osg/Geode>
#include <osg/Geometry>
#include <osg/Program>
#include <osg/ref_ptr>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace osgViewer {
class Viewer;
}

namespace sim::render {

class WindowKeys;

/// No window or pixel buffer could be made (no display, no GLX), or an image could not be saved.
class RenderError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Where the view looks from (world, m; z up).
struct ViewCamera {
  std::array<double, 3> eye_m{-4.0, -4.0, 3.0};
  std::array<double, 3> target_m{0.0, 0.0, 0.0};
  std::array<double, 3> up{0.0, 0.0, 1.0};
  double fov_deg = 60.0;  ///< Vertical field of view.
};

/// Whether the sun casts shadows. Auto: yes with a hardware OpenGL driver, no with a software
/// rasteriser (Mesa llvmpipe, softpipe, swrast), where a shadow map costs more than the frame
/// budget (bench/README.md, bench_render).
enum class Shadows { Auto, On, Off };

struct ViewOptions {
  int width = 1280;  ///< Pixels.
  int height = 720;
  bool offscreen = false;   ///< A pixel buffer instead of a window (screenshots, tests).
  bool ground_grid = true;  ///< 1 m grid lines on z = 0.
  /// The sun casts shadows (a view-dependent shadow map of `shadow_map_size` texels square).
  Shadows shadows = Shadows::Auto;
  int shadow_map_size = 2048;
  std::string title = "simtrainer";
  int screen = 0;     ///< X screen of the window; one the display lacks is a RenderError.
  int window_x = 40;  ///< Window position on its screen, pixels.
  int window_y = 40;
  /// A window's keys are read on a thread of their own (the key handler is then called on that
  /// thread), so they arrive while a frame is drawn; false: between frames, on the caller's.
  bool key_thread = true;
};

/// Where an inset view sits in the window: fractions of the window's width and height, from its
/// top-left corner (x right, y down), all in [0, 1] with x + width <= 1 and y + height <= 1.
struct InsetPlace {
  double x = 0.68, y = 0.02, width = 0.3, height = 0.3;
};

/// A line of the debug overlay, world coordinates (m).
struct DebugLine {
  std::array<float, 3> from{};
  std::array<float, 3> to{};
  std::array<float, 4> color_rgba{1.0f, 1.0f, 0.0f, 1.0f};
};

/// 8-bit RGB pixels, top row first.
struct RgbImage {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> rgb;  ///< width × height × 3.
  const std::uint8_t* pixel(int x, int y) const {
    return rgb.data() + (static_cast<std::size_t>(y) * static_cast<std::size_t>(width) +
                         static_cast<std::size_t>(x)) *
                            3;
  }
};

/// A key went down or up in the window. `key` is OpenSceneGraph's key symbol
/// (osgGA::GUIEventAdapter::KeySymbol: printable keys are their character, others 0xFFxx), or
/// kAllKeysUp when the window lost the keyboard focus (its key releases go elsewhere).
using KeyHandler = std::function<void(int key, bool down)>;
constexpr int kAllKeysUp = -1;

/// Writes a PNG; throws RenderError naming the file when it cannot.
void writePng(const RgbImage& image, const std::string& path);

class SceneView {
 public:
  /// Opens the window or pixel buffer; throws RenderError when it cannot (e.g. no DISPLAY).
  SceneView(std::span<const BodyVisual> bodies, const ViewOptions& options);
  ~SceneView();
  SceneView(const SceneView&) = delete;
  SceneView& operator=(const SceneView&) = delete;

  /// A fixed camera for the next frames (ends mouse orbiting).
  void setCamera(const ViewCamera& camera);
  /// Mouse orbiting starting from `home`: left drag turns about the target, right drag zooms,
  /// middle drag pans (OpenSceneGraph's OrbitManipulator). camera() then follows the mouse.
  void orbitFrom(const ViewCamera& home);
  bool orbiting() const;
  /// The camera of the last frame.
  const ViewCamera& camera() const { return camera_; }

  /// Adds a picture-in-picture view of the same scene (its own camera, drawn over the main view
  /// and under the HUD) and returns its index. Throws RenderError for a place outside the window.
  std::size_t addInset(const InsetPlace& place);
  std::size_t insetCount() const { return insets_.size(); }
  /// Shows or hides inset `i` (shown when added).
  void setInsetVisible(std::size_t i, bool visible);
  /// The camera of inset `i` for the next frames.
  void setInsetCamera(std::size_t i, const ViewCamera& camera);
  /// Pixel coordinates (x right, y down) of a world point in inset `i`'s camera, in the window.
  std::array<double, 2> projectInset(std::size_t i, const std::array<double, 3>& world_m) const;
  /// Inset `i`'s rectangle in window pixels: left, top, width, height.
  std::array<int, 4> insetPixels(std::size_t i) const;

  /// Moves the bodies and draws one frame.
  void frame(std::span<const BodyPose> poses);
  /// The user closed the window (always false offscreen).
  bool closed() const;

  /// Draws one frame and returns its pixels.
  RgbImage capture(std::span<const BodyPose> poses);
  /// Draws only the bodies with `shown[i]` true, in flat white on black without the ground:
  /// which pixels those bodies cover.
  RgbImage captureMask(std::span<const BodyPose> poses, const std::vector<bool>& shown);

  /// Pixel coordinates (x right, y down from the top row) of a world point in the last frame's
  /// camera.
  std::array<double, 2> project(const std::array<double, 3>& world_m) const;

  /// Receives the window's key events (none offscreen); replaces an earlier handler. With
  /// ViewOptions::key_thread it is called on the window's key thread, else during frame().
  void setKeyHandler(KeyHandler handler);
  /// The window's keys are read on their own thread (ViewOptions::key_thread, an X11 window).
  bool keyThread() const { return window_keys_ != nullptr; }
  /// The X window id (0 for a pixel buffer): for tools that type into it or close it.
  unsigned long nativeWindow() const { return native_window_; }

  /// A key event as if typed: into the window's event queue (handled at the next frame), or,
  /// with a key thread, straight to the key handler on the caller's thread.
  void queueKey(int key, bool down);
  /// Puts a mouse drag with the left button from (x0, y0) to (x1, y1), window pixels with y down,
  /// into the event queue, as if done by hand.
  void queueDrag(float x0, float y0, float x1, float y1);

  /// The debug overlay: collision wireframes on the bodies and the lines of setDebugLines()
  /// (joint axes, contacts), drawn over everything.
  void setDebugOverlay(bool on);
  bool debugOverlay() const { return debug_on_; }
  /// The overlay's lines for the next frames (kept when hidden); reuses its buffers.
  void setDebugLines(std::span<const DebugLine> lines);
  std::size_t debugLineCount() const { return debug_count_; }

  /// Adds the head-up display with this layout (replacing any earlier one).
  void setHud(const HudLayout& layout);
  /// New HUD values for the next frame; ignored without setHud().
  void updateHud(const HudState& state);
  const Hud* hud() const { return hud_.get(); }

  const BodyGraph& bodies() const { return bodies_; }
  /// The sun casts shadows in this view (ViewOptions::shadows resolved).
  bool shadowsOn() const { return shadows_; }
  /// GL_RENDERER of the context, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)".
  const std::string& glRenderer() const { return gl_renderer_; }
  int width() const { return width_; }
  int height() const { return height_; }

 private:
  struct Capture;
  struct Keys;
  void applyCamera();
  RgbImage drawAndRead(std::span<const BodyPose> poses);

  BodyGraph bodies_;
  int width_;
  int height_;
  ViewCamera camera_;
  std::unique_ptr<osgViewer::Viewer> viewer_;
  osg::ref_ptr<osg::Group> root_;
  osg::ref_ptr<osg::Group> shadowedWorld() const;

  osg::ref_ptr<osg::Group> content_;  // sun, bodies and ground: what every camera draws
  osg::ref_ptr<osg::Group> world_;    // content_ as the main camera sees it (with its shadows)
  bool shadows_ = true;
  int shadow_map_size_ = 2048;
  osg::ref_ptr<osg::Program> shadow_program_;
  std::string gl_renderer_;
  struct Inset {
    osg::ref_ptr<osg::Camera> camera;
    std::array<int, 4> pixels{};  // left, top, width, height
    bool visible = true;
  };
  std::vector<Inset> insets_;
  osg::ref_ptr<osg::Node> ground_;
  osg::ref_ptr<Capture> capture_;
  std::unique_ptr<Hud> hud_;
  osg::ref_ptr<Keys> keys_;
  struct SharedHandler;  // the key handler, shared with the key thread under a lock
  std::shared_ptr<SharedHandler> key_handler_;
  std::unique_ptr<WindowKeys> window_keys_;  // stopped first in the destructor
  unsigned long native_window_ = 0;
  osg::ref_ptr<osg::Geode> debug_;
  osg::ref_ptr<osg::Geometry> debug_lines_;
  bool debug_on_ = false;
  std::size_t debug_count_ = 0;
};

}  // namespace sim::render
