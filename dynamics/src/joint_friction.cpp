// Friction along a hinge's or slider's coordinate (SPEC §3-§4): a Coulomb row and a viscous row,
// acting through the joint's axis response (joint_response.cpp).
//
// Coulomb row: the impulse is bounded by (coefficient |reaction| + level) h, the load-dependent
// part from the joint's point-row impulse, `level` load-independent and fixed for the substep.
// Below the bound the row holds the joint (stiction). The level is
//  - `breakaway`, or with a Stribeck curve (seed 000 Table 1) g(|v|) from breakaway at rest to
//    coulomb, at the substep's starting speed: explicit in v, so the row stays a plain bounded row
//    (the lag is one substep), and the curve is friction::stribeckMagnitude, the one definition;
//  - LuGre (seed 003): |sigma0 z + sigma1 dz/dt| at the starting speed, so the joint sticks while
//    its load stays below it; z is advanced exactly at that speed after the substep (dz/dt is
//    linear in z), and the stick/slip flag switches at the zero-speed window;
//  - plus a power-off brake's torque while the motor is unpowered (MotorDef::brake_torque);
//  - plus a seed 000 drive's output friction, (|M1| K_ML + 1) M_f(|Omega|) with M1 from the last
//    substep's transmission impulse (no algebraic loop). With eq. 22 (modified LuGre), sigma0,
//    sigma1 and the rate rho = sigma0 |Omega| / g at the starting speed make z over the substep
//    exact for a constant end speed Omega': z' = E z + phi Omega', E = exp(-rho h),
//    phi = (1 - E) / rho, so M_f = sigma0 z' + sigma1 (Omega' - rho z') = A + D Omega' is a damper
//    D toward -A / D, solved implicitly as the viscous row.
// Viscous row: a soft row, impulse = -c h (speed - target) (backward Euler), c the joint's
// viscous coefficient plus a drive's K_V2 and eq. 22 damping.
// Where: a joint outside motor blocks solves both as scalar rows through its axis response
// (joint_response.cpp). A driven joint's Coulomb row is a bounded row of its motor block
// (addBlockRow, motor_block.cpp), solved with the rotor the joint is geared to: as a scalar row
// with the links' inertia it fought the block, which hands the motion back through the rotor,
// converging at J r^2 / (I + J r^2) per sweep (0.997 on the MF-4's arm; a braked boom sagged).
// Its viscous row stays a scalar row.
#include "joints.h"
#include "motor_block.h"
#include "motors.h"

#include <dynamics/friction.h>

#include <algorithm>
#include <cmath>

