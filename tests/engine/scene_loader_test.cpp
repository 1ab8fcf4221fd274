// Pins engine/src/scene_loader.cpp: the scene format of docs/scenes.md, its error messages
// (file, line, key) and --set overrides.
#include <dynamics/model.h>
#include <dynamics/shapes.h>
#include <engine/scene.h>

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace sim::engine {
namespace {

using dynamics::Vec3;

const std::string kSourceDir = SIMTRAINER_SOURCE_DIR;
const std::string kWg7152 = kSourceDir + "/scenes/wg7152.yaml";

// A minimal valid scene; tests edit copies of it. Line numbers below refer to this text.
const std::string kScene = R"(solver:
  time_step: 0.01
bodies:
  - name: link
    mass: 2.0
    box: [1.0, 0.2, 0.1]
    position: [1, 0, 0]
joints:
  - name: hinge
    type: hinge
    parent: world
    child: link
    anchor: [0, 0, 0]
    axis: [0, 1, 0]
motors:
  - name: drive
    joint: hinge
    Mp: 0.2
    w_xx: 5.0
    t_m: 1.0
    r: 50
    u: 1.0
)";

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// Expects a SceneError naming test.yaml, the line and the key, with `words` in the message.
void expectSceneError(const std::string& yaml, int line, const std::string& key,
                      const std::string& words, const std::vector<Override>& overrides = {}) {
  try {
    loadSceneFromString(yaml, "test.yaml", overrides);
    ADD_FAILURE() << "no error; expected " << key << ": " << words;
  } catch (const SceneError& e) {
    EXPECT_EQ(e.file(), "test.yaml");
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_EQ(e.key(), key) << e.what();
    EXPECT_NE(e.message().find(words), std::string::npos) << e.what();
    // what() is the one-line form "file:line: key: message".
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    if (line > 0) {
      EXPECT_EQ(std::string(e.what()).rfind("test.yaml:" + std::to_string(line) + ": ", 0), 0u)
          << e.what();
    }
  }
}

TEST(SceneLoader, MinimalSceneConverts) {
  const Scene scene = loadSceneFromString(kScene, "test.yaml");
  ASSERT_EQ(scene.model.bodies.size(), 1u);
  const auto& body = scene.model.bodies[0];
  EXPECT_EQ(body.name, "link");
  EXPECT_DOUBLE_EQ(body.mass_kg, 2.0);
  // Solid box: Ixx = m (y^2 + z^2) / 12, ...
  EXPECT_DOUBLE_EQ(body.inertia_kgm2(0, 0), 2.0 * (0.04 + 0.01) / 12.0);
  EXPECT_DOUBLE_EQ(body.inertia_kgm2(1, 1), 2.0 * (1.0 + 0.01) / 12.0);
  EXPECT_DOUBLE_EQ(body.inertia_kgm2(2, 2), 2.0 * (1.0 + 0.04) / 12.0);
  EXPECT_EQ(scene.looks[0].box_size_m[0], 1.0);

  // Joint frames: x-axis along the world axis, origins at the anchor, coinciding at start.
  ASSERT_EQ(scene.model.joints.size(), 1u);
  const auto& joint = scene.model.joints[0];
  EXPECT_EQ(joint.type, dynamics::JointType::Hinge);
  EXPECT_EQ(joint.body_a, dynamics::kWorld);
  EXPECT_EQ(joint.body_b, 0);
  EXPECT_TRUE((joint.frame_a.rotation * Vec3::UnitX()).isApprox(Vec3::UnitY(), 1e-12));
  EXPECT_TRUE(joint.frame_a.position.isZero(1e-15));
  const Vec3 anchor_b = body.orientation * joint.frame_b.position + body.position_m;
  EXPECT_TRUE(anchor_b.isZero(1e-15));
  EXPECT_TRUE(
      (body.orientation * joint.frame_b.rotation * Vec3::UnitX()).isApprox(Vec3::UnitY(), 1e-12));

  ASSERT_EQ(scene.model.motors.size(), 1u);
  const auto& motor = scene.model.motors[0];
  EXPECT_EQ(motor.joint, 0);
  EXPECT_DOUBLE_EQ(motor.stall_torque_Nm, 0.2);
  EXPECT_DOUBLE_EQ(motor.no_load_speed_radps, 5.0);
  EXPECT_DOUBLE_EQ(motor.time_constant_s, 1.0);
  EXPECT_FALSE(motor.rotor_inertia_kgm2.has_value());
  EXPECT_DOUBLE_EQ(motor.gear_ratio, 50.0);
  EXPECT_DOUBLE_EQ(motor.initial_voltage, 1.0);
  EXPECT_EQ(scene.name, "test");
}

TEST(SceneLoader, Wg7152MatchesSpec) {
  const Scene scene = loadScene(kWg7152);
  ASSERT_EQ(scene.model.bodies.size(), 1u);
  ASSERT_EQ(scene.model.joints.size(), 1u);
  ASSERT_EQ(scene.model.motors.size(), 1u);
  const auto& body = scene.model.bodies[0];
  const auto& joint = scene.model.joints[0];
  const auto& motor = scene.model.motors[0];

  // Hinge about the world z axis through the centre of mass; I_L = 30.833 about that axis.
  const Vec3 axis = body.orientation * joint.frame_b.rotation * Vec3::UnitX();
  EXPECT_TRUE(axis.isApprox(Vec3::UnitZ(), 1e-12));
  EXPECT_TRUE(joint.frame_b.position.isZero(1e-15));
  EXPECT_DOUBLE_EQ(axis.dot(body.inertia_kgm2 * axis), 30.833);
  EXPECT_EQ(joint.body_a, dynamics::kWorld);

  // Passport data of SPEC §2.4.
  EXPECT_DOUBLE_EQ(motor.stall_torque_Nm, 0.2);
  EXPECT_NEAR(motor.no_load_speed_radps, 5.131268, 1e-6);
  EXPECT_DOUBLE_EQ(motor.time_constant_s, 1.0);
  EXPECT_DOUBLE_EQ(motor.gear_ratio, 50.0);
  EXPECT_DOUBLE_EQ(motor.bearing_friction, 0.0);
  EXPECT_DOUBLE_EQ(motor.initial_voltage, 1.0);
  EXPECT_DOUBLE_EQ(scene.model.solver.time_step_s, 0.01);

  // The paper's derived values: w_L^max = w_xx / r, T = (I_L + r^2 I_m) w_xx / (r^2 Mp).
  const double r = motor.gear_ratio;
  EXPECT_NEAR(motor.no_load_speed_radps / r, 0.1026, 5e-5);
  const double T = (30.833 + r * r * motor.rotorInertia()) * motor.no_load_speed_radps /
                   (r * r * motor.stall_torque_Nm);
  EXPECT_NEAR(T, 1.3164, 5e-5);
}

TEST(SceneLoader, SetOverridesReachTheModel) {
  const Scene scene =
      loadScene(kWg7152, {parseOverride("motors.drive.t_m=0.5"), parseOverride("solver.substeps=4"),
                          parseOverride("bodies.link.position.2=1.5"),
                          parseOverride("solver.velocity_tolerance=1e-12")});
  EXPECT_DOUBLE_EQ(scene.model.motors[0].time_constant_s, 0.5);
  EXPECT_EQ(scene.model.solver.substeps, 4);
  EXPECT_DOUBLE_EQ(scene.model.bodies[0].position_m.z(), 1.5);
  EXPECT_DOUBLE_EQ(scene.model.solver.velocity_tolerance, 1e-12);
}

TEST(SceneLoader, SetAddsAnAbsentOptionalKey) {
  const Scene scene =
      loadSceneFromString(kScene, "test.yaml", {parseOverride("motors.drive.b=0.3")});
  EXPECT_DOUBLE_EQ(scene.model.motors[0].bearing_friction, 0.3);
}

TEST(SceneLoader, InertiaFormsAndRpm) {
  std::string yaml = replace(
      kScene, "    box: [1.0, 0.2, 0.1]\n",
      "    inertia: [[1, 0, 0], [0, 2, 0], [0, 0, 3]]\n    rpy: [0, 0, 1.5707963267948966]\n");
  yaml = replace(yaml, "w_xx: 5.0", "w_xx_rpm: 60");
  yaml = replace(yaml, "t_m: 1.0", "I_m: 0.01");
  const Scene scene = loadSceneFromString(yaml, "test.yaml");
  EXPECT_DOUBLE_EQ(scene.model.bodies[0].inertia_kgm2(2, 2), 3.0);
  EXPECT_TRUE((scene.model.bodies[0].orientation * Vec3::UnitX()).isApprox(Vec3::UnitY(), 1e-12));
  EXPECT_NEAR(scene.model.motors[0].no_load_speed_radps, 2.0 * M_PI, 1e-12);
  EXPECT_DOUBLE_EQ(scene.model.motors[0].rotorInertia(), 0.01);
}

// A flexure with the LS preset (seed 001 Table 1: a = 0.64) on a 40 mm leaf; lines as numbered.
const std::string kFlexure = R"(bodies:
  - name: lever
    mass: 0.02
    box: [0.12, 0.01, 0.005]
    position: [0.1, 0, 0]
joints:
  - name: leaf
    type: flexure
    parent: world
    child: lever
    anchor: [0, 0, 0]
    axis: [0, 1, 0]
    flexure:
      preset: ls
      length: 0.04
      k_x: 2.0e6
      k_y: 900
      k_z: 0.3
      damping: [0.05, 0.0005]
)";

