// Scene loader: YAML text -> overrides applied to the YAML tree -> dynamics::Model -> validate().
//
// Every value is read through a MapReader that knows the section's allowed keys, so unknown keys
// are errors and every error carries the file, the 1-based line (yaml-cpp's Mark) and the scene
// path of the key ("bodies[link].mass"). The same paths, recorded with their lines, locate the
// problems dynamics::validate() reports by field name.
#include <dynamics/model.h>
#include <dynamics/shapes.h>
#include <engine/mesh_import.h>
#include <engine/scene.h>

#include "motor_catalogue.h"
#include "scene_frames.h"
#include "scheme_loader.h"
#include "urdf_import.h"
#include "yaml_reader.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

namespace sim::engine {

using dynamics::Mat3;
using dynamics::Quat;
using dynamics::Vec3;

namespace {

constexpr double kRpmToRadps = 2.0 * 3.14159265358979323846 / 60.0;
constexpr int kMaxStepsPerFrame = 10000;

std::string formatError(const std::string& file, int line, const std::string& key,
                        const std::string& message) {
  std::string text = file;
  if (line > 0) text += fmt::format(":{}", line);
  text += ": ";
  if (!key.empty()) text += key + ": ";
  return text + message;
}

}  // namespace

SceneError::SceneError(std::string file, int line, std::string key, std::string message)
    : std::runtime_error(formatError(file, line, key, message)),
      file_(std::move(file)),
      line_(line),
      key_(std::move(key)),
      message_(std::move(message)) {}

namespace {

constexpr double kNoLimit = std::numeric_limits<double>::infinity();

std::string joinErrors(const std::vector<SceneError>& errors) {
  std::string text;
  for (const SceneError& error : errors) {
    if (!text.empty()) text += '\n';
    text += error.what();
  }
  return text;
}

}  // namespace

SceneInvalid::SceneInvalid(std::vector<SceneError> errors)
    : std::runtime_error(joinErrors(errors)), errors_(std::move(errors)) {}

namespace {

using namespace detail;

// Solid box of uniform density: inertia about its centre in its own axes.
Mat3 boxInertia(double mass, const Vec3& size) {
  const double x2 = size.x() * size.x(), y2 = size.y() * size.y(), z2 = size.z() * size.z();
  return Vec3(mass * (y2 + z2) / 12.0, mass * (x2 + z2) / 12.0, mass * (x2 + y2) / 12.0)
      .asDiagonal();
}

// The box of uniform density with the same principal inertia (for drawing only).
std::array<double, 3> equivalentBox(double mass, const Mat3& inertia) {
  const double ixx = inertia(0, 0), iyy = inertia(1, 1), izz = inertia(2, 2);
  auto edge = [&](double a, double b, double c) {
    const double e2 = 6.0 * (a + b - c) / mass;
    return e2 > 1e-6 ? std::sqrt(e2) : 0.05;
  };
  return {edge(iyy, izz, ixx), edge(ixx, izz, iyy), edge(ixx, iyy, izz)};
}

// Model files read while loading one scene: each (path, node, scale, up) is imported once, in an
// isolated child process (mesh_import.h), and shared by every body and shape that uses it.
// Imported model files, shared by every scene of the process that holds them: reloading a scene
// (an instructor's parameter change, a replay's seek) neither imports its meshes again nor keeps
// a second copy of them beside the caller's first scene (bench/soak.cpp --memory-log: that copy
// was about 1 % of an MF-4 session's resident memory). A file changed on disk since (size or
// modification time) is imported again; a model no scene holds any more is gone.
class ModelFiles {
 public:
  static ModelFiles& shared() {
    static ModelFiles files;
    return files;
  }

  std::shared_ptr<const ImportedModel> get(const std::string& path,
                                           const MeshImportOptions& options) {
    std::error_code size_error, time_error;
    const auto size = std::filesystem::file_size(path, size_error);
    const auto time = std::filesystem::last_write_time(path, time_error);
    // An unreadable file is importMesh's to report, with its own message.
    if (size_error || time_error)
      return std::make_shared<const ImportedModel>(importMesh(path, options));
    const Key key{path,          options.node,
                  options.scale, options.up == UpAxis::Y,
                  size,          time.time_since_epoch().count()};
    const std::lock_guard lock(mutex_);
    std::erase_if(cache_, [](const auto& entry) { return entry.second.expired(); });
    if (auto it = cache_.find(key); it != cache_.end()) return it->second.lock();
    auto model = std::make_shared<const ImportedModel>(importMesh(path, options));
    cache_.emplace(key, model);
    return model;
  }

