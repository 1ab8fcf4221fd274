// Pins the power-off holding brake of a motor (MotorDef::brake_torque, MotorState::brake_released
// in dynamics/src/simulator.cpp) against statics and the analytic motion of the released joint.
#include <dynamics/samples.h>
#include <dynamics/simulator.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include <gtest/gtest.h>

#include "fixture.h"
#include "simulator_testing.h"

namespace sim::dynamics {
namespace {

// The WG-7152 gear motor on a 2 kg, 1 m horizontal link about a horizontal hinge: gravity loads
// the joint with m g l cos q = 9.81 N m (l = 0.5 m to the centre of mass), pulling q positive.
Model loadedLink(double brake_torque) {
  Model m = samples::wg7152GravityLoaded(0.01, 0.01, 0.0);
  m.motors[0].initial_voltage = 0.0;
  m.motors[0].brake_torque = brake_torque;
  return m;
}

constexpr double kGravityTorque = 2.0 * 9.81 * 0.5;  // m g l at q = 0 (N m)

// The motor at u = 0 is a damper r^2 Mp / w_xx on the joint (its characteristic with the
// armature short-circuited), so a joint the brake does not hold creeps at the quasi-static speed
// where the damper balances the net torque: (m g l cos q - T_brake) / (r^2 Mp / w_xx).
double creepSpeed(const Model& m, double q, double brake) {
  const MotorDef& mo = m.motors[0];
  const double c = mo.gear_ratio * mo.gear_ratio * mo.stall_torque_Nm / mo.no_load_speed_radps;
  return (kGravityTorque * std::cos(q) - brake) / c;
}

// Brake torque 15 N m > 9.81 N m load: at u = 0 the joint stays where it is. Tolerance 1e-6 rad
// over 3 s (measured 8e-8 rad, the first step's settling): far below the 0.12 rad the unbraked
// motor alone lets it creep in the same time (checked below).
TEST(Brake, HoldsAGravityLoadAtZeroVoltage) {
  Simulator sim(loadedLink(15.0));
  State s = sim.initialState();
  const double q0 = s.joints[0].position;
  for (int n = 0; n < 300; ++n) ASSERT_EQ(sim.step(s).fault.kind, Fault::Kind::None);
  EXPECT_NEAR(s.joints[0].position, q0, 1e-6);
  EXPECT_NEAR(s.joints[0].speed, 0.0, 1e-6);
  // The brake carries the load: the friction impulse per step is the gravity torque.
  EXPECT_NEAR(std::abs(s.joints[0].impulses.friction) / 0.01, kGravityTorque,
              0.01 * kGravityTorque);
}

// Without a brake, and with a brake weaker than the load, the joint creeps at the predicted speed
// (0.1 % tolerance, measured 3e-5: the link's inertia makes the approach to the creep speed take
// ~15 ms, and the prediction uses cos q at the end).
TEST(Brake, ALoadAboveTheBrakeTorqueSlips) {
  for (double brake : {0.0, 5.0}) {
    Simulator sim(loadedLink(brake));
    State s = sim.initialState();
    for (int n = 0; n < 100; ++n) ASSERT_EQ(sim.step(s).fault.kind, Fault::Kind::None);
    const double expected = creepSpeed(sim.model(), s.joints[0].position, brake);
    EXPECT_GT(expected, 0.01);
    EXPECT_NEAR(s.joints[0].speed, expected, 1e-3 * expected) << "brake " << brake << " N m";
  }
}

// A powered motor lifts the brake: at u = 0.3 (above release_u = 0.05) the braked link moves as
// the unbraked one, bit for bit, and at u = 0.04 (below) it is held.
TEST(Brake, PowerLiftsTheBrake) {
  auto run = [](double brake, double u) {
    Model m = loadedLink(brake);
    m.motors[0].initial_voltage = u;
    Simulator sim(m);
    State s = sim.initialState();
    checkedSteps(sim, s, 100);
    return s.joints[0].position;
  };
  EXPECT_EQ(run(15.0, 0.3), run(0.0, 0.3));
  EXPECT_EQ(run(15.0, -0.3), run(0.0, -0.3));
  const double q0 = Simulator(loadedLink(15.0)).initialState().joints[0].position;
  EXPECT_NEAR(run(15.0, 0.04), q0, 1e-6);
  EXPECT_GT(std::abs(run(0.0, 0.04) - q0), 1e-3);
}

// brake_released on a held pendulum (1 kg point bob, 1 m, horizontal; a motor with negligible
// rotor inertia and damping): it swings down as the exact pendulum does. Released from 90°, it
// reaches the bottom after a quarter period sqrt(L/g) K(sin 45°) = 0.59197 s with speed
// sqrt(2 g L) = 4.4294 m/s. Tolerances: 0.2 % in time (measured 0.08 %: the 1 ms step's
// first-order integration) and 0.1 % in speed (measured 3e-6).
TEST(Brake, ReleasedJointSwingsAsAPendulum) {
  Model m = samples::pendulum(1.0, std::numbers::pi / 2.0, 1e-3);
  MotorDef mo;
  mo.name = "pivot_motor";
  mo.joint = 0;
  mo.stall_torque_Nm = 1e-6;  // damping Mp / w_xx = 1e-9 N m s: none to speak of
  mo.no_load_speed_radps = 1e3;
  mo.rotor_inertia_kgm2 = 1e-9;
  mo.brake_torque = 20.0;  // > m g L = 9.81 N m
  m.motors.push_back(mo);
  Simulator sim(m);
  State s = sim.initialState();
  const double q0 = s.joints[0].position;
  ASSERT_NEAR(std::abs(q0), std::numbers::pi / 2.0, 1e-12);
  for (int n = 0; n < 500; ++n) ASSERT_EQ(sim.step(s).fault.kind, Fault::Kind::None);
  EXPECT_NEAR(s.joints[0].position, q0, 1e-6) << "the brake holds the bob horizontal";

  s.motors[0].brake_released = true;
  const double t_release = s.time_s;
  double q_prev = s.joints[0].position, t_prev = s.time_s;
  double t_bottom = -1.0, speed_bottom = 0.0;
  for (int n = 0; n < 1000 && t_bottom < 0.0; ++n) {
    ASSERT_EQ(sim.step(s).fault.kind, Fault::Kind::None);
    const double q = s.joints[0].position;
    if ((q_prev > 0.0) != (q > 0.0)) {
      t_bottom = t_prev + (s.time_s - t_prev) * q_prev / (q_prev - q) - t_release;
      speed_bottom = s.bodies[0].linear_velocity_mps.norm();
    }
    q_prev = q;
    t_prev = s.time_s;
  }
  const double quarter = std::sqrt(1.0 / 9.81) * 1.8540746773013719;  // K(1/sqrt 2)
  EXPECT_NEAR(t_bottom, quarter, 0.002 * quarter);
  EXPECT_NEAR(speed_bottom, std::sqrt(2.0 * 9.81), 0.001 * std::sqrt(2.0 * 9.81));
}

// The released flag is state: it is in the image and the hash, and a restored state with it set
// steps exactly as the original.
TEST(Brake, ReleasedFlagIsPartOfTheState) {
  Simulator sim(loadedLink(15.0));
  State s = sim.initialState();
  State released = s;
  released.motors[0].brake_released = true;
  EXPECT_NE(s.hash(), released.hash());
  EXPECT_FALSE(s == released);
  const State back = State::deserialize(released.serialize());
  EXPECT_TRUE(back.motors[0].brake_released);
  State a = released, b = back;
  for (int n = 0; n < 50; ++n) {
    checkedStep(sim, a);
    checkedStep(sim, b);
  }
  EXPECT_EQ(a, b);
  EXPECT_GT(a.joints[0].position - s.joints[0].position, 1e-3) << "released: it creeps";
}

// A prismatic joint's brake is a force (N): the grasp scene's lift (r = 2000 rad/m, 100 N stall)
// carries the palm and jaws, W = 1.2 kg x 9.81 = 11.77 N. Raised at u = 1 for 0.5 s and then
// unpowered, a 50 N brake holds it (1e-6 m over 1 s); a 5 N brake lets it sink at
// (W - 5 N) / (r^2 Mp / w_xx) = 0.0102 m/s and none at W / 667 N s/m = 0.0177 m/s (tolerance
// 1e-6 relative: after 1.2 s, over 50 time constants of the sinking palm, the exact characteristic
// row has reached the steady speed to rounding).
TEST(Brake, PrismaticBrakeHoldsAForce) {
  for (double brake : {50.0, 5.0, 0.0}) {
    Model m = samples::graspScene(1.0 / 240.0);
    const int lift = m.findMotor("lift");
    ASSERT_GE(lift, 0);
    const MotorDef& mo = m.motors[static_cast<std::size_t>(lift)];
    m.motors[static_cast<std::size_t>(lift)].brake_torque = brake;
    m.motors[static_cast<std::size_t>(lift)].initial_voltage = 1.0;
    const double weight = (m.bodies[static_cast<std::size_t>(m.findBody("palm"))].mass_kg +
                           m.bodies[static_cast<std::size_t>(m.findBody("left_jaw"))].mass_kg +
                           m.bodies[static_cast<std::size_t>(m.findBody("right_jaw"))].mass_kg) *
                          9.81;
    const double damping =
        mo.gear_ratio * mo.gear_ratio * mo.stall_torque_Nm / mo.no_load_speed_radps;
    Simulator sim(m);
    State s = sim.initialState();
    const auto joint = static_cast<std::size_t>(mo.joint);
    for (int n = 0; n < 120; ++n) ASSERT_EQ(sim.step(s).fault.kind, Fault::Kind::None);
    ASSERT_GT(s.joints[joint].position, 0.05) << "raised by the powered motor, brake lifted";
    s.motors[static_cast<std::size_t>(lift)].voltage = 0.0;
    checkedSteps(sim, s, 48);
    const double z = s.joints[joint].position;
    for (int n = 0; n < 240; ++n) ASSERT_EQ(sim.step(s).fault.kind, Fault::Kind::None);
    if (brake > weight) {
      EXPECT_NEAR(s.joints[joint].position, z, 1e-6) << "brake " << brake << " N";
    } else {
      const double expected = -(weight - brake) / damping;
      EXPECT_NEAR(s.joints[joint].speed, expected, 1e-6 * std::abs(expected))
          << "brake " << brake << " N";
    }
  }
}

// A brake is a hard constraint of the drive (dynamics/src/motor_block.cpp: a driven joint's
// Coulomb rows are bounded rows of its motor block, solved with the rotor the gear ties the joint
// to). The rig: a 1 kg body on an arm of length L about a hinge along y, no gravity, its own
// inertia 2 - L^2 kg m^2 so that I = 2 kg m^2 about the hinge; its motor geared 300:1 with a
// 1e-4 kg m^2 rotor, so
// the rotor's J r^2 = 9 kg m^2 is several times the arm's (as on the MF-4's arm joints, geared
// 200-600:1); the motor's damping at u = 0 (r^2 Mp / w_xx = 9e-8 N m s) next to nothing; a
// 20 N m brake; and the solver's default settings (Delta t = 0.01 s, at most 20 velocity sweeps,
// tolerance 1e-10 N s). Both ways of solving a block are checked: in the rotor's coordinates
// (the rig is a rotor tree on a static base) and in full coordinates (the MF-4's arm stands on a
// floating chassis).
constexpr double kBrakeTorque = 20.0;                                       // N m
constexpr double kGear = 300.0, kRotorInertia = 1e-4;                       // -, kg m^2
constexpr double kArmInertia = 2.0;                                         // m L^2 + I (kg m^2)
constexpr double kReflected = kArmInertia + kRotorInertia * kGear * kGear;  // about the joint

Simulator brakedArm(double length, const Vec3& force, const Vec3& torque, bool full_coordinates) {
  Model m = samples::pendulum(length, 0.0, 0.01);  // the body at (0, 0, -L), the hinge at 0
  m.solver = SolverSettings{};                     // the defaults
  m.gravity_mps2 = Vec3::Zero();
  m.bodies[0].inertia_kgm2 = Mat3::Identity() * (kArmInertia - length * length);
  MotorDef mo;
  mo.name = "arm_motor";
  mo.joint = 0;
  mo.gear_ratio = kGear;
  mo.rotor_inertia_kgm2 = kRotorInertia;
  mo.stall_torque_Nm = 1e-9;  // damping r^2 Mp / w_xx = 9e-8 N m s
  mo.no_load_speed_radps = 1e3;
  mo.initial_voltage = 0.0;
  mo.brake_torque = kBrakeTorque;
  m.motors.push_back(mo);
  Simulator sim(m);
  if (full_coordinates) detail::SimulatorTesting::solveBlocksInFullCoordinates(sim);
  sim.setBodyLoad(0, force, torque);
  return sim;
}

// Below the brake torque the joint does not move: after ONE step its speed is zero to 1e-9
// rad/s. The load is a force F along x on the body on a 1 m arm, a torque -F about the hinge
// while the arm hangs along -z: it enters the step as the body's linear velocity, which the hinge's
// rows (in the block) turn into a turn of the arm and the rotor, so the brake's row must stop both
// (a torque on the body alone would be stopped by a row on the link, rotor or not). Why 1e-9 rad/s:
// the block's solve is exact (a direct factor), so the speed left is rounding (the load's
// 0.15 N m s would turn the free 11 kg m^2 axis at 0.014 rad/s; rounding leaves ~1e-16 of that)
// plus at most the velocity tolerance over the inertia (1e-10 N m s / 11 kg m^2 = 1e-11 rad/s).
// With the brake's row outside the block (the way it was) the row stops the arm alone, the block
// hands the rotor's motion back, and the two converge at J r^2 / (I + J r^2) = 0.82 per sweep:
// after the 20 sweeps the test fails (the mutant in the report). Held over 1000 steps (10 s)
// the angle stays within 1e-9 rad of where it started, for loads both ways and at 99 % of the
// brake torque.
TEST(Brake, HoldsALoadBelowTheBrakeTorqueInOneStep) {
  for (const bool full : {false, true}) {
    for (const double force : {15.0, -15.0, 0.99 * kBrakeTorque}) {
      Simulator sim = brakedArm(1.0, Vec3(force, 0.0, 0.0), Vec3::Zero(), full);
      State s = sim.initialState();
      const double q0 = s.joints[0].position;
      checkedStep(sim, s);
      EXPECT_NEAR(s.joints[0].speed, 0.0, 1e-9) << "force " << force << " full " << full;
      // The brake carries the load: its impulse over the step is the load torque's, -(-F) h.
      EXPECT_NEAR(s.joints[0].impulses.friction, force * 0.01, 1e-9 * kBrakeTorque)
          << "force " << force << " full " << full;
      double worst = 0.0;
      for (int n = 0; n < 999; ++n) {
        checkedStep(sim, s);
        worst = std::max(worst, std::abs(s.joints[0].position - q0));
      }
      EXPECT_LT(worst, 1e-9) << "force " << force << " full " << full;
      EXPECT_NEAR(s.joints[0].speed, 0.0, 1e-9) << "force " << force << " full " << full;
    }
  }
}

// Above the brake torque the joint slips against it: alpha = (load - T_b) / (I + J r^2), the
// rotor's reflected inertia included. The load is a torque about the hinge's axis on the body,
// the same at every angle, and the body's centre is on the axis (L = 0: on an arm, the step's
// velocity-level rows follow the circle to (w h)^2, 1e-4 here, which is not the brake's). The
// motor's damping at u = 0, c = r^2 Mp / w_xx = 9e-8 N m s, would
// change the speed by c t / (2 (I + J r^2)) = 4e-9 relative after 1 s; it is in the closed form,
// w(t) = (load - T_b) / c (1 - exp(-c t / (I + J r^2))). Tolerance 1e-9 relative at each of 100
// steps: the block solve is exact and the characteristic row is the exact exponential of the
// linear damper (docs/dynamics.md), so what is left is rounding (measured 1e-14); leaving the
// rotor out of the inertia would be off by a factor of 5.5.
TEST(Brake, ALoadAboveTheBrakeTorqueSlipsWithTheReflectedInertia) {
  for (const bool full : {false, true}) {
    for (const double load : {30.0, -30.0}) {
      Simulator sim = brakedArm(0.0, Vec3::Zero(), Vec3(0.0, load, 0.0), full);
      State s = sim.initialState();
      const MotorDef& mo = sim.model().motors[0];
      const double c = kGear * kGear * mo.stall_torque_Nm / mo.no_load_speed_radps;
      const double net = load - std::copysign(kBrakeTorque, load);
      double worst = 0.0;
      for (int n = 1; n <= 100; ++n) {
        checkedStep(sim, s);
        const double expected = -net / c * std::expm1(-c * 0.01 * n / kReflected);
        worst = std::max(worst, std::abs(s.joints[0].speed - expected) / std::abs(expected));
      }
      EXPECT_LT(worst, 1e-9) << "load " << load << " full " << full;
      // The brake's impulse is its torque over the step, opposing the motion.
      EXPECT_NEAR(s.joints[0].impulses.friction, -std::copysign(kBrakeTorque, load) * 0.01, 1e-12);
    }
  }
}

TEST(Brake, ValidationNamesTheField) {
  Model m = loadedLink(-1.0);
  m.motors[0].brake_release_u = 0.0;
  bool torque = false, release = false;
  for (const ModelError& e : validate(m)) {
    torque = torque || e.field == "motors[drive].brake.torque";
    release = release || e.field == "motors[drive].brake.release_u";
  }
  EXPECT_TRUE(torque);
  EXPECT_TRUE(release);
}

}  // namespace
}  // namespace sim::dynamics
