// Replaying a recording (engine/recording.h) step by step, with exact seeking: the engine of
// `simtrainer replay` (verification, the 3D debrief) and of reports. Seeking back restores the
// nearest state saved on the way (every few seconds, in memory) and steps forward from it, so the
// state at any step is the recorded one bit for bit, never an interpolation.
#pragma once

#include <engine/frame_snapshot.h>
#include <engine/operator_queue.h>
#include <engine/recording.h>
#include <engine/run.h>
#include <engine/session.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sim::engine {

class Replayer {
 public:
  /// Loads the recorded scene with its overrides; it must hash as recorded (unless
  /// `allow_changed_scene`: a report with --force) and have the recorded pult (else
  /// RecordingError). Stands before the first step. A saved point is kept every `save_every_s`
  /// of simulated time (rounded to whole frames).
  explicit Replayer(Recording recording, double save_every_s = 2.0,
                    bool allow_changed_scene = false);

  const Recording& recording() const { return recording_; }
  const Session& session() const { return *session_; }
  std::uint64_t step() const { return session_->stepIndex(); }
  std::uint64_t steps() const { return recording_.hashes.size(); }
  bool atEnd() const { return step() >= steps(); }
  double timeStep() const { return session_->scene().model.solver.time_step_s; }

  /// Applies what the recording holds before the next step (parameter changes, faults, pult),
  /// once. Throws RecordingError for a fault of a motor or sensor the scene does not have, or a
  /// parameter change it refuses.
  void applyInputs();
  /// The next recorded step: applyInputs(), then the step. Does nothing at the end.
  dynamics::StepReport stepOnce();
  /// Session::hash() after the last step equals the recording's (true before the first step).
  bool matches() const;

  /// Goes to `target` steps (clamped to steps()) exactly: from here when it lies ahead and no
  /// saved point is nearer, else from the nearest saved point at or before it.
  void seek(std::uint64_t target);
  std::size_t savedPoints() const { return points_.size(); }
  std::uint64_t saveEvery() const { return save_every_; }

 private:
  struct Point {
    SessionState state;
    std::vector<MotorFault> motor_faults;
    std::vector<SensorFault> sensor_faults;
    std::vector<ControlFault> control_faults;
    std::vector<Override> overrides;  // in force at that point (the recording's and changes')
  };
  void save();
  void restore(const Point& point);

  Recording recording_;
  std::vector<Override> overrides_;  // the recording's, then the changes met so far
  std::optional<Session> session_;
  std::uint64_t save_every_ = 1;
  std::map<std::uint64_t, Point> points_;
  std::uint64_t applied_for_ = ~std::uint64_t{0};  // the step whose inputs are applied
};

/// What happened in a recording, for a replay's timeline bar: its faults and parameter changes.
std::vector<TimelineMark> recordingMarks(const Recording& recording, double time_step_s);

struct ReplayPlayOptions {
  /// Pace to the wall clock at the replay's speed (a window); false: as fast as possible.
  bool realtime = true;
  double speed = 1.0;  ///< Simulated seconds per wall-clock second, 0.25 to 8.
  /// At the end: stop (false), or pause on the last frame until the observer ends the run (a
  /// window stays open for seeking back).
  bool hold_at_end = false;
  /// Stop once this simulated time is reached (a screenshot's --at); < 0 for none.
  double stop_at_s = -1.0;
  OperatorQueue* operator_events = nullptr;  ///< F9, F10, seek and speed from the windows.
  FrameObserver after_frame;                 ///< Usually LiveView::observer(decorate).
  /// Written before each after_frame call: the position and speed for the snapshot (a
  /// LiveView decorate function copies it). Its `marks` are left as the caller set them.
  ReplayStatus* status = nullptr;
  std::function<void(std::uint64_t frame)> before_frame;  ///< Tests: events at exact frames.
  const std::atomic<bool>* interrupt = nullptr;
};

/// Plays a recording frame by frame (the scene's frame rate) with pause, one-frame steps,
/// seeking and speed from operator events. Returns the run's figures (steps are those played,
/// seeks included; sim_time_s is where it stopped). Notes name the recording, its position and,
/// when a step does not hash as recorded, the divergence.
RunResult playRecording(Replayer& replayer, const ReplayPlayOptions& options);

}  // namespace sim::engine
