// Mechanisms solved in their rotors' coordinates (dynamics/src/reduced_mechanism.cpp,
// reduced_block.cpp) against the block in full coordinates, a second method for the same
// projection: hinge trees with stops, and the grasp with contacts on the jaws.
#include <dynamics/samples.h>
#include <dynamics/simulator.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "collision.h"
#include "fixture.h"
#include "simulator_testing.h"

namespace sim::dynamics {
namespace {

// Hinge mechanisms solved in their rotors' coordinates (the solver's way for such a tree)
// against the block in full coordinates (detail::SimulatorTesting), in lockstep: the two-link arm
// under gravity (its hinges' point and rotation rows carry the links' weight and their curvature
// targets) with the elbow driven onto a stop, and the gripper's jaws on a repeater, the follower
// driven onto a stop. Poses, joint speeds and every impulse the state keeps. The same projection by
// two methods: measured 1e-13 rad and 4e-9 N m (the elbow's stop holds up to 800 N m); 1e-9 and
// 1e-6 leave room for rounding through 50 sweeps. Dropping a child joint's wrench from its parent's
// in the leaf-to-root recovery errs by 29 N m.
TEST(ReducedMechanism, HingeTreesMatchTheFullCoordinateBlock) {
  auto arm = [] {
    Model m = samples::twoLinkArm(0.005);
    m.gravity_mps2 = Vec3(0.0, 0.0, -9.81);
    m.joints[1].limit_enabled = true;  // the elbow (u = -0.7) runs onto a stop
    m.joints[1].lower_limit = -0.05;
    m.joints[1].upper_limit = 0.05;
    m.motors[0].initial_voltage = 1.0;
    return m;
  };
  auto jaws = [] {
    // One jaw's stop only: with both jaws on stops together the split of their impulses is not
    // determined (any split holds the same motion; each method picks its own).
    Model m = samples::gripper(0.005);
    m.joints[1].limit_enabled = true;
    m.joints[1].lower_limit = -0.3;
    m.joints[1].upper_limit = 0.3;
    m.motors[0].initial_voltage = 1.0;
    return m;
  };
  for (auto make : {+arm, +jaws}) {
    Simulator full(make()), reduced(make());
    detail::SimulatorTesting::solveBlocksInFullCoordinates(full);
    State a = full.initialState(), b = reduced.initialState();
    const double h = full.model().solver.time_step_s;
    double worst_q = 0.0, worst_load = 0.0, stop_load = 0.0;
    int reduced_steps = 0;
    for (int n = 0; n < 600; ++n) {
      ASSERT_EQ(checkedStep(full, a).reduced_blocks, 0);
      reduced_steps += checkedStep(reduced, b).reduced_blocks;
      for (std::size_t j = 0; j < a.joints.size(); ++j) {
        worst_q = std::max({worst_q, std::abs(a.joints[j].position - b.joints[j].position),
                            std::abs(a.joints[j].speed - b.joints[j].speed)});
        const JointImpulses& x = a.joints[j].impulses;
        const JointImpulses& y = b.joints[j].impulses;
        worst_load =
            std::max({worst_load, (x.linear - y.linear).norm() / h,
                      (x.angular - y.angular).norm() / h, std::abs(x.limit - y.limit) / h});
        stop_load = std::max(stop_load, std::abs(x.limit) / h);
      }
      for (std::size_t m = 0; m < a.motors.size(); ++m)
        worst_load = std::max(
            {worst_load, std::abs(a.motors[m].coupling_impulse - b.motors[m].coupling_impulse) / h,
             std::abs(a.motors[m].characteristic_impulse - b.motors[m].characteristic_impulse) /
                 h});
      for (std::size_t r = 0; r < a.repeaters.size(); ++r)
        worst_load = std::max(
            worst_load,
            std::abs(a.repeaters[r].coupling_impulse - b.repeaters[r].coupling_impulse) / h);
    }
    std::printf(
        "%s: %d of 600 steps reduced; largest difference %.3g (rad, rad/s), %.3g N or "
        "N m; stop load up to %.3g\n",
        full.model().bodies[0].name.c_str(), reduced_steps, worst_q, worst_load, stop_load);
    EXPECT_EQ(reduced_steps, 600);
    EXPECT_GT(stop_load, 0.1);  // the premise: a stop was engaged and loaded
    EXPECT_LE(worst_q, 1e-9);
    EXPECT_LE(worst_load, 1e-6);
  }
}

// Boxes dropped tilted onto whatever the scene has: corner and edge contacts, 1-4 points.
Model withTumblers(Model m) {
  MaterialDef sticky;
  sticky.name = "sticky";
  sticky.friction = 0.9;
  sticky.torsion_radius_m = 0.02;
  m.materials.push_back(sticky);
  const int material = static_cast<int>(m.materials.size()) - 1;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int i = 0; i < 12; ++i) {
    const Quat q = Quat(Eigen::AngleAxisd(u(rng), Vec3(u(rng), u(rng), 1.0).normalized()));
    samples::addBox(m, "tumbler" + std::to_string(i), Vec3(0.15, 0.1, 0.12), 0.7,
                    Vec3(0.3 * u(rng), 0.3 * u(rng), 0.4 + 0.15 * i), q, i % 3 == 0 ? material : 0);
  }
  return m;
}

// The grasp solved two ways in lockstep through every phase: jaws pressed open on their stops
// (the jaw rotor held by a limit), closing, squeezing, lifting. The reference solves the block in
// full coordinates (detail::SimulatorTesting); the other takes the solver's own way.
struct Lockstep {
  double worst_x = 0.0, worst_v = 0.0;  // largest body position / velocity difference
  int reduced_steps = 0, steps = 0;     // steps in which the block was solved reduced
  double box_height = 0.0;              // at the end
};
Lockstep graspLockstep(const Model& model) {
  Simulator ref(model), sim(model);
  detail::SimulatorTesting::solveBlocksInFullCoordinates(ref);
  State a = ref.initialState(), b = sim.initialState();
  const int jaws = model.findMotor("jaws"), lift = model.findMotor("lift");
  Lockstep out;
  auto phase = [&](double jaw_u, double lift_u, double seconds) {
    a.motors[jaws].voltage = b.motors[jaws].voltage = jaw_u;
    a.motors[lift].voltage = b.motors[lift].voltage = lift_u;
    for (int i = 0; i < static_cast<int>(seconds * 240.0); ++i) {
      EXPECT_EQ(checkedStep(ref, a).reduced_blocks, 0);
      out.reduced_steps += checkedStep(sim, b).reduced_blocks > 0 ? 1 : 0;
      ++out.steps;
      for (std::size_t k = 0; k < a.bodies.size(); ++k) {
        out.worst_x =
            std::max(out.worst_x, (a.bodies[k].position_m - b.bodies[k].position_m).norm());
        const Vec3 dv = a.bodies[k].linear_velocity_mps - b.bodies[k].linear_velocity_mps;
        out.worst_v = std::max(out.worst_v, dv.norm());
      }
    }
  };
  phase(-1.0, 0.0, 0.5);  // open onto the stops
  phase(1.0, 0.0, 0.8);   // close and squeeze
  phase(1.0, 1.0, 2.5);   // lift
  out.box_height = b.bodies[model.findBody("box")].position_m.z();
  return out;
}

// The mechanism solved in its rotors' coordinates (ReducedMechanism: two unknowns for the lift
// and the jaws, plus active limits, instead of 23 rows) against the block in full coordinates
// with every link response computed from the block's factor: a second method for the same
// projection. The reduced path also recovers the rows' impulses leaf to root and gives the
// contacts their responses from the same snapshot. In exact arithmetic the two agree; what may
// differ is rounding, fed through the solver's iterations and the 1e-12 relative regularisation
// of K. 1e-9 m and 1e-6 m/s bound that with a wide margin (6e-15 m measured), while a link
// response taken 10 % short moves the bodies apart by tens of micrometres.
TEST(Contact, ReducedMechanismMatchesTheFullCoordinateBlock) {
  const Lockstep r = graspLockstep(samples::graspScene(1.0 / 240.0));
  std::printf(
      "reduced vs full block: %d of %d steps reduced; largest difference %.3g m, "
      "%.3g m/s\n",
      r.reduced_steps, r.steps, r.worst_x, r.worst_v);
  EXPECT_EQ(r.reduced_steps, r.steps);
  EXPECT_LE(r.worst_x, 1e-9);
  EXPECT_LE(r.worst_v, 1e-6);
  EXPECT_GT(r.box_height, 0.05 + 0.29);
}

// Boxes falling onto the closing gripper: contacts on the jaws from above and from the sides,
// and limits engaging while the links' responses are in use (the block's active set changes
// within a substep, so the impulses of the contacts' wrenches must come from what the responses
// were computed with). Tumbling boxes amplify rounding step after step (the trajectories part by
// 1e-8 m in a second, smoothly), so each step starts both simulations from the same state and
// compares one step: the poses and the block impulses that reach the state (joint reactions,
// motor and repeater couplings, limits). Impulses in N over the step. The mechanism in rotor
// coordinates: the joints' impulses recovered leaf to root, the limits' from the reduced active
// set, the snapshot's impulses for the contacts' wrenches. Measured: 3e-13 m and 4e-8 N. K is
// ill-conditioned (the rotor's reflected inertia through r = 2000 rad/m against 0.1 kg jaws),
// which lifts rounding in the impulses to ~1e-9 of the loads; 1e-11 m and 1e-6 N leave room.
TEST(Contact, ReducedMechanismMatchesTheFullBlockUnderFallingBoxes) {
  const Model model = withTumblers(samples::graspScene(1.0 / 240.0));
  Simulator ref(model), sim(model);
  detail::SimulatorTesting::solveBlocksInFullCoordinates(ref);
  State b = sim.initialState();
  b.motors[model.findMotor("jaws")].voltage = 1.0;
  double worst_x = 0.0, worst_impulse_N = 0.0;
  int reduced_steps = 0;
  const double h = model.solver.time_step_s;
  auto note = [&](double x, double y) {
    worst_impulse_N = std::max(worst_impulse_N, std::abs(x - y) / h);
  };
  for (int i = 0; i < 240; ++i) {
    State a = b;
    checkedStep(ref, a);
    reduced_steps += checkedStep(sim, b).reduced_blocks > 0 ? 1 : 0;
    for (std::size_t k = 0; k < a.bodies.size(); ++k)
      worst_x = std::max(worst_x, (a.bodies[k].position_m - b.bodies[k].position_m).norm());
    for (std::size_t j = 0; j < a.joints.size(); ++j) {
      note(a.joints[j].impulses.limit, b.joints[j].impulses.limit);
      note((a.joints[j].impulses.linear - b.joints[j].impulses.linear).norm(), 0.0);
      note((a.joints[j].impulses.angular - b.joints[j].impulses.angular).norm(), 0.0);
    }
    for (std::size_t m = 0; m < a.motors.size(); ++m) {
      note(a.motors[m].coupling_impulse, b.motors[m].coupling_impulse);
      note(a.motors[m].characteristic_impulse, b.motors[m].characteristic_impulse);
    }
    for (std::size_t r = 0; r < a.repeaters.size(); ++r)
      note(a.repeaters[r].coupling_impulse, b.repeaters[r].coupling_impulse);
  }
  std::printf(
      "falling boxes: %d of 240 steps reduced; largest one-step difference %.3g m, %.3g N\n",
      reduced_steps, worst_x, worst_impulse_N);
  EXPECT_EQ(reduced_steps, 240);
  EXPECT_LE(worst_x, 1e-11);
  EXPECT_LE(worst_impulse_N, 1e-6);
}

}  // namespace
}  // namespace sim::dynamics
