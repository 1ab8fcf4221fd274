// A training session: one scene's dynamics driven by its pult through its functional scheme.
// The engine's loops (headless, real-time, scenario playback, replay) all advance a Session one
// fixed step at a time; what a step depends on is the session's state alone (dynamics state, pult
// values and scheme memory), so equal states and equal pult inputs give equal steps.
#pragma once

#include <dynamics/simulator.h>
#include <dynamics/state.h>
#include <engine/scene.h>
#include <engine/scheme.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sim::engine {

/// An injected drive failure (instructor or scenario, docs/network.md). The scheme still computes
/// the motor's voltage as usual (the HUD shows the command); the motor is stepped with the faulted
/// voltage instead, so the fault is in the drive, not in the operator's panel.
/// BrakeReleased lifts the motor's holding brake (MotorDef::brake_torque) whatever the voltage: a
/// brake whose coil or lever is stuck open, so an unpowered joint is no longer held.
struct MotorFault {
  enum class Kind { None, Stuck, Weak, Reversed, BrakeReleased };
  Kind kind = Kind::None;
  /// Stuck: the voltage the drive holds whatever it is commanded (a welded contactor);
  /// Weak: the factor on the commanded voltage (0..1). Unused otherwise.
  double value = 0.0;
  bool operator==(const MotorFault&) const = default;
  /// The voltage the motor gets for a commanded `u`.
  double apply(double u) const {
    switch (kind) {
      case Kind::Stuck: return value;
      case Kind::Weak: return value * u;
      case Kind::Reversed: return -u;
      case Kind::BrakeReleased:
      case Kind::None: break;
    }
    return u;
  }
};

/// An injected sensor failure on a signal the scheme reads (instructor or scenario,
/// docs/network.md). The scheme sees the faulted value; the dynamics, the HUD and scenario
/// expectations keep measuring the true one.
struct SensorFault {
  enum class Kind { None, Noise, Dropout };
  Kind kind = Kind::None;
  /// Noise: the standard deviation of the Gaussian added at each evaluation (the signal's unit);
  /// Dropout: the value held, filled in by Session::setSensorFault (the last value the scheme saw).
  double value = 0.0;
  bool operator==(const SensorFault&) const = default;
};

/// An injected pult failure (instructor or scenario, docs/network.md): a stuck joystick axis or
/// switch. The control shows `value` whatever the operator, a station or the timeline sets, so
/// the scheme, the HUD and the recording's pult lines all see the stuck value.
struct ControlFault {
  enum class Kind { None, AxisStuck };
  Kind kind = Kind::None;
  double value = 0.0;  ///< AxisStuck: the value held (admitted by the control's ControlDef).
  bool operator==(const ControlFault&) const = default;
};

/// Index into scene.scheme.sensors of a signal as written (`joint.arm.position`), or -1 with the
/// reason in `error` (not a sensor, or one the scheme does not read).
int schemeSensorIndex(const Scene& scene, const std::string& signal, std::string& error);

/// Why a session of `a` cannot go on with `b`, or an empty string when it can: `b` must have the
/// same state layout (bodies, their shapes and static flags; joints and their types and bodies;
/// motors, their joints and drive units; repeaters), the same time step and steps per frame, and
/// the same pult controls and scheme sizes (blocks, outputs, sensors).
std::string sameStructure(const Scene& a, const Scene& b);

/// Everything that changes while a session runs.
struct SessionState {
  dynamics::State dynamics;
  PultState pult;
  SchemeState scheme;
  std::uint64_t scheme_evaluations = 0;
  /// Generator of sensor noise (splitmix64), seeded from the scene's hash: a replay draws the same
  /// numbers. Not hashed (it only moves while noise is on, and the noise shows in the scheme).
  std::uint64_t noise_rng = 0;
  bool operator==(const SessionState&) const = default;
};

class Session {
 public:
  /// Compiles the scene's model; throws dynamics::ModelInvalid like Simulator.
  explicit Session(Scene scene);

  const Scene& scene() const { return scene_; }
  const dynamics::Simulator& simulator() const { return simulator_; }
  /// Threads each step may use, the caller's included (>= 1; default 1; kept by changeScene).
  /// Every count gives the same steps bit for bit (dynamics::Simulator::setThreads).
  void setThreads(int threads) { simulator_.setThreads(threads); }
  int threads() const { return simulator_.threads(); }
  const SessionState& state() const { return state_; }
  const dynamics::State& dynamics() const { return state_.dynamics; }
  double time() const { return state_.dynamics.time_s; }
  std::uint64_t stepIndex() const { return state_.dynamics.step; }

  /// Sets a pult control (admitted by its ControlDef: clamped or snapped); ignored while the
  /// control is stuck (setControlFault).
  void setControl(int control, double value);
  /// Returns every control that is not stuck to its initial value (a lost device).
  void neutralPult();

