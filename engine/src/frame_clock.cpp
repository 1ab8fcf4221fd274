#include <engine/frame_clock.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <thread>

namespace sim::engine {

double TimingStats::mean() const {
  if (samples_.empty()) return 0.0;
  return std::accumulate(samples_.begin(), samples_.end(), 0.0) / static_cast<double>(samples_.size());
}

double TimingStats::p99() const {
  if (samples_.empty()) return 0.0;
  std::vector<double> sorted = samples_;
  const auto rank = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(sorted.size()))) - 1;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(rank), sorted.end());
  return sorted[rank];
}

double TimingStats::max() const {
  return samples_.empty() ? 0.0 : *std::max_element(samples_.begin(), samples_.end());
}

FramePacer::FramePacer(double frame_period_s, bool realtime)
    : period_(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(frame_period_s))),
      realtime_(realtime),
      next_(Clock::now() + period_) {}

void FramePacer::endFrame() {
  if (!realtime_) return;
  const Clock::time_point now = Clock::now();
  if (now > next_ + period_) {
    // A whole frame late: a dropped frame. Re-base, so no burst of catch-up frames follows.
    ++overruns_;
    next_ = now + period_;
    return;
  }
  // Late by less than a frame (the work, or a sleep that woke late): absorbed by not sleeping.
  if (now < next_) std::this_thread::sleep_until(next_);
  next_ += period_;
}

}  // namespace sim::engine
