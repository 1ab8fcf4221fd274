// Pins dynamics/src/simulator.cpp's stages (forces, velocity solve, integration, split-impulse
// position correction) on mechanisms with independent answers: pendulum periods, energy of a
// frictionless double pendulum, chain drift, free bodies, loops, trees; and the heavy validation
// (check.h, dense_factor.h) stopping a bad step.
#include <dynamics/samples.h>
#include <dynamics/simulator.h>

#include <cmath>
#include <numbers>

#include <gtest/gtest.h>
#include <Eigen/Dense>

#include "check.h"
#include "dense_factor.h"
#include "fixture.h"

namespace sim::dynamics {
namespace {

constexpr double kPi = std::numbers::pi;

double totalEnergy(const Model& m, const State& s) {
  double e = 0.0;
  for (std::size_t i = 0; i < m.bodies.size(); ++i) {
    const BodyDef& d = m.bodies[i];
    const BodyState& b = s.bodies[i];
    const Mat3 r = b.orientation.toRotationMatrix();
    const Mat3 inertia = r * d.inertia_kgm2 * r.transpose();
    e += 0.5 * d.mass_kg * b.linear_velocity_mps.squaredNorm() +
         0.5 * b.angular_velocity_radps.dot(inertia * b.angular_velocity_radps) -
         d.mass_kg * m.gravity_mps2.dot(b.position_m);
  }
  return e;
}

// Complete elliptic integral of the first kind by the arithmetic-geometric mean.
double ellipticK(double k) {
  double a = 1.0, b = std::sqrt(1.0 - k * k);
  for (int i = 0; i < 30; ++i) {
    const double an = 0.5 * (a + b);
    b = std::sqrt(a * b);
    a = an;
  }
  return kPi / (2.0 * a);
}

// Mean period from upward zero crossings of the pendulum's angle (linear interpolation).
double measuredPeriod(double length, double angle0, double dt, double duration) {
  Simulator sim(samples::pendulum(length, angle0, dt));
  State s = sim.initialState();
  std::vector<double> crossings;
  double previous = s.joints[0].position;
  while (s.time_s < duration) {
    checkedStep(sim, s);
    const double q = s.joints[0].position;
    if (previous < 0.0 && q >= 0.0) crossings.push_back(s.time_s - dt * q / (q - previous));
    previous = q;
  }
  EXPECT_GE(crossings.size(), 3u);
  return (crossings.back() - crossings.front()) / static_cast<double>(crossings.size() - 1);
}

TEST(Pendulum, SmallAnglePeriodMatchesTwoPiSqrtLOverG) {
  const double length = 1.0, dt = 1e-3;
  const double expected = 2.0 * kPi * std::sqrt(length / 9.81);
  // The small-angle formula itself is off by theta0^2 / 16 = 1.6e-4 at 0.05 rad; semi-implicit
  // Euler adds O(dt^2 w^2) ~ 1e-5. 5e-4 relative covers both and rejects a wrong g or length.
  EXPECT_NEAR(measuredPeriod(length, 0.05, dt, 12.0) / expected, 1.0, 5e-4);
}

TEST(Pendulum, LargeAnglePeriodMatchesEllipticIntegral) {
  const double length = 1.0, dt = 1e-3, angle0 = 2.0;  // 115 degrees
  const double expected = 4.0 * std::sqrt(length / 9.81) * ellipticK(std::sin(angle0 / 2.0));
  // 2 rad is 35 % longer than the small-angle period: a 1e-3 relative match needs the
  // nonlinear dynamics right.
  EXPECT_NEAR(measuredPeriod(length, angle0, dt, 15.0) / expected, 1.0, 1e-3);
}

Model doublePendulum(double dt) {
  Model m;
  m.solver.time_step_s = dt;
  m.solver.velocity_iterations = 20;
  m.solver.position_iterations = 4;
  const Vec3 size(1.0, 0.05, 0.05);
  for (int i = 0; i < 2; ++i) {
    BodyDef b;
    b.name = "link" + std::to_string(i);
    b.mass_kg = 1.0;
    b.inertia_kgm2 = samples::boxInertia(1.0, size);
    b.position_m = Vec3(0.5 + i, 0, 0);
    m.bodies.push_back(b);
    JointDef j;
    j.name = "hinge" + std::to_string(i);
    j.body_a = i == 0 ? kWorld : 0;
    j.body_b = i;
    j.frame_a.position = i == 0 ? Vec3::Zero() : Vec3(0.5, 0, 0);
    j.frame_b.position = Vec3(-0.5, 0, 0);
    j.frame_a.rotation = j.frame_b.rotation = Quat::FromTwoVectors(Vec3::UnitX(), Vec3::UnitY());
    m.joints.push_back(j);
  }
  return m;
}

TEST(DoublePendulum, EnergyDriftBoundedOverSixtySeconds) {
  const Model model = doublePendulum(1e-3);
  Simulator sim(model);
  State s = sim.initialState();
  const double e0 = totalEnergy(model, s);
  const double scale = 2.0 * 9.81 * 2.0;  // m g L of the system: the energy swing of the motion
  double worst = 0.0;
  for (int n = 0; n < 60000; ++n) {
    ASSERT_EQ(sim.step(s).fault.kind, Fault::Kind::None);
    worst = std::max(worst, std::abs(totalEnergy(model, s) - e0));
  }
  // Chaotic motion from horizontal: semi-implicit Euler is symplectic for the unconstrained part,
  // so energy oscillates without secular growth; split impulses never add energy. 2 % of the
  // system's energy scale bounds the oscillation at dt = 1 ms.
  EXPECT_LT(worst / scale, 0.02) << "worst energy error " << worst << " J";
  RecordProperty("energy_drift_relative", std::to_string(worst / scale));
}

TEST(Chain, TwentyLinksStayConnectedWithSplitImpulses) {
  // Released horizontal, the chain whips down; the worst separation happens in that transient.
  // Four substeps of 10 velocity and 2 position iterations per 1 ms frame keep it near 3e-5 m
  // (one substep with the same iterations reaches 3e-4 m in the transient and 1e-4 m at rest).
  Model model = samples::chain(20, 1e-3, 10, 2);
  model.solver.substeps = 4;
  Simulator sim(model);
  State s = sim.initialState();
  double worst = 0.0;
  for (int n = 0; n < 3000; ++n) {
    ASSERT_EQ(sim.step(s).fault.kind, Fault::Kind::None);
    worst = std::max(worst, samples::maxAnchorSeparation(model, s));
  }
  EXPECT_LT(worst, 1e-4);
  RecordProperty("max_separation_m", std::to_string(worst));
}

TEST(Chain, SplitImpulsesDoNotInjectEnergy) {
  // Without position correction the chain drifts apart; with it the energy must not grow.
  const Model model = samples::chain(20, 1e-3, 10, 4);
  Simulator sim(model);
  State s = sim.initialState();
  const double e0 = totalEnergy(model, s);
  checkedSteps(sim, s, 3000);
  // Friction-free but the solver dissipates a little; it must never create energy
  // (1e-3 J is 0.05 % of the chain's 2 J of potential energy swing).
  EXPECT_LT(totalEnergy(model, s), e0 + 1e-3);
}

// A hanging chain at rest whose second hinge is driven (solved in its motor block, outside the
// free hinges' sweep): every free hinge still holds the weight of the links below it, in its own
// impulses. The free hinges on either side of the driven one are solved as separate runs.
TEST(Chain, FreeHingesAroundADrivenOneCarryTheLinksBelowThem) {
  Model model = samples::chain(4, 1e-3, 10, 2);
  model.gravity_mps2 = Vec3(9.81, 0.0, 0.0);  // the chain lies along +x: it hangs at rest
  MotorDef motor;
  motor.name = "drive";
  motor.joint = 1;
  motor.stall_torque_Nm = 0.2;
  motor.no_load_speed_radps = 5.0;
  motor.time_constant_s = 0.01;
  motor.gear_ratio = 50.0;
  model.motors.push_back(motor);
  Simulator sim(model);
  State s = sim.initialState();
  checkedSteps(sim, s, 200);
  const double h = model.solver.time_step_s / model.solver.substeps;
  for (const int j : {0, 2, 3}) {
    const double below = 0.1 * 9.81 * (4 - j);  // N: the links j..3 pull on hinge j
    // The rows converge to the static load to rounding: 1e-9 of it.
    EXPECT_NEAR(-s.joints[j].impulses.linear.x() / h, below, 1e-9 * below) << "hinge " << j;
    EXPECT_NEAR(s.joints[j].impulses.linear.tail<2>().norm(), 0.0, 1e-12) << "hinge " << j;
  }
}

TEST(FreeBody, MomentumIsConservedWithoutGravity) {
  Model m;
  m.gravity_mps2 = Vec3::Zero();
  m.solver.time_step_s = 1e-3;
  BodyDef b;
  b.name = "tumbler";
  b.mass_kg = 2.0;
  b.inertia_kgm2 = samples::boxInertia(2.0, Vec3(0.3, 0.2, 0.1));
  b.linear_velocity_mps = Vec3(1, -2, 0.5);
  b.angular_velocity_radps = Vec3(0.1, 3.0, 0.2);
  m.bodies.push_back(b);
  Simulator sim(m);
  State s = sim.initialState();
  checkedSteps(sim, s, 1000);
  EXPECT_TRUE(s.bodies[0].linear_velocity_mps.isApprox(b.linear_velocity_mps, 1e-14));
  EXPECT_NEAR((s.bodies[0].position_m - Vec3(1, -2, 0.5)).norm(), 0.0, 1e-9);
}

// A four-bar linkage: three moving links closed by a fourth hinge to the world (a loop).
TEST(ClosedLoop, FourBarStaysClosed) {
  Model m;
  m.solver.time_step_s = 1e-3;
  m.solver.velocity_iterations = 30;
  m.solver.position_iterations = 4;
  const Quat hinge_y = Quat::FromTwoVectors(Vec3::UnitX(), Vec3::UnitY());
  auto box = [](std::string name, Vec3 centre, Vec3 size) {
    BodyDef b;
    b.name = std::move(name);
    b.mass_kg = 1.0;
    b.inertia_kgm2 = samples::boxInertia(1.0, size);
    b.position_m = centre;
    return b;
  };
  m.bodies.push_back(box("crank", Vec3(0, 0, 0.25), Vec3(0.05, 0.05, 0.5)));
  m.bodies.push_back(box("coupler", Vec3(0.5, 0, 0.5), Vec3(1.0, 0.05, 0.05)));
  m.bodies.push_back(box("rocker", Vec3(1.0, 0, 0.25), Vec3(0.05, 0.05, 0.5)));
  auto hinge = [&](std::string name, int a, int b, Vec3 anchor) {
    JointDef j;
    j.name = std::move(name);
    j.body_a = a;
    j.body_b = b;
    const Vec3 xa = a == kWorld ? Vec3::Zero() : m.bodies[a].position_m;
    j.frame_a.position = anchor - xa;
    j.frame_b.position = anchor - m.bodies[b].position_m;
    j.frame_a.rotation = j.frame_b.rotation = hinge_y;
    m.joints.push_back(j);
  };
  hinge("ground_crank", kWorld, 0, Vec3(0, 0, 0));
  hinge("crank_coupler", 0, 1, Vec3(0, 0, 0.5));
  hinge("coupler_rocker", 1, 2, Vec3(1.0, 0, 0.5));
  hinge("rocker_ground", 2, kWorld == 0 ? 0 : 2, Vec3(1.0, 0, 0));  // placeholder, fixed below
  m.joints.back().body_a = kWorld;
  m.joints.back().body_b = 2;
  m.joints.back().frame_a.position = Vec3(1.0, 0, 0);
  m.bodies[0].angular_velocity_radps = Vec3(0, 2.0, 0);  // start it moving
  Simulator sim(m);
  State s = sim.initialState();
  double worst = 0.0;
  for (int n = 0; n < 3000; ++n) {
    ASSERT_EQ(sim.step(s).fault.kind, Fault::Kind::None);
    worst = std::max(worst, samples::maxAnchorSeparation(m, s));
  }
  EXPECT_LT(worst, 1e-4);
  // A parallelogram: the coupler stays horizontal.
  EXPECT_LT(std::abs(s.bodies[1].position_m.z() - s.bodies[0].position_m.z() * 2.0), 1e-3);
}

// A branching tree: a floating base carrying two arms, thrown without gravity: the total linear
// momentum is conserved (joint impulses are internal) and the joints hold.
TEST(Tree, FloatingBaseWithTwoArmsConservesMomentum) {
  Model m;
  m.gravity_mps2 = Vec3::Zero();
  m.solver.time_step_s = 1e-3;
  m.solver.velocity_iterations = 30;
  BodyDef base;
  base.name = "base";
  base.mass_kg = 5.0;
  base.inertia_kgm2 = samples::boxInertia(5.0, Vec3(0.4, 0.4, 0.2));
  base.linear_velocity_mps = Vec3(0.3, 0.0, 0.1);
  base.angular_velocity_radps = Vec3(0.0, 0.0, 1.0);
  m.bodies.push_back(base);
  for (int side : {1, -1}) {
    BodyDef arm;
    arm.name = side > 0 ? "left" : "right";
    arm.mass_kg = 1.0;
    arm.inertia_kgm2 = samples::boxInertia(1.0, Vec3(0.5, 0.05, 0.05));
    arm.position_m = Vec3(side * 0.45, 0, 0);
    arm.angular_velocity_radps = Vec3(0, side * 2.0, 0);
    m.bodies.push_back(arm);
    JointDef j;
    j.name = arm.name;
    j.type = side > 0 ? JointType::Hinge : JointType::Ball;
    j.body_a = 0;
    j.body_b = static_cast<int>(m.bodies.size()) - 1;
    j.frame_a.position = Vec3(side * 0.2, 0, 0);
    j.frame_b.position = Vec3(-side * 0.25, 0, 0);
    j.frame_a.rotation = j.frame_b.rotation = Quat::FromTwoVectors(Vec3::UnitX(), Vec3::UnitY());
    m.joints.push_back(j);
  }
  Simulator sim(m);
  State s = sim.initialState();
  auto momentum = [&](const State& st) {
    Vec3 p = Vec3::Zero();
    for (std::size_t i = 0; i < m.bodies.size(); ++i)
      p += m.bodies[i].mass_kg * st.bodies[i].linear_velocity_mps;
    return p;
  };
  const Vec3 p0 = momentum(s);
  double worst = 0.0;
  for (int n = 0; n < 2000; ++n) {
    ASSERT_EQ(sim.step(s).fault.kind, Fault::Kind::None);
    worst = std::max(worst, samples::maxAnchorSeparation(m, s));
  }
  // Impulses are applied in equal and opposite pairs: momentum is exact to rounding.
  EXPECT_LT((momentum(s) - p0).norm(), 1e-10);
  EXPECT_LT(worst, 1e-4);
}

}  // namespace
// Assertions (dynamics/src/check.h). The cheap invariant holds in every build: a State of
// another model stops the step with a message instead of reading out of bounds.
TEST(AssertionsDeathTest, StateOfAnotherModelStopsTheStep) {
  Simulator sim(samples::chain(3));
  State other = Simulator(samples::chain(5)).initialState();
  EXPECT_DEATH(sim.step(other), "not one of this simulator's Model");
}

// Heavy validation (SIMTRAINER_VALIDATE builds, scripts/validate.sh): an indefinite K is caught
// where a motor block's factor meets it.
TEST(AssertionsDeathTest, ValidationCatchesAnIndefiniteBlockFactor) {
  if (!detail::kValidate) GTEST_SKIP() << "built without SIMTRAINER_VALIDATE";
  Eigen::MatrixXd k(2, 2);
  k << 1.0, 2.0, 2.0, 1.0;  // eigenvalues 3 and -1: the second pivot is -3
  detail::SmallLdlt ldlt;
  ldlt.resize(2);
  EXPECT_DEATH(ldlt.factorRows(k, 0, 2), "not positive semi-definite");
}

}  // namespace sim::dynamics
