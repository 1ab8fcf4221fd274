// URDF files into scene bodies and joints (see urdf_import.h for the mapping).
//
// Three passes over the file:
//   1. TinyXML (the parser urdfdom itself uses) reads the document once more to index every
//      element's line by its path ("link[arm].visual[0].geometry.mesh"), to warn once per kind
//      about elements we do not simulate (<gazebo>, <transmission>, <sensor>, ...), and to check
//      the tree (a joint naming a link that does not exist, a link with two parents, a cycle),
//      which urdfdom 3.0 partly lets through.
//   2. urdfdom parses it; every error it logs through console_bridge (it sometimes logs an error
//      and still returns a model) is a load error, placed at the element it names.
//   3. The mapping, in the URDF root's frame at the joints' initial positions, placed by the
//      include's pose.
#include "urdf_import.h"

#include "shape_mesh.h"

#include <dynamics/shapes.h>
#include <engine/urdf.h>

#include <fmt/format.h>
#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>

#include <console_bridge/console.h>
#include <tinyxml.h>
#include <urdf_parser/urdf_parser.h>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <numbers>
#include <optional>
#include <regex>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace sim::engine {

namespace {

std::mutex g_package_mutex;
std::vector<std::string> g_package_path;  // guarded by g_package_mutex

}  // namespace

void setPackagePath(std::vector<std::string> dirs) {
  const std::lock_guard lock(g_package_mutex);
  g_package_path = std::move(dirs);
}

std::vector<std::string> packagePath() {
  const std::lock_guard lock(g_package_mutex);
  return g_package_path;
}

namespace detail {

namespace {

namespace fs = std::filesystem;
using dynamics::Mat3;
using dynamics::Quat;
using dynamics::Vec3;
using Iso = Eigen::Isometry3d;

// ---------------------------------------------------------------------------------------------
// Resources: package://, file:// and plain paths.

// The <name> a package.xml declares, or empty.
std::string packageXmlName(const fs::path& dir) {
  const fs::path xml = dir / "package.xml";
  std::error_code ec;
  if (!fs::is_regular_file(xml, ec)) return {};
  TiXmlDocument doc;
  if (!doc.LoadFile(xml.string())) return {};
  const TiXmlElement* root = doc.RootElement();
  const TiXmlElement* name = root != nullptr ? root->FirstChildElement("name") : nullptr;
  return name != nullptr && name->GetText() != nullptr ? std::string(name->GetText()) : "";
}

bool isPackage(const fs::path& dir, const std::string& name) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return false;
  return dir.filename() == name || packageXmlName(dir) == name;
}

// The package `name` at `root` or below it (at most `depth` levels down, in name order; a
// directory with a package.xml is a package and is not searched further, as rospack does).
std::optional<fs::path> findPackageBelow(const fs::path& root, const std::string& name, int depth) {
  if (isPackage(root, name)) return root;
  std::error_code ec;
  if (depth == 0 || fs::is_regular_file(root / "package.xml", ec)) return {};
  std::vector<fs::path> dirs;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string leaf = it->path().filename().string();
    if (!leaf.empty() && leaf[0] != '.' && it->is_directory(ec)) dirs.push_back(it->path());
  }
  std::sort(dirs.begin(), dirs.end());
  for (const fs::path& dir : dirs) {
    if (auto found = findPackageBelow(dir, name, depth - 1)) return found;
  }
  return {};
}

std::vector<std::string> splitPath(const char* text) {
  std::vector<std::string> parts;
  if (text == nullptr) return parts;
  std::string part;
  for (const char* c = text;; ++c) {
    if (*c == ':' || *c == '\0') {
      if (!part.empty()) parts.push_back(part);
      part.clear();
      if (*c == '\0') break;
    } else {
      part += *c;
    }
  }
  return parts;
}

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text.empty() ? "none" : text;
}

}  // namespace

std::string resolveUrdfResource(const std::string& uri, const std::string& urdf_file) {
  const fs::path here = fs::absolute(fs::path(urdf_file)).parent_path();
  constexpr std::string_view kPackage = "package://";
  constexpr std::string_view kFile = "file://";
  if (uri.rfind(kPackage, 0) == 0) {
    const std::string rest = uri.substr(kPackage.size());
    const auto slash = rest.find('/');
    const std::string name = rest.substr(0, slash);
    const std::string inside = slash == std::string::npos ? "" : rest.substr(slash + 1);
    if (name.empty() || inside.empty()) {
      throw std::invalid_argument(
          fmt::format("{}: expected package://NAME/path/in/the/package", uri));
    }
    if (inside.find("..") != std::string::npos) {
      throw std::invalid_argument(fmt::format("{}: a package path may not contain \"..\"", uri));
    }
    const std::vector<std::string> flags = packagePath();
    const std::vector<std::string> ros = splitPath(std::getenv("ROS_PACKAGE_PATH"));
    for (const auto* list : {&flags, &ros}) {
      for (const std::string& root : *list) {
        if (auto dir = findPackageBelow(fs::path(root), name, 4)) {
          return (*dir / inside).lexically_normal().string();
        }
      }
    }
    // The URDF's own package (it lies inside it), or one beside a directory above it.
    for (fs::path dir = here; !dir.empty(); dir = dir.parent_path()) {
      if (isPackage(dir, name)) return (dir / inside).lexically_normal().string();
      if (isPackage(dir / name, name)) return (dir / name / inside).lexically_normal().string();
      if (dir == dir.parent_path()) break;
    }
    throw std::invalid_argument(fmt::format(
        "{}: no package \"{}\" found (searched --package-path: {}; ROS_PACKAGE_PATH: {}; and the "
        "directories above {})",
        uri, name, joined(flags), joined(ros), urdf_file));
  }
  std::string path = uri;
  if (uri.rfind(kFile, 0) == 0) {
    path = uri.substr(kFile.size());  // file:///abs -> /abs; file://rel -> rel (to the URDF)
  } else if (const auto colon = uri.find("://"); colon != std::string::npos) {
    throw std::invalid_argument(fmt::format(
        "{}: unsupported resource scheme \"{}://\" (expected package://, file:// or a path)", uri,
        uri.substr(0, colon)));
  }
  if (path.empty()) throw std::invalid_argument("empty file name");
  const fs::path p(path);
  return (p.is_absolute() ? p : here / p).lexically_normal().string();
}

