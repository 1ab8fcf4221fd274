// Pins scenes/mf4.yaml: what the loader made of it against the file read independently with
// yaml-cpp (relative poses composed here by adding), the robot's links against the asset generator
// (tools/assetgen: masses, centres of mass, inertias, joint axes) and the joint anchors against the
// link frames of assets/mf4/mf4.glb as the importer reads them. Also that `simtrainer validate`
// accepts the scene and a headless run with a trace has every link in it.
#include "models.h"  // tools/assetgen, compiled into this test

#include <dynamics/model.h>
#include <dynamics/shapes.h>
#include <engine/mesh_import.h>
#include <engine/scene.h>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <sys/wait.h>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

namespace sim::engine {
namespace {

using dynamics::Vec3;

const std::string kSourceDir = SIMTRAINER_SOURCE_DIR;
const std::string kScene = kSourceDir + "/scenes/mf4.yaml";
const std::string kGlb = kSourceDir + "/assets/mf4/mf4.glb";

const std::vector<std::string> kLinks = {"chassis",  "track_left", "track_right", "turret",
                                         "shoulder", "elbow",      "wrist_pitch", "wrist_roll",
                                         "jaw_left", "jaw_right"};

Vec3 vec(const YAML::Node& n) {
  return Vec3(n[0].as<double>(), n[1].as<double>(), n[2].as<double>());
}

// A body's position in the world as the file gives it: its `position`, composed through
// `frame: parent` (the parent of its joint). No MF-4 body is rotated, so composing is adding.
Vec3 worldPosition(const YAML::Node& file, const std::string& name) {
  for (const auto& b : file["bodies"]) {
    if (b["name"].as<std::string>() != name) continue;
    EXPECT_FALSE(b["rpy"] || b["orientation"]) << name;
    const Vec3 position = b["position"] ? vec(b["position"]) : Vec3::Zero();
    if (!b["frame"]) return position;
    EXPECT_EQ(b["frame"].as<std::string>(), "parent") << name;
    for (const auto& j : file["joints"]) {
      if (j["child"].as<std::string>() == name)
        return worldPosition(file, j["parent"].as<std::string>()) + position;
    }
    ADD_FAILURE() << name << ": no joint has it as its child";
  }
  return Vec3::Zero();
}

// A joint's anchor in the world as the file gives it (`frame: parent`: on the parent body).
Vec3 worldAnchor(const YAML::Node& file, const YAML::Node& joint) {
  const Vec3 anchor = vec(joint["anchor"]);
  if (!joint["frame"]) return anchor;
  EXPECT_EQ(joint["frame"].as<std::string>(), "parent");
  return worldPosition(file, joint["parent"].as<std::string>()) + anchor;
}

// Where a joint's frame on the child sits in the world at the start, and its axis.
Vec3 anchorOf(const dynamics::Model& m, const dynamics::JointDef& j) {
  const dynamics::BodyDef& b = m.bodies[j.body_b];
  return b.position_m + b.orientation * j.frame_b.position;
}
Vec3 axisOf(const dynamics::Model& m, const dynamics::JointDef& j) {
  return m.bodies[j.body_b].orientation * (j.frame_b.rotation * Vec3::UnitX());
}

class Mf4Scene : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scene_ = new Scene(loadScene(kScene));
    file_ = new YAML::Node(YAML::LoadFile(kScene));
  }
  static void TearDownTestSuite() {
    delete scene_;
    delete file_;
  }
  static Scene* scene_;
  static YAML::Node* file_;
};
Scene* Mf4Scene::scene_ = nullptr;
YAML::Node* Mf4Scene::file_ = nullptr;

