#include <render/view.h>

#include "window_keys.h"

#include <osg/Camera>
#include <osg/Geode>
#include <osg/Geometry>
#include <osg/Image>
#include <osg/LightModel>
#include <osg/LightSource>
#include <osg/LineWidth>
#include <osg/Material>
#include <osg/Program>
#include <osg/Texture2D>
#include <osg/Uniform>
#include <osgDB/WriteFile>
#include <osgGA/GUIEventHandler>
#include <osgGA/OrbitManipulator>
#include <osgShadow/ShadowedScene>
#include <osgShadow/ViewDependentShadowMap>
#include <osgViewer/Viewer>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#include <dlfcn.h>
#include <link.h>

#include <string>
#include <string_view>
#include <vector>
#endif

namespace sim::render {

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
// Sanitizer builds only (tests/sanitizers/README.md): Mesa unloads its GL driver when a display's
// last context goes. Under ASan the caches the driver keeps in its own globals then look like
// leaks whose stacks end in an unnamed module; TSan stops the process when a library its
// suppressions name is unloaded. Marked never-unload, the driver keeps its caches reachable (the
// leak checker still sees every leak of ours, with no suppression) and stays known to TSan.
void keepGlDriverLoaded() {
  std::vector<std::string> drivers;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        const std::string_view path = info->dlpi_name != nullptr ? info->dlpi_name : "";
        if (path.find("_dri.so") != std::string_view::npos ||
            path.find("libgallium") != std::string_view::npos) {
          static_cast<std::vector<std::string>*>(out)->emplace_back(path);
        }
        return 0;
      },
      &drivers);
  // Outside the iteration (it holds the loader's lock). The handle is never closed, on purpose.
  for (const std::string& driver : drivers) {
    dlopen(driver.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  }
}
#endif

const osg::Vec4 kSky(0.62f, 0.74f, 0.86f, 1.0f);
// Fragment stage of the shadowed scene; vertices stay with the fixed pipeline, which lights them
// (gl_Color) and generates the shadow-map coordinates on unit 1 from the technique's TexGen. A
// fragment the sun cannot see keeps the ambient part only (emission + material ambient times
// the sky's light-model ambient): shadows are darker, never black. Textured parts (unit 0) set
// `textured` (BodyGraph); the mask capture turns it off.
constexpr const char* kShadowFragmentShader = R"(
uniform sampler2D baseTexture;
uniform sampler2DShadow shadowTexture;
uniform bool textured;
void main() {
  vec4 base = textured ? texture2D(baseTexture, gl_TexCoord[0].xy) : vec4(1.0);
  float sunlit = shadow2DProj(shadowTexture, gl_TexCoord[1]).r;
  vec4 colour = mix(gl_FrontLightModelProduct.sceneColor, gl_Color, sunlit);
  colour.a = gl_Color.a;
  gl_FragColor = colour * base;
}
)";

// Node mask bits of the shadow passes (every other node keeps all bits set).
constexpr osg::Node::NodeMask kReceivesShadow = 0x1;
constexpr osg::Node::NodeMask kCastsShadow = 0x2;

// 1 m grid lines on z = 0 (slightly above, so a floor's top face at z = 0 does not hide them),
// 40 m across, unlit.
osg::ref_ptr<osg::Node> makeGroundGrid() {
  constexpr int kHalf = 20;
  constexpr float kLift = 0.003f;
  osg::ref_ptr<osg::Vec3Array> lines = new osg::Vec3Array;
  for (int i = -kHalf; i <= kHalf; ++i) {
    const auto f = static_cast<float>(i);
    lines->push_back(osg::Vec3(f, -kHalf, kLift));
    lines->push_back(osg::Vec3(f, kHalf, kLift));
    lines->push_back(osg::Vec3(-kHalf, f, kLift));
    lines->push_back(osg::Vec3(kHalf, f, kLift));
  }
  osg::ref_ptr<osg::Geometry> geometry = new osg::Geometry;
  geometry->setVertexArray(lines.get());
  osg::ref_ptr<osg::Vec4Array> colors = new osg::Vec4Array;
  colors->push_back(osg::Vec4(0.30f, 0.32f, 0.30f, 1.0f));
  geometry->setColorArray(colors.get(), osg::Array::BIND_OVERALL);
  geometry->addPrimitiveSet(new osg::DrawArrays(GL_LINES, 0, static_cast<GLsizei>(lines->size())));
  osg::ref_ptr<osg::Geode> geode = new osg::Geode;
  geode->setName("ground_grid");
  geode->addDrawable(geometry.get());
  geode->getOrCreateStateSet()->setMode(GL_LIGHTING, osg::StateAttribute::OFF);
  return geode;
}

}  // namespace

