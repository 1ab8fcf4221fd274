// Robots from URDF (engine/src/urdf_import.cpp; docs/scenes.md, "Robots from URDF") through the
// scene loader and the solver. References are computed here from the numbers the test writes into
// the URDF text, never from the importer: forward kinematics by a 4x4 chain, mass properties by
// the parallel-axis theorem, a pendulum's period by the complete elliptic integral, viscous decay
// by the linear oscillator's envelope, a mimic pair's ratio from its <mimic> element.
#include "urdf_import.h"

#include "scratch_dir.h"

#include <dynamics/shapes.h>
#include <dynamics/simulator.h>
#include <engine/scene.h>
#include <engine/urdf.h>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <Eigen/Geometry>

#include <array>
#include <cmath>
#include <cstdlib>
#include <numbers>
#include <random>
#include <string>
#include <vector>

namespace {

using sim::dynamics::Mat3;
using sim::dynamics::Vec3;
using sim::engine::loadScene;
using sim::engine::Scene;
using sim::engine::SceneError;

const std::string kSourceDir = SIMTRAINER_SOURCE_DIR;

// --- Independent geometry: elementary rotations written out, URDF's fixed-axis rpy. ---
Mat3 rotX(double a) {
  Mat3 r;
  r << 1, 0, 0, 0, std::cos(a), -std::sin(a), 0, std::sin(a), std::cos(a);
  return r;
}
Mat3 rotY(double a) {
  Mat3 r;
  r << std::cos(a), 0, std::sin(a), 0, 1, 0, -std::sin(a), 0, std::cos(a);
  return r;
}
Mat3 rotZ(double a) {
  Mat3 r;
  r << std::cos(a), -std::sin(a), 0, std::sin(a), std::cos(a), 0, 0, 0, 1;
  return r;
}
Mat3 rpyMatrix(const Vec3& rpy) {
  return rotZ(rpy.z()) * rotY(rpy.y()) * rotX(rpy.x());
}
// Rodrigues: rotation by `angle` about the unit `axis`.
Mat3 axisAngle(const Vec3& axis, double angle) {
  Mat3 k;
  k << 0, -axis.z(), axis.y(), axis.z(), 0, -axis.x(), -axis.y(), axis.x(), 0;
  return Mat3::Identity() + std::sin(angle) * k + (1.0 - std::cos(angle)) * k * k;
}
struct Pose {
  Mat3 r = Mat3::Identity();
  Vec3 p = Vec3::Zero();
  Pose operator*(const Pose& o) const { return {r * o.r, r * o.p + p}; }
};

std::string v3(const Vec3& v) {
  return fmt::format("{:.17g} {:.17g} {:.17g}", v.x(), v.y(), v.z());
}
std::string inertiaXml(const Mat3& i) {
  return fmt::format(
      R"(<inertia ixx="{:.17g}" ixy="{:.17g}" ixz="{:.17g}" iyy="{:.17g}" iyz="{:.17g}" izz="{:.17g}"/>)",
      i(0, 0), i(0, 1), i(0, 2), i(1, 1), i(1, 2), i(2, 2));
}
// 1-based line of the first occurrence of `needle` in `text`.
int lineOf(const std::string& text, const std::string& needle) {
  const auto at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  return 1 + static_cast<int>(
                 std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

class Urdf : public sim::engine::testing::ScratchDirTest {
 public:
  Urdf() : ScratchDirTest("simtrainer_urdf_") {}
  void TearDown() override {
    sim::engine::setPackagePath({});
    ScratchDirTest::TearDown();
  }
  // A package `parts` (package://parts/...) under pkgs/ on the package path, with its meshes/
  // folder made.
  void usePartsPackage() {
    std::filesystem::create_directories(dir_ / "pkgs" / "parts" / "meshes");
    sim::engine::setPackagePath({(dir_ / "pkgs").string()});
  }
  // Loads `urdf` as robot.urdf included by a scene with `yaml` around it (the include item's
  // extra keys in `item`).
  Scene loadIncluded(const std::string& urdf, const std::string& item,
                     const std::string& yaml = "") {
    write("robot.urdf", urdf);
    return loadScene(write("scene.yaml", yaml + "include:\n  - {file: robot.urdf" + item + "}\n"));
  }
  // The SceneError of loading `urdf` as a scene of its own (fails the test when it loads).
  SceneError loadError(const std::string& urdf) {
    const std::string path = write("bad.urdf", urdf);
    try {
      loadScene(path);
    } catch (const SceneError& e) {
      EXPECT_EQ(e.file(), path);
      return e;
    }
    ADD_FAILURE() << "loaded:\n" << urdf;
    return SceneError("", 0, "", "");
  }
};

// A random open chain: a fixed root and six joints (revolute, prismatic, continuous in turn) with
// random origins, axes and inertials (full tensors, rotated inertial frames).
struct ChainLink {
  double mass;
  Vec3 com, inertial_rpy;
  Mat3 inertia;  // in the inertial frame, as written
};
struct ChainJoint {
  std::string type;
  Vec3 xyz, rpy, axis;
  double lower, upper;
};
struct Chain {
  std::vector<ChainLink> links;
  std::vector<ChainJoint> joints;
  std::string urdf;
};

Chain randomChain(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const auto vec = [&](double s) { return Vec3(s * u(rng), s * u(rng), s * u(rng)); };
  Chain c;
  c.urdf = "<?xml version=\"1.0\"?>\n<robot name=\"chain\">\n";
  for (int k = 0; k <= 6; ++k) {
    ChainLink l;
    l.mass = 1.0 + 0.5 * (u(rng) + 1.0);
    l.com = vec(0.1);
    l.inertial_rpy = vec(std::numbers::pi);
    const Vec3 d(0.02 + 0.005 * u(rng), 0.025 + 0.005 * u(rng), 0.03 + 0.005 * u(rng));
    const Mat3 q = rpyMatrix(vec(std::numbers::pi));
    l.inertia = q * d.asDiagonal() * q.transpose();
    c.links.push_back(l);
    c.urdf += fmt::format(
        "  <link name=\"l{}\">\n    <inertial>\n      <origin xyz=\"{}\" rpy=\"{}\"/>\n      <mass "
        "value=\"{:.17g}\"/>\n      {}\n    </inertial>\n  </link>\n",
        k, v3(l.com), v3(l.inertial_rpy), l.mass, inertiaXml(l.inertia));
  }
  const char* types[] = {"revolute", "prismatic", "continuous"};
  for (int k = 1; k <= 6; ++k) {
    ChainJoint j;
    j.type = types[(k - 1) % 3];
    j.xyz = vec(0.3);
    j.rpy = vec(std::numbers::pi);
    j.axis = vec(1.0).normalized();
    j.lower = j.type == "prismatic" ? -0.5 : -3.0;
    j.upper = -j.lower;
    c.joints.push_back(j);
    c.urdf += fmt::format(
        "  <joint name=\"j{}\" type=\"{}\">\n    <origin xyz=\"{}\" rpy=\"{}\"/>\n    <parent "
        "link=\"l{}\"/>\n    <child link=\"l{}\"/>\n    <axis xyz=\"{}\"/>\n    <limit "
        "lower=\"{}\" "
        "upper=\"{}\" effort=\"10\" velocity=\"1\"/>\n  </joint>\n",
        k, j.type, v3(j.xyz), v3(j.rpy), k - 1, k, v3(j.axis), j.lower, j.upper);
  }
  c.urdf += "</robot>\n";
  return c;
}

// Forward kinematics: each body's centre of mass and axes at random joint positions, against a
// 4x4 chain of the written numbers; the solver reads each joint's coordinate back as given.
// 1e-12 m / 1e-12: a few roundings of unit-scale numbers through six transforms.
TEST_F(Urdf, ForwardKinematicsMatchesIndependentChain) {
  std::mt19937 rng(32);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int trial = 0; trial < 10; ++trial) {
    const Chain c = randomChain(rng);
    const Vec3 place(u(rng), u(rng), u(rng)), place_rpy(u(rng), u(rng), u(rng));
    std::vector<double> q;
    std::string initial;
    for (std::size_t k = 0; k < c.joints.size(); ++k) {
      q.push_back(0.9 * c.joints[k].upper * u(rng));
      initial += fmt::format("{}j{}: {:.17g}", k == 0 ? "" : ", ", k + 1, q.back());
    }
    const Scene scene =
        loadIncluded(c.urdf, fmt::format(", position: [{:.17g}, {:.17g}, {:.17g}], rpy: [{:.17g}, "
                                         "{:.17g}, {:.17g}], initial: {{{}}}",
                                         place.x(), place.y(), place.z(), place_rpy.x(),
                                         place_rpy.y(), place_rpy.z(), initial));
    Pose link{rpyMatrix(place_rpy), place};
    for (std::size_t k = 0; k < c.links.size(); ++k) {
      if (k > 0) {
        const ChainJoint& j = c.joints[k - 1];
        Pose motion;
        if (j.type == "prismatic") {
          motion.p = q[k - 1] * j.axis;
        } else {
          motion.r = axisAngle(j.axis, q[k - 1]);
        }
        link = link * Pose{rpyMatrix(j.rpy), j.xyz} * motion;
      }
      const int b = scene.model.findBody(fmt::format("l{}", k));
      ASSERT_GE(b, 0) << k;
      const auto& body = scene.model.bodies[static_cast<std::size_t>(b)];
      EXPECT_EQ(body.is_static, k == 0);
      const Vec3 com = link.r * c.links[k].com + link.p;
      EXPECT_LT((body.position_m - com).norm(), 1e-12) << "trial " << trial << " link " << k;
      EXPECT_LT((body.orientation.toRotationMatrix() - link.r).norm(), 1e-12) << trial << " " << k;
    }
    sim::dynamics::Simulator sim(scene.model);
    const auto state = sim.initialState();
    for (std::size_t k = 0; k < q.size(); ++k) {
      const int j = scene.model.findJoint(fmt::format("j{}", k + 1));
      ASSERT_GE(j, 0);
      EXPECT_NEAR(sim.measureJointPosition(state, j), q[k], 1e-12) << trial << " j" << k + 1;
    }
  }
}

// Mass properties: each body's mass and its inertia about its centre of mass in link axes, the
// URDF tensor turned by the inertial's rpy (R I R^T); limits, damping and friction on the joints.
TEST_F(Urdf, MassPropertiesLimitsAndFrictionAsWritten) {
  std::mt19937 rng(7);
  Chain c = randomChain(rng);
  const std::string dyn = "<dynamics damping=\"0.25\" friction=\"0.75\"/>\n  </joint>";
  c.urdf.replace(c.urdf.find("</joint>", c.urdf.find("name=\"j2\"")), 8, dyn);
  const Scene scene = loadIncluded(c.urdf, "");
  double total = 0.0;
  for (std::size_t k = 0; k < c.links.size(); ++k) {
    const auto& body =
        scene.model.bodies[static_cast<std::size_t>(scene.model.findBody(fmt::format("l{}", k)))];
    const Mat3 r = rpyMatrix(c.links[k].inertial_rpy);
    const Mat3 expected = r * c.links[k].inertia * r.transpose();
    EXPECT_DOUBLE_EQ(body.mass_kg, c.links[k].mass);
    EXPECT_LT((body.inertia_kgm2 - expected).norm(), 1e-15) << k << "\n"
                                                            << body.inertia_kgm2 << "\n"
                                                            << expected;
    total += body.mass_kg;
  }
  double urdf_total = 0.0;
  for (const auto& l : c.links) urdf_total += l.mass;
  EXPECT_DOUBLE_EQ(total, urdf_total);
  for (std::size_t k = 0; k < c.joints.size(); ++k) {
    const auto& j =
        scene.model
            .joints[static_cast<std::size_t>(scene.model.findJoint(fmt::format("j{}", k + 1)))];
    const bool continuous = c.joints[k].type == "continuous";
    EXPECT_EQ(j.type, c.joints[k].type == "prismatic" ? sim::dynamics::JointType::Prismatic
                                                      : sim::dynamics::JointType::Hinge);
    EXPECT_EQ(j.limit_enabled, !continuous) << k;
    if (!continuous) {
      EXPECT_EQ(j.lower_limit, c.joints[k].lower);
      EXPECT_EQ(j.upper_limit, c.joints[k].upper);
    }
    EXPECT_EQ(j.friction.viscous, k == 1 ? 0.25 : 0.0) << k;
    EXPECT_EQ(j.friction.breakaway, k == 1 ? 0.75 : 0.0) << k;
  }
}

// Links joined by a fixed joint are one body: masses summed, centre of mass the weighted mean,
// inertia by the parallel-axis theorem, named after the link nearer the root.
TEST_F(Urdf, FixedJointMergesByParallelAxisTheorem) {
  const Vec3 ca(0.05, -0.02, 0.1), cb(0.01, 0.03, -0.02), p(0.2, 0.1, -0.05), rpy(0.4, -0.3, 1.1);
  Mat3 ia, ib;
  ia << 0.02, 0.001, 0, 0.001, 0.03, 0.002, 0, 0.002, 0.025;
  ib << 0.004, 0, 0.0005, 0, 0.005, 0, 0.0005, 0, 0.006;
  const double ma = 2.0, mb = 0.7;
  const std::string urdf =
      fmt::format(R"(<robot name="m">
  <link name="base"/>
  <link name="a"><inertial><origin xyz="{}"/><mass value="{}"/>{}</inertial></link>
  <link name="b"><inertial><origin xyz="{}"/><mass value="{}"/>{}</inertial></link>
  <joint name="hinge" type="continuous"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/></joint>
  <joint name="weld" type="fixed"><origin xyz="{}" rpy="{}"/><parent link="a"/><child link="b"/></joint>
</robot>
)",
                  v3(ca), ma, inertiaXml(ia), v3(cb), mb, inertiaXml(ib), v3(p), v3(rpy));
  const Scene scene = loadIncluded(urdf, "");
  EXPECT_LT(scene.model.findBody("b"), 0) << "b is merged into a";
  const auto& body = scene.model.bodies[static_cast<std::size_t>(scene.model.findBody("a"))];
  const Mat3 rb = rpyMatrix(rpy);
  const Vec3 cb_in_a = p + rb * cb;
  const Vec3 com = (ma * ca + mb * cb_in_a) / (ma + mb);
  const auto shift = [](double m, const Vec3& d) {
    return Mat3(m * (d.squaredNorm() * Mat3::Identity() - d * d.transpose()));
  };
  const Mat3 expected =
      ia + shift(ma, ca - com) + rb * ib * rb.transpose() + shift(mb, cb_in_a - com);
  EXPECT_NEAR(body.mass_kg, ma + mb, 1e-15);
  EXPECT_LT((body.position_m - com).norm(), 1e-15);
  EXPECT_LT((body.inertia_kgm2 - expected).norm(), 1e-15) << body.inertia_kgm2 << "\n" << expected;
}

// A URDF pendulum: a continuous joint about y, the bob's inertial 0.5 m below with a rotated
// tensor. Released from 0.6 rad, its period is T = 4 sqrt(I_p / (m g d)) K(sin(theta0 / 2)) with
// I_p the tensor's yy about the centre of mass (R I R^T) plus m d^2. Period from the downward zero
// crossings over four swings.
struct PendulumRun {
  double period_s = 0.0, predicted_s = 0.0, decay_per_s = 0.0, predicted_decay_per_s = 0.0;
};
PendulumRun swingPendulum(Urdf& t, double theta0, double damping, double friction) {
  const double m = 2.0, d = 0.5;
  const Vec3 rpy(0.3, 0.5, -0.2), principal(0.05, 0.01, 0.03);
  const std::string urdf =
      fmt::format(R"(<robot name="pendulum">
  <link name="world"/>
  <link name="bob"><inertial><origin xyz="0 0 {}" rpy="{}"/><mass value="{}"/>
    <inertia ixx="{}" ixy="0" ixz="0" iyy="{}" iyz="0" izz="{}"/></inertial></link>
  <joint name="swing" type="continuous"><origin xyz="0 0 1"/><parent link="world"/><child link="bob"/>
    <axis xyz="0 1 0"/><dynamics damping="{}" friction="{}"/></joint>
</robot>
)",
                  -d, v3(rpy), m, principal.x(), principal.y(), principal.z(), damping, friction);
  const Scene scene = t.loadIncluded(urdf, fmt::format(", initial: {{swing: {}}}", theta0),
                                     "solver: {time_step: 0.0005, velocity_iterations: 50}\n");
  const Mat3 r = rpyMatrix(rpy);
  const double i_p = (r * principal.asDiagonal() * r.transpose())(1, 1) + m * d * d;
  const double g = scene.model.gravity_mps2.norm();
  PendulumRun out;
  out.predicted_s = 4.0 * std::sqrt(i_p / (m * g * d)) * std::comp_ellint_1(std::sin(theta0 / 2.0));
  out.predicted_decay_per_s = damping / (2.0 * i_p);
  sim::dynamics::Simulator sim(scene.model);
  auto state = sim.initialState();
  const double h = scene.model.solver.time_step_s;
  std::vector<double> crossings, peaks_t, peaks;
  double prev = theta0, prev2 = theta0;
  for (int k = 1; k <= 20000 && crossings.size() < 5; ++k) {
    sim.step(state);
    const double q = state.joints[0].position;
    if (prev > 0.0 && q <= 0.0) crossings.push_back(h * (k - 1 + prev / (prev - q)));
    if (prev > prev2 && prev >= q && k > 2) {
      peaks_t.push_back(h * (k - 1));
      peaks.push_back(prev);
    }
    prev2 = prev;
    prev = q;
  }
  if (crossings.size() == 5) out.period_s = (crossings[4] - crossings[0]) / 4.0;
  if (peaks.size() >= 4) {
    out.decay_per_s = std::log(peaks.front() / peaks.back()) / (peaks_t.back() - peaks_t.front());
  }
  return out;
}

