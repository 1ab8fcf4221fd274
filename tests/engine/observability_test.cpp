// What an author can observe (issue 34): body orientation signals against independent rotations
// and a hinge's own coordinate, the arithmetic scheme blocks, `during` failures that report the
// range seen in the window, and values printed with the digits that show why they failed.
#include <engine/scenario.h>
#include <engine/scene.h>
#include <engine/scheme.h>
#include <engine/session.h>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <Eigen/Geometry>

#include "scratch_dir.h"

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

namespace sim::engine {
namespace {

const std::string kSourceDir = SIMTRAINER_SOURCE_DIR;

class ObservabilityTest : public testing::ScratchDirTest {
 protected:
  ObservabilityTest() : ScratchDirTest("simtrainer_observe_") {}

  // The values of `signals` in `session` now.
  static std::vector<double> read(const Session& session, const std::vector<std::string>& signals) {
    std::vector<SensorDef> sensors;
    std::vector<SignalRef> refs;
    const Scene& scene = session.scene();
    for (const std::string& s : signals) {
      std::string error;
      const auto ref = resolveSignal(s, scene.model, scene.pult, scene.scheme, sensors, error);
      EXPECT_TRUE(ref.has_value()) << s << ": " << error;
      refs.push_back(ref.value_or(SignalRef{}));
    }
    std::vector<double> sensor_values;
    session.readSensors(sensors, sensor_values);
    std::vector<double> out;
    for (const SignalRef& r : refs) out.push_back(session.signal(r, sensor_values));
    return out;
  }

