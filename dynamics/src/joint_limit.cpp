// Joint limits: lower <= q <= upper on a hinge's angle (rad) or a slider's displacement (m).
//
// One side is active at a time, the nearer one; its row is unilateral along the axis,
// side * qdot >= -gap / h while apart (speculative: the joint may close the gap in one substep,
// no more, so an approaching joint stops at the stop instead of through it) and >= 0 once there,
// with an impulse that only pushes (side * lambda >= 0). A joint outside motor blocks solves it as
// a scalar row through the joint's axis response (joint_response.cpp: the coordinate's effective
// mass with the joint holding, so a pivot far from the centre of mass stops in one sweep); a
// driven joint's limit is a row of its motor block (motor_block.cpp), solved with the rotor in an
// active-set loop. Position pass: a coordinate beyond its stop is moved back by beta of the
// overshoot through the same response.
#include "joints.h"
#include "motor_block.h"

#include <algorithm>
#include <cmath>

namespace sim::dynamics::detail::limit {

void prepare(StepContext& ctx, int j) {
  JointWork& w = ctx.joints[j];
  const JointDef& def = ctx.model.joints[static_cast<std::size_t>(j)];
  w.limit.side = 0;
  if (!def.limit_enabled) return;
  const double to_lower = w.position - def.lower_limit;
  const double to_upper = def.upper_limit - w.position;
  w.limit.side = to_lower <= to_upper ? 1 : -1;
  const double gap = w.limit.side > 0 ? to_lower : to_upper;
  w.limit.bias = gap > 0.0 ? gap / ctx.h : 0.0;
}

void forgetStale(StepContext& ctx, int j) {
  const int side = ctx.joints[j].limit.side;
  double& held = ctx.state.joints[static_cast<std::size_t>(j)].impulses.limit;
  if (side * held < 0.0 || side == 0) held = 0.0;
}

double solveVelocity(StepContext& ctx, int j) {
  const JointWork& w = ctx.joints[j];
  if (w.limit.side == 0 || !(w.response.mass > 0.0) || ctx.joints.in_block[j]) return 0.0;
  JointImpulses& imp = ctx.state.joints[static_cast<std::size_t>(j)].impulses;
  const double side = w.limit.side;
  const double v = side * w.axis.velocity(ctx.bodies[w.a], ctx.bodies[w.b]);
  const double old = side * imp.limit;
  const double acc = std::max(0.0, old - (v + w.limit.bias) * w.response.mass);
  imp.limit += joint_axis::push(ctx, j, side * (acc - old) / w.response.mass);
  return std::abs(acc - old);
}

double solvePosition(StepContext& ctx, int j, double beta) {
  const JointWork& w = ctx.joints[j];
  if (w.limit.side == 0) return 0.0;
  const JointDef& def = ctx.model.joints[static_cast<std::size_t>(j)];
  const double q = ctx.joints.unwrapped(ctx, j, w.position);
  const double gap = w.limit.side > 0 ? q - def.lower_limit : def.upper_limit - q;
  if (!(gap < 0.0)) return 0.0;
  joint_axis::undefer(ctx, j);
  if (w.response.mass > 0.0) joint_axis::move(ctx, j, w.response.axis, -beta * w.limit.side * gap);
  return -gap;
}

void addBlockRow(StepContext& ctx, RowBlock& block, int j) {
  const JointWork& w = ctx.joints[j];
  if (w.limit.side == 0) return;
  const AxisRow& ax = w.axis;
  const double sd = w.limit.side;
  BlockRow& l = block.add(ctx.bodies.solver, w.a, w.b,
                          Row{-sd * ax.lin, sd * ax.ang_a, sd * ax.lin, sd * ax.ang_b},
                          ImpulseSink::JointLimit, j);
  l.bounded = true;
  l.sign = sd;
  l.target = -w.limit.bias;
  l.active = sd * ctx.state.joints[static_cast<std::size_t>(j)].impulses.limit > 0.0;
}

}  // namespace sim::dynamics::detail::limit