TEST(SceneLoader, FlexurePresetPlacesTheComplianceCentre) {
  const Scene scene = loadSceneFromString(kFlexure, "test.yaml");
  const dynamics::JointDef& j = scene.model.joints.at(0);
  EXPECT_EQ(j.type, dynamics::JointType::Flexure);
  // Centre a L = 0.64 * 0.04 = 25.6 mm from the root along the default direction (toward the
  // child's reference point, world x); frame x = axis (world y), frame y = along (world x).
  EXPECT_NEAR((j.frame_a.position - Vec3(0.0256, 0, 0)).norm(), 0.0, 1e-12);
  const dynamics::Mat3 r = j.frame_a.rotation.toRotationMatrix();
  EXPECT_NEAR((r.col(0) - Vec3::UnitY()).norm(), 0.0, 1e-12);
  EXPECT_NEAR((r.col(1) - Vec3::UnitX()).norm(), 0.0, 1e-12);
  EXPECT_EQ(j.flexure.k_x.stiffness, 2.0e6);
  EXPECT_EQ(j.flexure.damping_angular, 0.0005);
  // PRB variant: pivot at (1 - lambda) L = 0.22 * 0.04 = 8.8 mm.
  std::string prb = replace(kFlexure, "      k_x: 2.0e6\n      k_y: 900\n", "      model: prb\n");
  const Scene s2 = loadSceneFromString(prb, "test.yaml");
  EXPECT_EQ(s2.model.joints[0].flexure.model, dynamics::FlexureModel::TorsionSpring);
  EXPECT_NEAR(s2.model.joints[0].frame_a.position.x(), 0.0088, 1e-12);
}

