// Prismatic joint (slider, SPEC §2.2): body b slides along the axis n0 of frame a; one freedom,
// the displacement s = d.n0 with d the vector from anchor a to anchor b.
//
// Rows. Three rows lock the relative rotation, Cdot = w_b - w_a, K = I_a^-1 + I_b^-1
// (RotationPart), and two keep anchor b on the line through anchor a: C_k = d.n_k (k = 1, 2),
// Cdot_k = n_k.(v_b - v_a) - ((r_a + d) x n_k).w_a + (r_b x n_k).w_b, solved as a pair
// (LineRows). The axis row is the same form along n0 (joint_response.cpp: limits, friction and
// motors act through it). The line rows differentiate d.n_k with n_k turning with body a, which
// is where the r_a + d arm comes from.
//
// Position pass: the rotation error (joint_geometry.h: rotationError) and the line error, each
// removed by beta through its K^-1 at the poses as they are now; an error within a thousandth of
// the position tolerance is left alone (in a block solved in rotor coordinates the rows hold to
// rounding, and setting up the line rows again would move nothing).
#include "joints.h"

#include <algorithm>
#include <utility>

namespace sim::dynamics::detail::prismatic {

void prepare(StepContext& ctx, int j, const JointFrames& f) {
  JointWork& w = ctx.joints[j];
  const SolverBody& a = ctx.bodies[w.a];
  const SolverBody& b = ctx.bodies[w.b];
  const Vec3 d = f.anchor_b - f.anchor_a;
  w.rotation.setup(a, b);
  w.line.setup(a, b, f.arm_a, f.arm_b, d, f.axes_a.col(1), f.axes_a.col(2));
  const Vec3 n = f.axes_a.col(0);
  w.axis.setup(a, b, n, -(f.arm_a + d).cross(n), f.arm_b.cross(n));
}

void warmStart(StepContext& ctx, int j) {
  const JointWork& w = ctx.joints[j];
  const JointImpulses& imp = ctx.state.joints[static_cast<std::size_t>(j)].impulses;
  SolverBody& a = ctx.bodies[w.a];
  SolverBody& b = ctx.bodies[w.b];
  HingeRotationPart::applyAngular(a, b, imp.angular);
  w.line.row1.apply(a, b, imp.linear.dot(w.line.row1.lin));
  w.line.row2.apply(a, b, imp.linear.dot(w.line.row2.lin));
}

double solveVelocity(StepContext& ctx, int j) {
  const JointWork& w = ctx.joints[j];
  JointImpulses& imp = ctx.state.joints[static_cast<std::size_t>(j)].impulses;
  SolverBody& a = ctx.bodies[w.a];
  SolverBody& b = ctx.bodies[w.b];
  const Vec3 l = -(w.rotation.k_inv * (b.w - a.w));
  HingeRotationPart::applyAngular(a, b, l);
  imp.angular += l;
  const Eigen::Vector2d cdot(w.line.row1.velocity(a, b), w.line.row2.velocity(a, b));
  const Eigen::Vector2d lam = -(w.line.k_inv * cdot);
  w.line.row1.apply(a, b, lam.x());
  w.line.row2.apply(a, b, lam.y());
  imp.linear += w.line.row1.lin * lam.x() + w.line.row2.lin * lam.y();
  return std::max(l.norm(), lam.norm());
}

double solvePosition(StepContext& ctx, int j, double beta) {
  const JointWork& w = ctx.joints[j];
  const JointDef& def = ctx.model.joints[static_cast<std::size_t>(j)];
  const SolverBody& a = ctx.bodies[w.a];
  const SolverBody& b = ctx.bodies[w.b];
  const double held = 1e-3 * ctx.model.solver.position_tolerance_m;
  const Vec3 e = rotationError(ctx.bodies.orientations[w.a] * def.frame_a.rotation,
                               ctx.bodies.orientations[w.b] * def.frame_b.rotation);
  if (e.cwiseAbs().maxCoeff() > held) {
    const Vec3 l = -beta * (w.rotation.k_inv * e);
    ctx.bodies.shift(w.a, Vec3::Zero(), -(a.inv_inertia * l));
    ctx.bodies.shift(w.b, Vec3::Zero(), b.inv_inertia * l);
  }
  const JointFrames g = ctx.joints.frames(ctx, j);
  const Vec3 d = g.anchor_b - g.anchor_a;
  const Eigen::Vector2d c(d.dot(g.axes_a.col(1)), d.dot(g.axes_a.col(2)));
  if (c.cwiseAbs().maxCoeff() > held) {
    LineRows line;
    line.setup(a, b, g.arm_a, g.arm_b, d, g.axes_a.col(1), g.axes_a.col(2));
    const Eigen::Vector2d lam = -beta * (line.k_inv * c);
    for (const auto& [row, l2] : {std::pair{&line.row1, lam.x()}, std::pair{&line.row2, lam.y()}}) {
      ctx.bodies.shift(w.a, -row->inv_mass_a * l2 * row->lin, l2 * row->dw_a);
      ctx.bodies.shift(w.b, row->inv_mass_b * l2 * row->lin, l2 * row->dw_b);
    }
  }
  return std::max(e.cwiseAbs().maxCoeff(), c.cwiseAbs().maxCoeff());
}

void rows(const JointWork& w, Row rows[6], double targets[5]) {
  const Vec3 zero = Vec3::Zero();
  for (int k = 0; k < 3; ++k) rows[k] = Row{zero, -Vec3::Unit(k), zero, Vec3::Unit(k)};
  rows[3] = Row{-w.line.row1.lin, w.line.row1.ang_a, w.line.row1.lin, w.line.row1.ang_b};
  rows[4] = Row{-w.line.row2.lin, w.line.row2.ang_a, w.line.row2.lin, w.line.row2.ang_b};
  for (int k = 0; k < 5; ++k) targets[k] = 0.0;
  rows[5] = Row{-w.axis.lin, w.axis.ang_a, w.axis.lin, w.axis.ang_b};
}

}  // namespace sim::dynamics::detail::prismatic
