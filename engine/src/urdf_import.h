// Internal header, not API: a URDF file turned into the bodies and joints it adds to a scene.
// The scene loader (scene_loader.cpp) includes a URDF file as it includes a robot YAML file; this
// is the part that knows URDF. Parsing is urdfdom's (Debian's liburdfdom-dev); this file maps
// its model (docs/scenes.md, "Robots from URDF"):
//
//   link        -> a body named as the link; links joined by fixed joints are merged into one
//                  body (mass properties combined), named after the link nearest the root
//   inertial    -> mass, centre of mass (its origin xyz, in the link frame) and the inertia
//                  tensor rotated by its origin rpy into the link axes; body axes = link axes
//   joint       -> revolute and continuous: hinge; prismatic: prismatic; fixed: merged; axis,
//                  origin, limits (lower, upper), dynamics damping and friction as the joint's
//                  viscous and Coulomb friction; effort and velocity kept for the motors
//   mimic       -> recorded; the loader makes it a repeater of the master's motor
//   visual      -> box, cylinder, sphere, or a mesh file through the Assimp path (mesh_import.h)
//                  with its scale; material colours
//   collision   -> box, cylinder, sphere shapes; a mesh: its convex hull (a static link: the
//                  triangle mesh itself)
//
// Everything is placed at the include's pose and at the joints' initial positions (zero unless
// the include gives `initial:`). Every problem is a SceneError naming the URDF file, the line of
// the element (TinyXML's row) and the element's path, e.g. "joint[elbow].axis".
#pragma once

#include <dynamics/model.h>
#include <engine/mesh_import.h>
#include <engine/scene.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace sim::engine::detail {

/// Imports a model file (cached by the loader): throws MeshImportError.
using MeshLoader = std::function<std::shared_ptr<const ImportedModel>(const std::string& path,
                                                                      const MeshImportOptions&)>;

/// A link of an imported URDF, wherever it ended up: in the frame of `body` (the body's centre
/// of mass frame) or, with body == kWorld, in the world.
struct UrdfLinkFrame {
  int body = dynamics::kWorld;
  dynamics::Frame frame;
};

/// How a scene includes one URDF file (the keys of its `include:` item).
struct UrdfInclude {
  std::string file;  ///< The URDF file (path as resolved against the including file).
  std::string text;  ///< Its bytes.
  /// Where the URDF's root link frame sits in the scene at the start.
  dynamics::Quat rotation = dynamics::Quat::Identity();
  dynamics::Vec3 translation = dynamics::Vec3::Zero();
  /// Root link: static (false) or a free body (true). Ignored when attached.
  bool floating_base = false;
  /// With `attach` set: the root link is welded to this link frame (a fixed joint; the root is
  /// static when that body is).
  std::optional<UrdfLinkFrame> attach;
  /// Collision group bit of the robot's shapes (their mask excludes it, so its links never
  /// touch each other); 0: groups left at their defaults (self-collision).
  std::uint32_t group = 0;
  /// Put before every link and joint name (two copies of one robot in a scene: "left_", "right_").
  std::string prefix;
  /// Initial joint positions (rad or m) by the URDF's joint names, with the line of each in the
  /// including file (for errors there).
  std::map<std::string, std::pair<double, int>> initial;
  std::string includer;  ///< The including file, for errors about `initial`.
};

/// A mimic joint: joint = multiplier * master + offset (URDF positions).
struct UrdfMimic {
  int joint = 0;   ///< Index into UrdfRobot::joints.
  int master = 0;  ///< Its master (itself not a mimic: chains are resolved), index as above.
  double multiplier = 1.0;
  double offset = 0.0;
  int line = 0;
};

/// What one URDF file adds to a scene. Body and joint indices are scene indices (the robot's
/// bodies are appended after `first_body`).
struct UrdfRobot {
  std::string name;  ///< <robot name="...">.
  struct Body {
    dynamics::BodyDef def;
    BodyLook look;
    int line = 0;  ///< The <link> element.
  };
  struct Joint {
    dynamics::JointDef def;
    int line = 0;           ///< The <joint> element (0: the weld of an attached root).
    double effort = 0.0;    ///< <limit effort>: N m or N; 0 when not given.
    double velocity = 0.0;  ///< <limit velocity>: rad/s or m/s; 0 when not given.
  };
  std::vector<Body> bodies;
  std::vector<Joint> joints;
  std::vector<UrdfMimic> mimics;
  std::map<std::string, UrdfLinkFrame> links;  ///< Every link (merged ones too) by name.
  std::map<std::string, int> lines;            ///< Scene paths ("bodies[arm].mass") -> URDF lines.
  std::vector<std::string> warnings;         ///< "file:line: element: what" (unsupported elements).
  std::vector<std::string> collision_files;  ///< Mesh files that shaped collision (hashed).
};

/// Maps the URDF `include.text` onto bodies and joints appended to `scene.model` (not modified
/// here). Throws SceneError.
UrdfRobot importUrdf(const UrdfInclude& include, const Scene& scene, const MeshLoader& meshes);

/// The file a URDF resource name refers to: package://NAME/path (searched in packagePath(),
/// then ROS_PACKAGE_PATH, then the URDF's own directory and those above it), file:///absolute,
/// file://relative or a plain path (relative to the URDF's directory). Throws
/// std::invalid_argument saying why when it cannot be resolved.
std::string resolveUrdfResource(const std::string& uri, const std::string& urdf_file);

}  // namespace sim::engine::detail
