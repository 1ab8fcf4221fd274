// Grading a session (docs/scenarios.md, "Scoring"): penalties found in the solver's data (contact
// onsets between named bodies, motor overload, joint limit strikes, a dropped or swinging load,
// time), the scenario's expectations as weighted tasks, a score out of 100 and a pass mark.
//
// A Scorer is fed the session once before the first step and once after every step, by whatever
// advances it (playScenario, runHeadless's RunOptions::after_step, a replay's per-step callback),
// so a live session and the replay of its recording grade alike, bit for bit.
#pragma once

#include <dynamics/simulator.h>
#include <engine/live_score.h>
#include <engine/scene.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sim::engine {

class Session;
struct Scenario;
struct ExpectationResult;

/// One penalty rule of `scoring.penalties` (kinds and keys in docs/scenarios.md).
struct PenaltyRule {
  enum class Kind { Collision, MotorOverload, JointLimit, LoadDropped, Swing, Time };
  Kind kind = Kind::Collision;
  std::string name;     ///< Shown to the trainee.
  double points = 0.0;  ///< Per event (Time: per second over the target).
  double max_points = std::numeric_limits<double>::infinity();  ///< Cap on this rule's total.
  bool critical = false;  ///< An event fails the exercise whatever the score.
  double from_s = 0.0;    ///< The rule applies in [from_s, to_s] (`during`); default: always.
  double to_s = std::numeric_limits<double>::infinity();
  int line = 0;

  // Collision: contact onsets between a body of `side_a` and one of `side_b` (body indices).
  std::vector<int> side_a, side_b;
  double min_impulse_Ns = 0.0;  ///< Counted when the impact's normal impulse reaches this...
  double min_speed_mps = 0.0;   ///< ...and its approach speed this.
  // MotorOverload: |torque| above `fraction` of the stall torque for longer than `for_s`.
  std::vector<int> motors;
  double fraction = 1.0;
  double for_s = 0.0;
  // JointLimit: a limit row starting to push at a joint speed of at least min_speed.
  std::vector<int> joints;
  double min_joint_speed = 0.0;  ///< rad/s or m/s.
  // LoadDropped and Swing: the load body and the bodies that carry it.
  int body = -1;
  std::vector<int> held_by;
  double below_m = 0.0;  ///< LoadDropped: height of the centre of mass.
  // Swing: either limit (0: not checked) exceeded while carried.
  double max_angle_rad = 0.0;   ///< Tilt from the load's upright (initial) orientation.
  double max_jerk_mps3 = 0.0;   ///< |d(acceleration)/dt| of the centre of mass...
  double jerk_window_s = 0.05;  ///< ...with the acceleration averaged over this window (see docs).
  // Time: points per second beyond `target_s` until the task `until` is done (-1: the end).
  double target_s = 0.0;
  int until_task = -1;
};

/// An expectation graded as a task: `points` are lost when it fails.
struct TaskDef {
  int expectation = 0;  ///< Index into Scenario::expectations.
  double points = 0.0;
  bool critical = false;
  int line = 0;
};

/// `scoring:` of a scenario. Absent: the scenario is not graded (enabled false).
struct ScoringDef {
  bool enabled = false;
  double pass_mark = 0.0;  ///< 0..100.
  int load = -1;           ///< `load.body`: the carried load (statistics, report defaults), or -1.
  std::vector<int> load_held_by;
  std::vector<PenaltyRule> penalties;
  std::vector<TaskDef> tasks;  ///< Expectations without an entry are tasks worth 0 points.
};

/// One plot of the after-action report: signals drawn against time on one set of axes.
struct ReportPlot {
  std::string title;
  std::vector<std::string> signals;  ///< As written (engine/scheme.h resolveSignal).
};

/// `report:` of a scenario: what the after-action report plots and where it looks from.
struct ReportDef {
  std::vector<ReportPlot> plots;  ///< Empty: the defaults (docs/scenarios.md).
  std::string camera;             ///< Scene camera of the screenshots; empty: the default camera.
  int line = 0;
};

/// A penalty that fired.
struct Penalty {
  std::string kind;  ///< collision, motor_overload, joint_limit, load_dropped, swing, time
  std::string name;  ///< The rule's name.
  std::vector<std::string> bodies;  ///< Bodies involved (a collision's pair, the load).
  std::string item;                 ///< The motor or joint, for those kinds; else empty.
  double time_s = 0.0;              ///< When it happened (onset).
  std::uint64_t step = 0;
  double value = 0.0;   ///< What was measured (see `unit`).
  std::string unit;     ///< "N s", "m/s", "x stall", "rad/s", "m", "rad", "s".
  double speed = 0.0;   ///< Collision: approach speed (m/s).
  double points = 0.0;  ///< Deducted (after the rule's cap).
  bool critical = false;
  std::string text;  ///< As shown to the trainee.
};

