// Internal header, not API: a worker thread that writes the newest of a stream of values.
#pragma once

#include <engine/frame_clock.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace sim::engine {

/// Writes values on a thread of its own, so the producer (the server's frame loop) never waits
/// for the write (a DataWriter sending to every station). One slot, latest wins, like a
/// keep-last-1 best-effort topic: a value still waiting when the next is posted is replaced and
/// counted. Stopping writes what is waiting, then joins.
template <class T>
class LatestWriter {
 public:
  explicit LatestWriter(std::function<void(const T&)> write)
      : write_(std::move(write)), thread_([this] { loop(); }) {}
  ~LatestWriter() { stop(); }
  LatestWriter(const LatestWriter&) = delete;
  LatestWriter& operator=(const LatestWriter&) = delete;

  /// Hands the value over (swapped, so both sides keep their buffers' capacity).
  void post(T& value) {
    {
      std::lock_guard lock(mutex_);
      if (pending_) ++superseded_;
      std::swap(slot_, value);
      pending_ = true;
    }
    wake_.notify_one();
  }

  /// Asks the thread to finish: it writes the value waiting, if any, and ends. Does not wait.
  void requestStop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_one();
  }

  /// requestStop() and waits for the thread. After it, the counters below are final.
  void stop() {
    requestStop();
    if (thread_.joinable()) thread_.join();
  }

  /// The writes' durations (s) and how many values were replaced before being written; read
  /// them after stop().
  const TimingStats& writeTimes() const { return write_times_; }
  std::uint64_t superseded() const { return superseded_; }

 private:
  void loop() {
    T value;
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [this] { return pending_ || stopping_; });
        if (!pending_) return;  // stopping, and nothing is left to write
        std::swap(value, slot_);
        pending_ = false;
      }
      const auto start = std::chrono::steady_clock::now();
      write_(value);
      write_times_.add(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  }

  std::function<void(const T&)> write_;
  std::mutex mutex_;
  std::condition_variable wake_;
  T slot_{};
  bool pending_ = false;
  bool stopping_ = false;
  std::uint64_t superseded_ = 0;
  TimingStats write_times_;  // the writer thread's until joined
  std::thread thread_;       // last: starts once everything it uses exists
};

}  // namespace sim::engine
