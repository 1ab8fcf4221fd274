// Flexure joint (SPEC §5, seed 001): the planar spring of eq. 2 and the PRB torsion spring as
// soft rows in the full-coordinate solver. The static references are independent of the solver:
// closed forms (T / k_z) and a Newton solve of eq. 2 written out in this file.
#include <dynamics/flexure.h>
#include <dynamics/model.h>
#include <dynamics/simulator.h>

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace sim::dynamics {
namespace {

constexpr double kDt = 1.0 / 240.0;  // the engine's usual step

FlexureDef linearPlanar(double kx, double ky, double kz, double c_lin, double c_ang) {
  FlexureDef f;
  f.k_x.stiffness = kx;
  f.k_y.stiffness = ky;
  f.k_z.stiffness = kz;
  f.damping_linear = c_lin;
  f.damping_angular = c_ang;
  return f;
}

/// A 20 g output link anchored to the world by a flexure whose axis is world z; the flexure runs
/// along world x (frame y) and the link's centre of mass sits `com_offset` beyond the compliance
/// centre along it.
Model flexureModel(const FlexureDef& flex, double com_offset, bool gravity) {
  Model m;
  m.gravity_mps2 = gravity ? Vec3(0, -9.81, 0) : Vec3::Zero();
  m.solver.time_step_s = kDt;
  m.solver.substeps = 1;
  m.solver.velocity_iterations = 20;
  m.contact.sleep_enabled = false;
  BodyDef link;
  link.name = "link";
  link.mass_kg = 0.02;
  const double len = 0.12;  // a lever like the seed's stand
  link.inertia_kgm2 =
      Vec3(1e-7, link.mass_kg * len * len / 12, link.mass_kg * len * len / 12).asDiagonal();
  link.position_m = Vec3(com_offset, 0, 0);
  m.bodies.push_back(link);
  JointDef j;
  j.name = "flex";
  j.type = JointType::Flexure;
  j.body_a = kWorld;
  j.body_b = 0;
  // x-axis of the frame = world z (bending axis), y-axis = world x (along the flexure).
  const Quat axes = Quat(Eigen::AngleAxisd(-M_PI / 2, Vec3::UnitY())) *
                    Quat(Eigen::AngleAxisd(-M_PI / 2, Vec3::UnitX()));
  j.frame_a.position = Vec3::Zero();
  j.frame_a.rotation = axes;
  j.frame_b.position = Vec3(-com_offset, 0, 0);
  j.frame_b.rotation = axes;
  j.flexure = flex;
  m.joints.push_back(j);
  return m;
}

/// Deformation (x, y, θ) of the flexure in `state`: frame origin of the output in the base
/// frame's (y, z) = world (x, y), and the angle about world z.
Vec3 deformation(const Simulator& sim, const State& s) {
  const BodyState& b = s.bodies[0];
  const Vec3 origin = b.position_m + b.orientation * sim.model().joints[0].frame_b.position;
  return {origin.x(), origin.y(), sim.measureJointPosition(s, 0)};
}

Vec3 settle(Simulator& sim, State& s, double seconds) {
  const int steps = static_cast<int>(seconds / kDt);
  for (int i = 0; i < steps; ++i) {
    const StepReport r = sim.step(s);
    EXPECT_EQ(r.fault.kind, Fault::Kind::None) << r.fault.describe();
    if (r.fault.kind != Fault::Kind::None) break;
  }
  return deformation(sim, s);
}

TEST(Flexure, FramesPutTheAxisOnWorldZ) {
  // Guards the test geometry itself: frame x = world z, frame y = world x.
  const Model m = flexureModel(linearPlanar(1e4, 1e4, 1.0, 0, 0), 0.0144, false);
  const Mat3 r = m.joints[0].frame_a.rotation.toRotationMatrix();
  EXPECT_NEAR((r.col(0) - Vec3::UnitZ()).norm(), 0.0, 1e-12);
  EXPECT_NEAR((r.col(1) - Vec3::UnitX()).norm(), 0.0, 1e-12);
}

TEST(Flexure, PureTorqueTurnsByTorqueOverKz) {
  // Linear planar spring, torque only: eq. 2 has f_x = f_y = 0 at x = y = 0, so the output turns
  // about the compliance centre by θ = T / k_z without drift. The centre of mass is 14.4 mm out
  // (b L of the LS hinge), so the solver must hold the centre through the coupled soft rows.
  const double kz = 1.5, torque = 0.12;  // θ = 0.08 rad
  Simulator sim(flexureModel(linearPlanar(2e5, 5e4, kz, 20.0, 0.02), 0.0144, false));
  sim.setBodyLoad(0, Vec3::Zero(), Vec3(0, 0, torque));
  State s = sim.initialState();
  const Vec3 q = settle(sim, s, 3.0);
  // Settled to 1e-6 relative (damping ratio ~0.4 on the rotation, 3 s >> its 16 ms period);
  // the drift of the centre is bounded by the solver's row residual, far below a micrometre.
  EXPECT_NEAR(q.z(), torque / kz, 1e-6 * torque / kz);
  EXPECT_LT(std::abs(q.x()), 1e-7);
  EXPECT_LT(std::abs(q.y()), 1e-7);
}

TEST(Flexure, TorsionSpringPinsTheCentre) {
  // PRB model: rigid pin at the characteristic pivot plus the torsion spring.
  FlexureDef f;
  f.model = FlexureModel::TorsionSpring;
  f.k_z.stiffness = 0.8;
  f.damping_angular = 0.01;
  Simulator sim(flexureModel(f, 0.02, false));
  sim.setBodyLoad(0, Vec3(0.5, 0.3, 0), Vec3(0, 0, 0.04));  // force through the COM, 20 mm out
  State s = sim.initialState();
  const Vec3 q = settle(sim, s, 3.0);
  // Equilibrium about the pin: k_z θ = T + (r(θ) × F)_z with r = 0.02 (cos θ, sin θ).
  double th = 0.0;
  for (int i = 0; i < 50; ++i) {
    const double g = 0.8 * th - 0.04 - 0.02 * (std::cos(th) * 0.3 - std::sin(th) * 0.5);
    const double dg = 0.8 + 0.02 * (std::sin(th) * 0.3 + std::cos(th) * 0.5);
    th -= g / dg;
  }
  EXPECT_NEAR(q.z(), th, 1e-6);
  EXPECT_LT(q.head<2>().norm(), 1e-6);  // position passes hold the pin to their tolerance
}

// Seed 001 eq. 2 with linear stiffnesses, written out here from the paper (independent of
// flexure.cpp, which the solver uses), solved for W(q) = load by Newton with its analytic Jacobian.
Vec3 eq2Deflection(double kx, double ky, double kz, const Vec3& load) {
  const double m = 0.5 * (kx + ky), d = 0.5 * (ky - kx);
  Vec3 q = Vec3::Zero();
  for (int it = 0; it < 50; ++it) {
    const double x = q.x(), y = q.y(), c = std::cos(q.z()), s = std::sin(q.z());
    const double p = x * c + y * s, r = y * c - x * s;  // the deformation in the output's axes
    const Vec3 w(kx * x * c + m * y * s, ky * y * c - m * x * s, d * p * r + kz * q.z());
    Mat3 j;
    j << kx * c, m * s, -kx * x * s + m * y * c,  //
        -m * s, ky * c, -ky * y * s - m * x * c,  //
        d * (c * r - s * p), d * (s * r + c * p), d * (r * r - p * p) + kz;
    q -= j.fullPivLu().solve(w - load);
  }
  return q;
}

TEST(Flexure, CombinedLoadDriftsAsTheCouplingPredicts) {
  // Force and torque at the compliance centre (centre of mass placed there, so the load's moment
  // arm does not change with the deformation). Reference: eq. 2 as printed, solved above.
  const FlexureDef f = linearPlanar(2e3, 1e3, 1.0, 2.0, 0.01);
  const Vec3 load(2.0, 3.0, 0.3);  // f_x, f_y (N) in the base frame, torque (N m)
  const Vec3 expected = eq2Deflection(2e3, 1e3, 1.0, load);
  // The coupling matters here: the drift differs from the uncoupled F/k by more than 20 %.
  const Vec3 uncoupled(load.x() / 2e3, load.y() / 1e3, load.z() / 1.0);
  ASSERT_GT((expected.head<2>() - uncoupled.head<2>()).norm(), 0.2 * uncoupled.head<2>().norm());

  Simulator sim(flexureModel(f, 0.0, false));
  sim.setBodyLoad(0, Vec3(load.x(), load.y(), 0), Vec3(0, 0, load.z()));
  State s = sim.initialState();
  const Vec3 q = settle(sim, s, 4.0);
  // Steady state to 0.1 % of the drift: the soft rows use eq. 2's full wrench as their error, so
  // the fixed point is exactly W(q) = load; what is left is the decay of the slowest mode.
  EXPECT_NEAR(q.x(), expected.x(), 1e-3 * std::abs(expected.x()));
  EXPECT_NEAR(q.y(), expected.y(), 1e-3 * std::abs(expected.y()));
  EXPECT_NEAR(q.z(), expected.z(), 1e-3 * std::abs(expected.z()));
}

TEST(Flexure, StiffSpringIsStableAtTheEngineStep) {
  // k_x = k_y = 1e7 N/m on 20 g gives ω ≈ 2.2e4 rad/s, ω h ≈ 93 at h = 1/240 s: explicit springs
  // explode in a few steps. No damping at all: the implicit soft rows alone must keep it stable
  // and must not gain energy. Gravity pulls the 72 mm lever down.
  const FlexureDef f = linearPlanar(1e7, 1e7, 50.0, 0.0, 0.0);
  Simulator sim(flexureModel(f, 0.072, true));
  State s = sim.initialState();
  double max_speed = 0.0;
  for (int i = 0; i < 2400; ++i) {  // 10 s
    const StepReport r = sim.step(s);
    ASSERT_EQ(r.fault.kind, Fault::Kind::None) << r.fault.describe();
    max_speed = std::max(max_speed, s.bodies[0].linear_velocity_mps.norm());
  }
  // Energy bound: released at rest, the lever swings at most between 0 and twice the static sag
  // θ_s = 2.8e-4 rad at ω = sqrt(k_z / I_pivot) ≈ 625 rad/s, so its centre of mass never moves
  // faster than r ω 2 θ_s ≈ 0.025 m/s. Any energy gain would break the bound.
  EXPECT_LT(max_speed, 0.05);
  const Vec3 q = deformation(sim, s);
  // Static sag from the torque of gravity about the centre: θ ≈ -m g r / k_z.
  EXPECT_NEAR(q.z(), -0.02 * 9.81 * 0.072 / 50.0, 0.1 * 0.02 * 9.81 * 0.072 / 50.0);
  EXPECT_LT(q.head<2>().norm(), 1e-6);  // 0.2 N against 1e7 N/m
}

TEST(Flexure, UnequalStiffnessesDoNotFlutter) {
  // The seed's leaf: k_x = E W t / L = 2.4e6 N/m along, k_y ~ 1e3 N/m across. Eq. 2 couples them
  // through ½ (k_x + k_y) sin θ, a non-symmetric (circulatory) term ~1e3 times k_y; with the cross
  // terms explicit this diverged within 30 steps. Gravity sags the 74 mm lever by
  // θ ≈ m g r / k_z = 0.044 rad; after 5 s with light damping it must rest there.
  const FlexureDef f = linearPlanar(2.36e6, 944.0, 0.334, 0.05, 0.0005);
  Simulator sim(flexureModel(f, 0.0744, true));
  State s = sim.initialState();
  const Vec3 q = settle(sim, s, 5.0);
  const double sag = 0.02 * 9.81 * 0.0744 / 0.334;
  // 5 %: the lever's weight also has a moment arm change with θ (cos θ ≈ 0.999) and the coupling
  // shifts the centre by ~0.1 mm; a fluttering or drifting solution is off by orders of magnitude.
  EXPECT_NEAR(std::abs(q.z()), sag, 0.05 * sag);
  EXPECT_LT(s.bodies[0].angular_velocity_radps.norm(), 1e-3);
}

TEST(Flexure, TablesReproduceTheirLoadUnderPureTorque) {
  // A stiffening torque table: T = 1.0 θ + 20 θ^3 sampled every 0.05 rad.
  FlexureDef f = linearPlanar(1e5, 1e5, 1.0, 5.0, 0.02);
  f.k_z.stiffness = 0.0;
  for (int i = -10; i <= 10; ++i) {
    const double th = 0.05 * i;
    f.k_z.deformation.push_back(th);
    f.k_z.load.push_back(1.0 * th + 20.0 * th * th * th);
  }
  ASSERT_TRUE(validateFlexure(f).empty());
  // The table's own point: T(0.3) = 0.84 N m exactly at a node.
  Simulator sim(flexureModel(f, 0.0144, false));
  sim.setBodyLoad(0, Vec3::Zero(), Vec3(0, 0, 0.84));
  State s = sim.initialState();
  const Vec3 q = settle(sim, s, 3.0);
  EXPECT_NEAR(q.z(), 0.3, 1e-6);
}

// The joint coordinate of a flexure deflected in the initial poses is its angle from the start
// (the initial state, Simulator::measureJointPosition and the solver measure it with one function),
// and it continues smoothly through the first step: it used to read 0 until the first step and
// then jump to the deflection.
TEST(Flexure, InitialCoordinateIsTheDeflection) {
  Model m = flexureModel(linearPlanar(2e4, 2e4, 0.5, 1.0, 1e-3), 0.06, false);
  const double turned = 0.2;  // rad about world z, the bending axis, about the compliance centre
  const Quat q(Eigen::AngleAxisd(turned, Vec3::UnitZ()));
  m.bodies[0].orientation = q;
  m.bodies[0].position_m = q * m.bodies[0].position_m;
  Simulator sim(m);
  State s = sim.initialState();
  const double measured = sim.measureJointPosition(s, 0);
  EXPECT_NEAR(std::abs(measured), turned, 1e-12);
  EXPECT_EQ(s.joints[0].position, measured);
  const double before = s.joints[0].position;
  ASSERT_EQ(sim.step(s).fault.kind, Fault::Kind::None);
  // One step of the spring unwinding from rest: at most what its torque k_z θ gives the link's
  // inertia about the centre in one explicit step, (k_z θ / I) h^2 (implicit Euler moves less);
  // the old jump was the whole deflection.
  const double inertia = m.bodies[0].inertia_kgm2(2, 2) + m.bodies[0].mass_kg * 0.06 * 0.06;
  EXPECT_LT(std::abs(s.joints[0].position - before), 0.5 * turned / inertia * kDt * kDt);
  EXPECT_EQ(s.joints[0].position, sim.measureJointPosition(s, 0));
}

TEST(Flexure, ValidationNamesTheField) {
  Model m = flexureModel(linearPlanar(-1.0, 1e3, 1.0, 0, 0), 0.01, false);
  m.joints[0].flexure.k_z.deformation = {0.0, -0.1};
  m.joints[0].flexure.k_z.load = {0.0, -1.0};
  const std::vector<ModelError> errors = validate(m);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].field, "joints[flex].flexure.k_x");
  EXPECT_EQ(errors[1].field, "joints[flex].flexure.k_z.table");
  EXPECT_NE(errors[1].message.find("increase"), std::string::npos);
}

}  // namespace
}  // namespace sim::dynamics