namespace {

// ---------------------------------------------------------------------------------------------
// Pass 1: the document's elements, their lines, unsupported elements and the tree.

// Elements of the URDF specification we read, by parent.
const std::map<std::string, std::set<std::string>>& knownChildren() {
  static const std::map<std::string, std::set<std::string>> known = {
      {"robot", {"link", "joint", "material"}},
      {"link", {"inertial", "visual", "collision"}},
      {"inertial", {"origin", "mass", "inertia"}},
      {"visual", {"origin", "geometry", "material"}},
      {"collision", {"origin", "geometry"}},
      {"geometry", {"box", "cylinder", "sphere", "mesh"}},
      {"material", {"color"}},
      {"joint", {"origin", "parent", "child", "axis", "dynamics", "limit", "mimic"}},
  };
  return known;
}

// Why an element of the URDF world is not simulated (unknown ones get a generic reason).
std::string unsupportedReason(const std::string& tag) {
  if (tag == "gazebo")
    return "Gazebo extensions are not read (their friction, colours and plugins have no effect)";
  if (tag == "transmission" || tag == "ros2_control") {
    return "not read: motors come from the scene's motors: (docs/scenes.md, \"Robots from URDF\")";
  }
  if (tag == "sensor") return "sensors are not simulated";
  if (tag == "safety_controller")
    return "a controller's soft limits are not simulated (the joint's limits are)";
  if (tag == "calibration") return "calibration is not used";
  if (tag == "texture") return "textures of URDF materials are not drawn (the colour is)";
  return "unknown element, ignored";
}

struct JointXml {
  std::string name, type, parent, child;
  int line = 0, parent_line = 0, child_line = 0;
};

struct XmlIndex {
  std::map<std::string, int> lines;                // element path -> line
  std::vector<std::pair<std::string, int>> links;  // document order
  std::vector<JointXml> joints;                    // document order
  // Unsupported element kinds: "<tag>" -> (count, first line, first path).
  std::map<std::string, std::tuple<int, int, std::string>> unsupported;
};

std::string attribute(const TiXmlElement* e, const char* name) {
  const char* value = e->Attribute(name);
  return value != nullptr ? value : "";
}

void indexElement(const TiXmlElement* element, const std::string& path, XmlIndex& index) {
  const std::string tag = element->ValueStr();
  const auto known = knownChildren().find(tag);
  std::map<std::string, int> seen;  // repeated children by tag: visual[0], visual[1]
  for (const TiXmlElement* child = element->FirstChildElement(); child != nullptr;
       child = child->NextSiblingElement()) {
    const std::string ctag = child->ValueStr();
    const bool top = tag == "robot";
    // Paths: top-level links, joints and materials by name; visuals, collisions and other
    // top-level elements by their index among siblings of the tag; the rest by tag alone.
    std::string cpath;
    if (top && (ctag == "link" || ctag == "joint" || ctag == "material")) {
      cpath = fmt::format("{}[{}]", ctag, attribute(child, "name"));
    } else {
      const std::string base = path.empty() ? ctag : path + "." + ctag;
      const int n = seen[ctag]++;
      cpath =
          top || ctag == "visual" || ctag == "collision" ? fmt::format("{}[{}]", base, n) : base;
    }
    index.lines.emplace(cpath, child->Row());
    if (known == knownChildren().end() || known->second.count(ctag) == 0) {
      auto it = index.unsupported.emplace("<" + ctag + ">", std::make_tuple(0, child->Row(), cpath))
                    .first;
      ++std::get<0>(it->second);
      continue;
    }
    if (top && ctag == "link") index.links.emplace_back(attribute(child, "name"), child->Row());
    if (top && ctag == "joint") {
      JointXml j;
      j.name = attribute(child, "name");
      j.type = attribute(child, "type");
      j.line = child->Row();
      if (const TiXmlElement* p = child->FirstChildElement("parent")) {
        j.parent = attribute(p, "link");
        j.parent_line = p->Row();
      }
      if (const TiXmlElement* c = child->FirstChildElement("child")) {
        j.child = attribute(c, "link");
        j.child_line = c->Row();
      }
      index.joints.push_back(j);
    }
    indexElement(child, cpath, index);
  }
}

// Deeper nesting than any URDF has is refused before TinyXML's recursive parser sees it.
constexpr int kMaxDepth = 64;

int nestingDepth(const std::string& text) {
  int depth = 0, deepest = 0;
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] != '<') continue;
    const char next = text[i + 1];
    if (next == '/') {
      --depth;
    } else if (next != '!' && next != '?') {
      const auto close = text.find('>', i);
      if (close == std::string::npos) break;
      if (text[close - 1] != '/') deepest = std::max(deepest, ++depth);
      i = close;
    }
  }
  return deepest;
}

// ---------------------------------------------------------------------------------------------
// Pass 2: urdfdom, its console_bridge messages captured.

class CapturedLog : public console_bridge::OutputHandler {
 public:
  void log(const std::string& text, console_bridge::LogLevel level, const char*, int) override {
    if (level >= console_bridge::CONSOLE_BRIDGE_LOG_ERROR) {
      errors.push_back(text);
    } else if (level == console_bridge::CONSOLE_BRIDGE_LOG_WARN) {
      warnings.push_back(text);
    }
  }
  std::vector<std::string> errors, warnings;
};

std::mutex g_urdfdom_mutex;  // console_bridge's output handler is process-wide

urdf::ModelInterfaceSharedPtr parseWithUrdfdom(const std::string& text, CapturedLog& log) {
  const std::lock_guard lock(g_urdfdom_mutex);
  console_bridge::OutputHandler* previous = console_bridge::getOutputHandler();
  const console_bridge::LogLevel level = console_bridge::getLogLevel();
  console_bridge::useOutputHandler(&log);
  console_bridge::setLogLevel(console_bridge::CONSOLE_BRIDGE_LOG_WARN);
  urdf::ModelInterfaceSharedPtr model;
  try {
    model = urdf::parseURDF(text);
  } catch (const std::exception& e) {
    log.errors.push_back(e.what());
  }
  console_bridge::setLogLevel(level);
  console_bridge::useOutputHandler(previous);
  return model;
}

