// Internal header, not API: one fixed step of a Session with its optional outputs (CSV trace,
// session recording), shared by runHeadless and playScenario so both record and report alike.
#pragma once

#include <engine/recording.h>
#include <engine/run.h>
#include <engine/session.h>
#include <engine/trace.h>

#include <memory>
#include <string>

namespace sim::engine::detail {

class SessionOutputs {
 public:
  /// Opens the files that are asked for; the trace gets the initial state.
  SessionOutputs(const Session& session, const std::string& trace_path, int trace_every,
                 const std::string& record_path)
      : trace_every_(static_cast<std::uint64_t>(std::max(1, trace_every))) {
    if (!trace_path.empty()) {
      trace_ = std::make_unique<TraceWriter>(trace_path, session.scene().model);
      trace_->write(session.dynamics());
    }
    if (!record_path.empty()) {
      recording_ = std::make_unique<RecordingWriter>(record_path, session.scene());
    }
  }

  /// One step, recorded and traced (every Nth step, and a faulted one). Returns false on a
  /// numerical fault, which is stored in `result`.
  bool step(Session& session, RunResult& result) {
    if (recording_) recording_->beforeStep(session);
    const dynamics::StepReport report = session.step();
    if (recording_) recording_->afterStep(session);
    ++result.steps;
    result.record(report);
    const bool faulted = report.fault.kind != dynamics::Fault::Kind::None;
    if (trace_ && (result.steps % trace_every_ == 0 || faulted)) trace_->write(session.dynamics());
    if (faulted) result.fault = report.fault;
    return !faulted;
  }

  /// Flushes the trace and closes the recording with the run's outcome. Safe to call twice.
  void finish(const Session& session, RunResult& result) {
    if (trace_) {
      trace_->flush();
      result.trace_rows = trace_->rows();
    }
    if (recording_) {
      recording_->finish(session, result.fault ? "fault" : (result.interrupted ? "interrupted" : "ok"));
    }
  }

 private:
  std::uint64_t trace_every_;
  std::unique_ptr<TraceWriter> trace_;
  std::unique_ptr<RecordingWriter> recording_;
};

}  // namespace sim::engine::detail
