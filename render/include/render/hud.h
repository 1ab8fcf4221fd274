// The head-up display drawn over the 3D view: status text (time, real-time factor, frame time),
// the pult's controls and every motor's voltage and speed as bars, scenario lines and warnings,
// and in a replay a timeline bar. Each panel sits on a dark translucent backdrop so its light
// text and bars read against any sky or scene (layout: docs/scenes.md, "The HUD"). Its layout
// (which bars exist) is fixed when it is made; each frame only changes values and texts in place,
// and the whole HUD is two draws: one geometry for every bar and mark, one for every glyph (rebuilt
// only when a shown character changes).
#pragma once

#include <osg/Camera>
#include <osg/Geometry>
#include <osg/ref_ptr>

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sim::render {

class TextLayer;

/// One bar: a value shown between min and max, filled from the zero point (or from min when
/// zero is outside the range).
struct HudBarSpec {
  std::string label;
  double min = -1.0;
  double max = 1.0;
};

struct HudLayout {
  std::vector<HudBarSpec> controls;  ///< The pult, top right.
  std::vector<HudBarSpec> motors;    ///< Motor voltages u, bottom left (one per motor).
  std::vector<HudBarSpec> speeds;    ///< Motor speeds, next to the voltages (same order).
  bool timeline = false;  ///< A timeline bar along the bottom (a replay); the bars move up.
  bool score = false;     ///< A score panel top right (a graded exercise); the pult moves down.
};

/// An event on the timeline: where (0 = start, 1 = end) and its colour (RGB, 0..1).
struct HudTimelineMark {
  double position = 0.0;
  std::array<float, 3> rgb{1.0f, 1.0f, 1.0f};
  bool operator==(const HudTimelineMark&) const = default;
};

/// The timeline bar of a replay: a track with the events marked and a cursor at `position`.
struct HudTimeline {
  bool shown = false;
  double position = 0.0;  ///< 0 = start, 1 = end.
  std::vector<HudTimelineMark> marks;
  std::string label;  ///< Above the bar (time, speed, keys).
};

/// What the HUD shows this frame; vectors parallel to the layout's (missing values show 0).
struct HudState {
  std::string status;  ///< Top left: time, real-time factor, frame time.
  std::vector<double> controls;
  std::vector<double> motors;
  std::vector<double> speeds;
  std::vector<std::string> notes;         ///< Scenario progress, expectations.
  std::vector<std::string> warnings;      ///< Shown in red, centred (overrun, numerics, pause).
  HudTimeline timeline;                   ///< Drawn when the layout has one.
  std::string score;                      ///< Top right when the layout has a score panel.
  std::vector<std::string> score_events;  ///< Under it, in orange: penalties as they happen.
};

/// A rectangle in pixels, origin bottom left; `shown` false while there is nothing to back.
struct HudRect {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  bool shown = false;
};

/// Where a bar is drawn (pixels, origin bottom left): its full track and its fill.
struct HudBarGeometry {
  double x0 = 0, x1 = 0, y0 = 0, y1 = 0;  ///< The track.
  double fill_x0 = 0, fill_x1 = 0;        ///< The filled part of it.
};

class Hud {
 public:
  Hud(const HudLayout& layout, int width, int height);
  ~Hud();

  /// The overlay camera to add to the scene root (drawn after the 3D view, no depth test).
  osg::Camera* camera() const { return camera_.get(); }
  void update(const HudState& state);

  /// Geometry of the bars as last updated (for tests and tools).
  const std::vector<HudBarGeometry>& controlBars() const { return control_bars_; }
  const std::vector<HudBarGeometry>& motorBars() const { return motor_bars_; }
  const std::vector<HudBarGeometry>& speedBars() const { return speed_bars_; }
  /// The timeline's track and cursor as last updated (x0 = x1 = cursor for the fill).
  const HudBarGeometry& timelineBar() const { return timeline_bar_; }
  /// The panels' backdrops as last updated, in the order of HudPanel.
  enum HudPanel { Status, Score, Pult, Motors, Warnings, Timeline, kPanels };
  const std::array<HudRect, kPanels>& backdrops() const { return backdrops_; }

  /// The backdrops' colour: black at this opacity darkens what lies behind to 1 - it.
  static constexpr float kBackdropAlpha = 0.6f;

  /// The colour of bar fills (tests find bars in pictures by it), RGB 0..255.
  static constexpr unsigned char kFillRgb[3] = {255, 170, 0};

 private:
  struct Group;
  void updateBars(Group& group, const std::vector<double>& values,
                  std::vector<HudBarGeometry>& out);
  void updateTimeline(const HudTimeline& timeline);
  // Sets a backdrop's rectangle (quad `panel`, drawn under everything else).
  void setBackdrop(HudPanel panel, const HudRect& rect);
  // The backdrop around a text block of `lines` lines of at most `widest` px from baseline (x, y).
  HudRect textRect(double x, double y, std::size_t lines, double widest) const;
  // Sets quad `q` of the shared geometry; returns whether it moved or changed colour.
  bool setQuad(std::size_t q, double x0, double y0, double x1, double y1, const osg::Vec4& colour);

  int width_;
  int height_;
  HudLayout layout_;
  osg::ref_ptr<osg::Camera> camera_;
  // Every bar, track, cursor and mark is a quad of this one geometry (one draw call).
  osg::ref_ptr<osg::Geometry> quads_;
  bool quads_changed_ = false;
  std::unique_ptr<TextLayer> text_;  // every text, one geometry
  std::size_t status_ = 0, notes_ = 0, warnings_ = 0, timeline_label_ = 0;  // its blocks
  std::size_t score_ = 0, score_events_ = 0;
  std::string joined_;  // notes or warnings joined by lines, reused every frame
  struct Group {
    std::vector<HudBarSpec> specs;
    double x = 0, top = 0, bar_width = 0;
    std::size_t first_fill = 0;  // quad index of the first fill
    std::size_t values = 0;      // text block: one line per bar
    std::string joined;          // the values' text being built
  };
  Group controls_, motors_, speeds_;
  std::vector<HudBarGeometry> control_bars_, motor_bars_, speed_bars_;
  // Timeline quads: track, cursor, then up to kMaxMarks marks.
  std::size_t timeline_quad_ = 0;
  std::vector<HudTimelineMark> marks_shown_;
  HudBarGeometry timeline_bar_;
  std::array<HudRect, kPanels> backdrops_;  // quads 0 .. kPanels - 1
};

}  // namespace sim::render