TEST_F(Mf4Scene, BodiesAreWhatTheFileSays) {
  const dynamics::Model& m = scene_->model;
  const YAML::Node bodies = (*file_)["bodies"];
  ASSERT_EQ(m.bodies.size(), bodies.size());
  for (const auto& b : bodies) {
    const std::string name = b["name"].as<std::string>();
    const int i = m.findBody(name);
    ASSERT_GE(i, 0) << name;
    const dynamics::BodyDef& def = m.bodies[i];
    const bool is_static = b["static"] && b["static"].as<bool>();
    EXPECT_EQ(def.is_static, is_static) << name;
    EXPECT_LT((def.position_m - worldPosition(*file_, name)).norm(), 1e-12) << name;
    if (is_static) continue;
    EXPECT_DOUBLE_EQ(def.mass_kg, b["mass"].as<double>()) << name;
    const YAML::Node in = b["inertia"];
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) {
        const double want =
            in[0].IsSequence() ? in[r][c].as<double>() : (r == c ? in[r].as<double>() : 0.0);
        EXPECT_DOUBLE_EQ(def.inertia_kgm2(r, c), want) << name << " I(" << r << "," << c << ")";
      }
    }
    EXPECT_EQ(def.shapes.size(), b["shapes"] ? b["shapes"].size() : 0u) << name;
  }
}

TEST_F(Mf4Scene, JointsAreWhatTheFileSays) {
  const dynamics::Model& m = scene_->model;
  const YAML::Node joints = (*file_)["joints"];
  ASSERT_EQ(m.joints.size(), joints.size());
  for (const auto& j : joints) {
    const std::string name = j["name"].as<std::string>();
    const int i = m.findJoint(name);
    ASSERT_GE(i, 0) << name;
    const dynamics::JointDef& def = m.joints[i];
    EXPECT_EQ(m.bodies[def.body_a].name, j["parent"].as<std::string>()) << name;
    EXPECT_EQ(m.bodies[def.body_b].name, j["child"].as<std::string>()) << name;
    EXPECT_LT((anchorOf(m, def) - worldAnchor(*file_, j)).norm(), 1e-12) << name;
    // The parent's frame coincides with the child's at the start: every joint starts at zero.
    const dynamics::BodyDef& a = m.bodies[def.body_a];
    EXPECT_LT((a.position_m + a.orientation * def.frame_a.position - anchorOf(m, def)).norm(),
              1e-12)
        << name;
    if (j["axis"]) {
      EXPECT_LT((axisOf(m, def) - vec(j["axis"]).normalized()).norm(), 1e-12) << name;
    }
    EXPECT_EQ(def.limit_enabled, static_cast<bool>(j["limits"])) << name;
    if (j["limits"]) {
      EXPECT_DOUBLE_EQ(def.lower_limit, j["limits"][0].as<double>()) << name;
      EXPECT_DOUBLE_EQ(def.upper_limit, j["limits"][1].as<double>()) << name;
    }
  }
}

TEST_F(Mf4Scene, MotorsAreWhatTheFileSays) {
  const dynamics::Model& m = scene_->model;
  const YAML::Node motors = (*file_)["motors"];
  ASSERT_EQ(m.motors.size(), motors.size());
  // Every moving joint of the robot has a motor (or a repeater): SPEC §7.
  for (const char* joint : {"sprocket_left", "sprocket_right", "turret", "shoulder", "elbow",
                            "wrist_pitch", "wrist_roll", "jaw_left"}) {
    bool driven = false;
    for (const auto& mo : m.motors) driven = driven || m.joints[mo.joint].name == joint;
    EXPECT_TRUE(driven) << joint;
  }
  for (const auto& mo : motors) {
    const std::string name = mo["name"].as<std::string>();
    const int i = m.findMotor(name);
    ASSERT_GE(i, 0) << name;
    const dynamics::MotorDef& def = m.motors[i];
    EXPECT_EQ(m.joints[def.joint].name, mo["joint"].as<std::string>()) << name;
    EXPECT_DOUBLE_EQ(def.stall_torque_Nm, mo["Mp"].as<double>()) << name;
    EXPECT_NEAR(def.no_load_speed_radps, mo["w_xx_rpm"].as<double>() * std::numbers::pi / 30.0,
                1e-9)
        << name;
    EXPECT_NEAR(def.rotorInertia(),
                mo["Mp"].as<double>() * mo["t_m"].as<double>() / def.no_load_speed_radps, 1e-15)
        << name;
    EXPECT_DOUBLE_EQ(def.gear_ratio, mo["r"].as<double>()) << name;
    EXPECT_DOUBLE_EQ(def.bearing_friction, mo["b"].as<double>()) << name;
  }
  // The jaws: one motor, the right jaw mirrored through a repeater with k = -1 (SPEC §2.3).
  ASSERT_EQ(m.repeaters.size(), 1u);
  EXPECT_EQ(m.motors[m.repeaters[0].motor].name, "jaws");
  EXPECT_EQ(m.joints[m.repeaters[0].joint].name, "jaw_right");
  EXPECT_DOUBLE_EQ(m.repeaters[0].ratio, -1.0);
}

