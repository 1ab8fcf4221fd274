#include <render/view.h>

#include <osg/Camera>
#include <osg/Geode>
#include <osg/Geometry>
#include <osg/Image>
#include <osg/LightModel>
#include <osg/LightSource>
#include <osg/LineWidth>
#include <osg/Material>
#include <osgDB/WriteFile>
#include <osgGA/GUIEventHandler>
#include <osgGA/OrbitManipulator>
#include <osgViewer/Viewer>

#include <cmath>
#include <cstring>

namespace sim::render {

namespace {

const osg::Vec4 kSky(0.62f, 0.74f, 0.86f, 1.0f);

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
  geometry->addPrimitiveSet(
      new osg::DrawArrays(GL_LINES, 0, static_cast<GLsizei>(lines->size())));
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

// Passes key events to the handler; consumes nothing (OSG's own handlers still see them).
struct SceneView::Keys : public osgGA::GUIEventHandler {
  KeyHandler handler;
  bool handle(const osgGA::GUIEventAdapter& event, osgGA::GUIActionAdapter&) override {
    const auto type = event.getEventType();
    if (handler && (type == osgGA::GUIEventAdapter::KEYDOWN ||
                    type == osgGA::GUIEventAdapter::KEYUP)) {
      handler(event.getKey(), type == osgGA::GUIEventAdapter::KEYDOWN);
    }
    return false;
  }
};

SceneView::SceneView(std::span<const BodyVisual> bodies, const ViewOptions& options)
    : bodies_(bodies), width_(options.width), height_(options.height) {
  if (width_ <= 0 || height_ <= 0) throw RenderError("view size must be positive");
  osg::ref_ptr<osg::GraphicsContext::Traits> traits = new osg::GraphicsContext::Traits;
  traits->x = 40;
  traits->y = 40;
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
  osg::ref_ptr<osg::GraphicsContext> context =
      osg::GraphicsContext::createGraphicsContext(traits.get());
  if (!context || !context->valid()) {
    throw RenderError(std::string("cannot open ") +
                      (options.offscreen ? "an offscreen pixel buffer" : "a window") +
                      " (is DISPLAY set and does the X server offer GLX?)");
  }

  root_ = new osg::Group;
  root_->setName("scene");
  root_->addChild(bodies_.root());
  if (options.ground_grid) {
    ground_ = makeGroundGrid();
    root_->addChild(ground_.get());
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
  // A sun from the south-east, high; a faint sky ambient so shaded faces keep their colour.
  viewer_->setLightingMode(osg::View::SKY_LIGHT);
  osg::Light* sun = viewer_->getLight();
  sun->setPosition(osg::Vec4(0.45f, -0.35f, 0.82f, 0.0f));  // directional: w = 0
  sun->setDiffuse(osg::Vec4(0.85f, 0.83f, 0.78f, 1.0f));
  sun->setAmbient(osg::Vec4(0.35f, 0.37f, 0.40f, 1.0f));
  sun->setSpecular(osg::Vec4(0.4f, 0.4f, 0.4f, 1.0f));

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
  viewer_->addEventHandler(keys_.get());
  // The engine owns the keyboard (Escape must not end a training session by accident).
  viewer_->setKeyEventSetsDone(0);
  viewer_->realize();
  if (!viewer_->isRealized()) throw RenderError("the viewer could not be realized");
  applyCamera();
}

SceneView::~SceneView() = default;

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

bool SceneView::orbiting() const { return viewer_->getCameraManipulator() != nullptr; }

void SceneView::queueDrag(float x0, float y0, float x1, float y1) {
  osgGA::EventQueue* queue = viewer_->getEventQueue();
  queue->getCurrentEventState()->setMouseYOrientation(osgGA::GUIEventAdapter::Y_INCREASING_DOWNWARDS);
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
  camera->setProjectionMatrixAsPerspective(camera_.fov_deg,
                                           static_cast<double>(width_) / height_, 0.05, 500.0);
  // Fixed near/far planes: the projection used for drawing is the one project() reports.
  camera->setComputeNearFarMode(osg::CullSettings::DO_NOT_COMPUTE_NEAR_FAR);
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

void SceneView::setKeyHandler(KeyHandler handler) { keys_->handler = std::move(handler); }

void SceneView::queueKey(int key, bool down) {
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

bool SceneView::closed() const { return viewer_->done(); }

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

RgbImage SceneView::capture(std::span<const BodyPose> poses) { return drawAndRead(poses); }

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
  debug_->setNodeMask(0);
  bodies_.setCollisionVisible(false);
  for (std::size_t i = 0; i < bodies_.size(); ++i) {
    bodies_.transform(i)->setNodeMask(i < shown.size() && shown[i] ? ~0u : 0u);
  }
  RgbImage mask = drawAndRead(poses);
  // Back to the normal look.
  state->removeAttribute(white.get());
  camera->setClearColor(kSky);
  if (ground_) ground_->setNodeMask(~0u);
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
    throw RenderError(path + ": cannot write the PNG (osgdb_png plugin missing or no write access?)");
  }
}

}  // namespace sim::render