  // A scenario on the grasp scene whose timeline sets `lift` at 0; `rest` follows.
  Scenario graspScenario(const std::string& name, double duration_s, double lift,
                         const std::string& rest) {
    return loadScenario(
        write(name, fmt::format("scene: {}/scenes/grasp.yaml\nduration: {}\ntimeline:\n"
                                "  - {{at: 0.0, control: lift, set: {:.17g}}}{}",
                                kSourceDir, duration_s, lift, rest)));
  }
};

// Bodies placed by quaternions built here from the three elementary rotations (Eigen's
// AngleAxis, z-y'-x''), read back as roll, pitch, yaw; the tilt against the angle between the
// rotated z axis and the world's, computed as a dot product. 1e-12 rad: a few roundings of
// atan2 and the quaternion's normalisation on load.
TEST_F(ObservabilityTest, RollPitchYawAndTiltOfPlacedBodies) {
  const std::vector<Eigen::Vector3d> angles = {
      {0.3, -0.2, 1.1}, {-2.5, 1.2, -3.0}, {1.0, -1.4, 0.2}, {0.0, 0.0, 2.0}, {3.0, 0.5, -0.7}};
  std::string bodies;
  for (std::size_t i = 0; i < angles.size(); ++i) {
    const Eigen::Vector3d& a = angles[i];
    const Eigen::Quaterniond q = Eigen::AngleAxisd(a.z(), Eigen::Vector3d::UnitZ()) *
                                 Eigen::AngleAxisd(a.y(), Eigen::Vector3d::UnitY()) *
                                 Eigen::AngleAxisd(a.x(), Eigen::Vector3d::UnitX());
    bodies += fmt::format(
        "  - {{name: b{}, static: true, position: [{}, 0, 0], orientation: [{:.17g}, {:.17g}, "
        "{:.17g}, {:.17g}]}}\n",
        i, i, q.w(), q.x(), q.y(), q.z());
  }
  const Session session(loadSceneFromString("name: placed\nbodies:\n" + bodies, "placed.yaml"));
  for (std::size_t i = 0; i < angles.size(); ++i) {
    const Eigen::Vector3d& a = angles[i];
    const auto v = read(session, {fmt::format("body.b{}.roll", i), fmt::format("body.b{}.pitch", i),
                                  fmt::format("body.b{}.yaw", i), fmt::format("body.b{}.tilt", i)});
    EXPECT_NEAR(v[0], a.x(), 1e-12) << i;
    EXPECT_NEAR(v[1], a.y(), 1e-12) << i;
    EXPECT_NEAR(v[2], a.z(), 1e-12) << i;
    const Eigen::Vector3d z = (Eigen::AngleAxisd(a.z(), Eigen::Vector3d::UnitZ()) *
                               Eigen::AngleAxisd(a.y(), Eigen::Vector3d::UnitY()) *
                               Eigen::AngleAxisd(a.x(), Eigen::Vector3d::UnitX())) *
                              Eigen::Vector3d::UnitZ();
    EXPECT_NEAR(v[3], std::acos(z.z()), 1e-9) << i;  // acos loses digits near 0 and pi
  }
}

// A pendulum on a hinge about x, swinging through +-1.4 rad: its bob's roll is the hinge's
// coordinate (computed by the solver's joint function from the relative orientation), its
// tilt the coordinate's magnitude, pitch and yaw stay 0.
TEST_F(ObservabilityTest, APendulumsRollIsItsHingeAngle) {
  Session session(loadSceneFromString(R"(name: pendulum
solver: {time_step: 0.0041666666666666666, velocity_iterations: 30, position_iterations: 4}
bodies:
  - {name: bob, mass: 1.0, box: [0.05, 0.05, 0.05], position: [0, 0, 0.5], angular_velocity: [5.5, 0, 0], linear_velocity: [0, 2.75, 0]}
joints:
  - {name: pivot, type: hinge, parent: world, child: bob, anchor: [0, 0, 1.0], axis: [1, 0, 0]}
)",
                                      "pendulum.yaml"));
  double widest = 0.0;
  for (int k = 0; k < 480; ++k) {
    ASSERT_EQ(session.step().fault.kind, dynamics::Fault::Kind::None);
    const auto v = read(session, {"body.bob.roll", "body.bob.pitch", "body.bob.yaw",
                                  "body.bob.tilt", "joint.pivot.position"});
    EXPECT_NEAR(v[0], v[4], 1e-9) << "step " << k;
    EXPECT_NEAR(v[1], 0.0, 1e-9);
    EXPECT_NEAR(v[2], 0.0, 1e-9);
    EXPECT_NEAR(v[3], std::abs(v[4]), 1e-9);
    widest = std::max(widest, std::abs(v[4]));
  }
  EXPECT_GT(widest, 1.2);  // the swing went far from the small-angle range
}

TEST(ObservabilityBlocks, ArithmeticBlocks) {
  const Scene scene = loadSceneFromString(R"(name: blocks
bodies:
  - {name: b, static: true}
pult:
  - {name: a, type: axis, min: -10, max: 10}
  - {name: c, type: axis, min: -10, max: 10}
scheme:
  blocks:
    - {name: absolute, type: abs, input: pult.a}
    - {name: root, type: sqrt, input: pult.a}
    - {name: least, type: min, inputs: [pult.a, pult.c, 0.5]}
    - {name: most, type: max, inputs: [pult.a, pult.c, 0.5]}
    - {name: length, type: norm, inputs: [pult.a, pult.c]}
    - {name: band, type: deadband, input: pult.a, width: 2}
)",
                                          "blocks.yaml");
  struct Case {
    double a, c, abs, sqrt, min, max, norm, band;
  };
  const std::vector<Case> cases = {
      {3.0, 4.0, 3.0, std::sqrt(3.0), 0.5, 4.0, 5.0, 3.0},
      {-4.0, 3.0, 4.0, 0.0, -4.0, 3.0, 5.0, -4.0},            // sqrt of a negative input: 0
      {1.5, -2.0, 1.5, std::sqrt(1.5), -2.0, 1.5, 2.5, 0.0},  // inside the band
      {-2.0, 0.0, 2.0, 0.0, -2.0, 0.5, 2.0, 0.0},             // on the band's edge: still 0
      {2.25, 0.0, 2.25, 1.5, 0.0, 2.25, 2.25, 2.25}};
  for (const Case& k : cases) {
    SchemeState state = initialSchemeState(scene.scheme);
    PultState pult{{k.a, k.c}};
    evaluateScheme(scene.scheme, state, pult, {}, 0.01);
    auto out = [&](const char* name) {
      return state.outputs[static_cast<std::size_t>(scene.scheme.find(name))];
    };
    EXPECT_DOUBLE_EQ(out("absolute"), k.abs) << k.a;
    EXPECT_DOUBLE_EQ(out("root"), k.sqrt) << k.a;
    EXPECT_DOUBLE_EQ(out("least"), k.min) << k.a;
    EXPECT_DOUBLE_EQ(out("most"), k.max) << k.a;
    EXPECT_DOUBLE_EQ(out("length"), k.norm) << k.a;
    EXPECT_DOUBLE_EQ(out("band"), k.band) << k.a;
  }
}

