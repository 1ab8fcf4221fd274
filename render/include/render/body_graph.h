// The scene graph of a mechanism's bodies: one osg::MatrixTransform per body holding a box
// drawable. The render subsystem reads only plain snapshots (BodyVisual, BodyPose) and never
// touches solver structures (STYLE §1). No window yet: the viewer arrives with the render issue.
#pragma once

#include <osg/Group>
#include <osg/MatrixTransform>
#include <osg/ref_ptr>

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace sim::render {

/// How one body looks: a box centred on the body's centre of mass, in body axes.
struct BodyVisual {
  std::string name;
  std::array<double, 3> box_size_m{0.1, 0.1, 0.1};  ///< Edge lengths along body x, y, z (m).
  std::array<float, 4> color_rgba{0.7f, 0.7f, 0.75f, 1.0f};
};

/// Where one body is: centre-of-mass position and orientation in the world.
struct BodyPose {
  std::array<double, 3> position_m{0.0, 0.0, 0.0};
  std::array<double, 4> orientation_wxyz{1.0, 0.0, 0.0, 0.0};  ///< Unit quaternion.
};

/// Root group with one DYNAMIC MatrixTransform per body, in the order of the visuals given.
class BodyGraph {
 public:
  explicit BodyGraph(std::span<const BodyVisual> bodies);

  /// The root to hand to a viewer.
  osg::Group* root() const { return root_.get(); }
  std::size_t size() const { return transforms_.size(); }
  /// The transform of body `i` (named after the body).
  osg::MatrixTransform* transform(std::size_t i) const { return transforms_.at(i).get(); }

  /// Writes the poses into the transforms; call before or during the viewer's update traversal.
  /// Throws std::invalid_argument when the number of poses differs from the number of bodies.
  void update(std::span<const BodyPose> poses);

 private:
  osg::ref_ptr<osg::Group> root_;
  std::vector<osg::ref_ptr<osg::MatrixTransform>> transforms_;
};

/// World matrix of a pose (OSG row-vector convention: v_world = v_body * M).
osg::Matrixd poseMatrix(const BodyPose& pose);

}  // namespace sim::render
