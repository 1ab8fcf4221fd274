#include <render/hud.h>

#include <osg/BlendFunc>
#include <osg/Geode>
#include <osgText/Font>

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace sim::render {

namespace {

constexpr double kRow = 18.0;        // px between bars
constexpr double kBarHeight = 11.0;  // px
constexpr double kLabelWidth = 112.0;  // px left of a bar for its label
constexpr float kTextSize = 13.0f;

osg::ref_ptr<osgText::Font> hudFont() {
  // DejaVu Sans (Debian fonts-dejavu-core) when present; OSG's built-in font otherwise.
  static const char* kPath = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
  if (std::filesystem::exists(kPath)) {
    if (osg::ref_ptr<osgText::Font> font = osgText::readRefFontFile(kPath)) return font;
  }
  return osgText::Font::getDefaultFont();
}

osg::ref_ptr<osgText::Text> makeText(osgText::Font* font, double x, double y,
                                     const osg::Vec4& colour) {
  osg::ref_ptr<osgText::Text> text = new osgText::Text;
  text->setFont(font);
  text->setCharacterSize(kTextSize);
  text->setPosition(osg::Vec3(static_cast<float>(x), static_cast<float>(y), 0.0f));
  text->setColor(colour);
  text->setDataVariance(osg::Object::DYNAMIC);
  text->setBackdropType(osgText::Text::DROP_SHADOW_BOTTOM_RIGHT);
  text->setBackdropColor(osg::Vec4(0, 0, 0, 0.6f));
  return text;
}


void quad(osg::Vec3Array& v, double x0, double y0, double x1, double y1) {
  const auto f = [](double a) { return static_cast<float>(a); };
  v.push_back(osg::Vec3(f(x0), f(y0), 0));
  v.push_back(osg::Vec3(f(x1), f(y0), 0));
  v.push_back(osg::Vec3(f(x1), f(y1), 0));
  v.push_back(osg::Vec3(f(x0), f(y1), 0));
}

osg::ref_ptr<osg::Geometry> quads(osg::Vec3Array* vertices, const osg::Vec4& colour,
                                  bool dynamic) {
  osg::ref_ptr<osg::Geometry> geometry = new osg::Geometry;
  geometry->setVertexArray(vertices);
  osg::ref_ptr<osg::Vec4Array> colours = new osg::Vec4Array;
  colours->push_back(colour);
  geometry->setColorArray(colours.get(), osg::Array::BIND_OVERALL);
  geometry->addPrimitiveSet(
      new osg::DrawArrays(GL_QUADS, 0, static_cast<GLsizei>(vertices->size())));
  if (dynamic) {
    geometry->setDataVariance(osg::Object::DYNAMIC);
    geometry->setUseDisplayList(false);
    geometry->setUseVertexBufferObjects(true);
  }
  return geometry;
}

}  // namespace

Hud::Hud(const HudLayout& layout, int width, int height)
    : width_(width), height_(height), layout_(layout) {
  camera_ = new osg::Camera;
  camera_->setName("hud");
  camera_->setReferenceFrame(osg::Transform::ABSOLUTE_RF);
  camera_->setProjectionMatrixAsOrtho2D(0, width, 0, height);
  camera_->setViewMatrix(osg::Matrix::identity());
  camera_->setClearMask(GL_DEPTH_BUFFER_BIT);
  camera_->setRenderOrder(osg::Camera::POST_RENDER, 100);  // over any inset view
  camera_->setAllowEventFocus(false);
  osg::StateSet* state = camera_->getOrCreateStateSet();
  state->setMode(GL_LIGHTING, osg::StateAttribute::OFF | osg::StateAttribute::PROTECTED);
  state->setMode(GL_DEPTH_TEST, osg::StateAttribute::OFF);
  state->setMode(GL_BLEND, osg::StateAttribute::ON);
  state->setAttributeAndModes(new osg::BlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA));
  state->setRenderBinDetails(1000, "RenderBin");

  osg::ref_ptr<osg::Geode> geode = new osg::Geode;
  const osg::ref_ptr<osgText::Font> font = hudFont();
  const osg::Vec4 white(1, 1, 1, 1);
  status_.text = makeText(font.get(), 10, height - 22, white);
  notes_.text = makeText(font.get(), 10, height - 42, osg::Vec4(0.85f, 1.0f, 0.85f, 1.0f));
  warnings_.text =
      makeText(font.get(), width * 0.35, height - 22, osg::Vec4(1.0f, 0.3f, 0.25f, 1.0f));
  for (osgText::Text* text : {status_.text.get(), notes_.text.get(), warnings_.text.get()}) {
    geode->addDrawable(text);
  }

  // Groups: the pult top right; motor voltages bottom left with their speeds beside them.
  const auto setUp = [&](Group& group, const std::vector<HudBarSpec>& specs, double x, double top,
                         double bar_width, bool labels) {
    group.specs = specs;
    group.x = x;
    group.top = top;
    group.bar_width = bar_width;
    osg::ref_ptr<osg::Vec3Array> tracks = new osg::Vec3Array;
    osg::ref_ptr<osg::Vec3Array> fills = new osg::Vec3Array;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const double y = top - kRow * static_cast<double>(i);
      quad(*tracks, x, y, x + bar_width, y + kBarHeight);
      quad(*fills, x, y, x, y + kBarHeight);
      if (labels) {
        osg::ref_ptr<osgText::Text> label = makeText(font.get(), x - kLabelWidth, y, white);
        label->setText(specs[i].label);
        geode->addDrawable(label.get());
      }
      group.values.push_back({makeText(font.get(), x + bar_width + 6, y, white), {}});
      geode->addDrawable(group.values.back().text.get());
    }
    if (!specs.empty()) {
      geode->addDrawable(quads(tracks.get(), osg::Vec4(0.1f, 0.1f, 0.1f, 0.55f), false).get());
      group.fills = quads(fills.get(),
                          osg::Vec4(kFillRgb[0] / 255.0f, kFillRgb[1] / 255.0f,
                                    kFillRgb[2] / 255.0f, 1.0f),
                          true);
      geode->addDrawable(group.fills.get());
    }
  };
  const double rows = static_cast<double>(std::max(layout.motors.size(), layout.speeds.size()));
  setUp(controls_, layout.controls, width - 200.0, height - 70.0, 120.0, true);
  setUp(motors_, layout.motors, 10.0 + kLabelWidth, 14.0 + kRow * (rows - 1.0), 110.0, true);
  setUp(speeds_, layout.speeds, 10.0 + kLabelWidth + 110.0 + 60.0, 14.0 + kRow * (rows - 1.0),
        90.0, false);
  camera_->addChild(geode.get());
  update(HudState{});
}