// The element an urdfdom message names: "joint[elbow]" for "Joint [elbow] ...".
std::string elementNamed(const std::string& message) {
  static const std::regex kPatterns[] = {
      std::regex(R"(([Jj]oint|[Ll]ink|[Mm]aterial) \[([^\]]*)\])"),
      std::regex(R"(([Jj]oint|[Ll]ink|[Mm]aterial) '([^']*)')"),
  };
  for (const std::regex& pattern : kPatterns) {
    std::smatch m;
    if (std::regex_search(message, m, pattern)) {
      std::string kind = m[1].str();
      kind[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(kind[0])));
      return fmt::format("{}[{}]", kind, m[2].str());
    }
  }
  return {};
}

// ---------------------------------------------------------------------------------------------
// Pass 3: the mapping.

Iso toIso(const urdf::Pose& pose) {
  Iso t = Iso::Identity();
  t.translation() = Vec3(pose.position.x, pose.position.y, pose.position.z);
  t.linear() = Quat(pose.rotation.w, pose.rotation.x, pose.rotation.y, pose.rotation.z)
                   .normalized()
                   .toRotationMatrix();
  return t;
}

Iso toIso(const Quat& rotation, const Vec3& translation) {
  Iso t = Iso::Identity();
  t.translation() = translation;
  t.linear() = rotation.toRotationMatrix();
  return t;
}

// `world` expressed in the centre-of-mass frame of `body` (or left in the world for none).
dynamics::Frame frameIn(const dynamics::BodyDef* body, const Iso& world) {
  const Iso local =
      body != nullptr ? toIso(body->orientation, body->position_m).inverse() * world : world;
  return {local.translation(), Quat(local.linear()).normalized()};
}

bool finiteVec(const urdf::Vector3& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}

bool movable(int type) {
  return type == urdf::Joint::REVOLUTE || type == urdf::Joint::CONTINUOUS ||
         type == urdf::Joint::PRISMATIC;
}

// Keeps file units in the vertices but applies a per-axis URDF scale: normals by the inverse
// transpose, triangles turned over by a mirroring (negative) scale.
ImportedModel scaledModel(const ImportedModel& model, const Vec3& s) {
  ImportedModel out = model;
  const bool mirror = s.x() * s.y() * s.z() < 0.0;
  for (ImportedMesh& mesh : out.meshes) {
    for (auto& v : mesh.vertices) v = {v[0] * s.x(), v[1] * s.y(), v[2] * s.z()};
    for (auto& n : mesh.normals) {
      Vec3 m(n[0] / s.x(), n[1] / s.y(), n[2] / s.z());
      if (m.norm() > 0.0) m.normalize();
      n = {m.x(), m.y(), m.z()};
    }
    if (mirror) {
      for (auto& t : mesh.triangles) std::swap(t[1], t[2]);
    }
  }
  return out;
}

// A box, cylinder or sphere drawn as a model (the triangles the renderer draws for shapes).
std::shared_ptr<const ImportedModel> primitiveModel(const dynamics::ShapeDef& shape,
                                                    const std::string& name,
                                                    const std::array<double, 4>& rgba) {
  dynamics::ShapeDef at_origin = shape;
  at_origin.pose = dynamics::Frame{};
  const render::MeshPart part = shapeMesh(at_origin);
  ImportedMesh mesh;
  mesh.name = name;
  mesh.node = name;
  for (const auto& v : part.vertices_m) mesh.vertices.push_back({v[0], v[1], v[2]});
  for (const auto& n : part.normals) mesh.normals.push_back({n[0], n[1], n[2]});
  for (std::size_t i = 0; i + 2 < part.indices.size(); i += 3) {
    mesh.triangles.push_back({part.indices[i], part.indices[i + 1], part.indices[i + 2]});
  }
  mesh.material.diffuse = rgba;
  auto model = std::make_shared<ImportedModel>();
  model->path = name;
  model->meshes.push_back(std::move(mesh));
  return model;
}

class Importer {
 public:
  Importer(const UrdfInclude& include, const Scene& scene, const MeshLoader& meshes)
      : in_(include), scene_(scene), meshes_(meshes) {}

  UrdfRobot run() {
    readDocument();
    parse();
    checkValues();
    resolveMimics();
    placeLinks();
    makeBodies();
    makeJoints();
    for (const auto& [kind, info] : xml_.unsupported) {
      const auto& [count, line, path] = info;
      warn(line, path,
           fmt::format("{}{}: {}", kind, count > 1 ? fmt::format(" ({} elements)", count) : "",
                       unsupportedReason(kind.substr(1, kind.size() - 2))));
    }
    for (const std::string& w : log_.warnings) warn(0, elementNamed(w), "urdfdom: " + w);
    return std::move(out_);
  }

 private:
  // --- Messages ---
  int lineOf(std::string path) const {
    while (!path.empty()) {
      if (auto it = xml_.lines.find(path); it != xml_.lines.end()) return it->second;
      const auto cut = path.find_last_of(".[");
      if (cut == std::string::npos) break;
      path.resize(cut);
    }
    return robot_line_;
  }
  [[noreturn]] void fail(const std::string& path, const std::string& message) const {
    throw SceneError(in_.file, lineOf(path), path, message);
  }
  void warn(int line, const std::string& path, const std::string& message) {
    if (line == 0) line = lineOf(path);
    std::string text = in_.file;
    if (line > 0) text += fmt::format(":{}", line);
    text += ": " + (path.empty() ? "" : path + ": ") + message;
    out_.warnings.push_back(std::move(text));
  }

  // --- Pass 1 ---
  void readDocument() {
    if (nestingDepth(in_.text) > kMaxDepth) {
      throw SceneError(
          in_.file, 0, "",
          fmt::format("elements nested deeper than {} levels: not a URDF file", kMaxDepth));
    }
    TiXmlDocument doc;
    doc.Parse(in_.text.c_str(), nullptr, TIXML_ENCODING_UTF8);
    if (doc.Error()) {
      throw SceneError(in_.file, doc.ErrorRow(), "",
                       fmt::format("malformed XML: {}", doc.ErrorDesc()));
    }
    const TiXmlElement* robot = doc.RootElement();
    if (robot == nullptr || robot->ValueStr() != "robot") {
      throw SceneError(in_.file, robot != nullptr ? robot->Row() : 0, "",
                       fmt::format("expected a <robot> element at the top, got <{}>",
                                   robot != nullptr ? robot->ValueStr() : ""));
    }
    robot_line_ = robot->Row();
    indexElement(robot, "", xml_);
    checkTree();
  }

