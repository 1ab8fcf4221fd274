#include <engine/trace.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <iterator>
#include <stdexcept>

namespace sim::engine {

std::vector<std::string> traceColumns(const dynamics::Model& model) {
  std::vector<std::string> columns{"time"};
  for (const auto& joint : model.joints) {
    for (const char* field : {"angle", "speed"}) {
      columns.push_back(fmt::format("joint.{}.{}", joint.name, field));
    }
  }
  for (const auto& motor : model.motors) {
    for (const char* field : {"angle", "speed", "voltage", "torque"}) {
      columns.push_back(fmt::format("motor.{}.{}", motor.name, field));
    }
  }
  for (const auto& body : model.bodies) {
    for (const char* field : {"x", "y", "z", "qw", "qx", "qy", "qz"}) {
      columns.push_back(fmt::format("body.{}.{}", body.name, field));
    }
  }
  for (const char* solve : {"velocity", "position"}) {
    for (const char* field : {"end", "iterations", "residual"}) {
      columns.push_back(fmt::format("solver.{}.{}", solve, field));
    }
  }
  return columns;
}

std::vector<double> traceRow(const dynamics::State& state, const dynamics::StepReport& report) {
  std::vector<double> row{state.time_s};
  for (const auto& joint : state.joints) {
    row.push_back(joint.position);
    row.push_back(joint.speed);
  }
  for (const auto& motor : state.motors) {
    row.insert(row.end(), {motor.angle_rad, motor.speed_radps, motor.voltage, motor.torque_Nm});
  }
  for (const auto& body : state.bodies) {
    const auto& p = body.position_m;
    const auto& q = body.orientation;
    row.insert(row.end(), {p.x(), p.y(), p.z(), q.w(), q.x(), q.y(), q.z()});
  }
  row.insert(row.end(), {static_cast<double>(report.velocity_end),
                         static_cast<double>(report.velocity_iterations), report.velocity_residual,
                         static_cast<double>(report.position_end),
                         static_cast<double>(report.position_iterations), report.position_error});
  return row;
}

std::vector<std::string> traceColumns(const Scene& scene) {
  std::vector<std::string> columns = traceColumns(scene.model);
  for (const int block : scene.trace_blocks)
    columns.push_back("scheme." + scene.scheme.blocks[static_cast<std::size_t>(block)].name);
  return columns;
}

std::vector<double> traceRow(const Scene& scene, const dynamics::State& state,
                             const dynamics::StepReport& report, const SchemeState& scheme) {
  std::vector<double> row = traceRow(state, report);
  for (const int block : scene.trace_blocks) {
    const auto i = static_cast<std::size_t>(block);
    row.push_back(i < scheme.outputs.size() ? scheme.outputs[i] : 0.0);
  }
  return row;
}

TraceWriter::TraceWriter(const std::string& path, const dynamics::Model& model)
    : TraceWriter(path, traceColumns(model)) {}

TraceWriter::TraceWriter(const std::string& path, const std::vector<std::string>& columns)
    : path_(path) {
  file_ = std::fopen(path.c_str(), "w");
  if (file_ == nullptr) {
    throw TraceError(fmt::format("cannot open trace file {}: {}", path, std::strerror(errno)));
  }
  columns_ = columns.size();
  line_ = fmt::format("{}\n", fmt::join(columns, ","));
  std::fputs(line_.c_str(), file_);
}

TraceWriter::~TraceWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void TraceWriter::write(const dynamics::State& state, const dynamics::StepReport& report) {
  writeRow(traceRow(state, report));
}

void TraceWriter::writeRow(const std::vector<double>& row) {
  if (row.size() != columns_) {
    throw std::logic_error(
        fmt::format("trace row has {} values for {} columns", row.size(), columns_));
  }
  // Full precision: 17 significant digits round-trip every double.
  line_.clear();
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (i > 0) line_ += ',';
    fmt::format_to(std::back_inserter(line_), "{:.17g}", row[i]);
  }
  line_ += '\n';
  std::fputs(line_.c_str(), file_);
  ++rows_;
}

void TraceWriter::flush() {
  if (std::fflush(file_) != 0 || std::ferror(file_)) {
    throw TraceError(fmt::format("cannot write trace file {}: {}", path_, std::strerror(errno)));
  }
}

}  // namespace sim::engine