void Hud::updateBars(Group& group, const std::vector<double>& values,
                     std::vector<HudBarGeometry>& out) {
  out.resize(group.specs.size());
  if (!group.fills) return;
  auto* vertices = static_cast<osg::Vec3Array*>(group.fills->getVertexArray());
  for (std::size_t i = 0; i < group.specs.size(); ++i) {
    const HudBarSpec& spec = group.specs[i];
    const double value = i < values.size() ? values[i] : 0.0;
    const double span = spec.max > spec.min ? spec.max - spec.min : 1.0;
    const auto toX = [&](double v) {
      return group.x + group.bar_width * (std::clamp(v, spec.min, spec.max) - spec.min) / span;
    };
    const double zero = toX(std::clamp(0.0, spec.min, spec.max));
    const double end = toX(value);
    HudBarGeometry& g = out[i];
    g.x0 = group.x;
    g.x1 = group.x + group.bar_width;
    g.y0 = group.top - kRow * static_cast<double>(i);
    g.y1 = g.y0 + kBarHeight;
    g.fill_x0 = std::min(zero, end);
    g.fill_x1 = std::max(zero, end);
    const std::size_t k = 4 * i;
    (*vertices)[k + 0].x() = (*vertices)[k + 3].x() = static_cast<float>(g.fill_x0);
    (*vertices)[k + 1].x() = (*vertices)[k + 2].x() = static_cast<float>(g.fill_x1);
    char text[32];
    std::snprintf(text, sizeof text, "%+.3g", value);
    group.values[i].set(text);
  }
  vertices->dirty();
  group.fills->dirtyBound();
}

void Hud::Label::set(std::string_view value) {
  if (shown == value) return;
  shown.assign(value);
  text->setText(shown);
}

void Hud::update(const HudState& state) {
  status_.set(state.status);
  const auto joinLines = [this](const std::vector<std::string>& lines) -> std::string_view {
    joined_.clear();
    for (const std::string& line : lines) (joined_ += line) += '\n';
    return joined_;
  };
  notes_.set(joinLines(state.notes));
  warnings_.set(joinLines(state.warnings));
  updateBars(controls_, state.controls, control_bars_);
  updateBars(motors_, state.motors, motor_bars_);
  updateBars(speeds_, state.speeds, speed_bars_);
}

}  // namespace sim::render