  // The joints must form one tree over the links: every joint names two different links that
  // exist, no link is the child of two joints, and following parents never comes back.
  void checkTree() {
    std::map<std::string, int> links;
    for (const auto& [name, line] : xml_.links) {
      if (auto [it, fresh] = links.emplace(name, line); !fresh) {
        throw SceneError(
            in_.file, line, fmt::format("link[{}]", name),
            fmt::format("a second link named \"{}\" (the first is at line {})", name, it->second));
      }
    }
    std::map<std::string, int> joints;
    for (const JointXml& j : xml_.joints) {
      if (auto [it, fresh] = joints.emplace(j.name, j.line); !fresh) {
        throw SceneError(in_.file, j.line, fmt::format("joint[{}]", j.name),
                         fmt::format("a second joint named \"{}\" (the first is at line {})",
                                     j.name, it->second));
      }
    }
    std::map<std::string, const JointXml*> parent_of;  // child link -> its joint
    for (const JointXml& j : xml_.joints) {
      const std::string at = fmt::format("joint[{}]", j.name);
      for (const auto& [role, link, line] :
           {std::tuple<const char*, const std::string&, int>{"parent", j.parent, j.parent_line},
            std::tuple<const char*, const std::string&, int>{"child", j.child, j.child_line}}) {
        if (link.empty()) {
          throw SceneError(in_.file, line > 0 ? line : j.line, at + "." + role,
                           fmt::format("missing (a joint needs <{} link=\"...\"/>)", role));
        }
        if (links.count(link) == 0) {
          throw SceneError(
              in_.file, line, at + "." + role,
              fmt::format("no link named \"{}\" (the {} link of joint {})", link, role, j.name));
        }
      }
      if (j.parent == j.child) {
        throw SceneError(in_.file, j.child_line, at + ".child",
                         fmt::format("link \"{}\" is both the parent and the child", j.child));
      }
      auto [it, fresh] = parent_of.emplace(j.child, &j);
      if (!fresh) {
        throw SceneError(in_.file, j.child_line, at + ".child",
                         fmt::format("link \"{}\" is already the child of joint {} (line {}): a "
                                     "URDF is a tree, each link has one parent",
                                     j.child, it->second->name, it->second->line));
      }
    }
    for (const JointXml& j : xml_.joints) {
      std::vector<std::string> path{j.name};
      for (auto it = parent_of.find(j.parent); it != parent_of.end();
           it = parent_of.find(it->second->parent)) {
        if (it->second == &j) {
          std::string cycle;
          for (const std::string& name : path) cycle += name + " -> ";
          throw SceneError(
              in_.file, j.line, fmt::format("joint[{}]", j.name),
              fmt::format("the joints form a cycle: {}{} (a URDF is a tree)", cycle, j.name));
        }
        path.push_back(it->second->name);
        if (path.size() > xml_.joints.size()) break;
      }
    }
  }

  // --- Pass 2 ---
  void parse() {
    model_ = parseWithUrdfdom(in_.text, log_);
    if (!log_.errors.empty() || !model_) {
      std::string message;
      std::string element;
      for (const std::string& e : log_.errors) {
        message += (message.empty() ? "" : "; ") + e;
        if (element.empty()) element = elementNamed(e);
      }
      if (message.empty()) message = "urdfdom could not read it";
      throw SceneError(in_.file, lineOf(element), element, "urdfdom: " + message);
    }
    out_.name = model_->getName();
    root_ = model_->getRoot()->name;
  }

  // --- Values urdfdom accepts but a simulation cannot ---
  void checkValues() {
    for (const auto& [name, line] : xml_.links) {
      const urdf::Link& link = *model_->links_.at(name);
      const std::string at = fmt::format("link[{}]", name);
      if (link.inertial) {
        const urdf::Inertial& i = *link.inertial;
        if (!(i.mass >= 0.0) || !std::isfinite(i.mass)) {
          fail(at + ".inertial.mass",
               fmt::format("mass must be a finite number >= 0 kg, got {}", i.mass));
        }
        for (double v : {i.ixx, i.ixy, i.ixz, i.iyy, i.iyz, i.izz}) {
          if (!std::isfinite(v)) fail(at + ".inertial.inertia", "inertia must be finite");
        }
        if (!finiteVec(i.origin.position)) fail(at + ".inertial.origin", "origin must be finite");
        const Mat3 inertia = linkInertia(i);
        if (i.mass > 0.0) {
          const Vec3 m = Eigen::SelfAdjointEigenSolver<Mat3>(inertia).eigenvalues();
          if (m.minCoeff() <= 0.0) {
            fail(at + ".inertial.inertia",
                 fmt::format(
                     "the inertia tensor must be positive definite: principal moments {:.6g}, "
                     "{:.6g}, {:.6g} kg m^2",
                     m[0], m[1], m[2]));
          }
          if (m[0] + m[1] < m[2] * (1.0 - 1e-6)) {
            warn(0, at + ".inertial.inertia",
                 fmt::format("principal moments {:.6g}, {:.6g}, {:.6g} kg m^2 violate the triangle "
                             "inequality (no rigid body has them); used as given",
                             m[0], m[1], m[2]));
          }
        }
      }
      auto checkGeometry = [&](const urdf::GeometrySharedPtr& g, const std::string& path) {
        if (!g) fail(path, "no geometry");
        const std::string gp = path + ".geometry";
        switch (g->type) {
          case urdf::Geometry::BOX: {
            const auto& d = static_cast<const urdf::Box&>(*g).dim;
            if (!(d.x > 0.0 && d.y > 0.0 && d.z > 0.0) || !finiteVec(d)) {
              fail(gp + ".box",
                   fmt::format("size must be three positive lengths, got {} {} {}", d.x, d.y, d.z));
            }
            break;
          }
          case urdf::Geometry::CYLINDER: {
            const auto& c = static_cast<const urdf::Cylinder&>(*g);
            if (!(c.radius > 0.0 && c.length > 0.0) || !std::isfinite(c.radius + c.length)) {
              fail(gp + ".cylinder",
                   fmt::format("radius and length must be positive, got {} and {}", c.radius,
                               c.length));
            }
            break;
          }
          case urdf::Geometry::SPHERE: {
            const double r = static_cast<const urdf::Sphere&>(*g).radius;
            if (!(r > 0.0) || !std::isfinite(r))
              fail(gp + ".sphere", fmt::format("radius must be positive, got {}", r));
            break;
          }
          case urdf::Geometry::MESH: {
            const auto& s = static_cast<const urdf::Mesh&>(*g).scale;
            if (!(s.x != 0.0 && s.y != 0.0 && s.z != 0.0) || !finiteVec(s)) {
              fail(gp + ".mesh",
                   fmt::format("scale must be three nonzero numbers, got {} {} {}", s.x, s.y, s.z));
            }
            break;
          }
        }
      };
      for (std::size_t k = 0; k < link.visual_array.size(); ++k) {
        checkGeometry(link.visual_array[k]->geometry, fmt::format("{}.visual[{}]", at, k));
      }
      for (std::size_t k = 0; k < link.collision_array.size(); ++k) {
        checkGeometry(link.collision_array[k]->geometry, fmt::format("{}.collision[{}]", at, k));
      }
    }
    for (const JointXml& jx : xml_.joints) {
      const urdf::Joint& j = *model_->joints_.at(jx.name);
      const std::string at = fmt::format("joint[{}]", jx.name);
      if (!finiteVec(j.parent_to_joint_origin_transform.position))
        fail(at + ".origin", "origin must be finite");
      if (movable(j.type)) {
        const Vec3 axis(j.axis.x, j.axis.y, j.axis.z);
        if (!axis.allFinite() || !(axis.norm() > 1e-9)) {
          fail(at + ".axis", fmt::format("the axis must be a nonzero vector, got {} {} {}",
                                         j.axis.x, j.axis.y, j.axis.z));
        }
      }
      if (j.limits && (j.type == urdf::Joint::REVOLUTE || j.type == urdf::Joint::PRISMATIC)) {
        const urdf::JointLimits& l = *j.limits;
        if (!std::isfinite(l.lower) || !std::isfinite(l.upper) || !(l.lower <= l.upper)) {
          fail(at + ".limit",
               fmt::format("lower {} must not exceed upper {} (both finite)", l.lower, l.upper));
        }
        if (!(l.effort >= 0.0) || !(l.velocity >= 0.0)) {
          fail(at + ".limit", fmt::format("effort and velocity must be >= 0, got {} and {}",
                                          l.effort, l.velocity));
        }
      }
      if (j.dynamics && (!(j.dynamics->damping >= 0.0) || !(j.dynamics->friction >= 0.0))) {
        fail(at + ".dynamics", fmt::format("damping and friction must be >= 0, got {} and {}",
                                           j.dynamics->damping, j.dynamics->friction));
      }
    }
  }

