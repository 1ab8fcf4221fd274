// Hinge joint (SPEC §2.2): body b turns about the axis n0 of frame a; one freedom, the angle.
//
// Rows. Three point rows keep the anchors together, C = (x_b + r_b) - (x_a + r_a), and two
// rotation rows keep frame a's axis a1 perpendicular to frame b's axes b2 and c2,
// C = (a1.b2, a1.c2), Cdot_k = (w_b - w_a).u_k with u1 = b2 x a1, u2 = c2 x a1 (joint_parts.h:
// PointPart, HingeRotationPart). Both target the velocity-quadratic part of their constraint's
// second derivative times -h/2 (curvature targets), so a swinging link follows the arc instead of
// its tangent and loses no energy to the next projection. The coordinate is the angle
// alpha = atan2(n_a2.n_b1, n_a1.n_b1), continued across +-pi; its exact gradient g
// (joint_geometry.h) makes the axis row Cdot = g.(w_b - w_a), through which limits, friction and
// motors act (joint_response.cpp).
//
// Solving. A hinge outside motor blocks solves its five rows as one block each sweep
// (PointRotationBlock<2>, packed in Joints::sweeps): with separate point and rotation rows an
// anchor far from a light body's centre of mass makes them undo each other between iterations.
// Its position pass corrects the five errors, measured at the poses as they are now, in one step
// with that block's factor from the substep's start: only the directions it pushes along are the
// substep's, a few milliradians old at most. A hinge in a motor block hands the block its rows
// (rows()); its position pass corrects the rotation rows, then the point rows (ball_joint.cpp).
//
// Warm start: the rotation rows act perpendicular to the axis only, while the stored angular
// impulse is a world vector from the last substep. Since then the axis turned with the bodies, so
// its part along the current axis is dropped: no row could take that torque back, and it would
// drive the free coordinate (it grew to several N m in a branching tree).
#include "joints.h"

#include <algorithm>
#include <cmath>

