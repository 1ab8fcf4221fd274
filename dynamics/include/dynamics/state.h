// The state: everything that changes while stepping. Together with the Model it determines the
// future exactly: two equal states stepped with the same model give bit-identical results, so a
// state can be saved, restored and compared (replay, regression tests).
#pragma once

#include <dynamics/math.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sim::dynamics {

struct Model;

/// Pose and velocity of one body's centre-of-mass frame (world axes).
struct BodyState {
  Vec3 position_m = Vec3::Zero();
  Quat orientation = Quat::Identity();
  Vec3 linear_velocity_mps = Vec3::Zero();
  Vec3 angular_velocity_radps = Vec3::Zero();
  /// Time the body has moved slower than the sleep thresholds (s).
  double slow_time_s = 0.0;
  /// A sleeping body is frozen (zero velocity, treated as static) until an awake body touches
  /// it or a joint connects it to one.
  bool asleep = false;
};

/// Accumulated impulses of a joint's rows over the last substep: the warm start of the next one
/// and, divided by the substep, the joint's reactions.
struct JointImpulses {
  Vec3 linear = Vec3::Zero();   ///< Point/translation rows (N s), world axes.
  Vec3 angular = Vec3::Zero();  ///< Rotation rows (N m s), world axes.
  double limit = 0.0;           ///< Limit row along the joint axis (N m s or N s).
  double friction = 0.0;        ///< Coulomb friction row along the axis.
  double viscous = 0.0;         ///< Viscous damping row (joint friction and motor bearing).
};

struct JointState {
  /// Joint coordinate: hinge angle (rad, unwrapped, multi-turn) or prismatic displacement (m).
  /// Zero where the joint's two frames coincide.
  double position = 0.0;
  double speed = 0.0;  ///< d(position)/dt after the last step (rad/s or m/s).
  JointImpulses impulses;
  double friction_z = 0.0;  ///< LuGre bristle deflection z (rad or m); 0 for other models.
  bool slipping = false;    ///< LuGre stick/slip state (false: sticking).
};

struct MotorState {
  double angle_rad = 0.0;    ///< Rotor angle a_m (unwrapped).
  double speed_radps = 0.0;  ///< Rotor speed w_m.
  double voltage = 0.0;      ///< Input u; clamped to [-1, 1] when stepping.
  /// Rotor torque of the characteristic Mp (u - w_m / w_xx) over the last step (N m).
  double torque_Nm = 0.0;
  double characteristic_impulse = 0.0;  ///< Warm start of the characteristic row (N m s).
  double coupling_impulse = 0.0;        ///< Warm start of the motor constraint row.
  double current_A = 0.0;               ///< Armature current of a drive unit (0 without one).
  /// Input, like `voltage`: the brake (MotorDef::brake_torque) is held open whatever u is (its
  /// manual release, or an injected fault).
  bool brake_released = false;
};

struct RepeaterState {
  double coupling_impulse = 0.0;  ///< Warm start of the repeater row (N m s or N s).
};

/// One contact point, kept from one step to the next: its impulses warm-start the next substep,
/// and with its point and normal it answers contact queries (force = impulse / substep).
/// Shapes are numbered in order over all bodies' shape lists (body 0's shapes first).
/// A contact point fixed in its two bodies (centre-of-mass frames), with the pair's relative pose
/// when the narrow phase found it: a manifold reused from it is measured against that pose
/// (ContactSettings::manifold_reuse_distance_m).
struct ContactAnchor {
  bool valid = false;  ///< False: the point cannot be reused (a mesh pair's, or not recorded).
  Vec3 on_a_local_m = Vec3::Zero();   ///< Witness point on shape a, in body a's frame.
  Vec3 on_b_local_m = Vec3::Zero();   ///< Witness point on shape b, in body b's frame.
  Vec3 normal_local = Vec3::UnitZ();  ///< The pair's normal in body a's frame.
  Vec3 b_in_a_m = Vec3::Zero();       ///< Body b's centre of mass in body a's frame.
  Quat b_to_a = Quat::Identity();     ///< Body b's orientation relative to body a.
};

struct ContactState {
  std::uint32_t shape_a = 0, shape_b = 0;  ///< shape_a < shape_b.
  std::uint32_t feature = 0;               ///< Persistent id of the point within the pair.
  Vec3 point_m = Vec3::Zero();             ///< Midway between the two surfaces (world).
  Vec3 normal = Vec3::UnitZ();             ///< Unit, from shape a toward shape b.
  double separation_m = 0.0;               ///< Negative when penetrating, at detection.
  double normal_impulse = 0.0;             ///< N s over the last substep (>= 0).
  Vec3 friction_impulse = Vec3::Zero();    ///< Tangential N s on shape b (world).
  double torsion_impulse = 0.0;            ///< N m s about the normal (first point of a pair).
};

struct State {
  double time_s = 0.0;
  std::uint64_t step = 0;
  std::vector<BodyState> bodies;
  std::vector<JointState> joints;
  std::vector<MotorState> motors;
  std::vector<RepeaterState> repeaters;
  std::vector<ContactState> contacts;  ///< Sorted by (shape_a, shape_b, feature).
  /// With manifold reuse on, one per contact (same order); otherwise empty.
  std::vector<ContactAnchor> contact_anchors;

  /// Exact binary image (native doubles, little-endian layout of this machine), versioned.
  std::vector<std::uint8_t> serialize() const;
  /// Inverse of serialize(); throws std::runtime_error naming the problem on bad input.
  static State deserialize(std::span<const std::uint8_t> bytes);
  /// 64-bit FNV-1a hash of every field's bit pattern in canonical order.
  std::uint64_t hash() const;

  /// Bit-for-bit equality of every field (NaNs with equal bits compare equal).
  bool operator==(const State& other) const { return serialize() == other.serialize(); }
};

/// The state a model starts in: initial poses and velocities, joint coordinates measured from
/// those poses, motors at rest with their initial voltage, no warm start.
State makeInitialState(const Model& model);

}  // namespace sim::dynamics
