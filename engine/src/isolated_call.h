// Internal to the engine library, not API: runs a function in a forked child process under an
// address-space and a time limit, and returns the bytes it produced. Used to read untrusted model
// files: a reader that exhausts memory, loops or crashes takes down only the child.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

namespace sim::engine::detail {

/// The child did not deliver: it crashed, ran out of time or memory. what() says which.
class IsolationFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct IsolationLimits {
  std::uint64_t memory_bytes = 0;  ///< Address space the child may add to the parent's; 0: none.
  double seconds = 0.0;            ///< Wall-clock limit; 0: none.
};

/// Runs `work` in a child process and returns its result. `work` must not throw; anything it
/// needs to report goes into the returned bytes. Throws IsolationFailure when the child dies,
/// exceeds the time limit or cannot be started.
std::string runIsolated(const std::function<std::string()>& work, const IsolationLimits& limits);

}  // namespace sim::engine::detail