 private:
  using Key = std::tuple<std::string, std::string, double, bool, std::uintmax_t, std::int64_t>;
  std::mutex mutex_;
  std::map<Key, std::weak_ptr<const ImportedModel>> cache_;
};

// A URDF mimic joint, made a repeater of its master's motor once all motors are read.
struct PendingMimic {
  UrdfMimic mimic;   // scene joint indices
  std::string file;  // the URDF and the line of its <mimic>
};

// Everything one load shares across the scene file and its includes.
struct LoadState {
  std::vector<std::string> collision_files;    // model files that shaped collision (hashed)
  std::map<std::string, std::string> defined;  // "body chassis" -> "file:line" of its definition
  // URDF includes: every link (merged ones too, for `parent:`), each joint's <limit> effort and
  // velocity (motor defaults), the mimic joints, and the collision group bit of each robot's
  // bodies (the next free bit counts down from 31).
  std::map<std::string, UrdfLinkFrame> urdf_links;
  std::map<std::string, std::pair<double, double>> urdf_limits;
  std::vector<PendingMimic> mimics;
  std::map<int, std::uint32_t> body_group;
  int next_group_bit = 31;
  // Reference frames of the scene files' bodies in the scene (`frame:` places poses in them).
  std::map<int, PoseFrame> body_frames;
  // Bodies ("bodies[link]") whose inertia was computed from their mass, not written: a bad mass
  // is the one error to report for them.
  std::set<std::string> derived_inertia;
};

// A body's pose as its file gives it, placed once every body of the file is read (its frame may
// name a body defined further down, or the parent of a joint not read yet).
struct PendingPose {
  std::size_t body = 0;
  std::string path;   // "bodies[link]"
  std::string frame;  // world, parent or a body's name
  int frame_line = 0;
  Vec3 position = Vec3::Zero();  // of the reference frame, in `frame`
  std::optional<DecimalVec3> position_text;
  Quat orientation = Quat::Identity();  // in `frame`
  Vec3 center = Vec3::Zero();           // centre of mass in the reference frame
};

// The frame positions in a file are given in: the file's placement in the scene.
PoseFrame fileFrame(const Placement& place) {
  PoseFrame frame{place, std::nullopt};
  if (place.rotation.w() == 1.0 && place.rotation.vec().isZero(0.0) &&
      place.translation.isZero(0.0)) {
    frame.exact_origin = DecimalVec3{};
  }
  return frame;
}

// A body's reference frame in the scene: as placed from its file, or for a URDF link's body,
// from its pose and its reference offset.
PoseFrame bodyFrame(const Scene& scene, const LoadState& state, int body) {
  if (auto it = state.body_frames.find(body); it != state.body_frames.end()) return it->second;
  const dynamics::BodyDef& b = scene.model.bodies[static_cast<std::size_t>(body)];
  const Vec3 offset = scene.looks[static_cast<std::size_t>(body)].reference.position;
  return {Placement{b.orientation, b.position_m + b.orientation * offset}, std::nullopt};
}

// Names are unique across the scene and its includes; `kind` is "body", "joint", ...
void claimName(Context& ctx, LoadState& state, const MapReader& item, const char* kind,
               const std::string& name) {
  const std::string key = std::string(kind) + " " + name;
  const std::string here = fmt::format("{}:{}", ctx.file, item.keyLine("name"));
  auto [it, fresh] = state.defined.emplace(key, here);
  if (!fresh) {
    ctx.failAt(item.keyLine("name"), item.join("name"),
               fmt::format("duplicate name \"{}\": a {} of that name is defined at {}", name, kind,
                           it->second));
  }
}

// A model file named in a scene: relative paths are relative to the scene file's directory.
std::string resolveModelPath(const Context& ctx, const std::string& file) {
  const std::filesystem::path path(file);
  if (path.is_absolute()) return file;
  return (std::filesystem::path(ctx.file).parent_path() / path).lexically_normal().string();
}

// The keys `file`, `node`, `scale` and `up` of a visual or a shape read from a model file.
MeshImportOptions readModelOptions(const Context& ctx, const MapReader& m) {
  MeshImportOptions options;
  if (m.has("node")) options.node = m.string("node");
  if (m.has("scale")) options.scale = ctx.positive(m.value("scale"), m.join("scale"));
  if (m.has("up")) {
    const std::string up = m.string("up");
    if (up != "z" && up != "y") {
      ctx.fail(m.value("up"), m.join("up"), fmt::format("expected z or y, got \"{}\"", up));
    }
    options.up = up == "y" ? UpAxis::Y : UpAxis::Z;
  }
  return options;
}

// Imports the model file named by m's `file`; a failure is an error at `file` (or at `node` when
// the file has no such node) that says what was wrong.
std::shared_ptr<const ImportedModel> importModel(const Context& ctx, const MapReader& m,
                                                 const MeshImportOptions& options) {
  const std::string path = resolveModelPath(ctx, m.string("file"));
  try {
    return ModelFiles::shared().get(path, options);
  } catch (const MeshImportError& e) {
    const bool node_missing = m.has("node") && e.message().rfind("no node named", 0) == 0;
    const std::string key = node_missing ? "node" : "file";
    ctx.failAt(m.keyLine(key), m.join(key), fmt::format("{}: {}", path, e.message()));
  }
}

// Solver keys that selected between two implementations of one idea. The solver now has one
// path per idea (docs/dynamics.md), so a scene that still sets one is told what became of it.
constexpr std::array<std::pair<const char*, const char*>, 3> kRemovedSolverKeys{{
    {"batched_contacts",
     "rigid contact manifolds are always solved in SIMD batches (the same "
     "results bit for bit as one by one)"},
    {"low_rank_responses",
     "a mechanism's link responses now come from its rotor coordinates or, "
     "in full coordinates, from the block's factor"},
    {"reduced_mechanisms",
     "a tree of hinges and sliders on a static base, each coupled rigidly "
     "to a rotor, is always solved in its rotors' coordinates"},
}};

void readSolver(Context& ctx, const YAML::Node& node, dynamics::SolverSettings& s) {
  if (node.IsMap()) {
    for (const auto& entry : node) {
      for (const auto& [key, now] : kRemovedSolverKeys) {
        if (entry.first.Scalar() == key)
          ctx.fail(entry.first, std::string("solver.") + key,
                   fmt::format("this key is gone: {}; remove it", now));
      }
    }
  }
  MapReader m(
      ctx, node, "solver",
      {"time_step", "substeps", "velocity_iterations", "position_iterations", "velocity_tolerance",
       "velocity_change_tolerance", "position_tolerance", "position_correction", "max_linear_speed",
       "max_angular_speed", "max_motor_speed", "warm_start", "articulated_contacts"});
  s.time_step_s = m.number("time_step", s.time_step_s);
  s.substeps = m.integer("substeps", s.substeps);
  s.velocity_iterations = m.integer("velocity_iterations", s.velocity_iterations);
  s.position_iterations = m.integer("position_iterations", s.position_iterations);
  s.velocity_tolerance = m.number("velocity_tolerance", s.velocity_tolerance);
  s.velocity_change_tolerance = m.number("velocity_change_tolerance", s.velocity_change_tolerance);
  s.position_tolerance_m = m.number("position_tolerance", s.position_tolerance_m);
  s.position_correction = m.number("position_correction", s.position_correction);
  s.max_linear_speed_mps = m.number("max_linear_speed", s.max_linear_speed_mps);
  s.max_angular_speed_radps = m.number("max_angular_speed", s.max_angular_speed_radps);
  s.max_motor_speed_radps = m.number("max_motor_speed", s.max_motor_speed_radps);
  s.warm_start = m.boolean("warm_start", s.warm_start);
  s.articulated_contacts = m.boolean("articulated_contacts", s.articulated_contacts);
}

void readContact(Context& ctx, const YAML::Node& node, dynamics::ContactSettings& c) {
  MapReader m(ctx, node, "contact",
              {"margin", "slop", "restitution_threshold", "max_position_correction",
               "position_correction", "sleep", "sleep_linear_speed", "sleep_angular_speed",
               "sleep_time", "manifold_reuse_distance", "manifold_reuse_angle"});
  c.margin_m = m.number("margin", c.margin_m);
  c.slop_m = m.number("slop", c.slop_m);
  c.restitution_threshold_mps = m.number("restitution_threshold", c.restitution_threshold_mps);
  c.max_position_correction_m = m.number("max_position_correction", c.max_position_correction_m);
  c.position_correction = m.number("position_correction", c.position_correction);
  c.sleep_enabled = m.boolean("sleep", c.sleep_enabled);
  c.sleep_linear_speed_mps = m.number("sleep_linear_speed", c.sleep_linear_speed_mps);
  c.sleep_angular_speed_radps = m.number("sleep_angular_speed", c.sleep_angular_speed_radps);
  c.sleep_time_s = m.number("sleep_time", c.sleep_time_s);
  c.manifold_reuse_distance_m = m.number("manifold_reuse_distance", c.manifold_reuse_distance_m);
  c.manifold_reuse_angle_rad = m.number("manifold_reuse_angle", c.manifold_reuse_angle_rad);
}

// A material; "default" replaces material 0, any other name is appended.
void readMaterial(Context& ctx, const YAML::Node& node, const std::string& path, Scene& scene,
                  LoadState& state) {
  MapReader m(ctx, node, path,
              {"name", "friction", "restitution", "torsion_radius", "stiffness", "damping"});
  dynamics::MaterialDef material;
  material.name = m.string("name");
  claimName(ctx, state, m, "material", material.name);
  material.friction = m.number("friction", material.friction);
  material.restitution = m.number("restitution", material.restitution);
  material.torsion_radius_m = m.number("torsion_radius", material.torsion_radius_m);
  material.contact_stiffness_npm = m.number("stiffness", material.contact_stiffness_npm);
  material.contact_damping_nspm = m.number("damping", material.contact_damping_nspm);
  if (material.name == scene.model.materials.front().name) {
    scene.model.materials.front() = std::move(material);
  } else {
    scene.model.materials.push_back(std::move(material));
  }
}

// Orientation as a quaternion [w, x, y, z] (normalised on load) or roll-pitch-yaw (rad), applied
// as Rz(yaw) Ry(pitch) Rx(roll); the identity when neither is given.
Quat readOrientation(const Context& ctx, const MapReader& m) {
  if (m.has("orientation") && m.has("rpy")) {
    ctx.fail(m.value("rpy"), m.join("rpy"), "give either orientation or rpy, not both");
  }
  if (m.has("orientation")) {
    auto q =
        ctx.numbers(m.value("orientation"), m.join("orientation"), 4, "a quaternion [w, x, y, z]");
    Quat quat(q[0], q[1], q[2], q[3]);
    if (!(quat.norm() > 1e-9)) {
      ctx.fail(m.value("orientation"), m.join("orientation"), "quaternion has zero length");
    }
    return quat.normalized();
  }
  if (m.has("rpy")) {
    const Vec3 rpy = ctx.vec3(m.value("rpy"), m.join("rpy"));
    return Quat(Eigen::AngleAxisd(rpy.z(), Vec3::UnitZ()) *
                Eigen::AngleAxisd(rpy.y(), Vec3::UnitY()) *
                Eigen::AngleAxisd(rpy.x(), Vec3::UnitX()));
  }
  return Quat::Identity();
}

// A colour [r, g, b] or [r, g, b, a], each in [0, 1].
std::array<float, 4> readColor(const Context& ctx, const YAML::Node& node, const std::string& key) {
  if (!node.IsSequence() || (node.size() != 3 && node.size() != 4)) {
    ctx.fail(node, key,
             "expected a colour [r, g, b] or [r, g, b, a], each in [0, 1], got " + describe(node));
  }
  std::array<float, 4> rgba{0.0f, 0.0f, 0.0f, 1.0f};
  for (std::size_t i = 0; i < node.size(); ++i) {
    const double c = ctx.number(node[i], fmt::format("{}[{}]", key, i));
    if (!(c >= 0.0 && c <= 1.0))
      ctx.fail(node[i], fmt::format("{}[{}]", key, i),
               fmt::format("expected a value in [0, 1], got {}", c));
    rgba[i] = static_cast<float>(c);
  }
  return rgba;
}

// Box edge lengths [x, y, z], each positive.
Vec3 readBoxSize(const Context& ctx, const MapReader& m, const std::string& key) {
  const Vec3 size = ctx.vec3(m.value(key), m.join(key));
  for (int i = 0; i < 3; ++i) {
    if (!(size[i] > 0.0)) ctx.fail(m.value(key), m.join(key), "edges must be positive");
  }
  return size;
}

// A list of [x, y, z] points under `key` (at least one).
std::vector<Vec3> readPoints(const Context& ctx, const MapReader& m, const std::string& key) {
  const YAML::Node list = m.value(key);
  if (!list.IsSequence() || list.size() == 0) {
    ctx.fail(list, m.join(key), "expected a list of [x, y, z] points, got " + describe(list));
  }
  std::vector<Vec3> points;
  for (std::size_t i = 0; i < list.size(); ++i) {
    points.push_back(ctx.vec3(list[i], fmt::format("{}[{}]", m.join(key), i)));
  }
  return points;
}

// A mesh's `triangles`: [i, j, k] vertex indices, each checked against the vertex count.
std::vector<std::array<int, 3>> readTriangles(const Context& ctx, const MapReader& m,
                                              std::size_t vertex_count) {
  const YAML::Node list = m.value("triangles");
  if (!list.IsSequence() || list.size() == 0) {
    ctx.fail(list, m.join("triangles"),
             "expected a list of [i, j, k] index triples, got " + describe(list));
  }
  std::vector<std::array<int, 3>> triangles;
  for (std::size_t t = 0; t < list.size(); ++t) {
    const std::string at = fmt::format("{}[{}]", m.join("triangles"), t);
    if (!list[t].IsSequence() || list[t].size() != 3) {
      ctx.fail(list[t], at, "expected 3 vertex indices [i, j, k], got " + describe(list[t]));
    }
    std::array<int, 3> tri{};
    for (std::size_t k = 0; k < 3; ++k) {
      const std::string key = fmt::format("{}[{}]", at, k);
      tri[k] = ctx.integer(list[t][k], key);
      if (tri[k] < 0 || static_cast<std::size_t>(tri[k]) >= vertex_count) {
        ctx.fail(list[t][k], key,
                 fmt::format("vertex index {} out of range (the mesh has {} vertices, 0 to {})",
                             tri[k], vertex_count, vertex_count - 1));
      }
    }
    triangles.push_back(tri);
  }
  return triangles;
}

// One collision shape of a body (body index `body`, static or not). Keys that do not apply to
// the shape's type are errors; a belt's motor is resolved later (Context::belts).
dynamics::ShapeDef readShape(Context& ctx, const YAML::Node& node, const std::string& path,
                             const Scene& scene, std::size_t body, std::size_t shape_index,
                             bool is_static, LoadState& state) {
  MapReader m(ctx, node, path,
              {"type", "position", "orientation", "rpy", "size", "radius", "half_length", "points",
               "vertices", "triangles", "file", "node", "scale", "up", "material", "group", "mask",
               "belt", "color"});
  dynamics::ShapeDef shape;
  const std::string type = m.string("type");
  using dynamics::ShapeType;
  if (type == "sphere") {
    shape.type = ShapeType::Sphere;
  } else if (type == "box") {
    shape.type = ShapeType::Box;
  } else if (type == "capsule") {
    shape.type = ShapeType::Capsule;
  } else if (type == "cylinder") {
    shape.type = ShapeType::Cylinder;
  } else if (type == "hull") {
    shape.type = ShapeType::ConvexHull;
  } else if (type == "plane" || type == "mesh") {
    shape.type = type == "plane" ? ShapeType::Plane : ShapeType::TriangleMesh;
    if (!is_static) {
      ctx.fail(m.value("type"), m.join("type"),
               fmt::format("a {} may only belong to a static body (static: true)", type));
    }
  } else {
    ctx.fail(m.value("type"), m.join("type"),
             fmt::format("expected sphere, box, capsule, cylinder, hull, mesh or plane, got \"{}\"",
                         type));
  }

  // Dimensions: exactly the ones of the type.
  const std::string unused = fmt::format("not used by a {} shape", type);
  // The point-list keys belong to hulls and meshes only.
  const char* hint = shape.type == ShapeType::Box            ? " (give size)"
                     : shape.type == ShapeType::ConvexHull   ? " (give points)"
                     : shape.type == ShapeType::TriangleMesh ? " (give vertices and triangles)"
                     : shape.type == ShapeType::Plane
                         ? " (a plane is the half-space below its local x-y plane)"
                         : " (give radius)";
  if (shape.type != ShapeType::ConvexHull) m.forbid("points", unused + hint);
  if (shape.type != ShapeType::TriangleMesh) {
    m.forbid("vertices", unused + hint);
    m.forbid("triangles", unused + hint);
  }
  // A hull or mesh may come from a model file instead of inline points.
  const bool from_file = m.has("file");
  if (shape.type != ShapeType::ConvexHull && shape.type != ShapeType::TriangleMesh) {
    for (const char* key : {"file", "node", "scale", "up"}) {
      m.forbid(key,
               fmt::format("not used by a {} shape (only hulls and meshes come from files)", type));
    }
  } else if (from_file) {
    for (const char* key : {"points", "vertices", "triangles"}) {
      m.forbid(key, "give either file or the inline points, not both");
    }
  } else {
    for (const char* key : {"node", "scale", "up"}) m.forbid(key, "used only with file");
  }
  std::vector<Vec3> file_vertices;
  std::vector<std::array<int, 3>> file_triangles;
  if (from_file) {
    const auto model = importModel(ctx, m, readModelOptions(ctx, m));
    state.collision_files.push_back(model->path);
    for (const ImportedMesh& mesh : model->meshes) {
      const int offset = static_cast<int>(file_vertices.size());
      for (const Vec3d& v : mesh.vertices) file_vertices.emplace_back(v[0], v[1], v[2]);
      for (const auto& t : mesh.triangles) {
        file_triangles.push_back({offset + static_cast<int>(t[0]), offset + static_cast<int>(t[1]),
                                  offset + static_cast<int>(t[2])});
      }
    }
  }
  if (shape.type == ShapeType::Box) {
    m.forbid("radius", unused + " (give size)");
    m.forbid("half_length", unused + " (give size)");
    if (!m.has("size")) ctx.fail(node, m.join("size"), "missing (required for a box)");
    shape.half_extents_m = 0.5 * readBoxSize(ctx, m, "size");
    ctx.lines[m.join("half_extents")] = m.keyLine("size");  // validate() says "half_extents"
  } else if (shape.type == ShapeType::Plane) {
    for (const char* key : {"size", "radius", "half_length"}) m.forbid(key, unused + hint);
  } else if (shape.type == ShapeType::ConvexHull) {
    for (const char* key : {"size", "radius", "half_length"}) m.forbid(key, unused + hint);
    if (!from_file && !m.has("points")) {
      ctx.fail(node, m.join("points"), "missing (required for a hull: points or file)");
    }
    std::string error;
    const std::string key = from_file ? "file" : "points";
    shape.hull =
        dynamics::makeConvexHull(from_file ? file_vertices : readPoints(ctx, m, "points"), &error);
    if (!shape.hull) ctx.fail(m.value(key), m.join(key), error);
  } else if (shape.type == ShapeType::TriangleMesh) {
    for (const char* key : {"size", "radius", "half_length"}) m.forbid(key, unused + hint);
    std::string error;
    if (from_file) {
      shape.mesh = dynamics::makeTriangleMesh(file_vertices, file_triangles, &error);
      if (!shape.mesh) ctx.fail(m.value("file"), m.join("file"), error);
    } else {
      for (const char* key : {"vertices", "triangles"}) {
        if (!m.has(key))
          ctx.fail(node, m.join(key),
                   "missing (required for a mesh: vertices and triangles, or file)");
      }
      const std::vector<Vec3> vertices = readPoints(ctx, m, "vertices");
      shape.mesh =
          dynamics::makeTriangleMesh(vertices, readTriangles(ctx, m, vertices.size()), &error);
      if (!shape.mesh) ctx.fail(m.value("triangles"), m.join("triangles"), error);
    }
  } else {
    m.forbid("size", unused + " (give radius)");
    if (!m.has("radius")) ctx.fail(node, m.join("radius"), "missing (required for a " + type + ")");
    shape.radius_m = ctx.positive(m.value("radius"), m.join("radius"));
    if (shape.type == ShapeType::Capsule || shape.type == ShapeType::Cylinder) {
      if (!m.has("half_length")) {
        ctx.fail(node, m.join("half_length"), "missing (required for a " + type + ")");
      }
      shape.half_length_m = m.number("half_length");
      const bool cylinder = shape.type == ShapeType::Cylinder;
      if (cylinder ? !(shape.half_length_m > 0.0) : !(shape.half_length_m >= 0.0)) {
        ctx.fail(m.value("half_length"), m.join("half_length"),
                 fmt::format("expected a number {} 0, got {}",
                             cylinder ? ">" : ">=", shape.half_length_m));
      }
    } else {
      m.forbid("half_length", unused + " (give radius)");
    }
  }

  // Pose in the body frame (origin at the centre of mass, body axes).
  shape.pose.position = m.vec3("position", Vec3::Zero());
  shape.pose.rotation = readOrientation(ctx, m);
  if (m.has("material")) {
    shape.material = findByName(ctx, m, "material", scene.model.materials, "material");
  }
  shape.group = m.bits("group", shape.group);
  shape.mask = m.bits("mask", shape.mask);
  if (m.has("belt")) {
    const MapReader belt(ctx, m.value("belt"), m.join("belt"), {"motor", "direction", "m_per_rad"});
    belt.string("motor");  // checked now, looked up once the motors are known
    const Vec3 direction = belt.vec3("direction", Vec3::UnitX());
    if (!(direction.norm() > 1e-9)) {
      ctx.fail(belt.value("direction"), belt.join("direction"), "direction has zero length");
    }
    shape.belt_direction = direction.normalized();
    shape.belt_m_per_rad = belt.number("m_per_rad");
    ctx.belts.push_back({m.value("belt"), m.join("belt"), body, shape_index});
  }
  return shape;
}

// One `visual:` item: a model file (or a node of it) placed in the body's reference frame.
VisualDef readVisual(Context& ctx, const YAML::Node& node, const std::string& path) {
  MapReader m(ctx, node, path, {"file", "node", "scale", "up", "position", "orientation", "rpy"});
  VisualDef visual;
  const MeshImportOptions options = readModelOptions(ctx, m);
  visual.model = importModel(ctx, m, options);
  visual.file = visual.model->path;
  visual.node = options.node;
  visual.scale = options.scale;
  visual.up = options.up;
  visual.pose.position = m.vec3("position", Vec3::Zero());
  visual.pose.rotation = readOrientation(ctx, m);
  return visual;
}

// Mass properties of the body's shapes at uniform density (overlaps count twice), about the
// computed centre of mass, in the reference frame; empty when no shape has a volume.
std::optional<dynamics::MassProperties> shapesMass(const std::vector<dynamics::ShapeDef>& shapes,
                                                   double density) {
  std::vector<dynamics::MassProperties> parts;
  for (const dynamics::ShapeDef& shape : shapes) {
    if (auto part = dynamics::computeMassProperties(shape, density)) parts.push_back(*part);
  }
  if (parts.empty()) return {};
  return dynamics::combineMassProperties(parts);
}

void readBody(Context& ctx, const YAML::Node& node, const std::string& path, Scene& scene,
              const Placement& place, LoadState& state, std::vector<PendingPose>& poses) {
  MapReader m(ctx, node, path,
              {"name", "mass", "density", "inertia", "center_of_mass", "box", "position",
               "orientation", "rpy", "frame", "static", "linear_velocity", "angular_velocity",
               "shapes", "collide", "visual", "color"});
  dynamics::BodyDef body;
  body.name = m.string("name");
  claimName(ctx, state, m, "body", body.name);
  body.is_static = m.boolean("static", false);

  // Geometry: an optional box, used for the inertia when none is given and for drawing.
  std::optional<Vec3> box;
  if (m.has("box")) box = readBoxSize(ctx, m, "box");

  // Collision: the listed shapes, or with `collide: true` one box shape of the `box` size. A
  // `box` alone only gives inertia and looks (a body without shapes never touches anything).
  // Shapes are placed in the reference frame; they move with it to the centre of mass below.
  const std::size_t body_index = scene.model.bodies.size();
  BodyLook look;
  for (const auto& [shape_node, shape_path] : listItems(ctx, m, "shapes", /*named=*/false)) {
    body.shapes.push_back(readShape(ctx, shape_node, shape_path, scene, body_index,
                                    body.shapes.size(), body.is_static, state));
    look.shape_colors_rgba.push_back(std::nullopt);
    if (shape_node["color"])
      look.shape_colors_rgba.back() = readColor(ctx, shape_node["color"], shape_path + ".color");
  }
  if (m.has("color")) look.color_rgba = readColor(ctx, m.value("color"), m.join("color"));
  if (m.boolean("collide", false)) {
    if (m.has("shapes")) {
      ctx.failAt(m.keyLine("collide"), m.join("collide"),
                 "give either shapes or collide: true, not both");
    }
    if (!box) ctx.failAt(m.keyLine("collide"), m.join("collide"), "collide: true needs a box");
    dynamics::ShapeDef shape;
    shape.type = dynamics::ShapeType::Box;
    shape.half_extents_m = 0.5 * *box;
    body.shapes.push_back(shape);
  }

  // Mass, centre of mass (in the reference frame) and inertia (about it, body axes): given
  // (mass with inertia or box, optional center_of_mass), or computed from the shapes' volumes
  // (density; or mass alone, spread uniformly over the shapes).
  Vec3 center = Vec3::Zero();
  const bool given_inertia = m.has("inertia") || box.has_value();
  if (m.has("density")) {
    for (const char* key : {"mass", "inertia", "center_of_mass", "box"}) {
      m.forbid(key, "give either density (mass, centre and inertia from the shapes) or " +
                        std::string(key));
    }
    const double density = ctx.positive(m.value("density"), m.join("density"));
    const auto props = shapesMass(body.shapes, density);
    if (!props) {
      ctx.failAt(m.keyLine("density"), m.join("density"),
                 "needs shapes with a volume (sphere, box, capsule, cylinder or hull)");
    }
    body.mass_kg = props->mass_kg;
    body.inertia_kgm2 = props->inertia_kgm2;
    center = props->center_m;
    ctx.lines[m.join("mass")] = ctx.lines[m.join("inertia")] = m.keyLine("density");
  } else {
    body.mass_kg = body.is_static ? m.number("mass", 1.0) : m.number("mass");
    if (m.has("inertia")) {
      const YAML::Node in = m.value("inertia");
      const std::string key = m.join("inertia");
      if (in.IsSequence() && in.size() == 3 && in[0].IsSequence()) {
        for (std::size_t r = 0; r < 3; ++r) {
          auto row = ctx.numbers(in[r], fmt::format("{}[{}]", key, r), 3, "a row of 3 numbers");
          for (std::size_t c = 0; c < 3; ++c) {
            body.inertia_kgm2(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) = row[c];
          }
        }
      } else {
        auto d = ctx.numbers(in, key, 3, "[Ixx, Iyy, Izz] or a 3x3 matrix");
        body.inertia_kgm2 = Vec3(d[0], d[1], d[2]).asDiagonal();
      }
    } else if (box) {
      body.inertia_kgm2 = boxInertia(body.mass_kg, *box);
      state.derived_inertia.insert(path);
    }
    if (given_inertia) {
      center = m.vec3("center_of_mass", Vec3::Zero());
    } else if (!body.is_static) {
      m.forbid("center_of_mass",
               "center_of_mass needs inertia or box (without them both come from the shapes)");
      const auto unit = shapesMass(body.shapes, 1.0);
      if (!unit) {
        ctx.fail(node, m.join("inertia"),
                 "missing (required: inertia, box, density, or shapes with a volume to compute "
                 "it from)");
      }
      // Uniform density that gives the stated mass (checked positive by validate()).
      body.inertia_kgm2 = unit->inertia_kgm2 * (body.mass_kg / unit->mass_kg);
      state.derived_inertia.insert(path);
      center = unit->center_m;
      ctx.lines[m.join("inertia")] = m.keyLine("mass");
    }
  }

  // Pose of the reference frame: position, and orientation as a quaternion [w, x, y, z] or
  // roll-pitch-yaw (rad), in `frame` (the file's coordinates, placed by an include, or another
  // body's reference frame): placed by placeBodies() once the file's bodies are all read.
  // Velocities are in the file's coordinates whatever the frame.
  PendingPose pose;
  pose.body = body_index;
  pose.path = path;
  pose.frame = m.has("frame") ? m.string("frame") : "world";
  pose.frame_line = m.has("frame") ? m.keyLine("frame") : m.line();
  pose.position = m.vec3("position", Vec3::Zero());
  pose.position_text = m.has("position") ? readDecimalVec3(m.value("position")) : DecimalVec3{};
  pose.orientation = readOrientation(ctx, m);
  pose.center = center;
  poses.push_back(std::move(pose));
  body.linear_velocity_mps = place.rotation * m.vec3("linear_velocity", Vec3::Zero());
  body.angular_velocity_radps = place.rotation * m.vec3("angular_velocity", Vec3::Zero());
  for (dynamics::ShapeDef& shape : body.shapes) shape.pose.position -= center;

  look.reference.position = -center;
  if (box) {
    look.box_size_m = {box->x(), box->y(), box->z()};
  } else if (body.mass_kg > 0.0 && !body.is_static) {
    look.box_size_m = equivalentBox(body.mass_kg, body.inertia_kgm2);
  }
  if (m.has("visual")) {
    const YAML::Node visuals = m.value("visual");
    if (visuals.IsSequence()) {
      look.hidden = visuals.size() == 0;
      for (std::size_t i = 0; i < visuals.size(); ++i) {
        look.visuals.push_back(
            readVisual(ctx, visuals[i], fmt::format("{}[{}]", m.join("visual"), i)));
      }
    } else {
      look.visuals.push_back(readVisual(ctx, visuals, m.join("visual")));
    }
    for (VisualDef& visual : look.visuals) visual.pose.position -= center;
  }
  scene.model.bodies.push_back(std::move(body));
  scene.looks.push_back(std::move(look));
}

// The body each `frame: parent` names: the parent of the joint (in this file) whose child it is.
std::map<std::string, std::vector<std::pair<std::string, std::string>>> jointParents(
    const MapReader& top) {
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> parents;
  if (!top.has("joints") || !top.value("joints").IsSequence()) return parents;
  for (const YAML::Node& joint : top.value("joints")) {
    if (!joint.IsMap()) continue;
    // Looked up by walking the map: a missing key must not throw here (the joint's own reader
    // names it later, at its line).
    const auto scalar = [&joint](const char* key) -> std::optional<std::string> {
      for (const auto& kv : joint)
        if (kv.first.IsScalar() && kv.first.Scalar() == key && kv.second.IsScalar())
          return kv.second.Scalar();
      return std::nullopt;
    };
    const auto name = scalar("name"), parent = scalar("parent"), child = scalar("child");
    if (name && parent && child) parents[*child].emplace_back(*name, *parent);
  }
  return parents;
}

// Places the file's bodies: each reference frame composed from the frame it is given in (docs/
// scenes.md "Frames"), frames before the bodies given in them, whatever their order in the file.
void placeBodies(Context& ctx, const MapReader& top, Scene& scene, const Placement& place,
                 LoadState& state, const std::vector<PendingPose>& poses) {
  const auto parents = jointParents(top);
  std::map<std::string, std::size_t> pending;
  for (std::size_t i = 0; i < poses.size(); ++i)
    pending[scene.model.bodies[poses[i].body].name] = i;
  std::vector<int> progress(poses.size(), 0);  // 0 to do, 1 being placed, 2 placed
  std::vector<std::string> chain;
  std::function<void(std::size_t)> place_pose = [&](std::size_t i) {
    const PendingPose& pose = poses[i];
    dynamics::BodyDef& body = scene.model.bodies[pose.body];
    const std::string key = pose.path + ".frame";
    std::string on = pose.frame;
    if (on == "parent") {
      const auto it = parents.find(body.name);
      if (it == parents.end()) {
        ctx.failAt(pose.frame_line, key,
                   fmt::format("frame: parent needs a joint with child: {} in this file's joints "
                               "(none found); or name the body to place it on",
                               body.name));
      }
      if (it->second.size() > 1) {
        ctx.failAt(
            pose.frame_line, key,
            fmt::format("{} is the child of joints {} and {}: name the body to place it on "
                        "(frame: {})",
                        body.name, it->second[0].first, it->second[1].first, it->second[0].second));
      }
      on = it->second.front().second;
    }
    PoseFrame frame = fileFrame(place);
    if (on != "world") {
      if (on == body.name) ctx.failAt(pose.frame_line, key, "a body cannot be placed on itself");
      if (auto it = pending.find(on); it != pending.end()) {
        chain.push_back(body.name);
        if (progress[it->second] == 1) {
          std::string cycle;
          for (auto c = std::find(chain.begin(), chain.end(), on); c != chain.end(); ++c)
            cycle += *c + " -> ";
          ctx.failAt(pose.frame_line, key, "frame cycle: " + cycle + on);
        }
        if (progress[it->second] == 0) {
          progress[it->second] = 1;
          place_pose(it->second);
        }
        chain.pop_back();
        frame = state.body_frames.at(static_cast<int>(poses[it->second].body));
      } else if (const int other = scene.model.findBody(on); other >= 0) {
        frame = bodyFrame(scene, state, other);
      } else {
        ctx.failAt(pose.frame_line, key,
                   fmt::format("no body named \"{}\" to place {} on (expected world, parent or a "
                               "body's name)",
                               on, body.name));
      }
    }
    std::optional<DecimalVec3> exact;
    const Vec3 reference = frame.point(pose.position, pose.position_text, &exact);
    body.orientation = (frame.pose.rotation * pose.orientation).normalized();
    // The body frame of the dynamics is the centre-of-mass frame: same axes, origin moved.
    body.position_m = reference + body.orientation * pose.center;
    state.body_frames[static_cast<int>(pose.body)] = {Placement{body.orientation, reference},
                                                      exact};
    progress[i] = 2;
  };
  for (std::size_t i = 0; i < poses.size(); ++i) {
    if (progress[i] == 0) {
      progress[i] = 1;
      place_pose(i);
    }
  }
}

// A frame at `anchor` (world) whose x-axis is `axis` (world), expressed relative to a body pose
// (or the world when body is null).
dynamics::Frame localFrame(const dynamics::BodyDef* body, const Vec3& anchor, const Quat& axes) {
  dynamics::Frame frame;
  if (body == nullptr) {
    frame.position = anchor;
    frame.rotation = axes;
  } else {
    const Quat inverse = body->orientation.conjugate();
    frame.position = inverse * (anchor - body->position_m);
    frame.rotation = (inverse * axes).normalized();
  }
  return frame;
}

// A joint whose anchor is farther than kAnchorTolerance_m from the geometry of both of its bodies
// is most likely mistyped (a world anchor given relative to a body, or the reverse): a warning
// naming the joint. A joint to the world is never reported (a fixed pivot may be anywhere).
void warnFarAnchor(const Context& ctx, const MapReader& m, Scene& scene,
                   const dynamics::JointDef& joint, const Vec3& anchor) {
  if (joint.body_a == dynamics::kWorld) return;
  std::optional<double> nearest;
  for (const int index : {joint.body_a, joint.body_b}) {
    const auto i = static_cast<std::size_t>(index);
    const dynamics::BodyDef& body = scene.model.bodies[i];
    const Vec3 local = body.orientation.conjugate() * (anchor - body.position_m);
    if (const auto d = distanceToBody(body, scene.looks[i].box_size_m, local))
      nearest = nearest ? std::min(*nearest, *d) : *d;
  }
  if (!nearest || *nearest <= kAnchorTolerance_m) return;
  const std::string key = m.has("anchor") ? m.join("anchor") : m.path();
  scene.warnings.push_back(fmt::format(
      "{}:{}: {}: joint {}: the anchor ({:.6g}, {:.6g}, {:.6g}) is {:.3g} m from {} and {}, more "
      "than {} m from both (in world coordinates at the start; frame: parent gives it relative "
      "to the parent)",
      ctx.file, m.has("anchor") ? m.keyLine("anchor") : m.line(), key, joint.name, anchor.x(),
      anchor.y(), anchor.z(), *nearest,
      scene.model.bodies[static_cast<std::size_t>(joint.body_a)].name,
      scene.model.bodies[static_cast<std::size_t>(joint.body_b)].name, kAnchorTolerance_m));
}

constexpr std::initializer_list<const char*> kFlexureKeys = {
    "model",  "preset", "length", "direction", "a",      "b",
    "lambda", "k_x",    "k_y",    "k_z",       "tables", "damping"};

// Seed 001 Table 1: PRB torsion-spring λ and planar-spring a, b of four PETG hinges.
struct FlexurePreset {
  const char* name;
  double lambda, a, b;
};
constexpr FlexurePreset kFlexurePresets[] = {{"x_hinge", 0.44, 0.44, 0.56},
                                             {"ls", 0.78, 0.64, 0.36},
                                             {"trls2x", 0.77, 0.64, 0.36},
                                             {"tfch", 1.47, 0.82, 0.18}};

struct FlexurePlacement {
  Quat axes;    // x: bending axis, y: along the flexure (world)
  Vec3 centre;  // compliance centre (planar) or PRB pivot (world)
};

// `tables:` file: CSV lines "dof,deformation,load" (dof x, y or z; m or rad; N or N m), '#'
// comments and a header line allowed. Rows of one dof must have increasing deformation.
void readFlexureTables(Context& ctx, const MapReader& m, dynamics::FlexureDef& flex) {
  const std::string path = resolveModelPath(ctx, ctx.string(m.value("tables"), m.join("tables")));
  std::ifstream in(path);
  if (!in) ctx.failAt(m.keyLine("tables"), m.join("tables"), "cannot open " + path);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line[0] == '#' || line.rfind("dof", 0) == 0) continue;
    std::stringstream row(line);
    std::string dof, q, f;
    std::getline(row, dof, ',');
    std::getline(row, q, ',');
    std::getline(row, f, ',');
    const auto qv = parseNumber(q), fv = parseNumber(f);
    dynamics::StiffnessCurve* curve = dof == "x"   ? &flex.k_x
                                      : dof == "y" ? &flex.k_y
                                      : dof == "z" ? &flex.k_z
                                                   : nullptr;
    if (curve == nullptr || !qv || !fv) {
      ctx.failAt(m.keyLine("tables"), m.join("tables"),
                 fmt::format("{}:{}: expected \"x|y|z,deformation,load\", got \"{}\"", path, number,
                             line));
    }
    curve->deformation.push_back(*qv);
    curve->load.push_back(*fv);
  }
}

