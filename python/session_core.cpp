#include "session_core.h"

#include <engine/trace.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace sim::python {

namespace {

std::string knownNames(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "" : ", ") + n;
  return text.empty() ? "none" : text;
}

template <typename Items>
std::vector<std::string> namesOf(const Items& items) {
  std::vector<std::string> names;
  for (const auto& item : items) names.push_back(item.name);
  return names;
}

bool sameBits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

}  // namespace

StateLayout layoutOf(const engine::Scene& scene) {
  StateLayout l;
  const dynamics::Model& m = scene.model;
  l.bodies = m.bodies.size();
  for (const auto& b : m.bodies) l.shapes += b.shapes.size();
  l.joints = m.joints.size();
  l.motors = m.motors.size();
  l.repeaters = m.repeaters.size();
  l.controls = scene.pult.controls.size();
  l.scheme_blocks = scene.scheme.blocks.size();
  return l;
}

bool sameState(const engine::SessionState& a, const engine::SessionState& b) {
  return a.dynamics == b.dynamics && sameBits(a.pult.values, b.pult.values) &&
         sameBits(a.scheme.outputs, b.scheme.outputs) &&
         sameBits(a.scheme.memory, b.scheme.memory) &&
         a.scheme_evaluations == b.scheme_evaluations && a.noise_rng == b.noise_rng;
}

TraceBuffer::TraceBuffer(const engine::Scene& scene, int every)
    : columns_(engine::traceColumns(scene)),
      every_(static_cast<std::uint64_t>(std::max(1, every))) {}

void TraceBuffer::add(const engine::Session& session, const dynamics::StepReport& report) {
  const std::vector<double> row =
      engine::traceRow(session.scene(), session.dynamics(), report, session.state().scheme);
  values_.insert(values_.end(), row.begin(), row.end());
}

void TraceBuffer::afterStep(const engine::Session& session, const dynamics::StepReport& report,
                            bool faulted) {
  ++steps_;
  if (steps_ % every_ == 0 || faulted) add(session, report);
}

SessionCore::SessionCore(engine::Scene scene) : session_(std::move(scene)) {}

SessionCore::~SessionCore() {
  try {
    finishRecording();
  } catch (...) {  // a destructor must not throw; the file keeps its frames without an end line
  }
}

std::uint64_t SessionCore::step(std::uint64_t n, const std::function<bool()>& interrupted) {
  if (fault_) throw NumericalFaultError(*fault_);
  std::uint64_t done = 0;
  while (done < n) {
    if (recorder_) recorder_->beforeStep(session_);
    last_report_ = session_.step();
    if (recorder_) recorder_->afterStep(session_);
    pristine_ = false;
    ++done;
    const bool faulted = last_report_.fault.kind != dynamics::Fault::Kind::None;
    for (const auto& trace : traces_) trace->afterStep(session_, last_report_, faulted);
    if (faulted) {
      fault_ = last_report_.fault;
      throw NumericalFaultError(*fault_);
    }
    if (interrupted && done % 1024 == 0 && done < n && interrupted()) break;
  }
  return done;
}

void SessionCore::setControl(const std::string& name, double value) {
  const int c = session_.scene().pult.find(name);
  if (c < 0) {
    throw std::invalid_argument(
        "no pult control \"" + name + "\" in scene " + session_.scene().name +
        " (known: " + knownNames(namesOf(session_.scene().pult.controls)) + ")");
  }
  session_.setControl(c, value);
}

void SessionCore::setMotorFault(const std::string& motor, const std::string& kind_name,
                                std::optional<double> value) {
  const engine::Scene& scene = session_.scene();
  const int m = scene.model.findMotor(motor);
  if (m < 0) {
    throw std::invalid_argument("no motor \"" + motor + "\" in scene " + scene.name +
                                " (known: " + knownNames(namesOf(scene.model.motors)) + ")");
  }
  engine::MotorFault fault;
  if (!engine::parseMotorFaultKind(kind_name, fault.kind)) {
    throw std::invalid_argument("fault of motor " + motor +
                                ": expected stuck, weak, reversed, brake_released or none, got \"" +
                                kind_name + "\"");
  }
  // The rules of a scenario's `faults:` (docs/scenarios.md).
  using Kind = engine::MotorFault::Kind;
  if (fault.kind == Kind::Weak) {
    fault.value = value.value_or(0.5);
    if (!(fault.value >= 0.0 && fault.value <= 1.0))
      throw std::invalid_argument("weak: expected a factor in [0, 1]");
  } else if (fault.kind == Kind::Stuck) {
    fault.value = value.value_or(0.0);
    if (!(fault.value >= -1.0 && fault.value <= 1.0))
      throw std::invalid_argument("stuck: expected a voltage in [-1, 1]");
  } else if (value) {
    throw std::invalid_argument("only stuck (the held voltage) and weak (the factor) have a value");
  }
  if (fault.kind == Kind::BrakeReleased &&
      !(scene.model.motors[static_cast<std::size_t>(m)].brake_torque > 0.0)) {
    throw std::invalid_argument("motor \"" + motor + "\" has no brake (motors[].brake in " +
                                scene.file + ")");
  }
  session_.setMotorFault(m, fault);
}

