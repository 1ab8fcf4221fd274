// Flexure joint (SPEC §5, seed 001): a compliant hinge as a spring between the two bodies at its
// compliance centre (dynamics/flexure.h). Frames: x the bending axis, y along the flexure from
// root to output, z across it in the bending plane. Deformation q = (x, y, θ): the output frame's
// origin in the base frame's (y, z), and the hinge angle about x, which is the joint's coordinate.
//
// Rows, in one six-row block: 0-2 hold the out-of-plane motion hard (translation along the axis,
// C = d.a0, and the two tilts a0.b1, a0.b2); 3-5 are the spring on (x, y, θ), soft rows. Each
// substep the spring is linearised at the present deformation: load W(q) (eq. 2) and tangent
// S = dW/dq give the soft rows' compliance Gamma = (h (D + h S))^-1 and bias (D + h S)^-1 W
// (soft_row.h): one implicit-Euler step of the coupled spring, stable at any stiffness (with the
// cross terms explicit, a leaf with k_x = 2.4e6 N/m and k_y = 944 N/m diverged within 30 steps at
// 1/240 s). The torsion-spring model (PRB) holds rows 3-4 hard too, a pin with a spring on θ.
// Solve: d_lambda = -(K + Gamma)^-1 (Cdot + bias + Gamma lambda); K + Gamma is not symmetric
// when the spring's coupling is not, so its inverse is a full-pivot LU.
//
// Warm start: the joint keeps its reaction in the State's linear and angular impulses (world
// vectors on body b), projected back onto this substep's rows: exact for the linear rows, whose
// directions are orthonormal, and for the angular ones at rest. Position pass: the hard rows only
// (the spring's rows have no error to remove: their softness accounts for it).
#include "joints.h"

#include <dynamics/flexure.h>

#include <algorithm>

#include "soft_row.h"

