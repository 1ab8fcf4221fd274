// Sleeping (dynamics/src/sleep.cpp): islands at rest fall asleep with their load still reported,
// restore bit for bit, and wake as a whole group when hit.
#include <dynamics/samples.h>
#include <dynamics/simulator.h>

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "contact_test_util.h"
#include "fixture.h"

namespace sim::dynamics {
namespace {

using contact_testing::run;

constexpr double kG = 9.81;
constexpr int column = 1;  // bodies 1..10 are the first column of pileWithStriker, bottom up

// A pile of four columns of ten (the benchmark's) and a striker box 0.6 m from the first column's
// bottom box, on the ground; the striker is the last body.
Model pileWithStriker() {
  Model m = samples::boxPile(2, 2, 10, 1.0 / 240.0);
  m.solver.velocity_iterations = 10;
  BodyDef striker = m.bodies[column];
  striker.name = "striker";
  striker.position_m =
      Vec3(m.bodies[column].position_m.x() - 0.6, m.bodies[column].position_m.y(), 0.1);
  m.bodies.push_back(striker);
  return m;
}

// Sleeping: a pile of four columns (the benchmark's) falls asleep soon after it lands, with
// the load it carries still reported; a sleeping state restores bit for bit; a box sliding into
// a column wakes that column's whole group and nothing else.
TEST(Contact, PileFallsAsleepKeepsItsLoadAndWakesWhenHit) {
  const Model m = pileWithStriker();
  const int hit = static_cast<int>(m.bodies.size()) - 1;
  Simulator sim(m);
  State s = sim.initialState();
  run(sim, s, 2.0);
  for (std::size_t i = 1; i < m.bodies.size(); ++i) {
    EXPECT_TRUE(s.bodies[i].asleep) << m.bodies[i].name;
    EXPECT_EQ(s.bodies[i].linear_velocity_mps.norm(), 0.0);
  }
  // Ground contacts still carry the pile's weight: 41 boxes of 1 kg.
  double ground = 0.0;
  for (const ContactReport& c : sim.contacts(s))
    if (c.body_a == 0 || c.body_b == 0) ground += c.normal_force_N;
  EXPECT_NEAR(ground, 41 * kG, 0.01 * 41 * kG);
  // Asleep and restored: bit for bit.
  {
    State restored = State::deserialize(s.serialize());
    State original = s;
    Simulator sim2(m);
    for (int i = 0; i < 20; ++i) {
      checkedStep(sim, original);
      checkedStep(sim2, restored);
    }
    EXPECT_TRUE(original == restored);
    // Nothing awake: the steps left the bodies and the carried contacts exactly as they were.
    State before = s;
    original.time_s = before.time_s;
    original.step = before.step;
    EXPECT_TRUE(original == before);
  }
  s.bodies[hit].asleep = false;
  s.bodies[hit].linear_velocity_mps = Vec3(3.0, 0.0, 0.0);  // 0.4 m to the column, mu g = 4.9 m/s^2
  bool woke = false;
  for (int i = 0; i < 60 && !woke; ++i) {
    checkedStep(sim, s);
    woke = !s.bodies[column].asleep;
  }
  ASSERT_TRUE(woke) << "the struck column stayed asleep";
  // In the step that woke it the column was still asleep, frozen: static for the solver (no
  // inverse mass, no inverse inertia), so the blow moved none of it yet.
  for (int i = column; i < column + 10; ++i) {
    EXPECT_EQ(s.bodies[i].linear_velocity_mps, Vec3::Zero()) << m.bodies[i].name;
    EXPECT_EQ(s.bodies[i].angular_velocity_radps, Vec3::Zero()) << m.bodies[i].name;
  }
  for (int i = column; i < column + 10; ++i) EXPECT_FALSE(s.bodies[i].asleep) << m.bodies[i].name;
  for (std::size_t i = column + 10; i < m.bodies.size() - 1; ++i)
    EXPECT_TRUE(s.bodies[i].asleep) << m.bodies[i].name << " woke without being touched";
}

// With every body asleep a step places no shape and asks the broad phase nothing; a pose edited
// in the state meanwhile is caught when something moves again. The sleeping striker is moved 1 mm
// into the column's bottom box while everything sleeps (it stays asleep: nothing awake touches
// it), then woken at rest: the very next step finds it touching the column, which wakes with it.
TEST(Contact, APoseEditedWhileAllSleepIsSeenWhenSomethingWakes) {
  const Model m = pileWithStriker();
  const int hit = static_cast<int>(m.bodies.size()) - 1;
  Simulator sim(m);
  State s = sim.initialState();
  run(sim, s, 2.0);
  for (std::size_t i = 1; i < m.bodies.size(); ++i) ASSERT_TRUE(s.bodies[i].asleep) << i;
  const double edge = 0.2;  // samples::boxPile's boxes
  s.bodies[hit].position_m = s.bodies[column].position_m - Vec3(edge - 0.001, 0.0, 0.0);
  s.bodies[hit].orientation = s.bodies[column].orientation;
  for (int i = 0; i < 10; ++i) {
    checkedStep(sim, s);
    ASSERT_TRUE(s.bodies[hit].asleep && s.bodies[column].asleep) << "step " << i;
  }
  s.bodies[hit].asleep = false;
  checkedStep(sim, s);
  bool touching = false;
  for (const ContactReport& c : sim.contacts(s))
    touching = touching || (c.body_a == hit && c.body_b == column) ||
               (c.body_a == column && c.body_b == hit);
  EXPECT_TRUE(touching) << "the striker's shape stayed where it slept";
  EXPECT_FALSE(s.bodies[column].asleep);
}

// Without any contact a body cannot fall asleep, but its time below the sleep speeds still
// counts (it sleeps as soon as it rests on something, if it was slow long enough): two boxes
// floating in zero gravity far above the ground, one still, one drifting faster than the sleep
// speed, then the drifting one slowed below it.
TEST(Contact, BodiesWithoutContactsCountTheirSlowTime) {
  Model m = samples::boxPile(1, 2, 1, 1.0 / 240.0);
  m.gravity_mps2 = Vec3::Zero();
  for (std::size_t i = 1; i < m.bodies.size(); ++i) m.bodies[i].position_m.z() += 5.0;
  Simulator sim(m);
  State s = sim.initialState();
  const int still = 1, drifting = 2;
  s.bodies[drifting].linear_velocity_mps = Vec3(0.0, 0.0, 2.0 * m.contact.sleep_linear_speed_mps);
  double expected = 0.0;
  for (int i = 0; i < 60; ++i) {
    checkedStep(sim, s);
    expected += m.solver.time_step_s;
    ASSERT_TRUE(s.contacts.empty()) << "step " << i;
  }
  EXPECT_EQ(s.bodies[still].slow_time_s, expected);
  EXPECT_EQ(s.bodies[drifting].slow_time_s, 0.0);
  EXPECT_FALSE(s.bodies[still].asleep);
  s.bodies[drifting].linear_velocity_mps *= 0.25;
  checkedStep(sim, s);
  EXPECT_EQ(s.bodies[drifting].slow_time_s, m.solver.time_step_s);
}

}  // namespace
}  // namespace sim::dynamics