// The robot's links against the generator's own numbers (uniform density over its solids): the
// file carries the table of assets/README.md, rounded to four significant digits.
TEST_F(Mf4Scene, LinksMatchTheAssetGenerator) {
  const dynamics::Model& m = scene_->model;
  const assetgen::Model robot = assetgen::mf4Robot();
  ASSERT_EQ(robot.links.size(), kLinks.size());
  // The model frame's place in the world: the turret joint's anchor minus the turret's origin.
  const int turret = m.findJoint("turret");
  ASSERT_GE(turret, 0);
  Vec3 origin = anchorOf(m, m.joints[turret]);
  for (const assetgen::Link& link : robot.links) {
    if (link.name == "turret") origin -= link.origin;
  }
  EXPECT_NEAR(origin.z(), 0.0, 1e-12) << "the robot stands on the floor";
  for (const assetgen::Link& link : robot.links) {
    SCOPED_TRACE(link.name);
    const int b = m.findBody(link.name);
    ASSERT_GE(b, 0);
    const dynamics::BodyDef& body = m.bodies[b];
    const assetgen::MassProperties mp = assetgen::massProperties(link.meshes, link.mass);
    EXPECT_DOUBLE_EQ(body.mass_kg, mp.mass);
    EXPECT_LT((body.position_m - (origin + link.origin + mp.com)).norm(), 1e-3);
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) {
        EXPECT_NEAR(body.inertia_kgm2(r, c), mp.inertia(r, c), 1e-3 * mp.inertia.norm() + 1e-6)
            << "I(" << r << "," << c << ")";
      }
    }
    if (link.parent.empty()) continue;  // the floating base
    // The joint that makes this link: anchor at the link frame, axis along the asset's.
    int joint = -1;
    for (std::size_t j = 0; j < m.joints.size(); ++j) {
      if (m.joints[j].body_b == b) joint = static_cast<int>(j);
    }
    ASSERT_GE(joint, 0);
    const dynamics::JointDef& def = m.joints[joint];
    EXPECT_EQ(m.bodies[def.body_a].name, link.parent);
    EXPECT_LT((anchorOf(m, def) - (origin + link.origin)).norm(), 1e-3);
    if (link.joint == "revolute") {
      EXPECT_EQ(def.type, dynamics::JointType::Hinge);
      // Parallel (pitch joints use -y so that a positive angle lifts).
      EXPECT_NEAR(std::abs(axisOf(m, def).dot(link.axis)), 1.0, 1e-12);
    } else {
      EXPECT_EQ(def.type, dynamics::JointType::Fixed);
    }
  }
}

