// The reduced-coordinate reference (dynamics/tree.h) against itself, against closed-form
// equations of motion, and the full-coordinate solver against it (SPEC §6, issue 9).
#include <dynamics/model.h>
#include <dynamics/samples.h>
#include <dynamics/simulator.h>
#include <dynamics/tree.h>

#include <gtest/gtest.h>
#include <Eigen/Dense>

#include <cmath>
#include <cstdio>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "fixture.h"

namespace sim::dynamics {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

// A joint whose frames coincide at the current poses: anchor and axis in world coordinates.
JointDef makeJoint(const Model& m, std::string name, JointType type, int a, int b,
                   const Vec3& anchor, const Vec3& axis) {
  JointDef j;
  j.name = std::move(name);
  j.type = type;
  j.body_a = a;
  j.body_b = b;
  const Quat axis_rot = Quat::FromTwoVectors(Vec3::UnitX(), axis.normalized());
  auto local = [&](int body) {
    const Vec3 x = body == kWorld ? Vec3::Zero() : m.bodies[body].position_m;
    const Quat r = body == kWorld ? Quat::Identity() : m.bodies[body].orientation;
    return Frame{r.conjugate() * (anchor - x), r.conjugate() * axis_rot};
  };
  j.frame_a = local(a);
  j.frame_b = local(b);
  return j;
}

int addLink(Model& m, std::string name, double mass, const Vec3& size, const Vec3& centre,
            const Quat& orientation = Quat::Identity()) {
  BodyDef b;
  b.name = std::move(name);
  b.mass_kg = mass;
  b.inertia_kgm2 = samples::boxInertia(mass, size);
  b.position_m = centre;
  b.orientation = orientation;
  m.bodies.push_back(b);
  return static_cast<int>(m.bodies.size()) - 1;
}

MotorDef makeMotor(std::string name, int joint) {
  MotorDef mo;
  mo.name = std::move(name);
  mo.joint = joint;
  mo.stall_torque_Nm = 0.5;
  mo.no_load_speed_radps = 300.0;
  mo.time_constant_s = 0.01;
  mo.gear_ratio = 20.0;
  return mo;
}

// Two three-link arms on one static base, axes not parallel (yaw, pitch, pitch about tilted
// axes) so the motion is three-dimensional; boxes with unequal principal inertias; a fixed
// joint hangs a tool on one forearm (merged by the tree); every hinge on a motor.
Model branchingTree(double dt, bool with_motors = true) {
  Model m;
  m.solver.time_step_s = dt;
  m.solver.velocity_iterations = 200;
  m.solver.velocity_tolerance = 1e-13;
  m.solver.position_iterations = 20;
  m.solver.position_tolerance_m = 1e-12;
  BodyDef base;
  base.name = "base";
  base.is_static = true;
  base.position_m = Vec3(0, 0, 0.5);
  m.bodies.push_back(base);
  for (int side = 0; side < 2; ++side) {
    const double y = side == 0 ? 0.2 : -0.2;
    const std::string s = side == 0 ? "l" : "r";
    const int b0 = static_cast<int>(m.bodies.size());
    const int hub = addLink(m, s + "hub", 0.8, Vec3(0.08, 0.06, 0.1), Vec3(0, y, 0.55));
    const int upper = addLink(m, s + "upper", 1.2, Vec3(0.3, 0.05, 0.04), Vec3(0.15, y, 0.6));
    const int fore = addLink(m, s + "fore", 0.7, Vec3(0.25, 0.04, 0.03), Vec3(0.425, y, 0.6));
    (void)b0;
    m.joints.push_back(
        makeJoint(m, s + "yaw", JointType::Hinge, 0, hub, Vec3(0, y, 0.5), Vec3(0.1, 0, 1)));
    m.joints.push_back(makeJoint(m, s + "shoulder", JointType::Hinge, hub, upper, Vec3(0, y, 0.6),
                                 Vec3(0, 1, 0.2 * (side ? -1 : 1))));
    m.joints.push_back(makeJoint(m, s + "elbow", JointType::Hinge, upper, fore, Vec3(0.3, y, 0.6),
                                 Vec3(0.3, 1, 0)));
    if (side == 0) {
      const int tool = addLink(m, "tool", 0.3, Vec3(0.05, 0.05, 0.05), Vec3(0.56, y, 0.6));
      m.joints.push_back(makeJoint(m, "tool_mount", JointType::Fixed, fore, tool,
                                   Vec3(0.55, y, 0.6), Vec3::UnitX()));
    }
  }
  if (with_motors) {
    for (int j = 0; j < static_cast<int>(m.joints.size()); ++j)
      if (m.joints[j].type == JointType::Hinge) m.motors.push_back(makeMotor(m.joints[j].name, j));
  }
  return m;
}

double maxAbs(const VectorXd& v) {
  return v.cwiseAbs().maxCoeff();
}

// ---------------------------------------------------------------------------------------------
// Structure and self-consistency.

TEST(KinematicTree, DepthFirstNumberingMergesFixedJoints) {
  const Model m = branchingTree(1e-3);
  const KinematicTree tree(m);
  ASSERT_EQ(tree.dof(), 6);  // the fixed tool joint adds no coordinate
  for (int i = 0; i < tree.dof(); ++i) EXPECT_LT(tree.coordinates()[i].parent, i);
  // Depth first: the left arm's three joints, then the right arm's.
  EXPECT_EQ(tree.coordinates()[1].parent, 0);
  EXPECT_EQ(tree.coordinates()[2].parent, 1);
  EXPECT_EQ(tree.coordinates()[3].parent, -1);
  EXPECT_EQ(tree.coordinateOfJoint(m.findJoint("tool_mount")), -1);
}

// Fed with the solver's joint coordinates and speeds, the reduced-coordinate kinematics reproduce
// the solver's body poses and velocities. Poses: following the chord leaves joint errors of the
// order of the sagitta, (w h)^2 per metre; the bound is h^2 w_max^2 (m or rad). Velocities
// differ by design: the hinge rows target the chord of the step (curvature targets, -h/2 times the
// velocity-quadratic term), so the bodies' relative angular velocity leaves the axis by about
// (h/2) |w|^2; the bound is h w_max^2 (rad/s, and m/s per metre of link: links are < 0.6 m).
// A wrong axis, sign or arm gives errors of order |w| instead.
TEST(KinematicTree, ForwardKinematicsMatchesSolverBodies) {
  for (double h : {1e-3, 2.5e-4}) {
    Model m = branchingTree(h);
    Simulator sim(m);
    State s = sim.initialState();
    const KinematicTree tree(m);
    for (std::size_t k = 0; k < m.motors.size(); ++k) s.motors[k].voltage = k % 2 ? 0.3 : -0.2;
    double worst_x = 0, worst_v = 0, w_max = 0;
    const int steps = static_cast<int>(std::lround(0.4 / h));
    for (int n = 0; n < steps; ++n) {
      checkedStep(sim, s);
      for (const BodyState& b : s.bodies) w_max = std::max(w_max, b.angular_velocity_radps.norm());
      if (n % 50 != 49) continue;
      const auto motion = tree.bodyMotions(tree.positions(s), tree.velocities(s));
      for (std::size_t b = 1; b < m.bodies.size(); ++b) {
        worst_x = std::max(worst_x, (motion[b].position_m - s.bodies[b].position_m).norm());
        worst_x = std::max(worst_x, motion[b].orientation.angularDistance(s.bodies[b].orientation));
        worst_v = std::max(
            worst_v, (motion[b].linear_velocity_mps - s.bodies[b].linear_velocity_mps).norm());
        worst_v = std::max(
            worst_v,
            (motion[b].angular_velocity_radps - s.bodies[b].angular_velocity_radps).norm());
      }
    }
    std::printf("h = %.1e: pose error %.2e (bound %.2e), velocity error %.2e (bound %.2e)\n", h,
                worst_x, h * h * w_max * w_max, worst_v, h * w_max * w_max);
    EXPECT_LT(worst_x, h * h * w_max * w_max);
    EXPECT_LT(worst_v, h * w_max * w_max);
  }
}

// Floating-base version of the tree: the static base becomes a free body.
Model floatingTree(double dt) {
  Model m = branchingTree(dt);
  m.bodies[0].is_static = false;
  m.bodies[0].mass_kg = 3.0;
  m.bodies[0].inertia_kgm2 = samples::boxInertia(3.0, Vec3(0.2, 0.5, 0.15));
  return m;
}

struct Sample {
  VectorXd q, qd;
};

Sample randomSample(const KinematicTree& tree, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Sample s{VectorXd(tree.dof()), VectorXd(tree.dof())};
  for (int i = 0; i < tree.dof(); ++i) {
    s.q[i] = 1.5 * u(rng);
    s.qd[i] = 2.0 * u(rng);
    // Keep the floating base's pitch away from the Euler singularity at ±pi/2.
    if (tree.coordinates()[i].fictitious_index == 4) s.q[i] = 0.6 * u(rng);
  }
  return s;
}

// H from the composite-rigid-body algorithm against RNEA, which shares no code with it past the
// forward kinematics. ID is affine in qdd, so H e_k = ID(e_k) - ID(0) holds up to rounding:
// |tau| ~ 10 N m, so 1e-12 relative to the largest entry. Then H is symmetric positive definite
// (Cholesky succeeds, smallest eigenvalue > 0) and 1/2 qd^T H qd equals the bodies' kinetic
// energy from their own velocities (rounding again: 1e-12 relative).
TEST(KinematicTree, MassMatrixMatchesInverseDynamicsAndKineticEnergy) {
  std::mt19937 rng(7);
  for (const Model& m : {branchingTree(1e-3), floatingTree(1e-3)}) {
    const KinematicTree tree(m);
    for (int trial = 0; trial < 20; ++trial) {
      const Sample s = randomSample(tree, rng);
      const MatrixXd h = tree.massMatrix(s.q);
      const VectorXd zero = VectorXd::Zero(tree.dof());
      const VectorXd base = tree.inverseDynamics(s.q, s.qd, zero, m.gravity_mps2).tau;
      const double scale = h.cwiseAbs().maxCoeff();
      for (int k = 0; k < tree.dof(); ++k) {
        const VectorXd col =
            tree.inverseDynamics(s.q, s.qd, VectorXd::Unit(tree.dof(), k), m.gravity_mps2).tau -
            base;
        EXPECT_LT(maxAbs(col - h.col(k)), 1e-12 * std::max(scale, maxAbs(base)));
      }
      EXPECT_LT((h - h.transpose()).cwiseAbs().maxCoeff(), 1e-14 * scale);
      EXPECT_EQ(h.llt().info(), Eigen::Success);
      EXPECT_GT(Eigen::SelfAdjointEigenSolver<MatrixXd>(h).eigenvalues().minCoeff(), 0.0);
      const auto motion = tree.bodyMotions(s.q, s.qd);
      double energy = 0;
      for (std::size_t b = 0; b < m.bodies.size(); ++b) {
        if (m.bodies[b].is_static) continue;
        const Mat3 r = motion[b].orientation.toRotationMatrix();
        const Vec3 w = motion[b].angular_velocity_radps;
        energy += 0.5 * m.bodies[b].mass_kg * motion[b].linear_velocity_mps.squaredNorm() +
                  0.5 * w.dot(r * m.bodies[b].inertia_kgm2 * r.transpose() * w);
      }
      EXPECT_NEAR(0.5 * s.qd.dot(h * s.qd), energy, 1e-12 * std::max(1.0, energy));
    }
  }
}

// Lagrange's equations: C(q, qd) = Hdot qd - 1/2 d(qd^T H qd)/dq + dV/dq, with the derivatives
// of H and of the potential V = -sum m g.c by central differences (step 1e-5: truncation
// eps^2 |H'''| / 6 ~ 1e-10 for |H'''| ~ 10, rounding 1e-16 |H| / eps ~ 1e-11). Tolerance 1e-7
// relative to |C| covers both by 1000x; a missing Coriolis or gyroscopic term is O(1).
TEST(KinematicTree, BiasMatchesLagrangeEquations) {
  std::mt19937 rng(11);
  constexpr double eps = 1e-5;
  for (const Model& m : {branchingTree(1e-3), floatingTree(1e-3)}) {
    const KinematicTree tree(m);
    auto potential = [&](const VectorXd& q) {
      const auto motion = tree.bodyMotions(q, VectorXd::Zero(tree.dof()));
      double v = 0;
      for (std::size_t b = 0; b < m.bodies.size(); ++b)
        if (!m.bodies[b].is_static)
          v -= m.bodies[b].mass_kg * m.gravity_mps2.dot(motion[b].position_m);
      return v;
    };
    for (int trial = 0; trial < 10; ++trial) {
      const Sample s = randomSample(tree, rng);
      const int n = tree.dof();
      MatrixXd hdot = MatrixXd::Zero(n, n);
      VectorXd grad_t(n), grad_v(n);
      for (int k = 0; k < n; ++k) {
        VectorXd qp = s.q, qm = s.q;
        qp[k] += eps;
        qm[k] -= eps;
        const MatrixXd dh = (tree.massMatrix(qp) - tree.massMatrix(qm)) / (2 * eps);
        hdot += dh * s.qd[k];
        grad_t[k] = 0.5 * s.qd.dot(dh * s.qd);
        grad_v[k] = (potential(qp) - potential(qm)) / (2 * eps);
      }
      const VectorXd expected = hdot * s.qd - grad_t + grad_v;
      const VectorXd c = tree.bias(s.q, s.qd, m.gravity_mps2);
      EXPECT_LT(maxAbs(c - expected), 1e-7 * std::max(1.0, maxAbs(c))) << "trial " << trial;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Closed-form equations of motion. Both are exact identities, so the tolerance is rounding:
// 1e-12 relative to the torque scale.

// A pendulum about world y, hanging at q = 0: tau = (I_yy + m l^2) qdd + m g l sin q.
TEST(KinematicTree, SinglePendulumClosedForm) {
  Model m;
  const double l = 0.7, mass = 1.3;
  const int bob = addLink(m, "bob", mass, Vec3(0.05, 0.08, 0.2), Vec3(0, 0, -l));
  m.joints.push_back(
      makeJoint(m, "pivot", JointType::Hinge, kWorld, bob, Vec3::Zero(), Vec3::UnitY()));
  const KinematicTree tree(m);
  const double iyy = m.bodies[bob].inertia_kgm2(1, 1), g = 9.81;
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-3, 3);
  for (int trial = 0; trial < 50; ++trial) {
    VectorXd q(1), qd(1), qdd(1);
    q << u(rng);
    qd << u(rng);
    qdd << u(rng);
    const double expected = (iyy + mass * l * l) * qdd[0] + mass * g * l * std::sin(q[0]);
    EXPECT_NEAR(tree.inverseDynamics(q, qd, qdd, m.gravity_mps2).tau[0], expected, 1e-12 * 30);
    EXPECT_NEAR(tree.massMatrix(q)(0, 0), iyy + mass * l * l, 1e-14);
  }
}

// Two links about world y (planar 2R arm hanging at q = 0, Spong's form):
//   H11 = I1 + I2 + m1 c1^2 + m2 (l1^2 + c2^2 + 2 l1 c2 cos q2), H12 = I2 + m2 (c2^2 + l1 c2 cos
//   q2), H22 = I2 + m2 c2^2, h = m2 l1 c2 sin q2, tau1 = H11 qdd1 + H12 qdd2 - h (2 qd1 qd2 +
//   qd2^2) + (m1 c1 + m2 l1) g sin q1
//          + m2 c2 g sin(q1 + q2),
//   tau2 = H12 qdd1 + H22 qdd2 + h qd1^2 + m2 c2 g sin(q1 + q2).
TEST(KinematicTree, DoublePendulumClosedForm) {
  Model m;
  const double l1 = 0.5, c1 = 0.3, c2 = 0.25, m1 = 2.0, m2 = 1.1, g = 9.81;
  const int a = addLink(m, "a", m1, Vec3(0.04, 0.06, 0.6), Vec3(0, 0, -c1));
  const int b = addLink(m, "b", m2, Vec3(0.05, 0.03, 0.5), Vec3(0, 0, -l1 - c2));
  m.joints.push_back(makeJoint(m, "j1", JointType::Hinge, kWorld, a, Vec3::Zero(), Vec3::UnitY()));
  m.joints.push_back(makeJoint(m, "j2", JointType::Hinge, a, b, Vec3(0, 0, -l1), Vec3::UnitY()));
  const KinematicTree tree(m);
  const double i1 = m.bodies[a].inertia_kgm2(1, 1), i2 = m.bodies[b].inertia_kgm2(1, 1);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-3, 3);
  for (int trial = 0; trial < 50; ++trial) {
    VectorXd q(2), qd(2), qdd(2);
    q << u(rng), u(rng);
    qd << u(rng), u(rng);
    qdd << u(rng), u(rng);
    const double co = std::cos(q[1]), h = m2 * l1 * c2 * std::sin(q[1]);
    const double h11 = i1 + i2 + m1 * c1 * c1 + m2 * (l1 * l1 + c2 * c2 + 2 * l1 * c2 * co);
    const double h12 = i2 + m2 * (c2 * c2 + l1 * c2 * co), h22 = i2 + m2 * c2 * c2;
    const double g12 = m2 * c2 * g * std::sin(q[0] + q[1]);
    const double t1 = h11 * qdd[0] + h12 * qdd[1] - h * (2 * qd[0] * qd[1] + qd[1] * qd[1]) +
                      (m1 * c1 + m2 * l1) * g * std::sin(q[0]) + g12;
    const double t2 = h12 * qdd[0] + h22 * qdd[1] + h * qd[0] * qd[0] + g12;
    const VectorXd tau = tree.inverseDynamics(q, qd, qdd, m.gravity_mps2).tau;
    EXPECT_NEAR(tau[0], t1, 1e-12 * 100);
    EXPECT_NEAR(tau[1], t2, 1e-12 * 100);
  }
}

// ---------------------------------------------------------------------------------------------
// The full-coordinate solver against the reference.

struct Residual {
  double motor = 0;   ///< max |ID - motor torque| (N m).
  double axis = 0;    ///< max |ID - axis torque of all the joint's rows| (N m).
  double force = 0;   ///< max |ID joint force - solver reaction force| (N).
  double torque = 0;  ///< max |ID joint torque - solver reaction torque| at the anchor (N m).
  double tau_scale = 0, force_scale = 0;
  double tau_rate = 0, force_rate = 0;  ///< max |d/dt| of the ID torques and forces (per s).
  /// Floating base: max |ID force| on the fictitious prismatic and hinge joints (N, N m), which
  /// nothing drives, so they must vanish.
  double base_force = 0, base_torque = 0;
};

// Runs the motorised tree for `duration` with smooth voltages (the same functions of time for
// every step size) and compares the joints' loads with ID of the recorded motion:
// qdd = (qd_{n+1} - qd_n) / h at q_n, qd_n (the velocity step of semi-implicit Euler sees the
// state at the start of the step). Substeps = 1, so a step's impulses are its reactions.
Residual compareWithSolver(Model m, double duration) {
  Simulator sim(m);
  State s = sim.initialState();
  const KinematicTree tree(m);
  const double h = m.solver.time_step_s;
  const int steps = static_cast<int>(std::lround(duration / h));
  Residual r;
  KinematicTree::Forces last;
  for (int n = 0; n < steps; ++n) {
    const double t = static_cast<double>(n) * h;
    for (std::size_t k = 0; k < m.motors.size(); ++k) {
      const double kk = static_cast<double>(k);
      s.motors[k].voltage = 0.3 * std::sin(2 * std::numbers::pi * (0.7 + 0.3 * kk) * t + kk);
    }
    const VectorXd q0 = tree.positions(s), qd0 = tree.velocities(s);
    const State before = s;
    checkedStep(sim, s);
    const VectorXd qdd = (tree.velocities(s) - qd0) / h;
    const KinematicTree::Forces id = tree.inverseDynamics(q0, qd0, qdd, m.gravity_mps2);
    for (std::size_t k = 0; k < m.motors.size(); ++k) {
      const int j = m.motors[k].joint;
      const int c = tree.coordinateOfJoint(j);
      const JointDef& def = m.joints[j];
      const Vec3 axis =
          before.bodies[def.body_a].orientation * (def.frame_a.rotation * Vec3::UnitX());
      const JointReaction jr = sim.jointReaction(s, j);
      r.motor = std::max(r.motor, std::abs(id.tau[c] - jr.axis_force));
      r.axis = std::max(r.axis, std::abs(id.tau[c] - jr.axis_force - axis.dot(jr.torque_Nm)));
      r.force = std::max(r.force, (id.force_N[c] - jr.force_N).norm());
      r.torque = std::max(r.torque, (id.torque_Nm[c] - jr.torque_Nm - jr.axis_force * axis).norm());
      r.tau_scale = std::max(r.tau_scale, std::abs(id.tau[c]));
      r.force_scale = std::max(r.force_scale, id.force_N[c].norm());
      if (n == 0) continue;
      r.tau_rate = std::max(r.tau_rate, std::abs(id.tau[c] - last.tau[c]) / h);
      r.force_rate = std::max(r.force_rate, (id.force_N[c] - last.force_N[c]).norm() / h);
    }
    last = id;
    for (int c = 0; c < tree.dof(); ++c) {
      if (tree.coordinates()[c].fictitious_index < 0) continue;
      double& slot = tree.coordinates()[c].fictitious_index < 3 ? r.base_force : r.base_torque;
      slot = std::max(slot, std::abs(id.tau[c]));
    }
  }
  return r;
}

Model isotropicTree(double h) {
  Model m = branchingTree(h);
  for (BodyDef& b : m.bodies) b.inertia_kgm2 = Mat3::Identity() * b.inertia_kgm2.trace() / 3.0;
  return m;
}

// The joint loads of the full-coordinate solver (force, torque, and the torque about the axis of
// all the joint's rows: motor coupling plus the hard rows' component) against ID of its motion.
// Error budget: the velocity solve converges to 1e-13 N s, i.e. 1e-13 / h < 1e-9 N m, so the
// time discretisation dominates. Semi-implicit Euler with chord (curvature) targets makes the
// step's qdd differ from the one at (q_n, qd_n) by O(h): at most about the change of the load over
// one step, hence the bound h * max|d tau/dt| (and h * max|dF/dt|), and halving h must halve the
// residual (ratio <= 0.6 allows for the not yet asymptotic part; the measured ratio is 0.49).
// Isotropic inertias here, so no gyroscopic torque is involved (SolverGyroscopicTorque has it).
TEST(KinematicTree, SolverJointLoadsMatchInverseDynamics) {
  Residual previous;
  for (double h : {2e-3, 1e-3, 5e-4}) {
    const Residual r = compareWithSolver(isotropicTree(h), 1.0);
    std::printf(
        "h = %.1e s: |ID - axis rows| %.3e N m (bound %.3e, scale %.2f); force %.3e N "
        "(bound %.3e, scale %.1f); torque %.3e N m\n",
        h, r.axis, h * r.tau_rate, r.tau_scale, r.force, h * r.force_rate, r.force_scale, r.torque);
    EXPECT_LT(r.axis, h * r.tau_rate);
    EXPECT_LT(r.force, h * r.force_rate);
    if (previous.axis > 0) {
      EXPECT_LT(r.axis / previous.axis, 0.6);
      EXPECT_LT(r.force / previous.force, 0.6);
      EXPECT_LT(r.torque / previous.torque, 0.6);
    }
    previous = r;
  }
}

// The same tree with a free base falling under gravity: the base is joined to the world by six
// fictitious joints that nothing drives, so ID of the solver's motion must give zero force and
// torque on them, with the error budget above: first order in h; the base force is bounded by
// h max|dF/dt| of the joint forces, the base torque (a moment about axes through the base's
// centre) by h (max|d tau/dt| + L max|dF/dt|) with L = 0.86 m the longest chain from the base
// centre to a centre of mass (0.2 + 0.1 + 0.3 + 0.26 m: base to yaw anchor to shoulder to elbow
// to tool), the largest arm any force error can have.
TEST(KinematicTree, FloatingBaseSolverMotionHasNoBaseForces) {
  Residual previous;
  for (double h : {2e-3, 1e-3, 5e-4}) {
    Model m = isotropicTree(h);
    m.bodies[0].is_static = false;
    m.bodies[0].mass_kg = 3.0;
    m.bodies[0].inertia_kgm2 = Mat3::Identity() * 0.02;
    const Residual r = compareWithSolver(m, 0.6);
    constexpr double reach = 0.86;
    const double torque_bound = h * (r.tau_rate + reach * r.force_rate);
    std::printf(
        "h = %.1e s: base force %.3e N (bound %.3e), base torque %.3e N m (bound %.3e); "
        "|ID - axis rows| %.3e N m\n",
        h, r.base_force, h * r.force_rate, r.base_torque, torque_bound, r.axis);
    EXPECT_LT(r.base_force, h * r.force_rate);
    EXPECT_LT(r.base_torque, torque_bound);
    EXPECT_LT(r.axis, h * r.tau_rate);
    if (previous.base_force > 0) {
      EXPECT_LT(r.base_force / previous.base_force, 0.6);
      EXPECT_LT(r.base_torque / previous.base_torque, 0.6);
    }
    previous = r;
  }
}

// Issue 9's criterion as stated: the motors' torques alone match ID, within the same first-order
// budget. This found a solver bug: the warm start re-applied a hinge's stored rotation-row
// impulse as a world vector, and once the joint axis had turned (here under the yaw joint) part of
// it acted about the free axis and was never removed (about 7 N m of 6 N m). The warm start now
// drops the stored impulse's part along the current axis.
TEST(KinematicTree, SolverMotorTorquesMatchInverseDynamics) {
  Residual previous;
  for (double h : {2e-3, 1e-3, 5e-4}) {
    const Residual r = compareWithSolver(isotropicTree(h), 1.0);
    std::printf("h = %.1e s: |ID - motor| %.3e N m (bound %.3e), |ID - axis rows| %.3e N m\n", h,
                r.motor, h * r.tau_rate, r.axis);
    EXPECT_LT(r.motor, h * r.tau_rate);
    if (previous.motor > 0) {
      EXPECT_LT(r.motor / previous.motor, 0.6);
    }
    previous = r;
  }
}

// Rigid bodies with unequal principal inertias: the joint loads match ID only if the solver has
// the gyroscopic torque w x I w. Without it (the solver had none) an O(1) residual stayed as h
// shrank: 0.16 N m about the axes, 0.5 N m in the reaction torque at h = 0.5 ms. Now first order.
TEST(KinematicTree, SolverGyroscopicTorque) {
  Residual previous;
  for (double h : {2e-3, 1e-3, 5e-4}) {
    const Residual r = compareWithSolver(branchingTree(h), 1.0);
    std::printf(
        "h = %.1e s: |ID - axis rows| %.3e N m (bound %.3e), |ID - motor| %.3e N m, "
        "reaction torque %.3e N m\n",
        h, r.axis, h * r.tau_rate, r.motor, r.torque);
    EXPECT_LT(r.axis, h * r.tau_rate);
    EXPECT_LT(r.motor, h * r.tau_rate);
    if (previous.axis > 0) {
      EXPECT_LT(r.axis / previous.axis, 0.6);
      EXPECT_LT(r.torque / previous.torque, 0.6);
    }
    previous = r;
  }
}

// The same branching tree without motors, falling and swinging freely under gravity for 5 s with
// tight position correction (20 passes to 1e-12 m). Before the hinge warm-start fix it blew up
// at step 328. The step is dissipative (semi-implicit Euler with split-impulse correction and
// implicit gyroscopic torque), so the total energy must never exceed its start, beyond rounding
// (1e-9 relative), and the loss must stay small: under 10 % in 5 s (3.7 % measured).
TEST(KinematicTree, PassiveTreeSwingsWithoutGainingEnergy) {
  const Model m = branchingTree(1e-3, /*with_motors=*/false);
  Simulator sim(m);
  State s = sim.initialState();
  const auto energy = [&]() {
    double e = 0.0;
    for (std::size_t i = 0; i < m.bodies.size(); ++i) {
      if (m.bodies[i].is_static) continue;
      const BodyState& b = s.bodies[i];
      const Mat3 r = b.orientation.toRotationMatrix();
      const Mat3 inertia = r * m.bodies[i].inertia_kgm2 * r.transpose();
      e += 0.5 * m.bodies[i].mass_kg * b.linear_velocity_mps.squaredNorm() +
           0.5 * b.angular_velocity_radps.dot(inertia * b.angular_velocity_radps) -
           m.bodies[i].mass_kg * m.gravity_mps2.dot(b.position_m);
    }
    return e;
  };
  const double e0 = energy();
  double highest = e0;
  for (int i = 0; i < 5000; ++i) {
    const StepReport report = sim.step(s);
    ASSERT_EQ(report.fault.kind, Fault::Kind::None)
        << "step " << i << ": " << report.fault.describe();
    highest = std::max(highest, energy());
  }
  std::printf("energy: start %.6f J, end %.6f J, highest %.6f J\n", e0, energy(), highest);
  EXPECT_LE(highest, e0 + 1e-9 * std::abs(e0));
  EXPECT_GT(energy(), 0.9 * e0);
}

}  // namespace
}  // namespace sim::dynamics
