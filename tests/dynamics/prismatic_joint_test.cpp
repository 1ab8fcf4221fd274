// Prismatic joints (dynamics/src/prismatic_joint.cpp): a slider moves along its axis under gravity
// as the closed form says.
#include <dynamics/samples.h>
#include <dynamics/simulator.h>

#include <cmath>
#include <numbers>

#include <gtest/gtest.h>
#include <Eigen/Dense>

#include "fixture.h"

namespace sim::dynamics {
namespace {

constexpr double kPi = std::numbers::pi;

TEST(Prismatic, SlidesAlongItsAxisUnderGravity) {
  Model m;
  m.solver.time_step_s = 1e-3;
  BodyDef b;
  b.name = "slider";
  b.mass_kg = 2.0;
  b.inertia_kgm2 = samples::boxInertia(2.0, Vec3(0.1, 0.1, 0.1));
  m.bodies.push_back(b);
  JointDef j;
  j.name = "rail";
  j.type = JointType::Prismatic;
  j.body_a = kWorld;
  j.body_b = 0;
  // Rail at 30 degrees below horizontal in the x-z plane.
  const Vec3 axis = Vec3(std::cos(kPi / 6), 0, -std::sin(kPi / 6));
  j.frame_a.rotation = j.frame_b.rotation = Quat::FromTwoVectors(Vec3::UnitX(), axis);
  m.joints.push_back(j);
  Simulator sim(m);
  State s = sim.initialState();
  checkedSteps(sim, s, 1000);
  // s(t) = g sin(30 deg) t^2 / 2; semi-implicit Euler overshoots by g sin t dt / 2.
  const double a = 9.81 * 0.5;
  EXPECT_NEAR(s.joints[0].position, 0.5 * a * 1.0 + 0.5 * a * 1e-3, 1e-6);
  EXPECT_NEAR(s.joints[0].speed, a * 1.0, 1e-9);
  EXPECT_LT(std::abs(s.bodies[0].position_m.y()), 1e-12);
  EXPECT_TRUE(s.bodies[0].orientation.isApprox(Quat::Identity(), 1e-9));
}

}  // namespace
}  // namespace sim::dynamics
