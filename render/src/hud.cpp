#include <render/hud.h>

#include "hud_text.h"

#include <osg/BlendFunc>
#include <osg/Geode>
#include <osgText/Font>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

namespace sim::render {

namespace {

constexpr double kRow = 18.0;                   // px between bars
constexpr double kBarHeight = 11.0;             // px
constexpr double kLabelWidth = 112.0;           // px left of a bar for its label
constexpr int kTextSize = 13;                   // px
constexpr double kScorePanelX = 112.0 + 200.0;  // the pult's labels' left edge, from the right

osg::ref_ptr<osgText::Font> hudFont() {
  // DejaVu Sans (Debian fonts-dejavu-core) when present; OSG's built-in font otherwise.
  static const char* kPath = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
  if (std::filesystem::exists(kPath)) {
    if (osg::ref_ptr<osgText::Font> font = osgText::readRefFontFile(kPath)) return font;
  }
  return osgText::Font::getDefaultFont();
}

constexpr std::size_t kMaxMarks = 256;   // timeline marks drawn (more are dropped)
constexpr double kTimelineHeight = 8.0;  // px
constexpr double kTimelineStrip = 40.0;  // px reserved at the bottom for the timeline

const osg::Vec4 kTrack(0.1f, 0.1f, 0.1f, 0.55f);
const osg::Vec4 kFill(Hud::kFillRgb[0] / 255.0f, Hud::kFillRgb[1] / 255.0f,
                      Hud::kFillRgb[2] / 255.0f, 1.0f);
const osg::Vec4 kHidden(0.0f, 0.0f, 0.0f, 0.0f);
const osg::Vec4 kBackdrop(0.0f, 0.0f, 0.0f, Hud::kBackdropAlpha);
constexpr double kPad = 6.0;          // px of backdrop around a panel's text and bars
constexpr double kValueWidth = 52.0;  // px right of a bar for its value ("+0.123")
constexpr double kAscent = 11.0;      // px of a text line above its baseline
constexpr double kDescent = 4.0;      // and below it

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
  text_ = std::make_unique<TextLayer>(*font, kTextSize, kRow);
  const std::array<float, 4> white{1, 1, 1, 1};
  status_ = text_->add(10, height - 22, white);
  notes_ = text_->add(10, height - 42, {0.85f, 1.0f, 0.85f, 1.0f});
  warnings_ = text_->add(width * 0.35, height * 0.78, {1.0f, 0.3f, 0.25f, 1.0f});  // centred
  score_ = text_->add(width - kScorePanelX, height - 22, white);
  score_events_ = text_->add(width - kScorePanelX, height - 22 - kRow, {1.0f, 0.62f, 0.1f, 1.0f});

  // All quads in one geometry: tracks first (drawn under), then fills, then the timeline.
  quads_ = new osg::Geometry;
  osg::ref_ptr<osg::Vec3Array> vertices = new osg::Vec3Array;
  osg::ref_ptr<osg::Vec4Array> colours = new osg::Vec4Array;
  quads_->setVertexArray(vertices.get());
  quads_->setColorArray(colours.get(), osg::Array::BIND_PER_VERTEX);
  quads_->setDataVariance(osg::Object::DYNAMIC);
  quads_->setUseDisplayList(false);
  quads_->setUseVertexBufferObjects(true);
  const auto addQuad = [&](double x0, double y0, double x1, double y1, const osg::Vec4& c) {
    const auto f = [](double a) { return static_cast<float>(a); };
    vertices->push_back(osg::Vec3(f(x0), f(y0), 0));
    vertices->push_back(osg::Vec3(f(x1), f(y0), 0));
    vertices->push_back(osg::Vec3(f(x1), f(y1), 0));
    vertices->push_back(osg::Vec3(f(x0), f(y1), 0));
    for (int k = 0; k < 4; ++k) colours->push_back(c);
  };

  // The panels' backdrops first: drawn under the bars and the text.
  for (int panel = 0; panel < kPanels; ++panel) addQuad(0, 0, 0, 0, kHidden);