TEST(SceneLoader, FlexureErrorsNameTheKey) {
  expectSceneError(replace(kFlexure, "preset: ls", "preset: lx"), 14, "joints[leaf].flexure.preset",
                   "x_hinge, ls, trls2x or tfch");
  expectSceneError(replace(kFlexure, "      length: 0.04\n", ""), 14, "joints[leaf].flexure.length",
                   "length L is needed");
  expectSceneError(replace(kFlexure, "      k_y: 900\n", ""), 14, "joints[leaf].flexure.k_y",
                   "missing");
  expectSceneError(replace(kFlexure, "k_z: 0.3", "k_z: -0.3"), 18, "joints[leaf].flexure.k_z",
                   "positive");
  expectSceneError(replace(kFlexure, "axis: [0, 1, 0]", "axis: [1, 0, 0]"), 14,
                   "joints[leaf].flexure.direction", "not parallel to the axis");
  expectSceneError(replace(kFlexure, "      preset: ls\n", "      preset: ls\n      lambda: 0.5\n"),
                   15, "joints[leaf].flexure.lambda", "model: prb");
  expectSceneError(replace(kFlexure, "    type: flexure\n", "    type: hinge\n"), 13,
                   "joints[leaf].flexure", "only for type: flexure");
}

TEST(SceneLoader, UnknownKeyIsAnError) {
  expectSceneError(replace(kScene, "    mass: 2.0", "    mas: 2.0"), 5, "bodies[link].mas",
                   "unknown key");
  expectSceneError(kScene + "extra: 1\n", 23, "extra", "unknown key");
}

TEST(SceneLoader, WrongTypeIsAnError) {
  expectSceneError(replace(kScene, "    mass: 2.0", "    mass: heavy"), 5, "bodies[link].mass",
                   "expected a number");
  expectSceneError(replace(kScene, "    position: [1, 0, 0]", "    position: [1, 0]"), 7,
                   "bodies[link].position", "3 numbers");
  expectSceneError(replace(kScene, "    type: hinge", "    type: hinged"), 10, "joints[hinge].type",
                   "expected fixed, ball, hinge, prismatic or flexure");
}

TEST(SceneLoader, MissingRequiredKeyIsAnError) {
  expectSceneError(replace(kScene, "    Mp: 0.2\n", ""), 16, "motors[drive].Mp", "missing");
  expectSceneError(replace(kScene, "    t_m: 1.0\n", ""), 16, "motors[drive].t_m", "missing");
}

TEST(SceneLoader, MissingBodyIsAnError) {
  expectSceneError(replace(kScene, "    child: link", "    child: arm"), 12, "joints[hinge].child",
                   "no body named \"arm\"");
  expectSceneError(replace(kScene, "    joint: hinge", "    joint: elbow"), 17,
                   "motors[drive].joint", "no joint named \"elbow\"");
}

TEST(SceneLoader, NegativeMassIsReportedWithItsLine) {
  try {
    loadSceneFromString(replace(kScene, "    mass: 2.0", "    mass: -2.0"), "test.yaml");
    ADD_FAILURE() << "no error";
  } catch (const SceneInvalid& e) {
    ASSERT_FALSE(e.errors().empty());
    const SceneError& error = e.errors()[0];
    EXPECT_EQ(error.file(), "test.yaml");
    EXPECT_EQ(error.key(), "bodies[link].mass") << e.what();
    EXPECT_EQ(error.line(), 5) << e.what();
  }
}

TEST(SceneLoader, YamlSyntaxErrorHasALine) {
  try {
    loadSceneFromString(replace(kScene, "    r: 50", "    r: [50"), "test.yaml");
    ADD_FAILURE() << "no error";
  } catch (const SceneError& e) {
    EXPECT_EQ(e.file(), "test.yaml");
    EXPECT_GT(e.line(), 0) << e.what();
  }
}

TEST(SceneLoader, MissingFileIsAnError) {
  try {
    loadScene(kSourceDir + "/scenes/no_such_scene.yaml");
    ADD_FAILURE() << "no error";
  } catch (const SceneError& e) {
    EXPECT_EQ(e.file(), kSourceDir + "/scenes/no_such_scene.yaml");
    EXPECT_NE(e.message().find("cannot open"), std::string::npos);
  }
}

TEST(SceneLoader, BadSetIsAnError) {
  expectSceneError(kScene, 0, "--set motors.nosuch.t_m", "no item named \"nosuch\"",
                   {parseOverride("motors.nosuch.t_m=0.5")});
  expectSceneError(kScene, 0, "--set solvr.time_step", "no key \"solvr\"",
                   {parseOverride("solvr.time_step=0.5")});
  expectSceneError(kScene, 17, "--set motors.drive.joint", "is not a number",
                   {parseOverride("motors.drive.joint=1")});
  expectSceneError(kScene, 0, "motors[drive].t_mm", "added by --set",
                   {parseOverride("motors.drive.t_mm=1")});
  EXPECT_THROW(parseOverride("motors.drive.t_m"), SceneError);
  EXPECT_THROW(parseOverride("motors.drive.t_m=fast"), SceneError);
  EXPECT_THROW(parseOverride("=1"), SceneError);
}

// An absurd time step (issue 31: numerical faults) is refused at load, naming the key's line: one
// longer than a frame would run the world faster than the wall clock, one that needs more than
// 10,000 steps a frame cannot keep real time. The default frame rate is 60 Hz.
TEST(SceneLoader, TimeStepMustFitTheFrame) {
  expectSceneError(kScene, 2, "solver.time_step", "at most one frame (1/60 s)",
                   {parseOverride("solver.time_step=10")});
  expectSceneError(kScene, 2, "solver.time_step", "at least 1/10000 of it",
                   {parseOverride("solver.time_step=1e-9")});
  EXPECT_NO_THROW(
      loadSceneFromString(kScene, "test.yaml", {parseOverride("solver.time_step=2e-6")}));
  EXPECT_NO_THROW(loadSceneFromString(kScene, "test.yaml",
                                      {parseOverride("solver.time_step=0.016666666666666666")}));
}

