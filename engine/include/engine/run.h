// The run loop: frames of a whole number of fixed steps, as fast as possible or paced to the wall
// clock, with an optional frame observer that draws a window or takes screenshots.
#pragma once

#include <dynamics/simulator.h>
#include <dynamics/state.h>
#include <engine/frame_clock.h>
#include <engine/live_score.h>
#include <engine/operator_queue.h>
#include <engine/recording.h>
#include <engine/scene.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace sim::input {
class InputSystem;
}

namespace sim::engine {

class Session;
struct RunResult;

/// Called after every frame with the session, the run's statistics so far and notes (scenario
/// progress), on the thread that runs the loop: hands a snapshot to the view (engine/live_view.h),
/// or draws or takes a screenshot itself when there is no other thread. Returns false to end the
/// run (every window was closed). Its time is RunResult::render_time, part of the frame's work.
using FrameObserver = std::function<bool(const Session& session, const RunResult& so_far,
                                         const std::vector<std::string>& notes)>;

/// Operator commands to a running loop, read by the loop at the start of each frame. Set on the
/// loop's own thread (a server's before_steps), or by the loop itself from
/// RunOptions::operator_events (a window on another thread).
struct RunControl {
  bool paused = false;  ///< No steps while set; frames are still drawn.
  int step_frames = 0;  ///< While paused: run this many frames, then hold again.
  bool reset =
      false;  ///< Back to the initial state (ignored while recording); cleared by the loop.
  bool reset_refused = false;  ///< Set by the loop when a reset was ignored (recording).
};

struct RunOptions {
  double duration_s = 10.0;  ///< Simulated time to run (s).
  std::string trace_path;    ///< CSV trace file; empty for none.
  int trace_every = 1;       ///< Record every Nth step (after the initial row).
  std::string record_path;   ///< Session recording (engine/recording.h); empty for none.
  /// Pace frames (scene.frame_rate_hz) to the wall clock; false runs as fast as possible.
  bool realtime = false;
  /// Threads each step may use (Session::setThreads): the result is the same for any count.
  int threads = 1;
  /// When set and true, the run stops after the current step (Ctrl-C); files are still flushed.
  const std::atomic<bool>* interrupt = nullptr;
  /// Operator devices, sampled into the pult at the start of every frame (before the scheme
  /// runs); its mapping's controls must be the scene's pult (engine/input_mapping.h). Null: the
  /// pult keeps its initial values, as in every headless regression run.
  input::InputSystem* input = nullptr;
  /// Called at the start of every frame (0, 1, ...), before the input is sampled: lets tests move
  /// and unplug virtual devices at exact frames of a real run.
  std::function<void(std::uint64_t frame)> before_frame;
  /// Called at the start of every frame after the input is sampled and before RunControl is
  /// read: lets a network server (engine/remote.h) set the pult, inject faults and pause.
  std::function<void(Session& session)> before_steps;
  /// Called after every frame (see FrameObserver); empty for none.
  FrameObserver after_frame;
  /// Called after every step with the session and the step's report (a grader, statistics).
  std::function<void(const Session& session, const dynamics::StepReport& report)> after_step;
  /// The recording's optional header lines: the scenario graded, who, and when.
  RecordingHeader record_header;
  /// Pause, step and reset set on the loop's thread; null: the loop keeps its own (which
  /// operator_events drive).
  RunControl* control = nullptr;
  /// Events from a window on another thread (pult keys, F9 pause, F10 step, F11 reset), applied
  /// at the start of each frame: keys go to `input` before it is sampled. Null for none.
  OperatorQueue* operator_events = nullptr;
  /// Called with each pult key event as the loop applies it (key, the wall-clock time it was
  /// seen), before the frame's steps: bench_realtime measures input latency from it.
  std::function<void(const OperatorEvent& event)> on_operator_key;
};

/// How one solve (velocity or position) ended over a run's steps: the steps by their end
/// (StepReport::velocity_end, position_end) and the residual at the end of each step.
struct SolveStats {
  std::uint64_t no_work = 0;    ///< Steps with nothing to solve.
  std::uint64_t tolerance = 0;  ///< Steps whose substeps all ended by the tolerance (or no work).
  std::uint64_t cap = 0;        ///< Steps where some substep's solve stopped at the cap.
  /// Velocity solve: impulse change in the last sweep (N s or N m s); position solve: error
  /// found by the last pass (m or rad).
  TimingStats residual{1e-18, 1e6};
  /// Velocity solve, steps at the cap: the kind of row with the largest change in the last
  /// sweep (indexed by dynamics::RowKind).
  std::array<std::uint64_t, 5> cap_by_kind{};