// Tolerance 2e-5 of T (measured 1e-6): the step (h = 0.5 ms, omega h = 2e-3) and the linearly
// interpolated crossings leave ~(omega h)^2 / 8 = 5e-7. Without the inertial's rpy (I_yy = 0.01
// instead of 0.0141) the period is 0.4 % shorter; without its origin the bob is a point on the
// axis.
TEST_F(Urdf, PendulumPeriodIsTheEllipticIntegral) {
  const PendulumRun run = swingPendulum(*this, 0.6, 0.0, 0.0);
  fmt::print("pendulum: T = {:.9f} s, predicted {:.9f} s, relative error {:.2e}\n", run.period_s,
             run.predicted_s, run.period_s / run.predicted_s - 1.0);
  EXPECT_NEAR(run.period_s / run.predicted_s, 1.0, 2e-5)
      << run.period_s << " vs " << run.predicted_s;
}

// <dynamics damping> as viscous friction: the linear oscillator's envelope decays as
// exp(-c t / (2 I_p)); from 0.05 rad (the nonlinearity's effect on the decay is ~theta^2/16).
// Tolerance 2e-3 (measured 1.7e-4): the peaks are taken to the step (0.5 ms of a 1.47 s period)
// over four periods. A damping ignored, or taken as c / I, is off by 100 %.
TEST_F(Urdf, DampingDecaysAsLinearOscillator) {
  const PendulumRun run = swingPendulum(*this, 0.05, 0.03, 0.0);
  fmt::print("damping: decay {:.6f} /s, predicted {:.6f} /s, relative error {:.2e}\n",
             run.decay_per_s, run.predicted_decay_per_s,
             run.decay_per_s / run.predicted_decay_per_s - 1.0);
  EXPECT_NEAR(run.decay_per_s / run.predicted_decay_per_s, 1.0, 2e-3)
      << run.decay_per_s << " vs " << run.predicted_decay_per_s;
}