// A scene with materials, contact settings and every kind of shape. Line numbers below refer to
// this text.
const std::string kShapes = R"(materials:
  - name: default
    friction: 0.8
  - name: rubber
    friction: 1.1
    restitution: 0.3
    torsion_radius: 0.02
contact:
  margin: 0.02
  slop: 0.001
  restitution_threshold: 0.2
  max_position_correction: 0.1
bodies:
  - name: ground
    static: true
    shapes:
      - type: plane
        material: rubber
  - name: box
    mass: 2.0
    box: [0.4, 0.2, 0.1]
    position: [0, 0, 1]
    shapes:
      - type: box
        size: [0.4, 0.2, 0.1]
      - type: sphere
        radius: 0.05
        position: [0.2, 0, 0]
        material: rubber
        group: 2
        mask: 4294967295
      - type: capsule
        radius: 0.03
        half_length: 0.1
        rpy: [1.5707963267948966, 0, 0]
        belt:
          motor: drive
          direction: [2, 0, 0]
          m_per_rad: 0.001
  - name: lid
    mass: 1.0
    box: [0.4, 0.2, 0.02]
    position: [0, 0, 1.1]
    collide: true
joints:
  - name: hinge
    type: hinge
    parent: box
    child: lid
    axis: [0, 1, 0]
    collide_connected: true
motors:
  - name: drive
    joint: hinge
    Mp: 0.2
    w_xx: 5.0
    t_m: 1.0
)";

// Expects exactly `text` as what() ("file:line: key: message").
void expectErrorText(const std::string& yaml, const std::string& text,
                     const std::vector<Override>& overrides = {}) {
  try {
    loadSceneFromString(yaml, "test.yaml", overrides);
    ADD_FAILURE() << "no error; expected " << text;
  } catch (const SceneError& e) {
    EXPECT_EQ(std::string(e.what()), text);
  }
}

// Expects dynamics::validate() to reject the scene with `key` at `line` among its errors.
void expectInvalid(const std::string& yaml, int line, const std::string& key,
                   const std::vector<Override>& overrides = {}) {
  try {
    loadSceneFromString(yaml, "test.yaml", overrides);
    ADD_FAILURE() << "no error; expected " << key;
  } catch (const SceneInvalid& e) {
    bool found = false;
    for (const SceneError& error : e.errors()) {
      if (error.key() != key) continue;
      found = true;
      EXPECT_EQ(error.file(), "test.yaml");
      EXPECT_EQ(error.line(), line) << e.what();
    }
    EXPECT_TRUE(found) << e.what();
  }
}

TEST(SceneLoader, ShapesMaterialsAndContact) {
  const Scene scene = loadSceneFromString(kShapes, "test.yaml");
  const dynamics::Model& model = scene.model;

  // "default" redefines material 0; others follow in file order.
  ASSERT_EQ(model.materials.size(), 2u);
  EXPECT_EQ(model.materials[0].name, "default");
  EXPECT_DOUBLE_EQ(model.materials[0].friction, 0.8);
  EXPECT_DOUBLE_EQ(model.materials[0].restitution, 0.0);
  EXPECT_EQ(model.materials[1].name, "rubber");
  EXPECT_DOUBLE_EQ(model.materials[1].friction, 1.1);
  EXPECT_DOUBLE_EQ(model.materials[1].restitution, 0.3);
  EXPECT_DOUBLE_EQ(model.materials[1].torsion_radius_m, 0.02);

  EXPECT_DOUBLE_EQ(model.contact.margin_m, 0.02);
  EXPECT_DOUBLE_EQ(model.contact.slop_m, 0.001);
  EXPECT_DOUBLE_EQ(model.contact.restitution_threshold_mps, 0.2);
  EXPECT_DOUBLE_EQ(model.contact.max_position_correction_m, 0.1);
  EXPECT_TRUE(model.contact.sleep_enabled);  // default

  ASSERT_EQ(model.bodies.size(), 3u);
  const auto& ground = model.bodies[0].shapes;
  ASSERT_EQ(ground.size(), 1u);
  EXPECT_EQ(ground[0].type, dynamics::ShapeType::Plane);
  EXPECT_EQ(ground[0].material, 1);
  EXPECT_TRUE(ground[0].pose.position.isZero(0.0));

  const auto& shapes = model.bodies[1].shapes;
  ASSERT_EQ(shapes.size(), 3u);
  EXPECT_EQ(shapes[0].type, dynamics::ShapeType::Box);
  EXPECT_TRUE(shapes[0].half_extents_m.isApprox(Vec3(0.2, 0.1, 0.05), 1e-15));  // size / 2
  EXPECT_EQ(shapes[0].material, 0);
  EXPECT_EQ(shapes[0].group, 1u);  // defaults
  EXPECT_EQ(shapes[0].mask, 0xffffffffu);
  EXPECT_EQ(shapes[0].belt_motor, -1);

  EXPECT_EQ(shapes[1].type, dynamics::ShapeType::Sphere);
  EXPECT_DOUBLE_EQ(shapes[1].radius_m, 0.05);
  EXPECT_TRUE(shapes[1].pose.position.isApprox(Vec3(0.2, 0.0, 0.0), 1e-15));
  EXPECT_EQ(shapes[1].material, 1);
  EXPECT_EQ(shapes[1].group, 2u);
  EXPECT_EQ(shapes[1].mask, 0xffffffffu);

  EXPECT_EQ(shapes[2].type, dynamics::ShapeType::Capsule);
  EXPECT_DOUBLE_EQ(shapes[2].radius_m, 0.03);
  EXPECT_DOUBLE_EQ(shapes[2].half_length_m, 0.1);
  // rpy as for bodies: roll by 90 degrees turns the capsule's z axis to -y.
  EXPECT_TRUE((shapes[2].pose.rotation * Vec3::UnitZ()).isApprox(-Vec3::UnitY(), 1e-12));
  EXPECT_EQ(shapes[2].belt_motor, 0);
  EXPECT_TRUE(shapes[2].belt_direction.isApprox(Vec3::UnitX(), 1e-15));  // normalised
  EXPECT_DOUBLE_EQ(shapes[2].belt_m_per_rad, 0.001);

  // collide: true adds one box shape of the body's box.
  const auto& lid = model.bodies[2].shapes;
  ASSERT_EQ(lid.size(), 1u);
  EXPECT_EQ(lid[0].type, dynamics::ShapeType::Box);
  EXPECT_TRUE(lid[0].half_extents_m.isApprox(Vec3(0.2, 0.1, 0.01), 1e-15));
  EXPECT_EQ(lid[0].material, 0);

  ASSERT_EQ(model.joints.size(), 1u);
  EXPECT_TRUE(model.joints[0].collide_connected);
}

