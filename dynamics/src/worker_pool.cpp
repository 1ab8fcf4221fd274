#include "worker_pool.h"

#include <chrono>
#include <stdexcept>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace sim::dynamics::detail {

namespace {

void relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

using Clock = std::chrono::steady_clock;

/// How long an idle worker spins before it sleeps: longer than the gaps between the parallel
/// sets of one step, much shorter than the wait for the next step at real time.
constexpr auto kSpin = std::chrono::microseconds(200);

}  // namespace

WorkerPool::~WorkerPool() {
  stop();
}

void WorkerPool::stop() {
  if (workers_.empty()) return;
  stopping_.store(true, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
  slots_.reset();
  stopping_.store(false, std::memory_order_relaxed);
}

void WorkerPool::resize(int threads) {
  if (threads < 1) throw std::invalid_argument("WorkerPool: threads must be at least 1");
  if (threads == this->threads()) return;
  stop();
  const int workers = threads - 1;
  slots_ = std::make_unique<Slot[]>(static_cast<std::size_t>(workers));
  const std::uint32_t now = generation_.load(std::memory_order_relaxed);
  for (int w = 0; w < workers; ++w) slots_[w].done.store(now, std::memory_order_relaxed);
  workers_.reserve(static_cast<std::size_t>(workers));
  for (int w = 0; w < workers; ++w) workers_.emplace_back([this, w] { workerLoop(w); });
}

void WorkerPool::runShare(int thread, std::exception_ptr& error) noexcept {
  const int threads = this->threads();
  const int first = static_cast<int>(static_cast<long long>(count_) * thread / threads);
  const int last = static_cast<int>(static_cast<long long>(count_) * (thread + 1) / threads);
  try {
    for (int i = first; i < last; ++i) call_(task_, i);
  } catch (...) {
    error = std::current_exception();
  }
}

void WorkerPool::runErased(int count, void (*call)(void*, int), void* task) {
  call_ = call;
  task_ = task;
  count_ = count;
  const std::uint32_t g = generation_.fetch_add(1, std::memory_order_release) + 1;
  generation_.notify_all();
  std::exception_ptr error;
  runShare(0, error);
  for (std::size_t w = 0; w < workers_.size(); ++w) {
    Slot& slot = slots_[w];
    for (int spins = 0; slot.done.load(std::memory_order_acquire) != g; ++spins)
      if (spins < 4096) {
        relax();
      } else {
        std::this_thread::yield();  // the worker was descheduled: give it the core
      }
    if (slot.error && !error) error = slot.error;
    slot.error = nullptr;
  }
  if (error) std::rethrow_exception(error);
}

void waitAtLeast(const std::atomic<int>& value, int at_least) {
  for (int spins = 0; value.load(std::memory_order_acquire) < at_least; ++spins)
    if (spins < 4096) {
      relax();
    } else {
      std::this_thread::yield();
    }
}

void WorkerPool::workerLoop(int worker) {
  Slot& slot = slots_[worker];
  std::uint32_t seen = slot.done.load(std::memory_order_relaxed);
  for (;;) {
    std::uint32_t g = generation_.load(std::memory_order_acquire);
    if (g == seen) {
      const auto spin_end = Clock::now() + kSpin;
      for (int spins = 1; (g = generation_.load(std::memory_order_acquire)) == seen; ++spins) {
        if (spins % 64 != 0 || Clock::now() < spin_end) {
          relax();
        } else {
          generation_.wait(seen, std::memory_order_acquire);
        }
      }
    }
    seen = g;
    if (stopping_.load(std::memory_order_relaxed)) return;
    runShare(worker + 1, slot.error);
    slot.done.store(g, std::memory_order_release);
  }
}

}  // namespace sim::dynamics::detail
