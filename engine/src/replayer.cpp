#include <engine/replayer.h>

#include "session_outputs.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace sim::engine {

namespace {

Scene recordedScene(const Recording& recording, bool allow_changed_scene) {
  Scene scene = loadScene(recording.scene_path, recording.overrides);
  if (scene.source_hash != recording.scene_hash && !allow_changed_scene) {
    throw RecordingError(fmt::format(
        "{}: the scene {} has changed since it was recorded (hash {:016x}, recorded {:016x})",
        recording.file, recording.scene_path, scene.source_hash, recording.scene_hash));
  }
  std::vector<std::string> names;
  for (const ControlDef& c : scene.pult.controls) names.push_back(c.name);
  if (names != recording.controls) {
    throw RecordingError(recording.file +
                         ": the scene's pult controls differ from the recording's");
  }
  return scene;
}

}  // namespace

Replayer::Replayer(Recording recording, double save_every_s, bool allow_changed_scene)
    : recording_(std::move(recording)), overrides_(recording_.overrides) {
  session_.emplace(recordedScene(recording_, allow_changed_scene));
  const Scene& scene = session_->scene();
  const auto per_frame = static_cast<std::uint64_t>(scene.stepsPerFrame());
  const double frames =
      std::max(1.0, std::round(save_every_s / (static_cast<double>(per_frame) * timeStep())));
  save_every_ = per_frame * static_cast<std::uint64_t>(frames);
  save();
}

void Replayer::save() {
  Point& point = points_[step()];
  point.state = session_->state();
  point.motor_faults = session_->motorFaults();
  point.sensor_faults = session_->sensorFaults();
  point.control_faults = session_->controlFaults();
  point.overrides = overrides_;
}

void Replayer::restore(const Point& point) {
  if (point.overrides.size() != overrides_.size()) {
    // The parameters in force at that point (changes are only ever appended).
    overrides_ = point.overrides;
    const std::string why = session_->changeScene(loadScene(recording_.scene_path, overrides_));
    if (!why.empty()) throw RecordingError(recording_.file + ": cannot go back: " + why);
  }
  // Faults first: restoring the state holds stuck controls and syncs brakes with those in force.
  session_->restoreFaults(point.motor_faults, point.sensor_faults, point.control_faults);
  session_->restore(point.state);
  applied_for_ = ~std::uint64_t{0};
}

void Replayer::applyInputs() {
  const std::uint64_t s = step();
  if (applied_for_ == s || atEnd()) return;
  applied_for_ = s;
  if (auto it = recording_.changes.find(s); it != recording_.changes.end()) {
    overrides_.insert(overrides_.end(), it->second.begin(), it->second.end());
    const std::string why = session_->changeScene(loadScene(recording_.scene_path, overrides_));
    if (!why.empty()) {
      throw RecordingError(fmt::format("{}: the parameter change before step {} is refused: {}",
                                       recording_.file, s, why));
    }
  }
  // The faults recorded before step s, checked against the scene (a recording may be edited).
  const auto check = [&](int index, std::size_t count, const char* what, const char* limit) {
    if (index < 0 || static_cast<std::size_t>(index) >= count) {
      throw RecordingError(fmt::format("{}: fault of {} {}, {}", recording_.file, what, index,
                                       fmt::format(fmt::runtime(limit), count)));
    }
  };
  if (auto it = recording_.faults.find(s); it != recording_.faults.end()) {
    for (const auto& [motor, fault] : it->second) {
      check(motor, session_->motorFaults().size(), "motor", "the scene has {} motors");
      session_->setMotorFault(motor, fault);
    }
  }
  if (auto it = recording_.sensor_faults.find(s); it != recording_.sensor_faults.end()) {
    std::vector<SensorFault> sensors = session_->sensorFaults();
    for (const auto& [sensor, fault] : it->second) {
      check(sensor, sensors.size(), "sensor", "the scheme reads {} sensors");
      sensors[static_cast<std::size_t>(sensor)] = fault;  // a dropout holds the recorded value
    }
    session_->restoreFaults(session_->motorFaults(), sensors);
  }
  if (auto it = recording_.control_faults.find(s); it != recording_.control_faults.end()) {
    for (const auto& [control, fault] : it->second) {
      check(control, session_->controlFaults().size(), "control",
            "the scene's pult has {} controls");
      session_->setControlFault(control, fault);
    }
  }
  if (auto it = recording_.pult.find(s); it != recording_.pult.end()) {
    for (std::size_t c = 0; c < it->second.size(); ++c)
      session_->setControl(static_cast<int>(c), it->second[c]);
  }
}