TEST(SceneLoader, BoxAloneGivesNoCollisionShape) {
  // Backward compatibility: `box` is for inertia and looks only.
  const Scene scene = loadSceneFromString(kScene, "test.yaml");
  EXPECT_TRUE(scene.model.bodies[0].shapes.empty());
  EXPECT_FALSE(scene.model.joints[0].collide_connected);
  EXPECT_EQ(scene.model.materials.size(), 1u);
  EXPECT_TRUE(loadScene(kWg7152).model.bodies[0].shapes.empty());

  const Scene off = loadSceneFromString(replace(kScene, "    box: [1.0, 0.2, 0.1]\n",
                                                "    box: [1.0, 0.2, 0.1]\n    collide: false\n"),
                                        "test.yaml");
  EXPECT_TRUE(off.model.bodies[0].shapes.empty());
}

TEST(SceneLoader, BoxStackScene) {
  const Scene scene = loadScene(kSourceDir + "/scenes/box_stack.yaml");
  const dynamics::Model& model = scene.model;
  EXPECT_DOUBLE_EQ(model.solver.time_step_s, 1.0 / 240.0);
  EXPECT_EQ(model.solver.velocity_iterations, 20);
  EXPECT_EQ(model.solver.position_iterations, 2);
  const int wood = 1;
  ASSERT_EQ(model.materials.size(), 2u);
  EXPECT_EQ(model.materials[wood].name, "wood");
  EXPECT_DOUBLE_EQ(model.materials[wood].friction, 0.5);

  ASSERT_EQ(model.bodies.size(), 6u);
  const auto& ground = model.bodies[0];
  EXPECT_TRUE(ground.is_static);
  ASSERT_EQ(ground.shapes.size(), 1u);
  EXPECT_EQ(ground.shapes[0].type, dynamics::ShapeType::Plane);
  EXPECT_EQ(ground.shapes[0].material, wood);
  for (std::size_t i = 1; i < 6; ++i) {
    const auto& box = model.bodies[i];
    EXPECT_FALSE(box.is_static);
    EXPECT_DOUBLE_EQ(box.mass_kg, 1.0);
    EXPECT_NEAR(box.position_m.z(), 0.2 * static_cast<double>(i) - 0.1, 1e-15) << box.name;
    ASSERT_EQ(box.shapes.size(), 1u);
    EXPECT_EQ(box.shapes[0].type, dynamics::ShapeType::Box);
    EXPECT_TRUE(box.shapes[0].half_extents_m.isApprox(Vec3::Constant(0.1), 1e-15));
    EXPECT_EQ(box.shapes[0].material, wood);
  }
}

TEST(SceneLoader, SetReachesShapesMaterialsAndContact) {
  const Scene scene = loadSceneFromString(
      kShapes, "test.yaml",
      {parseOverride("materials.default.friction=0.2"),
       parseOverride("materials.rubber.restitution=0.5"), parseOverride("contact.margin=0.05"),
       parseOverride("bodies.box.shapes.1.radius=0.07"),
       parseOverride("bodies.box.shapes.0.size.2=0.3"),
       parseOverride("bodies.box.shapes.0.group=8"),  // absent key: added
       parseOverride("bodies.box.shapes.2.belt.m_per_rad=0.002")});
  const dynamics::Model& model = scene.model;
  EXPECT_DOUBLE_EQ(model.materials[0].friction, 0.2);
  EXPECT_DOUBLE_EQ(model.materials[1].restitution, 0.5);
  EXPECT_DOUBLE_EQ(model.contact.margin_m, 0.05);
  EXPECT_DOUBLE_EQ(model.bodies[1].shapes[1].radius_m, 0.07);
  EXPECT_DOUBLE_EQ(model.bodies[1].shapes[0].half_extents_m.z(), 0.15);
  EXPECT_EQ(model.bodies[1].shapes[0].group, 8u);
  EXPECT_DOUBLE_EQ(model.bodies[1].shapes[2].belt_m_per_rad, 0.002);

  const Scene stack = loadScene(kSourceDir + "/scenes/box_stack.yaml",
                                {parseOverride("materials.wood.friction=0.1")});
  EXPECT_DOUBLE_EQ(stack.model.materials[1].friction, 0.1);
}

