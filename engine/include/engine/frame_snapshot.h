// What the simulation thread hands the view after each frame: plain values (poses, pult, motors,
// the run's figures, notes), never the Session itself, so the view can draw one frame while the
// simulation runs the next (STYLE §1; MuJoCo's simulate copies mjData into an mjvScene under a
// lock and draws after releasing it). SnapshotChannel passes the newest complete snapshot across:
// the simulation never waits for the view, and the view never sees a half-written one.
#pragma once

#include <dynamics/simulator.h>
#include <engine/live_score.h>
#include <engine/run.h>
#include <engine/session.h>
#include <render/body_graph.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace sim::engine {

/// An event on a replay's timeline bar (HUD), at a simulated time.
struct TimelineMark {
  enum class Kind { Fault, Change, Passed, Failed, Penalty };
  double time_s = 0.0;
  Kind kind = Kind::Fault;
  std::string label;
};

/// A replay's position and what its timeline shows.
struct ReplayStatus {
  double duration_s = 0.0;  ///< Of the recording (its last complete frame).
  double speed = 1.0;       ///< Simulated seconds per wall-clock second.
  std::shared_ptr<const std::vector<TimelineMark>> marks;  ///< Fixed for the replay.
};

/// The simulation's own figures (not the drawing's): what the HUD's status line shows.
struct SimFigures {
  double real_time_factor = 0.0;  ///< Simulated / wall time, paused time left out.
  double frame_work_ms = 0.0;     ///< Mean per frame: pult, scheme, physics, recording.
  std::uint64_t overruns = 0;     ///< Frames whose work took longer than their slot.
  bool behind = false;            ///< Slower than real time now (an overrun or lag lately).
};

struct FrameSnapshot {
  std::uint64_t frame = 0;  ///< Frames run so far (paused frames too).
  std::uint64_t step = 0;
  double time_s = 0.0;
  std::vector<render::BodyPose> poses;  ///< Model order.
  std::vector<double> pult;             ///< Control values, pult order.
  std::vector<double> motor_voltage;    ///< Normalised u, model order.
  std::vector<double> motor_speed;      ///< Rotor side, rad/s.
  bool has_contacts = false;            ///< `contacts` filled (asked for by a debug overlay).
  std::vector<dynamics::ContactReport> contacts;
  SimFigures sim;
  bool paused = false;
  bool reset_refused = false;
  std::string fault;  ///< The numerical fault that stopped the run; empty while healthy.
  std::vector<std::string> notes;
  LiveScore score;      ///< A graded exercise's running score (score.scored false: none).
  bool replay = false;  ///< `replay_status` is set.
  ReplayStatus replay_status;
};

/// Fills `out` from a session and the run's figures so far (its vectors keep their capacity).
/// `contacts`: also copy the contact reports (for the debug overlay; they cost a query).
void takeSnapshot(const Session& session, const RunResult& so_far,
                  const std::vector<std::string>& notes, bool contacts, FrameSnapshot& out);

/// Newest-wins hand-over of snapshots between one writer (the simulation thread) and one reader
/// (the view): three buffers, swapped under a lock held only for the swap.
class SnapshotChannel {
 public:
  /// Writer: the buffer to fill before publish(); keeps its contents' capacity between frames.
  FrameSnapshot& back() { return buffers_[back_]; }
  /// Writer: makes back() the newest snapshot and wakes the reader.
  void publish();
  /// Writer: no more snapshots will come (the run ended); wakes the reader.
  void close();

  /// Reader: takes the newest snapshot into front() if one was published since the last take,
  /// waiting up to `timeout` for it. Returns whether front() changed.
  bool take(std::chrono::milliseconds timeout);
  const FrameSnapshot& front() const { return buffers_[front_]; }
  bool closed() const;
  /// Snapshots published, and those replaced before the reader took them (frames not drawn).
  std::uint64_t published() const;
  std::uint64_t superseded() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable fresh_cv_;
  FrameSnapshot buffers_[3];
  int back_ = 0, middle_ = 1, front_ = 2;
  bool fresh_ = false;
  bool closed_ = false;
  std::uint64_t published_ = 0;
  std::uint64_t superseded_ = 0;
};

}  // namespace sim::engine
