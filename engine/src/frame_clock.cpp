#include <engine/frame_clock.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <thread>

namespace sim::engine {

namespace {
constexpr double kGrowth = 1.01;  // each bucket 1 % wider than the last
}  // namespace

TimingStats::TimingStats(double lowest, double highest)
    : lowest_(lowest),
      bucket_count_(
          static_cast<std::size_t>(std::ceil(std::log(highest / lowest) / std::log(kGrowth))) + 1) {
}

std::size_t TimingStats::bucketOf(double value) const {
  if (!(value > lowest_)) return 0;
  const double b = std::ceil(std::log(value / lowest_) / std::log(kGrowth));
  return std::min(bucket_count_ - 1, static_cast<std::size_t>(b));
}

void TimingStats::add(double seconds) {
  ++count_;
  sum_ += seconds;
  max_ = count_ == 1 ? seconds : std::max(max_, seconds);
  if (buckets_.empty() && samples_.size() < kExact) {
    samples_.push_back(seconds);
    return;
  }
  if (buckets_.empty()) {
    buckets_.assign(bucket_count_, 0);
    for (const double s : samples_) ++buckets_[bucketOf(s)];
    samples_.clear();
    samples_.shrink_to_fit();
  }
  ++buckets_[bucketOf(seconds)];
}

double TimingStats::quantile(double q) const {
  if (count_ == 0) return 0.0;
  const auto rank = std::max<std::size_t>(
      1, static_cast<std::size_t>(std::ceil(q * static_cast<double>(count_))));
  if (buckets_.empty()) {
    std::vector<double> sorted = samples_;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(rank - 1),
                     sorted.end());
    return sorted[rank - 1];
  }
  std::size_t seen = 0;
  for (std::size_t b = 0; b < bucket_count_; ++b) {
    seen += buckets_[b];
    if (seen >= rank) return std::min(max_, lowest_ * std::pow(kGrowth, static_cast<double>(b)));
  }
  return max_;
}

FramePacer::FramePacer(double frame_period_s, bool realtime, double max_lag_s)
    : period_(std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(frame_period_s))),
      max_lag_(
          std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(max_lag_s))),
      realtime_(realtime),
      next_(Clock::now() + period_),
      frame_start_(Clock::now()) {}

void FramePacer::beginFrame() {
  frame_start_ = Clock::now();
}

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
  return late_ ||
         (trouble_ != Clock::time_point{} && Clock::now() - trouble_ < std::chrono::seconds(1));
}

}  // namespace sim::engine
