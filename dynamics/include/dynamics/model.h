// The model: what a mechanism *is* (masses, joints, motor passport data, solver settings).
// It is compiled once, validated, and never changes while stepping; everything that changes lives
// in State (state.h). Indices into the vectors below are the handles used across the library.
#pragma once

#include <dynamics/flexure.h>
#include <dynamics/math.h>
#include <dynamics/seed000.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sim::dynamics {

/// Index of the world in BodyIndex fields: a joint with body_a == kWorld is anchored to the ground.
inline constexpr int kWorld = -1;

struct ConvexHullData;    // dynamics/shapes.h
struct TriangleMeshData;  // dynamics/shapes.h

/// Collision shape kinds. A plane is the half-space below the x-y plane of its pose (its normal
/// is the pose's local +z); planes and triangle meshes belong to static bodies (ground, walls).
/// New kinds are appended: the numbering orders the narrow phase's pair dispatch.
enum class ShapeType { Sphere, Box, Capsule, Plane, Cylinder, ConvexHull, TriangleMesh };

/// One collision shape attached to a body at a local pose; several shapes on one body form a
/// compound. Shapes carry no mass: the body's mass and inertia are given explicitly
/// (computeMassProperties() in dynamics/shapes.h derives them from a density).
struct ShapeDef {
  ShapeType type = ShapeType::Box;
  Frame pose;                                 ///< Relative to the body's centre-of-mass frame.
  Vec3 half_extents_m = Vec3::Constant(0.5);  ///< Box.
  double radius_m = 0.5;                      ///< Sphere, capsule and cylinder.
  /// Capsule: half the segment length; cylinder: half the height. Both along local z.
  double half_length_m = 0.5;
  /// ConvexHull: built once by makeConvexHull() and shared (immutable) by copies of the model.
  std::shared_ptr<const ConvexHullData> hull;
  /// TriangleMesh: built once by makeTriangleMesh() and shared (immutable); static bodies only.
  std::shared_ptr<const TriangleMeshData> mesh;
  int material = 0;  ///< Index into Model::materials (0: the default).
  /// Collision filtering: shapes s and t collide when (s.group & t.mask) && (t.group & s.mask).
  std::uint32_t group = 1;
  std::uint32_t mask = 0xffffffffu;
  /// Conveyor surface (a track belt): the shape's surface moves over the body along
  /// `belt_direction` (local axes) at belt_m_per_rad times the rotor speed of `belt_motor`
  /// (sprocket radius / gear ratio). Contact friction drives the belt and loads the motor.
  int belt_motor = -1;                  ///< Motor whose rotor drives the belt, or -1.
  Vec3 belt_direction = Vec3::UnitX();  ///< Local direction of surface motion (unit).
  double belt_m_per_rad = 0.0;          ///< Surface speed per rotor speed (m/rad).
};

/// Surface properties. Two touching materials combine as friction = sqrt(mu_a mu_b) (geometric
/// mean) and restitution = max(e_a, e_b).
struct MaterialDef {
  std::string name = "default";
  double friction = 0.5;     ///< Coulomb coefficient mu.
  double restitution = 0.0;  ///< Coefficient of restitution e in [0, 1].
  /// Torsional friction radius (m): the contact resists spinning about its normal with a torque
  /// up to friction * radius * normal force (0 disables; a pinched object should not spin).
  double torsion_radius_m = 0.0;
  /// Normal compliance of each contact point (N/m; 0: rigid). A soft contact point pushes back
  /// with stiffness * sinkage + damping * sinking speed instead of holding zero penetration, so
  /// the load of a body resting on many points (a track's belt) spreads as on an elastic
  /// foundation instead of being left to the solver's order. Two soft materials act in series.
  double contact_stiffness_npm = 0.0;
  double contact_damping_nspm = 0.0;  ///< N s/m per contact point; used where stiffness > 0.
};

/// A rigid body. Its reference frame origin is the centre of mass; the pose given here is the
/// initial pose of that frame in the world.
struct BodyDef {
  std::string name;
  double mass_kg = 1.0;                        ///< > 0 unless is_static.
  Mat3 inertia_kgm2 = Mat3::Identity() * 0.1;  ///< About the centre of mass, body axes; SPD.
  Vec3 position_m = Vec3::Zero();              ///< Initial centre-of-mass position (world).
  Quat orientation = Quat::Identity();         ///< Initial orientation (world).
  Vec3 linear_velocity_mps = Vec3::Zero();
  Vec3 angular_velocity_radps = Vec3::Zero();  ///< World axes.
  bool is_static = false;                      ///< Infinite mass: never moves.
  std::vector<ShapeDef> shapes;                ///< Collision geometry (none: never touches).
};