namespace sim::dynamics::detail::hinge {

void compile(const Model& model, Joints& joints, int j) {
  const JointWork& w = joints[j];
  joints.sweep[j] = static_cast<int>(joints.sweeps.size());
  joints.sweeps.push_back({w.a, w.b, {}});
  const JointDef& def = model.joints[j];
  joints.sweep_frames.push_back(
      {def.frame_a.position, def.frame_b.position, def.frame_a.rotation * Vec3::UnitX(),
       def.frame_b.rotation * Vec3::UnitY(), def.frame_b.rotation * Vec3::UnitZ()});
}

void prepare(StepContext& ctx, int j, const JointFrames& f) {
  JointWork& w = ctx.joints[j];
  const SolverBody& a = ctx.bodies[w.a];
  const SolverBody& b = ctx.bodies[w.b];
  // Blocks and joint responses build their own K from arms and directions.
  w.point.setArms(f.arm_a, f.arm_b);
  w.point.setCurvatureTarget(a, b, ctx.h);
  w.hinge_rotation.setDirections(f.axes_a.col(0), f.axes_b.col(1), f.axes_b.col(2));
  w.hinge_rotation.setCurvatureTarget(a, b, f.axes_a.col(0), f.axes_b.col(1), f.axes_b.col(2),
                                      ctx.h);
  if (const int s = ctx.joints.sweep[j]; s >= 0) {
    Eigen::Matrix<double, 3, 2> u;
    u << w.hinge_rotation.u1, w.hinge_rotation.u2;
    HingeSweep& sweep = ctx.joints.sweeps[static_cast<std::size_t>(s)];
    sweep.block.setup(a, b, w.point, u);
    sweep.block.bias.tail<2>() = w.hinge_rotation.bias;
  }
  const Vec3 g = hingeAngleGradient(f);
  w.axis.setup(a, b, Vec3::Zero(), -g, g);
}

void warmStart(StepContext& ctx, int j) {
  const JointWork& w = ctx.joints[j];
  JointImpulses& imp = ctx.state.joints[static_cast<std::size_t>(j)].impulses;
  Vec3 axis = w.hinge_rotation.u1.cross(w.hinge_rotation.u2);
  const double norm = axis.norm();
  if (norm > 0.0) {
    axis /= norm;
    imp.angular -= axis * axis.dot(imp.angular);
  }
  SolverBody& a = ctx.bodies[w.a];
  SolverBody& b = ctx.bodies[w.b];
  w.point.apply(a, b, imp.linear);
  HingeRotationPart::applyAngular(a, b, imp.angular);
}

double solvePosition(StepContext& ctx, int j, double beta) {
  const JointWork& w = ctx.joints[j];
  const SolverBody& a = ctx.bodies[w.a];
  const SolverBody& b = ctx.bodies[w.b];
  const int s = ctx.joints.sweep[j];
  if (s < 0) {  // in a motor block: the rotation rows, then the point rows
    const JointFrames f = ctx.joints.frames(ctx, j);
    const Vec3 a1 = f.axes_a.col(0);
    const Eigen::Vector2d c(a1.dot(f.axes_b.col(1)), a1.dot(f.axes_b.col(2)));
    HingeRotationPart part;
    part.setup(a, b, a1, f.axes_b.col(1), f.axes_b.col(2));
    const Eigen::Vector2d lam = -beta * (part.k_inv * c);
    const Vec3 l = part.u1 * lam.x() + part.u2 * lam.y();
    return std::max(c.cwiseAbs().maxCoeff(),
                    ball::correctPoint(ctx, j, f, -(a.inv_inertia * l), b.inv_inertia * l, beta));
  }
  const PointRotationBlock<2>& block = ctx.joints.sweeps[static_cast<std::size_t>(s)].block;
  const HingeLocalFrame& lf = ctx.joints.sweep_frames[static_cast<std::size_t>(s)];
  const Mat3 rot_a = ctx.bodies.orientations[w.a].toRotationMatrix();
  const Mat3 rot_b = ctx.bodies.orientations[w.b].toRotationMatrix();
  const Vec3 a1 = rot_a * lf.axis_a;
  double c[5];
  const Vec3 gap = (ctx.bodies.positions[w.b] + rot_b * lf.anchor_b) -
                   (ctx.bodies.positions[w.a] + rot_a * lf.anchor_a);
  c[0] = gap[0];
  c[1] = gap[1];
  c[2] = gap[2];
  c[3] = a1.dot(rot_b * lf.side_b1);
  c[4] = a1.dot(rot_b * lf.side_b2);
  double largest = 0.0;
  for (const double e : c) largest = std::max(largest, std::abs(e));
  double lambda[5];
  block.impulseFor(c, beta, lambda);
  Vec3 dx_a, dt_a, dx_b, dt_b;
  for (int r = 0; r < 3; ++r) {
    block.turnsFor(lambda, r, dt_a[r], dt_b[r]);
    dx_a[r] = -a.inv_mass * lambda[r];
    dx_b[r] = b.inv_mass * lambda[r];
  }
  ctx.bodies.shift(w.a, dx_a, dt_a);
  ctx.bodies.shift(w.b, dx_b, dt_b);
  return largest;
}

void rows(const JointWork& w, Row rows[6], double targets[5]) {
  const Vec3 zero = Vec3::Zero();
  for (int k = 0; k < 3; ++k) {
    const Vec3 e = Vec3::Unit(k);
    rows[k] = Row{-e, -w.point.r_a.cross(e), e, w.point.r_b.cross(e)};
    targets[k] = w.point.bias[k];
  }
  rows[3] = Row{zero, -w.hinge_rotation.u1, zero, w.hinge_rotation.u1};
  rows[4] = Row{zero, -w.hinge_rotation.u2, zero, w.hinge_rotation.u2};
  targets[3] = w.hinge_rotation.bias[0];
  targets[4] = w.hinge_rotation.bias[1];
  rows[5] = Row{-w.axis.lin, w.axis.ang_a, w.axis.lin, w.axis.ang_b};
}

}  // namespace sim::dynamics::detail::hinge