FlexurePlacement readFlexure(Context& ctx, const MapReader& m, const Placement& place,
                             const Vec3& base, const Vec3& axis, const Vec3& child_reference,
                             dynamics::FlexureDef& flex) {
  const std::string model = m.has("model") ? m.string("model") : "planar";
  if (model == "planar") {
    flex.model = dynamics::FlexureModel::PlanarSpring;
  } else if (model == "prb") {
    flex.model = dynamics::FlexureModel::TorsionSpring;
  } else {
    ctx.fail(m.value("model"), m.join("model"),
             fmt::format("expected planar or prb, got \"{}\"", model));
  }
  const bool planar = flex.model == dynamics::FlexureModel::PlanarSpring;
  double a = 0.0, lambda = 1.0;
  if (m.has("preset")) {
    const std::string name = m.string("preset");
    const FlexurePreset* preset = nullptr;
    for (const FlexurePreset& p : kFlexurePresets) {
      if (name == p.name) preset = &p;
    }
    if (preset == nullptr) {
      ctx.fail(m.value("preset"), m.join("preset"),
               fmt::format("expected x_hinge, ls, trls2x or tfch, got \"{}\"", name));
    }
    a = preset->a;
    lambda = preset->lambda;
  }
  a = m.number("a", a);
  lambda = m.number("lambda", lambda);
  if (m.has("b")) (void)m.number("b");  // documents the output's start; the child body places it
  if (!(a >= 0.0 && a <= 1.0)) ctx.fail(m.value("a"), m.join("a"), "a must be in [0, 1]");
  if (!(lambda > 0.0 && lambda <= 2.0))
    ctx.fail(m.value("lambda"), m.join("lambda"), "lambda must be in (0, 2]");
  if (!planar) m.forbid("a", "the planar spring's compliance centre; a prb flexure uses lambda");
  if (planar) m.forbid("lambda", "the PRB characteristic radius; use model: prb");
  const bool placed = m.has("preset") || m.has("a") || m.has("lambda");
  if (placed && !m.has("length")) {
    ctx.fail(m.value(m.has("preset") ? "preset"
                     : m.has("a")    ? "a"
                                     : "lambda"),
             m.join("length"),
             "the flexure's length L is needed to place its centre (a L or (1 - lambda) L)");
  }
  const double length = m.has("length") ? m.positive("length") : 0.0;

  // Along the flexure: given, or toward the child's reference point; perpendicular to the axis.
  Vec3 along = m.has("direction") ? Vec3(place.rotation * m.vec3("direction", Vec3::UnitY()))
                                  : Vec3(child_reference - base);
  along -= axis * axis.dot(along);
  if (!(along.norm() > 1e-9)) {
    ctx.failAt(m.has("direction") ? m.keyLine("direction") : m.line(), m.join("direction"),
               "needs a direction along the flexure, not parallel to the axis (the child's "
               "reference point lies on the axis)");
  }
  along.normalize();
  Mat3 r;
  r << axis, along, axis.cross(along);
  FlexurePlacement out;
  out.axes = Quat(r).normalized();
  out.centre = base + along * (planar ? a * length : (1.0 - lambda) * length);

  if (m.has("tables")) readFlexureTables(ctx, m, flex);
  auto stiffness = [&](const char* key, dynamics::StiffnessCurve& c, bool needed) {
    if (m.has(key)) {
      if (c.isTable()) m.forbid(key, "given both as a number and in tables");
      c.stiffness = m.positive(key);
    } else if (needed && !c.isTable()) {
      ctx.failAt(m.has("tables") ? m.keyLine("tables") : m.line(), m.join(key),
                 "missing (a stiffness, or its rows in tables)");
    }
  };
  stiffness("k_x", flex.k_x, planar);
  stiffness("k_y", flex.k_y, planar);
  stiffness("k_z", flex.k_z, true);
  if (!planar) {
    m.forbid("k_x", "a prb flexure has only k_z");
    m.forbid("k_y", "a prb flexure has only k_z");
  }
  if (m.has("damping")) {
    const auto c =
        ctx.numbers(m.value("damping"), m.join("damping"), 2, "[linear N s/m, angular N m s/rad]");
    flex.damping_linear = c[0];
    flex.damping_angular = c[1];
  }
  return out;
}

