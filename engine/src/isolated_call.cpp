#include "isolated_call.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <new>

#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sim::engine::detail {
namespace {

// Virtual memory size of this process, bytes (first field of /proc/self/statm, in pages).
std::uint64_t addressSpaceBytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t pages = 0;
  statm >> pages;
  return pages * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

// Lets this process grow by at most `bytes` of address space (0: no limit). Not under
// AddressSanitizer, which reserves terabytes of address space as it goes.
void limitAddressSpace(std::uint64_t bytes) {
#if defined(__SANITIZE_ADDRESS__)
  (void)bytes;
  (void)&addressSpaceBytes;
#else
  if (bytes == 0) return;
  const rlim_t cap = addressSpaceBytes() + bytes;
  const rlimit limit{cap, cap};
  setrlimit(RLIMIT_AS, &limit);
#endif
}

// In the child: limit memory, run the work, write the bytes, leave without running exit handlers
// (they belong to the parent).
[[noreturn]] void childMain(int fd, const std::function<std::string()>& work,
                            const IsolationLimits& limits) {
  limitAddressSpace(limits.memory_bytes);
  std::string out;
  try {
    out = work();
  } catch (...) {
    _exit(3);
  }
  const char* data = out.data();
  std::size_t left = out.size();
  while (left > 0) {
    const ssize_t n = write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(4);
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  _exit(0);
}

std::string describeExit(int status, const IsolationLimits& limits) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "the reader crashed (signal " + std::to_string(sig) + ", " + strsignal(sig) + ")";
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 3) {
    return "the reader failed, most likely out of memory (limit " +
           std::to_string(limits.memory_bytes >> 20) + " MiB)";
  }
  return "the reader process ended with code " + std::to_string(code);
}

}  // namespace

std::string runIsolated(const std::function<std::string()>& work, const IsolationLimits& limits) {
  int fds[2];
  if (pipe(fds) != 0) throw IsolationFailure(std::string("pipe failed: ") + strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    throw IsolationFailure(std::string("fork failed: ") + strerror(errno));
  }
  if (pid == 0) {
    close(fds[0]);
    childMain(fds[1], work, limits);
  }
  close(fds[1]);
  // Read until the child closes its end, within the time limit.
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(limits.seconds);
  std::string out;
  bool timedOut = false;
  char buffer[65536];
  for (;;) {
    int waitMs = -1;
    if (limits.seconds > 0.0) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) {
        timedOut = true;
        break;
      }
      waitMs = static_cast<int>(std::min<std::int64_t>(left.count(), 1 << 30));
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, waitMs);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;  // the deadline check above ends the loop
    const ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  if (timedOut) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timedOut) {
    throw IsolationFailure("the reader took longer than " + std::to_string(limits.seconds) +
                           " s and was stopped");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw IsolationFailure(describeExit(status, limits));
  }
  return out;
}

}  // namespace sim::engine::detail