  /// Injects (or, with Kind::None, clears) a fault of a pult control. AxisStuck sets the control
  /// to the fault's value (admitted) at once and holds it there until cleared; clearing leaves
  /// the value where it is until the control is set again.
  void setControlFault(int control, ControlFault fault);
  /// One per pult control, Kind::None when healthy.
  const std::vector<ControlFault>& controlFaults() const { return control_faults_; }

  /// Injects (or, with Kind::None, clears) a fault of a motor (index into the model's motors).
  void setMotorFault(int motor, const MotorFault& fault);
  /// One per motor, Kind::None when healthy.
  const std::vector<MotorFault>& motorFaults() const { return motor_faults_; }

  int schemeSensor(const std::string& signal, std::string& error) const {
    return schemeSensorIndex(scene_, signal, error);
  }
  /// Injects (or, with Kind::None, clears) a fault of a scheme sensor. Dropout holds the value the
  /// scheme saw last (the current reading before the first evaluation).
  void setSensorFault(int sensor, SensorFault fault);
  /// One per scheme sensor, Kind::None when healthy.
  const std::vector<SensorFault>& sensorFaults() const { return sensor_faults_; }
  /// Puts back faults as they were (a replay's saved point): every motor's and sensor's, a
  /// dropout with the value it holds (not re-read). Sizes must match the scene's.
  void restoreFaults(const std::vector<MotorFault>& motors,
                     const std::vector<SensorFault>& sensors);
  /// As above with the pult's faults too; the stuck values are already in the restored pult.
  void restoreFaults(const std::vector<MotorFault>& motors, const std::vector<SensorFault>& sensors,
                     const std::vector<ControlFault>& controls);

  /// One fixed step: the scheme (when due: every step, or at the first step of each frame) turns
  /// the pult into voltages, then the dynamics advances time_step_s.
  dynamics::StepReport step();

  /// Values of `sensors` measured on the current state, in order.
  void readSensors(const std::vector<SensorDef>& sensors, std::vector<double>& values) const;
  /// The current state's contacts (dynamics::Simulator::contacts), made once per state: the
  /// scheme's sensors, a scenario's and its scoring all read them after a step. Not for use
  /// from two threads at once (nor is the rest of a Session).
  const std::vector<dynamics::ContactReport>& contacts() const;
  /// The indices into contacts() of the contacts touching `body`, ascending (none for an index
  /// that is not a body): a sensor or rule about a few bodies reads only theirs, not a whole
  /// site's resting contacts. Made with contacts(), once per state.
  std::span<const int> contactsOf(int body) const;
  /// A signal's current value; `sensor_values` are those of the list it was resolved against.
  double signal(const SignalRef& ref, const std::vector<double>& sensor_values) const;

  /// Wall time spent evaluating the scheme since the last call (s); for frame statistics.
  double takeSchemeSeconds() {
    const double s = scheme_seconds_;
    scheme_seconds_ = 0.0;
    return s;
  }

  /// 64-bit hash of the whole session state (dynamics, pult, scheme memory).
  std::uint64_t hash() const;

  /// Goes on with `next`, the same scene loaded with other parameters (an instructor's `set`):
  /// the state, pult, scheme memory and faults carry over, the model is recompiled. Refused,
  /// with the reason returned, when `next` has another structure (sameStructure); else returns
  /// an empty string. Constant inputs (`inputs:`) take their new voltages at once; parameters
  /// that only set the initial state (poses, `u`) have no effect until a restart.
  std::string changeScene(Scene next);
  void restore(const SessionState& state) {
    state_ = state;
    contacts_made_ = false;
    holdStuckControls();      // a stuck control shows its held value in any state
    scheme_sensors_.clear();  // a dropout set now holds the restored reading, not the old one
    syncBrakes();             // the faults in force, not those of the state's moment
  }

 private:
  void evaluateScheme();
  // Writes each motor's BrakeReleased fault into its dynamics input MotorState::brake_released.
  void syncBrakes();
  // Writes each stuck control's held value into the pult.
  void holdStuckControls();

  Scene scene_;
  dynamics::Simulator simulator_;
  SessionState state_;
  std::vector<double> scheme_sensors_;    // scratch, sized once
  std::vector<MotorFault> motor_faults_;  // one per motor
  std::vector<double> commanded_;         // scratch: commanded voltages during a faulted step
  // contacts(): the current state's, when contacts_made_.
  mutable std::vector<dynamics::ContactReport> contacts_;
  // contactsOf(): body b's contacts are contact_index_[contact_first_[b], contact_first_[b+1]).
  mutable std::vector<int> contact_first_, contact_index_;
  mutable bool contacts_made_ = false;
  bool any_fault_ = false;
  std::vector<ControlFault> control_faults_;  // one per pult control
  std::vector<SensorFault> sensor_faults_;    // one per scheme sensor
  bool any_sensor_fault_ = false;
  double scheme_seconds_ = 0.0;
};

}  // namespace sim::engine