void readJoint(Context& ctx, const YAML::Node& node, const std::string& path, Scene& scene,
               const Placement& place, LoadState& state) {
  MapReader m(ctx, node, path,
              {"name", "type", "parent", "child", "frame", "anchor", "axis", "limits", "friction",
               "collide_connected", "flexure"});
  dynamics::JointDef joint;
  joint.name = m.string("name");
  claimName(ctx, state, m, "joint", joint.name);
  const std::string type = m.string("type");
  if (type == "fixed") {
    joint.type = dynamics::JointType::Fixed;
  } else if (type == "ball") {
    joint.type = dynamics::JointType::Ball;
  } else if (type == "hinge") {
    joint.type = dynamics::JointType::Hinge;
  } else if (type == "prismatic") {
    joint.type = dynamics::JointType::Prismatic;
  } else if (type == "flexure") {
    joint.type = dynamics::JointType::Flexure;
  } else {
    ctx.fail(m.value("type"), m.join("type"),
             fmt::format("expected fixed, ball, hinge, prismatic or flexure, got \"{}\"", type));
  }
  if (joint.type == dynamics::JointType::Flexure && !m.has("flexure")) {
    ctx.fail(node, m.join("flexure"), "a flexure joint needs a flexure: block (stiffnesses)");
  }
  if (joint.type != dynamics::JointType::Flexure) {
    m.forbid("flexure", "only for type: flexure");
  }
  const auto& bodies = scene.model.bodies;
  joint.body_a = findByName(ctx, m, "parent", bodies, "body", /*allow_world=*/true);
  joint.body_b = findByName(ctx, m, "child", bodies, "body");
  if (joint.body_a == joint.body_b) {
    ctx.fail(m.value("child"), m.join("child"), "a joint needs two different bodies");
  }
  const dynamics::BodyDef& child = bodies[static_cast<std::size_t>(joint.body_b)];
  const dynamics::BodyDef* parent =
      joint.body_a == dynamics::kWorld ? nullptr : &bodies[static_cast<std::size_t>(joint.body_a)];

  // Anchor and axis are given at the start pose in `frame`: the world (the file's coordinates,
  // the default), or the reference frame of the joint's parent or child body. Both local frames
  // coincide there. The default anchor is the child's reference point (its `position`).
  const std::string frame_name = m.has("frame") ? m.string("frame") : "world";
  PoseFrame frame = fileFrame(place);
  if (frame_name == "parent") {
    if (parent != nullptr) frame = bodyFrame(scene, state, joint.body_a);
  } else if (frame_name == "child") {
    frame = bodyFrame(scene, state, joint.body_b);
  } else if (frame_name != "world") {
    ctx.fail(m.value("frame"), m.join("frame"),
             fmt::format("expected world, parent or child, got \"{}\"", frame_name));
  }
  const Vec3 child_reference =
      child.position_m +
      child.orientation * scene.looks[static_cast<std::size_t>(joint.body_b)].reference.position;
  const Vec3 anchor = m.has("anchor") ? frame.point(m.vec3("anchor", Vec3::Zero()),
                                                    readDecimalVec3(m.value("anchor")))
                                      : child_reference;
  const Vec3 axis = m.vec3("axis", Vec3::UnitX());
  if (!(axis.norm() > 1e-9)) ctx.fail(m.value("axis"), m.join("axis"), "axis has zero length");
  const Vec3 world_axis = frame.pose.rotation * axis.normalized();
  Quat axes = Quat::FromTwoVectors(Vec3::UnitX(), world_axis);
  Vec3 frame_origin = anchor;
  if (joint.type == dynamics::JointType::Flexure) {
    const FlexurePlacement fp =
        readFlexure(ctx, MapReader(ctx, m.value("flexure"), m.join("flexure"), kFlexureKeys),
                    frame.pose, anchor, world_axis, child_reference, joint.flexure);
    axes = fp.axes;
    frame_origin = fp.centre;
  }
  warnFarAnchor(ctx, m, scene, joint, anchor);
  joint.frame_a = localFrame(parent, frame_origin, axes);
  joint.frame_b = localFrame(&child, frame_origin, axes);

  if (m.has("limits")) {
    auto limits = ctx.numbers(m.value("limits"), m.join("limits"), 2, "[lower, upper]");
    joint.limit_enabled = true;
    joint.lower_limit = limits[0];
    joint.upper_limit = limits[1];
  }
  if (m.has("friction")) {
    MapReader f(ctx, m.value("friction"), m.join("friction"),
                {"coefficient", "breakaway", "viscous", "curve", "coulomb", "stribeck_speed",
                 "exponent", "model", "sigma0", "sigma1", "zero_speed"});
    joint.friction.coefficient = f.number("coefficient", 0.0);
    joint.friction.breakaway = f.number("breakaway", 0.0);
    joint.friction.viscous = f.number("viscous", 0.0);
    if (f.has("curve")) {
      using C = dynamics::JointFrictionCurve;
      const std::string curve = f.string("curve");
      if (curve == "constant") {
        joint.friction.curve = C::Constant;
      } else if (curve == "lorentz") {
        joint.friction.curve = C::Lorentz;
      } else if (curve == "tustin") {
        joint.friction.curve = C::Tustin;
      } else if (curve == "gaussian") {
        joint.friction.curve = C::Gaussian;
      } else if (curve == "generalised") {
        joint.friction.curve = C::Generalised;
      } else {
        ctx.fail(f.value("curve"), f.join("curve"),
                 fmt::format("expected constant, lorentz, tustin, gaussian or generalised, got "
                             "\"{}\"",
                             curve));
      }
    }
    joint.friction.coulomb = f.number("coulomb", 0.0);
    joint.friction.stribeck_speed = f.number("stribeck_speed", 0.0);
    joint.friction.exponent = f.number("exponent", 2.0);
    if (f.has("model")) {
      const std::string model = f.string("model");
      if (model == "coulomb") {
        joint.friction.model = dynamics::JointFrictionModel::Coulomb;
      } else if (model == "lugre") {
        joint.friction.model = dynamics::JointFrictionModel::LuGre;
      } else {
        ctx.fail(f.value("model"), f.join("model"),
                 fmt::format("expected coulomb or lugre, got \"{}\"", model));
      }
    }
    joint.friction.sigma0 = f.number("sigma0", joint.friction.sigma0);
    joint.friction.sigma1 = f.number("sigma1", joint.friction.sigma1);
    joint.friction.zero_speed = f.number("zero_speed", joint.friction.zero_speed);
  }
  joint.collide_connected = m.boolean("collide_connected", false);
  scene.model.joints.push_back(std::move(joint));
}