namespace sim::dynamics::detail::joint_friction {

namespace {

friction::StribeckCurve curveOf(JointFrictionCurve c) {
  switch (c) {
    case JointFrictionCurve::Lorentz: return friction::StribeckCurve::Lorentz;
    case JointFrictionCurve::Tustin: return friction::StribeckCurve::Tustin;
    case JointFrictionCurve::Gaussian: return friction::StribeckCurve::Gaussian;
    case JointFrictionCurve::Generalised:
    case JointFrictionCurve::Constant: break;
  }
  return friction::StribeckCurve::Generalised;
}

/// A Stribeck curve (from `breakaway` at rest to `coulomb`, over `stribeck_speed`) from the
/// fields of a joint's friction (JointFriction) or of a seed 000 drive's output (DriveDef).
template <class Curve>
friction::StribeckParams stribeckOf(const Curve& f) {
  friction::StribeckParams sp;
  sp.coulomb = f.coulomb;
  sp.breakaway = f.breakaway;
  sp.stribeck_speed = f.stribeck_speed;
  sp.exponent = f.exponent;
  return sp;
}

/// Seed 003 Gaussian curve g(v) of a LuGre joint.
double lugreCurve(const JointFriction& f, double v) {
  return friction::stribeckMagnitude(friction::StribeckCurve::Gaussian, stribeckOf(f), std::abs(v));
}

// A drive's output friction on joint j (see the top of this file).
void addDriveFriction(StepContext& ctx, int j) {
  FrictionWork& w = ctx.joints[j].friction;
  const DriveDef& d = *w.drive;
  const double h = ctx.h;
  const double impulse =
      w.drive_repeater >= 0
          ? ctx.state.repeaters[static_cast<std::size_t>(w.drive_repeater)].coupling_impulse
          : ctx.state.motors[static_cast<std::size_t>(w.drive_motor)].coupling_impulse;
  const double load = std::abs(impulse) / h * d.K_ML + 1.0;
  const double speed = std::abs(w.start_speed);
  const double g =
      friction::stribeckMagnitude(friction::StribeckCurve::Generalised, stribeckOf(d), speed);
  double damping = ctx.model.joints[static_cast<std::size_t>(j)].friction.viscous + d.viscous;
  double force_at_rest = 0.0;  // the damper's force at Omega' = 0 (N m)
  if (d.friction == DriveFriction::Static) {
    w.level += load * g;
  } else {
    double sigma0 = d.sigma0;
    double sigma1 = d.sigma1;
    if (speed > 0.0) {
      if (d.t_min_s > 0.0) sigma0 = std::min(sigma0, g / (speed * d.t_min_s));
      sigma1 = std::min(sigma1, 4.0 * sigma0 * g / speed);
    }
    const double rate = sigma0 * speed / g;
    const double x = rate * h;
    w.lugre_decay = std::exp(-x);
    w.lugre_gain = x > 1e-9 ? -std::expm1(-x) / rate : h;
    const double z = ctx.state.joints[static_cast<std::size_t>(j)].friction_z;
    force_at_rest = load * (sigma0 - sigma1 * rate) * w.lugre_decay * z;
    damping += load * (sigma0 * w.lugre_gain + sigma1 * w.lugre_decay);
  }
  w.viscous_gamma = damping * h;
  w.viscous_target = damping > 0.0 ? -force_at_rest / damping : 0.0;
}

}  // namespace

void compile(const Model& model, Joints& joints) {
  for (std::size_t j = 0; j < model.joints.size(); ++j) {
    const JointFriction& f = model.joints[j].friction;
    joints.work[j].friction.coulomb =
        f.coefficient > 0.0 || f.breakaway > 0.0 || f.model == JointFrictionModel::LuGre;
  }
  for (std::size_t i = 0; i < model.motors.size(); ++i) {
    const MotorDef& md = model.motors[i];
    FrictionWork& f = joints.work[static_cast<std::size_t>(md.joint)].friction;
    if (md.drive) {
      f.coulomb = true;  // the drive's output friction
      f.drive = &*md.drive;
      f.drive_motor = static_cast<int>(i);
    }
    if (md.brake_torque > 0.0) f.coulomb = true;  // the holding brake
  }
  for (std::size_t i = 0; i < model.repeaters.size(); ++i) {
    const RepeaterDef& rd = model.repeaters[i];
    if (!model.motors[static_cast<std::size_t>(rd.motor)].drive) continue;
    // A follower gets its own transmission and output friction.
    FrictionWork& f = joints.work[static_cast<std::size_t>(rd.joint)].friction;
    f.coulomb = true;
    f.drive = &*model.motors[static_cast<std::size_t>(rd.motor)].drive;
    f.drive_motor = rd.motor;
    f.drive_repeater = static_cast<int>(i);
  }
}

void prepare(StepContext& ctx, int j) {
  JointWork& jw = ctx.joints[j];
  FrictionWork& w = jw.friction;
  const JointDef& def = ctx.model.joints[static_cast<std::size_t>(j)];
  const SolverBody& a = ctx.bodies[jw.a];
  const SolverBody& b = ctx.bodies[jw.b];
  w.level = def.friction.breakaway;
  if (jw.response.active && def.friction.curve != JointFrictionCurve::Constant) {
    w.level = friction::stribeckMagnitude(curveOf(def.friction.curve), stribeckOf(def.friction),
                                          std::abs(jw.axis.velocity(a, b)));
  }
  w.start_speed = jw.response.active ? jw.axis.velocity(a, b) : 0.0;
  if (def.friction.model == JointFrictionModel::LuGre) {
    const JointFriction& fr = def.friction;
    const double v = w.start_speed;
    const double g = lugreCurve(fr, v);
    const double z = ctx.state.joints[static_cast<std::size_t>(j)].friction_z;
    const double zdot = v - fr.sigma0 * std::abs(v) * z / g;
    w.level = std::abs(fr.sigma0 * z + fr.sigma1 * zdot);
  }
  w.viscous_gamma = def.friction.viscous * ctx.h;
  if (const int m = ctx.joints.motor[j]; m >= 0) {
    const MotorDef& md = ctx.model.motors[static_cast<std::size_t>(m)];
    const MotorState& ms = ctx.state.motors[static_cast<std::size_t>(m)];
    if (md.brake_torque > 0.0 && !ms.brake_released && std::abs(ms.voltage) < md.brake_release_u)
      w.level += md.brake_torque;
  }
  w.viscous_target = 0.0;
  if (w.drive != nullptr) addDriveFriction(ctx, j);
}

double solveVelocity(StepContext& ctx, int j) {
  JointWork& jw = ctx.joints[j];
  const FrictionWork& w = jw.friction;
  const double mass = jw.response.mass;
  if (!(mass > 0.0)) return 0.0;
  JointImpulses& imp = ctx.state.joints[static_cast<std::size_t>(j)].impulses;
  const SolverBody& a = ctx.bodies[jw.a];
  const SolverBody& b = ctx.bodies[jw.b];
  double largest = 0.0;
  if (w.viscous_gamma > 0.0) {
    // Soft row: impulse = -gamma * (final speed - target).
    const double v = jw.axis.velocity(a, b) - w.viscous_target;
    const double dv = (-w.viscous_gamma * v - imp.viscous) / (mass + w.viscous_gamma);
    imp.viscous += joint_axis::push(ctx, j, dv);
    largest = std::abs(dv * mass);
  }
  if (w.coulomb && !ctx.joints.in_block[j]) {
    const JointFriction& fr = ctx.model.joints[static_cast<std::size_t>(j)].friction;
    const double bound = fr.coefficient * imp.linear.norm() + w.level * ctx.h;
    const double v = jw.axis.velocity(a, b);
    const double old = imp.friction;
    const double target = std::clamp(old - v * mass, -bound, bound);
    imp.friction += joint_axis::push(ctx, j, (target - old) / mass);
    largest = std::max(largest, std::abs(target - old));
  }
  return largest;
}

void addBlockRow(StepContext& ctx, RowBlock& block, int j) {
  const JointWork& w = ctx.joints[j];
  if (!w.friction.coulomb) return;
  const AxisRow& ax = w.axis;
  BlockRow& r = block.add(ctx.bodies.solver, w.a, w.b, Row{-ax.lin, ax.ang_a, ax.lin, ax.ang_b},
                          ImpulseSink::JointFriction, j);
  r.bounded = true;
  r.load_coefficient = ctx.model.joints[static_cast<std::size_t>(j)].friction.coefficient;
  r.bound_level = w.friction.level * ctx.h;
  if (r.load_coefficient == 0.0 && r.bound_level == 0.0) {
    // Nothing to bound this substep (a lifted brake; an eq. 22 drive's friction is its viscous
    // row): no row, and no impulse left from a held brake for the warm start to push with.
    block.rows.pop_back();
    ctx.state.joints[static_cast<std::size_t>(j)].impulses.friction = 0.0;
    return;
  }
  refreshBounds(r, ctx.state);
  // The warm start tells whether it slipped (held a bound) or stuck last substep.
  const double held = ctx.state.joints[static_cast<std::size_t>(j)].impulses.friction;
  r.active = held > r.lower && held < r.upper;
  r.at_upper = held > 0.0;
}

void store(StepContext& ctx) {
  for (std::size_t j = 0; j < ctx.joints.work.size(); ++j) {
    const JointFriction& fr = ctx.model.joints[j].friction;
    if (fr.model != JointFrictionModel::LuGre) continue;
    JointState& js = ctx.state.joints[j];
    const JointWork& w = ctx.joints.work[j];
    // z exactly over the substep at the starting speed (dz/dt is linear in z).
    const double v = w.friction.start_speed;
    const double rate = fr.sigma0 * std::abs(v) / lugreCurve(fr, v);
    const double z_inf = rate > 0.0 ? v / rate : 0.0;
    js.friction_z = rate > 0.0 ? z_inf + (js.friction_z - z_inf) * std::exp(-rate * ctx.h)
                               : js.friction_z + v * ctx.h;
    const bool in_window =
        std::abs(w.axis.velocity(ctx.bodies[w.a], ctx.bodies[w.b])) < fr.zero_speed;
    js.slipping = !in_window;
  }
  for (std::size_t j = 0; j < ctx.joints.work.size(); ++j) {
    const JointWork& w = ctx.joints.work[j];
    if (w.friction.drive == nullptr || w.friction.drive->friction != DriveFriction::LuGre) continue;
    // The same affine step the soft row was solved with, at the end speed it reached.
    JointState& js = ctx.state.joints[j];
    js.friction_z = w.friction.lugre_decay * js.friction_z +
                    w.friction.lugre_gain * w.axis.velocity(ctx.bodies[w.a], ctx.bodies[w.b]);
  }
}

}  // namespace sim::dynamics::detail::joint_friction