TEST(SceneLoader, BadSetOnShapesIsAnError) {
  expectErrorText(
      kShapes,
      "test.yaml: --set bodies.box.shapes.5.radius: no item named \"5\" in \"bodies.box.shapes\"",
      {parseOverride("bodies.box.shapes.5.radius=1")});
  expectErrorText(kShapes,
                  "test.yaml: --set materials.steel.friction: no item named \"steel\" in "
                  "\"materials\"",
                  {parseOverride("materials.steel.friction=1")});
  expectErrorText(kShapes,
                  "test.yaml: bodies[box].shapes[0].radius: not used by a box shape (give size) "
                  "(added by --set)",
                  {parseOverride("bodies.box.shapes.0.radius=0.1")});
  expectErrorText(kShapes,
                  "test.yaml:18: --set bodies.ground.shapes.0.material: \"bodies.ground.shapes.0."
                  "material\" is not a number or true/false (it is \"rubber\")",
                  {parseOverride("bodies.ground.shapes.0.material=1")});
}

// Cylinders, hulls and meshes: their keys, the built geometry, and errors naming line and key.
const std::string kNewShapes = R"(bodies:
  - name: ground
    static: true
    shapes:
      - type: mesh
        vertices: [[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]]
        triangles: [[0, 1, 2], [0, 2, 3]]
  - name: can
    mass: 1.0
    box: [0.1, 0.1, 0.2]
    position: [0, 0, 1]
    shapes:
      - type: cylinder
        radius: 0.05
        half_length: 0.1
      - type: hull
        points: [[0, 0, 0], [0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1], [0.02, 0.02, 0.02]]
)";

TEST(SceneLoader, CylinderHullAndMeshShapes) {
  const Scene scene = loadSceneFromString(kNewShapes, "test.yaml");
  const auto& ground = scene.model.bodies[0].shapes[0];
  ASSERT_EQ(ground.type, dynamics::ShapeType::TriangleMesh);
  ASSERT_TRUE(ground.mesh);
  EXPECT_EQ(ground.mesh->triangles.size(), 2u);
  const auto& can = scene.model.bodies[1].shapes;
  EXPECT_EQ(can[0].type, dynamics::ShapeType::Cylinder);
  EXPECT_DOUBLE_EQ(can[0].radius_m, 0.05);
  EXPECT_DOUBLE_EQ(can[0].half_length_m, 0.1);
  ASSERT_EQ(can[1].type, dynamics::ShapeType::ConvexHull);
  ASSERT_TRUE(can[1].hull);
  EXPECT_EQ(can[1].hull->vertices.size(), 4u);  // the interior point is dropped
  EXPECT_EQ(can[1].hull->faces.size(), 4u);

  expectErrorText(replace(kNewShapes, "[0, 2, 3]]", "[0, 2, 4]]"),
                  "test.yaml:7: bodies[ground].shapes[0].triangles[1][2]: vertex index 4 out of "
                  "range (the mesh has 4 vertices, 0 to 3)");
  expectErrorText(replace(kNewShapes, "[0, 2, 3]]", "[0, 2]]"),
                  "test.yaml:7: bodies[ground].shapes[0].triangles[1]: expected 3 vertex indices "
                  "[i, j, k], got a list of 2");
  expectErrorText(
      replace(kNewShapes, "[0, 0, 0.1], [0.02, 0.02, 0.02]", "[0.1, 0.1, 0], [0.02, 0.02, 0]"),
      "test.yaml:17: bodies[can].shapes[1].points: degenerate point cloud: all points "
      "lie in one plane (a hull needs 4 points that span a volume)");
  expectErrorText(replace(kNewShapes, "        half_length: 0.1\n", ""),
                  "test.yaml:13: bodies[can].shapes[0].half_length: missing (required for a "
                  "cylinder)");
  expectErrorText(replace(kNewShapes, "half_length: 0.1", "half_length: 0"),
                  "test.yaml:15: bodies[can].shapes[0].half_length: expected a number > 0, got 0");
  expectErrorText(replace(kNewShapes, "        radius: 0.05\n",
                          "        radius: 0.05\n        points: [[0, 0, 0]]\n"),
                  "test.yaml:15: bodies[can].shapes[0].points: not used by a cylinder shape (give "
                  "radius)");
  expectErrorText(replace(kNewShapes, "    static: true\n", "    mass: 1.0\n    box: [1, 1, 1]\n"),
                  "test.yaml:6: bodies[ground].shapes[0].type: a mesh may only belong to a static "
                  "body (static: true)");
}