struct TaskResult {
  std::string name;
  bool done = false;
  double time_s = 0.0;  ///< When it was decided (done or failed).
  double points = 0.0;  ///< Its weight.
  double points_lost = 0.0;
  bool critical = false;
  std::string detail;
};

/// The grade of a session.
struct ScoreSheet {
  bool scored = false;
  double score = 100.0;  ///< 100 - penalty_points - task_points_lost, at least 0.
  double pass_mark = 0.0;
  bool passed = false;  ///< Complete, no critical failure, score >= pass mark.
  bool critical_failure = false;
  double penalty_points = 0.0;
  double task_points_lost = 0.0;
  /// The time the exercise took: the done time of the time rule's `until` task, else the session's
  /// duration.
  double exercise_time_s = 0.0;
  std::vector<Penalty> penalties;  ///< In time order.
  std::vector<TaskResult> tasks;   ///< One per expectation, in file order.
};

struct MotorPeak {
  std::string name;
  double peak_torque_Nm = 0.0;  ///< Largest |rotor torque| of the characteristic.
  double peak_fraction = 0.0;   ///< Of the stall torque (MotorDef::stall_torque_Nm).
  double time_s = 0.0;
};

/// Figures of the whole session (result files).
struct SessionStats {
  std::string load;          ///< The load body; empty: none named.
  double load_path_m = 0.0;  ///< Distance its centre of mass travelled.
  std::vector<MotorPeak> motors;
  int max_velocity_iterations = 0;
  std::uint64_t steps_at_iteration_cap = 0;
  double time_at_iteration_cap_s = 0.0;
  std::string
      fault;  ///< The numerical fault that ended the session (Fault::describe()); empty: none.
};

/// The grader. Without a scenario (a plain scene) it only gathers SessionStats.
class Scorer {
 public:
  explicit Scorer(const Scene& scene);
  /// The scenario must outlive the scorer.
  explicit Scorer(const Scenario& scenario);
  ~Scorer();
  Scorer(const Scorer&) = delete;
  Scorer& operator=(const Scorer&) = delete;

  /// Before the first step (t = 0) and after every step. `report` (null before the first step)
  /// adds the solver's effort to the statistics.
  void sample(const Session& session, const dynamics::StepReport* report = nullptr);
  /// Decides what is still open after the last sample. `complete`: the session ran its full
  /// duration without a fault or interruption (else the exercise cannot pass).
  void finish(bool complete);
  /// Back to the start (an instructor's reset): every penalty, task and figure forgotten.
  void reset();

  const LiveScore& live() const { return live_; }
  /// Every penalty so far, in the order they fired (collisions close 20 ms after their onset).
  const std::vector<Penalty>& penalties() const;
  /// Every event so far (the live ones, kept): lets a caller publish each once.
  const std::vector<ScoreEvent>& events() const { return events_; }
  ScoreSheet sheet() const;
  SessionStats stats() const;
  /// The expectation results so far (all decided after finish()).
  std::vector<ExpectationResult> expectations() const;
  bool finished() const { return finished_; }
  double time() const { return last_t_; }
  std::uint64_t step() const { return last_step_; }

 private:
  struct Impl;
  struct ImpactState;
  void addEvent(double t, double points, const std::string& text);
  void updateLive(double t);
  void announceTasks();
  struct Totals {
    double penalty_points = 0.0, task_points_lost = 0.0, score = 100.0;
    bool critical = false;
  };
  Totals totals() const;
  void firePenalty(std::size_t rule, Penalty penalty, double points);
  void closeImpact(std::size_t rule, const std::pair<int, int>& bodies, ImpactState& impact);
  const Scene* scene_ = nullptr;
  const Scenario* scenario_ = nullptr;
  std::unique_ptr<Impl> impl_;
  LiveScore live_;
  std::vector<ScoreEvent> events_;
  bool finished_ = false;
  double last_t_ = 0.0;
  std::uint64_t last_step_ = 0;
};

/// The name of a penalty kind as in scenario files and Penalty::kind (collision, motor_overload,
/// ...).
const char* penaltyKindName(PenaltyRule::Kind kind);

}  // namespace sim::engine