  static Mat3 linkInertia(const urdf::Inertial& i) {
    Mat3 m;
    m << i.ixx, i.ixy, i.ixz, i.ixy, i.iyy, i.iyz, i.ixz, i.iyz, i.izz;
    const Mat3 r = toIso(i.origin).linear();
    return r * m * r.transpose();  // rotated from the inertial frame into the link axes
  }

  // --- Mimic joints and initial positions ---
  void resolveMimics() {
    for (const JointXml& jx : xml_.joints) {
      const urdf::Joint& j = *model_->joints_.at(jx.name);
      if (!j.mimic) continue;
      const std::string at = fmt::format("joint[{}].mimic", jx.name);
      const auto master = model_->joints_.find(j.mimic->joint_name);
      if (master == model_->joints_.end()) {
        fail(at, fmt::format("no joint named \"{}\" to mimic", j.mimic->joint_name));
      }
      if (!movable(j.type) || !movable(master->second->type)) {
        fail(at, "mimic joints and their masters must be revolute, continuous or prismatic");
      }
      if (!std::isfinite(j.mimic->multiplier) || !std::isfinite(j.mimic->offset) ||
          j.mimic->multiplier == 0.0) {
        fail(at,
             fmt::format("multiplier must be finite and nonzero and offset finite, got {} and {}",
                         j.mimic->multiplier, j.mimic->offset));
      }
    }
    // Positions: given ones, zero, and mimic joints from their masters (chains followed).
    for (const auto& [name, value] : in_.initial) {
      const auto it = model_->joints_.find(name);
      auto failHere = [&](const std::string& message) {
        throw SceneError(in_.includer, value.second, fmt::format("include.initial.{}", name),
                         message);
      };
      if (it == model_->joints_.end() || !movable(it->second->type)) {
        std::string known;
        for (const JointXml& jx : xml_.joints) {
          if (movable(model_->joints_.at(jx.name)->type))
            known += (known.empty() ? "" : ", ") + jx.name;
        }
        failHere(fmt::format("no revolute, continuous or prismatic joint \"{}\" in {} (known: {})",
                             name, in_.file, known));
      }
      const urdf::Joint& j = *it->second;
      if (j.mimic)
        failHere(
            fmt::format("joint {} mimics {}: its position follows", name, j.mimic->joint_name));
      if (j.type == urdf::Joint::REVOLUTE || j.type == urdf::Joint::PRISMATIC) {
        if (value.first < j.limits->lower || value.first > j.limits->upper) {
          failHere(fmt::format("{} is outside the joint's limits [{}, {}]", value.first,
                               j.limits->lower, j.limits->upper));
        }
      }
      if (j.type != urdf::Joint::PRISMATIC && std::abs(value.first) > std::numbers::pi) {
        failHere(fmt::format("{} rad: give an angle in [-pi, pi]", value.first));
      }
      position_[name] = value.first;
    }
    for (const JointXml& jx : xml_.joints) position(jx.name, 0);
  }

  // URDF position of a joint at the start; a mimic joint's from its master's.
  double position(const std::string& name, std::size_t depth) {
    if (auto it = position_.find(name); it != position_.end()) return it->second;
    const urdf::Joint& j = *model_->joints_.at(name);
    double q = 0.0;
    if (j.mimic) {
      if (depth > xml_.joints.size()) {
        fail(fmt::format("joint[{}].mimic", name), "mimic joints form a cycle");
      }
      q = j.mimic->multiplier * position(j.mimic->joint_name, depth + 1) + j.mimic->offset;
    }
    position_[name] = q;
    return q;
  }

