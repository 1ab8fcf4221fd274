// Trace files: CSV, one header row, then one row per recorded step. SI units, radians. Columns:
//   time,
//   joint.<name>.angle, joint.<name>.speed                  (per joint; m and m/s for prismatic)
//   motor.<name>.angle, .speed, .voltage, .torque           (per motor; rotor side, u normalised)
//   body.<name>.x, .y, .z, .qw, .qx, .qy, .qz               (per body; centre of mass, world)
//   solver.velocity.end, .iterations, .residual             (the step's velocity solve)
//   solver.position.end, .iterations, .residual             (the step's position solve)
//   scheme.<block>                                          (blocks named by the scene's
//                                                           `trace: {scheme: [...]}`, in order)
// The solver's columns are the StepReport of the step that produced the row: end 0 no work,
// 1 tolerance, 2 iteration cap (dynamics::SolveEnd); the velocity residual is the last sweep's
// largest impulse change (N s or N m s), the position residual the last pass's largest error (m or
// rad). The initial row (before any step) has 0 in each.
// Numbers are written with 17 significant digits so a trace round-trips doubles exactly. Every
// later feature keeps this format (new columns are appended, never reordered).
#pragma once

#include <dynamics/model.h>
#include <dynamics/simulator.h>
#include <dynamics/state.h>
#include <engine/scene.h>
#include <engine/scheme.h>

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

/// One row of values for a state and the report of the step that produced it (a default
/// StepReport for the initial state), parallel to traceColumns().
std::vector<double> traceRow(const dynamics::State& state, const dynamics::StepReport& report);

/// A session's columns: the model's, then `scheme.<block>` for each block of the scene's
/// `trace: {scheme: [...]}` (docs/scenes.md, "trace").
std::vector<std::string> traceColumns(const Scene& scene);

/// A session's row, parallel to traceColumns(scene): the blocks' outputs of the scheme's last
/// evaluation (the one that drove the step).
std::vector<double> traceRow(const Scene& scene, const dynamics::State& state,
                             const dynamics::StepReport& report, const SchemeState& scheme);

/// Writes a trace file. The header is written on construction; rows as they come.
class TraceWriter {
 public:
  /// Opens (truncates) `path`; throws TraceError naming the path on failure.
  TraceWriter(const std::string& path, const dynamics::Model& model);
  TraceWriter(const std::string& path, const std::vector<std::string>& columns);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  void write(const dynamics::State& state, const dynamics::StepReport& report);
  /// One row of as many values as there are columns.
  void writeRow(const std::vector<double>& row);
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
