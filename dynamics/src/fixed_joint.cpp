// Fixed joint (SPEC §2.2): body b welded to body a; no freedom.
//
// Rows. The ball joint's three point rows (ball_joint.cpp) and three rows locking the relative
// rotation, Cdot = w_b - w_a with K = I_a^-1 + I_b^-1 (RotationPart), solved as one six-row block
// each sweep (PointRotationBlock<3>, the rotation rows along the world axes): separately, an
// anchor far from a light body's centre of mass makes the point and rotation rows undo each other.
//
// Position pass: the rotation error, the rotation vector taking frame a's orientation to frame
// b's (joint_geometry.h: rotationError), is removed by beta through K^-1 of the rotation rows;
// then the point rows (ball::correctPoint) on the arms that correction leaves, each body moving
// once.
#include "joints.h"

#include <algorithm>

namespace sim::dynamics::detail::fixed {

void prepare(StepContext& ctx, int j, const JointFrames& f) {
  ball::prepare(ctx, j, f);  // the point rows
  JointWork& w = ctx.joints[j];
  const SolverBody& a = ctx.bodies[w.a];
  const SolverBody& b = ctx.bodies[w.b];
  w.rotation.setup(a, b);
  w.fixed_block.setup(a, b, w.point, Mat3::Identity());
}

void warmStart(StepContext& ctx, int j) {
  const JointWork& w = ctx.joints[j];
  const JointImpulses& imp = ctx.state.joints[static_cast<std::size_t>(j)].impulses;
  SolverBody& a = ctx.bodies[w.a];
  SolverBody& b = ctx.bodies[w.b];
  w.point.apply(a, b, imp.linear);
  HingeRotationPart::applyAngular(a, b, imp.angular);
}

double solveVelocity(StepContext& ctx, int j) {
  const JointWork& w = ctx.joints[j];
  JointImpulses& imp = ctx.state.joints[static_cast<std::size_t>(j)].impulses;
  return w.fixed_block.solve(ctx.bodies[w.a], ctx.bodies[w.b], imp.linear, imp.angular);
}

double solvePosition(StepContext& ctx, int j, double beta) {
  const JointWork& w = ctx.joints[j];
  const JointDef& def = ctx.model.joints[static_cast<std::size_t>(j)];
  const SolverBody& a = ctx.bodies[w.a];
  const SolverBody& b = ctx.bodies[w.b];
  const JointFrames f = ctx.joints.frames(ctx, j);
  const Vec3 e = rotationError(ctx.bodies.orientations[w.a] * def.frame_a.rotation,
                               ctx.bodies.orientations[w.b] * def.frame_b.rotation);
  const Vec3 l = -beta * (w.rotation.k_inv * e);
  const double point = ball::correctPoint(ctx, j, f, -(a.inv_inertia * l), b.inv_inertia * l, beta);
  return std::max(e.cwiseAbs().maxCoeff(), point);
}

}  // namespace sim::dynamics::detail::fixed