// Reads the frame's pixels after drawing, when asked.
struct SceneView::Capture : public osg::Camera::DrawCallback {
  mutable bool requested = false;
  osg::ref_ptr<osg::Image> image = new osg::Image;
  void operator()(osg::RenderInfo& info) const override {
    if (!requested) return;
    const osg::Viewport* viewport = info.getCurrentCamera()->getViewport();
    image->readPixels(static_cast<int>(viewport->x()), static_cast<int>(viewport->y()),
                      static_cast<int>(viewport->width()), static_cast<int>(viewport->height()),
                      GL_RGB, GL_UNSIGNED_BYTE);
    requested = false;
  }
};

struct SceneView::SharedHandler {
  std::mutex mutex;
  KeyHandler handler;
  void operator()(int key, bool down) {
    std::lock_guard lock(mutex);
    if (handler) handler(key, down);
  }
};

// Passes key events to the handler; consumes nothing (OSG's own handlers still see them). Idle
// when the window's keys are read on their own thread (WindowKeys), which delivers them instead.
struct SceneView::Keys : public osgGA::GUIEventHandler {
  std::shared_ptr<SharedHandler> handler;
  bool elsewhere = false;
  bool handle(const osgGA::GUIEventAdapter& event, osgGA::GUIActionAdapter&) override {
    const auto type = event.getEventType();
    if (!elsewhere && handler &&
        (type == osgGA::GUIEventAdapter::KEYDOWN || type == osgGA::GUIEventAdapter::KEYUP)) {
      (*handler)(event.getKey(), type == osgGA::GUIEventAdapter::KEYDOWN);
    }
    return false;
  }
};