TEST(SceneLoader, BadShapeIsAnError) {
  // Bad type.
  expectErrorText(replace(kShapes, "      - type: sphere", "      - type: cone"),
                  "test.yaml:26: bodies[box].shapes[1].type: expected sphere, box, capsule, "
                  "cylinder, hull, mesh or plane, got \"cone\"");
  expectSceneError(replace(kShapes, "        size: [0.4, 0.2, 0.1]\n", "        size: 1\n"), 25,
                   "bodies[box].shapes[0].size", "3 numbers");
  expectSceneError(replace(kShapes, "      - type: box\n        size:", "      - size:"), 24,
                   "bodies[box].shapes[0].type", "missing (required)");
  // Missing dimensions (errors at the shape's first line).
  expectErrorText(replace(kShapes, "        radius: 0.05\n", ""),
                  "test.yaml:26: bodies[box].shapes[1].radius: missing (required for a sphere)");
  expectErrorText(replace(kShapes, "        radius: 0.03\n", ""),
                  "test.yaml:32: bodies[box].shapes[2].radius: missing (required for a capsule)");
  expectErrorText(replace(kShapes, "        half_length: 0.1\n", ""),
                  "test.yaml:32: bodies[box].shapes[2].half_length: missing (required for a "
                  "capsule)");
  expectErrorText(replace(kShapes, "        size: [0.4, 0.2, 0.1]\n", ""),
                  "test.yaml:24: bodies[box].shapes[0].size: missing (required for a box)");
  // Bad dimensions.
  expectErrorText(replace(kShapes, "        radius: 0.05", "        radius: -0.05"),
                  "test.yaml:27: bodies[box].shapes[1].radius: expected a positive number, got "
                  "-0.05");
  expectErrorText(replace(kShapes, "        half_length: 0.1", "        half_length: -0.1"),
                  "test.yaml:34: bodies[box].shapes[2].half_length: expected a number >= 0, got "
                  "-0.1");
  expectErrorText(replace(kShapes, "        size: [0.4, 0.2, 0.1]", "        size: [0.4, 0, 0.1]"),
                  "test.yaml:25: bodies[box].shapes[0].size: edges must be positive");
  // Keys of another type.
  expectErrorText(replace(kShapes, "        radius: 0.05", "        size: [1, 1, 1]"),
                  "test.yaml:27: bodies[box].shapes[1].size: not used by a sphere shape (give "
                  "radius)");
  expectErrorText(replace(kShapes, "        material: rubber\n  - name: box",
                          "        radius: 1\n  - name: box"),
                  "test.yaml:18: bodies[ground].shapes[0].radius: not used by a plane shape (a "
                  "plane is the half-space below its local x-y plane)");
  // Unknown key inside a shape.
  expectErrorText(replace(kShapes, "        position: [0.2, 0, 0]", "        colour: red"),
                  "test.yaml:28: bodies[box].shapes[1].colour: unknown key (expected one of: "
                  "type, position, orientation, rpy, size, radius, half_length, points, vertices, "
                  "triangles, file, node, scale, up, material, group, mask, belt, color)");
  expectErrorText(replace(kShapes, "        position: [0.2, 0, 0]", "        name: ball"),
                  "test.yaml:28: bodies[box].shapes[1].name: unknown key (expected one of: "
                  "type, position, orientation, rpy, size, radius, half_length, points, vertices, "
                  "triangles, file, node, scale, up, material, group, mask, belt, color)");
  // Pose as for bodies.
  expectErrorText(replace(kShapes, "        position: [0.2, 0, 0]",
                          "        orientation: [1, 0, 0, 0]\n        rpy: [0, 0, 0]"),
                  "test.yaml:29: bodies[box].shapes[1].rpy: give either orientation or rpy, not "
                  "both");
  // Filtering bits.
  expectErrorText(replace(kShapes, "        group: 2", "        group: -1"),
                  "test.yaml:30: bodies[box].shapes[1].group: expected an integer in [0, "
                  "4294967295], got \"-1\"");
  expectErrorText(replace(kShapes, "        mask: 4294967295", "        mask: 4294967296"),
                  "test.yaml:31: bodies[box].shapes[1].mask: expected an integer in [0, "
                  "4294967295], got \"4294967296\"");
  expectErrorText(replace(kShapes, "        group: 2", "        group: 1.5"),
                  "test.yaml:30: bodies[box].shapes[1].group: expected an integer in [0, "
                  "4294967295], got \"1.5\"");
  // Shapes must be a list of maps.
  expectErrorText(replace(kShapes, "    shapes:\n      - type: plane\n        material: rubber\n",
                          "    shapes: plane\n"),
                  "test.yaml:16: bodies[ground].shapes: expected a list, got \"plane\"");
}

TEST(SceneLoader, PlaneOnADynamicBodyIsAnError) {
  expectErrorText(replace(kShapes, "      - type: box\n        size: [0.4, 0.2, 0.1]\n",
                          "      - type: plane\n"),
                  "test.yaml:24: bodies[box].shapes[0].type: a plane may only belong to a static "
                  "body (static: true)");
}

TEST(SceneLoader, UnknownMaterialIsAnError) {
  expectErrorText(replace(kShapes, "        material: rubber\n        group",
                          "        material: steel\n        group"),
                  "test.yaml:29: bodies[box].shapes[1].material: no material named \"steel\" "
                  "(known: default, rubber)");
}

TEST(SceneLoader, BadMaterialsAreErrors) {
  expectErrorText(replace(kShapes, "    torsion_radius: 0.02", "    torsion: 0.02"),
                  "test.yaml:7: materials[rubber].torsion: unknown key (expected one of: name, "
                  "friction, restitution, torsion_radius, stiffness, damping)");
  expectErrorText(replace(kShapes, "  - name: rubber", "  - name: default"),
                  "test.yaml:4: materials[1].name: duplicate name \"default\"");
  expectErrorText(replace(kShapes, "  - name: rubber\n", "  - \n"),
                  "test.yaml:5: materials[1].name: missing (required)");
  expectErrorText(replace(kShapes, "    friction: 1.1", "    friction: grippy"),
                  "test.yaml:5: materials[rubber].friction: expected a number, got \"grippy\"");
  // Range checks are dynamics::validate()'s, located by the loader.
  expectInvalid(replace(kShapes, "    restitution: 0.3", "    restitution: 1.5"), 6,
                "materials[rubber].restitution");
  expectInvalid(replace(kShapes, "    friction: 0.8", "    friction: -1"), 3,
                "materials[default].friction");
  expectInvalid(
      replace(kShapes, "    torsion_radius: 0.02", "    torsion_radius: 0.02\n    stiffness: -5"),
      8, "materials[rubber].stiffness");
  expectInvalid(
      replace(kShapes, "    torsion_radius: 0.02", "    torsion_radius: 0.02\n    damping: -1"), 8,
      "materials[rubber].damping");
}

