// Frame pacing and timing statistics of the run loop (STYLE §5, "Fix Your Timestep!"): every
// frame advances the same simulated time (a whole number of fixed steps), and the wall clock only
// decides when a frame may start. The simulation keeps wall-clock time: a frame that starts late
// (the thread was not scheduled, or an earlier frame was slow) is caught up by running the next
// frames back to back, up to a bounded lag; only beyond that lag does the schedule restart from
// now, and the world then slows down (counted, and shown as "slower than real time"). Drawing is
// not part of a frame's work: it runs on its own thread (engine/live_view.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

namespace sim::engine {

/// Per-frame durations of one activity (seconds), or any other positive quantity (a solver's
/// residual per step): mean, percentiles and maximum, in bounded memory, so a training day's
/// session does not grow with it. The first kExact samples are kept and the percentiles are exact;
/// later ones go into a histogram of 1 % wide logarithmic buckets from `lowest` to `highest` (1 µs
/// to 100 s for times), and a percentile is then its bucket's upper edge, at most 1 % high (values
/// outside the range count in the end buckets).
class TimingStats {
 public:
  static constexpr std::size_t kExact = std::size_t{1} << 11;  // 16 KiB: no large transient vectors
  TimingStats() : TimingStats(1e-6, 100.0) {}                  // seconds
  TimingStats(double lowest, double highest);
  void add(double seconds);
  std::size_t count() const { return count_; }
  double mean() const { return count_ > 0 ? sum_ / static_cast<double>(count_) : 0.0; }
  double p99() const { return quantile(0.99); }  ///< Nearest-rank 99th percentile.
  double quantile(double q) const;               ///< Nearest rank, 0 < q <= 1.
  double max() const { return max_; }

 private:
  std::size_t bucketOf(double value) const;
  double lowest_;  // the first bucket's upper edge
  std::size_t bucket_count_;
  std::vector<double> samples_;         // the first kExact
  std::vector<std::uint32_t> buckets_;  // all of them, once there were more
  std::size_t count_ = 0;
  double sum_ = 0.0;
  double max_ = 0.0;
};

class FramePacer {
 public:
  using Clock = std::chrono::steady_clock;
  /// `realtime` false: frames run back to back (as fast as possible), never counted as overruns.
  /// `max_lag_s`: how far behind the wall clock the loop may fall and still catch up.
  FramePacer(double frame_period_s, bool realtime, double max_lag_s = 0.25);
  /// Call when a frame's work starts.
  void beginFrame();
  /// Call when a frame's work is done. Counts an overrun when the work took longer than the
  /// period; waits for the end of the frame's slot when ahead of the wall clock; when behind,
  /// returns at once (catching up), and more than max_lag_s behind re-bases the schedule.
  void endFrame();
  /// Frames whose own work overran the period.
  std::uint64_t overruns() const { return overruns_; }
  /// Times the schedule was re-based, and the wall time given up there (s).
  std::uint64_t resyncs() const { return resyncs_; }
  double lostSeconds() const { return lost_s_; }
  /// Slower than real time lately: an overrun or a resync in the last second, or more than a
  /// frame behind now.
  bool behind() const;

 private:
  Clock::duration period_;
  Clock::duration max_lag_;
  bool realtime_;
  Clock::time_point next_;  // end of the current frame's slot
  Clock::time_point frame_start_;
  Clock::time_point trouble_{};  // last overrun, resync or lag beyond a frame
  bool late_ = false;            // the last frame ended more than a frame behind
  std::uint64_t overruns_ = 0;
  std::uint64_t resyncs_ = 0;
  double lost_s_ = 0.0;
};

}  // namespace sim::engine
