// Articulated contacts (dynamics/src/articulation.cpp): contacts on a mechanism's links see the
// whole mechanism's response.
#include <dynamics/samples.h>
#include <dynamics/simulator.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include <gtest/gtest.h>

#include "contact_test_util.h"
#include "fixture.h"

namespace sim::dynamics {
namespace {

using contact_testing::run;

// Articulated contacts (the grasp scene's setting): the jaws' contacts see the whole mechanism,
// so 4 sweeps hold the box within the 0.02 mm where rigid-link rows let it slip by more
// (0.26 mm measured); the squeeze splits evenly between the jaws (the box's ground friction would
// lock in a lopsided split); and the block impulses the contacts imply reach the state: the motor
// feels its stall load and the lift's limit carries the whole gripper with the box.
TEST(Contact, ArticulatedJawContactsConvergeInFewSweepsAndLoadTheMechanism) {
  auto slipAt4Sweeps = [](bool articulated, double* left, double* right, double* held) {
    Model m = samples::graspScene(1.0 / 240.0);
    m.solver.velocity_iterations = 4;
    m.solver.articulated_contacts = articulated;
    Simulator sim(m);
    State s = sim.initialState();
    const int box = m.findBody("box"), palm = m.findBody("palm");
    s.motors[m.findMotor("jaws")].voltage = 1.0;
    run(sim, s, 0.8);
    *left = *right = 0.0;
    for (const ContactReport& c : sim.contacts(s)) {
      if (c.body_a != box && c.body_b != box) continue;
      const int other = c.body_a == box ? c.body_b : c.body_a;
      if (other == m.findBody("left_jaw")) *left += c.normal_force_N;
      if (other == m.findBody("right_jaw")) *right += c.normal_force_N;
    }
    *held = sim.jointReaction(s, m.findJoint("lift")).axis_force;
    const double offset = s.bodies[box].position_m.z() - s.bodies[palm].position_m.z();
    const double palm0 = s.bodies[palm].position_m.z();
    s.motors[m.findMotor("lift")].voltage = 1.0;
    double slip = 0.0;
    for (int i = 0; i < 240 * 5 && s.bodies[palm].position_m.z() < palm0 + 0.3; ++i) {
      checkedStep(sim, s);
      slip = std::max(
          slip, std::abs(s.bodies[box].position_m.z() - s.bodies[palm].position_m.z() - offset));
    }
    return slip;
  };
  double left = 0, right = 0, held = 0, rl = 0, rr = 0, rheld = 0;
  const double articulated = slipAt4Sweeps(true, &left, &right, &held);
  const double rigid = slipAt4Sweeps(false, &rl, &rr, &rheld);
  std::printf("slip at 4 sweeps: articulated %.3g m, rigid links %.3g m; squeeze %.3f / %.3f N\n",
              articulated, rigid, left, right);
  EXPECT_LE(articulated, 2e-5);
  EXPECT_GT(rigid, 2e-5);  // the premise: without it 4 sweeps are not enough
  EXPECT_NEAR(left + right, 20.0, 0.02);
  EXPECT_NEAR(left, right, 0.2);  // within 1 % of the 10 N each
  // Palm 1 kg + jaws 0.2 kg rest on the lift's lower limit; the box stands on the ground.
  EXPECT_NEAR(std::abs(held), 1.2 * 9.81, 0.05);
}

}  // namespace
}  // namespace sim::dynamics