dynamics::StepReport Replayer::stepOnce() {
  if (atEnd()) return {};
  applyInputs();
  const dynamics::StepReport report = session_->step();
  if (step() % save_every_ == 0 && points_.find(step()) == points_.end()) save();
  return report;
}

bool Replayer::matches() const {
  const std::uint64_t s = step();
  return s == 0 || (s <= recording_.hashes.size() && session_->hash() == recording_.hashes[s - 1]);
}

void Replayer::seek(std::uint64_t target) {
  target = std::min(target, steps());
  if (target == step()) return;
  auto point = points_.upper_bound(target);  // first point after target
  --point;                                   // the nearest at or before it (step 0 is always kept)
  if (target < step() || point->first > step()) restore(point->second);
  while (step() < target) stepOnce();
}

std::vector<TimelineMark> recordingMarks(const Recording& recording, double time_step_s) {
  std::vector<TimelineMark> marks;
  const auto at = [&](std::uint64_t step) { return static_cast<double>(step) * time_step_s; };
  for (const auto& [step, faults] : recording.faults) {
    for (const auto& [motor, fault] : faults) {
      marks.push_back({at(step), TimelineMark::Kind::Fault,
                       fmt::format("motor {} {}", motor, motorFaultName(fault.kind))});
    }
  }
  for (const auto& [step, faults] : recording.sensor_faults) {
    for (const auto& [sensor, fault] : faults) {
      marks.push_back({at(step), TimelineMark::Kind::Fault,
                       fmt::format("sensor {} {}", sensor, sensorFaultName(fault.kind))});
    }
  }
  for (const auto& [step, faults] : recording.control_faults) {
    for (const auto& [control, fault] : faults) {
      const std::string name = static_cast<std::size_t>(control) < recording.controls.size()
                                   ? recording.controls[static_cast<std::size_t>(control)]
                                   : std::to_string(control);
      marks.push_back({at(step), TimelineMark::Kind::Fault,
                       fmt::format("control {} {}", name, controlFaultName(fault.kind))});
    }
  }
  for (const auto& [step, changes] : recording.changes) {
    for (const Override& change : changes) {
      marks.push_back(
          {at(step), TimelineMark::Kind::Change, fmt::format("{}={}", change.path, change.value)});
    }
  }
  std::sort(marks.begin(), marks.end(),
            [](const TimelineMark& a, const TimelineMark& b) { return a.time_s < b.time_s; });
  return marks;
}