  // --- Link poses at the initial positions ---
  void placeLinks() {
    std::map<std::string, std::vector<const JointXml*>> children;
    for (const JointXml& jx : xml_.joints) children[jx.parent].push_back(&jx);
    link_pose_[root_] = toIso(in_.rotation, in_.translation);
    std::vector<std::string> todo{root_};
    while (!todo.empty()) {
      const std::string parent = todo.back();
      todo.pop_back();
      for (const JointXml* jx : children[parent]) {
        const urdf::Joint& j = *model_->joints_.at(jx->name);
        Iso motion = Iso::Identity();
        const Vec3 axis = Vec3(j.axis.x, j.axis.y, j.axis.z).normalized();
        const double q = position_[jx->name];
        if (j.type == urdf::Joint::PRISMATIC) motion.translation() = axis * q;
        if (j.type == urdf::Joint::REVOLUTE || j.type == urdf::Joint::CONTINUOUS) {
          motion.linear() = Eigen::AngleAxisd(q, axis).toRotationMatrix();
        }
        link_pose_[jx->child] =
            link_pose_[parent] * toIso(j.parent_to_joint_origin_transform) * motion;
        parent_joint_[jx->child] = jx;
        todo.push_back(jx->child);
      }
    }
  }

  // The link a link is merged into: itself when a moving (or floating) joint moves it or it is
  // the root, else its parent's head (fixed joints; planar ones are welded with a warning).
  std::string headOf(const std::string& link) const {
    std::string at = link;
    while (true) {
      const auto it = parent_joint_.find(at);
      if (it == parent_joint_.end()) return at;
      const int type = model_->joints_.at(it->second->name)->type;
      if (movable(type) || type == urdf::Joint::FLOATING) return at;
      if (it->second->parent == root_ && worldRoot()) return at;  // welded to the world: static
      at = it->second->parent;
    }
  }
  bool worldRoot() const { return root_ == "world"; }
  std::string named(const std::string& urdf_name) const { return in_.prefix + urdf_name; }

  // How a body (a head link) moves: static, or dynamic.
  bool isStatic(const std::string& head) const {
    if (head == root_) {
      if (in_.attach) {
        return in_.attach->body == dynamics::kWorld ||
               scene_.model.bodies[static_cast<std::size_t>(in_.attach->body)].is_static;
      }
      return !in_.floating_base;
    }
    const auto it = parent_joint_.find(head);
    return it != parent_joint_.end() && it->second->parent == root_ && worldRoot() &&
           !movable(model_->joints_.at(it->second->name)->type) &&
           model_->joints_.at(it->second->name)->type != urdf::Joint::FLOATING;
  }

  void makeBodies() {
    for (const JointXml& jx : xml_.joints) {
      const int type = model_->joints_.at(jx.name)->type;
      if (type == urdf::Joint::PLANAR) {
        warn(jx.line, fmt::format("joint[{}]", jx.name),
             fmt::format(
                 "planar joints are not supported: link {} is welded to {} (as a fixed joint)",
                 jx.child, jx.parent));
      } else if (type == urdf::Joint::FLOATING) {
        warn(jx.line, fmt::format("joint[{}]", jx.name),
             fmt::format(
                 "floating joint: link {} is a free body (no joint; not in the joint traces)",
                 jx.child));
      }
    }
    if (worldRoot()) {
      const urdf::Link& world = *model_->links_.at(root_);
      if (world.inertial || !world.visual_array.empty() || !world.collision_array.empty()) {
        warn(0, "link[world]",
             "the link named world is the scene's world: its inertial, visuals and collisions are "
             "ignored");
      }
      out_.links["world"] = {dynamics::kWorld, frameIn(nullptr, link_pose_.at(root_))};
    }
    // Members of each body, in document order.
    std::map<std::string, std::vector<std::string>> members;
    std::vector<std::string> heads;
    for (const auto& [name, line] : xml_.links) {
      if (worldRoot() && name == root_) continue;
      const std::string head = headOf(name);
      if (members[head].empty()) heads.push_back(head);
      members[head].push_back(name);
    }
    // Heads in document order (a head precedes nothing in particular; the order is the file's).
    std::sort(heads.begin(), heads.end(), [&](const std::string& a, const std::string& b) {
      return linkLine(a) < linkLine(b);
    });
    for (const std::string& head : heads) makeBody(head, members[head]);
  }

  int linkLine(const std::string& name) const {
    for (const auto& [n, line] : xml_.links) {
      if (n == name) return line;
    }
    return 0;
  }

