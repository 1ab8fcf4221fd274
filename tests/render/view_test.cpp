// The 3D view in a real OpenSceneGraph pixel buffer (run under Xvfb by CTest): pictures are not
// blank, each body's pixels are where the camera projects its vertices, and moving a body moves
// them. Scenes come from scene files with model-file visuals (Assimp) and shape-drawn bodies.
#include <dynamics/simulator.h>
#include <engine/scene.h>
#include <engine/snapshot.h>
#include <render/view.h>

#include <osg/Image>
#include <osgDB/ReadFile>

#include <gtest/gtest.h>

#include "pixels.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>

namespace sim {
namespace {

namespace fs = std::filesystem;
using dynamics::Quat;
using dynamics::Vec3;

const std::string kScene = R"(
bodies:
  - {name: ground, static: true, shapes: [{type: plane}]}
  - name: container
    mass: 10
    box: [0.4, 0.3, 0.3]
    center_of_mass: [0, 0, 0.15]
    visual: {file: )" + (fs::path(SIMTRAINER_SOURCE_DIR) / "assets/site/container.glb").string() +
                           R"(, up: y}
  - name: crate
    mass: 2
    position: [-0.2, 0.9, 0.2]
    shapes: [{type: box, size: [0.4, 0.4, 0.4]}, {type: cylinder, radius: 0.1, half_length: 0.2, position: [0, 0, 0.3]}]
)";

using render_testing::Box2;
using render_testing::whitePixels;

// Bounding box of a body's vertices as the camera projects them (pixel centres).
Box2 projectedBounds(const render::SceneView& view, const render::BodyVisual& visual,
                     const render::BodyPose& pose) {
  const auto quat = [](const std::array<double, 4>& q) { return Quat(q[0], q[1], q[2], q[3]); };
  const auto vec = [](const std::array<double, 3>& p) { return Vec3(p[0], p[1], p[2]); };
  Box2 box;
  for (const render::MeshPart& part : visual.meshes) {
    for (const auto& v : part.vertices_m) {
      const Vec3 in_body =
          quat(part.pose.orientation_wxyz) * Vec3(v[0], v[1], v[2]) + vec(part.pose.position_m);
      const Vec3 world = quat(pose.orientation_wxyz) * in_body + vec(pose.position_m);
      const auto pixel = view.project({world.x(), world.y(), world.z()});
      box.add(pixel[0] - 0.5, pixel[1] - 0.5);
    }
  }
  return box;
}

class View : public ::testing::Test {
 protected:
  void SetUp() override {
    scene_ = engine::loadSceneFromString(kScene, "view_test.yaml");
    visuals_ = engine::bodyVisuals(scene_);
    dynamics::Simulator sim(scene_.model);
    poses_ = engine::bodyPoses(sim.initialState());
    makeView(320, 240);
  }
  // The HUD tests' bars: two pult controls, two motors' voltages and speeds, and their values.
  static render::HudLayout barsLayout() {
    render::HudLayout layout;
    layout.controls = {{"lift", -1, 1}, {"grip", 0, 1}};
    layout.motors = {{"drive", -1, 1}, {"jaws", -1, 1}};
    layout.speeds = {{"drive", -50, 50}, {"jaws", -50, 50}};
    return layout;
  }
  static render::HudState barsState() {
    render::HudState state;
    state.status = "t 1.25 s  RTF 1.00";
    state.controls = {-0.5, 1.0};
    state.motors = {0.75, -0.25};
    state.speeds = {20.0, -50.0};
    return state;
  }
  // An offscreen view of the scene of this size, from the test's usual viewpoint.
  void makeView(int width, int height) {
    render::ViewOptions options;
    options.width = width;
    options.height = height;
    options.offscreen = true;
    view_ = std::make_unique<render::SceneView>(visuals_, options);
    render::ViewCamera camera;
    camera.eye_m = {2.2, -2.0, 1.4};
    camera.target_m = {0.0, 0.3, 0.2};
    view_->setCamera(camera);
  }
  std::vector<bool> only(const std::string& name) const {
    std::vector<bool> shown(visuals_.size(), false);
    for (std::size_t i = 0; i < visuals_.size(); ++i) shown[i] = visuals_[i].name == name;
    return shown;
  }

