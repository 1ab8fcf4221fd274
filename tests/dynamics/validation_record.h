// One row of the seed-validation table in docs/validation/README.md, recorded by the test that
// asserts it. scripts/validation-figures.sh runs the validation tests with --gtest_output=json
// and writes the table from these properties, so the "ours" column is what the assertion saw.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace sim::test {

/// printf-style number formatting for the table ("%.3e", 2.7e-4 -> "2.700e-04").
inline std::string fmt(const char* format, double value) {
  const int n = std::snprintf(nullptr, 0, format, value);
  std::string out(static_cast<std::size_t>(n > 0 ? n : 0) + 1, '\0');
  std::snprintf(out.data(), out.size(), format, value);
  out.pop_back();
  return out;
}

/// Records `experiment | paper | ours | tolerance` as the property validation_<n> of the running
/// test (n counts up within the test binary). '|' inside a cell would split the row: replaced.
inline void recordValidation(std::string experiment, std::string paper, std::string ours,
                             std::string tolerance) {
  static int row = 0;
  for (std::string* cell : {&experiment, &paper, &ours, &tolerance})
    std::replace(cell->begin(), cell->end(), '|', '/');
  ::testing::Test::RecordProperty("validation_" + std::to_string(++row),
                                  experiment + " | " + paper + " | " + ours + " | " + tolerance);
  std::printf("validation: %s: paper %s, ours %s (tolerance %s)\n", experiment.c_str(),
              paper.c_str(), ours.c_str(), tolerance.c_str());
}

}  // namespace sim::test