// The joint anchors are the link frames of the committed model file, as the importer reads them
// (y-up glTF, one node per link): visuals attached by node name will sit on their joints.
TEST_F(Mf4Scene, AnchorsAreTheModelFilesLinkFrames) {
  const dynamics::Model& m = scene_->model;
  std::vector<Pose> frames;
  for (const std::string& link : kLinks) {
    MeshImportOptions options;
    options.up = UpAxis::Y;
    options.node = link;
    const ImportedModel model = importMesh(kGlb, options);
    EXPECT_FALSE(model.meshes.empty()) << link;
    frames.push_back(model.frame);
  }
  // Rest pose: every link frame has the model's axes, so the bodies start unrotated.
  for (std::size_t k = 0; k < kLinks.size(); ++k) {
    EXPECT_NEAR(std::abs(frames[k].rotation[0]), 1.0, 1e-6) << kLinks[k];
    EXPECT_TRUE(m.bodies[m.findBody(kLinks[k])].orientation.isApprox(dynamics::Quat::Identity()))
        << kLinks[k];
  }
  // The model frame's place: the turret's anchor minus its link frame; every other anchor must
  // then be its link frame plus the same offset. The chassis (frame at the origin) stands on the
  // floor.
  const int turret = m.findJoint("turret");
  ASSERT_GE(turret, 0);
  const Pose& tf = frames[3];
  const Vec3 origin =
      anchorOf(m, m.joints[turret]) - Vec3(tf.position[0], tf.position[1], tf.position[2]);
  EXPECT_NEAR(origin.z(), 0.0, 1e-6);
  EXPECT_LT(Vec3(frames[0].position[0], frames[0].position[1], frames[0].position[2]).norm(), 1e-6);
  int checked = 0;
  for (std::size_t k = 1; k < kLinks.size(); ++k) {
    const int b = m.findBody(kLinks[k]);
    for (const auto& j : m.joints) {
      if (j.body_b != b) continue;
      const Vec3 want =
          origin + Vec3(frames[k].position[0], frames[k].position[1], frames[k].position[2]);
      // The file stores single-precision floats.
      EXPECT_LT((anchorOf(m, j) - want).norm(), 1e-6) << kLinks[k];
      ++checked;
    }
  }
  EXPECT_EQ(checked, 9);
}

// Corners of a body's collision shapes (boxes and hulls) at its initial pose, world axes.
std::vector<Vec3> shapeCorners(const dynamics::BodyDef& body) {
  std::vector<Vec3> out;
  for (const dynamics::ShapeDef& shape : body.shapes) {
    std::vector<Vec3> corners;
    if (shape.type == dynamics::ShapeType::Box) {
      for (int k = 0; k < 8; ++k) {
        const Vec3 sign((k & 1) ? 1.0 : -1.0, (k & 2) ? 1.0 : -1.0, (k & 4) ? 1.0 : -1.0);
        corners.push_back(shape.half_extents_m.cwiseProduct(sign));
      }
    } else if (shape.type == dynamics::ShapeType::ConvexHull) {
      corners = shape.hull->vertices;
    } else {
      ADD_FAILURE() << body.name << ": unexpected shape type";
    }
    for (const Vec3& c : corners) {
      out.push_back(body.position_m +
                    body.orientation * (shape.pose.position + shape.pose.rotation * c));
    }
  }
  return out;
}

// Vertices of a model file's node in the model frame (placed by the node's frame).
std::vector<Vec3> modelVertices(const std::string& file, const std::string& node) {
  MeshImportOptions options;
  options.up = UpAxis::Y;
  options.node = node;
  const ImportedModel model = importMesh(file, options);
  const auto& p = model.frame.position;
  const auto& q = model.frame.rotation;
  const dynamics::Quat rotation(q[0], q[1], q[2], q[3]);
  std::vector<Vec3> out;
  for (const auto& v : model.allVertices()) {
    out.push_back(Vec3(p[0], p[1], p[2]) + rotation * Vec3(v[0], v[1], v[2]));
  }
  return out;
}

