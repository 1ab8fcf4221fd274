// Internal header, not API: the motors and repeaters as the solver sees them, and their verbs.
//
// A motor (SPEC §2.1) is a rotor, one freedom, with two rows: its characteristic, a soft row on
// the rotor's speed (motor.cpp), and its coupling to its joint, q - a_m / r = 0, rigid or, with a
// seed 000 drive unit, an elastic transmission with backlash. A repeater (SPEC §2.3) couples
// another joint to the same rotor, q - (k / r) a_m = offset (repeater.cpp). Their rows are solved
// in the motor blocks (motor_block.h) with the joints they drive.
#pragma once

#include <dynamics/model.h>

#include <limits>
#include <vector>

#include "step_context.h"

namespace sim::dynamics::detail {

struct Joints;
struct RowBlock;

struct MotorWork {
  double inv_inertia = 0.0;     ///< 1 / I_m
  double gamma = 0.0;           ///< Characteristic row softness (N m s per rad/s).
  double target_speed = 0.0;    ///< rad/s
  double damping = 0.0;         ///< c = Mp / w_xx + b / r^2 (N m s/rad at the rotor)
  double coupling_ratio = 0.0;  ///< 1 / r
  double voltage = 0.0;         ///< u the characteristic gets: clamped to [-1, 1] and the limits
  int joint = 0;
  const DriveDef* drive = nullptr;  ///< Seed 000 drive unit, or none (rigid gear coupling).
};

struct RepeaterWork {
  int joint = 0, motor = 0;
  double ratio = 0.0;   ///< k / r
  double offset = 0.0;  ///< Joint coordinate minus (k / r) a_m in the initial state.
};

struct Motors {
  std::vector<MotorWork> motor;
  std::vector<RepeaterWork> repeater;
};

namespace motor {
void compile(const Model& model, Joints& joints, Motors& motors, Rotors& rotors);
/// ratio^2 / I_m of the rotor driving joint j (through its motor or a repeater), 0 if none.
double mobilityOnJoint(const Model& model, const Joints& joints, int j);
/// The voltage the characteristic gets (MotorWork::voltage): the command clamped to [-1, 1] and
/// to the drive's limits (MotorDef::max_speed, max_torque) at the rotor's speed w (rad/s).
double appliedVoltage(const MotorDef& def, double commanded, double rotor_speed);
inline constexpr double kNoLimit = std::numeric_limits<double>::infinity();
void prepare(StepContext& ctx);
/// The characteristic as a soft row for a rotor that sees `mobility` (1 / its constrained
/// inertia): its softness gamma and target speed.
struct Characteristic {
  double gamma = 0.0;
  double target = 0.0;
};
Characteristic characteristic(const StepContext& ctx, int m, double mobility);
void addCharacteristicRow(StepContext& ctx, RowBlock& block, int m);
/// The coupling of motor m to its joint, or of repeater `repeater` (>= 0) to its joint: rigid, or
/// the drive's transmission.
void addCouplingRows(StepContext& ctx, RowBlock& block, int m, int repeater);
void warmStart(StepContext& ctx, int m);
double solvePosition(StepContext& ctx, int m, double beta);
/// After a substep: drive currents from the new rotor speeds.
void storeSubstep(StepContext& ctx);
/// After the step: rotor angles, speeds and torques.
void store(StepContext& ctx);
}  // namespace motor

namespace repeater {
void compile(const Model& model, const State& initial, Motors& motors);
void warmStart(StepContext& ctx, int i);
double solvePosition(StepContext& ctx, int i, double beta);
}  // namespace repeater

}  // namespace sim::dynamics::detail
