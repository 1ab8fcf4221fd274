// DC gear motors (SPEC §2.1): a rotor with its characteristic, coupled to the joint it drives.
//
// Characteristic. The passport torque Mp (u - w_m / w_xx) plus the bearing friction moved to the
// rotor through the gear (b / r^2) is a damper c (w_t - w_m) with c = Mp / w_xx + b / r^2 and
// target w_t = Mp u / c. Its impulse over a substep is taken as c h (w_t - w_bar) with
// w_bar = alpha w_end + (1 - alpha) w_start, where
//   alpha = 1 / (1 - exp(-x)) - 1 / x,  x = c h / I,
// and I the inertia the rotor sees through its block's equality rows (rotor plus reflected loads:
// the block's constrained mobility). For that inertial load this reproduces the exponential
// solution of eq. 8 exactly; at any steady speed (w_end = w_start: stall, or a steady load such as
// a contact) it gives exactly c (w_t - w), the passport torque. alpha runs from 1/2 (x -> 0: the
// rotor cannot move the load) to 1 (backward Euler): an A-stable theta method. As a soft row on
// w_end: softness gamma = c h alpha, target (w_t - (1 - alpha) w_start) / alpha.
//
// Seed 000 drive unit (SPEC §3). The armature circuit L di/dt = U u - R i - k_E w_m by backward
// Euler with the rotor speed at the substep's end: i' = (L i + h (U u - k_E w')) / (L + h R). The
// torque k_M i' = A - B w' is then a damper B toward A / B on the rotor, solved with the rest of
// the block (alpha = 1: the circuit already is a backward-Euler step), so current and speed are
// implicit together (no algebraic loop); the current follows after the substep from the speed
// reached.
//
// Coupling. Rigid: the row Cdot = qdot - w_m / r = 0 (the joint's axis row and the rotor), and a
// position pass moving q - a_m / r back to 0 through the joint's response with the rotor
// (joint_response.cpp). With a drive, the transmission instead: twist theta = a_m / r - q (output
// side), M1 = c b(theta) + K_V1 b'(theta) dtheta/dt. Without backlash one bilateral soft row
// (stiffness c, damping K_V1: the implicit-Euler spring-damper of soft_row.h, stable at any
// stiffness). With backlash theta_bn > 0 two one-sided soft rows, one per flank: flank s pushes
// only (its impulse s M1 h >= 0) and only once s theta exceeds theta_bn; while the flank is open it
// is speculative (it may close by its gap in one substep, no more), so the gap's lost motion 2
// theta_bn is kept exactly. All rows store M1 h in the motor's (or repeater's) coupling impulse.
// The twist is physical: no position pass removes it.
#include "motors.h"

#include <algorithm>
#include <cmath>

#include "joints.h"
#include "motor_block.h"
#include "soft_row.h"

