// What the operator does in a window (keys for the pult, pause, step, reset, and in a replay seek
// and speed), handed from the threads that see it (the view, a window's key thread) to the
// simulation thread, which applies everything queued at the start of its next frame. Events never
// act in the middle of a frame, so a frame's steps see one pult state, as in every headless run.
#pragma once

#include <chrono>
#include <mutex>
#include <utility>
#include <vector>

namespace sim::engine {

struct OperatorEvent {
  enum class Kind {
    Key,          ///< A pult key went down or up (`key`: SDL keycode, `down`).
    AllKeysUp,    ///< The window lost the keyboard (its key-up events go elsewhere).
    TogglePause,  ///< F9.
    StepFrame,    ///< F10: one frame while paused.
    Reset,        ///< F11: back to the start (refused while recording).
    SeekBy,       ///< Replay: move by `value` seconds (negative: back).
    SeekToStart,  ///< Replay: Home.
    SeekToEnd,    ///< Replay: End.
    Faster,       ///< Replay: speed × 2 (up to ×8).
    Slower,       ///< Replay: speed ÷ 2 (down to ×0.25).
  };
  Kind kind = Kind::Key;
  int key = 0;
  bool down = false;
  double value = 0.0;
  /// When the event was seen (the latency figure of bench_realtime runs from here).
  std::chrono::steady_clock::time_point at = std::chrono::steady_clock::now();
};

/// A thread-safe queue of operator events: any thread pushes, the simulation thread takes all.
class OperatorQueue {
 public:
  void push(const OperatorEvent& event) {
    std::lock_guard lock(mutex_);
    events_.push_back(event);
  }
  /// Moves every queued event into `out` (cleared first), in the order pushed.
  void takeAll(std::vector<OperatorEvent>& out) {
    out.clear();
    std::lock_guard lock(mutex_);
    std::swap(out, events_);
  }

 private:
  std::mutex mutex_;
  std::vector<OperatorEvent> events_;
};

}  // namespace sim::engine