  void add(dynamics::SolveEnd end, double residual_at_end, dynamics::RowKind kind);
};

struct RunResult {
  std::uint64_t steps = 0;
  double sim_time_s = 0.0;
  double wall_time_s = 0.0;
  int threads = 1;                           ///< Threads each step could use (RunOptions::threads).
  int max_velocity_iterations = 0;           ///< Largest count any substep used.
  std::uint64_t steps_at_iteration_cap = 0;  ///< Steps where some substep hit the cap.
  double max_position_error = 0.0;           ///< Largest joint error left after position passes.
  SolveStats velocity_solve;                 ///< How each step's velocity solve ended.
  SolveStats position_solve;                 ///< How each step's position solve ended.
  std::optional<dynamics::Fault> fault;      ///< Set when a numerical fault stopped the run.
  bool interrupted = false;                  ///< Stopped by RunOptions::interrupt.
  std::uint64_t frames = 0;
  std::uint64_t overruns = 0;  ///< Real-time frames whose own work took longer than their slot.
  std::uint64_t resyncs = 0;   ///< Times the loop fell too far behind to catch up (FramePacer).
  double lost_s = 0.0;         ///< Wall time given up at those resyncs (the world slowed), s.
  double paused_wall_s = 0.0;  ///< Wall time spent paused (left out of the real-time factor), s.
  TimingStats physics_time;    ///< Per frame: the steps (dynamics and scheme), s.
  TimingStats scheme_time;     ///< Per frame: the scheme alone, s.
  TimingStats render_time;     ///< Per frame: the frame observer (handing over or drawing), s.
  TimingStats frame_time;      ///< Per frame: all work, including traces and recording, s.
  bool closed = false;         ///< Ended by the frame observer (window closed).
  // Live status, as of the last frame (what a view shows).
  bool paused = false;         ///< RunControl::paused.
  bool reset_refused = false;  ///< RunControl::reset_refused.
  bool behind = false;         ///< FramePacer::behind(): slower than real time lately.
  // The view's figures, when a view drew on its own thread (engine/live_view.h); filled after
  // the run.
  std::uint64_t drawn_frames = 0;
  TimingStats draw_time;     ///< Per drawn frame, every window, s.
  double draw_wall_s = 0.0;  ///< Wall time the view ran, s (drawn frames per second).
  std::size_t trace_rows = 0;
  dynamics::State final_state;
  /// The running score of a graded session (engine/scoring.h), for the frame observer's HUD.
  LiveScore score;

  /// Accumulates one step's solver effort.
  void record(const dynamics::StepReport& report);
  /// Simulated time over wall time, the time spent paused left out.
  double realTimeFactor() const {
    const double running = wall_time_s - paused_wall_s;
    return running > 0.0 ? sim_time_s / running : 0.0;
  }
};

/// Number of fixed steps of size `time_step_s` that cover `duration_s` (rounded up).
std::uint64_t stepCount(double duration_s, double time_step_s);

/// Runs a scene headless with a virtual clock: the constant inputs hold their voltages and the
/// scheme (if any) runs on the pult's initial values, or on what RunOptions::input samples. Stops
/// early on the first numerical fault (StepReport::fault). The trace, if any, gets the initial
/// state (time 0) and then every Nth step, and is flushed before returning or throwing. Throws
/// dynamics::ModelInvalid or std::runtime_error (trace file) on setup errors.
RunResult runHeadless(const Scene& scene, const RunOptions& options);

/// A human-readable multi-line summary of a run (steps, times, final joint and motor values,
/// solver effort).
std::string formatSummary(const Scene& scene, const RunResult& result);

/// The summary's lines on how the solves ended (steps by end, residuals at the end), each
/// starting with `indent`.
std::string formatSolveSummary(const dynamics::SolverSettings& solver, const RunResult& result,
                               const std::string& indent = "");

}  // namespace sim::engine
