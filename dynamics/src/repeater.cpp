// Repeaters (SPEC §2.3): joint coordinate = (k / r) * motor angle + offset, so one motor drives
// several joints (a gripper's jaws: k = -1), and their loads are felt by the motor.
//
// Row: Cdot = qdot - (k / r) w_m = 0 on the joint's axis row and the motor's rotor, a row of the
// motor's block (motor_block.cpp). With a seed 000 drive on the motor the repeater gets a
// transmission and output friction of its own with the drive's parameters (motor.cpp,
// joint_friction.cpp). The offset is whatever the initial poses give: a repeater holds the
// relation it starts in. Position pass: q - (k / r) a_m - offset moved back to 0 through the
// joint's response with the rotor, as a motor's coupling.
#include "motors.h"

#include <cmath>

#include "joints.h"

namespace sim::dynamics::detail::repeater {

void compile(const Model& model, const State& initial, Motors& motors) {
  motors.repeater.assign(model.repeaters.size(), RepeaterWork{});
  for (std::size_t i = 0; i < model.repeaters.size(); ++i) {
    const RepeaterDef& r = model.repeaters[i];
    RepeaterWork& w = motors.repeater[i];
    w.joint = r.joint;
    w.motor = r.motor;
    w.ratio = r.ratio / model.motors[static_cast<std::size_t>(r.motor)].gear_ratio;
    w.offset = initial.joints[static_cast<std::size_t>(r.joint)].position -
               w.ratio * initial.motors[static_cast<std::size_t>(r.motor)].angle_rad;
  }
}

void warmStart(StepContext& ctx, int i) {
  const RepeaterWork& w = ctx.motors.repeater[static_cast<std::size_t>(i)];
  const double p = ctx.state.repeaters[static_cast<std::size_t>(i)].coupling_impulse;
  const JointWork& jw = ctx.joints[w.joint];
  jw.axis.apply(ctx.bodies[jw.a], ctx.bodies[jw.b], p);
  ctx.rotors.speed[static_cast<std::size_t>(w.motor)] -=
      w.ratio * p * ctx.motors.motor[static_cast<std::size_t>(w.motor)].inv_inertia;
}

double solvePosition(StepContext& ctx, int i, double beta) {
  const RepeaterWork& rw = ctx.motors.repeater[static_cast<std::size_t>(i)];
  const MotorWork& mw = ctx.motors.motor[static_cast<std::size_t>(rw.motor)];
  if (mw.drive != nullptr) return 0.0;  // an elastic transmission: its twist is physical
  double& angle = ctx.rotors.angle[static_cast<std::size_t>(rw.motor)];
  const JointWork& w = ctx.joints[rw.joint];
  const double c = ctx.joints.unwrapped(ctx, rw.joint, w.position) - rw.ratio * angle - rw.offset;
  if (std::abs(c) <= 1e-3 * ctx.model.solver.position_tolerance_m) return std::abs(c);
  joint_axis::undefer(ctx, rw.joint);
  const double lambda = joint_axis::move(ctx, rw.joint, w.response.coupling, -beta * c);
  angle -= rw.ratio * lambda * mw.inv_inertia;
  return std::abs(c);
}

}  // namespace sim::dynamics::detail::repeater
