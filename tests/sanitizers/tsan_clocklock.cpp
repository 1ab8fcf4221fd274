// ThreadSanitizer builds only (SIMTRAINER_SANITIZE=thread; cmake/SimtrainerOptions.cmake links
// this file into every executable and exports the symbol).
//
// Why: GCC 12.2's libtsan (Debian 12 libtsan2 12.2.0-14) intercepts pthread_mutex_timedlock but
// not pthread_mutex_clocklock (glibc 2.30+; `nm -D` of libtsan.so shows only the first).
// libstdc++ 12 inlines std::timed_mutex / recursive_timed_mutex::try_lock_until with a
// steady_clock deadline as pthread_mutex_clocklock(CLOCK_MONOTONIC), and Fast DDS 2.9.1 (Debian
// 12 libfastrtps2.9) is full of those: it imports pthread_mutex_clocklock@GLIBC_2.34. TSan then
// never sees those acquisitions, only the releases (pthread_mutex_unlock is intercepted): without
// this file the net tests stop on "unlock of an unlocked mutex" in StatelessWriter::send_nts, and
// what such a lock orders is not ordered for TSan.
//
// How: defined in the executable and exported, this definition comes first in the global lookup
// scope, so Fast DDS's versioned import binds to it (an unversioned definition satisfies a
// versioned reference), as LD_PRELOAD would. It forwards to pthread_mutex_timedlock, which TSan
// intercepts, with the deadline moved to CLOCK_REALTIME. The one difference to the real call: a
// step of the wall clock while waiting moves the deadline (irrelevant for a test run).
#include <pthread.h>

#include <cerrno>
#include <ctime>
#include <limits>

namespace {

constexpr long kNanosecondsPerSecond = 1'000'000'000L;

// `deadline` on `from` as the same instant on `to` (saturating instead of overflowing).
timespec convert(const timespec& deadline, clockid_t from, clockid_t to) {
  timespec now_from{}, now_to{};
  clock_gettime(from, &now_from);
  clock_gettime(to, &now_to);
  time_t sec = 0;
  long nsec = deadline.tv_nsec - now_from.tv_nsec + now_to.tv_nsec;
  if (__builtin_sub_overflow(deadline.tv_sec, now_from.tv_sec, &sec) ||
      __builtin_add_overflow(sec, now_to.tv_sec, &sec)) {
    return deadline.tv_sec > now_from.tv_sec ? timespec{std::numeric_limits<time_t>::max(), 0}
                                             : timespec{0, 0};
  }
  while (nsec < 0) {
    nsec += kNanosecondsPerSecond;
    --sec;
  }
  while (nsec >= kNanosecondsPerSecond) {
    nsec -= kNanosecondsPerSecond;
    ++sec;
  }
  return timespec{sec, nsec};
}

}  // namespace

// Default visibility: the project builds with -fvisibility=hidden, which would keep it local.
extern "C" __attribute__((visibility("default"))) int pthread_mutex_clocklock(
    pthread_mutex_t* mutex, clockid_t clock, const timespec* deadline) noexcept {
  if (clock == CLOCK_REALTIME) return pthread_mutex_timedlock(mutex, deadline);
  if (clock != CLOCK_MONOTONIC) return EINVAL;  // glibc accepts only these two
  // An invalid deadline goes through unchanged: timedlock then answers as clocklock would (the
  // lock when it is free, EINVAL when it would have to wait).
  if (deadline->tv_nsec < 0 || deadline->tv_nsec >= kNanosecondsPerSecond)
    return pthread_mutex_timedlock(mutex, deadline);
  const timespec realtime = convert(*deadline, CLOCK_MONOTONIC, CLOCK_REALTIME);
  return pthread_mutex_timedlock(mutex, &realtime);
}