// <dynamics friction> as the joint's Coulomb (breakaway) torque: the pendulum held at an angle
// whose gravity torque m g d sin(theta) is below it stays; a bit above, it swings.
TEST_F(Urdf, FrictionHoldsBelowItsTorque) {
  // m g d = 9.81 N m: friction 1 N m holds below asin(1 / 9.81) = 0.102 rad.
  for (const auto& [theta0, holds] : {std::pair{0.09, true}, std::pair{0.115, false}}) {
    const std::string urdf = R"(<robot name="p">
  <link name="world"/>
  <link name="bob"><inertial><origin xyz="0 0 -0.5"/><mass value="2"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <joint name="swing" type="continuous"><origin xyz="0 0 1"/><parent link="world"/><child link="bob"/>
    <axis xyz="0 1 0"/><dynamics friction="1"/></joint>
</robot>
)";
    const Scene scene = loadIncluded(urdf, fmt::format(", initial: {{swing: {}}}", theta0),
                                     "solver: {time_step: 0.001}\ngravity: [0, 0, -9.81]\n");
    sim::dynamics::Simulator sim(scene.model);
    auto state = sim.initialState();
    for (int k = 0; k < 500; ++k) sim.step(state);
    const double moved = std::abs(state.joints[0].position - theta0);
    if (holds) {
      EXPECT_LT(moved, 1e-6) << theta0;
    } else {
      EXPECT_GT(moved, 1e-3) << theta0;
    }
  }
}

