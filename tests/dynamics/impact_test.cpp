// A foot touching down (SPEC §6, seed 002): the new contact is an impact that changes velocities
// at once. Reference: the impact equation in the reduced coordinates of the kinematic tree,
//   H (qd+ - qd-) = J^T p,   J_n qd+ = 0   =>   qd+ = qd- - H^-1 J_n^T (J_n H^-1 J_n^T)^-1 J_n qd-
// (perfectly plastic, frictionless), with H from the composite-rigid-body algorithm and J_n the
// contact point's normal velocity per coordinate. The full-coordinate solver's one step through
// the touchdown must give the same velocities.
#include <dynamics/model.h>
#include <dynamics/samples.h>
#include <dynamics/simulator.h>
#include <dynamics/tree.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "fixture.h"

namespace sim::dynamics {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

constexpr double kFoot = 0.03;  // foot sphere radius (m)

// A floating hip (2 kg) with one tilted shank on a knee hinge (axis y); a sphere foot at the
// shank's lower end touches the ground exactly. No gravity, frictionless, no bounce.
Model legModel(double dt) {
  Model m;
  m.gravity_mps2.setZero();
  m.solver.time_step_s = dt;
  m.solver.velocity_iterations = 300;
  m.solver.velocity_tolerance = 1e-14;
  m.contact.sleep_enabled = false;
  m.materials[0].friction = 0.0;
  m.materials[0].restitution = 0.0;
  BodyDef ground;
  ground.name = "ground";
  ground.is_static = true;
  ShapeDef plane;
  plane.type = ShapeType::Plane;
  ground.shapes.push_back(plane);
  m.bodies.push_back(ground);

  const double tilt = 0.35, shank = 0.4;
  const Quat q(Eigen::AngleAxisd(tilt, Vec3::UnitY()));
  const Vec3 down = q * Vec3(0, 0, -1);
  const Vec3 foot(0.0, 0.0, kFoot);
  const Vec3 knee = foot - shank * down;
  BodyDef leg;
  leg.name = "shank";
  leg.mass_kg = 0.6;
  leg.inertia_kgm2 = samples::boxInertia(0.6, Vec3(0.04, 0.04, shank));
  leg.orientation = q;
  leg.position_m = knee + 0.5 * shank * down;
  ShapeDef ball;
  ball.type = ShapeType::Sphere;
  ball.radius_m = kFoot;
  ball.pose.position = Vec3(0, 0, -0.5 * shank);
  leg.shapes.push_back(ball);
  BodyDef hip;
  hip.name = "hip";
  hip.mass_kg = 2.0;
  hip.inertia_kgm2 = samples::boxInertia(2.0, Vec3(0.3, 0.2, 0.1));
  hip.position_m = knee + Vec3(0.05, 0.0, 0.08);
  m.bodies.push_back(hip);  // 1
  m.bodies.push_back(leg);  // 2

  JointDef j;
  j.name = "knee";
  j.type = JointType::Hinge;
  j.body_a = 1;
  j.body_b = 2;
  const Quat axis = Quat::FromTwoVectors(Vec3::UnitX(), Vec3::UnitY());
  j.frame_a = Frame{knee - hip.position_m, axis};
  j.frame_b = Frame{q.conjugate() * (knee - leg.position_m), q.conjugate() * axis};
  m.joints.push_back(j);

  // Falling and turning: hip velocity and spin, knee rate 1.5 rad/s, consistent at the knee.
  BodyDef& h = m.bodies[1];
  BodyDef& s = m.bodies[2];
  h.linear_velocity_mps = Vec3(0.3, 0.1, -0.8);
  h.angular_velocity_radps = Vec3(0.2, -0.4, 0.3);
  s.angular_velocity_radps = h.angular_velocity_radps + Vec3(0, 1.5, 0);
  const Vec3 v_knee = h.linear_velocity_mps + h.angular_velocity_radps.cross(knee - h.position_m);
  s.linear_velocity_mps = v_knee + s.angular_velocity_radps.cross(s.position_m - knee);
  return m;
}

TEST(Impact, FootTouchdownMatchesTheImpactEquation) {
  const double dt = 1e-4;  // the step's motion (v dt ~ 1e-4 m) stays far below the tolerance
  Simulator sim(legModel(dt));
  State s = sim.initialState();
  const KinematicTree tree(sim.model());
  const VectorXd q = tree.positions(s);
  // The initial state stores joint speeds as zero; the knee's rate is the one set in legModel.
  VectorXd qd = tree.velocities(s);
  qd[tree.coordinateOfJoint(0)] = 1.5;
  const int n = tree.dof();

  // J_n: normal (+z) velocity of the foot's lowest point per unit coordinate rate.
  auto footVelocity = [&](const VectorXd& rates) -> Vec3 {
    const auto motion = tree.bodyMotions(q, rates);
    const auto& leg = motion[2];
    const Vec3 point = leg.position_m + leg.orientation * Vec3(0, 0, -0.2) - Vec3(0, 0, kFoot);
    const Vec3 arm = point - leg.position_m;
    return leg.linear_velocity_mps + leg.angular_velocity_radps.cross(arm);
  };
  Eigen::RowVectorXd jn(n);
  for (int k = 0; k < n; ++k) jn[k] = footVelocity(VectorXd::Unit(n, k)).z();
  ASSERT_LT(jn * qd, -0.5);  // approaching the ground fast
  const MatrixXd h = tree.massMatrix(q);
  const VectorXd hinv_jt = h.ldlt().solve(jn.transpose());
  const VectorXd expected = qd - hinv_jt * ((jn * qd) / (jn * hinv_jt));

  checkedStep(sim, s);
  const VectorXd after = tree.velocities(s);
  ASSERT_FALSE(sim.contacts(s).empty());
  std::printf("velocity change %.4g, solver vs impact equation %.3g, normal speed after %.3g\n",
              (expected - qd).norm(), (after - expected).norm(), double(jn * after));
  // Velocities agree to 1e-4 of their size: the solver's iterations converge to 1e-14, what is
  // left is first order in dt (poses moved by ~1e-4 m within the step, gyroscopic terms).
  EXPECT_LT((after - expected).norm(), 1e-4 * qd.norm()) << "after\n"
                                                         << after.transpose() << "\nexpected\n"
                                                         << expected.transpose() << "\nbefore\n"
                                                         << qd.transpose();
  // The contact point's normal velocity after the impact is zero, and the impact changed the
  // velocities by far more than the tolerance above.
  EXPECT_NEAR(jn * after, 0.0, 1e-4 * qd.norm());
  EXPECT_GT((expected - qd).norm(), 0.1 * qd.norm());
}

}  // namespace
}  // namespace sim::dynamics
