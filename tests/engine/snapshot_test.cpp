// Pins engine/src/snapshot.cpp and the render::BodyGraph it feeds: one DYNAMIC transform per
// body, named after it, following the poses.
#include <dynamics/state.h>
#include <engine/scene.h>
#include <engine/snapshot.h>
#include <render/body_graph.h>

#include <gtest/gtest.h>
#include <osg/Geode>
#include <osg/ShapeDrawable>

#include <cmath>

namespace sim::engine {
namespace {

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