void SessionCore::setSensorFault(const std::string& signal, const std::string& kind_name,
                                 std::optional<double> value) {
  std::string error;
  const int sensor = session_.schemeSensor(signal, error);
  if (sensor < 0) throw std::invalid_argument(error);
  engine::SensorFault fault;
  if (!engine::parseSensorFaultKind(kind_name, fault.kind)) {
    throw std::invalid_argument("fault of " + signal + ": expected noise, dropout or none, got \"" +
                                kind_name + "\"");
  }
  if (fault.kind == engine::SensorFault::Kind::Noise) {
    if (!value || !(*value > 0.0 && std::isfinite(*value))) {
      throw std::invalid_argument("noise: expected a standard deviation > 0 as the value");
    }
    fault.value = *value;
  } else if (value) {
    throw std::invalid_argument("only noise (the standard deviation) has a value");
  }
  session_.setSensorFault(sensor, fault);
  if (fault.kind == engine::SensorFault::Kind::None) {
    sensor_fault_names_.erase(sensor);
  } else {
    sensor_fault_names_[sensor] = signal;
  }
}

void SessionCore::clearFaults() {
  session_.restoreFaults(std::vector<engine::MotorFault>(session_.motorFaults().size()),
                         std::vector<engine::SensorFault>(session_.sensorFaults().size()));
  sensor_fault_names_.clear();
}

void SessionCore::setParameter(const engine::Override& change) {
  const engine::Scene& scene = session_.scene();
  std::vector<engine::Override> overrides = scene.overrides;
  overrides.push_back(change);
  engine::Scene next = engine::loadScene(scene.file, overrides);
  if (next.source_hash != scene.source_hash) {
    throw engine::SceneError(scene.file, 0, change.path,
                             "the scene file has changed on disk since the session started");
  }
  const std::string why = session_.changeScene(std::move(next));
  if (!why.empty()) throw engine::SceneError(scene.file, 0, change.path, why);
  pristine_ = false;
}

void SessionCore::readSignals(const std::vector<std::string>& names, std::vector<double>& values) {
  values.resize(names.size());
  const engine::Scene& scene = session_.scene();
  for (std::size_t i = 0; i < names.size(); ++i) {
    auto it = signals_.find(names[i]);
    if (it == signals_.end()) {
      ResolvedSignals resolved;
      std::string error;
      const auto ref = engine::resolveSignal(names[i], scene.model, scene.pult, scene.scheme,
                                             resolved.sensors, error);
      if (!ref) throw std::invalid_argument(error);
      resolved.refs.push_back(*ref);
      it = signals_.emplace(names[i], std::move(resolved)).first;
    }
    session_.readSensors(it->second.sensors, sensor_values_);
    values[i] = session_.signal(it->second.refs.front(), sensor_values_);
  }
}

SavedState SessionCore::save() const {
  return SavedState{session_.state(), layoutOf(session_.scene()), session_.scene().name};
}

void SessionCore::restore(const SavedState& saved) {
  if (recorder_) {
    throw std::invalid_argument(
        "restore() while recording: the recording would jump (close the recorder first)");
  }
  if (!(saved.layout == layoutOf(session_.scene()))) {
    throw std::invalid_argument("the state is of scene " + saved.scene +
                                ", whose bodies, joints, motors, pult or scheme differ from " +
                                session_.scene().name + "'s");
  }
  session_.restore(saved.state);
  fault_.reset();
  last_report_ = dynamics::StepReport{};  // no step produced the restored state here
  pristine_ = false;
}

std::shared_ptr<TraceBuffer> SessionCore::addTrace(int every) {
  auto trace = std::make_shared<TraceBuffer>(session_.scene(), every);
  trace->start(session_, last_report_);
  traces_.push_back(trace);
  return trace;
}

void SessionCore::removeTrace(const std::shared_ptr<TraceBuffer>& trace) {
  std::erase(traces_, trace);
  trace->attached = false;
}

void SessionCore::startRecording(const std::string& path) {
  if (recorder_)
    throw engine::RecordingError("the session is already recording to " + record_path_);
  if (!pristine_) {
    throw engine::RecordingError(
        "record() must start on a new session, before its first step, restore or parameter change: "
        "a replay starts from the "
        "scene's initial state");
  }
  recorder_ = std::make_unique<engine::RecordingWriter>(path, session_.scene());
  record_path_ = path;
}

void SessionCore::finishRecording() {
  if (!recorder_) return;
  std::unique_ptr<engine::RecordingWriter> recorder = std::move(recorder_);
  recorder->finish(session_, fault_ ? "fault" : "ok");
}

}  // namespace sim::python