SceneView::SceneView(std::span<const BodyVisual> bodies, const ViewOptions& options)
    : bodies_(bodies), width_(options.width), height_(options.height) {
  if (width_ <= 0 || height_ <= 0) throw RenderError("view size must be positive");
  osg::ref_ptr<osg::GraphicsContext::Traits> traits = new osg::GraphicsContext::Traits;
  traits->x = options.window_x;
  traits->y = options.window_y;
  traits->width = width_;
  traits->height = height_;
  traits->windowDecoration = !options.offscreen;
  traits->windowName = options.title;
  traits->doubleBuffer = true;
  traits->pbuffer = options.offscreen;
  traits->sharedContext = nullptr;
  traits->depth = 24;
  traits->readDISPLAY();
  traits->setUndefinedScreenDetailsToDefaultScreen();
  if (options.screen != 0) {
    osg::GraphicsContext::WindowingSystemInterface* system =
        osg::GraphicsContext::getWindowingSystemInterface();
    osg::GraphicsContext::ScreenIdentifier display(traits->hostName, traits->displayNum, 0);
    const unsigned int screens = system != nullptr ? system->getNumScreens(display) : 0;
    if (options.screen < 0 || static_cast<unsigned int>(options.screen) >= screens) {
      throw RenderError("no screen " + std::to_string(options.screen) + " on display " +
                        traits->displayName() + " (it has " + std::to_string(screens) + ")");
    }
    traits->screenNum = options.screen;
  }
  osg::ref_ptr<osg::GraphicsContext> context =
      osg::GraphicsContext::createGraphicsContext(traits.get());
  if (!context || !context->valid()) {
    throw RenderError(std::string("cannot open ") +
                      (options.offscreen ? "an offscreen pixel buffer" : "a window") +
                      " (is DISPLAY set and does the X server offer GLX?)");
  }
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  keepGlDriverLoaded();
#endif

  root_ = new osg::Group;
  root_->setName("scene");
  if (options.shadows != Shadows::Off && options.shadow_map_size < 64) {
    throw RenderError("shadow map size must be at least 64");
  }
  shadow_map_size_ = options.shadow_map_size;
  shadow_program_ = new osg::Program;
  shadow_program_->setName("sun_shadow");
  shadow_program_->addShader(new osg::Shader(osg::Shader::FRAGMENT, kShadowFragmentShader));
  // What every camera draws: the sun, the bodies, the ground. Each camera (main view, insets)
  // sees it through its own shadowed scene (shadowedWorld), whose shadow map is fitted to that
  // camera's view.
  content_ = new osg::Group;
  content_->setName("world");
  osg::ref_ptr<osg::LightModel> sky = new osg::LightModel;
  sky->setAmbientIntensity(osg::Vec4(0.42f, 0.44f, 0.48f, 1.0f));
  content_->getOrCreateStateSet()->setAttributeAndModes(sky.get());
  // The sun, from the south-east and high, in world coordinates: a light source in the graph
  // (rather than the viewer's sky light, which sits in the main camera's eye space) lights
  // every camera that draws the world, inset views included, from the same direction.
  osg::ref_ptr<osg::LightSource> sun_source = new osg::LightSource;
  osg::Light* sun = sun_source->getLight();
  sun->setLightNum(0);
  sun->setPosition(osg::Vec4(0.45f, -0.35f, 0.82f, 0.0f));  // directional: w = 0
  sun->setDiffuse(osg::Vec4(0.85f, 0.83f, 0.78f, 1.0f));
  // The sky's ambient is the light model's, not the sun's: a shadowed fragment keeps the
  // ambient part only, so it must not come from the light that is blocked.
  sun->setAmbient(osg::Vec4(0.0f, 0.0f, 0.0f, 1.0f));
  sun->setSpecular(osg::Vec4(0.4f, 0.4f, 0.4f, 1.0f));
  sun_source->setStateSetModes(*content_->getOrCreateStateSet(), osg::StateAttribute::ON);
  content_->getOrCreateStateSet()->setMode(GL_LIGHTING, osg::StateAttribute::ON);
  content_->addChild(sun_source.get());
  content_->addChild(bodies_.root());
  if (options.ground_grid) {
    ground_ = makeGroundGrid();
    ground_->setNodeMask(kReceivesShadow);  // lines cast nothing
    content_->addChild(ground_.get());
  }

  // Debug lines: one dynamic geometry, unlit, over everything (no depth test).
  debug_lines_ = new osg::Geometry;
  debug_lines_->setDataVariance(osg::Object::DYNAMIC);
  debug_lines_->setUseDisplayList(false);
  debug_lines_->setUseVertexBufferObjects(true);
  debug_lines_->setVertexArray(new osg::Vec3Array);
  debug_lines_->setColorArray(new osg::Vec4Array, osg::Array::BIND_PER_VERTEX);
  debug_lines_->addPrimitiveSet(new osg::DrawArrays(GL_LINES, 0, 0));
  debug_ = new osg::Geode;
  debug_->setName("debug_lines");
  debug_->addDrawable(debug_lines_.get());
  osg::StateSet* debug_state = debug_->getOrCreateStateSet();
  debug_state->setMode(GL_LIGHTING, osg::StateAttribute::OFF);
  debug_state->setMode(GL_DEPTH_TEST, osg::StateAttribute::OFF);
  debug_state->setRenderBinDetails(900, "RenderBin");
  debug_->setNodeMask(0);
  root_->addChild(debug_.get());

  viewer_ = std::make_unique<osgViewer::Viewer>();
  viewer_->setThreadingModel(osgViewer::Viewer::SingleThreaded);
  viewer_->setLightingMode(osg::View::NO_LIGHT);  // the sun is in the world (above)

  osg::Camera* camera = viewer_->getCamera();
  camera->setGraphicsContext(context.get());
  camera->setViewport(new osg::Viewport(0, 0, width_, height_));
  camera->setClearColor(kSky);
  const GLenum buffer = traits->doubleBuffer ? GL_BACK : GL_FRONT;
  camera->setDrawBuffer(buffer);
  camera->setReadBuffer(buffer);
  capture_ = new Capture;
  camera->setFinalDrawCallback(capture_.get());
  viewer_->setSceneData(root_.get());
  keys_ = new Keys;
  key_handler_ = std::make_shared<SharedHandler>();
  keys_->handler = key_handler_;
  viewer_->addEventHandler(keys_.get());
  // The engine owns the keyboard (Escape must not end a training session by accident).
  viewer_->setKeyEventSetsDone(0);
  viewer_->realize();
  if (!viewer_->isRealized()) throw RenderError("the viewer could not be realized");
  // The renderer decides Shadows::Auto.
  if (context->makeCurrent()) {
    if (const GLubyte* name = glGetString(GL_RENDERER)) {
      gl_renderer_ = reinterpret_cast<const char*>(name);
    }
    context->releaseContext();
  }
  const bool software = gl_renderer_.find("llvmpipe") != std::string::npos ||
                        gl_renderer_.find("softpipe") != std::string::npos ||
                        gl_renderer_.find("swrast") != std::string::npos;
  shadows_ = options.shadows == Shadows::On || (options.shadows == Shadows::Auto && !software);
  world_ = shadowedWorld();
  root_->insertChild(0, world_.get());  // under the debug lines, the insets and the HUD
  applyCamera();
  native_window_ = nativeWindowId(*context);
  if (!options.offscreen && options.key_thread) {
    // The handler is read through the shared holder, so setKeyHandler() may come later; until
    // then keys are dropped, as without a handler.
    window_keys_ = startWindowKeys(
        *context, [handler = key_handler_](int key, bool down) { (*handler)(key, down); });
    keys_->elsewhere = window_keys_ != nullptr;
  }
}

