// Reading identification data tables (CSV) for `simtrainer identify`. Lines starting with '#'
// and blank lines are comments; the first other line is the header naming the columns.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace sim::engine {

/// A bad data file: the message names the file, line and column ("FILE:LINE: column NAME: ...").
class IdentifyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct EfficiencyTable {
  std::vector<double> torque_Nm;   ///< Column `torque_Nm`: input torque reduced to the output.
  std::vector<double> efficiency;  ///< Column `efficiency`: η, dimensionless.
};

/// Reads columns `torque_Nm` and `efficiency` (other columns are ignored, any order). Throws
/// IdentifyError for a missing file or column, a non-numeric or non-finite cell, a row with too
/// few cells, a torque ≤ 0, or fewer than 3 data rows.
EfficiencyTable readEfficiencyTable(const std::string& path);

}  // namespace sim::engine