// A mimic joint is a repeater of its master's motor: q_f = multiplier q_m + offset at all times,
// under gravity load on both arms, while the motor drives the master up and down. Converged solver
// (200 sweeps): held to 1e-7 rad, the position passes' tolerance (measured 3.4e-9). Started at q_m
// = 0.3, so a lost offset (0.2 rad) or an inverted multiplier fails.
TEST_F(Urdf, MimicHoldsItsRatioUnderLoad) {
  const std::string urdf = R"(<robot name="pair">
  <link name="base"/>
  <link name="arm_a"><inertial><origin xyz="0.2 0 0"/><mass value="1.5"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>
  <link name="arm_b"><inertial><origin xyz="0.15 0 0"/><mass value="0.8"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.006" iyz="0" izz="0.006"/></inertial></link>
  <joint name="master" type="revolute"><origin xyz="0 0 1"/><parent link="base"/><child link="arm_a"/>
    <axis xyz="0 1 0"/><limit lower="-1.5" upper="1.5" effort="50" velocity="3"/></joint>
  <joint name="follower" type="revolute"><origin xyz="0 0.3 1"/><parent link="base"/><child link="arm_b"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="50" velocity="3"/>
    <mimic joint="master" multiplier="-1.5" offset="0.2"/></joint>
</robot>
)";
  const Scene scene = loadIncluded(
      urdf, ", initial: {master: 0.3}",
      "solver: {time_step: 0.002, velocity_iterations: 200, position_iterations: 20}\n"
      "motors:\n  - {name: drive, joint: master, Mp: 0.5, w_xx: 300, t_m: 0.01, r: 100}\n");
  ASSERT_EQ(scene.model.repeaters.size(), 1u);
  EXPECT_EQ(scene.model.repeaters[0].name, "follower");
  EXPECT_TRUE(scene.warnings.empty()) << scene.warnings.front();
  const int qm = scene.model.findJoint("master"), qf = scene.model.findJoint("follower");
  sim::dynamics::Simulator sim(scene.model);
  auto state = sim.initialState();
  double worst = 0.0, lo = 1e9, hi = -1e9;
  for (int k = 0; k < 1500; ++k) {
    state.motors[0].voltage = k < 250 ? 0.0 : k < 750 ? 0.3 : -0.5;
    sim.step(state);
    const double m = sim.measureJointPosition(state, qm), f = sim.measureJointPosition(state, qf);
    worst = std::max(worst, std::abs(f - (-1.5 * m + 0.2)));
    lo = std::min(lo, m);
    hi = std::max(hi, m);
  }
  fmt::print(
      "mimic: worst |q_f - (-1.5 q_m + 0.2)| = {:.3e} rad, master over [{:.3f}, {:.3f}] rad\n",
      worst, lo, hi);
  EXPECT_LT(worst, 1e-7);
  EXPECT_GT(hi - lo, 1.0) << "the master moved " << lo << " .. " << hi;
}

