// The operator's pult and the functional scheme (SPEC §1): named controls -> a block diagram ->
// motor voltages u. Definitions (PultDef, SchemeDef) are compiled by the scene loader with every
// name resolved to an index and the blocks sorted in dependency order; what changes while running
// (PultState, SchemeState) is plain data, so a session can be saved, restored and compared.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sim::dynamics {
struct Model;
}

namespace sim::engine {

enum class ControlKind { Axis, Button, Toggle, Switch };

/// One named control of the pult.
struct ControlDef {
  std::string name;
  ControlKind kind = ControlKind::Axis;
  double min = -1.0, max = 1.0;  ///< Axis range.
  double initial = 0.0;          ///< Value at start, and neutral when its device is lost.
  int positions = 2;             ///< Switch: positions 0 .. positions - 1.

  /// What the control can show for a raw value: an axis clamps to [min, max], a button or toggle
  /// is 0 or 1 (pressed at >= 0.5), a switch rounds to its nearest position. NaN gives `initial`.
  double admit(double value) const;
};

struct PultDef {
  std::vector<ControlDef> controls;
  int find(const std::string& name) const;  ///< Index, or -1.
};

/// The pult for one frame: one value per control, the only input to the scheme.
struct PultState {
  std::vector<double> values;
};

PultState initialPult(const PultDef& pult);

/// A value measured on the dynamics, readable by scheme blocks and scenario expectations.
enum class SensorKind {
  Time,           ///< s
  BodyPosition,   ///< m, component `axis` of the centre of mass
  BodyVelocity,   ///< m/s, component `axis`
  BodySpeed,      ///< m/s, magnitude
  BodyAngle,      ///< rad: axis 0, 1, 2 = roll, pitch, yaw (z-y'-x'' Euler angles), 3 = tilt
  JointPosition,  ///< rad or m (unwrapped)
  JointSpeed,     ///< rad/s or m/s
  MotorSpeed,     ///< rotor rad/s
  MotorAngle,     ///< rotor rad
  MotorVoltage,   ///< u in [-1, 1]
  MotorTorque,    ///< rotor N m of the characteristic
  ContactForce,   ///< N, total normal force on `index` from `other` (or from anything: -1)
};

struct SensorDef {
  SensorKind kind = SensorKind::Time;
  int index = 0;   ///< Body, joint or motor.
  int axis = 0;    ///< 0, 1, 2 = x, y, z.
  int other = -1;  ///< ContactForce: the other body, or -1 for all contacts.
  bool operator==(const SensorDef&) const = default;
};

/// Where a block input comes from.
struct SignalRef {
  enum class Source { Constant, Pult, Block, Sensor };
  Source source = Source::Constant;
  int index = 0;          ///< Control, block or sensor index.
  double constant = 0.0;  ///< Source::Constant.
  std::string text;       ///< As written in the file (for messages).
};

enum class BlockType {
  Constant,
  Gain,
  Sum,
  Product,
  Saturation,
  DeadZone,
  RateLimiter,
  Integrator,
  Delay,
  Pid,
  Lag,
  Lookup,
  Comparator,
  Switch,
  Selector,
  Latch,
  Timer,
  Abs,
  Sqrt,
  Min,
  Max,
  Norm,
  Deadband
};

/// One block. Inputs and parameters by type (docs/scenes.md, `scheme`):
/// constant: value | gain: in[0] * k | sum: sum of weights[i] in[i] | product: prod in[i] |
/// saturation: clamp(in[0], lo, hi) | dead_zone: 0 inside +-width, else shifted toward 0, and
/// scaled back to full range when `rescale` | rate_limiter: follows in[0] at most `rate` per s |
/// integrator: k * integral of in[0], clamped to [lo, hi], in[1] (optional) resets to `initial`;
/// its output is the state before this evaluation's update (breaks algebraic loops) |
/// delay: in[0] of the previous evaluation | pid: in[0] setpoint, in[1] measurement; kp, ki, kd,
/// output clamped to [lo, hi] with conditional integration (anti-windup) | lag: first order,
/// time constant `tau` | lookup: piecewise linear in `table`, clamped at the ends |
/// comparator: 1 when in[0] > in[1] + hysteresis/2, 0 when below in[1] - hysteresis/2, else held |
/// switch: in[0] > 0.5 ? in[1] : in[2] | selector: in[1 + round(in[0])] clamped to the choices |
/// latch: toggles on each rising edge of in[0] (a button); in[1] (optional) resets to `initial` |
/// timer: seconds in[0] has been > 0.5, 0 otherwise | abs: |in[0]| | sqrt: sqrt(in[0]), 0 for a
/// negative input | min, max: of in[i] | norm: sqrt(sum in[i]^2) | deadband: 0 while |in[0]| <=
/// width, else in[0] unchanged (unlike dead_zone, any range and no shift).
struct BlockDef {
  std::string name;
  BlockType type = BlockType::Gain;
  int line = 0;  ///< In the scene file, for messages.
  std::vector<SignalRef> inputs;
  std::vector<double> weights;  ///< Sum.
  double k = 1.0, lo = -1e300, hi = 1e300, value = 0.0, width = 0.0, rate = 0.0, initial = 0.0;
  double kp = 0.0, ki = 0.0, kd = 0.0, tau = 0.0, hysteresis = 0.0;
  bool rescale = false;
  std::vector<double> table_x, table_y;  ///< Lookup, x strictly increasing.
};

/// A motor voltage taken from a signal (clamped to [-1, 1] by the dynamics).
struct SchemeOutput {
  int motor = 0;
  SignalRef signal;
};

struct SchemeDef {
  bool per_frame = false;        ///< Evaluate once per frame instead of before every step.
  std::vector<BlockDef> blocks;  ///< In evaluation (dependency) order.
  std::vector<SchemeOutput> outputs;
  std::vector<SensorDef> sensors;            ///< Distinct sensors the blocks and outputs read.
  int find(const std::string& block) const;  ///< Index, or -1.
  bool empty() const { return blocks.empty() && outputs.empty(); }
};

/// Everything a scheme remembers between evaluations, plus its last outputs.
struct SchemeState {
  std::vector<double> outputs;  ///< Per block, from the last evaluation.
  std::vector<double> memory;   ///< Two values per block (integral, previous input, ...).
  bool operator==(const SchemeState&) const = default;
};

SchemeState initialSchemeState(const SchemeDef& scheme);

/// Integrators and delays output what they remembered from the previous evaluation, so they may
/// close feedback loops; every other block passes its inputs through within one evaluation.
bool outputsFromMemory(BlockType type);

/// Resolves a signal as written in a scene or scenario: a number, `time`, `pult.<control>`,
/// `body.<name>.<x|y|z|vx|vy|vz|speed|roll|pitch|yaw|tilt>`, `joint.<name>.<position|angle|speed>`,
/// `motor.<name>.<speed|angle|voltage|torque>`, `contact.<body>[.<other>].force`, or a block of
/// `scheme`. Sensors are added to `sensors` (once each). On failure returns nullopt and says why
/// in `error`.
std::optional<SignalRef> resolveSignal(const std::string& text, const dynamics::Model& model,
                                       const PultDef& pult, const SchemeDef& scheme,
                                       std::vector<SensorDef>& sensors, std::string& error);

/// One evaluation over `dt_s` seconds since the last one. `sensors` holds the values of
/// scheme.sensors, in order.
void evaluateScheme(const SchemeDef& scheme, SchemeState& state, const PultState& pult,
                    const std::vector<double>& sensors, double dt_s);

/// Value of a signal after evaluateScheme.
double signalValue(const SignalRef& ref, const SchemeState& state, const PultState& pult,
                   const std::vector<double>& sensors);

}  // namespace sim::engine