  engine::Scene scene_;
  std::vector<render::BodyVisual> visuals_;
  std::vector<render::BodyPose> poses_;
  std::unique_ptr<render::SceneView> view_;
};

TEST_F(View, BodiesComeFromModelFilesAndShapes) {
  ASSERT_EQ(visuals_.size(), 3u);
  EXPECT_EQ(visuals_[0].meshes.size(), 1u);  // the plane: a large square of ground
  ASSERT_EQ(visuals_[1].meshes.size(), 2u);  // container.glb: body and handle meshes
  EXPECT_EQ(visuals_[2].meshes.size(), 2u);  // box and cylinder shapes
}

TEST_F(View, PictureIsNotBlank) {
  const render::RgbImage image = view_->capture(poses_);
  ASSERT_EQ(image.width, 320);
  ASSERT_EQ(image.height, 240);
  std::set<std::uint32_t> colours;
  for (std::size_t i = 0; i + 2 < image.rgb.size(); i += 3) {
    colours.insert(image.rgb[i] << 16 | image.rgb[i + 1] << 8 | image.rgb[i + 2]);
  }
  // Sky, grid, and lit faces of two bodies in several shades.
  EXPECT_GT(colours.size(), 20u);
}

// Each body's mask (its pixels alone) has the bounding box of its projected vertices, within a
// pixel of rasterisation (pixel centres inside the triangles are drawn).
TEST_F(View, BodyPixelsAreWhereItsVerticesProject) {
  for (const char* name : {"container", "crate"}) {
    const std::vector<bool> shown = only(name);
    const std::size_t index =
        static_cast<std::size_t>(std::find(shown.begin(), shown.end(), true) - shown.begin());
    int count = 0;
    const Box2 mask = whitePixels(view_->captureMask(poses_, shown), &count);
    const Box2 projected = projectedBounds(*view_, visuals_[index], poses_[index]);
    SCOPED_TRACE(name);
    EXPECT_GT(count, 300);
    EXPECT_NEAR(mask.x0, projected.x0, 1.0);
    EXPECT_NEAR(mask.x1, projected.x1, 1.0);
    EXPECT_NEAR(mask.y0, projected.y0, 1.0);
    EXPECT_NEAR(mask.y1, projected.y1, 1.0);
  }
}

TEST_F(View, MovingABodyMovesItsPixels) {
  const std::vector<bool> shown = only("container");
  const render::RgbImage before = view_->captureMask(poses_, shown);
  std::vector<render::BodyPose> moved = poses_;
  moved[1].position_m[0] += 0.3;
  moved[1].orientation_wxyz = {std::cos(0.3), 0.0, 0.0, std::sin(0.3)};  // 0.6 rad about z
  const render::RgbImage after = view_->captureMask(moved, shown);
  int changed = 0;
  for (std::size_t i = 0; i < before.rgb.size(); i += 3) changed += before.rgb[i] != after.rgb[i];
  EXPECT_GT(changed, 200);
  int count = 0;
  const Box2 mask = whitePixels(after, &count);
  const Box2 projected = projectedBounds(*view_, visuals_[1], moved[1]);
  EXPECT_NEAR(mask.x0, projected.x0, 1.0);
  EXPECT_NEAR(mask.x1, projected.x1, 1.0);
  // The normal picture is back after a mask: sky in the top-left corner.
  const render::RgbImage normal = view_->capture(poses_);
  EXPECT_GT(normal.pixel(0, 0)[2], 150);
}

TEST_F(View, ScreenshotIsAReadablePng) {
  const fs::path path = fs::temp_directory_path() / "simtrainer_view_test.png";
  fs::remove(path);
  const render::RgbImage image = view_->capture(poses_);
  render::writePng(image, path.string());
  osg::ref_ptr<osg::Image> read = osgDB::readImageFile(path.string());
  ASSERT_TRUE(read.valid());
  EXPECT_EQ(read->s(), 320);
  EXPECT_EQ(read->t(), 240);
  if (!std::getenv("SIMTRAINER_KEEP_SCREENSHOT")) fs::remove(path);
  EXPECT_THROW(render::writePng(image, "/nonexistent/dir/x.png"), render::RenderError);
}

// The HUD's bars in the picture: the fill colour spans exactly the value's part of each bar.
TEST_F(View, HudBarsShowTheirValues) {
  const render::HudLayout layout = barsLayout();
  makeView(800, 600);
  view_->setHud(layout);
  render::HudState state = barsState();
  view_->updateHud(state);
  const render::RgbImage image = view_->capture(poses_);
  if (std::getenv("SIMTRAINER_KEEP_SCREENSHOT"))
    render::writePng(image, "/tmp/simtrainer_hud_test.png");
  const auto fillSpan = [&](const render::HudBarGeometry& bar, double* x0, double* x1) {
    const int row = image.height - 1 - static_cast<int>((bar.y0 + bar.y1) / 2);
    *x0 = 1e9;
    *x1 = -1e9;
    // Within this bar's track only (voltage and speed bars share rows).
    for (int x = static_cast<int>(bar.x0) - 2; x < static_cast<int>(bar.x1) + 2; ++x) {
      const std::uint8_t* p = image.pixel(x, row);
      if (p[0] == render::Hud::kFillRgb[0] && p[1] == render::Hud::kFillRgb[1] &&
          p[2] == render::Hud::kFillRgb[2]) {
        *x0 = std::min(*x0, double(x));
        *x1 = std::max(*x1, double(x + 1));
      }
    }
  };
  const render::Hud& hud = *view_->hud();
  const auto check = [&](const std::vector<render::HudBarGeometry>& bars,
                         const std::vector<render::HudBarSpec>& specs,
                         const std::vector<double>& values) {
    ASSERT_EQ(bars.size(), values.size());
    for (std::size_t i = 0; i < bars.size(); ++i) {
      SCOPED_TRACE(specs[i].label);
      // The expected fill from the value alone: from the zero point to the value.
      const double width = bars[i].x1 - bars[i].x0;
      const auto at = [&](double v) {
        return bars[i].x0 + width * (v - specs[i].min) / (specs[i].max - specs[i].min);
      };
      const double zero = at(std::clamp(0.0, specs[i].min, specs[i].max));
      double x0 = 0, x1 = 0;
      fillSpan(bars[i], &x0, &x1);
      EXPECT_NEAR(x0, std::min(zero, at(values[i])), 1.0);
      EXPECT_NEAR(x1, std::max(zero, at(values[i])), 1.0);
    }
  };
  check(hud.controlBars(), layout.controls, state.controls);
  check(hud.motorBars(), layout.motors, state.motors);
  check(hud.speedBars(), layout.speeds, state.speeds);
  // New values move the fills (no new nodes: the same bars are updated in place).
  state.motors = {-1.0, 0.5};
  view_->updateHud(state);
  const render::RgbImage again = view_->capture(poses_);
  EXPECT_NE(again.rgb, image.rgb);
}

// The HUD's panels lie on dark translucent backdrops: behind the text and bars the scene is
// darkened to 1 - kBackdropAlpha of itself (text and bars drawn over it aside), so light text
// reads against the sky.
TEST_F(View, HudPanelsDarkenWhatIsBehindThem) {
  makeView(800, 600);
  const render::RgbImage plain = view_->capture(poses_);
  render::HudLayout layout = barsLayout();
  layout.score = true;
  view_->setHud(layout);
  render::HudState state = barsState();
  state.notes = {"grasp_lift: 2 of 4 expectations decided"};
  state.warnings = {"PAUSED"};
  state.score = "score 80";
  state.score_events = {"-10 jaws slammed into the box"};
  view_->updateHud(state);
  const render::RgbImage image = view_->capture(poses_);
  if (std::getenv("SIMTRAINER_KEEP_SCREENSHOT"))
    render::writePng(image, "/tmp/simtrainer_hud_backdrop_test.png");
  const double keep = 1.0 - render::Hud::kBackdropAlpha;
  const char* names[] = {"status", "score", "pult", "motors", "warnings", "timeline"};
  const auto& backdrops = view_->hud()->backdrops();
  for (std::size_t panel = 0; panel < backdrops.size(); ++panel) {
    const render::HudRect& r = backdrops[panel];
    SCOPED_TRACE(names[panel]);
    EXPECT_EQ(r.shown, panel != render::Hud::Timeline);  // no timeline outside a replay
    if (!r.shown) continue;
    int dark = 0, total = 0, unchanged = 0;
    // Rows from the top in the picture; the rectangle's origin is bottom left.
    for (int y = static_cast<int>(r.y0) + 1; y < static_cast<int>(r.y1) - 1; ++y) {
      for (int x = static_cast<int>(r.x0) + 1; x < static_cast<int>(r.x1) - 1; ++x) {
        const int row = image.height - 1 - y;
        const std::uint8_t* p = image.pixel(x, row);
        const std::uint8_t* behind = plain.pixel(x, row);
        bool darkened = true, same = true;
        for (int c = 0; c < 3; ++c) {
          darkened = darkened && std::abs(p[c] - keep * behind[c]) <= 3.0;
          same = same && p[c] == behind[c];
        }
        dark += darkened;
        unchanged += same && (behind[0] + behind[1] + behind[2]) > 60;
        ++total;
      }
    }
    ASSERT_GT(total, 200);
    // Most of a panel is backdrop (the rest glyphs and bars); none of it is the bare scene.
    EXPECT_GT(dark, total / 2) << dark << " of " << total;
    EXPECT_EQ(unchanged, 0);
  }
  // The sky behind the status text: light in the plain picture, dark under the HUD.
  const render::HudRect& status = backdrops[render::Hud::Status];
  const int row = image.height - 1 - static_cast<int>(status.y1) + 2;
  const std::uint8_t* sky = plain.pixel(static_cast<int>(status.x1) - 2, row);
  const std::uint8_t* backed = image.pixel(static_cast<int>(status.x1) - 2, row);
  EXPECT_GT(sky[0] + sky[1] + sky[2], 300);
  EXPECT_LT(backed[0] + backed[1] + backed[2], 0.5 * (sky[0] + sky[1] + sky[2]));
}

// A picture-in-picture view: its own camera's picture inside its rectangle, the main view
// untouched around it, the same sky and lit bodies.
TEST_F(View, InsetShowsItsOwnCameraAndLeavesTheRestAlone) {
  const render::RgbImage plain = view_->capture(poses_);
  const std::size_t inset = view_->addInset({0.6, 0.05, 0.35, 0.4});
  const auto px = view_->insetPixels(inset);
  EXPECT_EQ(px[0], 192);  // 0.6 × 320
  EXPECT_EQ(px[1], 12);   // 0.05 × 240
  EXPECT_EQ(px[2], 112);
  EXPECT_EQ(px[3], 96);
  // Level with the crate, from the -x side: sky in the upper half, the crate in the middle.
  render::ViewCamera side;
  side.eye_m = {-2.2, 0.9, 0.35};
  side.target_m = {-0.2, 0.9, 0.35};
  side.fov_deg = 40.0;
  view_->setInsetCamera(inset, side);
  const render::RgbImage image = view_->capture(poses_);
  const auto inRect = [&](int x, int y) {
    return x >= px[0] && x < px[0] + px[2] && y >= px[1] && y < px[1] + px[3];
  };
  int outside_changed = 0;
  for (int y = 0; y < image.height; ++y) {
    for (int x = 0; x < image.width; ++x) {
      if (inRect(x, y)) continue;
      for (int c = 0; c < 3; ++c) outside_changed += image.pixel(x, y)[c] != plain.pixel(x, y)[c];
    }
  }
  EXPECT_EQ(outside_changed, 0);
  // The crate's centre as the inset camera projects it lands inside the rectangle and is not sky.
  const auto crate = view_->projectInset(inset, {-0.2, 0.9, 0.2});
  ASSERT_TRUE(inRect(static_cast<int>(crate[0]), static_cast<int>(crate[1])));
  const std::uint8_t* body = image.pixel(static_cast<int>(crate[0]), static_cast<int>(crate[1]));
  const std::uint8_t* sky = image.pixel(px[0] + 4, px[1] + 4);  // upper corner: above the horizon
  const std::uint8_t* main_sky = plain.pixel(2, 2);
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(sky[c], main_sky[c], 2) << "channel " << c;
  int differs = 0;
  for (int c = 0; c < 3; ++c) differs += std::abs(int(body[c]) - int(sky[c]));
  EXPECT_GT(differs, 60);
  // Hidden, the main view is whole again.
  view_->setInsetVisible(inset, false);
  EXPECT_EQ(view_->capture(poses_).rgb, plain.rgb);
  EXPECT_THROW(view_->addInset({0.8, 0.0, 0.3, 0.2}), render::RenderError);
}

// The sun's shadow: a box floating 1.5 m above the ground, seen from straight above. With shadows
// on, the ground where the box's centre projects along the sun is darker than with them off,
// by about the ratio of ambient to ambient + diffuse light; ground in the open is unchanged.
TEST(Shadows, TheGroundBehindABodyFromTheSunIsDarker) {
  const engine::Scene scene = engine::loadSceneFromString(R"(
bodies:
  - {name: ground, static: true, shapes: [{type: plane}]}
  - {name: slab, static: true, position: [0, 0, 1.5], shapes: [{type: box, size: [0.6, 0.6, 0.1]}]}
)",
                                                          "shadow_test.yaml");
  const auto visuals = engine::bodyVisuals(scene);
  dynamics::Simulator sim(scene.model);
  const auto poses = engine::bodyPoses(sim.initialState());
  render::ViewCamera above;
  above.eye_m = {0.0, 0.0, 6.0};
  above.target_m = {0.0, 0.0, 0.0};
  above.up = {0.0, 1.0, 0.0};
  const auto picture = [&](render::Shadows shadows, render::SceneView** made,
                           std::unique_ptr<render::SceneView>& keep) {
    render::ViewOptions options;
    options.width = 240;
    options.height = 240;
    options.offscreen = true;
    options.shadows = shadows;
    options.ground_grid = false;
    keep = std::make_unique<render::SceneView>(visuals, options);
    keep->setCamera(above);
    *made = keep.get();
    return keep->capture(poses);
  };
  std::unique_ptr<render::SceneView> on_view, off_view;
  render::SceneView* on = nullptr;
  render::SceneView* off = nullptr;
  const render::RgbImage with = picture(render::Shadows::On, &on, on_view);
  const render::RgbImage without = picture(render::Shadows::Off, &off, off_view);
  EXPECT_TRUE(on->shadowsOn());
  EXPECT_FALSE(off->shadowsOn());
  // The sun's direction (view.cpp): the slab's centre at 1.5 m casts onto z = 0 at
  // -1.5 (dx, dy) / dz.
  const double dx = 0.45, dy = -0.35, dz = 0.82;
  const std::array<double, 3> shadow{-1.5 * dx / dz, -1.5 * dy / dz, 0.0};
  const std::array<double, 3> open{1.2, -1.0, 0.0};
  const auto brightness = [&](const render::RgbImage& image, const std::array<double, 3>& at) {
    const auto p = on->project(at);
    const std::uint8_t* px = image.pixel(static_cast<int>(p[0]), static_cast<int>(p[1]));
    return int(px[0]) + int(px[1]) + int(px[2]);
  };
  // Ambient 0.42–0.48 against ambient + diffuse (0.85 × cos ≈ 0.70) ≈ 1.15 of the ground's
  // colour: a shadowed ground keeps under 60 % of its lit brightness; 75 % leaves room for the
  // shadow map's filtering at its edge.
  EXPECT_LT(brightness(with, shadow), 0.75 * brightness(without, shadow));
  EXPECT_NEAR(brightness(with, open), brightness(without, open), 6);
}

}  // namespace
}  // namespace sim
