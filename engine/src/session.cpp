#include <engine/session.h>

#include <fmt/format.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace sim::engine {

Session::Session(Scene scene) : scene_(std::move(scene)), simulator_(scene_.model) {
  state_.dynamics = simulator_.initialState();
  state_.pult = initialPult(scene_.pult);
  state_.scheme = initialSchemeState(scene_.scheme);
  for (const ConstantInput& input : scene_.inputs) {
    state_.dynamics.motors[static_cast<std::size_t>(input.motor)].voltage = input.voltage;
  }
  scheme_sensors_.reserve(scene_.scheme.sensors.size());
  motor_faults_.resize(state_.dynamics.motors.size());
  commanded_.resize(state_.dynamics.motors.size());
  sensor_faults_.resize(scene_.scheme.sensors.size());
  control_faults_.resize(scene_.pult.controls.size());
  state_.noise_rng = scene_.source_hash ^ 0x5e45f0a17c0ffee5ull;
}

namespace {

// splitmix64: a tiny generator whose whole state is one integer (SessionState::noise_rng).
std::uint64_t splitmix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Standard normal by Box-Muller (one value per pair of uniforms; u1 in (0, 1] so the log is
// finite). Written out rather than std::normal_distribution, whose algorithm differs between
// libraries.
double gaussian(std::uint64_t& s) {
  const double u1 = (static_cast<double>(splitmix(s) >> 11) + 1.0) * 0x1.0p-53;
  const double u2 = static_cast<double>(splitmix(s) >> 11) * 0x1.0p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

// Roll, pitch, yaw (R = Rz(yaw) Ry(pitch) Rx(roll): the aircraft convention, yaw and roll in
// (-pi, pi], pitch in [-pi/2, pi/2]) or the tilt (the angle between the body's z axis and the
// world's), rad.
double bodyAngle(const dynamics::Quat& q, int which) {
  const Eigen::Matrix3d r = q.normalized().toRotationMatrix();
  switch (which) {
    case 0: return std::atan2(r(2, 1), r(2, 2));
    case 1: return std::asin(std::clamp(-r(2, 0), -1.0, 1.0));
    case 2: return std::atan2(r(1, 0), r(0, 0));
    default: return std::atan2(std::hypot(r(0, 2), r(1, 2)), r(2, 2));  // not acos: exact near 0
  }
}

}  // namespace

int schemeSensorIndex(const Scene& scene, const std::string& signal, std::string& error) {
  std::vector<SensorDef> sensors = scene.scheme.sensors;
  const auto ref = resolveSignal(signal, scene.model, scene.pult, scene.scheme, sensors, error);
  if (!ref) return -1;
  if (ref->source != SignalRef::Source::Sensor) {
    error =
        "\"" + signal + "\" is not a sensor (a sensor is body.*, joint.*, motor.* or contact.*)";
    return -1;
  }
  if (static_cast<std::size_t>(ref->index) >= scene.scheme.sensors.size()) {
    error = "the scheme of " + scene.file + " does not read \"" + signal + "\"";
    return -1;
  }
  return ref->index;
}

void Session::setSensorFault(int sensor, SensorFault fault) {
  const auto i = static_cast<std::size_t>(sensor);
  if (fault.kind == SensorFault::Kind::Dropout) {
    if (scheme_sensors_.size() == scene_.scheme.sensors.size()) {
      fault.value = scheme_sensors_[i];
    } else {
      std::vector<double> now;
      readSensors(scene_.scheme.sensors, now);
      fault.value = now.at(i);
    }
  }
  sensor_faults_.at(i) = fault;
  any_sensor_fault_ =
      std::any_of(sensor_faults_.begin(), sensor_faults_.end(),
                  [](const SensorFault& f) { return f.kind != SensorFault::Kind::None; });
}

void Session::setMotorFault(int motor, const MotorFault& fault) {
  motor_faults_.at(static_cast<std::size_t>(motor)) = fault;
  any_fault_ = std::any_of(motor_faults_.begin(), motor_faults_.end(),
                           [](const MotorFault& f) { return f.kind != MotorFault::Kind::None; });
  syncBrakes();
}

void Session::restoreFaults(const std::vector<MotorFault>& motors,
                            const std::vector<SensorFault>& sensors) {
  if (motors.size() != motor_faults_.size() || sensors.size() != sensor_faults_.size()) {
    throw std::invalid_argument("restoreFaults: fault lists of another scene");
  }
  motor_faults_ = motors;
  sensor_faults_ = sensors;
  const auto on = [](const auto& f) { return f.kind != std::decay_t<decltype(f)>::Kind::None; };
  any_fault_ = std::any_of(motor_faults_.begin(), motor_faults_.end(), on);
  any_sensor_fault_ = std::any_of(sensor_faults_.begin(), sensor_faults_.end(), on);
  syncBrakes();
}

void Session::restoreFaults(const std::vector<MotorFault>& motors,
                            const std::vector<SensorFault>& sensors,
                            const std::vector<ControlFault>& controls) {
  if (controls.size() != control_faults_.size()) {
    throw std::invalid_argument("restoreFaults: control faults of another scene");
  }
  restoreFaults(motors, sensors);
  control_faults_ = controls;
}

void Session::syncBrakes() {
  for (std::size_t m = 0; m < motor_faults_.size(); ++m) {
    state_.dynamics.motors[m].brake_released =
        motor_faults_[m].kind == MotorFault::Kind::BrakeReleased;
  }
}

void Session::setControl(int control, double value) {
  const auto i = static_cast<std::size_t>(control);
  if (control_faults_[i].kind == ControlFault::Kind::AxisStuck) return;
  state_.pult.values[i] = scene_.pult.controls[i].admit(value);
}

void Session::neutralPult() {
  state_.pult = initialPult(scene_.pult);
  holdStuckControls();
}

void Session::setControlFault(int control, ControlFault fault) {
  const auto i = static_cast<std::size_t>(control);
  if (fault.kind == ControlFault::Kind::AxisStuck)
    fault.value = scene_.pult.controls.at(i).admit(fault.value);
  control_faults_.at(i) = fault;
  holdStuckControls();
}

void Session::holdStuckControls() {
  for (std::size_t i = 0; i < control_faults_.size(); ++i) {
    if (control_faults_[i].kind == ControlFault::Kind::AxisStuck)
      state_.pult.values[i] = control_faults_[i].value;
  }
}

void Session::evaluateScheme() {
  const int every = scene_.scheme.per_frame ? scene_.stepsPerFrame() : 1;
  if (state_.dynamics.step % static_cast<std::uint64_t>(every) != 0) return;
  const double dt = every * scene_.model.solver.time_step_s;
  readSensors(scene_.scheme.sensors, scheme_sensors_);
  if (any_sensor_fault_) {
    // In sensor order, so the noise draws are in a fixed order.
    for (std::size_t i = 0; i < sensor_faults_.size(); ++i) {
      const SensorFault& f = sensor_faults_[i];
      if (f.kind == SensorFault::Kind::Noise)
        scheme_sensors_[i] += f.value * gaussian(state_.noise_rng);
      if (f.kind == SensorFault::Kind::Dropout) scheme_sensors_[i] = f.value;
    }
  }
  sim::engine::evaluateScheme(scene_.scheme, state_.scheme, state_.pult, scheme_sensors_, dt);
  ++state_.scheme_evaluations;
  for (const SchemeOutput& out : scene_.scheme.outputs) {
    const double u = signalValue(out.signal, state_.scheme, state_.pult, scheme_sensors_);
    // A NaN from a broken scheme must not reach the solver: hold the motor at zero instead.
    state_.dynamics.motors[static_cast<std::size_t>(out.motor)].voltage =
        std::isfinite(u) ? std::clamp(u, -1.0, 1.0) : 0.0;
  }
}

dynamics::StepReport Session::step() {
  if (!scene_.scheme.empty()) {
    const auto start = std::chrono::steady_clock::now();
    evaluateScheme();
    scheme_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  contacts_made_ = false;
  if (!any_fault_) return simulator_.step(state_.dynamics);
  // Step with the faulted voltages, then put the commanded ones back: the fault acts on every
  // step without compounding (a per-frame scheme writes the command once per frame).
  auto& motors = state_.dynamics.motors;
  for (std::size_t m = 0; m < motors.size(); ++m) {
    const double commanded = motors[m].voltage;
    motors[m].voltage = std::clamp(motor_faults_[m].apply(commanded), -1.0, 1.0);
    commanded_[m] = commanded;
  }
  const dynamics::StepReport report = simulator_.step(state_.dynamics);
  for (std::size_t m = 0; m < motors.size(); ++m) motors[m].voltage = commanded_[m];
  return report;
}

const std::vector<dynamics::ContactReport>& Session::contacts() const {
  if (!contacts_made_) {
    simulator_.contacts(state_.dynamics, contacts_);
    // Each contact listed under both its bodies, in contact order (a counting sort).
    const std::size_t bodies = state_.dynamics.bodies.size();
    contact_first_.assign(bodies + 2, 0);
    auto counted = [&](int b) { return b >= 0 && static_cast<std::size_t>(b) < bodies; };
    for (const dynamics::ContactReport& c : contacts_) {
      if (counted(c.body_a)) ++contact_first_[static_cast<std::size_t>(c.body_a) + 2];
      if (counted(c.body_b)) ++contact_first_[static_cast<std::size_t>(c.body_b) + 2];
    }
    for (std::size_t b = 2; b < contact_first_.size(); ++b)
      contact_first_[b] += contact_first_[b - 1];
    contact_index_.resize(static_cast<std::size_t>(contact_first_.back()));
    for (std::size_t k = 0; k < contacts_.size(); ++k) {
      const dynamics::ContactReport& c = contacts_[k];
      if (counted(c.body_a))
        contact_index_[static_cast<std::size_t>(
            contact_first_[static_cast<std::size_t>(c.body_a) + 1]++)] = static_cast<int>(k);
      if (counted(c.body_b))
        contact_index_[static_cast<std::size_t>(
            contact_first_[static_cast<std::size_t>(c.body_b) + 1]++)] = static_cast<int>(k);
    }
    contact_first_.pop_back();
    contacts_made_ = true;
  }
  return contacts_;
}

std::span<const int> Session::contactsOf(int body) const {
  contacts();
  if (body < 0 || static_cast<std::size_t>(body) + 1 >= contact_first_.size()) return {};
  const auto b = static_cast<std::size_t>(body);
  return {contact_index_.data() + contact_first_[b],
          static_cast<std::size_t>(contact_first_[b + 1] - contact_first_[b])};
}

void Session::readSensors(const std::vector<SensorDef>& sensors,
                          std::vector<double>& values) const {
  const dynamics::State& s = state_.dynamics;
  values.resize(sensors.size());
  for (std::size_t i = 0; i < sensors.size(); ++i) {
    const SensorDef& d = sensors[i];
    const auto k = static_cast<std::size_t>(d.index);
    double v = 0.0;
    switch (d.kind) {
      case SensorKind::Time: v = s.time_s; break;
      case SensorKind::BodyPosition: v = s.bodies[k].position_m[d.axis]; break;
      case SensorKind::BodyVelocity: v = s.bodies[k].linear_velocity_mps[d.axis]; break;
      case SensorKind::BodySpeed: v = s.bodies[k].linear_velocity_mps.norm(); break;
      case SensorKind::BodyAngle: v = bodyAngle(s.bodies[k].orientation, d.axis); break;
      case SensorKind::JointPosition: v = s.joints[k].position; break;
      case SensorKind::JointSpeed: v = s.joints[k].speed; break;
      case SensorKind::MotorSpeed: v = s.motors[k].speed_radps; break;
      case SensorKind::MotorAngle: v = s.motors[k].angle_rad; break;
      case SensorKind::MotorVoltage: v = s.motors[k].voltage; break;
      case SensorKind::MotorTorque: v = s.motors[k].torque_Nm; break;
      case SensorKind::ContactForce:
        for (const int at : contactsOf(d.index)) {
          const dynamics::ContactReport& c = contacts_[static_cast<std::size_t>(at)];
          const bool on_a = c.body_a == d.index && (d.other < 0 || c.body_b == d.other);
          const bool on_b = c.body_b == d.index && (d.other < 0 || c.body_a == d.other);
          if (on_a || on_b) v += c.normal_force_N;
        }
        break;
    }
    values[i] = v;
  }
}

double Session::signal(const SignalRef& ref, const std::vector<double>& sensor_values) const {
  return signalValue(ref, state_.scheme, state_.pult, sensor_values);
}

std::string sameStructure(const Scene& a, const Scene& b) {
  const dynamics::Model& x = a.model;
  const dynamics::Model& y = b.model;
  auto count = [](const char* what, std::size_t n, std::size_t m) {
    return n == m ? std::string() : fmt::format("{} {} instead of {}", m, what, n);
  };
  for (std::string why :
       {count("bodies", x.bodies.size(), y.bodies.size()),
        count("joints", x.joints.size(), y.joints.size()),
        count("motors", x.motors.size(), y.motors.size()),
        count("repeaters", x.repeaters.size(), y.repeaters.size()),
        count("pult controls", a.pult.controls.size(), b.pult.controls.size()),
        count("scheme blocks", a.scheme.blocks.size(), b.scheme.blocks.size()),
        count("scheme outputs", a.scheme.outputs.size(), b.scheme.outputs.size()),
        count("scheme sensors", a.scheme.sensors.size(), b.scheme.sensors.size())}) {
    if (!why.empty()) return why;
  }
  for (std::size_t i = 0; i < x.bodies.size(); ++i) {
    const auto &p = x.bodies[i], &q = y.bodies[i];
    if (p.is_static != q.is_static) return fmt::format("bodies[{}]: static changes", p.name);
    bool shapes = p.shapes.size() == q.shapes.size();
    for (std::size_t k = 0; shapes && k < p.shapes.size(); ++k)
      shapes = p.shapes[k].type == q.shapes[k].type;
    // Contacts are stored by shape number, so the shapes must stay the same kinds in order.
    if (!shapes) return fmt::format("bodies[{}]: its shapes change", p.name);
  }
  for (std::size_t j = 0; j < x.joints.size(); ++j) {
    const auto &p = x.joints[j], &q = y.joints[j];
    if (p.type != q.type || p.body_a != q.body_a || p.body_b != q.body_b)
      return fmt::format("joints[{}]: its type or bodies change", p.name);
  }
  for (std::size_t m = 0; m < x.motors.size(); ++m) {
    const auto &p = x.motors[m], &q = y.motors[m];
    if (p.joint != q.joint) return fmt::format("motors[{}]: its joint changes", p.name);
    if (p.drive.has_value() != q.drive.has_value())
      return fmt::format("motors[{}]: drive unit added or removed", p.name);
  }
  if (x.solver.time_step_s != y.solver.time_step_s)
    return "the time step changes (steps would no longer match)";
  if (a.stepsPerFrame() != b.stepsPerFrame()) return "the steps per frame change";
  return {};
}

std::string Session::changeScene(Scene next) {
  std::string why = sameStructure(scene_, next);
  if (!why.empty()) return why;
  const int threads = simulator_.threads();
  simulator_ = dynamics::Simulator(next.model);
  simulator_.setThreads(threads);
  contacts_made_ = false;
  scene_ = std::move(next);
  for (const ConstantInput& input : scene_.inputs) {
    state_.dynamics.motors[static_cast<std::size_t>(input.motor)].voltage = input.voltage;
  }
#if defined(__GLIBC__)
  // The old model and solver (and the loader's parse of the new scene) were freed in many pieces
  // that glibc keeps for reuse; without this each change a training day's instructor makes left
  // the session's resident memory about 0.7 MiB higher for good (bench/soak.cpp, --memory-log).
  // Once per change (it walks the heap), never per frame.
  ::malloc_trim(0);
#endif
  return {};
}

std::uint64_t Session::hash() const {
  // FNV-1a over the dynamics hash and the bit patterns of the engine-side state.
  std::uint64_t h = 14695981039346656037ull;
  auto mix = [&h](const void* data, std::size_t size) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  };
  const std::uint64_t dyn = state_.dynamics.hash();
  mix(&dyn, sizeof dyn);
  for (double v : state_.pult.values) mix(&v, sizeof v);
  for (double v : state_.scheme.outputs) mix(&v, sizeof v);
  for (double v : state_.scheme.memory) mix(&v, sizeof v);
  mix(&state_.scheme_evaluations, sizeof state_.scheme_evaluations);
  return h;
}

}  // namespace sim::engine
