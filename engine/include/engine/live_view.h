// A session with a view: the simulation loop (pult, scheme, physics, recording, scenario) runs on
// a thread of its own, paced by the wall clock, and the calling thread draws the newest complete
// snapshot in every window whenever it is ready. Drawing never slows the simulated world: a slow
// view drops frames, it does not stretch time. The simulation never waits for the view and the
// view never blocks the simulation (SnapshotChannel); the windows' keys reach the simulation
// through an OperatorQueue, applied at its next frame start, so the same pult samples give the
// same trace whether a window is open, closed or drawing at 5 frames/s.
#pragma once

#include <engine/frame_snapshot.h>
#include <engine/operator_queue.h>
#include <engine/run.h>
#include <engine/session_view.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace sim::engine {

struct LiveViewOptions {
  /// A PNG of the simulated time `screenshot_at_s` (or of a faulted run's last frame), drawn by
  /// the first window, or by `screenshot_view` when there is none. Empty for none.
  std::string screenshot;
  double screenshot_at_s = 0.0;
  /// Test hook: the view sleeps this long after drawing each frame (a slow view).
  std::chrono::milliseconds draw_delay{0};
};

class LiveView {
 public:
  /// `windows`: the views to draw every frame in (may be empty for a screenshot alone);
  /// `screenshot_view`: an offscreen view for the screenshot when there is no window (may be
  /// null). Each window's keys go to operatorQueue().
  LiveView(std::vector<std::unique_ptr<SessionView>> windows,
           std::unique_ptr<SessionView> screenshot_view, LiveViewOptions options);
  ~LiveView();
  LiveView(const LiveView&) = delete;
  LiveView& operator=(const LiveView&) = delete;

  /// Where the windows' keys go: give it to the loop (RunOptions::operator_events).
  OperatorQueue& operatorQueue() { return queue_; }

  /// The loop's frame observer (runs on the simulation thread): takes a snapshot, lets
  /// `decorate` add to it (a replay's timeline), hands it over; false once every window is
  /// closed, which ends the run.
  FrameObserver observer(std::function<void(FrameSnapshot&)> decorate = {});

  /// Runs `simulate` (which runs a loop with observer()) on a new thread while this thread
  /// draws, until it returns; then draws its last frame and returns what it returned. An
  /// exception it throws is rethrown here, after the thread has ended.
  template <class Simulate>
  auto run(Simulate simulate) -> decltype(simulate()) {
    using Result = decltype(simulate());
    std::optional<Result> result;
    std::exception_ptr error;
    std::thread simulation([&] {
      try {
        result.emplace(simulate());
      } catch (...) {
        error = std::current_exception();
      }
      channel_.close();
    });
    drawUntilClosed();
    simulation.join();
    finishDrawing();
    if (error) std::rethrow_exception(error);
    return std::move(*result);
  }

  /// The view's figures after run(), for RunResult (drawn_frames, draw_time, draw_wall_s).
  void addFigures(RunResult& result) const;
  /// Whether a screenshot was asked for and written; the error if writing it failed.
  bool screenshotTaken() const { return shot_taken_; }
  double screenshotTime() const { return shot_.time_s; }
  const std::string& screenshotError() const { return shot_error_; }
  /// Windows still open.
  std::size_t openWindows() const;
  SessionView* window(std::size_t i) { return i < windows_.size() ? windows_[i].get() : nullptr; }
  std::size_t windowCount() const { return windows_.size(); }
  SessionView* screenshotView() { return screenshot_view_.get(); }

 private:
  void drawUntilClosed();
  void finishDrawing();
  void drawAll(const FrameSnapshot& snapshot);
  void takePendingScreenshot();
  DrawFigures recentFigures() const;

  std::vector<std::unique_ptr<SessionView>> windows_;
  std::unique_ptr<SessionView> screenshot_view_;
  LiveViewOptions options_;
  OperatorQueue queue_;
  SnapshotChannel channel_;
  std::atomic<bool> closed_{false};          // every window closed: the run ends
  std::atomic<bool> wants_contacts_{false};  // a window's debug overlay is on
  // The screenshot's snapshot, kept by the simulation thread when its time comes.
  std::mutex shot_mutex_;
  bool shot_due_ = false;   // simulation side: the snapshot is waiting in shot_
  bool shot_kept_ = false;  // simulation side: already kept one
  FrameSnapshot shot_;
  bool shot_taken_ = false;
  std::string shot_error_;
  // Drawing figures (the view's thread).
  std::chrono::steady_clock::time_point draw_start_{};
  std::chrono::steady_clock::time_point draw_end_{};
  std::uint64_t drawn_frames_ = 0;
  TimingStats draw_time_;
  std::deque<std::pair<std::chrono::steady_clock::time_point, double>> recent_;  // (end, s)
};

}  // namespace sim::engine
