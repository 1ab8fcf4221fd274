// Scenarios: a scene, a timeline of pult actions and expectations checked while it runs
// (docs/scenarios.md). The same file drives a demonstration (`simtrainer play`) and a regression
// test (`simtrainer test`), which runs many of them in parallel and writes JUnit XML.
#pragma once

#include <engine/run.h>
#include <engine/scene.h>
#include <engine/scheme.h>
#include <engine/scoring.h>
#include <engine/session.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace sim::engine {

/// One timeline entry. `set` holds `value` from `at` on; `ramp` goes linearly from the value the
/// control has at `at` to `value` over `duration_s`, then holds; `pulse` holds `value` during
/// [at, at + duration) and then returns to the value the control would have without it; `hold`
/// likewise but returns to the control's initial value (a spring-returned stick let go).
struct TimelineAction {
  enum class Kind { Set, Ramp, Pulse, Hold };
  Kind kind = Kind::Set;
  double at_s = 0.0;
  int control = 0;
  double value = 0.0;
  double duration_s = 0.0;
  int line = 0;
};

/// A condition on a signal. The value must lie in [min, max] (either bound may be absent):
/// `at` once, at the first sample at or after at_s; `during` at every sample in [from_s, to_s];
/// `by` at some sample no later than to_s (an event before a deadline); `end` at the last sample.
/// Samples are taken at t = 0 and after every step.
struct Expectation {
  enum class Kind { At, During, By, End };
  std::string name;  ///< As given, or generated from the condition.
  Kind kind = Kind::End;
  SignalRef signal;
  double from_s = 0.0, to_s = 0.0;
  std::optional<double> min, max;
  int line = 0;
};

/// A drive, sensor or pult failure the scenario injects at a time (`faults:`; docs/scenarios.md).
/// Kind None clears an earlier one.
struct ScheduledFault {
  double at_s = 0.0;
  int motor = 0;  ///< Index into Model::motors; -1 for a sensor or control fault.
  MotorFault fault;
  int sensor = -1;     ///< Index into the scheme's sensors, or -1 for a motor or control fault.
  std::string signal;  ///< The sensor as written (`signal:`).
  SensorFault sensor_fault;
  int control = -1;  ///< Index into the pult's controls, or -1 for a motor or sensor fault.
  ControlFault control_fault;
  bool hold_current = false;  ///< axis_stuck without `value`: hold what the control shows then.
  int line = 0;
};

/// Applies every fault of `faults` due by the session's time that `applied` (one flag per fault,
/// sized by the caller) has not seen yet.
void applyDueFaults(const std::vector<ScheduledFault>& faults, std::vector<char>& applied,
                    Session& session);

/// A parameter change at a time (`changes:`; docs/scenarios.md): the scene reloaded with one more
/// override, as an instructor's `set:KEY:VALUE` (Session::changeScene).
struct ScheduledChange {
  double at_s = 0.0;
  Override change;
  int line = 0;
};

struct Scenario {
  std::string file;
  std::string name;
  Scene scene;
  double duration_s = 10.0;
  std::vector<TimelineAction> timeline;  ///< In file order.
  std::vector<ScheduledFault> faults;    ///< In file order.
  std::vector<ScheduledChange> changes;  ///< In time order.
  std::vector<Expectation> expectations;
  std::vector<SensorDef> sensors;  ///< Sensors the expectations read.
  ScoringDef scoring;              ///< `scoring:` (engine/scoring.h); disabled when absent.
  ReportDef report;                ///< `report:` (the after-action report's plots and camera).
  std::uint64_t source_hash = 0;   ///< FNV-1a of the scenario file's bytes (recordings name it).
};

/// Loads a scenario and its scene (path relative to the scenario file). Throws SceneError or
/// SceneInvalid with the file, line and key of the problem.
Scenario loadScenario(const std::string& path);
Scenario loadScenarioFromString(const std::string& yaml, const std::string& file);

/// The value the timeline gives `control` at time t (before admission by the control).
double timelineValue(const Scenario& scenario, int control, double t_s);

struct ExpectationResult {
  std::string name;
  bool passed = false;
  std::string
      detail;  ///< What was observed, e.g. "body.box.z = 0.12 at t = 25 s, expected >= 0.3".
  bool decided = false;  ///< Passed or failed for good (all are once the run has ended).
  double time_s = 0.0;   ///< When it was decided (simulated s).
};