  void makeBody(const std::string& head, const std::vector<std::string>& members) {
    const Iso head_pose = link_pose_.at(head);
    const std::string at = fmt::format("link[{}]", head);
    const bool is_static = isStatic(head);
    UrdfRobot::Body body;
    body.def.name = named(head);
    body.def.is_static = is_static;
    body.line = linkLine(head);

    // Mass properties of the members, in the head's link frame.
    std::vector<dynamics::MassProperties> parts;
    std::string inertia_path = at + ".inertial.inertia", mass_path = at + ".inertial.mass";
    for (const std::string& name : members) {
      const urdf::Link& link = *model_->links_.at(name);
      if (!link.inertial || !(link.inertial->mass > 0.0)) continue;
      const Iso in_head = head_pose.inverse() * link_pose_.at(name);
      dynamics::MassProperties part;
      part.mass_kg = link.inertial->mass;
      part.center_m =
          in_head * Vec3(link.inertial->origin.position.x, link.inertial->origin.position.y,
                         link.inertial->origin.position.z);
      part.inertia_kgm2 =
          in_head.linear() * linkInertia(*link.inertial) * in_head.linear().transpose();
      parts.push_back(part);
      if (parts.size() == 1) {
        inertia_path = fmt::format("link[{}].inertial.inertia", name);
        mass_path = fmt::format("link[{}].inertial.mass", name);
      }
    }
    Vec3 com = Vec3::Zero();
    if (!parts.empty()) {
      const dynamics::MassProperties total = dynamics::combineMassProperties(parts);
      body.def.mass_kg = total.mass_kg;
      body.def.inertia_kgm2 = total.inertia_kgm2;
      com = total.center_m;
    } else {
      body.def.mass_kg = 0.0;
      body.def.inertia_kgm2 = Mat3::Zero();
    }
    if (!is_static) {
      if (parts.empty()) {
        const auto pj = parent_joint_.find(head);
        const std::string why = pj != parent_joint_.end()
                                    ? fmt::format("joint {} moves it", pj->second->name)
                                    : "it is a free body";
        fail(at,
             fmt::format("link {} has no mass (no <inertial> with a mass > 0, nor links fixed to "
                         "it with one), but {}: give it an <inertial>",
                         head, why));
      }
      const Vec3 m = Eigen::SelfAdjointEigenSolver<Mat3>(body.def.inertia_kgm2).eigenvalues();
      if (!(m.minCoeff() > 0.0)) {
        fail(inertia_path,
             fmt::format("the inertia of body {} (link {} and the links fixed to it) must "
                         "be positive definite: principal moments {:.6g}, {:.6g}, {:.6g} kg m^2",
                         head, head, m[0], m[1], m[2]));
      }
    }
    out_.lines[fmt::format("bodies[{}]", named(head))] = body.line;
    out_.lines[fmt::format("bodies[{}].mass", named(head))] = lineOf(mass_path);
    out_.lines[fmt::format("bodies[{}].inertia", named(head))] = lineOf(inertia_path);

    // The body's frame: the centre of mass, link axes.
    const Iso com_pose = head_pose * Eigen::Translation3d(com);
    body.def.position_m = com_pose.translation();
    body.def.orientation = Quat(head_pose.linear()).normalized();
    body.look.reference.position = -com;
    const int body_index = static_cast<int>(scene_.model.bodies.size() + out_.bodies.size());
    for (const std::string& name : members) {
      const Iso in_com = com_pose.inverse() * link_pose_.at(name);
      out_.links[named(name)] = {body_index,
                                 {in_com.translation(), Quat(in_com.linear()).normalized()}};
    }

    // Collision shapes and visuals of every member, in the centre-of-mass frame.
    for (const std::string& name : members) {
      const urdf::Link& link = *model_->links_.at(name);
      const Iso in_com = com_pose.inverse() * link_pose_.at(name);
      for (std::size_t k = 0; k < link.collision_array.size(); ++k) {
        const urdf::Collision& c = *link.collision_array[k];
        const std::string path = fmt::format("link[{}].collision[{}]", name, k);
        const Iso pose = in_com * toIso(c.origin);
        out_.lines[fmt::format("bodies[{}].shapes[{}]", named(head), body.def.shapes.size())] =
            lineOf(path);
        body.def.shapes.push_back(collisionShape(*c.geometry, pose, is_static, path + ".geometry"));
      }
      for (std::size_t k = 0; k < link.visual_array.size(); ++k) {
        const urdf::Visual& v = *link.visual_array[k];
        const std::string path = fmt::format("link[{}].visual[{}]", name, k);
        body.look.visuals.push_back(visual(v, in_com * toIso(v.origin), path));
      }
    }
    body.look.hidden = body.look.visuals.empty();
    out_.bodies.push_back(std::move(body));
  }

  dynamics::ShapeDef collisionShape(const urdf::Geometry& g, const Iso& pose, bool is_static,
                                    const std::string& path) {
    dynamics::ShapeDef shape;
    shape.pose = {pose.translation(), Quat(pose.linear()).normalized()};
    if (in_.group != 0) {
      shape.group = in_.group;
      shape.mask = ~in_.group;
    }
    switch (g.type) {
      case urdf::Geometry::BOX: {
        const auto& d = static_cast<const urdf::Box&>(g).dim;
        shape.type = dynamics::ShapeType::Box;
        shape.half_extents_m = 0.5 * Vec3(d.x, d.y, d.z);
        break;
      }
      case urdf::Geometry::CYLINDER: {
        const auto& c = static_cast<const urdf::Cylinder&>(g);
        shape.type = dynamics::ShapeType::Cylinder;
        shape.radius_m = c.radius;
        shape.half_length_m = 0.5 * c.length;
        break;
      }
      case urdf::Geometry::SPHERE:
        shape.type = dynamics::ShapeType::Sphere;
        shape.radius_m = static_cast<const urdf::Sphere&>(g).radius;
        break;
      case urdf::Geometry::MESH: {
        const auto model = mesh(static_cast<const urdf::Mesh&>(g), path + ".mesh");
        out_.collision_files.push_back(model->path);
        std::vector<Vec3> vertices;
        std::vector<std::array<int, 3>> triangles;
        for (const ImportedMesh& m : model->meshes) {
          const int offset = static_cast<int>(vertices.size());
          for (const auto& v : m.vertices) vertices.emplace_back(v[0], v[1], v[2]);
          for (const auto& t : m.triangles) {
            triangles.push_back({offset + static_cast<int>(t[0]), offset + static_cast<int>(t[1]),
                                 offset + static_cast<int>(t[2])});
          }
        }
        std::string error;
        if (is_static) {
          // A static link keeps its exact surface; a moving one collides as the convex hull.
          shape.type = dynamics::ShapeType::TriangleMesh;
          shape.mesh = dynamics::makeTriangleMesh(vertices, triangles, &error);
        } else {
          shape.type = dynamics::ShapeType::ConvexHull;
          shape.hull = dynamics::makeConvexHull(vertices, &error);
        }
        if (!shape.hull && !shape.mesh)
          fail(path + ".mesh", fmt::format("{}: {}", model->path, error));
        break;
      }
    }
    return shape;
  }

  // The model of a <mesh>: resolved, imported through the loader's cache, scaled.
  std::shared_ptr<const ImportedModel> mesh(const urdf::Mesh& m, const std::string& path) {
    std::string file;
    try {
      file = resolveUrdfResource(m.filename, in_.file);
    } catch (const std::invalid_argument& e) {
      fail(path, e.what());
    }
    const Vec3 s(m.scale.x, m.scale.y, m.scale.z);
    const bool uniform = s.x() == s.y() && s.y() == s.z() && s.x() > 0.0;
    MeshImportOptions options;
    options.up = UpAxis::Z;  // a URDF mesh is in its link's frame, as stored
    if (uniform) options.scale = s.x();
    try {
      auto model = meshes_(file, options);
      if (uniform) return model;
      return std::make_shared<const ImportedModel>(scaledModel(*model, s));
    } catch (const MeshImportError& e) {
      fail(path, e.what());
    }
  }