void readMotor(Context& ctx, const YAML::Node& node, const std::string& path, Scene& scene,
               LoadState& state) {
  MapReader m(ctx, node, path,
              {"name", "joint", "Mp", "w_xx", "w_xx_rpm", "t_m", "I_m", "r", "b", "u", "drive",
               "brake", "catalogue", "max_torque", "max_speed"});
  dynamics::MotorDef motor;
  motor.name = m.string("name");
  claimName(ctx, state, m, "motor", motor.name);
  motor.joint = findByName(ctx, m, "joint", scene.model.joints, "joint");
  // Passport data not given come from a catalogue motor, else from the URDF joint's <limit>:
  // stall torque effort / r and no-load speed velocity * r at the motor.
  const detail::CatalogueMotor* catalogue = nullptr;
  if (m.has("catalogue")) {
    const std::string name = m.string("catalogue");
    catalogue = detail::findCatalogueMotor(name);
    if (catalogue == nullptr) {
      std::string known;
      for (const auto& c : detail::catalogueMotors())
        known += (known.empty() ? "" : ", ") + std::string(c.name);
      ctx.fail(m.value("catalogue"), m.join("catalogue"),
               fmt::format("no catalogue motor \"{}\" (known: {})", name, known));
    }
    if (m.has("drive")) m.forbid("catalogue", "a drive unit has its own passport data");
  }
  const std::string& joint_name = scene.model.joints[static_cast<std::size_t>(motor.joint)].name;
  const auto urdf = state.urdf_limits.find(joint_name);
  const double effort = urdf != state.urdf_limits.end() ? urdf->second.first : 0.0;
  const double velocity = urdf != state.urdf_limits.end() ? urdf->second.second : 0.0;
  motor.gear_ratio = m.number(
      "r", catalogue != nullptr && catalogue->gear_ratio > 0.0 ? catalogue->gear_ratio : 1.0);
  if (m.has("drive")) {
    // Seed 000 drive unit (SPEC §3): every key has the identified gripper drive's value as its
    // default. The circuit replaces the passport characteristic; Mp and w_xx default to the
    // circuit's k_M U / R and U / k_E (shown in the HUD and summaries).
    MapReader d(ctx, m.value("drive"), m.join("drive"),
                {"L", "R", "k_E", "k_M", "U", "c", "K_V1", "backlash", "K_ML", "M_C", "M_S",
                 "stribeck_speed", "exponent", "K_V2", "friction", "sigma0", "sigma1", "T_min"});
    dynamics::DriveDef drive;
    drive.inductance_H = d.number("L", drive.inductance_H);
    drive.resistance_ohm = d.number("R", drive.resistance_ohm);
    drive.k_E = d.number("k_E", drive.k_E);
    drive.k_M = d.number("k_M", drive.k_M);
    drive.supply_V = d.number("U", drive.supply_V);
    drive.stiffness = d.number("c", drive.stiffness);
    drive.damping = d.number("K_V1", drive.damping);
    drive.backlash = d.number("backlash", drive.backlash);
    drive.K_ML = d.number("K_ML", drive.K_ML);
    drive.coulomb = d.number("M_C", drive.coulomb);
    drive.breakaway = d.number("M_S", drive.breakaway);
    drive.stribeck_speed = d.number("stribeck_speed", drive.stribeck_speed);
    drive.exponent = d.number("exponent", drive.exponent);
    drive.viscous = d.number("K_V2", drive.viscous);
    if (d.has("friction")) {
      const std::string model = d.string("friction");
      if (model == "static") {
        drive.friction = dynamics::DriveFriction::Static;
      } else if (model == "lugre") {
        drive.friction = dynamics::DriveFriction::LuGre;
      } else {
        ctx.fail(d.value("friction"), d.join("friction"),
                 fmt::format("unknown output friction \"{}\": expected static or lugre", model));
      }
    }
    drive.sigma0 = d.number("sigma0", drive.sigma0);
    drive.sigma1 = d.number("sigma1", drive.sigma1);
    drive.t_min_s = d.number("T_min", drive.t_min_s);
    motor.drive = drive;
    motor.stall_torque_Nm = m.number("Mp", drive.k_M * drive.supply_V / drive.resistance_ohm);
    motor.no_load_speed_radps = drive.k_E > 0.0 ? drive.supply_V / drive.k_E : 0.0;
    if (m.has("w_xx") || m.has("w_xx_rpm")) {
      m.exactlyOne("w_xx", "w_xx_rpm");
      motor.no_load_speed_radps =
          m.has("w_xx") ? m.number("w_xx") : m.number("w_xx_rpm") * kRpmToRadps;
    }
  } else {
    if (m.has("Mp") || (catalogue == nullptr && !(effort > 0.0))) {
      if (!m.has("Mp")) {
        ctx.fail(node, m.join("Mp"),
                 "missing (required: Mp, a catalogue motor, or the effort limit of a URDF joint)");
      }
      motor.stall_torque_Nm = m.number("Mp");
    } else {
      motor.stall_torque_Nm =
          catalogue != nullptr ? catalogue->stall_torque_Nm : effort / motor.gear_ratio;
      ctx.lines[m.join("Mp")] = m.line();
    }
    if (m.has("w_xx") || m.has("w_xx_rpm") || (catalogue == nullptr && !(velocity > 0.0))) {
      m.exactlyOne("w_xx", "w_xx_rpm");
      if (m.has("w_xx")) {
        motor.no_load_speed_radps = m.number("w_xx");
      } else {
        motor.no_load_speed_radps = m.number("w_xx_rpm") * kRpmToRadps;
        ctx.lines[m.join("w_xx")] = m.keyLine("w_xx_rpm");  // validate() says "w_xx"
      }
    } else {
      motor.no_load_speed_radps =
          catalogue != nullptr ? catalogue->no_load_speed_radps : velocity * motor.gear_ratio;
      ctx.lines[m.join("w_xx")] = m.line();
    }
  }
  if (m.has("t_m") || m.has("I_m") || catalogue == nullptr) {
    m.exactlyOne("t_m", "I_m");
    if (m.has("t_m")) {
      motor.time_constant_s = m.number("t_m");
    } else {
      motor.rotor_inertia_kgm2 = m.number("I_m");
    }
  } else if (catalogue->rotor_inertia_kgm2 > 0.0) {
    motor.rotor_inertia_kgm2 = catalogue->rotor_inertia_kgm2;
  } else {
    motor.time_constant_s = catalogue->time_constant_s;
  }
  // The drive's limits at the joint: given, or the URDF joint's effort and velocity (0 there
  // means none). A drive unit's current comes from its circuit: the URDF's limits do not apply.
  const bool urdf_limits = !m.has("drive");
  motor.max_torque = m.number("max_torque", urdf_limits && effort > 0.0 ? effort : kNoLimit);
  motor.max_speed = m.number("max_speed", urdf_limits && velocity > 0.0 ? velocity : kNoLimit);
  // A motor stronger or faster than its URDF joint's limits is held to them: worth saying.
  const double joint_torque = motor.gear_ratio * motor.stall_torque_Nm;
  const double joint_speed = motor.no_load_speed_radps / motor.gear_ratio;
  if (joint_torque > motor.max_torque * (1.0 + 1e-9) && motor.max_torque == effort) {
    scene.warnings.push_back(
        fmt::format("{}:{}: {}: stall torque at the joint r Mp = {:.4g} exceeds the effort limit "
                    "{:.4g} of URDF joint {}: the drive holds its torque to the limit",
                    ctx.file, m.line(), m.path(), joint_torque, effort, joint_name));
  }
  if (joint_speed > motor.max_speed * (1.0 + 1e-9) && motor.max_speed == velocity) {
    scene.warnings.push_back(fmt::format(
        "{}:{}: {}: no-load speed at the joint w_xx / r = {:.4g} exceeds the velocity limit {:.4g} "
        "of URDF joint {}: the drive holds its speed to the limit",
        ctx.file, m.line(), m.path(), joint_speed, velocity, joint_name));
  }
  motor.bearing_friction = m.number("b", 0.0);
  motor.initial_voltage = m.number("u", 0.0);
  if (m.has("brake")) {
    // Power-off holding brake (docs/scenes.md): the torque is required, the release level not.
    MapReader b(ctx, m.value("brake"), m.join("brake"), {"torque", "release_u"});
    motor.brake_torque = b.number("torque");
    motor.brake_release_u = b.number("release_u", motor.brake_release_u);
  }
  scene.model.motors.push_back(std::move(motor));
}