namespace sim::dynamics::detail::flexure {

namespace {

/// The flexure's six rows at frames f, its deformation q = (x, y, θ) and the errors of its three
/// out-of-plane rows (along the axis, two tilts).
void flexureRows(const JointFrames& f, Row rows[6], Vec3& q, Vec3& out_of_plane) {
  const Vec3 d = f.anchor_b - f.anchor_a;
  const Vec3 a0 = f.axes_a.col(0);
  auto linear = [&](const Vec3& e) {
    return Row{-e, -(f.arm_a + d).cross(e), e, f.arm_b.cross(e)};
  };
  auto angular = [](const Vec3& u) { return Row{Vec3::Zero(), -u, Vec3::Zero(), u}; };
  rows[0] = linear(a0);
  rows[1] = angular(f.axes_b.col(1).cross(a0));
  rows[2] = angular(f.axes_b.col(2).cross(a0));
  rows[3] = linear(f.axes_a.col(1));
  rows[4] = linear(f.axes_a.col(2));
  rows[5] = angular(hingeAngleGradient(f));
  q = {d.dot(f.axes_a.col(1)), d.dot(f.axes_a.col(2)), hingeAngle(f)};
  out_of_plane = {d.dot(a0), a0.dot(f.axes_b.col(1)), a0.dot(f.axes_b.col(2))};
}

bool linearRow(int r) {
  return r == 0 || r == 3 || r == 4;
}

}  // namespace

void prepare(StepContext& ctx, int j, const JointFrames& f) {
  JointWork& w = ctx.joints[j];
  FlexureWork& x = w.flexure;
  const FlexureDef& def = ctx.model.joints[static_cast<std::size_t>(j)].flexure;
  const double h = ctx.h;
  Vec3 q, out_of_plane;
  flexureRows(f, x.rows, q, out_of_plane);
  const SolverBody& a = ctx.bodies[w.a];
  const SolverBody& b = ctx.bodies[w.b];
  static constexpr int kAll[6] = {0, 1, 2, 3, 4, 5};
  Mat6 k = gram<6>(x.rows, kAll, a, b);
  x.gamma.setZero();
  x.bias.setZero();
  x.lambda.setZero();  // warmStart() sets it from the stored impulses
  const Vec3 load = flexureWrench(def, q);
  const Mat3 tangent = flexureTangent(def, q);
  if (def.model == FlexureModel::PlanarSpring) {
    Mat3 stiffness = tangent;
    // A softening table can make an own-coordinate slope tiny; a tenth of the slope at rest keeps
    // the rows' compliance finite (the load W(q) itself stays exact).
    const StiffnessCurve* curves[3] = {&def.k_x, &def.k_y, &def.k_z};
    for (int i = 0; i < 3; ++i)
      stiffness(i, i) = std::max(stiffness(i, i), 0.1 * curves[i]->tangent(0.0));
    const Vec3 damping(def.damping_linear, def.damping_linear, def.damping_angular);
    const SoftBlockCoefficients<3> c = softBlockCoefficients<3>(stiffness, damping, load, h);
    x.gamma.bottomRightCorner<3, 3>() = c.gamma;
    x.bias.tail<3>() = c.bias;
  } else {
    const double stiffness = std::max(tangent(2, 2), 0.1 * def.k_z.tangent(0.0));
    const SoftRowCoefficients c = softRowCoefficients(stiffness, def.damping_angular, h);
    x.gamma(5, 5) = c.gamma;
    x.bias[5] = c.bias * (load.z() / stiffness) / h;
  }
  k += x.gamma;
  Eigen::FullPivLU<Mat6> lu(k);
  lu.setThreshold(1e-12);
  x.inv = lu.isInvertible() ? Mat6(lu.inverse()) : Mat6::Zero();
}

void warmStart(StepContext& ctx, int j) {
  JointWork& w = ctx.joints[j];
  FlexureWork& x = w.flexure;
  const JointImpulses& imp = ctx.state.joints[static_cast<std::size_t>(j)].impulses;
  SolverBody& a = ctx.bodies[w.a];
  SolverBody& b = ctx.bodies[w.b];
  for (int r = 0; r < 6; ++r) {
    const bool lin = linearRow(r);
    const Vec3& dir = lin ? x.rows[r].lin_b : x.rows[r].ang_b;
    const double n2 = dir.squaredNorm();
    x.lambda[r] = n2 > 0.0 ? (lin ? imp.linear : imp.angular).dot(dir) / n2 : 0.0;
    x.rows[r].apply(a, b, x.lambda[r]);
  }
}

double solveVelocity(StepContext& ctx, int j) {
  JointWork& w = ctx.joints[j];
  FlexureWork& x = w.flexure;
  SolverBody& a = ctx.bodies[w.a];
  SolverBody& b = ctx.bodies[w.b];
  Vec6 r;
  for (int k = 0; k < 6; ++k) r[k] = x.rows[k].velocity(a, b);
  r += x.bias + x.gamma * x.lambda;
  const Vec6 dl = -(x.inv * r);
  for (int k = 0; k < 6; ++k) x.rows[k].apply(a, b, dl[k]);
  x.lambda += dl;
  return dl.cwiseAbs().maxCoeff();
}

double solvePosition(StepContext& ctx, int j, double beta) {
  const JointWork& w = ctx.joints[j];
  const FlexureDef& def = ctx.model.joints[static_cast<std::size_t>(j)].flexure;
  const SolverBody& a = ctx.bodies[w.a];
  const SolverBody& b = ctx.bodies[w.b];
  Row rows[6];
  Vec3 q, out_of_plane;
  flexureRows(ctx.joints.frames(ctx, j), rows, q, out_of_plane);
  Vec3 dx_a = Vec3::Zero(), dt_a = Vec3::Zero(), dx_b = Vec3::Zero(), dt_b = Vec3::Zero();
  auto accumulate = [&](const Row& r, double l) {
    dx_a += l * r.lin_a;
    dt_a += l * r.ang_a;
    dx_b += l * r.lin_b;
    dt_b += l * r.ang_b;
  };
  double largest = out_of_plane.cwiseAbs().maxCoeff();
  if (def.model == FlexureModel::PlanarSpring) {
    static constexpr int kHard[3] = {0, 1, 2};
    const Mat3 k = gram<3>(rows, kHard, a, b);
    if (!(k.determinant() > 0.0)) return largest;
    const Vec3 p = -beta * k.ldlt().solve(out_of_plane);
    for (int i = 0; i < 3; ++i) accumulate(rows[kHard[i]], p[i]);
  } else {
    static constexpr int kHard[5] = {0, 1, 2, 3, 4};
    const Eigen::Matrix<double, 5, 5> k = gram<5>(rows, kHard, a, b);
    Eigen::Matrix<double, 5, 1> c;
    c << out_of_plane, q.x(), q.y();
    largest = std::max(largest, c.cwiseAbs().maxCoeff());
    const Eigen::LDLT<Eigen::Matrix<double, 5, 5>> ldlt(k);
    if (ldlt.info() != Eigen::Success || !(ldlt.vectorD().minCoeff() > 0.0)) return largest;
    const Eigen::Matrix<double, 5, 1> p = -beta * ldlt.solve(c);
    for (int i = 0; i < 5; ++i) accumulate(rows[kHard[i]], p[i]);
  }
  ctx.bodies.positions[w.a] += a.inv_mass * dx_a;
  ctx.bodies.orientations[w.a] = rotateBy(ctx.bodies.orientations[w.a], a.inv_inertia * dt_a);
  ctx.bodies.positions[w.b] += b.inv_mass * dx_b;
  ctx.bodies.orientations[w.b] = rotateBy(ctx.bodies.orientations[w.b], b.inv_inertia * dt_b);
  return largest;
}

void storeImpulses(StepContext& ctx, int j) {
  const FlexureWork& x = ctx.joints[j].flexure;
  JointImpulses& imp = ctx.state.joints[static_cast<std::size_t>(j)].impulses;
  imp.linear.setZero();
  imp.angular.setZero();
  for (int r = 0; r < 6; ++r) {
    if (linearRow(r))
      imp.linear += x.lambda[r] * x.rows[r].lin_b;
    else
      imp.angular += x.lambda[r] * x.rows[r].ang_b;
  }
}

double speed(const StepContext& ctx, int j) {
  const JointWork& w = ctx.joints[j];
  return w.flexure.rows[5].velocity(ctx.bodies[w.a], ctx.bodies[w.b]);
}

}  // namespace sim::dynamics::detail::flexure
