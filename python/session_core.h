// The C++ side of the Python module's Session (docs/python.md), kept free of Python so that the
// stepping loop runs with the interpreter's lock released: one engine::Session with the traces
// and the recording attached to it, a mutex that keeps one thread at a time on it, and the
// numerical fault that stopped it. Everything here composes the engine's public API.
#pragma once

#include <dynamics/simulator.h>
#include <engine/recording.h>
#include <engine/scene.h>
#include <engine/scheme.h>
#include <engine/session.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace sim::python {

/// A numerical fault (non-finite or runaway state) stopped the session: dynamics::Fault.
class NumericalFaultError : public std::runtime_error {
 public:
  explicit NumericalFaultError(dynamics::Fault fault)
      : std::runtime_error("numerical fault: " + fault.describe()), fault_(std::move(fault)) {}
  const dynamics::Fault& fault() const { return fault_; }

 private:
  dynamics::Fault fault_;
};

/// Another thread is using the session (stepping it, or reading it while it steps).
class SessionBusyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The sizes a saved state must have to be put back into a session: a state of another scene
/// would index past its bodies, joints or scheme.
struct StateLayout {
  std::size_t bodies = 0, shapes = 0, joints = 0, motors = 0, repeaters = 0;
  std::size_t controls = 0, scheme_blocks = 0;
  bool operator==(const StateLayout&) const = default;
};
StateLayout layoutOf(const engine::Scene& scene);

/// A saved session state (Session.state() in Python).
struct SavedState {
  engine::SessionState state;
  StateLayout layout;
  std::string scene;  ///< The scene's name, for messages.
};
/// Bit-for-bit equality of every field of two session states.
bool sameState(const engine::SessionState& a, const engine::SessionState& b);

/// A trace in memory: the rows of the trace CSV (engine/trace.h), the current state first and
/// then every Nth step after it (and a step that faulted), as the CLI's --trace-every N.
class TraceBuffer {
 public:
  TraceBuffer(const engine::Scene& scene, int every);
  /// The first row: the current state and the report of the step that produced it (a default
  /// one before any step, as the CLI's initial row).
  void start(const engine::Session& session, const dynamics::StepReport& report) {
    add(session, report);
  }
  void afterStep(const engine::Session& session, const dynamics::StepReport& report, bool faulted);
  const std::vector<std::string>& columns() const { return columns_; }
  std::size_t rows() const { return columns_.empty() ? 0 : values_.size() / columns_.size(); }
  const std::vector<double>& values() const { return values_; }  ///< Row-major.
  int every() const { return static_cast<int>(every_); }
  bool attached = true;

 private:
  void add(const engine::Session& session, const dynamics::StepReport& report);
  std::vector<std::string> columns_;
  std::vector<double> values_;
  std::uint64_t every_ = 1;
  std::uint64_t steps_ = 0;  // since the trace started
};

/// A signal resolved once (engine/scheme.h resolveSignal) and the sensors it reads.
struct ResolvedSignals {
  std::vector<engine::SignalRef> refs;
  std::vector<engine::SensorDef> sensors;
};

class SessionCore {
 public:
  explicit SessionCore(engine::Scene scene);
  ~SessionCore();
  SessionCore(const SessionCore&) = delete;
  SessionCore& operator=(const SessionCore&) = delete;

  /// Held by every call that reads or changes the session; taken with try_lock by the bindings,
  /// so that a second thread gets SessionBusyError instead of waiting (and no lock is ever
  /// awaited while holding Python's).
  std::mutex mutex;

  engine::Session& session() { return session_; }
  const engine::Session& session() const { return session_; }

  /// Steps `n` times (fewer when a numerical fault stops the session, or when `interrupted`,
  /// asked every 1024 steps, returns true). Throws NumericalFaultError at a fault, also when the
  /// session had already stopped on one; the steps before it are kept.
  std::uint64_t step(std::uint64_t n, const std::function<bool()>& interrupted = {});
  const dynamics::StepReport& lastReport() const { return last_report_; }
  const std::optional<dynamics::Fault>& fault() const { return fault_; }

  /// Sets a pult control by name; throws std::invalid_argument naming the known controls.
  void setControl(const std::string& name, double value);

  /// Faults as a scenario's `faults:` and the instructor inject them (engine/session.h); kind
  /// "none" clears. Throws std::invalid_argument for an unknown motor, signal or kind, or a value
  /// out of range, with the same rules as a scenario file.
  void setMotorFault(const std::string& motor, const std::string& kind,
                     std::optional<double> value);
  void setSensorFault(const std::string& signal, const std::string& kind,
                      std::optional<double> value);
  void clearFaults();
  /// The signal each faulted scheme sensor was named by (index into scheme.sensors -> text).
  const std::map<int, std::string>& sensorFaultNames() const { return sensor_fault_names_; }

  /// A parameter change as a scenario's `changes:`: the scene reloaded with one more override
  /// and the session going on from its state (Session::changeScene). Throws engine::SceneError
  /// for a bad key or value, or a change of structure.
  void setParameter(const engine::Override& change);

  /// Resolves signals (cached by name) and reads their current values.
  void readSignals(const std::vector<std::string>& names, std::vector<double>& values);

  SavedState save() const;
  /// Throws std::invalid_argument when `saved` is of another scene's layout, or while recording.
  void restore(const SavedState& saved);

  std::shared_ptr<TraceBuffer> addTrace(int every);
  void removeTrace(const std::shared_ptr<TraceBuffer>& trace);

  /// Starts recording to `path` (engine/recording.h); only on a session that has not stepped,
  /// been restored or had its parameters changed, so a replay from the scene's start reproduces
  /// it. Throws engine::RecordingError.
  void startRecording(const std::string& path);
  /// Writes the end line (outcome ok, or fault) and closes the file. Safe to call twice.
  void finishRecording();
  bool recording() const { return recorder_ != nullptr; }
  const std::string& recordingPath() const { return record_path_; }

 private:
  engine::Session session_;
  dynamics::StepReport last_report_;
  std::optional<dynamics::Fault> fault_;
  std::vector<std::shared_ptr<TraceBuffer>> traces_;
  std::unique_ptr<engine::RecordingWriter> recorder_;
  std::string record_path_;
  bool pristine_ = true;  // never stepped, restored or changed: a recording may start
  std::map<std::string, ResolvedSignals> signals_;
  std::map<int, std::string> sensor_fault_names_;
  std::vector<double> sensor_values_;  // scratch
};

}  // namespace sim::python