void readRepeater(Context& ctx, const YAML::Node& node, const std::string& path, Scene& scene,
                  LoadState& state) {
  MapReader m(ctx, node, path, {"name", "motor", "joint", "k"});
  dynamics::RepeaterDef repeater;
  repeater.name = m.string("name");
  claimName(ctx, state, m, "repeater", repeater.name);
  repeater.motor = findByName(ctx, m, "motor", scene.model.motors, "motor");
  repeater.joint = findByName(ctx, m, "joint", scene.model.joints, "joint");
  repeater.ratio = m.number("k");
  scene.model.repeaters.push_back(std::move(repeater));
}

void readInput(Context& ctx, const YAML::Node& node, const std::string& path, Scene& scene) {
  MapReader m(ctx, node, path, {"name", "motor", "voltage"});
  ConstantInput input;
  input.name = m.string("name");
  input.motor = findByName(ctx, m, "motor", scene.model.motors, "motor");
  input.voltage = m.number("voltage");
  if (input.voltage < -1.0 || input.voltage > 1.0) {
    ctx.fail(m.value("voltage"), m.join("voltage"),
             fmt::format("expected a voltage in [-1, 1], got {}", input.voltage));
  }
  scene.inputs.push_back(std::move(input));
}

// Applies one --set to the YAML tree: walks maps by key and lists by item name (or index), then
// replaces the scalar at the end. A missing last key of a map is added (and then checked like any
// other key); any other missing step is an error naming the path.
// A --set value for a switch (a YAML boolean) rather than a number.
bool isSwitchValue(const std::string& value) {
  return value == "true" || value == "false";
}

// `depth` receives how many steps of the path exist in this file.
void applyOverride(Context& ctx, YAML::Node root, const Override& override, std::size_t* depth) {
  const std::string key = "--set " + override.path;
  std::vector<std::string> segments;
  std::stringstream stream(override.path);
  for (std::string segment; std::getline(stream, segment, '.');) segments.push_back(segment);

  YAML::Node current;
  current.reset(root);
  std::string walked;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    *depth = i;
    const std::string& segment = segments[i];
    const bool last = i + 1 == segments.size();
    const std::string where = walked.empty() ? "the scene" : "\"" + walked + "\"";
    YAML::Node next;
    bool found = false;
    if (current.IsMap()) {
      const YAML::Node& view = current;
      const YAML::Node child = view[segment];
      if (!child.IsDefined()) {
        if (!last) {
          ctx.failAt(0, key, fmt::format("no key \"{}\" in {}", segment, where));
        }
        current[segment] = override.value;
        return;
      }
      next.reset(child);
      found = true;
    } else if (current.IsSequence()) {
      for (std::size_t j = 0; j < current.size() && !found; ++j) {
        const YAML::Node item = current[j];
        if (item.IsMap() && item["name"] && item["name"].IsScalar() &&
            item["name"].Scalar() == segment) {
          next.reset(item);
          found = true;
        }
      }
      if (!found) {
        std::size_t index = 0;
        auto [ptr, ec] = std::from_chars(segment.data(), segment.data() + segment.size(), index);
        if (ec == std::errc() && ptr == segment.data() + segment.size() && index < current.size()) {
          next.reset(current[index]);
          found = true;
        } else {
          ctx.failAt(0, key, fmt::format("no item named \"{}\" in {}", segment, where));
        }
      }
    } else {
      ctx.failAt(0, key, fmt::format("{} is a value, not a section", where));
    }
    walked += (walked.empty() ? "" : ".") + segment;
    if (last) {
      // The value keeps its kind: a number stays a number, a switch a switch.
      const bool number = next.IsScalar() && parseNumber(next.Scalar()).has_value();
      const bool toggle = next.IsScalar() && isSwitchValue(next.Scalar());
      if (!number && !toggle) {
        ctx.failAt(
            lineOf(next), key,
            fmt::format("\"{}\" is not a number or true/false (it is {})", walked, describe(next)));
      }
      if (toggle != isSwitchValue(override.value)) {
        ctx.failAt(lineOf(next), key,
                   fmt::format("\"{}\" is {}, got \"{}\"", walked,
                               toggle ? "true or false" : "a number", override.value));
      }
      next = override.value;
      return;
    }
    current.reset(next);
  }
}

// One camera; returns its `default` flag.
bool readCamera(Context& ctx, const YAML::Node& node, const std::string& path, Scene& scene,
                const Placement& place, LoadState& state) {
  MapReader m(
      ctx, node, path,
      {"name", "type", "body", "position", "target", "direction", "fov", "default", "inset"});
  CameraDef camera;
  camera.name = m.string("name");
  claimName(ctx, state, m, "camera", camera.name);
  const std::string type = m.string("type");
  using Kind = CameraDef::Kind;
  if (type == "orbit") {
    camera.kind = Kind::Orbit;
  } else if (type == "follow") {
    camera.kind = Kind::Follow;
  } else if (type == "fixed") {
    camera.kind = Kind::Fixed;
  } else if (type == "onboard") {
    camera.kind = Kind::Onboard;
  } else {
    ctx.fail(m.value("type"), m.join("type"),
             fmt::format("expected orbit, follow, fixed or onboard, got \"{}\"", type));
  }
  const bool on_body = camera.kind == Kind::Follow || camera.kind == Kind::Onboard;
  if (on_body && !m.has("body"))
    ctx.fail(node, m.join("body"), "missing (required for a " + type + " camera)");
  if (camera.kind == Kind::Fixed) m.forbid("body", "a fixed camera is not on a body");
  if (m.has("body")) camera.body = findByName(ctx, m, "body", scene.model.bodies, "body");
  if (camera.kind != Kind::Onboard) m.forbid("direction", "used only by an onboard camera");
  if (on_body) m.forbid("target", "a " + type + " camera looks at or from its body");
  if (camera.kind == Kind::Follow) camera.position_m = Vec3(-3.0, 0.0, 1.5);
  if (camera.kind == Kind::Onboard) camera.position_m = Vec3::Zero();
  camera.position_m = m.vec3("position", camera.position_m);
  camera.target_m = m.vec3("target", camera.target_m);
  if (camera.kind == Kind::Fixed || camera.kind == Kind::Orbit) {
    camera.position_m = place.point(camera.position_m);  // world points, placed by an include
    camera.target_m = place.point(camera.target_m);
  }
  if (camera.kind == Kind::Onboard) {
    const Vec3 direction = m.vec3("direction", Vec3::UnitX());
    if (!(direction.norm() > 1e-9)) {
      ctx.fail(m.value("direction"), m.join("direction"), "direction has zero length");
    }
    camera.direction = direction.normalized();
  }
  if (camera.kind == Kind::Fixed || camera.kind == Kind::Orbit) {
    if (!((camera.position_m - camera.target_m).norm() > 1e-9)) {
      ctx.fail(node, m.join("target"), "the camera's position and target coincide");
    }
  }
  camera.fov_deg = m.number("fov", camera.fov_deg);
  if (!(camera.fov_deg > 0.0 && camera.fov_deg < 180.0)) {
    ctx.fail(m.value("fov"), m.join("fov"),
             fmt::format("expected a field of view in (0, 180) degrees, got {}", camera.fov_deg));
  }
  if (m.has("inset")) {
    const std::string key = m.join("inset");
    const auto v =
        ctx.numbers(m.value("inset"), key, 4,
                    "a list of 4 numbers [x, y, width, height] (fractions of the window)");
    const bool inside = v[0] >= 0.0 && v[1] >= 0.0 && v[2] > 0.0 && v[3] > 0.0 &&
                        v[0] + v[2] <= 1.0 && v[1] + v[3] <= 1.0;
    if (!inside) {
      ctx.fail(m.value("inset"), key,
               fmt::format("expected a place inside the window: x, y >= 0, width, height > 0, "
                           "x + width <= 1 and y + height <= 1, got [{}, {}, {}, {}]",
                           v[0], v[1], v[2], v[3]));
    }
    camera.inset = std::array<double, 4>{v[0], v[1], v[2], v[3]};
  }
  const bool is_default = m.boolean("default", false);
  scene.cameras.push_back(std::move(camera));
  return is_default;
}

// One file of the scene: the scene itself or an include, with its own parsed tree and context.
struct SceneFile {
  Context ctx;
  YAML::Node root;
  Placement placement;  // where its coordinates sit in the scene
  std::string text;     // its bytes (hashed)
  bool top = false;
  // A URDF file: how it is included (its pose relative to `attach` when that is set).
  std::optional<UrdfInclude> urdf;
  Placement urdf_pose;
  std::string attach;  // `parent:` of the include item: a body or URDF link, or empty
  int attach_line = 0;
  bool self_collide = false;
};

bool isUrdfFile(const std::string& file) {
  std::string ext = std::filesystem::path(file).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".urdf";
}

// Sections an included file may hold: the mechanism and its cameras. Solver, contact, gravity,
// frame rate, pult, scheme and inputs belong to the scene that includes it.
constexpr std::initializer_list<const char*> kIncludeKeys = {"name",      "description", "include",
                                                             "materials", "bodies",      "joints",
                                                             "motors",    "repeaters",   "cameras"};
