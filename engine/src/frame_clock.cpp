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

FramePacer::FramePacer(double frame_period_s, bool realtime, double max_lag_s)
    : period_(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(frame_period_s))),
      max_lag_(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(max_lag_s))),
      realtime_(realtime),
      next_(Clock::now() + period_),
      frame_start_(Clock::now()) {}

void FramePacer::beginFrame() { frame_start_ = Clock::now(); }

void FramePacer::endFrame() {
  if (!realtime_) return;
  const Clock::time_point now = Clock::now();
  if (now - frame_start_ > period_) {
    ++overruns_;  // the frame's own work missed its slot
    trouble_ = now;
  }
  if (now < next_) {
    late_ = false;
    std::this_thread::sleep_until(next_);
    next_ += period_;
    return;
  }
  const Clock::duration lag = now - next_;
  if (lag > max_lag_) {
    // Too far behind to catch up without a burst the operator would see: give the time up.
    ++resyncs_;
    lost_s_ += std::chrono::duration<double>(lag).count();
    trouble_ = now;
    next_ = now + period_;
    late_ = true;
    return;
  }
  // Behind by less than the bounded lag: the next frame starts at once.
  next_ += period_;
  late_ = lag > period_;
  if (late_) trouble_ = now;
}

bool FramePacer::behind() const {
  if (!realtime_) return false;
  return late_ || (trouble_ != Clock::time_point{} && Clock::now() - trouble_ < std::chrono::seconds(1));
}

}  // namespace sim::engine