  VisualDef visual(const urdf::Visual& v, const Iso& pose, const std::string& path) {
    VisualDef out;
    out.pose = {pose.translation(), Quat(pose.linear()).normalized()};
    // The material's colour, when it has one (RViz's default grey otherwise).
    std::array<double, 4> rgba{0.8, 0.8, 0.8, 1.0};
    const bool coloured =
        v.material && (xml_.lines.count(path + ".material.color") != 0 ||
                       xml_.lines.count(fmt::format("material[{}].color", v.material_name)) != 0);
    if (coloured)
      rgba = {v.material->color.r, v.material->color.g, v.material->color.b, v.material->color.a};
    const urdf::Geometry& g = *v.geometry;
    if (g.type == urdf::Geometry::MESH) {
      const auto model = mesh(static_cast<const urdf::Mesh&>(g), path + ".geometry.mesh");
      out.file = model->path;
      // STL has no colours: the URDF material paints it. Other formats keep their own, as in
      // RViz.
      std::string ext = fs::path(model->path).extension().string();
      std::transform(ext.begin(), ext.end(), ext.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (coloured && ext == ".stl") {
        auto painted = std::make_shared<ImportedModel>(*model);
        for (ImportedMesh& m : painted->meshes) m.material.diffuse = rgba;
        out.model = std::move(painted);
      } else {
        out.model = model;
      }
      return out;
    }
    const dynamics::ShapeDef shape = collisionShape(g, Iso::Identity(), true, path + ".geometry");
    out.file = fmt::format("{}#{}", in_.file, path);
    out.model = primitiveModel(shape, path, rgba);
    return out;
  }

  // --- Joints ---
  void makeJoints() {
    const auto bodyOf = [&](const std::string& link) {
      return worldRoot() && headOf(link) == root_ ? dynamics::kWorld
                                                  : out_.links.at(named(headOf(link))).body;
    };
    const auto def = [&](int index) -> const dynamics::BodyDef* {
      if (index == dynamics::kWorld) return nullptr;
      const std::size_t n = scene_.model.bodies.size();
      return static_cast<std::size_t>(index) < n
                 ? &scene_.model.bodies[static_cast<std::size_t>(index)]
                 : &out_.bodies[static_cast<std::size_t>(index) - n].def;
    };
    std::map<std::string, int> index_of;
    for (const JointXml& jx : xml_.joints) {
      const urdf::Joint& j = *model_->joints_.at(jx.name);
      if (!movable(j.type)) continue;
      UrdfRobot::Joint joint;
      joint.line = jx.line;
      dynamics::JointDef& d = joint.def;
      d.name = named(jx.name);
      d.type = j.type == urdf::Joint::PRISMATIC ? dynamics::JointType::Prismatic
                                                : dynamics::JointType::Hinge;
      d.body_a = bodyOf(jx.parent);
      d.body_b = bodyOf(jx.child);
      // Both frames: at the joint origin with x along the axis; frame a fixed in the parent,
      // frame b in the child, coinciding at URDF position zero.
      const Vec3 axis = Vec3(j.axis.x, j.axis.y, j.axis.z).normalized();
      const Iso align = toIso(Quat::FromTwoVectors(Vec3::UnitX(), axis), Vec3::Zero());
      const Iso frame_a =
          link_pose_.at(jx.parent) * toIso(j.parent_to_joint_origin_transform) * align;
      const Iso frame_b = link_pose_.at(jx.child) * align;
      d.frame_a = frameIn(def(d.body_a), frame_a);
      d.frame_b = frameIn(def(d.body_b), frame_b);
      if (j.type != urdf::Joint::CONTINUOUS && j.limits) {
        d.limit_enabled = true;
        d.lower_limit = j.limits->lower;
        d.upper_limit = j.limits->upper;
      }
      if (j.limits) {
        joint.effort = j.limits->effort;
        joint.velocity = j.limits->velocity;
      }
      if (j.dynamics) {
        d.friction.viscous = j.dynamics->damping;
        d.friction.breakaway = j.dynamics->friction;
      }
      const std::string at = fmt::format("joint[{}]", jx.name);
      out_.lines[fmt::format("joints[{}]", d.name)] = jx.line;
      out_.lines[fmt::format("joints[{}].limits", d.name)] = lineOf(at + ".limit");
      out_.lines[fmt::format("joints[{}].friction", d.name)] = lineOf(at + ".dynamics");
      index_of[jx.name] = static_cast<int>(out_.joints.size());
      out_.joints.push_back(std::move(joint));
    }
    for (const JointXml& jx : xml_.joints) {
      const urdf::Joint& j = *model_->joints_.at(jx.name);
      if (!j.mimic) continue;
      UrdfMimic mimic;
      mimic.joint = index_of.at(jx.name);
      mimic.multiplier = j.mimic->multiplier;
      mimic.offset = j.mimic->offset;
      std::string master = j.mimic->joint_name;
      while (const auto& m = model_->joints_.at(master)->mimic) {  // a chain: to its end
        mimic.offset += mimic.multiplier * m->offset;
        mimic.multiplier *= m->multiplier;
        master = m->joint_name;
      }
      mimic.master = index_of.at(master);
      mimic.line = lineOf(fmt::format("joint[{}].mimic", jx.name));
      out_.mimics.push_back(mimic);
    }
    // The root welded to the body it is attached to.
    if (in_.attach && !isStatic(root_) && in_.attach->body != dynamics::kWorld) {
      UrdfRobot::Joint weld;
      weld.def.name = named(root_) + "_attach";
      weld.def.type = dynamics::JointType::Fixed;
      weld.def.body_a = in_.attach->body;
      weld.def.body_b = out_.links.at(named(root_)).body;
      weld.def.frame_a = frameIn(def(weld.def.body_a), link_pose_.at(root_));
      weld.def.frame_b = frameIn(def(weld.def.body_b), link_pose_.at(root_));
      out_.joints.push_back(std::move(weld));
    }
  }

  const UrdfInclude& in_;
  const Scene& scene_;
  const MeshLoader& meshes_;
  XmlIndex xml_;
  CapturedLog log_;
  urdf::ModelInterfaceSharedPtr model_;
  std::string root_;
  int robot_line_ = 0;
  std::map<std::string, double> position_;               // joint -> URDF position at the start
  std::map<std::string, Iso> link_pose_;                 // link -> world pose at the start
  std::map<std::string, const JointXml*> parent_joint_;  // link -> the joint that moves it
  UrdfRobot out_;
};

}  // namespace

UrdfRobot importUrdf(const UrdfInclude& include, const Scene& scene, const MeshLoader& meshes) {
  return Importer(include, scene, meshes).run();
}

}  // namespace detail
}  // namespace sim::engine