/// Flexure: a compliant hinge (dynamics/flexure.h). Its frames sit at the compliance centre with
/// x the bending axis and y along the flexure; it holds the out-of-plane motion rigidly and the
/// in-plane deformation (x, y, θ) by the soft rows of its spring.
enum class JointType { Fixed, Ball, Hinge, Prismatic, Flexure };

/// Joint friction: the Coulomb bound is coefficient * |reaction| + breakaway, plus viscous
/// damping. For a hinge the coefficient has units of metres (effective pin radius times mu) so the
/// bound is a torque (N m); for a prismatic joint it is dimensionless and the bound is a force (N).
/// With a Stribeck `curve` (seed 000 Table 1) the load-independent part of the bound is
/// g(|v|) instead of `breakaway`: `breakaway` (F_S) at rest falling to `coulomb` (F_C) with the
/// curve's shape over `stribeck_speed`, v the joint speed at the start of the substep (so no
/// algebraic loop and no extra state). Below the bound the row holds the joint (stiction).
enum class JointFrictionCurve { Constant, Lorentz, Tustin, Gaussian, Generalised };

/// Which friction law a joint uses: the Coulomb/Stribeck bound above, or LuGre with explicit
/// stick and slip states (SPEC §4, seed 003): F = σ0 z + σ1 dz/dt + σ2 v with the Gaussian curve
/// g(v) = F_C + (F_S − F_C) exp(−(v/v_S)²) (coulomb, breakaway, stribeck_speed; σ2 is `viscous`).
/// In the solver |F| at the substep's starting speed bounds the joint's friction row, so the joint
/// sticks while the load it must hold stays below |F| and slips when it exceeds it; z is advanced
/// exactly at that speed, and the stick/slip flag switches at the zero-speed window.
enum class JointFrictionModel { Coulomb, LuGre };

struct JointFriction {
  double coefficient = 0.0;  ///< m (hinge) or - (prismatic).
  double breakaway = 0.0;    ///< N m (hinge) or N (prismatic), load-independent part.
  double viscous = 0.0;      ///< N m s/rad (hinge) or N s/m (prismatic).
  JointFrictionCurve curve = JointFrictionCurve::Constant;
  double coulomb = 0.0;         ///< Sliding level F_C (N m or N), ≤ breakaway; curves only.
  double stribeck_speed = 0.0;  ///< v_S (rad/s or m/s), > 0; curves only.
  double exponent = 2.0;        ///< β of the generalised curve, > 0.
  JointFrictionModel model = JointFrictionModel::Coulomb;
  double sigma0 = 1e5;       ///< LuGre bristle stiffness σ0 (N m/rad or N/m), > 0.
  double sigma1 = 316.0;     ///< LuGre bristle damping σ1 (N m s/rad or N s/m), >= 0.
  double zero_speed = 5e-5;  ///< LuGre stick/slip window v_zero (rad/s or m/s), > 0.
};

/// A joint between body_a (or the world) and body_b. Each side has a local frame whose origin is
/// the anchor and whose x-axis is the joint axis (n0 in SPEC §2.2; y and z are n1 and n2). The two
/// frames coincide in the world at joint coordinate zero. For the world side, frame_a is in world
/// coordinates.
struct JointDef {
  std::string name;
  JointType type = JointType::Hinge;
  int body_a = kWorld;
  int body_b = 0;
  Frame frame_a;
  Frame frame_b;
  bool limit_enabled = false;
  double lower_limit = 0.0;  ///< rad (hinge) or m (prismatic).
  double upper_limit = 0.0;
  JointFriction friction;
  bool collide_connected = false;  ///< Let the two joined bodies' shapes collide.
  FlexureDef flexure;              ///< type == Flexure only.
};

/// Output friction of a drive unit: the generalised Stribeck curve as a bounded (stick/slip) row,
/// or the modified LuGre model of seed 000 eq. 22 (bristle state z, pre-sliding, T_min).
enum class DriveFriction { Static, LuGre };

