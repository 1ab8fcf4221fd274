#include <dynamics/model.h>
#include <dynamics/state.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "joint_geometry.h"

namespace sim::dynamics {

namespace {

constexpr std::uint32_t kMagic = 0x53545331;  // "STS1"
// 2: contacts, 3: sleeping, 4: drive units, LuGre, 5: brakes, 6: contact anchors
constexpr std::uint32_t kVersion = 6;

// Visits every field of a state in canonical order; the same order serves serialize,
// deserialize and hash, so the three can never disagree.
template <class S, class F>
void visitFields(S& s, F&& f) {
  f(s.time_s);
  f(s.step);
  for (auto& b : s.bodies) {
    f(b.position_m);
    f(b.orientation.coeffs());
    f(b.linear_velocity_mps);
    f(b.angular_velocity_radps);
    f(b.slow_time_s);
    f(b.asleep);
  }
  for (auto& j : s.joints) {
    f(j.position);
    f(j.speed);
    f(j.impulses.linear);
    f(j.impulses.angular);
    f(j.impulses.limit);
    f(j.impulses.friction);
    f(j.impulses.viscous);
    f(j.friction_z);
    f(j.slipping);
  }
  for (auto& m : s.motors) {
    f(m.angle_rad);
    f(m.speed_radps);
    f(m.voltage);
    f(m.torque_Nm);
    f(m.characteristic_impulse);
    f(m.coupling_impulse);
    f(m.current_A);
    f(m.brake_released);
  }
  for (auto& r : s.repeaters) f(r.coupling_impulse);
  for (auto& c : s.contacts) {
    f(c.shape_a);
    f(c.shape_b);
    f(c.feature);
    f(c.point_m);
    f(c.normal);
    f(c.separation_m);
    f(c.normal_impulse);
    f(c.friction_impulse);
    f(c.torsion_impulse);
  }
  // Empty with manifold reuse off: such states hash as they did before anchors existed.
  for (auto& a : s.contact_anchors) {
    f(a.valid);
    f(a.on_a_local_m);
    f(a.on_b_local_m);
    f(a.normal_local);
    f(a.b_in_a_m);
    f(a.b_to_a.coeffs());
  }
}

class Writer {
 public:
  std::vector<std::uint8_t> bytes;
  template <class T>
  void raw(const T& v) {
    const std::size_t at = bytes.size();
    bytes.resize(at + sizeof(T));
    std::memcpy(bytes.data() + at, &v, sizeof(T));
  }
  template <class T>
  void operator()(const T& v) {
    if constexpr (std::is_arithmetic_v<T>) {
      raw(v);
    } else {
      for (Eigen::Index i = 0; i < v.size(); ++i) raw(static_cast<double>(v.data()[i]));
    }
  }
};

class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> b) : bytes_(b) {}
  template <class T>
  T raw() {
    if (offset_ + sizeof(T) > bytes_.size())
      throw std::runtime_error("state image truncated at byte " + std::to_string(offset_));
    T v;
    std::memcpy(&v, bytes_.data() + offset_, sizeof(T));
    offset_ += sizeof(T);
    return v;
  }
  template <class T>
  void operator()(T& v) {
    if constexpr (std::is_arithmetic_v<T>) {
      v = raw<T>();
    } else {
      for (Eigen::Index i = 0; i < v.size(); ++i) v.data()[i] = raw<double>();
    }
  }
  bool done() const { return offset_ == bytes_.size(); }

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t offset_ = 0;
};

class Hasher {
 public:
  std::uint64_t h = 0xcbf29ce484222325ull;
  void mix(const void* p, std::size_t n) {
    const auto* c = static_cast<const std::uint8_t*>(p);
    for (std::size_t i = 0; i < n; ++i) {
      h ^= c[i];
      h *= 0x100000001b3ull;
    }
  }
  template <class T>
  void operator()(const T& v) {
    if constexpr (std::is_arithmetic_v<T>) {
      mix(&v, sizeof(T));
    } else {
      for (Eigen::Index i = 0; i < v.size(); ++i) {
        const double d = v.data()[i];
        mix(&d, sizeof d);
      }
    }
  }
};

}  // namespace

std::vector<std::uint8_t> State::serialize() const {
  Writer w;
  w.raw(kMagic);
  w.raw(kVersion);
  w.raw(static_cast<std::uint64_t>(bodies.size()));
  w.raw(static_cast<std::uint64_t>(joints.size()));
  w.raw(static_cast<std::uint64_t>(motors.size()));
  w.raw(static_cast<std::uint64_t>(repeaters.size()));
  w.raw(static_cast<std::uint64_t>(contacts.size()));
  w.raw(static_cast<std::uint64_t>(contact_anchors.size()));
  visitFields(*this, w);
  return w.bytes;
}

State State::deserialize(std::span<const std::uint8_t> bytes) {
  Reader r(bytes);
  if (r.raw<std::uint32_t>() != kMagic) throw std::runtime_error("not a simtrainer state image");
  const auto version = r.raw<std::uint32_t>();
  if (version != kVersion)
    throw std::runtime_error("state image version " + std::to_string(version) + ", expected " +
                             std::to_string(kVersion));
  constexpr std::uint64_t kMaxItems = 1u << 24;
  State s;
  const auto nb = r.raw<std::uint64_t>(), nj = r.raw<std::uint64_t>();
  const auto nm = r.raw<std::uint64_t>(), nr = r.raw<std::uint64_t>();
  const auto nc = r.raw<std::uint64_t>(), na = r.raw<std::uint64_t>();
  if (nb > kMaxItems || nj > kMaxItems || nm > kMaxItems || nr > kMaxItems || nc > kMaxItems)
    throw std::runtime_error("state image has implausible item counts");
  if (na != 0 && na != nc)
    throw std::runtime_error("state image has " + std::to_string(na) + " contact anchors for " +
                             std::to_string(nc) + " contacts (expected 0 or one each)");
  s.bodies.resize(nb);
  s.joints.resize(nj);
  s.motors.resize(nm);
  s.repeaters.resize(nr);
  s.contacts.resize(nc);
  s.contact_anchors.resize(na);
  visitFields(s, r);
  if (!r.done()) throw std::runtime_error("state image has trailing bytes");
  return s;
}

std::uint64_t State::hash() const {
  Hasher h;
  visitFields(*this, h);
  return h.h;
}

State makeInitialState(const Model& model) {
  State s;
  s.bodies.reserve(model.bodies.size());
  for (const BodyDef& b : model.bodies) {
    BodyState bs;
    bs.position_m = b.position_m;
    bs.orientation = b.orientation.normalized();
    if (!b.is_static) {
      bs.linear_velocity_mps = b.linear_velocity_mps;
      bs.angular_velocity_radps = b.angular_velocity_radps;
    }
    s.bodies.push_back(bs);
  }
  s.joints.resize(model.joints.size());
  for (std::size_t i = 0; i < model.joints.size(); ++i) {
    const JointDef& j = model.joints[i];
    s.joints[i].position = detail::jointCoordinate(j.type, detail::computeFrames(j, s.bodies));
  }
  s.motors.resize(model.motors.size());
  for (std::size_t i = 0; i < model.motors.size(); ++i) {
    const MotorDef& m = model.motors[i];
    // The rotor starts where the motor constraint holds: a_m = r * q.
    s.motors[i].angle_rad = m.gear_ratio * s.joints[m.joint].position;
    s.motors[i].voltage = m.initial_voltage;
  }
  s.repeaters.resize(model.repeaters.size());
  return s;
}

}  // namespace sim::dynamics
