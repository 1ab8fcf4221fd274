// The solver's assertions (check.h).
#include "check.h"

#include <cstdio>
#include <cstdlib>

namespace sim::dynamics::detail {

void assertionFailed(const char* condition, const char* what, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: simtrainer dynamics: %s (assertion failed: %s)\n", file, line, what,
               condition);
  std::fflush(stderr);
  std::abort();
}

}  // namespace sim::dynamics::detail
