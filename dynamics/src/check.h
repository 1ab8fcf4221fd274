// Internal header, not API: the solver's assertions, at two levels (as Jolt's JPH_ASSERT and
// Box2D's B2_ASSERT / B2_VALIDATE).
//
//   SIM_ASSERT(cond, what)    a cheap invariant, checked in every build: a few comparisons per
//                             step or per substep, never inside a sweep. A failure is a bug (or a
//                             caller breaking the API's contract, e.g. a State of another Model),
//                             not bad input (that is reported, see validate() and Fault): it
//                             prints the condition, `what`, file and line, and aborts, because
//                             going on would read out of bounds or corrupt the state silently.
//   SIM_VALIDATE(cond, what)  heavy validation, compiled only with the CMake option
//                             SIMTRAINER_VALIDATE (scripts/validate.sh builds it and runs the
//                             tests once): finite values after every stage, motor blocks'
//                             K symmetric positive definite (positive pivots), impulses within
//                             their limits. Without the option the condition is not evaluated.
//                             Code that only feeds SIM_VALIDATE goes under `if constexpr
//                             (kValidate)`.
#pragma once

namespace sim::dynamics::detail {

/// Prints the failed assertion to stderr and aborts.
[[noreturn]] void assertionFailed(const char* condition, const char* what, const char* file,
                                  int line);

#if defined(SIMTRAINER_VALIDATE) && SIMTRAINER_VALIDATE
inline constexpr bool kValidate = true;
#else
inline constexpr bool kValidate = false;
#endif

}  // namespace sim::dynamics::detail

#define SIM_ASSERT(cond, what)                                                   \
  do {                                                                           \
    if (!(cond)) [[unlikely]]                                                    \
      ::sim::dynamics::detail::assertionFailed(#cond, what, __FILE__, __LINE__); \
  } while (false)

#define SIM_VALIDATE(cond, what)                                              \
  do {                                                                        \
    if constexpr (::sim::dynamics::detail::kValidate) SIM_ASSERT(cond, what); \
  } while (false)