constexpr std::initializer_list<const char*> kSceneKeys = {
    "name",      "description", "include",    "solver",  "gravity",   "contact",
    "materials", "bodies",      "joints",     "motors",  "repeaters", "inputs",
    "pult",      "scheme",      "frame_rate", "cameras", "trace"};

// Scene files are text a person writes: anything larger is a mistake (or /dev/zero).
constexpr std::uintmax_t kMaxSceneFileBytes = 16u << 20;

// Reads a scene or included file; returns an empty optional with `why` set when it cannot.
std::optional<std::string> readSceneText(const std::filesystem::path& path, std::string& why) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    why = std::filesystem::exists(path, error) ? "not a regular file" : "no such file";
    return {};
  }
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error || size > kMaxSceneFileBytes) {
    why = fmt::format("file is {} bytes, more than the limit of {}", size, kMaxSceneFileBytes);
    return {};
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in || in.bad()) {
    why = "cannot read it";
    return {};
  }
  return text.str();
}

// A URDF file named by an include item `m`, with the item's URDF keys: `base` (fixed or
// floating), `parent` (a body or URDF link to weld the root to; the pose is then relative to its
// frame), `initial` (joint positions), `self_collide` and `prefix` (put before every name).
SceneFile urdfInclude(const Context& ctx, const MapReader& m, const std::string& file,
                      const std::string& text, const Placement& outer, const Placement& inner) {
  SceneFile f;
  f.ctx.file = file;
  f.text = text;
  f.placement = outer.then(inner);
  f.urdf_pose = inner;
  UrdfInclude include;
  include.file = file;
  include.text = text;
  include.includer = ctx.file;
  if (m.has("base")) {
    const std::string base = m.string("base");
    if (base != "fixed" && base != "floating") {
      ctx.fail(m.value("base"), m.join("base"),
               fmt::format("expected fixed or floating, got \"{}\"", base));
    }
    include.floating_base = base == "floating";
    if (m.has("parent")) m.forbid("base", "give either base or parent, not both");
  }
  if (m.has("parent")) {
    f.attach = m.string("parent");
    f.attach_line = m.keyLine("parent");
  }
  if (m.has("initial")) {
    const YAML::Node map = m.value("initial");
    if (!map.IsMap())
      ctx.fail(map, m.join("initial"), "expected a map of joint: position (rad or m)");
    for (const auto& entry : map) {
      const std::string joint = entry.first.Scalar();
      const std::string key = m.join("initial") + "." + joint;
      include.initial[joint] = {ctx.number(entry.second, key), lineOf(entry.first)};
    }
  }
  f.self_collide = m.boolean("self_collide", false);
  if (m.has("prefix")) include.prefix = m.string("prefix");
  f.urdf = std::move(include);
  return f;
}

// Parses `text` (the file `file`) and, depth first, every file it includes; files are appended
// to `files` in conversion order (includes before the file that includes them). `chain` holds
// the files being included, to name a cycle.
void parseWithIncludes(const std::string& text, const std::string& file, const Placement& place,
                       bool top, std::vector<std::string>& chain, std::deque<SceneFile>& files) {
  SceneFile scene_file;
  scene_file.ctx.file = file;
  scene_file.root = parseYaml(text, file);
  scene_file.placement = place;
  scene_file.text = text;
  scene_file.top = top;
  Context& ctx = scene_file.ctx;
  const YAML::Node& root = scene_file.root;
  if (root.IsMap() && root["include"]) {
    const YAML::Node list = root["include"];
    if (!list.IsSequence()) ctx.fail(list, "include", "expected a list, got " + describe(list));
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string item_path = fmt::format("include[{}]", i);
      const MapReader m(ctx, list[i], item_path,
                        {"file", "position", "orientation", "rpy", "base", "parent", "initial",
                         "self_collide", "prefix"});
      const std::string name = m.string("file");
      if (name.size() > 6 && name.substr(name.size() - 6) == ".xacro") {
        ctx.failAt(m.keyLine("file"), m.join("file"),
                   fmt::format("a xacro file must be expanded first: xacro {} > robot.urdf", name));
      }
      std::filesystem::path path(name);
      if (!path.is_absolute()) path = std::filesystem::path(file).parent_path() / path;
      const std::string resolved = path.lexically_normal().string();
      std::error_code error;
      const std::string identity = std::filesystem::weakly_canonical(path, error).string();
      if (std::find(chain.begin(), chain.end(), identity) != chain.end()) {
        std::string cycle;
        for (auto it = std::find(chain.begin(), chain.end(), identity); it != chain.end(); ++it) {
          cycle += *it + " -> ";
        }
        ctx.failAt(m.keyLine("file"), m.join("file"), "include cycle: " + cycle + identity);
      }
      std::string why;
      const std::optional<std::string> content = readSceneText(path, why);
      if (!content) {
        ctx.failAt(m.keyLine("file"), m.join("file"),
                   fmt::format("cannot open {}: {}", resolved, why));
      }
      Placement inner;
      inner.translation = m.vec3("position", Vec3::Zero());
      inner.rotation = readOrientation(ctx, m);
      if (isUrdfFile(resolved)) {
        files.push_back(urdfInclude(ctx, m, resolved, *content, place, inner));
        continue;
      }
      for (const char* key : {"base", "parent", "initial", "self_collide", "prefix"}) {
        m.forbid(key, "only for a URDF file (.urdf)");
      }
      chain.push_back(identity);
      parseWithIncludes(*content, resolved, place.then(inner), false, chain, files);
      chain.pop_back();
    }
  }
  files.push_back(std::move(scene_file));
}

// Appends an included URDF robot: placed (on its parent's frame when attached), its names
// claimed, its joints' limits and mimics kept for the motors and repeaters read later.
void convertUrdf(SceneFile& file, Scene& scene, LoadState& state) {
  UrdfInclude include = *file.urdf;
  const Context includer{include.includer, {}, false, {}};
  Placement root = file.placement;
  if (!file.attach.empty() && file.attach != "world") {
    UrdfLinkFrame target;
    if (auto link = state.urdf_links.find(file.attach); link != state.urdf_links.end()) {
      target = link->second;
    } else if (const int body = scene.model.findBody(file.attach); body >= 0) {
      target = {body, scene.looks[static_cast<std::size_t>(body)].reference};
    } else {
      includer.failAt(file.attach_line, "include.parent",
                      fmt::format("no body or URDF link named \"{}\"", file.attach));
    }
    Placement frame{target.frame.rotation, target.frame.position};
    if (target.body != dynamics::kWorld) {
      const dynamics::BodyDef& b = scene.model.bodies[static_cast<std::size_t>(target.body)];
      frame = Placement{b.orientation, b.position_m}.then(frame);
      if (auto group = state.body_group.find(target.body); group != state.body_group.end()) {
        include.group = group->second;  // one robot: a gripper on an arm does not touch it
      }
    }
    root = frame.then(file.urdf_pose);
    include.attach = target;
  }
  if (!file.self_collide && include.group == 0) {
    if (state.next_group_bit < 16) {
      includer.failAt(0, "include", "more than 16 URDF robots without self_collide: true");
    }
    include.group = 1u << state.next_group_bit--;
  }
  include.rotation = root.rotation;
  include.translation = root.translation;
  const UrdfRobot robot =
      importUrdf(include, scene, [](const std::string& path, const MeshImportOptions& options) {
        return ModelFiles::shared().get(path, options);
      });

  // Names are unique across the scene: every link (merged ones name frames on bodies) and joint.
  auto claim = [&](const char* kind, const std::string& name, int line) {
    const auto [it, fresh] = state.defined.emplace(std::string(kind) + " " + name,
                                                   fmt::format("{}:{}", file.ctx.file, line));
    if (!fresh) {
      file.ctx.failAt(line,
                      fmt::format("{}[{}]", std::string(kind) == "body" ? "link" : kind, name),
                      fmt::format("duplicate name \"{}\": a {} of that name is defined at {}", name,
                                  kind, it->second));
    }
  };
  for (const auto& [name, frame] : robot.links) {
    if (name == "world") continue;
    const auto line = robot.lines.find(fmt::format("bodies[{}]", name));
    claim("body", name, line != robot.lines.end() ? line->second : 0);
    state.urdf_links[name] = frame;
  }
  for (const UrdfRobot::Joint& joint : robot.joints) {
    claim("joint", joint.def.name, joint.line);
    state.urdf_limits[joint.def.name] = {joint.effort, joint.velocity};
  }
  const int first_joint = static_cast<int>(scene.model.joints.size());
  for (const UrdfRobot::Body& body : robot.bodies) {
    if (include.group != 0)
      state.body_group[static_cast<int>(scene.model.bodies.size())] = include.group;
    scene.model.bodies.push_back(body.def);
    scene.looks.push_back(body.look);
  }
  for (const UrdfRobot::Joint& joint : robot.joints) scene.model.joints.push_back(joint.def);
  for (UrdfMimic mimic : robot.mimics) {
    mimic.joint += first_joint;
    mimic.master += first_joint;
    state.mimics.push_back({mimic, file.ctx.file});
  }
  for (const auto& [path, line] : robot.lines) file.ctx.lines[path] = line;
  state.collision_files.insert(state.collision_files.end(), robot.collision_files.begin(),
                               robot.collision_files.end());
  scene.warnings.insert(scene.warnings.end(), robot.warnings.begin(), robot.warnings.end());
}

// Makes each URDF mimic joint a repeater of its master's motor (SPEC section 2.3): the joint
// follows the motor exactly at position level, with the offset its initial pose gives it. The
// master's limits bound it; its own are dropped (two limit rows on one coupled mechanism fight).
void finishMimics(Scene& scene, LoadState& state) {
  auto& model = scene.model;
  for (const PendingMimic& pending : state.mimics) {
    const UrdfMimic& mimic = pending.mimic;
    dynamics::JointDef& joint = model.joints[static_cast<std::size_t>(mimic.joint)];
    const dynamics::JointDef& master = model.joints[static_cast<std::size_t>(mimic.master)];
    const std::string at = fmt::format("joint[{}].mimic", joint.name);
    int motor = -1;
    for (std::size_t i = 0; i < model.motors.size(); ++i) {
      if (model.motors[i].joint == mimic.joint) {
        throw SceneError(
            pending.file, mimic.line, at,
            fmt::format("joint {} mimics {}, so it cannot have a motor of its own (motor "
                        "{}): give the motor to {}",
                        joint.name, master.name, model.motors[i].name, master.name));
      }
      if (model.motors[i].joint == mimic.master) motor = static_cast<int>(i);
    }
    if (motor < 0) {
      scene.warnings.push_back(
          fmt::format("{}:{}: {}: not enforced: its master joint {} has no motor (give {} a motor "
                      "in the scene's "
                      "motors: and {} follows it as a repeater)",
                      pending.file, mimic.line, at, master.name, master.name, joint.name));
      continue;
    }
    for (const dynamics::RepeaterDef& r : model.repeaters) {
      if (r.joint == mimic.joint) {
        throw SceneError(
            pending.file, mimic.line, at,
            fmt::format("joint {} is already driven by repeater {}", joint.name, r.name));
      }
    }
    if (joint.limit_enabled && master.limit_enabled) {
      // The master's range as the mimic joint sees it.
      const double a = mimic.multiplier * master.lower_limit + mimic.offset;
      const double b = mimic.multiplier * master.upper_limit + mimic.offset;
      const double lo = std::min(a, b), hi = std::max(a, b);
      if (lo < joint.lower_limit - 1e-9 || hi > joint.upper_limit + 1e-9) {
        scene.warnings.push_back(fmt::format(
            "{}:{}: {}: the master's limits give [{:.4g}, {:.4g}] beyond this joint's own [{:.4g}, "
            "{:.4g}]; only the master's are enforced",
            pending.file, mimic.line, at, lo, hi, joint.lower_limit, joint.upper_limit));
      }
    }
    joint.limit_enabled = false;
    dynamics::RepeaterDef repeater;
    repeater.name = joint.name;
    repeater.motor = motor;
    repeater.joint = mimic.joint;
    repeater.ratio = mimic.multiplier;
    const auto [it, fresh] = state.defined.emplace("repeater " + repeater.name,
                                                   fmt::format("{}:{}", pending.file, mimic.line));
    if (!fresh) {
      throw SceneError(pending.file, mimic.line, at,
                       fmt::format("its repeater would be named {}, which is taken at {}",
                                   repeater.name, it->second));
    }
    model.repeaters.push_back(std::move(repeater));
  }
}

