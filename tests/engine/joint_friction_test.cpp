// Stribeck curves as joint friction (joints[].friction.curve, seed 000 Table 1), through the scene
// loader and the solver: a spinning plate on a vertical hinge coasts down under friction alone,
// J dω/dt = −g(ω), so it stops after T = ∫₀^ω0 J / g(ω) dω — computed here by quadrature,
// independently of the solver.
#include <dynamics/friction.h>
#include <dynamics/simulator.h>
#include <engine/scene.h>

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace {

using sim::engine::loadSceneFromString;

// Plate 0.4 x 0.4 x 0.1 m, 2 kg, centred on a vertical hinge: gravity along the axis gives no
// torque; coefficient 0, so the bound is the curve alone. J = m (a² + b²) / 12.
std::string plateScene(const std::string& curve) {
  return R"(solver:
  time_step: 0.001
bodies:
  - name: plate
    mass: 2.0
    box: [0.4, 0.4, 0.1]
    position: [0, 0, 1]
joints:
  - name: spin
    type: hinge
    parent: world
    child: plate
    anchor: [0, 0, 1]
    axis: [0, 0, 1]
    friction: {breakaway: 0.15, coulomb: 0.1, stribeck_speed: 1.0, curve: )" +
         curve + R"(}
)";
}
constexpr double kInertia = 2.0 * (0.16 + 0.16) / 12.0;
constexpr double kOmega0 = 3.0;

// Simulated time until the hinge stops.
double coastDownTime(const std::string& curve) {
  const auto scene = loadSceneFromString(plateScene(curve), "plate.yaml");
  sim::dynamics::Simulator sim(scene.model);
  auto state = sim.initialState();
  state.bodies[0].angular_velocity_radps = sim::dynamics::Vec3(0, 0, kOmega0);
  const double h = scene.model.solver.time_step_s;
  for (int k = 1; k < 10000; ++k) {
    sim.step(state);
    if (std::abs(state.bodies[0].angular_velocity_radps.z()) < 1e-9) return k * h;
  }
  return -1.0;
}

// Simpson's rule of J / g(ω) over [0, ω0], 2000 intervals (error ~1e-12 s for these smooth g).
double predictedTime(sim::dynamics::friction::StribeckCurve curve) {
  sim::dynamics::friction::StribeckParams p;
  p.breakaway = 0.15;
  p.coulomb = 0.1;
  p.stribeck_speed = 1.0;
  p.exponent = 2.0;
  const int n = 2000;
  const double dw = kOmega0 / n;
  double sum = 0.0;
  for (int k = 0; k <= n; ++k) {
    const double weight = (k == 0 || k == n) ? 1.0 : (k % 2 ? 4.0 : 2.0);
    sum += weight * kInertia / sim::dynamics::friction::stribeckMagnitude(curve, p, k * dw);
  }
  return sum * dw / 3.0;
}

TEST(JointFriction, StribeckCurveCoastDownMatchesQuadrature) {
  using C = sim::dynamics::friction::StribeckCurve;
  // Tolerance 3 steps (3 ms of ~1.4 s, 0.2 %): the bound lags the speed by one substep and the
  // stop is detected to the step (measured: within 1.2 ms). The curves' times differ from each
  // other by 2-6 % (1.34-1.42 s) and from a constant breakaway bound (J ω0 / F_S = 1.07 s) by
  // 25-33 %, so a wrong or ignored curve fails.
  for (auto [name, curve] : {std::pair{"gaussian", C::Gaussian}, std::pair{"tustin", C::Tustin},
                             std::pair{"lorentz", C::Lorentz}}) {
    const double t = coastDownTime(name);
    RecordProperty(std::string(name) + "_s",
                   std::to_string(t) + " vs " + std::to_string(predictedTime(curve)));
    EXPECT_NEAR(t, predictedTime(curve), 0.003) << name;
  }
  EXPECT_NEAR(coastDownTime("constant"), kInertia * kOmega0 / 0.15, 0.003);
}

TEST(JointFriction, BadCurveIsLocated) {
  try {
    loadSceneFromString(plateScene("parabolic"), "plate.yaml");
    FAIL() << "accepted";
  } catch (const sim::engine::SceneError& e) {
    EXPECT_EQ(e.line(), 15) << e.what();
    EXPECT_EQ(e.key(), "joints[spin].friction.curve") << e.what();
    EXPECT_NE(e.message().find("gaussian"), std::string::npos) << e.what();
  }
  std::string noSpeed = plateScene("tustin");
  noSpeed.replace(noSpeed.find("stribeck_speed: 1.0"), 19, "stribeck_speed: 0.0");
  try {
    loadSceneFromString(noSpeed, "plate.yaml");
    FAIL() << "accepted";
  } catch (const sim::engine::SceneInvalid& e) {
    ASSERT_FALSE(e.errors().empty());
    EXPECT_NE(std::string(e.errors()[0].what()).find("stribeck_speed"), std::string::npos)
        << e.errors()[0].what();
  }
}

// The seed 000 drive and the LuGre model through the loader: keys land in the model, and a bad
// value or an unknown key is an error naming the line and the field.
std::string driveScene(const std::string& drive, const std::string& friction) {
  return R"(bodies:
  - name: plate
    mass: 2.0
    box: [0.4, 0.4, 0.1]
joints:
  - name: spin
    type: hinge
    parent: world
    child: plate
    axis: [0, 0, 1]
    friction: )" +
         friction + R"(
motors:
  - name: m
    joint: spin
    I_m: 9.49e-7
    r: 28
    drive: )" +
         drive + "\n";
}

