// The scene graph of a mechanism's bodies: one osg::MatrixTransform per body holding its mesh
// parts (or a box). The render subsystem reads only plain snapshots (BodyVisual, BodyPose) and
// never touches solver structures (STYLE §1). The window and cameras are in render/view.h.
#pragma once

#include <osg/Group>
#include <osg/MatrixTransform>
#include <osg/ref_ptr>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace sim::render {

/// Where one body is: centre-of-mass position and orientation in the world. Also a part's
/// pose relative to its body.
struct BodyPose {
  std::array<double, 3> position_m{0.0, 0.0, 0.0};
  std::array<double, 4> orientation_wxyz{1.0, 0.0, 0.0, 0.0};  ///< Unit quaternion.
};

/// A colour image on a mesh: a file the render decodes (PNG, JPEG, ... through osgDB's plugins),
/// or an encoded image held in memory (a texture embedded in a model file).
struct TextureImage {
  std::string file;                            ///< Path of an image file; empty for `encoded`.
  std::shared_ptr<const std::string> encoded;  ///< The encoded image when not from a file.
  std::string format;                          ///< Extension of `encoded` ("png", "jpg").
  bool empty() const { return file.empty() && !encoded; }
  /// For messages: the file, or "embedded <format> image".
  std::string describe() const;
};

/// One triangle mesh of a body's look, in its own frame placed by `pose` in the body frame.
struct MeshPart {
  std::string name;
  std::vector<std::array<float, 3>> vertices_m;
  std::vector<std::array<float, 3>> normals;  ///< Unit, parallel to vertices_m.
  std::vector<std::uint32_t> indices;         ///< Three per triangle, counter-clockwise outside.
  std::array<float, 4> color_rgba{0.7f, 0.7f, 0.75f, 1.0f};
  /// Texture coordinates parallel to vertices_m (empty: untextured) and the image they index;
  /// the image modulates color_rgba. A texture that cannot be read leaves the part untextured
  /// with a warning (BodyGraph::warnings()).
  std::vector<std::array<float, 2>> uvs;
  TextureImage texture;
  BodyPose pose;
};

/// How one body looks: its mesh parts (model files or its collision shapes), or, without any,
/// a box centred on the body's centre of mass, in body axes.
struct BodyVisual {
  std::string name;
  std::array<double, 3> box_size_m{0.1, 0.1, 0.1};  ///< Edge lengths along body x, y, z (m).
  std::array<float, 4> color_rgba{0.7f, 0.7f, 0.75f, 1.0f};
  std::vector<MeshPart> meshes;
  /// The collision shapes, drawn as wireframes by the debug overlay.
  std::vector<MeshPart> collision;
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

  /// Shows or hides every body's collision wireframes (hidden at first).
  void setCollisionVisible(bool visible);

  /// Writes the poses into the transforms; call before or during the viewer's update traversal.
  /// Throws std::invalid_argument when the number of poses differs from the number of bodies.
  void update(std::span<const BodyPose> poses);

  /// Problems met while building (textures that could not be read), one line each.
  const std::vector<std::string>& warnings() const { return warnings_; }
  /// How many mesh parts are drawn with a texture.
  std::size_t texturedParts() const { return textured_parts_; }

 private:
  osg::ref_ptr<osg::Group> root_;
  std::vector<osg::ref_ptr<osg::MatrixTransform>> transforms_;
  std::vector<osg::ref_ptr<osg::Group>> collision_;
  std::vector<std::string> warnings_;
  std::size_t textured_parts_ = 0;
};

/// World matrix of a pose (OSG row-vector convention: v_world = v_body * M).
osg::Matrixd poseMatrix(const BodyPose& pose);

}  // namespace sim::render
