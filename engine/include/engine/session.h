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
#include <vector>

namespace sim::engine {

/// Everything that changes while a session runs.
struct SessionState {
  dynamics::State dynamics;
  PultState pult;
  SchemeState scheme;
  std::uint64_t scheme_evaluations = 0;
  bool operator==(const SessionState&) const = default;
};

class Session {
 public:
  /// Compiles the scene's model; throws dynamics::ModelInvalid like Simulator.
  explicit Session(Scene scene);

  const Scene& scene() const { return scene_; }
  const dynamics::Simulator& simulator() const { return simulator_; }
  const SessionState& state() const { return state_; }
  const dynamics::State& dynamics() const { return state_.dynamics; }
  double time() const { return state_.dynamics.time_s; }
  std::uint64_t stepIndex() const { return state_.dynamics.step; }

  /// Sets a pult control (admitted by its ControlDef: clamped or snapped).
  void setControl(int control, double value);
  /// Returns every control to its initial value (a lost device).
  void neutralPult();

  /// One fixed step: the scheme (when due: every step, or at the first step of each frame) turns
  /// the pult into voltages, then the dynamics advances time_step_s.
  dynamics::StepReport step();

  /// Values of `sensors` measured on the current state, in order.
  void readSensors(const std::vector<SensorDef>& sensors, std::vector<double>& values) const;
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
  void restore(const SessionState& state) { state_ = state; }

 private:
  void evaluateScheme();

  Scene scene_;
  dynamics::Simulator simulator_;
  SessionState state_;
  std::vector<double> scheme_sensors_;  // scratch, sized once
  double scheme_seconds_ = 0.0;
};

}  // namespace sim::engine
