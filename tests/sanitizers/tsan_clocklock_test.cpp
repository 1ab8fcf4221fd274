// The pthread_mutex_clocklock forwarder of ThreadSanitizer builds (tsan_clocklock.cpp): it is what
// a shared library's import of the function binds to, it keeps clocklock's meaning, and TSan sees
// the locks taken through it (libstdc++'s timed mutexes, as Fast DDS 2.9 uses them).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <pthread.h>

#include <cerrno>
#include <chrono>
#include <latch>
#include <mutex>
#include <thread>

namespace {

using Clock = std::chrono::steady_clock;

timespec in(clockid_t clock, std::chrono::milliseconds delay) {
  timespec t{};
  clock_gettime(clock, &t);
  const long long ns = t.tv_nsec + static_cast<long long>(delay.count()) * 1'000'000;
  t.tv_sec += static_cast<time_t>(ns / 1'000'000'000);
  t.tv_nsec = static_cast<long>(ns % 1'000'000'000);
  return t;
}

// A mutex another thread holds for `hold` from construction on.
class Held {
 public:
  explicit Held(std::chrono::milliseconds hold) {
    std::latch locked(1);
    holder_ = std::thread([this, hold, &locked] {
      pthread_mutex_lock(&mutex_);
      locked.count_down();
      std::this_thread::sleep_for(hold);
      pthread_mutex_unlock(&mutex_);
    });
    locked.wait();
  }
  Held(const Held&) = delete;
  Held& operator=(const Held&) = delete;
  ~Held() { holder_.join(); }
  pthread_mutex_t* get() { return &mutex_; }

 private:
  pthread_mutex_t mutex_ = PTHREAD_MUTEX_INITIALIZER;
  std::thread holder_;
};

}  // namespace

TEST(TsanClocklock, SharedLibrariesImportTheForwarderNotGlibcs) {
  // RTLD_DEFAULT searches the global scope, where Fast DDS's import of the symbol is bound.
  void* global = dlsym(RTLD_DEFAULT, "pthread_mutex_clocklock");
  EXPECT_EQ(global, reinterpret_cast<void*>(&pthread_mutex_clocklock));
  void* libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  ASSERT_NE(libc, nullptr);
  void* glibcs = dlsym(libc, "pthread_mutex_clocklock");
  ASSERT_NE(glibcs, nullptr);
  EXPECT_NE(global, glibcs);
  dlclose(libc);
}

TEST(TsanClocklock, KeepsTheDeadlineOnItsClock) {
  pthread_mutex_t free_mutex = PTHREAD_MUTEX_INITIALIZER;
  // A free mutex is taken even with a deadline already past.
  const timespec past = in(CLOCK_MONOTONIC, std::chrono::milliseconds(-1000));
  ASSERT_EQ(pthread_mutex_clocklock(&free_mutex, CLOCK_MONOTONIC, &past), 0);
  pthread_mutex_unlock(&free_mutex);
  // Held by another thread for 2 s: a monotonic and a wall-clock deadline 200 ms ahead each time
  // out after 200 ms (not at once, not after the holder lets go).
  for (const clockid_t clock : {CLOCK_MONOTONIC, CLOCK_REALTIME}) {
    Held held(std::chrono::milliseconds(2000));
    const auto start = Clock::now();
    const timespec deadline = in(clock, std::chrono::milliseconds(200));
    EXPECT_EQ(pthread_mutex_clocklock(held.get(), clock, &deadline), ETIMEDOUT) << clock;
    const auto waited = Clock::now() - start;
    EXPECT_GE(waited, std::chrono::milliseconds(195)) << clock;  // clock granularity
    EXPECT_LT(waited, std::chrono::milliseconds(1900)) << clock;
  }
  {
    // Released after 100 ms, well before a 10 s deadline: taken then.
    Held held(std::chrono::milliseconds(100));
    const auto start = Clock::now();
    const timespec deadline = in(CLOCK_MONOTONIC, std::chrono::milliseconds(10000));
    EXPECT_EQ(pthread_mutex_clocklock(held.get(), CLOCK_MONOTONIC, &deadline), 0);
    EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(5000));
    pthread_mutex_unlock(held.get());
  }
  // glibc takes only these two clocks.
  const timespec any = in(CLOCK_MONOTONIC, std::chrono::milliseconds(10));
  EXPECT_EQ(pthread_mutex_clocklock(&free_mutex, CLOCK_PROCESS_CPUTIME_ID, &any), EINVAL);
}

// libstdc++ 12 compiles try_lock_until(steady_clock) to pthread_mutex_clocklock. Were that call
// invisible to TSan (glibc's own), the unlock below would be reported as the unlock of an unlocked
// mutex and the counter's increments as a race: this test would fail (halt_on_error, or exit 66).
TEST(TsanClocklock, ThreadSanitizerSeesTheLocksItTakes) {
  std::timed_mutex mutex;
  long counter = 0;
  auto add = [&] {
    for (int i = 0; i < 1000; ++i) {
      ASSERT_TRUE(mutex.try_lock_until(Clock::now() + std::chrono::seconds(10)));
      ++counter;
      mutex.unlock();
    }
  };
  std::thread other(add);
  add();
  other.join();
  EXPECT_EQ(counter, 2000);
}