// package://, file:// and plain paths.
// A URDF joint's effort and velocity become its motor's drive limits (max_torque, max_speed),
// also for a motor with passport data of its own; a motor stronger or faster than them is a
// warning; the overlay's own limits win; a drive unit gets none.
TEST_F(Urdf, EffortAndVelocityBecomeDriveLimits) {
  const std::string urdf = R"(<robot name="one">
  <link name="base"/>
  <link name="arm"><inertial><origin xyz="0.2 0 0"/><mass value="1"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="20" velocity="2"/></joint>
</robot>
)";
  const auto motorOf = [](const Scene& scene) { return scene.model.motors.at(0); };
  // Stronger (r Mp = 50 N m) and faster (w_xx / r = 3 rad/s) than the joint's limits.
  const std::string strong =
      "motors:\n  - {name: m, joint: j, Mp: 0.5, w_xx: 300, t_m: 0.01, r: 100";
  const Scene held = loadIncluded(urdf, "", strong + "}\n");
  EXPECT_EQ(motorOf(held).max_torque, 20.0);
  EXPECT_EQ(motorOf(held).max_speed, 2.0);
  ASSERT_EQ(held.warnings.size(), 2u);
  EXPECT_NE(held.warnings[0].find("exceeds the effort limit 20"), std::string::npos);
  EXPECT_NE(held.warnings[0].find("holds its torque to the limit"), std::string::npos);
  EXPECT_NE(held.warnings[1].find("exceeds the velocity limit 2"), std::string::npos);
  // Held in the solver: pushing the free arm at full voltage, the joint's speed settles at the
  // velocity limit, not the motor's 3 rad/s (100 steps of the default 0.01 s: about 1.9 rad, inside
  // the joint's +-3 rad).
  sim::dynamics::Simulator sim(held.model);
  auto state = sim.initialState();
  for (int k = 0; k < 100; ++k) {
    state.motors[0].voltage = 1.0;
    EXPECT_EQ(sim.step(state).fault.kind, sim::dynamics::Fault::Kind::None);
  }
  const auto j = static_cast<std::size_t>(held.model.findJoint("j"));
  EXPECT_NEAR(state.joints[j].speed, 2.0, 1e-3);
  EXPECT_LT(state.joints[j].position, 2.5);
  // The overlay's own limits win (and then nothing exceeds what the URDF allows unasked).
  const Scene own = loadIncluded(urdf, "", strong + ", max_torque: 5, max_speed: 1}\n");
  EXPECT_EQ(motorOf(own).max_torque, 5.0);
  EXPECT_EQ(motorOf(own).max_speed, 1.0);
  EXPECT_TRUE(own.warnings.empty()) << own.warnings.front();
  // A drive unit's current comes from its circuit: no limits from the URDF.
  const Scene driven = loadIncluded(urdf, "", strong + ", drive: {}}\n");
  EXPECT_TRUE(std::isinf(motorOf(driven).max_torque));
  EXPECT_TRUE(std::isinf(motorOf(driven).max_speed));
  // A bad limit is named at its line (the model's check, reported against the scene's key).
  try {
    loadIncluded(urdf, "", strong + ", max_torque: -1}\n");
    ADD_FAILURE() << "a negative torque limit loaded";
  } catch (const sim::engine::SceneInvalid& e) {
    ASSERT_FALSE(e.errors().empty());
    EXPECT_EQ(e.errors()[0].line(), 2) << e.what();
    EXPECT_NE(e.errors()[0].key().find("max_torque"), std::string::npos) << e.what();
    EXPECT_NE(e.errors()[0].message().find("torque limit must be > 0"), std::string::npos)
        << e.what();
  }
}

TEST_F(Urdf, ResourcesResolve) {
  using sim::engine::detail::resolveUrdfResource;
  namespace fs = std::filesystem;
  const std::string urdf = write("robot.urdf", "");
  fs::create_directories(dir_ / "flags" / "src" / "pkg_dir");
  write("flags/src/pkg_dir/package.xml", "<package><name>my_pkg</name></package>");
  fs::create_directories(dir_ / "ros" / "other_pkg");
  // Neither found before the search paths are set.
  EXPECT_THROW(resolveUrdfResource("package://my_pkg/m.stl", urdf), std::invalid_argument);
  sim::engine::setPackagePath({(dir_ / "flags").string()});
  EXPECT_EQ(resolveUrdfResource("package://my_pkg/meshes/m.stl", urdf),
            (dir_ / "flags/src/pkg_dir/meshes/m.stl").string());
  ::setenv("ROS_PACKAGE_PATH", (dir_ / "ros").c_str(), 1);
  EXPECT_EQ(resolveUrdfResource("package://other_pkg/m.stl", urdf),
            (dir_ / "ros/other_pkg/m.stl").string());
  ::unsetenv("ROS_PACKAGE_PATH");
  EXPECT_EQ(resolveUrdfResource("file://meshes/a.stl", urdf), (dir_ / "meshes/a.stl").string());
  EXPECT_EQ(resolveUrdfResource("file:///abs/a.stl", urdf), "/abs/a.stl");
  EXPECT_EQ(resolveUrdfResource("a.stl", urdf), (dir_ / "a.stl").string());
  try {
    resolveUrdfResource("package://nowhere/a.stl", urdf);
    ADD_FAILURE();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no package \"nowhere\""), std::string::npos) << e.what();
  }
  EXPECT_THROW(resolveUrdfResource("http://x/a.stl", urdf), std::invalid_argument);
}

// A unit cube [0, 1]^3 as ASCII STL, outward-facing triangles.
std::string cubeStl() {
  std::string s = "solid cube\n";
  const int faces[6][4][3] = {
      {{0, 0, 0}, {0, 1, 0}, {1, 1, 0}, {1, 0, 0}}, {{0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}},
      {{0, 0, 0}, {1, 0, 0}, {1, 0, 1}, {0, 0, 1}}, {{0, 1, 0}, {0, 1, 1}, {1, 1, 1}, {1, 1, 0}},
      {{0, 0, 0}, {0, 0, 1}, {0, 1, 1}, {0, 1, 0}}, {{1, 0, 0}, {1, 1, 0}, {1, 1, 1}, {1, 0, 1}}};
  for (const auto& f : faces) {
    for (const auto& tri : {std::array{0, 1, 2}, std::array{0, 2, 3}}) {
      s += " facet normal 0 0 0\n  outer loop\n";
      for (int i : tri) s += fmt::format("   vertex {} {} {}\n", f[i][0], f[i][1], f[i][2]);
      s += "  endloop\n endfacet\n";
    }
  }
  return s + "endsolid cube\n";
}

// Signed volume of a closed triangle mesh (positive when its triangles face outward).
double signedVolume(const sim::engine::ImportedModel& model) {
  double v = 0.0;
  for (const auto& mesh : model.meshes) {
    for (const auto& t : mesh.triangles) {
      const auto& a = mesh.vertices[t[0]];
      const auto& b = mesh.vertices[t[1]];
      const auto& c = mesh.vertices[t[2]];
      v += Vec3(a[0], a[1], a[2]).dot(Vec3(b[0], b[1], b[2]).cross(Vec3(c[0], c[1], c[2]))) / 6.0;
    }
  }
  return v;
}

