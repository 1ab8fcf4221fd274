// Pins engine/src/isolated_call.cpp: results cross the pipe intact; a crash, a runaway allocation
// and a hang in the child each become an IsolationFailure saying which.
#include "isolated_call.h"

#include <gtest/gtest.h>

#include <csignal>
#include <string>
#include <thread>
#include <vector>

namespace sim::engine::detail {
namespace {

std::string failure(const std::function<std::string()>& work, const IsolationLimits& limits) {
  try {
    runIsolated(work, limits);
  } catch (const IsolationFailure& e) {
    return e.what();
  }
  return "";
}

TEST(IsolatedCall, ReturnsTheChildsBytes) {
  // 3 MB: larger than a pipe buffer, so the parent must read while the child writes.
  std::string expected(3'000'000, '\0');
  for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = static_cast<char>(i * 7);
  EXPECT_EQ(runIsolated([&] { return expected; }, {1ull << 30, 30.0}), expected);
  EXPECT_EQ(runIsolated([] { return std::string(); }, {}), "");
}

TEST(IsolatedCall, CrashIsReported) {
  const std::string message = failure(
      []() -> std::string {
        std::raise(SIGSEGV);
        return "unreachable";
      },
      {});
#if defined(__SANITIZE_ADDRESS__)  // AddressSanitizer catches the signal, reports and exits
  EXPECT_NE(message.find("the reader process ended with code"), std::string::npos) << message;
#else
  EXPECT_NE(message.find("the reader crashed (signal 11"), std::string::npos) << message;
#endif
}

TEST(IsolatedCall, MemoryLimitIsEnforced) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "no address-space limit under AddressSanitizer";
#endif
  const std::string message = failure(
      [] {
        std::vector<std::vector<char>> hog;
        for (int i = 0; i < 64; ++i) hog.emplace_back(64u << 20, 'x');  // 4 GiB in all
        return std::string("survived");
      },
      {256ull << 20, 30.0});
  EXPECT_NE(message.find("out of memory (limit 256 MiB)"), std::string::npos) << message;
}

TEST(IsolatedCall, TimeLimitStopsAHang) {
  const std::string message = failure(
      [] {
        std::this_thread::sleep_for(std::chrono::seconds(30));
        return std::string("woke");
      },
      {0, 0.3});
  EXPECT_NE(message.find("took longer than 0.3"), std::string::npos) << message;
}

}  // namespace
}  // namespace sim::engine::detail
