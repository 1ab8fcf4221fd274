// Pins engine/src/scene_loader.cpp: the scene format of docs/scenes.md, its error messages
// (file, line, key) and --set overrides.
#include <dynamics/model.h>
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
                   "expected fixed, ball, hinge or prismatic");
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

}  // namespace
}  // namespace sim::engine