/// The expectations of a scenario checked on a session: sampled at t = 0 and after every step,
/// then finished at the end of the run (what is still open is decided then).
class ExpectationChecker {
 public:
  explicit ExpectationChecker(const Scenario& scenario);
  void sample(const Session& session);
  void finish(double end_t);
  const std::vector<ExpectationResult>& results() const { return results_; }

 private:
  struct Check {
    bool sampled = false;
    double last_value = 0.0, last_t = 0.0;
    // `during`: the lowest and highest value seen in the window and when (reported with a
    // failure, which is decided at the first violation but keeps being watched).
    bool in_window = false;
    double low = 0.0, low_t = 0.0, high = 0.0, high_t = 0.0;
  };
  static void addRange(const Expectation& e, const Check& c, ExpectationResult& r, bool cut_short);
  const Scenario& scenario_;
  std::vector<Check> checks_;
  std::vector<ExpectationResult> results_;
  std::vector<double> sensors_;
};

struct ScenarioResult {
  std::string file, name;
  bool loaded = false;
  std::string load_error;  ///< When !loaded.
  std::vector<ExpectationResult> expectations;
  /// The run reached the scenario's duration without a fault (not interrupted, window not closed).
  bool complete = false;
  ScoreSheet score;    ///< The grade (score.scored false when the scenario has no `scoring:`).
  SessionStats stats;  ///< Load path, peak motor torques, solver effort.
  RunResult run;
  std::uint64_t final_hash = 0;  ///< Session::hash() at the end.
  bool passed() const;
  std::string failureSummary() const;  ///< One line per failed expectation or fault.
};

struct PlayOptions {
  std::string trace_path;  ///< CSV trace; empty for none.
  int trace_every = 1;
  std::string record_path;                       ///< Session recording; empty for none.
  const std::atomic<bool>* interrupt = nullptr;  ///< Stop after the current step when true.
  /// Pace frames to the wall clock (a window); false plays as fast as possible.
  bool realtime = false;
  /// Threads each step may use (Session::setThreads): the result is the same for any count.
  int threads = 1;
  /// Called after every frame (scene.frame_rate_hz) with scenario progress as notes.
  FrameObserver after_frame;
  /// The operator's devices, sampled once per frame (at its start) into the controls the
  /// timeline does not drive: a scenario as an exercise, whose timeline injects faults and sets
  /// what it scripts while the operator drives the rest and the expectations grade the run.
  /// Controls on the timeline keep the timeline's values. Null: no devices.
  input::InputSystem* input = nullptr;
  /// Called at the start of every frame with its index, before the devices are sampled (tests).
  std::function<void(std::uint64_t frame)> before_frame;
  /// Events from a window on another thread (pult keys, F9 pause, F10 one frame), applied at
  /// the start of each frame; F11 (reset) is refused in a scenario. Null for none.
  OperatorQueue* operator_events = nullptr;
  /// As RunOptions::on_operator_key.
  std::function<void(const OperatorEvent& event)> on_operator_key;
  /// As RunOptions::after_step: after every step, with the step's report (bench_realtime times
  /// the first step whose motor voltage follows a key).
  std::function<void(const Session& session, const dynamics::StepReport& report)> after_step;
  /// The grader to feed (its grade is also copied into the result); null: the run makes its own.
  /// Given by a caller that must still read the grade when the run throws (result files).
  Scorer* scorer = nullptr;
  /// Written into the recording's header (engine/recording.h): who, and when (ISO 8601 UTC).
  std::string trainee, started;
};

/// The controls of the scenario's pult that its timeline drives (1) and leaves to the operator (0).
std::vector<char> timelineDrivenControls(const Scenario& scenario);

/// Runs a scenario headless as fast as possible. Never throws for run-time problems: a numerical
/// fault ends the run and fails the scenario.
ScenarioResult playScenario(const Scenario& scenario, const PlayOptions& options = {});

/// Loads and plays one file; a load error becomes a failed result (loaded == false).
ScenarioResult runScenarioFile(const std::string& path);

/// Scenario files (*.scenario.yaml) under each path (a file is taken as given), sorted.
std::vector<std::string> findScenarios(const std::vector<std::string>& paths);

/// Runs scenarios on `jobs` threads; results in the order of `files`. `progress` (may be empty)
/// is called after each one finishes, from the thread that ran it, under a lock.
std::vector<ScenarioResult> runScenarios(
    const std::vector<std::string>& files, int jobs,
    const std::function<void(const ScenarioResult&, std::size_t done, std::size_t total)>&
        progress);

/// JUnit XML of a test run (one testsuite, one testcase per scenario).
std::string junitXml(const std::vector<ScenarioResult>& results, double wall_time_s);

}  // namespace sim::engine
