// Internal header, not API: one fixed step of a Session with its optional outputs (CSV trace,
// session recording), the operator's part of a frame (events, devices, pause), and the call of a
// frame observer, shared by runHeadless and playScenario so both record, report and draw alike.
#pragma once

#include <engine/operator_queue.h>
#include <engine/recording.h>
#include <engine/run.h>
#include <engine/session.h>
#include <engine/trace.h>
#include <input/input_system.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace sim::engine::detail {

class SessionOutputs {
 public:
  /// Opens the files that are asked for; the trace gets the initial state.
  SessionOutputs(const Session& session, const std::string& trace_path, int trace_every,
                 const std::string& record_path, const RecordingHeader& header = {})
      : trace_every_(static_cast<std::uint64_t>(std::max(1, trace_every))) {
    if (!trace_path.empty()) {
      trace_ = std::make_unique<TraceWriter>(trace_path, traceColumns(session.scene()));
      writeTrace(session, dynamics::StepReport{});
    }
    if (!record_path.empty()) {
      recording_ = std::make_unique<RecordingWriter>(record_path, session.scene(), header);
    }
  }

  /// One step, recorded and traced (every Nth step, and a faulted one). Returns false on a
  /// numerical fault, which is stored in `result`.
  bool step(Session& session, RunResult& result) {
    if (recording_) recording_->beforeStep(session);
    last_report_ = session.step();
    const dynamics::StepReport& report = last_report_;
    if (recording_) recording_->afterStep(session);
    ++result.steps;
    result.record(report);
    if (after_step_) after_step_(session, report);
    const bool faulted = report.fault.kind != dynamics::Fault::Kind::None;
    if (trace_ && (result.steps % trace_every_ == 0 || faulted)) writeTrace(session, report);
    if (faulted) result.fault = report.fault;
    return !faulted;
  }

  /// Called after every step (RunOptions::after_step), before a fault ends the run.
  void setStepObserver(std::function<void(const Session&, const dynamics::StepReport&)> observer) {
    after_step_ = std::move(observer);
  }
  /// The report of the last step.
  const dynamics::StepReport& lastReport() const { return last_report_; }

  /// Flushes the trace and closes the recording with the run's outcome. Safe to call twice.
  void finish(const Session& session, RunResult& result) {
    if (trace_) {
      trace_->flush();
      result.trace_rows = trace_->rows();
    }
    if (recording_) {
      recording_->finish(session, result.fault         ? "fault"
                                  : result.interrupted ? "interrupted"
                                  : result.closed      ? "closed"
                                                       : "ok");
    }
  }

 private:
  void writeTrace(const Session& session, const dynamics::StepReport& report) {
    trace_->writeRow(traceRow(session.scene(), session.dynamics(), report, session.state().scheme));
  }

  std::uint64_t trace_every_;
  std::unique_ptr<TraceWriter> trace_;
  std::unique_ptr<RecordingWriter> recording_;
  std::function<void(const Session&, const dynamics::StepReport&)> after_step_;
  dynamics::StepReport last_report_;
};

// The operator's part of each frame: the window's events (keys to the devices, pause, step,
// reset), then one device sample into the pult. A frame is paused when it runs no steps.
class OperatorFrame {
 public:
  OperatorFrame(OperatorQueue* events, input::InputSystem* input, RunControl* control,
                std::function<void(const OperatorEvent&)> on_key, bool reset_allowed)
      : events_(events),
        input_(input),
        control_(control ? control : &own_control_),
        on_key_(std::move(on_key)),
        reset_allowed_(reset_allowed) {}

  RunControl& control() { return *control_; }

  /// Applies the queued events; keys reach the devices before `sampleInto` samples them.
  void takeEvents() {
    if (!events_) return;
    events_->takeAll(scratch_);
    for (const OperatorEvent& e : scratch_) {
      switch (e.kind) {
        case OperatorEvent::Kind::Key:
          if (input_) input_->keyEvent(e.key, e.down);
          if (on_key_) on_key_(e);
          break;
        case OperatorEvent::Kind::AllKeysUp:
          if (input_) input_->releaseAllKeys();
          break;
        case OperatorEvent::Kind::TogglePause: control_->paused = !control_->paused; break;
        case OperatorEvent::Kind::StepFrame:
          if (control_->paused) ++control_->step_frames;
          break;
        case OperatorEvent::Kind::Reset:
          if (reset_allowed_)
            control_->reset = true;
          else
            control_->reset_refused = true;
          break;
        default: break;  // seek and speed: replays only
      }
    }
  }

  /// One pult state per frame from the devices; a device lost since the last frame already
  /// reads neutral.
  void sampleInto(Session& session, double frame_dt_s) {
    if (!input_) return;
    pult_ = session.state().pult.values;
    input_->sample(frame_dt_s, pult_);
    for (std::size_t c = 0; c < pult_.size(); ++c)
      session.setControl(static_cast<int>(c), pult_[c]);
  }

  /// Whether this frame runs its steps (not paused, or a single step asked for while paused).
  bool runsSteps() {
    if (!control_->paused) return true;
    if (control_->step_frames > 0) {
      --control_->step_frames;
      return true;
    }
    return false;
  }

 private:
  OperatorQueue* events_;
  input::InputSystem* input_;
  RunControl own_control_;
  RunControl* control_;
  std::function<void(const OperatorEvent&)> on_key_;
  bool reset_allowed_;
  std::vector<OperatorEvent> scratch_;
  std::vector<double> pult_;
};

// Calls the frame observer (a window, a screenshot taker) with the run's statistics so far, and
// times it as the frame's render time. Returns false when the observer ends the run (closed).
inline bool observeFrame(const FrameObserver& observer, const Session& session, RunResult& result,
                         const FramePacer& pacer, std::chrono::steady_clock::time_point start,
                         const std::vector<std::string>& notes) {
  using Clock = std::chrono::steady_clock;
  const auto render_start = Clock::now();
  result.wall_time_s = std::chrono::duration<double>(render_start - start).count();
  result.sim_time_s = session.time();
  result.overruns = pacer.overruns();
  result.resyncs = pacer.resyncs();
  result.lost_s = pacer.lostSeconds();
  result.behind = pacer.behind();
  const bool go_on = observer(session, result, notes);
  result.closed = !go_on;
  result.render_time.add(std::chrono::duration<double>(Clock::now() - render_start).count());
  return go_on;
}

}  // namespace sim::engine::detail