TEST(SceneLoader, SoftMaterialsLoad) {
  const Scene scene = loadSceneFromString(
      replace(kShapes, "    torsion_radius: 0.02",
              "    torsion_radius: 0.02\n    stiffness: 6.0e4\n    damping: 1700"),
      "test.yaml");
  EXPECT_DOUBLE_EQ(scene.model.materials[1].contact_stiffness_npm, 6.0e4);
  EXPECT_DOUBLE_EQ(scene.model.materials[1].contact_damping_nspm, 1700.0);
  EXPECT_DOUBLE_EQ(scene.model.materials[0].contact_stiffness_npm, 0.0);  // rigid by default
}

TEST(SceneLoader, SleepSettingsLoad) {
  const Scene scene = loadSceneFromString(
      replace(kShapes, "  max_position_correction: 0.1\n",
              "  max_position_correction: 0.1\n  sleep: false\n  sleep_time: 2\n"),
      "test.yaml");
  EXPECT_FALSE(scene.model.contact.sleep_enabled);
  EXPECT_DOUBLE_EQ(scene.model.contact.sleep_time_s, 2.0);
  expectInvalid(replace(kShapes, "  max_position_correction: 0.1\n",
                        "  max_position_correction: 0.1\n  sleep_time: -1\n"),
                13, "contact.sleep_time");
}

TEST(SceneLoader, ManifoldReuseSettingsLoad) {
  const Scene scene = loadSceneFromString(
      replace(kShapes, "  max_position_correction: 0.1\n",
              "  max_position_correction: 0.1\n  manifold_reuse_distance: 0.001\n"
              "  manifold_reuse_angle: 0.0349\n"),
      "test.yaml");
  EXPECT_DOUBLE_EQ(scene.model.contact.manifold_reuse_distance_m, 0.001);
  EXPECT_DOUBLE_EQ(scene.model.contact.manifold_reuse_angle_rad, 0.0349);
  EXPECT_DOUBLE_EQ(
      loadSceneFromString(kShapes, "test.yaml").model.contact.manifold_reuse_distance_m,
      0.0);  // off by default
  expectInvalid(replace(kShapes, "  max_position_correction: 0.1\n",
                        "  max_position_correction: 0.1\n  manifold_reuse_distance: -1\n"),
                13, "contact.manifold_reuse_distance");
  expectInvalid(replace(kShapes, "  max_position_correction: 0.1\n",
                        "  max_position_correction: 0.1\n  manifold_reuse_angle: 1\n"),
                13, "contact.manifold_reuse_angle");
}

TEST(SceneLoader, BadContactIsAnError) {
  expectErrorText(replace(kShapes, "  slop: 0.001", "  slope: 0.001"),
                  "test.yaml:10: contact.slope: unknown key (expected one of: margin, slop, "
                  "restitution_threshold, max_position_correction, position_correction, sleep, "
                  "sleep_linear_speed, sleep_angular_speed, sleep_time, manifold_reuse_distance, "
                  "manifold_reuse_angle)");
  expectErrorText(replace(kShapes,
                          "contact:\n  margin: 0.02\n  slop: 0.001\n"
                          "  restitution_threshold: 0.2\n  max_position_correction: 0.1\n",
                          "contact: [0.02]\n"),
                  "test.yaml:8: contact: expected a map of keys, got a list of 1");
  expectInvalid(replace(kShapes, "  margin: 0.02", "  margin: -0.02"), 9, "contact.margin");
  expectInvalid(replace(kShapes, "  max_position_correction: 0.1", "  max_position_correction: 0"),
                12, "contact.max_position_correction");
}

TEST(SceneLoader, BadBeltIsAnError) {
  expectErrorText(replace(kShapes, "          motor: drive", "          motor: drve"),
                  "test.yaml:37: bodies[box].shapes[2].belt.motor: no motor named \"drve\" "
                  "(known: drive)");
  expectErrorText(replace(kShapes, "          motor: drive\n", ""),
                  "test.yaml:37: bodies[box].shapes[2].belt.motor: missing (required)");
  expectErrorText(replace(kShapes, "          m_per_rad: 0.001", "          speed: 0.001"),
                  "test.yaml:39: bodies[box].shapes[2].belt.speed: unknown key (expected one of: "
                  "motor, direction, m_per_rad)");
  expectErrorText(
      replace(kShapes, "          direction: [2, 0, 0]", "          direction: [0, 0, 0]"),
      "test.yaml:38: bodies[box].shapes[2].belt.direction: direction has zero length");
  expectErrorText(replace(kShapes, "          m_per_rad: 0.001\n", ""),
                  "test.yaml:37: bodies[box].shapes[2].belt.m_per_rad: missing (required)");
}

TEST(SceneLoader, BadCollideIsAnError) {
  expectErrorText(replace(kShapes, "    box: [0.4, 0.2, 0.02]\n", "    inertia: [1, 1, 1]\n"),
                  "test.yaml:44: bodies[lid].collide: collide: true needs a box");
  expectErrorText(replace(kShapes, "    collide: true", "    collide: true\n    shapes: []"),
                  "test.yaml:44: bodies[lid].collide: give either shapes or collide: true, not "
                  "both");
  expectErrorText(replace(kShapes, "    collide: true", "    collide: yes please"),
                  "test.yaml:44: bodies[lid].collide: expected true or false, got \"yes please\"");
  expectErrorText(replace(kShapes, "    collide_connected: true", "    collide_connected: 2"),
                  "test.yaml:51: joints[hinge].collide_connected: expected true or false, got "
                  "\"2\"");
}

}  // namespace
}  // namespace sim::engine
