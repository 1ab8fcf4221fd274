// Pins engine/src/snapshot.cpp and the render::BodyGraph it feeds: one DYNAMIC transform per
// body, named after it, following the poses.
#include <dynamics/state.h>
#include <engine/scene.h>
#include <engine/snapshot.h>
#include <render/body_graph.h>

#include <gtest/gtest.h>
#include <osg/Geode>
#include <osg/ShapeDrawable>

#include <array>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace sim::engine {
namespace {

// `color:` on a body paints its plain shapes, `color:` on a shape overrides it; a body without
// shapes is drawn as its box in its colour; a bad colour is an error at its key.
TEST(Snapshot, BodyAndShapeColours) {
  const Scene scene = loadSceneFromString(R"(name: colours
bodies:
  - name: floor
    static: true
    color: [0.1, 0.2, 0.3]
    shapes:
      - {type: plane}
  - name: crate
    mass: 1
    color: [1, 0, 0]
    shapes:
      - {type: box, size: [0.1, 0.1, 0.1]}
      - {type: sphere, radius: 0.05, position: [0, 0, 0.1], color: [0, 1, 0, 0.5]}
  - {name: plain, mass: 1, box: [0.1, 0.1, 0.1], color: [0, 0, 1]}
)",
                                          "colours.yaml");
  const auto visuals = bodyVisuals(scene);
  ASSERT_EQ(visuals.size(), 3u);
  ASSERT_EQ(visuals[0].meshes.size(), 1u);
  EXPECT_EQ(visuals[0].meshes[0].color_rgba,
            (std::array<float, 4>{0.1f, 0.2f, 0.3f, 1.0f}));  // over the ground's grey
  ASSERT_EQ(visuals[1].meshes.size(), 2u);
  EXPECT_EQ(visuals[1].meshes[0].color_rgba, (std::array<float, 4>{1.0f, 0.0f, 0.0f, 1.0f}));
  EXPECT_EQ(visuals[1].meshes[1].color_rgba, (std::array<float, 4>{0.0f, 1.0f, 0.0f, 0.5f}));
  EXPECT_TRUE(visuals[2].meshes.empty());
  EXPECT_EQ(visuals[2].color_rgba, (std::array<float, 4>{0.0f, 0.0f, 1.0f, 1.0f}));
  for (const auto& [text, key] : std::vector<std::pair<std::string, std::string>>{
           {"color: [1, 0]", "bodies[b].color"}, {"color: [1, 0, 1.5]", "bodies[b].color[2]"}}) {
    try {
      loadSceneFromString("name: bad\nbodies:\n  - {name: b, static: true, " + text + "}\n",
                          "bad.yaml");
      ADD_FAILURE() << text;
    } catch (const SceneError& e) {
      EXPECT_EQ(e.line(), 3) << e.what();
      EXPECT_EQ(e.key(), key) << e.what();
    }
  }
}

TEST(Snapshot, BodyGraphFollowsPoses) {
  Scene scene;
  scene.model.bodies.resize(2);
  scene.model.bodies[0].name = "ground";
  scene.model.bodies[0].is_static = true;
  scene.model.bodies[1].name = "link";
  scene.looks.resize(2);
  scene.looks[1].box_size_m = {2.0, 0.2, 0.1};

  const auto visuals = bodyVisuals(scene);
  ASSERT_EQ(visuals.size(), 2u);
  EXPECT_EQ(visuals[1].name, "link");
  EXPECT_EQ(visuals[1].box_size_m[0], 2.0);

  render::BodyGraph graph(visuals);
  ASSERT_EQ(graph.size(), 2u);
  ASSERT_EQ(graph.root()->getNumChildren(), 2u);
  EXPECT_EQ(graph.transform(1)->getName(), "link");
  EXPECT_EQ(graph.transform(1)->getDataVariance(), osg::Object::DYNAMIC);
  auto* geode = dynamic_cast<osg::Geode*>(graph.transform(1)->getChild(0));
  ASSERT_NE(geode, nullptr);
  ASSERT_EQ(geode->getNumDrawables(), 1u);
  auto* box = dynamic_cast<const osg::Box*>(geode->getDrawable(0)->getShape());
  ASSERT_NE(box, nullptr);
  EXPECT_FLOAT_EQ(box->getHalfLengths().x(), 1.0f);

  // A quarter turn about z and a shift: the body's x axis maps to the world's y axis.
  dynamics::State state;
  state.bodies.resize(2);
  state.bodies[1].position_m = {1.0, 2.0, 3.0};
  state.bodies[1].orientation =
      dynamics::Quat(Eigen::AngleAxisd(M_PI / 2.0, dynamics::Vec3::UnitZ()));
  graph.update(bodyPoses(state));

  const osg::Matrixd& m = graph.transform(1)->getMatrix();
  const osg::Vec3d origin = osg::Vec3d(0, 0, 0) * m;
  const osg::Vec3d tip = osg::Vec3d(1, 0, 0) * m;
  EXPECT_NEAR(origin.x(), 1.0, 1e-12);
  EXPECT_NEAR(origin.y(), 2.0, 1e-12);
  EXPECT_NEAR(origin.z(), 3.0, 1e-12);
  EXPECT_NEAR(tip.x(), 1.0, 1e-12);
  EXPECT_NEAR(tip.y(), 3.0, 1e-12);

  EXPECT_THROW(graph.update(std::vector<render::BodyPose>(1)), std::invalid_argument);
}

}  // namespace
}  // namespace sim::engine