TEST(JointFriction, DriveAndLuGreKeysLoad) {
  const auto scene = loadSceneFromString(
      driveScene("{U: 24, c: 500, backlash: 0.01, K_ML: 2, M_C: 0.03, M_S: 0.04}",
                 "{model: lugre, coulomb: 1, breakaway: 1.5, stribeck_speed: 0.001, sigma0: 2e5, "
                 "sigma1: 300, zero_speed: 1e-4, viscous: 0.4}"),
      "drive.yaml");
  const auto& m = scene.model.motors.at(0);
  ASSERT_TRUE(m.drive.has_value());
  EXPECT_EQ(m.drive->supply_V, 24.0);
  EXPECT_EQ(m.drive->stiffness, 500.0);
  EXPECT_EQ(m.drive->backlash, 0.01);
  EXPECT_EQ(m.drive->K_ML, 2.0);
  EXPECT_EQ(m.drive->breakaway, 0.04);
  EXPECT_EQ(m.drive->resistance_ohm, 7.25);                            // seed 000 default
  EXPECT_EQ(m.drive->friction, sim::dynamics::DriveFriction::Static);  // the default
  EXPECT_NEAR(m.stall_torque_Nm, 0.0452 * 24.0 / 7.25, 1e-15);         // k_M U / R
  const auto& f = scene.model.joints.at(0).friction;
  EXPECT_EQ(f.model, sim::dynamics::JointFrictionModel::LuGre);
  EXPECT_EQ(f.sigma0, 2e5);
  EXPECT_EQ(f.sigma1, 300.0);
  EXPECT_EQ(f.zero_speed, 1e-4);
  sim::dynamics::Simulator sim(scene.model);  // valid
}

TEST(JointFriction, DriveEq22KeysLoad) {
  const auto scene = loadSceneFromString(
      driveScene("{friction: lugre, sigma0: 80, sigma1: 0.5, T_min: 1e-5, K_V2: 0.002}", "{}"),
      "drive.yaml");
  const auto& d = *scene.model.motors.at(0).drive;
  EXPECT_EQ(d.friction, sim::dynamics::DriveFriction::LuGre);
  EXPECT_EQ(d.sigma0, 80.0);
  EXPECT_EQ(d.sigma1, 0.5);
  EXPECT_EQ(d.t_min_s, 1e-5);
  EXPECT_EQ(d.viscous, 0.002);
  sim::dynamics::Simulator sim(scene.model);  // valid
}

TEST(JointFriction, BadDriveAndLuGreKeysAreLocated) {
  const std::string lugre = "{model: lugre, coulomb: 1, breakaway: 1.5, stribeck_speed: 0.001}";
  try {
    loadSceneFromString(driveScene("{c: 500, gap: 1}", lugre), "drive.yaml");
    FAIL() << "accepted";
  } catch (const sim::engine::SceneError& e) {
    EXPECT_EQ(e.key(), "motors[m].drive.gap") << e.what();
    EXPECT_EQ(e.line(), 17) << e.what();  // the drive: line
  }
  try {
    loadSceneFromString(driveScene("{c: -1}", lugre), "drive.yaml");
    FAIL() << "accepted";
  } catch (const sim::engine::SceneInvalid& e) {
    ASSERT_FALSE(e.errors().empty());
    const std::string what = e.errors()[0].what();
    EXPECT_NE(what.find("motors[m].drive.c"), std::string::npos) << what;
    EXPECT_NE(what.find("> 0"), std::string::npos) << what;
  }
  try {
    loadSceneFromString(
        driveScene("{}", "{model: lugre, coulomb: 0, breakaway: 1, stribeck_speed: 1}"),
        "drive.yaml");
    FAIL() << "accepted";
  } catch (const sim::engine::SceneInvalid& e) {
    ASSERT_FALSE(e.errors().empty());
    const std::string what = e.errors()[0].what();
    EXPECT_NE(what.find("joints[spin].friction.coulomb"), std::string::npos) << what;
  }
  try {
    loadSceneFromString(driveScene("{friction: dahl}", "{}"), "drive.yaml");
    FAIL() << "accepted";
  } catch (const sim::engine::SceneError& e) {
    EXPECT_EQ(e.key(), "motors[m].drive.friction") << e.what();
    EXPECT_NE(e.message().find("static or lugre"), std::string::npos) << e.what();
  }
  try {
    loadSceneFromString(driveScene("{friction: lugre, sigma0: 0}", "{}"), "drive.yaml");
    FAIL() << "accepted";
  } catch (const sim::engine::SceneInvalid& e) {
    ASSERT_FALSE(e.errors().empty());
    EXPECT_NE(std::string(e.errors()[0].what()).find("motors[m].drive.sigma0"), std::string::npos)
        << e.errors()[0].what();
  }
  try {
    // Both would keep their bristle state in the joint's z.
    loadSceneFromString(driveScene("{friction: lugre}", lugre), "drive.yaml");
    FAIL() << "accepted";
  } catch (const sim::engine::SceneInvalid& e) {
    ASSERT_FALSE(e.errors().empty());
    EXPECT_NE(std::string(e.errors()[0].what()).find("motors[m].drive.friction"), std::string::npos)
        << e.errors()[0].what();
  }
  try {
    loadSceneFromString(driveScene("{}", "{model: dahl}"), "drive.yaml");
    FAIL() << "accepted";
  } catch (const sim::engine::SceneError& e) {
    EXPECT_EQ(e.key(), "joints[spin].friction.model") << e.what();
    EXPECT_NE(e.message().find("lugre"), std::string::npos) << e.what();
  }
}

}  // namespace