// Every corner of the shapes is a vertex of the model, and both have the same bounds: the shapes
// are the model's boxes and wedge (the files store single-precision floats).
void expectShapesMatchModel(const std::vector<Vec3>& corners, const std::vector<Vec3>& vertices,
                            double tolerance) {
  ASSERT_FALSE(corners.empty());
  ASSERT_FALSE(vertices.empty());
  Vec3 cmin = corners[0], cmax = corners[0], vmin = vertices[0], vmax = vertices[0];
  for (const Vec3& c : corners) {
    cmin = cmin.cwiseMin(c);
    cmax = cmax.cwiseMax(c);
    double nearest = 1e300;
    for (const Vec3& v : vertices) nearest = std::min(nearest, (c - v).norm());
    EXPECT_LT(nearest, tolerance) << "shape corner " << c.transpose() << " is no model vertex";
  }
  for (const Vec3& v : vertices) {
    vmin = vmin.cwiseMin(v);
    vmax = vmax.cwiseMax(v);
  }
  EXPECT_LT((cmin - vmin).norm(), tolerance);
  EXPECT_LT((cmax - vmax).norm(), tolerance);
}

// The site's static bodies and the container collide as their model files look (the site's
// model frame is the world; the container's frame is its bottom centre).
TEST_F(Mf4Scene, SiteAndContainerMatchTheirModelFiles) {
  const dynamics::Model& m = scene_->model;
  const std::string site = kSourceDir + "/assets/site/site.glb";
  for (const char* name : {"floor", "ramp", "platform", "shelf"}) {
    SCOPED_TRACE(name);
    const int b = m.findBody(name);
    ASSERT_GE(b, 0);
    EXPECT_TRUE(m.bodies[b].is_static);
    expectShapesMatchModel(shapeCorners(m.bodies[b]), modelVertices(site, name), 1e-5);
  }
  // The shelf: a top and four legs, as in the generator.
  EXPECT_EQ(m.bodies[m.findBody("shelf")].shapes.size(), 5u);

  const int c = m.findBody("container");
  ASSERT_GE(c, 0);
  const dynamics::BodyDef& container = m.bodies[c];
  const assetgen::Model generated = assetgen::container();
  ASSERT_EQ(generated.links.size(), 1u);
  const assetgen::Link& link = generated.links[0];
  const assetgen::MassProperties mp = assetgen::massProperties(link.meshes, link.mass);
  EXPECT_DOUBLE_EQ(container.mass_kg, mp.mass);
  for (int r = 0; r < 3; ++r) {
    for (int k = 0; k < 3; ++k) {
      EXPECT_NEAR(container.inertia_kgm2(r, k), mp.inertia(r, k), 1e-3 * mp.inertia.norm());
    }
  }
  const Vec3 frame = container.position_m - mp.com;  // where the container's frame stands
  EXPECT_NEAR(frame.z(), 0.0, 1e-3) << "on the floor";
  std::vector<Vec3> corners = shapeCorners(container);
  for (Vec3& corner : corners) corner -= frame;
  // 1 mm: the scene's centre of mass is the table's, rounded to 1 mm.
  expectShapesMatchModel(
      corners, modelVertices(kSourceDir + "/assets/site/container.glb", "container"), 1e-3);
}

struct Outcome {
  int exit_code = -1;
  std::string out;
};

Outcome runProgram(const std::string& args, const std::filesystem::path& out) {
  const std::string command =
      "'" + std::string(SIMTRAINER_EXE) + "' " + args + " >'" + out.string() + "' 2>&1";
  const int status = std::system(command.c_str());
  Outcome o;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  o.out = text.str();
  return o;
}

TEST(Mf4SceneCli, ValidatePasses) {
  const auto out = std::filesystem::temp_directory_path() /
                   ("mf4_validate_" + std::to_string(::getpid()) + ".txt");
  const Outcome o = runProgram("validate '" + kScene + "'", out);
  std::filesystem::remove(out);
  EXPECT_EQ(o.exit_code, 0) << o.out;
}