  // Groups: the pult top right; motor voltages bottom left with their speeds beside them. A
  // group's labels are one text block and its values another, a line per bar.
  const auto setUp = [&](Group& group, const std::vector<HudBarSpec>& specs, double x, double top,
                         double bar_width, bool labels) {
    group.specs = specs;
    group.x = x;
    group.top = top;
    group.bar_width = bar_width;
    if (specs.empty()) return;
    std::string names;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const double y = top - kRow * static_cast<double>(i);
      addQuad(x, y, x + bar_width, y + kBarHeight, kTrack);
      names += specs[i].label + (i + 1 < specs.size() ? "\n" : "");
    }
    if (labels) text_->set(text_->add(x - kLabelWidth, top, white), names);
    group.values = text_->add(x + bar_width + 6, top, white);
  };
  const double rows = static_cast<double>(std::max(layout.motors.size(), layout.speeds.size()));
  const double bottom = 14.0 + (layout.timeline ? kTimelineStrip : 0.0);
  // With a score panel the pult starts below it and three lines of penalties.
  setUp(controls_, layout.controls, width - 200.0, height - (layout.score ? 70.0 + 3 * kRow : 70.0),
        120.0, true);
  setUp(motors_, layout.motors, 10.0 + kLabelWidth, bottom + kRow * (rows - 1.0), 110.0, true);
  setUp(speeds_, layout.speeds, 10.0 + kLabelWidth + 110.0 + 72.0, bottom + kRow * (rows - 1.0),
        90.0, false);
  // The bar groups' backdrops: labels, tracks and values.
  const auto groupRect = [](const Group& group, double left, double right) {
    const double n = static_cast<double>(group.specs.size());
    return HudRect{left - kPad, group.top - kRow * (n - 1.0) - kPad, right + kPad,
                   group.top + kBarHeight + kPad, !group.specs.empty()};
  };
  HudRect pult = groupRect(controls_, controls_.x - kLabelWidth,
                           controls_.x + controls_.bar_width + 6 + kValueWidth);
  pult.x1 = std::min(pult.x1, width - 2.0);
  setBackdrop(Pult, pult);
  const Group& right = speeds_.specs.empty() ? motors_ : speeds_;
  HudRect bars =
      groupRect(motors_, motors_.x - kLabelWidth, right.x + right.bar_width + 6 + kValueWidth);
  if (motors_.specs.empty()) bars = groupRect(speeds_, speeds_.x, bars.x1 - kPad);
  bars.shown = !motors_.specs.empty() || !speeds_.specs.empty();
  setBackdrop(Motors, bars);

  // Fills, one per bar, after every track.
  for (Group* group : {&controls_, &motors_, &speeds_}) {
    group->first_fill = vertices->size() / 4;
    for (std::size_t i = 0; i < group->specs.size(); ++i) addQuad(0, 0, 0, 0, kHidden);
  }
  timeline_quad_ = vertices->size() / 4;
  if (layout.timeline) {
    timeline_label_ = text_->add(10, 10 + kTimelineHeight + 8, white);
    for (std::size_t q = 0; q < 2 + kMaxMarks; ++q) addQuad(0, 0, 0, 0, kHidden);
  }
  quads_->addPrimitiveSet(new osg::DrawArrays(GL_QUADS, 0, static_cast<GLsizei>(vertices->size())));
  geode->addDrawable(quads_.get());
  geode->addDrawable(text_->geometry());  // over the bars
  camera_->addChild(geode.get());
  update(HudState{});
}

Hud::~Hud() = default;

void Hud::setBackdrop(HudPanel panel, const HudRect& rect) {
  backdrops_[panel] = rect;
  quads_changed_ |= setQuad(static_cast<std::size_t>(panel), rect.x0, rect.y0, rect.x1, rect.y1,
                            rect.shown ? kBackdrop : kHidden);
}

HudRect Hud::textRect(double x, double y, std::size_t lines, double widest) const {
  const double n = static_cast<double>(lines);
  return {x - kPad, y - kRow * (n - 1.0) - kDescent - kPad, x + widest + kPad, y + kAscent + kPad,
          lines > 0 && widest > 0.0};
}

bool Hud::setQuad(std::size_t q, double x0, double y0, double x1, double y1,
                  const osg::Vec4& colour) {
  auto& v = *static_cast<osg::Vec3Array*>(quads_->getVertexArray());
  auto& c = *static_cast<osg::Vec4Array*>(quads_->getColorArray());
  const auto f = [](double a) { return static_cast<float>(a); };
  const osg::Vec3 corners[4] = {
      {f(x0), f(y0), 0}, {f(x1), f(y0), 0}, {f(x1), f(y1), 0}, {f(x0), f(y1), 0}};
  bool changed = false;
  for (std::size_t k = 0; k < 4; ++k) {
    changed = changed || v[4 * q + k] != corners[k] || c[4 * q + k] != colour;
    v[4 * q + k] = corners[k];
    c[4 * q + k] = colour;
  }
  return changed;
}

void Hud::updateBars(Group& group, const std::vector<double>& values,
                     std::vector<HudBarGeometry>& out) {
  out.resize(group.specs.size());
  group.joined.clear();
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
    quads_changed_ |= setQuad(group.first_fill + i, g.fill_x0, g.y0, g.fill_x1, g.y1, kFill);
    char text[32];
    std::snprintf(text, sizeof text, i == 0 ? "%+.3g" : "\n%+.3g", value);
    group.joined += text;
  }
  if (!group.specs.empty()) text_->set(group.values, group.joined);  // rebuilt when a digit changes
}