namespace sim::dynamics::detail::motor {

namespace {

// alpha of the characteristic (above), with x = c h / I.
double characteristicAlpha(double x) {
  if (!std::isfinite(x) || x > 700.0) return 1.0;
  if (x < 1e-4) return 0.5 + x / 12.0;  // series: cancellation-free near 0
  return 1.0 / (-std::expm1(-x)) - 1.0 / x;
}

}  // namespace

void compile(const Model& model, Joints& joints, Motors& motors, Rotors& rotors) {
  const std::size_t nm = model.motors.size();
  motors.motor.assign(nm, MotorWork{});
  rotors.angle.assign(nm, 0.0);
  rotors.speed.assign(nm, 0.0);
  rotors.inv_inertia.assign(nm, 0.0);
  for (std::size_t i = 0; i < nm; ++i) {
    const MotorDef& md = model.motors[i];
    joints.motor[static_cast<std::size_t>(md.joint)] = static_cast<int>(i);
    if (md.drive) motors.motor[i].drive = &*md.drive;
    rotors.inv_inertia[i] = 1.0 / md.rotorInertia();
  }
}

double mobilityOnJoint(const Model& model, const Joints& joints, int j) {
  double mobility = 0.0;
  if (const int m = joints.motor[static_cast<std::size_t>(j)]; m >= 0) {
    const MotorDef& md = model.motors[static_cast<std::size_t>(m)];
    mobility = 1.0 / (md.gear_ratio * md.gear_ratio * md.rotorInertia());
  }
  for (const RepeaterDef& rd : model.repeaters) {
    if (rd.joint != j) continue;
    const MotorDef& md = model.motors[static_cast<std::size_t>(rd.motor)];
    mobility = rd.ratio * rd.ratio / (md.gear_ratio * md.gear_ratio * md.rotorInertia());
  }
  return mobility;
}

double appliedVoltage(const MotorDef& def, double commanded, double rotor_speed) {
  double u = std::clamp(commanded, -1.0, 1.0);
  if (def.max_speed < kNoLimit) {
    // At u the unloaded rotor runs at u w_xx, the joint at u w_xx / r.
    const double most = def.max_speed * def.gear_ratio / def.no_load_speed_radps;
    u = std::clamp(u, -most, most);
  }
  if (def.max_torque < kNoLimit) {
    // r Mp |u - w / w_xx| <= max_torque at the substep's starting speed w; then the rails.
    const double back = rotor_speed / def.no_load_speed_radps;
    const double reach = def.max_torque / (def.gear_ratio * def.stall_torque_Nm);
    u = std::clamp(std::clamp(u, back - reach, back + reach), -1.0, 1.0);
  }
  return u;
}

void prepare(StepContext& ctx) {
  const double h = ctx.h;
  for (std::size_t m = 0; m < ctx.motors.motor.size(); ++m) {
    const MotorDef& def = ctx.model.motors[m];
    MotorWork& w = ctx.motors.motor[m];
    const double r = def.gear_ratio;
    const double im = def.rotorInertia();
    w.inv_inertia = 1.0 / im;
    w.joint = def.joint;
    w.coupling_ratio = 1.0 / r;
    const double u = appliedVoltage(def, ctx.state.motors[m].voltage, ctx.rotors.speed[m]);
    w.voltage = u;
    if (w.drive != nullptr) {
      const DriveDef& d = *w.drive;
      const double denom = d.inductance_H + h * d.resistance_ohm;
      const double a =
          d.k_M * (d.inductance_H * ctx.state.motors[m].current_A + h * d.supply_V * u) / denom;
      const double b = d.k_M * d.k_E * h / denom;
      w.damping = b + def.bearing_friction / (r * r);
      w.target_speed = a / w.damping;
    } else {
      const double c_motor = def.stall_torque_Nm / def.no_load_speed_radps;
      const double c = c_motor + def.bearing_friction / (r * r);
      w.target_speed = c_motor * def.no_load_speed_radps * u / c;
      w.damping = c;
    }
  }
}

Characteristic characteristic(const StepContext& ctx, int m, double mobility) {
  const MotorWork& mw = ctx.motors.motor[static_cast<std::size_t>(m)];
  const double ch = mw.damping * ctx.h;
  // A drive's circuit is already a backward-Euler step: alpha = 1.
  const double x = mw.drive != nullptr ? 1e300 : ch * mobility;  // c h / I
  const double alpha = characteristicAlpha(x);
  return {
      ch * alpha,
      (mw.target_speed - (1.0 - alpha) * ctx.rotors.speed[static_cast<std::size_t>(m)]) / alpha};
}

void addCharacteristicRow(StepContext& ctx, RowBlock& block, int m) {
  const int world = ctx.bodies.world;
  BlockRow& ch =
      block.add(ctx.bodies.solver, world, world, Row{}, ImpulseSink::MotorCharacteristic, m);
  ch.rotor = m;
  ch.rotor_coef = 1.0;
  ch.rotor_dw = ctx.motors.motor[static_cast<std::size_t>(m)].inv_inertia;
  ch.target = ctx.motors.motor[static_cast<std::size_t>(m)].target_speed;
}

void addCouplingRows(StepContext& ctx, RowBlock& block, int motor, int repeater) {
  const MotorWork& mw = ctx.motors.motor[static_cast<std::size_t>(motor)];
  const bool follower = repeater >= 0;
  const RepeaterWork* rw =
      follower ? &ctx.motors.repeater[static_cast<std::size_t>(repeater)] : nullptr;
  const int joint = follower ? rw->joint : mw.joint;
  const JointWork& w = ctx.joints[joint];
  const AxisRow& ax = w.axis;
  const double ratio = follower ? rw->ratio : mw.coupling_ratio;
  const int owner = follower ? repeater : motor;
  if (mw.drive == nullptr) {
    BlockRow& c = block.add(ctx.bodies.solver, w.a, w.b, Row{-ax.lin, ax.ang_a, ax.lin, ax.ang_b},
                            follower ? ImpulseSink::Repeater : ImpulseSink::MotorCoupling, owner);
    c.rotor = motor;
    c.rotor_coef = -ratio;
    c.rotor_dw = -ratio * mw.inv_inertia;
    return;
  }
  const DriveDef& d = *mw.drive;
  const double h = ctx.h;
  const double impulse =
      follower ? ctx.state.repeaters[static_cast<std::size_t>(repeater)].coupling_impulse
               : ctx.state.motors[static_cast<std::size_t>(motor)].coupling_impulse;
  // Row error C = q - a_m / r (- offset) = -theta: its velocity is the row's Cdot (axis - ratio *
  // rotor).
  const double error = w.position - ratio * ctx.rotors.angle[static_cast<std::size_t>(motor)] -
                       (follower ? rw->offset : 0.0);
  const SoftRowCoefficients soft = softRowCoefficients(d.stiffness, d.damping, h);
  auto add = [&](double sign, ImpulseSink sink) -> BlockRow& {
    BlockRow& r = block.add(ctx.bodies.solver, w.a, w.b,
                            Row{-sign * ax.lin, sign * ax.ang_a, sign * ax.lin, sign * ax.ang_b},
                            sink, owner);
    r.rotor = motor;
    r.rotor_coef = -sign * ratio;
    r.rotor_dw = -sign * ratio * mw.inv_inertia;
    r.compliance = soft.gamma;
    r.sign = sign;
    return r;
  };
  if (d.backlash == 0.0) {
    add(1.0, follower ? ImpulseSink::Repeater : ImpulseSink::MotorCoupling).target =
        -soft.bias / h * error;
    return;
  }
  for (const double sign : {1.0, -1.0}) {
    // Flank `sign` holds sign * C >= -theta_bn: its row position is sign * C + theta_bn (>= 0
    // open).
    const double opening = sign * error + d.backlash;
    BlockRow& r = add(sign, follower ? ImpulseSink::RepeaterBacklash : ImpulseSink::MotorBacklash);
    r.bounded = true;
    r.target = opening > 0.0 ? -opening / h : -soft.bias / h * opening;
    r.active = sign * impulse > 0.0;
  }
}

void warmStart(StepContext& ctx, int m) {
  const MotorWork& w = ctx.motors.motor[static_cast<std::size_t>(m)];
  const MotorState& ms = ctx.state.motors[static_cast<std::size_t>(m)];
  double& speed = ctx.rotors.speed[static_cast<std::size_t>(m)];
  speed += ms.characteristic_impulse * w.inv_inertia;
  const JointWork& jw = ctx.joints[w.joint];
  jw.axis.apply(ctx.bodies[jw.a], ctx.bodies[jw.b], ms.coupling_impulse);
  speed -= w.coupling_ratio * ms.coupling_impulse * w.inv_inertia;
}

double solvePosition(StepContext& ctx, int m, double beta) {
  const MotorWork& mw = ctx.motors.motor[static_cast<std::size_t>(m)];
  if (mw.drive != nullptr) return 0.0;  // an elastic transmission: its twist is physical
  double& angle = ctx.rotors.angle[static_cast<std::size_t>(m)];
  const JointWork& w = ctx.joints[mw.joint];
  const double c = ctx.joints.unwrapped(ctx, mw.joint, w.position) - mw.coupling_ratio * angle;
  // A coupling within a thousandth of the position tolerance holds (in rotor coordinates it is
  // exact to rounding): its correction would move nothing, and skipping it spares the response.
  if (std::abs(c) <= 1e-3 * ctx.model.solver.position_tolerance_m) return std::abs(c);
  joint_axis::undefer(ctx, mw.joint);
  const double lambda = joint_axis::move(ctx, mw.joint, w.response.coupling, -beta * c);
  angle -= mw.coupling_ratio * lambda * mw.inv_inertia;
  return std::abs(c);
}

void storeSubstep(StepContext& ctx) {
  for (std::size_t m = 0; m < ctx.motors.motor.size(); ++m) {
    if (ctx.motors.motor[m].drive == nullptr) continue;
    const DriveDef& d = *ctx.motors.motor[m].drive;
    MotorState& ms = ctx.state.motors[m];
    const double u = ctx.motors.motor[m].voltage;
    ms.current_A =
        (d.inductance_H * ms.current_A + ctx.h * (d.supply_V * u - d.k_E * ctx.rotors.speed[m])) /
        (d.inductance_H + ctx.h * d.resistance_ohm);
  }
}

void store(StepContext& ctx) {
  for (std::size_t m = 0; m < ctx.motors.motor.size(); ++m) {
    const MotorDef& def = ctx.model.motors[m];
    MotorState& ms = ctx.state.motors[m];
    ms.angle_rad = ctx.rotors.angle[m];
    ms.speed_radps = ctx.rotors.speed[m];
    const double u = ctx.motors.motor[m].voltage;
    ms.torque_Nm = def.drive ? def.drive->k_M * ms.current_A
                             : def.stall_torque_Nm * (u - ms.speed_radps / def.no_load_speed_radps);
  }
}

}  // namespace sim::dynamics::detail::motor