SceneView::~SceneView() {
  window_keys_.reset();
}  // before the window goes

osg::ref_ptr<osg::Group> SceneView::shadowedWorld() const {
  if (!shadows_) {
    osg::ref_ptr<osg::Group> plain = new osg::Group;
    plain->addChild(content_.get());
    return plain;
  }
  // A view-dependent shadow map from the sun (light 0) on texture unit 1. The technique's own
  // fragment shader does not compile on Mesa (it indexes gl_TexCoord by a uniform) and the fixed
  // pipeline would paint shadows black, so ours combines them: see kShadowFragmentShader.
  osg::ref_ptr<osgShadow::ShadowedScene> shadowed = new osgShadow::ShadowedScene;
  osgShadow::ShadowSettings* settings = shadowed->getShadowSettings();
  settings->setReceivesShadowTraversalMask(kReceivesShadow);
  settings->setCastsShadowTraversalMask(kCastsShadow);
  settings->setLightNum(0);
  settings->setTextureSize(
      osg::Vec2s(static_cast<short>(shadow_map_size_), static_cast<short>(shadow_map_size_)));
  settings->setShaderHint(osgShadow::ShadowSettings::NO_SHADERS);
  settings->setMaximumShadowMapDistance(60.0);
  shadowed->setShadowTechnique(new osgShadow::ViewDependentShadowMap);
  shadowed->addChild(content_.get());
  osg::StateSet* state = shadowed->getOrCreateStateSet();
  state->setAttributeAndModes(shadow_program_.get());
  state->addUniform(new osg::Uniform("baseTexture", 0));
  state->addUniform(new osg::Uniform("shadowTexture", 1));
  state->addUniform(new osg::Uniform("textured", false));
  return shadowed;
}

void SceneView::setCamera(const ViewCamera& camera) {
  if (viewer_->getCameraManipulator()) viewer_->setCameraManipulator(nullptr, false);
  camera_ = camera;
  applyCamera();
}

void SceneView::orbitFrom(const ViewCamera& home) {
  camera_ = home;
  applyCamera();
  osg::ref_ptr<osgGA::OrbitManipulator> orbit = new osgGA::OrbitManipulator;
  const auto v = [](const std::array<double, 3>& a) { return osg::Vec3d(a[0], a[1], a[2]); };
  orbit->setHomePosition(v(home.eye_m), v(home.target_m), v(home.up));
  orbit->setAllowThrow(false);
  viewer_->setCameraManipulator(orbit.get(), true);
}

