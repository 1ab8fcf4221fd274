// Ball joint (SPEC §2.2): the two anchors coincide; three rotational freedoms, no coordinate.
//
// Rows. C = (x_b + r_b) - (x_a + r_a), Cdot = v_b + w_b x r_b - v_a - w_a x r_a: three rows with
// K = (1/m_a + 1/m_b) 1 - [r_a]x I_a^-1 [r_a]x - [r_b]x I_b^-1 [r_b]x, solved together by K^-1
// (PointPart, joint_parts.h). Their target is the velocity-quadratic part of the anchors'
// relative acceleration times -h/2 (curvature target): the step then follows the chord of the
// arc, and a swinging link does not lose energy of order (w h)^2 per step to the projection.
//
// Position pass: correctPoint moves the anchors together by beta of their gap through K^-1 at the
// poses as they are now. Hinges in motor blocks and fixed joints use it too, after their rotation
// rows, with the arms the rotation correction leaves (to first order); each body then moves once.
#include "joints.h"

#include <algorithm>

namespace sim::dynamics::detail::ball {

void prepare(StepContext& ctx, int j, const JointFrames& f) {
  JointWork& w = ctx.joints[j];
  const SolverBody& a = ctx.bodies[w.a];
  const SolverBody& b = ctx.bodies[w.b];
  w.point.setup(a, b, f.arm_a, f.arm_b);
  w.point.setCurvatureTarget(a, b, ctx.h);
}

void warmStart(StepContext& ctx, int j) {
  const JointWork& w = ctx.joints[j];
  w.point.apply(ctx.bodies[w.a], ctx.bodies[w.b],
                ctx.state.joints[static_cast<std::size_t>(j)].impulses.linear);
}

double solveVelocity(StepContext& ctx, int j) {
  const JointWork& w = ctx.joints[j];
  SolverBody& a = ctx.bodies[w.a];
  SolverBody& b = ctx.bodies[w.b];
  const Vec3 p = -(w.point.k_inv * (w.point.velocity(a, b) - w.point.bias));
  w.point.apply(a, b, p);
  ctx.state.joints[static_cast<std::size_t>(j)].impulses.linear += p;
  return p.norm();
}

double solvePosition(StepContext& ctx, int j, double beta) {
  return correctPoint(ctx, j, ctx.joints.frames(ctx, j), Vec3::Zero(), Vec3::Zero(), beta);
}

double correctPoint(StepContext& ctx, int j, const JointFrames& f, Vec3 turn_a, Vec3 turn_b,
                    double beta) {
  const JointWork& w = ctx.joints[j];
  const SolverBody& a = ctx.bodies[w.a];
  const SolverBody& b = ctx.bodies[w.b];
  const Vec3 arm_a = f.arm_a + turn_a.cross(f.arm_a);
  const Vec3 arm_b = f.arm_b + turn_b.cross(f.arm_b);
  const Vec3 c = (f.anchor_b - f.arm_b + arm_b) - (f.anchor_a - f.arm_a + arm_a);
  Vec3 move_a = Vec3::Zero(), move_b = Vec3::Zero();
  const Mat3 k = PointPart::effectiveMassInverse(a, b, arm_a, arm_b);
  if (k.determinant() > 0.0) {
    const Vec3 p = -beta * (k.inverse() * c);
    move_a = -a.inv_mass * p;
    move_b = b.inv_mass * p;
    turn_a -= a.inv_inertia * arm_a.cross(p);
    turn_b += b.inv_inertia * arm_b.cross(p);
  }
  ctx.bodies.shift(w.a, move_a, turn_a);
  ctx.bodies.shift(w.b, move_b, turn_b);
  return c.cwiseAbs().maxCoeff();
}

}  // namespace sim::dynamics::detail::ball
