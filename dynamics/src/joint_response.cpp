// Rows along a hinge's or slider's coordinate, and the joint's response through which they act.
//
// A limit, Coulomb friction, a viscous damper and a motor's coupling each act on one number, the
// joint coordinate q, through the axis row J_q (hinge: the exact angle gradient; slider: the
// axis n0). Pushed as a lone scalar row, with its effective mass 1 / (J_q M^-1 J_q^T), such a row
// fights the joint's own hard rows whenever the pivot is far from a light link's centre of mass:
// its impulse moves the anchor, the point rows take it back, and a hinge on its stop needs many
// sweeps. Here it acts through the joint's response instead. With K = J M^-1 J^T over the joint's
// six rows (the five hard rows, then the axis row), the impulses lambda = K^-1 e5 dv change the
// axis speed by dv while the hard rows keep their speeds, and (K^-1)_55 is the effective mass of
// the coordinate itself with the joint holding (AxisResponse). With the driving rotor's mobility
// m = ratio^2 / I_m added on the axis, K + m e5 e5^T, the column is by Sherman-Morrison
// (K^-1 e5) / (1 + m (K^-1)_55): the response a position pass moves the coupling with.
//
// K is a Gram matrix: symmetric positive semidefinite, singular when its rows are dependent (both
// sides static); then the axis row acts alone. Only column 5 of K^-1 is needed
// (dense_factor.h: lastInverseColumn).
#include "joints.h"
#include "motors.h"

#include <algorithm>

#include "dense_factor.h"

namespace sim::dynamics::detail::joint_axis {

namespace {

// The joint's 6 x 6 K over its six rows, and the responses described at AxisResponse.
void setupResponse(JointWork& w, const SolverBody& a, const SolverBody& b, double rotor_mobility) {
  AxisResponse& r = w.response;
  double targets[5];
  rows(w, r.rows, targets);
  Vec3 turn_a[6], turn_b[6];  // I^-1 times each row's angular parts, once per row
  for (int j = 0; j < 6; ++j) {
    turn_a[j] = a.inv_inertia * r.rows[j].ang_a;
    turn_b[j] = b.inv_inertia * r.rows[j].ang_b;
  }
  Mat6 k;
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j <= i; ++j) {
      const double v =
          a.inv_mass * r.rows[i].lin_a.dot(r.rows[j].lin_a) + r.rows[i].ang_a.dot(turn_a[j]) +
          b.inv_mass * r.rows[i].lin_b.dot(r.rows[j].lin_b) + r.rows[i].ang_b.dot(turn_b[j]);
      k(i, j) = k(j, i) = v;
    }
  }
  const bool invertible = lastInverseColumn<6>(k, r.axis);
  if (!invertible)  // act on the axis row alone
    r.axis = w.axis.k > 0.0 ? Vec6(Vec6::Unit(5) / w.axis.k) : Vec6::Zero();
  r.mass = std::max(0.0, r.axis[5]);
  if (rotor_mobility > 0.0)
    r.coupling = invertible ? Vec6(r.axis / (1.0 + rotor_mobility * r.axis[5])) : Vec6::Zero();
}

}  // namespace

void rows(const JointWork& w, Row rows[6], double targets[5]) {
  if (w.type == JointType::Hinge)
    hinge::rows(w, rows, targets);
  else
    prismatic::rows(w, rows, targets);
}

void prepareResponse(StepContext& ctx, int j) {
  JointWork& w = ctx.joints[j];
  const JointDef& def = ctx.model.joints[static_cast<std::size_t>(j)];
  AxisResponse& r = w.response;
  r.active = (def.type == JointType::Hinge || def.type == JointType::Prismatic) &&
             (def.limit_enabled || w.friction.coulomb || def.friction.viscous > 0.0 ||
              ctx.joints.in_block[j]);
  if (!r.active) return;
  r.rotor_mobility = motor::mobilityOnJoint(ctx.model, ctx.joints, j);
  // Deferred where only position passes read the responses (no viscous row: a driven joint's
  // Coulomb row is in its block).
  r.deferred = ctx.joints.reduced[j] && def.friction.viscous == 0.0;
  if (!r.deferred) setupResponse(w, ctx.bodies[w.a], ctx.bodies[w.b], r.rotor_mobility);
}

void undefer(StepContext& ctx, int j) {
  JointWork& w = ctx.joints[j];
  if (!w.response.deferred) return;
  setupResponse(w, ctx.bodies[w.a], ctx.bodies[w.b], w.response.rotor_mobility);
  w.response.deferred = false;
}

double push(StepContext& ctx, int j, double dv) {
  const JointWork& w = ctx.joints[j];
  JointImpulses& imp = ctx.state.joints[static_cast<std::size_t>(j)].impulses;
  SolverBody& a = ctx.bodies[w.a];
  SolverBody& b = ctx.bodies[w.b];
  for (int r = 0; r < 5; ++r) {
    const double l = w.response.axis[r] * dv;
    if (l == 0.0) continue;
    const Row& row = w.response.rows[r];
    row.apply(a, b, l);
    if (linearRow(w.type, r))
      imp.linear += l * row.lin_b;
    else
      imp.angular += l * row.ang_b;
  }
  const double l5 = w.response.axis[5] * dv;
  w.axis.apply(a, b, l5);
  return l5;
}

double move(StepContext& ctx, int j, const Vec6& response, double dq) {
  const JointWork& w = ctx.joints[j];
  const SolverBody& a = ctx.bodies[w.a];
  const SolverBody& b = ctx.bodies[w.b];
  Vec3 dx_a = Vec3::Zero(), dt_a = Vec3::Zero(), dx_b = Vec3::Zero(), dt_b = Vec3::Zero();
  for (int r = 0; r < 6; ++r) {
    const double l = response[r] * dq;
    dx_a += l * w.response.rows[r].lin_a;
    dt_a += l * w.response.rows[r].ang_a;
    dx_b += l * w.response.rows[r].lin_b;
    dt_b += l * w.response.rows[r].ang_b;
  }
  ctx.bodies.shift(w.a, a.inv_mass * dx_a, a.inv_inertia * dt_a);
  ctx.bodies.shift(w.b, b.inv_mass * dx_b, b.inv_inertia * dt_b);
  return response[5] * dq;
}

void warmStart(StepContext& ctx, int j) {
  const JointWork& w = ctx.joints[j];
  const JointImpulses& imp = ctx.state.joints[static_cast<std::size_t>(j)].impulses;
  w.axis.apply(ctx.bodies[w.a], ctx.bodies[w.b], imp.friction + imp.viscous + imp.limit);
}

double speed(const StepContext& ctx, int j) {
  const JointWork& w = ctx.joints[j];
  return w.axis.velocity(ctx.bodies[w.a], ctx.bodies[w.b]);
}

}  // namespace sim::dynamics::detail::joint_axis