// Geometry: primitives and STL meshes (package:// and file://) with their scale, as collision
// shapes (a moving link: the convex hull; a static one: the triangles) and visuals with the
// materials' colours.
TEST_F(Urdf, GeometryMeshesScaleAndMaterials) {
  usePartsPackage();
  write("pkgs/parts/meshes/cube.stl", cubeStl());
  write("cube.stl", cubeStl());
  const std::string urdf = R"(<robot name="g">
  <material name="red"><color rgba="1 0 0 1"/></material>
  <link name="base">
    <collision><geometry><mesh filename="file://cube.stl" scale="2 2 2"/></geometry></collision>
  </link>
  <link name="arm">
    <inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <visual><geometry><box size="0.1 0.2 0.3"/></geometry><material name="red"/></visual>
    <visual><geometry><mesh filename="package://parts/meshes/cube.stl" scale="0.5 -2 3"/></geometry>
      <material name="blue"><color rgba="0 0.5 1 0.8"/></material></visual>
    <visual><geometry><cylinder radius="0.05" length="0.2"/></geometry></visual>
    <collision><origin xyz="0.1 0 0"/><geometry><mesh filename="package://parts/meshes/cube.stl" scale="0.5 2 3"/></geometry></collision>
    <collision><geometry><sphere radius="0.07"/></geometry></collision>
  </link>
  <joint name="j" type="continuous"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/></joint>
</robot>
)";
  const Scene scene = loadIncluded(urdf, "");
  const auto base = static_cast<std::size_t>(scene.model.findBody("base"));
  const auto arm = static_cast<std::size_t>(scene.model.findBody("arm"));
  using sim::dynamics::ShapeType;
  ASSERT_EQ(scene.model.bodies[base].shapes.size(), 1u);
  const auto& terrain = scene.model.bodies[base].shapes[0];
  ASSERT_EQ(terrain.type, ShapeType::TriangleMesh);
  EXPECT_EQ(terrain.mesh->triangles.size(), 12u);
  Vec3 top = Vec3::Constant(-1e9);
  for (const Vec3& v : terrain.mesh->vertices) top = top.cwiseMax(v);
  EXPECT_EQ(top, Vec3(2, 2, 2));
  const auto& shapes = scene.model.bodies[arm].shapes;
  ASSERT_EQ(shapes.size(), 2u);
  ASSERT_EQ(shapes[0].type, ShapeType::ConvexHull);
  EXPECT_EQ(shapes[0].hull->aabb_min, Vec3(0, 0, 0));
  EXPECT_EQ(shapes[0].hull->aabb_max, Vec3(0.5, 2, 3));
  EXPECT_LT((shapes[0].pose.position - Vec3(0.1, 0, 0)).norm(), 1e-15);
  EXPECT_EQ(shapes[1].type, ShapeType::Sphere);
  EXPECT_EQ(shapes[1].radius_m, 0.07);
  const auto& visuals = scene.looks[arm].visuals;
  ASSERT_EQ(visuals.size(), 3u);
  const auto diffuse = [](const sim::engine::VisualDef& v) {
    return v.model->meshes.at(0).material.diffuse;
  };
  EXPECT_EQ(diffuse(visuals[0]), (std::array<double, 4>{1, 0, 0, 1}));
  EXPECT_EQ(diffuse(visuals[1]),
            (std::array<double, 4>{0, 0.5, 1, double(0.8f)}));                // urdfdom: float
  EXPECT_EQ(diffuse(visuals[2]), (std::array<double, 4>{0.8, 0.8, 0.8, 1}));  // RViz's grey
  // The box: 0.1 x 0.2 x 0.3 m about its centre (the renderer's float vertices).
  Vec3 lo = Vec3::Constant(1e9), hi = Vec3::Constant(-1e9);
  for (const auto& v : visuals[0].model->meshes[0].vertices) {
    lo = lo.cwiseMin(Vec3(v[0], v[1], v[2]));
    hi = hi.cwiseMax(Vec3(v[0], v[1], v[2]));
  }
  EXPECT_LT((hi - Vec3(0.05, 0.1, 0.15)).norm(), 1e-7);
  EXPECT_LT((lo + Vec3(0.05, 0.1, 0.15)).norm(), 1e-7);
  // The mirrored mesh: scaled per axis, still facing outward (volume 0.5 * 2 * 3).
  lo = Vec3::Constant(1e9);
  hi = Vec3::Constant(-1e9);
  for (const auto& v : visuals[1].model->meshes[0].vertices) {
    lo = lo.cwiseMin(Vec3(v[0], v[1], v[2]));
    hi = hi.cwiseMax(Vec3(v[0], v[1], v[2]));
  }
  EXPECT_EQ(lo, Vec3(0, -2, 0));
  EXPECT_EQ(hi, Vec3(0.5, 0, 3));
  EXPECT_NEAR(signedVolume(*visuals[1].model), 3.0, 1e-12);
}

// The box [0, 1] x [0, 2] x [0, 3] (in the file's units) as the corners of its 12 triangles,
// outward-facing, for the OBJ and COLLADA texts below.
struct BoxCorners {
  std::vector<std::array<double, 3>> vertices;
  std::vector<std::array<int, 3>> triangles;
};
BoxCorners boxCorners(double unit) {
  BoxCorners b;
  for (int i = 0; i < 8; ++i)
    b.vertices.push_back(
        {(i & 1) * 1.0 * unit, ((i >> 1) & 1) * 2.0 * unit, ((i >> 2) & 1) * 3.0 * unit});
  // Faces as corner indices (bit 0: x, bit 1: y, bit 2: z), counter-clockwise seen from outside.
  const int quads[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4},
                           {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
  for (const auto& q : quads) {
    b.triangles.push_back({q[0], q[1], q[2]});
    b.triangles.push_back({q[0], q[2], q[3]});
  }
  return b;
}

std::string boxObj() {
  const BoxCorners b = boxCorners(1.0);
  std::string s = "# box 1 x 2 x 3\no box\n";
  for (const auto& v : b.vertices) s += fmt::format("v {} {} {}\n", v[0], v[1], v[2]);
  for (const auto& t : b.triangles) s += fmt::format("f {} {} {}\n", t[0] + 1, t[1] + 1, t[2] + 1);
  return s;
}

// A COLLADA 1.4.1 document in millimetres (<unit meter="0.001">), z up, as CAD exporters for ROS
// write them: the box is 1000 x 2000 x 3000 units.
std::string boxDaeMillimetres() {
  const BoxCorners b = boxCorners(1000.0);
  std::string positions, indices;
  for (const auto& v : b.vertices) positions += fmt::format("{} {} {} ", v[0], v[1], v[2]);
  for (const auto& t : b.triangles) indices += fmt::format("{} {} {} ", t[0], t[1], t[2]);
  return fmt::format(R"(<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit name="millimeter" meter="0.001"/><up_axis>Z_UP</up_axis></asset>
  <library_geometries>
    <geometry id="box-mesh" name="box">
      <mesh>
        <source id="box-positions">
          <float_array id="box-positions-array" count="24">{}</float_array>
          <technique_common>
            <accessor source="#box-positions-array" count="8" stride="3">
              <param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/>
            </accessor>
          </technique_common>
        </source>
        <vertices id="box-vertices"><input semantic="POSITION" source="#box-positions"/></vertices>
        <triangles count="12">
          <input semantic="VERTEX" source="#box-vertices" offset="0"/>
          <p>{}</p>
        </triangles>
      </mesh>
    </geometry>
  </library_geometries>
  <library_visual_scenes>
    <visual_scene id="scene" name="scene">
      <node id="box" name="box"><instance_geometry url="#box-mesh"/></node>
    </visual_scene>
  </library_visual_scenes>
  <scene><instance_visual_scene url="#scene"/></scene>
</COLLADA>
)",
                     positions, indices);
}