RunResult playRecording(Replayer& replayer, const ReplayPlayOptions& options) {
  const Session& session = replayer.session();
  const auto steps_per_frame = static_cast<std::uint64_t>(session.scene().stepsPerFrame());
  const double frame_dt = static_cast<double>(steps_per_frame) * replayer.timeStep();
  const double duration = static_cast<double>(replayer.steps()) * replayer.timeStep();
  FramePacer pacer(frame_dt, options.realtime);
  detail::OperatorFrame operator_frame(options.operator_events, nullptr, nullptr, {}, false);
  RunControl& control = operator_frame.control();
  std::vector<OperatorEvent> events;
  double speed = std::clamp(options.speed, 0.25, 8.0);
  double due = 0.0;  // steps owed to the wall clock at this speed
  RunResult result;
  std::vector<std::string> notes;
  std::uint64_t diverged_at = 0;
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  for (;;) {
    if (options.interrupt && options.interrupt->load()) {
      result.interrupted = true;
      break;
    }
    pacer.beginFrame();
    if (options.before_frame) options.before_frame(result.frames);
    // Seek and speed are the replay's own; pause and one-frame steps go through the control.
    if (options.operator_events) {
      options.operator_events->takeAll(events);
      for (const OperatorEvent& e : events) {
        const auto steps_for = [&](double seconds) {
          return static_cast<std::int64_t>(std::llround(seconds / replayer.timeStep()));
        };
        switch (e.kind) {
          case OperatorEvent::Kind::TogglePause: control.paused = !control.paused; break;
          case OperatorEvent::Kind::StepFrame:
            if (control.paused) ++control.step_frames;
            break;
          case OperatorEvent::Kind::SeekBy: {
            const auto target = std::max<std::int64_t>(
                0, static_cast<std::int64_t>(replayer.step()) + steps_for(e.value));
            replayer.seek(static_cast<std::uint64_t>(target));
            due = 0.0;
            break;
          }
          case OperatorEvent::Kind::SeekToStart:
            replayer.seek(0);
            due = 0.0;
            break;
          case OperatorEvent::Kind::SeekToEnd:
            replayer.seek(replayer.steps());
            due = 0.0;
            break;
          case OperatorEvent::Kind::Faster: speed = std::min(8.0, speed * 2.0); break;
          case OperatorEvent::Kind::Slower: speed = std::max(0.25, speed / 2.0); break;
          default: break;  // a replay has no pult and no reset
        }
      }
    }
    std::uint64_t frame_steps = 0;
    if (operator_frame.runsSteps()) {
      if (control.paused) {
        frame_steps = steps_per_frame;  // F10: one frame at any speed
      } else {
        due += speed * static_cast<double>(steps_per_frame);
        frame_steps = static_cast<std::uint64_t>(due);
        due -= static_cast<double>(frame_steps);
      }
    }
    const auto physics_start = Clock::now();
    for (std::uint64_t k = 0; k < frame_steps && !replayer.atEnd(); ++k) {
      result.record(replayer.stepOnce());
      ++result.steps;
      if (diverged_at == 0 && !replayer.matches()) diverged_at = replayer.step();
      if (options.stop_at_s >= 0.0 && session.time() >= options.stop_at_s - 1e-9) break;
    }
    result.physics_time.add(std::chrono::duration<double>(Clock::now() - physics_start).count());
    result.frame_time.add(std::chrono::duration<double>(Clock::now() - physics_start).count());
    ++result.frames;
    const bool at_end = replayer.atEnd();
    const bool stop = (options.stop_at_s >= 0.0 && session.time() >= options.stop_at_s - 1e-9) ||
                      (at_end && !options.hold_at_end);
    if (at_end && options.hold_at_end) control.paused = true;
    result.paused = control.paused;
    notes.clear();
    notes.push_back(fmt::format("replay of {}: step {} of {}", replayer.recording().file,
                                replayer.step(), replayer.steps()));
    if (!replayer.recording().damage.empty()) {
      notes.push_back("recording damaged, replayed to its last complete frame: " +
                      replayer.recording().damage);
    } else if (!replayer.recording().complete) {
      notes.emplace_back("recording has no end line (the run was killed)");
    }
    if (diverged_at > 0)
      notes.push_back(fmt::format("DIVERGES from the recording at step {}", diverged_at));
    if (options.status) {
      options.status->duration_s = duration;
      options.status->speed = speed;
    }
    result.sim_time_s = session.time();
    if (options.after_frame &&
        !detail::observeFrame(options.after_frame, session, result, pacer, start, notes)) {
      result.closed = true;
      break;
    }
    if (stop) break;
    pacer.endFrame();
  }
  result.wall_time_s = std::chrono::duration<double>(Clock::now() - start).count();
  result.sim_time_s = session.time();
  result.final_state = session.dynamics();
  return result;
}

}  // namespace sim::engine
