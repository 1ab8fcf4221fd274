// Frame pacing and timing statistics of the run loop (STYLE §5, "Fix Your Timestep!"): every
// frame advances the same simulated time (a whole number of fixed steps), and the wall clock only
// decides when a frame may start. Lateness under one frame is absorbed (the next frame starts at
// once); a frame that ends more than a whole frame late is an overrun, and the schedule restarts
// from now: the simulation then runs slower than real time, visibly (the real-time
// factor drops), instead of jumping ahead or taking huge steps to catch up.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

namespace sim::engine {

/// Per-frame durations of one activity (seconds): mean, 99th percentile and maximum.
class TimingStats {
 public:
  void add(double seconds) { samples_.push_back(seconds); }
  std::size_t count() const { return samples_.size(); }
  double mean() const;
  double p99() const;  ///< Nearest-rank 99th percentile.
  double max() const;

 private:
  std::vector<double> samples_;
};

class FramePacer {
 public:
  using Clock = std::chrono::steady_clock;
  /// `realtime` false: frames run back to back (as fast as possible), never counted as overruns.
  FramePacer(double frame_period_s, bool realtime);
  /// Call when a frame's work is done: waits for the end of the frame's slot when ahead of the
  /// wall clock; more than a frame behind, counts an overrun and re-bases.
  void endFrame();
  std::uint64_t overruns() const { return overruns_; }

 private:
  Clock::duration period_;
  bool realtime_;
  Clock::time_point next_;
  std::uint64_t overruns_ = 0;
};

}  // namespace sim::engine