// OBJ and COLLADA meshes from a URDF (the formats ROS packages ship besides STL): a moving link's
// collision hull and its visual have the file's box, scaled; COLLADA's <unit> is applied (a file
// in millimetres lands in metres) and its z-up box stands as stored.
TEST_F(Urdf, ObjAndColladaMeshes) {
  usePartsPackage();
  write("pkgs/parts/meshes/box.obj", boxObj());
  write("pkgs/parts/meshes/box.dae", boxDaeMillimetres());
  const std::string urdf = R"(<robot name="m">
  <link name="base"/>
  <link name="obj_link">
    <inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <visual><geometry><mesh filename="package://parts/meshes/box.obj" scale="0.5 0.5 0.5"/></geometry></visual>
    <collision><geometry><mesh filename="package://parts/meshes/box.obj" scale="0.5 0.5 0.5"/></geometry></collision>
  </link>
  <link name="dae_link">
    <inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <visual><geometry><mesh filename="package://parts/meshes/box.dae"/></geometry></visual>
    <collision><geometry><mesh filename="package://parts/meshes/box.dae" scale="1 2 1"/></geometry></collision>
  </link>
  <joint name="jo" type="continuous"><parent link="base"/><child link="obj_link"/><axis xyz="0 0 1"/></joint>
  <joint name="jd" type="continuous"><parent link="base"/><child link="dae_link"/><axis xyz="0 0 1"/></joint>
</robot>
)";
  const Scene scene = loadIncluded(urdf, "");
  using sim::dynamics::ShapeType;
  const auto extent = [](const sim::engine::ImportedModel& m, Vec3& lo, Vec3& hi) {
    lo = Vec3::Constant(1e9);
    hi = Vec3::Constant(-1e9);
    for (const auto& mesh : m.meshes)
      for (const auto& v : mesh.vertices) {
        lo = lo.cwiseMin(Vec3(v[0], v[1], v[2]));
        hi = hi.cwiseMax(Vec3(v[0], v[1], v[2]));
      }
  };
  // Float vertices (Assimp's) of values like 1.5 and 3000 * 0.001: 1e-6 m covers their rounding.
  constexpr double kFloat = 1e-6;
  struct Expect {
    const char* link;
    Vec3 visual_hi, hull_hi;
  };
  for (const Expect& e : {Expect{"obj_link", Vec3(0.5, 1, 1.5), Vec3(0.5, 1, 1.5)},
                          Expect{"dae_link", Vec3(1, 2, 3), Vec3(1, 4, 3)}}) {
    SCOPED_TRACE(e.link);
    const auto body = static_cast<std::size_t>(scene.model.findBody(e.link));
    const auto& shapes = scene.model.bodies[body].shapes;
    ASSERT_EQ(shapes.size(), 1u);
    ASSERT_EQ(shapes[0].type, ShapeType::ConvexHull);
    EXPECT_LT(shapes[0].hull->aabb_min.norm(), kFloat);
    EXPECT_LT((shapes[0].hull->aabb_max - e.hull_hi).norm(), kFloat);
    const auto& visuals = scene.looks[body].visuals;
    ASSERT_EQ(visuals.size(), 1u);
    Vec3 lo, hi;
    extent(*visuals[0].model, lo, hi);
    EXPECT_LT(lo.norm(), kFloat);
    EXPECT_LT((hi - e.visual_hi).norm(), kFloat);
    EXPECT_NEAR(signedVolume(*visuals[0].model), e.visual_hi.prod(), 1e-5);
  }
}

// Elements that are not simulated are each reported once, by kind, with the first one's line;
// so are planar and floating joints.
TEST_F(Urdf, UnsupportedElementsWarnOncePerKind) {
  const std::string urdf = R"(<robot name="w">
  <link name="base"/>
  <link name="a"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <link name="b"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <joint name="ja" type="continuous"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/></joint>
  <joint name="jb" type="planar"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/></joint>
  <gazebo reference="a"><material>Gazebo/Red</material></gazebo>
  <gazebo reference="b"><mu1>0.5</mu1></gazebo>
  <transmission name="t"><type>transmission_interface/SimpleTransmission</type></transmission>
</robot>
)";
  const Scene scene = loadIncluded(urdf, "");
  const std::string file = (dir_ / "robot.urdf").string();
  int gazebo = 0, transmission = 0, planar = 0;
  for (const std::string& w : scene.warnings) {
    if (w.find("<gazebo>") != std::string::npos) {
      ++gazebo;
      EXPECT_EQ(w.rfind(fmt::format("{}:{}: ", file, lineOf(urdf, "<gazebo")), 0), 0u) << w;
      EXPECT_NE(w.find("(2 elements)"), std::string::npos) << w;
    }
    if (w.find("<transmission>") != std::string::npos) ++transmission;
    if (w.find("planar joints are not supported") != std::string::npos) {
      ++planar;
      EXPECT_NE(w.find(fmt::format(":{}: joint[jb]", lineOf(urdf, "name=\"jb\""))),
                std::string::npos)
          << w;
    }
  }
  EXPECT_EQ(gazebo, 1);
  EXPECT_EQ(transmission, 1);
  EXPECT_EQ(planar, 1);
  EXPECT_EQ(scene.warnings.size(), 3u);
}