/// Seed 000 drive unit (SPEC §3) between a motor's rotor and its joint. With it the motor is
/// driven by its armature circuit instead of the passport characteristic, and the rigid gear
/// coupling becomes an elastic, damped transmission with backlash and load-dependent output
/// friction. Output-side quantities are in the joint's units (N m and rad for a hinge, N and m
/// for a prismatic joint); the gear ratio is the motor's `gear_ratio`, the input inertia J1 its
/// rotor inertia, the output inertia the link's. Defaults: the seed 000 gripper (seed000.h).
struct DriveDef {
  double inductance_H = seed000::kInductance_H;      ///< L, > 0.
  double resistance_ohm = seed000::kResistance_ohm;  ///< R, > 0.
  double k_E = seed000::kBackEmf;         ///< Back-EMF constant (V s/rad, motor side), > 0.
  double k_M = seed000::kTorqueConstant;  ///< Torque constant (N m/A), > 0.
  double supply_V = seed000::kSupply_V;   ///< U: the armature voltage at input u = 1, > 0.
  double stiffness =
      seed000::kStiffness;  ///< c, transmission stiffness, output side (N m/rad), > 0.
  double damping =
      seed000::kInternalDamping;  ///< K_V1, internal damping, output side (N m s/rad), >= 0.
  double backlash = 0.0;          ///< θ_bn, half the gap, output side (rad), >= 0.
  double K_ML =
      seed000::kLoadFriction;  ///< Friction growth with transmitted torque (1/(N m)), >= 0.
  double coulomb = seed000::kCoulomb_Nm;            ///< M_C (N m), >= 0.
  double breakaway = seed000::kBreakaway_Nm;        ///< M_S (N m), >= M_C.
  double stribeck_speed = seed000::kStribeckSpeed;  ///< Ω_2S (rad/s), > 0.
  double exponent = seed000::kStribeckExponent;     ///< β, > 0.
  double viscous = 0.0;  ///< K_V2, viscous output friction (N m s/rad), >= 0.
  DriveFriction friction = DriveFriction::Static;
  double sigma0 = seed000::kSigma0;   ///< σ0(0) of eq. 22, bristle stiffness (N m/rad), > 0.
  double sigma1 = seed000::kSigma1;   ///< σ1(0) of eq. 22, bristle damping (N m s/rad), >= 0.
  double t_min_s = seed000::kTMin_s;  ///< T_min of eq. 22 (s), >= 0; 0: classical LuGre.
};

/// A DC gear motor given by passport data (SPEC §2.1), driving the coordinate of one hinge or
/// prismatic joint. Its rotor is a one-degree-of-freedom body inside the solver.
struct MotorDef {
  std::string name;
  int joint = 0;
  double stall_torque_Nm = 1.0;       ///< Mp: rotor torque at zero speed and u = 1.
  double no_load_speed_radps = 10.0;  ///< w_xx: rotor speed at zero load and u = 1.
  /// Electromechanical time constant t_m (s); used when rotor_inertia_kgm2 is not given:
  /// I_m = Mp t_m / w_xx.
  double time_constant_s = 0.0;
  std::optional<double> rotor_inertia_kgm2;  ///< I_m; overrides time_constant_s when set.
  /// Gear ratio r >= 1: joint speed = rotor speed / r. For a prismatic joint r is in rad/m
  /// (rotor radians per metre of travel).
  double gear_ratio = 1.0;
  double bearing_friction = 0.0;  ///< b: viscous friction on the joint (N m s/rad or N s/m).
  double initial_voltage = 0.0;   ///< u at t = 0, in [-1, 1].
  /// Seed 000 drive unit; when set, the characteristic Mp, w_xx is not used (the circuit drives
  /// the rotor), and each repeater of this motor gets a transmission and output friction of its
  /// own with the same parameters.
  std::optional<DriveDef> drive;
  /// Power-off holding brake on the driven joint (a spring-applied brake that the drive's power
  /// lifts): while |u| < brake_release_u it adds brake_torque to the joint's Coulomb bound, so the
  /// joint holds any load up to it and slips under a larger one; with the motor powered, or
  /// with MotorState::brake_released set, it lets go. brake_torque 0: no brake.
  double brake_torque = 0.0;      ///< Holding torque at the joint (N m), or force (N) if prismatic.
  double brake_release_u = 0.05;  ///< |u| at and above which the brake is lifted, in (0, 1].
  /// The drive amplifier's limits, at the joint (a URDF joint's effort and velocity): the voltage
  /// the characteristic gets is clamped, at each substep's start, so that the motor's torque
  /// r Mp (u - w_m / w_xx) stays within +-max_torque (its current limit) and its no-load speed
  /// within +-max_speed. Infinite: no limit. Passport characteristic only (not with `drive`).
  double max_torque = std::numeric_limits<double>::infinity();  ///< N m (N if prismatic), > 0.
  double max_speed = std::numeric_limits<double>::infinity();   ///< rad/s (m/s if prismatic), > 0.

  /// Rotor inertia actually used (kg m^2).
  double rotorInertia() const {
    return rotor_inertia_kgm2 ? *rotor_inertia_kgm2
                              : stall_torque_Nm * time_constant_s / no_load_speed_radps;
  }
};

/// A "repeater" (SPEC §2.3): joint coordinate = (k / r) * motor angle, so one motor drives
/// several joints (gripper jaws: k = -1). Its load is felt by the motor.
struct RepeaterDef {
  std::string name;
  int motor = 0;
  int joint = 0;
  double ratio = -1.0;  ///< k, nonzero.
};

