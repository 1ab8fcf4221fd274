// Trace files: CSV, one header row, then one row per recorded step. SI units, radians. Columns:
//   time,
//   joint.<name>.angle, joint.<name>.speed                  (per joint; m and m/s for prismatic)
//   motor.<name>.angle, .speed, .voltage, .torque           (per motor; rotor side, u normalised)
//   body.<name>.x, .y, .z, .qw, .qx, .qy, .qz               (per body; centre of mass, world)
// Numbers are written with 17 significant digits so a trace round-trips doubles exactly. Every
// later feature keeps this format (new columns are appended, never reordered).
#pragma once

#include <dynamics/model.h>
#include <dynamics/state.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace sim::engine {

/// A trace file could not be opened or written.
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The column names for a model, in file order.
std::vector<std::string> traceColumns(const dynamics::Model& model);

/// One row of values for a state, parallel to traceColumns().
std::vector<double> traceRow(const dynamics::State& state);

/// Writes a trace file. The header is written on construction; rows as they come.
class TraceWriter {
 public:
  /// Opens (truncates) `path`; throws TraceError naming the path on failure.
  TraceWriter(const std::string& path, const dynamics::Model& model);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  void write(const dynamics::State& state);
  /// Flushes buffered rows to the file; throws TraceError on a write error.
  void flush();
  std::size_t rows() const { return rows_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  std::size_t columns_ = 0;
  std::size_t rows_ = 0;
  std::string line_;  // reused row buffer
};

}  // namespace sim::engine
