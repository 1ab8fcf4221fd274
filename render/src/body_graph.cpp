#include <render/body_graph.h>

#include <osg/Geode>
#include <osg/Quat>
#include <osg/Shape>
#include <osg/ShapeDrawable>

#include <stdexcept>
#include <string>

namespace sim::render {

BodyGraph::BodyGraph(std::span<const BodyVisual> bodies) : root_(new osg::Group) {
  root_->setName("bodies");
  transforms_.reserve(bodies.size());
  for (const BodyVisual& body : bodies) {
    // A box at the body origin (its centre of mass), sized in body axes.
    auto* box = new osg::Box(osg::Vec3(0.0f, 0.0f, 0.0f), static_cast<float>(body.box_size_m[0]),
                             static_cast<float>(body.box_size_m[1]),
                             static_cast<float>(body.box_size_m[2]));
    auto* drawable = new osg::ShapeDrawable(box);
    drawable->setColor(
        osg::Vec4(body.color_rgba[0], body.color_rgba[1], body.color_rgba[2], body.color_rgba[3]));
    auto* geode = new osg::Geode;
    geode->setName(body.name + ".shape");
    geode->addDrawable(drawable);

    // The transform changes every frame, so it is marked DYNAMIC (STYLE §6).
    osg::ref_ptr<osg::MatrixTransform> transform = new osg::MatrixTransform;
    transform->setName(body.name);
    transform->setDataVariance(osg::Object::DYNAMIC);
    transform->addChild(geode);
    root_->addChild(transform.get());
    transforms_.push_back(transform);
  }
}

void BodyGraph::update(std::span<const BodyPose> poses) {
  if (poses.size() != transforms_.size()) {
    throw std::invalid_argument("BodyGraph::update: " + std::to_string(poses.size()) +
                                " poses for " + std::to_string(transforms_.size()) + " bodies");
  }
  for (std::size_t i = 0; i < poses.size(); ++i) {
    transforms_[i]->setMatrix(poseMatrix(poses[i]));
  }
}

osg::Matrixd poseMatrix(const BodyPose& pose) {
  // osg::Quat takes (x, y, z, w).
  const osg::Quat rotation(pose.orientation_wxyz[1], pose.orientation_wxyz[2],
                           pose.orientation_wxyz[3], pose.orientation_wxyz[0]);
  osg::Matrixd matrix;
  matrix.makeRotate(rotation);
  matrix.setTrans(pose.position_m[0], pose.position_m[1], pose.position_m[2]);
  return matrix;
}

}  // namespace sim::render