bool SceneView::orbiting() const {
  return viewer_->getCameraManipulator() != nullptr;
}

void SceneView::queueDrag(float x0, float y0, float x1, float y1) {
  osgGA::EventQueue* queue = viewer_->getEventQueue();
  queue->getCurrentEventState()->setMouseYOrientation(
      osgGA::GUIEventAdapter::Y_INCREASING_DOWNWARDS);
  queue->mouseMotion(x0, y0);
  queue->mouseButtonPress(x0, y0, 1);
  constexpr int kSteps = 8;
  for (int i = 1; i <= kSteps; ++i) {
    const float t = static_cast<float>(i) / kSteps;
    queue->mouseMotion(x0 + t * (x1 - x0), y0 + t * (y1 - y0));
  }
  queue->mouseButtonRelease(x1, y1, 1);
}

void SceneView::applyCamera() {
  osg::Camera* camera = viewer_->getCamera();
  const auto v = [](const std::array<double, 3>& a) { return osg::Vec3d(a[0], a[1], a[2]); };
  camera->setViewMatrixAsLookAt(v(camera_.eye_m), v(camera_.target_m), v(camera_.up));
  camera->setProjectionMatrixAsPerspective(camera_.fov_deg, static_cast<double>(width_) / height_,
                                           0.05, 500.0);
  // Fixed near/far planes: the projection used for drawing is the one project() reports.
  camera->setComputeNearFarMode(osg::CullSettings::DO_NOT_COMPUTE_NEAR_FAR);
}