// Bad URDF: each a SceneError naming the file, the element's line and its path.
TEST_F(Urdf, BadInputNamesFileLineAndElement) {
  const std::string good = R"(<robot name="r">
  <link name="base"/>
  <link name="a">
    <inertial>
      <mass value="1"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/>
    </inertial>
    <visual><geometry><mesh filename="file://cube.stl"/></geometry></visual>
  </link>
  <joint name="j" type="revolute">
    <parent link="base"/>
    <child link="a"/>
    <axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
</robot>
)";
  write("cube.stl", cubeStl());
  ASSERT_NO_THROW(loadScene(write("good.urdf", good)));
  struct Case {
    const char* what;
    std::string from, to;  // the edit of `good`
    std::string key;       // the element named
    std::string at;        // text on the expected line (in the edited file)
    std::string says;      // in the message
  };
  const std::vector<Case> cases = {
      {"malformed XML", "</link>\n  <joint", "</lnk>\n  <joint", "", "</lnk>", "malformed XML"},
      {"missing parent", "<parent link=\"base\"/>", "<parent link=\"nobody\"/>", "joint[j].parent",
       "<parent link=\"nobody\"/>", "no link named \"nobody\""},
      {"negative mass", "<mass value=\"1\"/>", "<mass value=\"-1\"/>", "link[a].inertial.mass",
       "<mass", "mass"},
      {"zero axis", "<axis xyz=\"0 0 1\"/>", "<axis xyz=\"0 0 0\"/>", "joint[j].axis", "<axis",
       "axis"},
      {"cycle", "<link name=\"base\"/>",
       "<link name=\"base\"/>\n  <joint name=\"back\" type=\"fixed\"><parent link=\"a\"/><child "
       "link=\"base\"/></joint>",
       "joint[", "", "cycle"},
      {"missing mesh", "file://cube.stl", "file://nosuch.stl", "link[a].visual[0].geometry.mesh",
       "nosuch.stl", "nosuch.stl"},
      {"two links of one name", "</robot>", "  <link name=\"base\" />\n</robot>", "link[base]",
       "<link name=\"base\" />", "a second link named \"base\""},
      {"unresolvable package", "file://cube.stl", "package://no_such_pkg/cube.stl",
       "link[a].visual[0].geometry.mesh", "no_such_pkg", "no package \"no_such_pkg\""},
  };
  for (const Case& c : cases) {
    std::string text = good;
    ASSERT_NE(text.find(c.from), std::string::npos) << c.what;
    text.replace(text.find(c.from), c.from.size(), c.to);
    const SceneError e = loadError(text);
    EXPECT_EQ(e.key().rfind(c.key, 0), 0u) << c.what << ": " << e.what();
    if (!c.at.empty()) {
      EXPECT_EQ(e.line(), lineOf(text, c.at)) << c.what << ": " << e.what();
    } else {
      EXPECT_GT(e.line(), 0) << c.what << ": " << e.what();
    }
    EXPECT_NE(e.message().find(c.says), std::string::npos) << c.what << ": " << e.what();
  }
}

// Two copies of one robot in a scene: `prefix` keeps their names apart; without it the second
// copy's names clash with a clear error.
TEST_F(Urdf, PrefixNamesCopies) {
  const std::string urdf = R"(<robot name="c">
  <link name="base"/>
  <link name="a"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <joint name="j" type="continuous"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/></joint>
</robot>
)";
  write("robot.urdf", urdf);
  const Scene scene = loadScene(write("two.yaml", R"(include:
  - {file: robot.urdf, prefix: left_, initial: {j: 0.5}}
  - {file: robot.urdf, prefix: right_, position: [1, 0, 0]}
)"));
  for (const char* name : {"left_base", "left_a", "right_base", "right_a"}) {
    EXPECT_GE(scene.model.findBody(name), 0) << name;
  }
  EXPECT_GE(scene.model.findJoint("left_j"), 0);
  EXPECT_GE(scene.model.findJoint("right_j"), 0);
  EXPECT_EQ(
      scene.model.bodies[static_cast<std::size_t>(scene.model.findBody("right_a"))].position_m,
      Vec3(1, 0, 0));
  const std::string clash =
      write("clash.yaml", "include:\n  - {file: robot.urdf}\n  - {file: robot.urdf}\n");
  try {
    loadScene(clash);
    ADD_FAILURE();
  } catch (const SceneError& e) {
    EXPECT_NE(e.message().find("duplicate name"), std::string::npos) << e.what();
  }
}

// The shipped example: the overlay's motors (catalogue, and the gripper's from the URDF's finger
// limits: Mp = effort / r, w_xx = velocity r), the mimic finger a repeater, names as in the URDFs.
TEST(UrdfExample, Arm6PickOverlay) {
  const Scene scene = loadScene(kSourceDir + "/scenes/arm6_pick.yaml");
  EXPECT_TRUE(scene.warnings.empty()) << scene.warnings.front();
  for (const char* body : {"base_link", "link_1", "link_2", "link_3", "link_4", "link_5", "link_6",
                           "gripper_base", "finger_left", "finger_right"}) {
    EXPECT_GE(scene.model.findBody(body), 0) << body;
  }
  for (int k = 1; k <= 6; ++k) EXPECT_GE(scene.model.findJoint(fmt::format("joint_{}", k)), 0) << k;
  ASSERT_EQ(scene.model.repeaters.size(), 1u);
  const auto& r = scene.model.repeaters[0];
  EXPECT_EQ(scene.model.joints[static_cast<std::size_t>(r.joint)].name, "finger_right_joint");
  EXPECT_EQ(scene.model.motors[static_cast<std::size_t>(r.motor)].name, "gripper");
  EXPECT_EQ(r.ratio, 1.0);
  const auto& gripper = scene.model.motors[static_cast<std::size_t>(r.motor)];
  EXPECT_DOUBLE_EQ(gripper.stall_torque_Nm, 100.0 / 1000.0);
  EXPECT_DOUBLE_EQ(gripper.no_load_speed_radps, 0.1 * 1000.0);
  EXPECT_EQ(scene.model.motors.size(), 7u);
  EXPECT_FALSE(scene.pult.controls.empty());
}

}  // namespace