/// Solver parameters. One call to step() advances `time_step_s`, split into `substeps`.
struct SolverSettings {
  double time_step_s = 0.01;
  int substeps = 1;
  int velocity_iterations = 20;  ///< Cap: the real-time criterion.
  int position_iterations = 4;   ///< Split-impulse position passes per substep.
  /// The velocity solve stops early when no row changes its impulse by more than this
  /// (N s or N m s) in a full sweep.
  double velocity_tolerance = 1e-10;
  /// The velocity solve also stops when no body's velocity (m/s and rad/s) and no motor's rotor
  /// speed over its gear ratio (the driven joint's rad/s or m/s) changed by more than this
  /// between sweeps k - 2 and k (two sweeps: the contacts alternate their order). 0: off.
  /// Redundant contacts can trade load without moving anything, so velocity_tolerance may
  /// never be met where the motion has settled; but under slow convergence a small change per
  /// sweep is not a small error either (docs/dynamics.md, "How each solve ends").
  double velocity_change_tolerance = 0.0;
  double position_tolerance_m = 1e-7;   ///< Position passes stop below this error (m or rad).
  double position_correction = 0.8;     ///< Fraction of position error removed per pass (0, 1].
  double max_linear_speed_mps = 500.0;  ///< Above this a body is reported as runaway.
  double max_angular_speed_radps = 2000.0;
  double max_motor_speed_radps = 1e5;
  bool warm_start = true;
  /// Contacts on the links of a motor-driven mechanism (a block: motors, the joints they drive,
  /// repeaters) see the link through the whole mechanism's response instead of the link's own
  /// mass, so a light jaw on a geared drive converges in a few sweeps (docs/dynamics.md).
  bool articulated_contacts = false;
};

/// Contact parameters (SPEC §2: contacts are inequality rows with Coulomb friction).
struct ContactSettings {
  /// Shapes closer than this get contact rows (speculative contacts: the row lets them approach
  /// by the gap in one substep, no more), so fast bodies do not tunnel through thin gaps.
  double margin_m = 0.01;
  double slop_m = 1e-4;                     ///< Penetration left alone by position correction.
  double restitution_threshold_mps = 0.5;   ///< Slower impacts do not bounce.
  double max_position_correction_m = 0.05;  ///< Per position pass and contact.
  /// Fraction of a contact's penetration beyond the slop removed per position pass, (0, 1]. Lower
  /// than the joints' SolverSettings::position_correction (0.8): each pass pushes every contact
  /// of a column on its own, and pushing most of each overlap out at once leaves a resting pile
  /// more restless (docs/contacts.md: 250 boxes at rest move at up to 4.2e-4 m/s with 0.2,
  /// 5.3e-4 with 0.8 and 1.9e-3 with 1.0; the penetration stays at the slop).
  double position_correction = 0.2;
  /// Sleeping: a group of touching or jointed bodies that all stayed slower than these speeds
  /// for sleep_time_s, and rests on a contact, freezes until an awake body touches it. Groups
  /// with a motor-driven joint, and groups hanging on joints alone, never sleep.
  bool sleep_enabled = true;
  double sleep_linear_speed_mps = 0.02;
  double sleep_angular_speed_radps = 0.05;
  double sleep_time_s = 0.5;
  /// Manifold reuse (off at 0): a convex pair whose relative pose moved less than both of these
  /// since its manifold was found keeps that manifold's points, fixed in the two bodies, instead
  /// of running the narrow phase again; separations are measured anew each substep. Resting
  /// piles skip most of their collision work. Off by default: a reused manifold misses features
  /// that came into reach within the tolerances (docs/contacts.md, "Manifold reuse").
  double manifold_reuse_distance_m = 0.0;
  double manifold_reuse_angle_rad = 0.0;
};

/// The complete, immutable description of a mechanism.
struct Model {
  std::vector<BodyDef> bodies;
  std::vector<JointDef> joints;
  std::vector<MotorDef> motors;
  std::vector<RepeaterDef> repeaters;
  Vec3 gravity_mps2{0.0, 0.0, -9.81};
  SolverSettings solver;
  ContactSettings contact;
  std::vector<MaterialDef> materials{MaterialDef{}};  ///< Index 0 is the default material.

  /// Index by name, or -1.
  int findBody(const std::string& name) const;
  int findJoint(const std::string& name) const;
  int findMotor(const std::string& name) const;
};

/// One validation problem: `field` names the offending item and field, e.g. "motors[drive].t_m".
struct ModelError {
  std::string field;
  std::string message;
};

/// Every problem found in the model (empty when valid).
std::vector<ModelError> validate(const Model& model);

}  // namespace sim::dynamics