std::size_t SceneView::addInset(const InsetPlace& place) {
  const auto in = [](double v) { return std::isfinite(v) && v >= 0.0 && v <= 1.0; };
  if (!in(place.x) || !in(place.y) || !in(place.width) || !in(place.height) || place.width <= 0.0 ||
      place.height <= 0.0 || place.x + place.width > 1.0 + 1e-9 ||
      place.y + place.height > 1.0 + 1e-9) {
    throw RenderError("an inset view must lie inside the window (fractions in [0, 1])");
  }
  Inset inset;
  const int left = static_cast<int>(std::lround(place.x * width_));
  const int top = static_cast<int>(std::lround(place.y * height_));
  const int w = std::max(1, static_cast<int>(std::lround(place.width * width_)));
  const int h = std::max(1, static_cast<int>(std::lround(place.height * height_)));
  inset.pixels = {left, top, w, h};
  inset.camera = new osg::Camera;
  inset.camera->setName("inset" + std::to_string(insets_.size()));
  inset.camera->setReferenceFrame(osg::Transform::ABSOLUTE_RF);
  // After the main view, before the HUD (order 100).
  inset.camera->setRenderOrder(osg::Camera::POST_RENDER, 1 + static_cast<int>(insets_.size()));
  inset.camera->setClearMask(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
  inset.camera->setClearColor(kSky);
  inset.camera->setViewport(left, height_ - top - h, w, h);  // OpenGL's origin: bottom-left
  inset.camera->setComputeNearFarMode(osg::CullSettings::DO_NOT_COMPUTE_NEAR_FAR);
  inset.camera->addChild(shadowedWorld().get());
  root_->addChild(inset.camera.get());
  insets_.push_back(inset);
  setInsetCamera(insets_.size() - 1, ViewCamera{});
  return insets_.size() - 1;
}

void SceneView::setInsetCamera(std::size_t i, const ViewCamera& view) {
  osg::Camera* camera = insets_.at(i).camera.get();
  const auto v = [](const std::array<double, 3>& a) { return osg::Vec3d(a[0], a[1], a[2]); };
  camera->setViewMatrixAsLookAt(v(view.eye_m), v(view.target_m), v(view.up));
  const auto& px = insets_[i].pixels;
  camera->setProjectionMatrixAsPerspective(view.fov_deg, static_cast<double>(px[2]) / px[3], 0.05,
                                           500.0);
}

std::array<double, 2> SceneView::projectInset(std::size_t i,
                                              const std::array<double, 3>& world_m) const {
  const osg::Camera* camera = insets_.at(i).camera.get();
  const osg::Matrixd window = camera->getViewMatrix() * camera->getProjectionMatrix() *
                              camera->getViewport()->computeWindowMatrix();
  const osg::Vec3d p = osg::Vec3d(world_m[0], world_m[1], world_m[2]) * window;
  return {p.x(), static_cast<double>(height_) - p.y()};
}

void SceneView::setInsetVisible(std::size_t i, bool visible) {
  insets_.at(i).visible = visible;
  insets_[i].camera->setNodeMask(visible ? ~0u : 0u);
}

std::array<int, 4> SceneView::insetPixels(std::size_t i) const {
  return insets_.at(i).pixels;
}

void SceneView::setDebugOverlay(bool on) {
  debug_on_ = on;
  debug_->setNodeMask(on ? ~0u : 0u);
  bodies_.setCollisionVisible(on);
}

void SceneView::setDebugLines(std::span<const DebugLine> lines) {
  auto* vertices = static_cast<osg::Vec3Array*>(debug_lines_->getVertexArray());
  auto* colors = static_cast<osg::Vec4Array*>(debug_lines_->getColorArray());
  vertices->resize(2 * lines.size());  // keeps its capacity: no allocation once grown
  colors->resize(2 * lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const DebugLine& l = lines[i];
    (*vertices)[2 * i].set(l.from[0], l.from[1], l.from[2]);
    (*vertices)[2 * i + 1].set(l.to[0], l.to[1], l.to[2]);
    const osg::Vec4 c(l.color_rgba[0], l.color_rgba[1], l.color_rgba[2], l.color_rgba[3]);
    (*colors)[2 * i] = (*colors)[2 * i + 1] = c;
  }
  vertices->dirty();
  colors->dirty();
  static_cast<osg::DrawArrays*>(debug_lines_->getPrimitiveSet(0))
      ->setCount(static_cast<GLsizei>(vertices->size()));
  debug_lines_->dirtyBound();
  debug_count_ = lines.size();
}

void SceneView::setKeyHandler(KeyHandler handler) {
  std::lock_guard lock(key_handler_->mutex);
  key_handler_->handler = std::move(handler);
}

void SceneView::queueKey(int key, bool down) {
  if (window_keys_) {
    (*key_handler_)(key, down);
    return;
  }
  if (down) {
    viewer_->getEventQueue()->keyPress(key);
  } else {
    viewer_->getEventQueue()->keyRelease(key);
  }
}

void SceneView::setHud(const HudLayout& layout) {
  if (hud_) root_->removeChild(hud_->camera());
  hud_ = std::make_unique<Hud>(layout, width_, height_);
  root_->addChild(hud_->camera());
}

void SceneView::updateHud(const HudState& state) {
  if (hud_) hud_->update(state);
}

void SceneView::frame(std::span<const BodyPose> poses) {
  bodies_.update(poses);
  viewer_->frame();
  if (osgGA::CameraManipulator* manipulator = viewer_->getCameraManipulator()) {
    osg::Vec3d eye, center, up;
    manipulator->getInverseMatrix().getLookAt(eye, center, up);
    camera_.eye_m = {eye.x(), eye.y(), eye.z()};
    camera_.target_m = {center.x(), center.y(), center.z()};
    camera_.up = {up.x(), up.y(), up.z()};
  }
}

bool SceneView::closed() const {
  return viewer_->done();
}

RgbImage SceneView::drawAndRead(std::span<const BodyPose> poses) {
  capture_->requested = true;
  frame(poses);
  const osg::Image& image = *capture_->image;
  RgbImage out;
  out.width = image.s();
  out.height = image.t();
  out.rgb.resize(static_cast<std::size_t>(out.width) * static_cast<std::size_t>(out.height) * 3);
  const std::size_t row = static_cast<std::size_t>(out.width) * 3;
  for (int y = 0; y < out.height; ++y) {  // OpenGL's rows run bottom-up
    std::memcpy(out.rgb.data() + static_cast<std::size_t>(y) * row,
                image.data(0, out.height - 1 - y), row);
  }
  return out;
}

RgbImage SceneView::capture(std::span<const BodyPose> poses) {
  return drawAndRead(poses);
}

RgbImage SceneView::captureMask(std::span<const BodyPose> poses, const std::vector<bool>& shown) {
  osg::Camera* camera = viewer_->getCamera();
  // Everything white (emission only), the rest hidden, on black.
  osg::ref_ptr<osg::Material> white = new osg::Material;
  white->setColorMode(osg::Material::OFF);
  white->setEmission(osg::Material::FRONT_AND_BACK, osg::Vec4(1, 1, 1, 1));
  white->setDiffuse(osg::Material::FRONT_AND_BACK, osg::Vec4(0, 0, 0, 1));
  white->setAmbient(osg::Material::FRONT_AND_BACK, osg::Vec4(0, 0, 0, 1));
  white->setSpecular(osg::Material::FRONT_AND_BACK, osg::Vec4(0, 0, 0, 1));
  osg::StateSet* state = root_->getOrCreateStateSet();
  state->setAttributeAndModes(white.get(), osg::StateAttribute::ON | osg::StateAttribute::OVERRIDE);
  camera->setClearColor(osg::Vec4(0, 0, 0, 1));
  if (ground_) ground_->setNodeMask(0);
  if (hud_) hud_->camera()->setNodeMask(0);
  for (const Inset& inset : insets_) inset.camera->setNodeMask(0);
  root_->replaceChild(world_.get(), content_.get());  // no shadow pass
  // Textures would tint the white (the fixed pipeline: turning unit 0 off is enough).
  state->setTextureMode(0, GL_TEXTURE_2D, osg::StateAttribute::OFF | osg::StateAttribute::OVERRIDE);
  osg::ref_ptr<osg::Uniform> untextured = new osg::Uniform("textured", false);
  state->addUniform(untextured.get(), osg::StateAttribute::ON | osg::StateAttribute::OVERRIDE);
  debug_->setNodeMask(0);
  bodies_.setCollisionVisible(false);
  for (std::size_t i = 0; i < bodies_.size(); ++i) {
    bodies_.transform(i)->setNodeMask(i < shown.size() && shown[i] ? ~0u : 0u);
  }
  RgbImage mask = drawAndRead(poses);
  // Back to the normal look.
  state->removeAttribute(white.get());
  state->removeTextureMode(0, GL_TEXTURE_2D);
  state->removeUniform(untextured.get());
  root_->replaceChild(content_.get(), world_.get());
  for (const Inset& inset : insets_) inset.camera->setNodeMask(inset.visible ? ~0u : 0u);
  camera->setClearColor(kSky);
  if (ground_) ground_->setNodeMask(kReceivesShadow);
  if (hud_) hud_->camera()->setNodeMask(~0u);
  setDebugOverlay(debug_on_);
  for (std::size_t i = 0; i < bodies_.size(); ++i) bodies_.transform(i)->setNodeMask(~0u);
  return mask;
}

std::array<double, 2> SceneView::project(const std::array<double, 3>& world_m) const {
  const osg::Camera* camera = viewer_->getCamera();
  const osg::Matrixd window = camera->getViewMatrix() * camera->getProjectionMatrix() *
                              camera->getViewport()->computeWindowMatrix();
  const osg::Vec3d p = osg::Vec3d(world_m[0], world_m[1], world_m[2]) * window;
  return {p.x(), static_cast<double>(height_) - p.y()};
}

void writePng(const RgbImage& image, const std::string& path) {
  if (image.width <= 0 || image.height <= 0) throw RenderError(path + ": empty image");
  osg::ref_ptr<osg::Image> out = new osg::Image;
  out->allocateImage(image.width, image.height, 1, GL_RGB, GL_UNSIGNED_BYTE);
  const std::size_t row = static_cast<std::size_t>(image.width) * 3;
  for (int y = 0; y < image.height; ++y) {  // osg::Image rows run bottom-up
    std::memcpy(out->data(0, image.height - 1 - y),
                image.rgb.data() + static_cast<std::size_t>(y) * row, row);
  }
  if (!osgDB::writeImageFile(*out, path)) {
    throw RenderError(path +
                      ": cannot write the PNG (osgdb_png plugin missing or no write access?)");
  }
}

}  // namespace sim::render
