#include <engine/live_view.h>

#include <render/view.h>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <optional>

namespace sim::engine {

namespace {
using Clock = std::chrono::steady_clock;
// How long the view waits for a new snapshot before it redraws the last one, so that its window
// stays responsive (moves, resizes, closes) while the simulation is stopped by a debugger.
constexpr std::chrono::milliseconds kIdleRedraw{100};
}  // namespace

LiveView::LiveView(std::vector<std::unique_ptr<SessionView>> windows,
                   std::unique_ptr<SessionView> screenshot_view, LiveViewOptions options)
    : windows_(std::move(windows)),
      screenshot_view_(std::move(screenshot_view)),
      options_(std::move(options)) {
  for (const auto& window : windows_) window->setOperatorQueue(&queue_);
}

LiveView::~LiveView() {
  for (const auto& window : windows_) {
    if (window) window->setOperatorQueue(nullptr);
  }
}

FrameObserver LiveView::observer(std::function<void(FrameSnapshot&)> decorate) {
  return [this, decorate = std::move(decorate)](const Session& session, const RunResult& so_far,
                                                const std::vector<std::string>& notes) {
    FrameSnapshot& snapshot = channel_.back();
    takeSnapshot(session, so_far, notes, wants_contacts_.load(), snapshot);
    if (decorate) decorate(snapshot);
    if (!options_.screenshot.empty()) {
      std::lock_guard lock(shot_mutex_);
      if (!shot_kept_ && (session.time() >= options_.screenshot_at_s - 1e-9 || so_far.fault)) {
        shot_ = snapshot;
        shot_kept_ = true;
        shot_due_ = true;
      }
    }
    channel_.publish();
    return !closed_.load();
  };
}

std::size_t LiveView::openWindows() const {
  return static_cast<std::size_t>(
      std::count_if(windows_.begin(), windows_.end(), [](const auto& w) { return w != nullptr; }));
}

DrawFigures LiveView::recentFigures() const {
  DrawFigures figures;
  if (recent_.empty()) return figures;
  std::vector<double> times;
  times.reserve(recent_.size());
  double sum = 0.0;
  for (const auto& [end, seconds] : recent_) {
    times.push_back(seconds);
    sum += seconds;
  }
  const double span =
      std::chrono::duration<double>(recent_.back().first - recent_.front().first).count();
  figures.frames_per_second = span > 0.0 ? static_cast<double>(recent_.size() - 1) / span : 0.0;
  figures.mean_ms = 1e3 * sum / static_cast<double>(times.size());
  const auto rank =
      static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(times.size()))) - 1;
  std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(rank), times.end());
  figures.p99_ms = 1e3 * times[rank];
  return figures;
}

void LiveView::drawAll(const FrameSnapshot& snapshot) {
  if (windows_.empty()) return;
  const auto start = Clock::now();
  if (drawn_frames_ == 0) draw_start_ = start;
  const DrawFigures figures = recentFigures();
  bool contacts = false;
  for (auto& window : windows_) {
    if (!window) continue;
    window->setDrawFigures(figures);
    window->show(snapshot);
    if (window->closed()) {
      window.reset();  // its OS window goes; the others stay
      continue;
    }
    contacts = contacts || window->wantsContacts();
  }
  wants_contacts_.store(contacts);
  const auto end = Clock::now();
  const double seconds = std::chrono::duration<double>(end - start).count();
  draw_time_.add(seconds);
  ++drawn_frames_;
  draw_end_ = end;
  recent_.emplace_back(end, seconds);
  while (recent_.size() > 2 && end - recent_.front().first > std::chrono::seconds(1))
    recent_.pop_front();
  if (openWindows() == 0) closed_.store(true);
  if (options_.draw_delay.count() > 0) std::this_thread::sleep_for(options_.draw_delay);
}

void LiveView::takePendingScreenshot() {
  if (options_.screenshot.empty() || shot_taken_) return;
  {
    std::lock_guard lock(shot_mutex_);
    if (!shot_due_) return;
    shot_due_ = false;
  }
  SessionView* view = screenshot_view_.get();
  for (auto& window : windows_) {
    if (view == nullptr && window) view = window.get();
  }
  if (view == nullptr) return;
  try {
    render::writePng(view->capture(shot_), options_.screenshot);
    shot_taken_ = true;
  } catch (const render::RenderError& e) {
    shot_error_ = e.what();
    shot_taken_ = true;  // reported, not retried
  }
}

namespace {

// While the view draws, its thread yields the CPU to the simulation thread: under software
// rendering drawing keeps a core busy, and on a busy machine the simulation thread then waited
// for a CPU when its frame was due (bench_realtime: key-to-voltage latency p99 a few ms past a
// frame). A higher nice value needs no privilege; on Linux it applies to this thread only. The
// window's key threads already run and keep theirs. Put back when drawing ends.
class LowerDrawingPriority {
 public:
  static constexpr int kNiceIncrement = 5;
  LowerDrawingPriority() {
    errno = 0;
    const int nice = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
    if (errno != 0) return;
    if (setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), nice + kNiceIncrement) == 0)
      old_ = nice;
  }
  ~LowerDrawingPriority() {
    // Lowering the nice value back may need privilege; if refused, the thread stays polite.
    if (old_) setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), *old_);
  }
  LowerDrawingPriority(const LowerDrawingPriority&) = delete;
  LowerDrawingPriority& operator=(const LowerDrawingPriority&) = delete;

 private:
  std::optional<int> old_;
};

}  // namespace

void LiveView::drawUntilClosed() {
  const LowerDrawingPriority polite;
  for (;;) {
    const bool fresh = channel_.take(kIdleRedraw);
    takePendingScreenshot();
    if (fresh) {
      drawAll(channel_.front());
    } else if (channel_.closed()) {
      return;
    } else if (drawn_frames_ > 0) {
      drawAll(channel_.front());  // keeps the windows responding
    }
  }
}

void LiveView::finishDrawing() {
  // The run's last frame, if the loop published one after the view's last take.
  if (channel_.take(std::chrono::milliseconds(0))) drawAll(channel_.front());
  takePendingScreenshot();
}

void LiveView::addFigures(RunResult& result) const {
  result.drawn_frames = drawn_frames_;
  result.draw_time = draw_time_;
  result.draw_wall_s =
      drawn_frames_ > 1 ? std::chrono::duration<double>(draw_end_ - draw_start_).count() : 0.0;
}

}  // namespace sim::engine