void Hud::updateTimeline(const HudTimeline& timeline) {
  if (!layout_.timeline) return;
  const double x0 = 10.0, x1 = width_ - 10.0, y0 = 8.0, y1 = y0 + kTimelineHeight;
  const double cursor = x0 + (x1 - x0) * std::clamp(timeline.position, 0.0, 1.0);
  timeline_bar_ = {x0, x1, y0, y1, x0, cursor};
  setBackdrop(Timeline, {2.0, 2.0, width_ - 2.0, y1 + 8 + kAscent + kPad, timeline.shown});
  quads_changed_ |= setQuad(timeline_quad_, x0, y0, x1, y1, timeline.shown ? kTrack : kHidden);
  quads_changed_ |= setQuad(timeline_quad_ + 1, cursor - 1.5, y0 - 4, cursor + 1.5, y1 + 4,
                            timeline.shown ? osg::Vec4(1, 1, 1, 1) : kHidden);
  if (timeline.marks != marks_shown_ || !timeline.shown) {
    marks_shown_ = timeline.marks;
    for (std::size_t k = 0; k < kMaxMarks; ++k) {
      if (timeline.shown && k < timeline.marks.size()) {
        const HudTimelineMark& m = timeline.marks[k];
        const double x = x0 + (x1 - x0) * std::clamp(m.position, 0.0, 1.0);
        quads_changed_ |= setQuad(timeline_quad_ + 2 + k, x - 1.0, y0 - 3, x + 1.0, y1 + 3,
                                  osg::Vec4(m.rgb[0], m.rgb[1], m.rgb[2], 1.0f));
      } else {
        quads_changed_ |= setQuad(timeline_quad_ + 2 + k, 0, 0, 0, 0, kHidden);
      }
    }
  }
  text_->set(timeline_label_,
             timeline.shown ? std::string_view(timeline.label) : std::string_view());
}

void Hud::update(const HudState& state) {
  text_->set(status_, state.status);
  const auto joinLines = [this](const std::vector<std::string>& lines) -> std::string_view {
    joined_.clear();
    for (const std::string& line : lines) (joined_ += line) += '\n';
    return joined_;
  };
  text_->set(notes_, joinLines(state.notes));
  text_->set(warnings_, joinLines(state.warnings));
  double widest = 0.0;  // the warnings centred across the window
  for (const std::string& line : state.warnings) widest = std::max(widest, text_->width(line));
  text_->move(warnings_, std::round(std::max(10.0, (width_ - widest) / 2.0)),
              std::round(height_ * 0.78));
  text_->set(score_, layout_.score ? std::string_view(state.score) : std::string_view());
  text_->set(score_events_, layout_.score ? joinLines(state.score_events) : std::string_view());

  // Backdrops of the text panels, sized to what they show this frame.
  const auto widestOf = [this](const std::vector<std::string>& lines, double first) {
    for (const std::string& line : lines) first = std::max(first, text_->width(line));
    return first;
  };
  const double status_widest = widestOf(state.notes, text_->width(state.status));
  const std::size_t status_lines =
      state.notes.empty() ? (state.status.empty() ? 0 : 1) : 1 + state.notes.size();
  HudRect status = textRect(10, height_ - 22, status_lines, status_widest);
  if (!state.notes.empty()) status.y0 -= 2.0;  // the notes start 20 px below the status, not 18
  setBackdrop(Status, status);
  if (layout_.score) {
    HudRect score = textRect(width_ - kScorePanelX, height_ - 22, 1 + state.score_events.size(),
                             widestOf(state.score_events, text_->width(state.score)));
    score.shown = score.shown && !state.score.empty();
    score.x1 = std::max(score.x1, width_ - 2.0);
    setBackdrop(Score, score);
  }
  setBackdrop(Warnings, textRect(std::round(std::max(10.0, (width_ - widest) / 2.0)),
                                 std::round(height_ * 0.78), state.warnings.size(), widest));
  updateBars(controls_, state.controls, control_bars_);
  updateBars(motors_, state.motors, motor_bars_);
  updateBars(speeds_, state.speeds, speed_bars_);
  updateTimeline(state.timeline);
  text_->update();
  if (quads_changed_) {
    // Only when something moved: an unchanged HUD uploads nothing.
    quads_->getVertexArray()->dirty();
    quads_->getColorArray()->dirty();
    quads_->dirtyBound();
    quads_changed_ = false;
  }
}

}  // namespace sim::render