// A short headless run with a trace: every link of the robot (and the container) is in it, and
// the robot with the pult at rest stands still on the floor, holding its arm (no sag).
TEST(Mf4SceneCli, HeadlessRunTracesEveryLink) {
  const auto dir = std::filesystem::temp_directory_path();
  const auto out = dir / ("mf4_run_" + std::to_string(::getpid()) + ".txt");
  const auto trace = dir / ("mf4_run_" + std::to_string(::getpid()) + ".csv");
  const Outcome o = runProgram(
      "run '" + kScene + "' --headless --duration 2 --trace '" + trace.string() + "'", out);
  std::filesystem::remove(out);
  EXPECT_EQ(o.exit_code, 0) << o.out;
  std::ifstream in(trace);
  std::string header, line, first, last;
  std::getline(in, header);
  int rows = 0;
  while (std::getline(in, line)) {
    if (rows == 0) first = line;
    last = line;
    ++rows;
  }
  std::filesystem::remove(trace);
  EXPECT_EQ(rows, 481);  // t = 0 and 480 steps of 1/240 s
  auto split = [](const std::string& text, char sep) {
    std::vector<std::string> items;
    std::stringstream s(text);
    for (std::string c; std::getline(s, c, sep);) items.push_back(c);
    return items;
  };
  const std::vector<std::string> columns = split(header, ',');
  std::vector<double> start, end;
  for (const auto& v : split(first, ',')) start.push_back(std::stod(v));
  for (const auto& v : split(last, ',')) end.push_back(std::stod(v));
  ASSERT_EQ(start.size(), columns.size());
  ASSERT_EQ(end.size(), columns.size());
  auto column = [&](const std::string& name) -> int {
    for (std::size_t i = 0; i < columns.size(); ++i) {
      if (columns[i] == name) return static_cast<int>(i);
    }
    ADD_FAILURE() << "no column " << name;
    return -1;
  };
  std::vector<std::string> bodies = kLinks;
  bodies.push_back("container");
  for (const std::string& b : bodies) {
    for (const char* f : {"x", "y", "z", "qw", "qx", "qy", "qz"}) column("body." + b + "." + f);
  }
  // Held by the PID loops: within 0.5 mrad of the start after 2 s under gravity (without them
  // the shoulder sags 0.29 rad in these 2 s, at 0.14 rad/s against its motor's back-EMF).
  for (const char* j : {"turret", "shoulder", "elbow", "wrist_pitch", "wrist_roll"}) {
    const int c = column(std::string("joint.") + j + ".angle");
    if (c >= 0) {
      EXPECT_NEAR(end[c], 0.0, 5e-4) << j;
    }
  }
  // The robot and the container stay where they were put; the robot settles onto its tracks'
  // rubber by its weight over the 24 belt points' springs (3 segments of 4 corners per track).
  const Scene scene = loadScene(kScene);
  double robot_kg = 0.0;
  for (const auto& b : scene.model.bodies)
    if (b.name != "container" && !b.is_static) robot_kg += b.mass_kg;
  const auto& materials = scene.model.materials;
  const auto track = std::find_if(materials.begin(), materials.end(),
                                  [](const auto& m) { return m.name == "track"; });
  ASSERT_NE(track, materials.end());
  const double sinkage_m = robot_kg * 9.81 / 24.0 / track->contact_stiffness_npm;
  EXPECT_GT(sinkage_m, 1e-3);
  for (const char* f : {"body.chassis.x", "body.chassis.y", "body.chassis.z", "body.container.x",
                        "body.container.y", "body.container.z"}) {
    const int c = column(f);
    if (c >= 0) {
      const double settled = std::string(f) == "body.chassis.z" ? start[c] - sinkage_m : start[c];
      EXPECT_NEAR(end[c], settled, 1e-3) << f;
    }
  }
}

}  // namespace
}  // namespace sim::engine
