#include <engine/identify_csv.h>

#include <charconv>
#include <cmath>
#include <fstream>
#include <string_view>

namespace sim::engine {

namespace {

std::string trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r");
  return std::string(s.substr(first, last - first + 1));
}

std::vector<std::string> splitCells(const std::string& line) {
  std::vector<std::string> cells;
  std::size_t start = 0;
  while (true) {
    const auto comma = line.find(',', start);
    cells.push_back(trim(std::string_view(line).substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return cells;
}

}  // namespace

EfficiencyTable readEfficiencyTable(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw IdentifyError(path + ": cannot open the file");
  const std::vector<std::string> wanted = {"torque_Nm", "efficiency"};
  std::vector<int> columnOf(wanted.size(), -1);
  std::size_t headerCells = 0;
  bool haveHeader = false;
  EfficiencyTable table;
  std::string line;
  int lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    const std::string text = trim(line);
    if (text.empty() || text.front() == '#') continue;
    const auto cells = splitCells(text);
    const std::string where = path + ":" + std::to_string(lineNo);
    if (!haveHeader) {
      haveHeader = true;
      headerCells = cells.size();
      for (std::size_t w = 0; w < wanted.size(); ++w) {
        for (std::size_t c = 0; c < cells.size(); ++c) {
          if (cells[c] == wanted[w]) columnOf[w] = static_cast<int>(c);
        }
        if (columnOf[w] < 0) {
          throw IdentifyError(where + ": header has no column '" + wanted[w] +
                              "' (header: " + text + "; need columns torque_Nm,efficiency)");
        }
      }
      continue;
    }
    if (cells.size() != headerCells) {
      throw IdentifyError(where + ": " + std::to_string(cells.size()) + " cells, the header has " +
                          std::to_string(headerCells));
    }
    double values[2] = {0.0, 0.0};
    for (std::size_t w = 0; w < wanted.size(); ++w) {
      const std::string& cell = cells[static_cast<std::size_t>(columnOf[w])];
      const std::string colWhere =
          where + ": column " + std::to_string(columnOf[w] + 1) + " '" + wanted[w] + "'";
      double v = 0.0;
      const auto [ptr, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
      if (cell.empty() || ec != std::errc() || ptr != cell.data() + cell.size() ||
          !std::isfinite(v)) {
        throw IdentifyError(colWhere + ": '" + cell + "' is not a finite number");
      }
      values[w] = v;
    }
    if (!(values[0] > 0.0)) {
      throw IdentifyError(where + ": column " + std::to_string(columnOf[0] + 1) +
                          " 'torque_Nm': torque must be > 0 N m (eq. 27 divides by it), got " +
                          cells[static_cast<std::size_t>(columnOf[0])]);
    }
    table.torque_Nm.push_back(values[0]);
    table.efficiency.push_back(values[1]);
  }
  if (!haveHeader)
    throw IdentifyError(path + ": no header line (need columns torque_Nm,efficiency)");
  if (table.torque_Nm.size() < 3) {
    throw IdentifyError(path + ": " + std::to_string(table.torque_Nm.size()) +
                        " data rows; need at least 3 to fit K_ML and M_C with confidence "
                        "intervals");
  }
  return table;
}

}  // namespace sim::engine
