// Internal header, not API: the threads a step may use.
//
// A step's parallel parts are sets of independent tasks (the bodies to integrate, the pairs of
// the narrow phase), or one task per thread for the contact sweeps, whose threads wait for each
// other's levels where their manifolds share a body (ContactBatches): no task reads what another
// writes at the same time. So which thread runs which task changes no bit of the result, and the
// same step gives the same state with one thread or several. The pool only divides a set among
// its threads and waits for the last.
//
// The stages give each thread the same bodies and the manifolds on them (bodyThread,
// ownerThread): on this kind of virtual machine a cache line that the other processor wrote last
// costs far more to reach than one of its own, and the step went slower with two threads than
// with one while each stage cut its work differently.
//
// Each set is split statically: thread t of T runs the contiguous tasks [n t / T, n (t + 1) / T).
// The caller is thread 0; workers spin briefly between sets (the sets of one step follow each
// other within microseconds) and then sleep on a futex (std::atomic::wait) until the next step.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

namespace sim::dynamics::detail {

class WorkerPool {
 public:
  WorkerPool() = default;
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  /// Threads to use, the caller's included (>= 1; 1: no worker thread).
  void resize(int threads);
  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  /// Calls task(i) for every i in [0, count), spread over the threads; returns when all have
  /// run. An exception from a task is rethrown here (the first one).
  template <class Task>
  void run(int count, Task&& task) {
    if (workers_.empty() || count <= 1) {
      for (int i = 0; i < count; ++i) task(i);
      return;
    }
    using T = std::remove_reference_t<Task>;
    runErased(
        count, [](void* t, int i) { (*static_cast<T*>(t))(i); }, &task);
  }

 private:
  struct alignas(64) Slot {
    std::atomic<std::uint32_t> done{0};  ///< The last generation this worker finished.
    std::exception_ptr error;
  };
  void runErased(int count, void (*call)(void*, int), void* task);
  void runShare(int thread, std::exception_ptr& error) noexcept;
  void workerLoop(int worker);
  void stop();

  // The set being run: written by the caller only while every worker is idle.
  void (*call_)(void*, int) = nullptr;
  void* task_ = nullptr;
  int count_ = 0;
  alignas(64) std::atomic<std::uint32_t> generation_{0};
  std::atomic<bool> stopping_{false};
  std::unique_ptr<Slot[]> slots_;
  std::vector<std::thread> workers_;
};

/// Waits until `value` is at least `at_least`: spins, then yields the core (the thread it waits for
/// may have been descheduled).
void waitAtLeast(const std::atomic<int>& value, int at_least);

}  // namespace sim::dynamics::detail