// `trace: {scheme: [block, ...]}`: block outputs the trace adds as columns (engine/trace.h).
void readTrace(Context& ctx, const MapReader& top, Scene& scene) {
  const MapReader m(ctx, top.value("trace"), "trace", {"scheme"});
  if (!m.has("scheme")) return;
  const YAML::Node list = m.value("scheme");
  if (!list.IsSequence()) {
    ctx.fail(list, "trace.scheme", "expected a list of scheme block names, got " + describe(list));
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string key = fmt::format("trace.scheme[{}]", i);
    const std::string name = ctx.string(list[i], key);
    const int block = scene.scheme.find(name);
    if (block < 0) {
      std::string known;
      for (const BlockDef& b : scene.scheme.blocks) known += (known.empty() ? "" : ", ") + b.name;
      ctx.fail(list[i], key,
               fmt::format("no scheme block named \"{}\" (known: {})", name,
                           known.empty() ? "none: the scene has no scheme blocks" : known));
    }
    if (std::find(scene.trace_blocks.begin(), scene.trace_blocks.end(), block) !=
        scene.trace_blocks.end()) {
      ctx.fail(list[i], key, fmt::format("block \"{}\" is listed twice", name));
    }
    scene.trace_blocks.push_back(block);
  }
}

// Converts one file's sections into the scene (its includes have been converted already).
void convertFile(SceneFile& file, Scene& scene, LoadState& state) {
  if (file.urdf) {
    convertUrdf(file, scene, state);
    return;
  }
  Context& ctx = file.ctx;
  const YAML::Node& root = file.root;
  if (root.IsNull() || !root.IsDefined()) {
    ctx.failAt(0, "", file.top ? "the scene file is empty" : "the included file is empty");
  }
  MapReader top(ctx, root, "", file.top ? kSceneKeys : kIncludeKeys);
  if (top.has("description") && !top.value("description").IsScalar()) {
    ctx.fail(top.value("description"), "description", "expected text");
  }
  if (file.top) {
    if (top.has("name")) scene.name = top.string("name");
    if (top.has("solver")) readSolver(ctx, top.value("solver"), scene.model.solver);
    scene.model.gravity_mps2 = top.vec3("gravity", scene.model.gravity_mps2);
    if (top.has("contact")) readContact(ctx, top.value("contact"), scene.model.contact);
  }

  // Order matters: shapes name materials, joints name bodies, motors name joints, belts,
  // repeaters and inputs name motors.
  const Placement& place = file.placement;
  for (const auto& [node, path] : listItems(ctx, top, "materials")) {
    readMaterial(ctx, node, path, scene, state);
  }
  std::vector<PendingPose> poses;
  for (const auto& [node, path] : listItems(ctx, top, "bodies")) {
    readBody(ctx, node, path, scene, place, state, poses);
  }
  placeBodies(ctx, top, scene, place, state, poses);
  for (const auto& [node, path] : listItems(ctx, top, "joints")) {
    readJoint(ctx, node, path, scene, place, state);
  }
  for (const auto& [node, path] : listItems(ctx, top, "motors")) {
    readMotor(ctx, node, path, scene, state);
  }
  for (const PendingBelt& pending : ctx.belts) {
    const MapReader belt(ctx, pending.node, pending.path, {"motor", "direction", "m_per_rad"});
    scene.model.bodies[pending.body].shapes[pending.shape].belt_motor =
        findByName(ctx, belt, "motor", scene.model.motors, "motor");
  }
  for (const auto& [node, path] : listItems(ctx, top, "repeaters")) {
    readRepeater(ctx, node, path, scene, state);
  }
  for (const auto& [node, path] : listItems(ctx, top, "cameras")) {
    if (readCamera(ctx, node, path, scene, place, state)) {
      const std::string key = path + ".default";
      const std::string here = fmt::format("{}:{}", ctx.file, ctx.lines[key]);
      auto [first, fresh] = state.defined.emplace("default camera", here);
      if (!fresh) {
        ctx.failAt(
            ctx.lines[key], key,
            fmt::format("only one camera can be the default (another is at {})", first->second));
      }
      scene.default_camera = static_cast<int>(scene.cameras.size()) - 1;
    }
  }
  if (!file.top) return;

  for (const auto& [node, path] : listItems(ctx, top, "inputs")) readInput(ctx, node, path, scene);
  if (top.has("frame_rate")) {
    scene.frame_rate_hz = top.positive("frame_rate");
    if (scene.frame_rate_hz < 1.0 || scene.frame_rate_hz > 1000.0) {
      ctx.fail(top.value("frame_rate"), "frame_rate", "expected frames per second in [1, 1000]");
    }
  }
  // A frame runs a whole number of steps (Scene::stepsPerFrame): a step longer than the frame
  // would advance the world faster than the wall clock, and one so short that a frame needs more
  // than 10,000 steps cannot keep real time on any machine (0 and below: the model's own check).
  const double dt = scene.model.solver.time_step_s;
  const double steps_per_frame = 1.0 / (scene.frame_rate_hz * dt);
  if (dt > 0.0 && !(steps_per_frame > 1.0 - 1e-9 && steps_per_frame <= kMaxStepsPerFrame)) {
    ctx.failAt(ctx.lines["solver.time_step"], "solver.time_step",
               fmt::format("expected a step of at most one frame (1/{} s) and at least 1/{} of "
                           "it, got {} s",
                           scene.frame_rate_hz, kMaxStepsPerFrame, dt));
  }
  readPultAndScheme(ctx, top, scene);
  if (top.has("trace")) readTrace(ctx, top, scene);
  for (const SchemeOutput& out : scene.scheme.outputs) {
    for (const ConstantInput& input : scene.inputs) {
      if (input.motor == out.motor) {
        ctx.failAt(ctx.lines["scheme.outputs"], "scheme.outputs",
                   fmt::format("motor \"{}\" is driven by both inputs[{}] and the scheme",
                               scene.model.motors[out.motor].name, input.name));
      }
    }
  }
  if (scene.default_camera < 0 && !scene.cameras.empty()) scene.default_camera = 0;
}

// The file and line of a validate() field: the longest recorded prefix of the path in any file.
std::pair<std::string, int> locateField(const std::deque<SceneFile>& files, std::string field) {
  while (!field.empty()) {
    for (const SceneFile& file : files) {
      if (auto it = file.ctx.lines.find(field); it != file.ctx.lines.end()) {
        return {file.ctx.file, it->second};
      }
    }
    const auto cut = field.find_last_of(".[");
    if (cut == std::string::npos) break;
    field.resize(cut);
  }
  return {files.back().ctx.file, 0};
}

}  // namespace

int Scene::stepsPerFrame() const {
  const double steps = 1.0 / (frame_rate_hz * model.solver.time_step_s);
  return std::max(1, static_cast<int>(std::lround(steps)));
}

Override parseOverride(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw SceneError("--set", 0, text, "expected KEY=VALUE, e.g. motors.drive.t_m=0.5");
  }
  Override result{text.substr(0, eq), text.substr(eq + 1)};
  if (!parseNumber(result.value) && !isSwitchValue(result.value)) {
    throw SceneError("--set", 0, result.path,
                     fmt::format("expected a number, true or false, got \"{}\"", result.value));
  }
  return result;
}

Scene loadSceneFromString(const std::string& yaml, const std::string& file,
                          const std::vector<Override>& overrides) {
  // Parse the scene and its includes.
  std::deque<SceneFile> files;
  if (isUrdfFile(file)) {
    // A robot on its own, for a quick look: its root fixed at the origin, default settings.
    if (!overrides.empty()) {
      throw SceneError(
          "--set", 0, overrides.front().path,
          "a URDF file has no scene parameters: include it in a scene file to set them");
    }
    SceneFile robot;
    robot.ctx.file = file;
    robot.text = yaml;
    robot.top = true;
    robot.urdf = UrdfInclude{};
    robot.urdf->file = robot.urdf->includer = file;
    robot.urdf->text = yaml;
    files.push_back(std::move(robot));
  } else {
    std::vector<std::string> chain;
    std::error_code ignored;
    chain.push_back(std::filesystem::weakly_canonical(file, ignored).string());
    parseWithIncludes(yaml, file, Placement{}, /*top=*/true, chain, files);
  }
  for (SceneFile& f : files) f.ctx.has_overrides = !overrides.empty();

  // Overrides edit the trees, so they reach every parameter the converter reads. A path goes to
  // the scene file, or else to the first included file where it exists.
  // When it exists nowhere, the error is the one of the file where most of the path exists
  // (the scene file's on a tie): "no item named drvie in motors" of the robot file, not "no key
  // motors in the scene".
  for (const Override& override : overrides) {
    std::size_t depth = 0;
    try {
      applyOverride(files.back().ctx, files.back().root, override, &depth);
    } catch (const SceneError& in_scene) {
      bool applied = false;
      std::optional<SceneError> deepest;
      std::size_t deepest_depth = depth;
      for (std::size_t i = 0; i + 1 < files.size() && !applied; ++i) {
        try {
          applyOverride(files[i].ctx, files[i].root, override, &depth);
          applied = true;
        } catch (const SceneError& in_include) {
          if (depth > deepest_depth) {
            deepest = in_include;
            deepest_depth = depth;
          }
        }
      }
      if (!applied) throw deepest ? *deepest : in_scene;
    }
  }

  // Convert, includes first, then let the dynamics library judge the model as a whole.
  Scene scene;
  scene.file = file;
  scene.name = std::filesystem::path(file).stem().string();
  LoadState state;
  for (SceneFile& f : files) convertFile(f, scene, state);
  finishMimics(scene, state);
  scene.overrides = overrides;
  std::uint64_t h = 14695981039346656037ull;
  scene.files.push_back(file);
  hashBytes(h, files.back().text);
  for (std::size_t i = 0; i + 1 < files.size(); ++i) {
    scene.files.push_back(files[i].ctx.file);
    hashBytes(h, files[i].text);
  }
  std::sort(state.collision_files.begin(), state.collision_files.end());
  state.collision_files.erase(
      std::unique(state.collision_files.begin(), state.collision_files.end()),
      state.collision_files.end());
  for (const std::string& model_file : state.collision_files) {
    scene.files.push_back(model_file);
    std::ifstream in(model_file, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    hashBytes(h, bytes.str());
  }
  scene.source_hash = h;
  std::vector<SceneError> errors;
  const std::vector<dynamics::ModelError> problems = dynamics::validate(scene.model);
  for (const dynamics::ModelError& error : problems) {
    // An inertia computed from a bad mass is bad too: only the mass, which the author wrote.
    const auto dot = error.field.rfind(".inertia");
    if (dot != std::string::npos && dot + 8 == error.field.size() &&
        state.derived_inertia.count(error.field.substr(0, dot)) > 0 &&
        std::any_of(problems.begin(), problems.end(), [&](const dynamics::ModelError& other) {
          return other.field == error.field.substr(0, dot) + ".mass";
        })) {
      continue;
    }
    auto [where, line] = locateField(files, error.field);
    errors.emplace_back(where, line, error.field, error.message);
  }
  if (!errors.empty()) throw SceneInvalid(std::move(errors));
  return scene;
}

Scene loadScene(const std::string& path, const std::vector<Override>& overrides) {
  std::string why;
  const std::optional<std::string> text = readSceneText(path, why);
  if (!text) throw SceneError(path, 0, "", "cannot open scene file: " + why);
  return loadSceneFromString(*text, path, overrides);
}

}  // namespace sim::engine
