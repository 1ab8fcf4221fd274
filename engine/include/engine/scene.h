// Scene files: a YAML description of a mechanism (bodies with their collision shapes, materials,
// joints, motors, repeaters, solver and contact settings) and its inputs, compiled once into an
// immutable dynamics::Model. The format is documented in docs/scenes.md. Errors name the file,
// the line and the key, and say what was expected; unknown keys are errors.
#pragma once

#include <dynamics/model.h>
#include <engine/mesh_import.h>
#include <engine/scheme.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace sim::engine {

/// A problem in a scene file or in a --set override.
class SceneError : public std::runtime_error {
 public:
  /// `line` is 1-based, 0 when unknown; `key` is a scene path such as "motors[drive].t_m".
  SceneError(std::string file, int line, std::string key, std::string message);
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  const std::string& key() const { return key_; }
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  int line_;
  std::string key_;
  std::string message_;
};

/// A scene that did not pass dynamics::validate(): every problem, each with its location.
class SceneInvalid : public std::runtime_error {
 public:
  explicit SceneInvalid(std::vector<SceneError> errors);
  const std::vector<SceneError>& errors() const { return errors_; }

 private:
  std::vector<SceneError> errors_;
};

/// One `--set KEY=VALUE`: a dotted path into the scene (list items addressed by their `name`,
/// or by index for plain lists such as a position) and the number's text as given.
struct Override {
  std::string path;
  std::string value;
};

/// Parses "KEY=VALUE"; throws SceneError (file "--set") when there is no '=', the key is empty or
/// the value is neither a finite number nor true/false (for switches such as
/// solver.articulated_contacts).
Override parseOverride(const std::string& text);

/// A constant voltage fed to one motor for the whole run (the pult arrives with its issue).
struct ConstantInput {
  std::string name;
  int motor = 0;         ///< Index into Model::motors.
  double voltage = 0.0;  ///< Normalised u in [-1, 1].
};

/// A 3D model drawn on a body (`visual:` in the scene): one file, or one node's subtree of it.
struct VisualDef {
  std::string file;       ///< Path as resolved (relative to the scene file's directory).
  std::string node;       ///< Node filter; empty for the whole file.
  double scale = 1.0;     ///< File units to metres.
  UpAxis up = UpAxis::Z;  ///< The file's up axis.
  /// Where the model's frame (the node's frame with a filter) sits relative to the body's
  /// centre-of-mass frame (dynamics::BodyDef pose).
  dynamics::Frame pose;
  /// The imported meshes, vertices in the model's (node's) frame; shared by copies of the scene.
  std::shared_ptr<const ImportedModel> model;
};

/// What the loader knows beyond the dynamics model: how bodies look.
struct BodyLook {
  std::array<double, 3> box_size_m{0.1, 0.1, 0.1};  ///< From `box:`, else from the inertia.
  /// The body's reference frame (its `position`/orientation in the file, where shapes, visuals
  /// and cameras are placed) relative to its centre-of-mass frame: the identity unless the
  /// centre of mass was given (`center_of_mass`) or computed from the shapes.
  dynamics::Frame reference;
  std::vector<VisualDef> visuals;
  bool hidden = false;  ///< `visual: []`: draw nothing for this body (not even its shapes).
  /// `color:` of the body and of each of its shapes (RGBA in [0, 1]; parallel to the shapes),
  /// where given: plain shapes and the box are drawn in it (model files keep their materials).
  std::optional<std::array<float, 4>> color_rgba;
  std::vector<std::optional<std::array<float, 4>>> shape_colors_rgba;
};

/// A view point the renderer offers (`cameras:`); the first one, or the one marked default, is
/// the initial view.
struct CameraDef {
  enum class Kind {
    Orbit,    ///< Mouse-driven around `target` (world), starting at `position` (world).
    Follow,   ///< Behind a body: eye at the body's position + `position` turned by its heading.
    Fixed,    ///< A site camera at `position` looking at `target` (both world).
    Onboard,  ///< Fixed to a body at `position` (body reference frame), looking along `direction`.
  };
  std::string name;
  Kind kind = Kind::Orbit;
  int body = -1;  ///< Follow and onboard: the body (index into Model::bodies); orbit: optional.
  dynamics::Vec3 position_m = dynamics::Vec3(-4.0, -4.0, 3.0);
  dynamics::Vec3 target_m = dynamics::Vec3::Zero();
  dynamics::Vec3 direction = dynamics::Vec3::UnitX();  ///< Onboard: unit, body reference axes.
  double fov_deg = 60.0;                               ///< Vertical field of view.
  /// `inset: [x, y, width, height]`: also shown all the time as a picture-in-picture at this
  /// place of the window, fractions from its top-left corner; empty: only when selected.
  std::optional<std::array<double, 4>> inset;
};

struct Scene {
  std::string file;                 ///< Where it was loaded from (for messages).
  std::uint64_t source_hash = 0;    ///< FNV-1a of the files' bytes (recordings check it).
  std::vector<Override> overrides;  ///< The --set overrides it was loaded with.
  std::string name;                 ///< `name:` of the scene, or the file's stem.
  dynamics::Model model;
  std::vector<BodyLook> looks;  ///< Parallel to model.bodies.
  std::vector<CameraDef> cameras;
  int default_camera = -1;  ///< Index into cameras, -1 when there are none.
  /// Every file the scene was read from: the scene file first, then its includes (depth first),
  /// then model files used for collision shapes. source_hash covers all of their bytes.
  std::vector<std::string> files;
  /// Problems that did not stop the load, one line each naming the file, line and element
  /// (URDF elements that are not simulated, motors beyond a URDF joint's limits, a mimic joint
  /// whose master has no motor).
  std::vector<std::string> warnings;
  std::vector<ConstantInput> inputs;
  PultDef pult;
  SchemeDef scheme;
  /// Scheme blocks whose outputs the trace adds as `scheme.<name>` columns (`trace: {scheme:}`).
  std::vector<int> trace_blocks;
  /// Frames per second of the run loop: the pult is sampled once per frame, and a scheme with
  /// `evaluate: frame` runs once per frame (steps_per_frame steps).
  double frame_rate_hz = 60.0;
  int stepsPerFrame() const;
};

/// Loads, applies the overrides, converts and validates a scene file. Throws SceneError for a
/// file that cannot be read or parsed, a bad key or value, or a bad override, and SceneInvalid
/// when dynamics::validate() rejects the model. A .urdf file is a scene of one robot
/// (engine/urdf.h; docs/scenes.md, "Robots from URDF").
Scene loadScene(const std::string& path, const std::vector<Override>& overrides = {});

/// As loadScene, from the file's text (YAML, or URDF when `file` ends in .urdf); `file` names it
/// in messages and is where relative paths start.
Scene loadSceneFromString(const std::string& yaml, const std::string& file,
                          const std::vector<Override>& overrides = {});

}  // namespace sim::engine