TEST(ObservabilityBlocks, BadBlocksAndSignalsAreLocatedErrors) {
  struct Case {
    std::string block, key, message;
  };
  const std::vector<Case> cases = {
      {"{name: p, type: pid, setpoint: 0, measurement: 0}", "scheme.blocks[p].kp",
       "a pid needs at least one of kp, ki, kd"},
      {"{name: d, type: deadband, input: 0, width: -1}", "scheme.blocks[d].width",
       "expected a width >= 0"},
      {"{name: n, type: norm, inputs: []}", "scheme.blocks[n].inputs", "expected"},
      {"{name: s, type: gain, input: body.b.heading, k: 1}", "scheme.blocks[s].input",
       "(expected x, y, z, vx, vy, vz, speed, roll, pitch, yaw, tilt)"},
  };
  for (const Case& c : cases) {
    const std::string text =
        "name: bad\nbodies:\n  - {name: b, static: true}\nscheme:\n  blocks:\n    - " + c.block +
        "\n";
    try {
      loadSceneFromString(text, "bad.yaml");
      ADD_FAILURE() << "no error for " << c.block;
    } catch (const SceneError& e) {
      EXPECT_EQ(e.file(), "bad.yaml");
      EXPECT_EQ(e.line(), 6) << e.what();
      EXPECT_EQ(e.key(), c.key) << e.what();
      EXPECT_NE(e.message().find(c.message), std::string::npos) << e.what();
    }
  }
}

// A `during` that fails at its first violation still watches the rest of its window and
// reports the lowest and highest values and when they came, against the same values taken
// from every step of the run.
TEST_F(ObservabilityTest, DuringFailuresReportTheRangeSeenInTheWindow) {
  const Scenario s = graspScenario("d.scenario.yaml", 1.0, 1.0, R"(
expect:
  - {name: stays low, signal: body.palm.z, max: 0.2, during: [0.1, 0.6]}
  - {name: stays above, signal: body.palm.z, min: 0.1, during: [0.1, 0.6]}
)");
  const auto palm = static_cast<std::size_t>(s.scene.model.findBody("palm"));
  double low = 1e300, high = -1e300, low_t = 0.0, high_t = 0.0;
  PlayOptions options;
  options.after_step = [&](const Session& session, const dynamics::StepReport&) {
    const double t = session.time(), z = session.dynamics().bodies[palm].position_m.z();
    if (t < 0.1 - 1e-9 || t > 0.6 + 1e-9) return;
    if (z < low) low = z, low_t = t;
    if (z > high) high = z, high_t = t;
  };
  const ScenarioResult r = playScenario(s, options);
  ASSERT_EQ(r.expectations.size(), 2u);
  const ExpectationResult& failed = r.expectations[0];
  ASSERT_FALSE(failed.passed);
  EXPECT_LT(failed.time_s, 0.6);  // decided at the first violation
  const std::string range = fmt::format(
      "over the window body.palm.z ranged from {:.6g} (t = {:.6g} s) to {:.6g} (t = {:.6g} s)", low,
      low_t, high, high_t);
  EXPECT_NE(failed.detail.find(range), std::string::npos)
      << failed.detail << "\nexpected: " << range;
  EXPECT_GT(high, 0.2);
  // A pass reports its range too.
  EXPECT_TRUE(r.expectations[1].passed) << r.expectations[1].detail;
  EXPECT_NE(r.expectations[1].detail.find(range), std::string::npos) << r.expectations[1].detail;
}

// 0.51999999 against a bound of 0.52: six digits would print "0.52 ... expected >= 0.52".
TEST_F(ObservabilityTest, FailedValuesPrintTheDigitsThatShowWhy) {
  const Scenario s = graspScenario("v.scenario.yaml", 0.5, 0.51999999, R"(
expect:
  - {name: close, signal: pult.lift, min: 0.52, at: 0.25}
  - {name: far, signal: pult.lift, min: 0.6, at: 0.25}
)");
  const ScenarioResult r = playScenario(s);
  ASSERT_EQ(r.expectations.size(), 2u);
  EXPECT_FALSE(r.expectations[0].passed);
  EXPECT_NE(r.expectations[0].detail.find("pult.lift = 0.51999999 at"), std::string::npos)
      << r.expectations[0].detail;
  EXPECT_NE(r.expectations[1].detail.find("pult.lift = 0.52 at"), std::string::npos)
      << r.expectations[1].detail;
}

}  // namespace
}  // namespace sim::engine
