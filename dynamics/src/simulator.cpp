#include <dynamics/simulator.h>

#include <dynamics/friction.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string_view>

#include "articulation.h"
#include "dense_factor.h"
#include "joint_parts.h"
#include "motor_block.h"
#include "rows.h"
#include "contacts.h"
#include "joint_geometry.h"
#include "reduced_mechanism.h"
#include "simulator_testing.h"
#include "soft_row.h"
#include "union_find.h"

namespace sim::dynamics {

using detail::AxisRow;
using detail::HingeRotationPart;
using detail::JointFrames;
using detail::LineRows;
using detail::ImpulseSink;
using detail::rotateBy;
using detail::PointPart;
using detail::RowBlock;
using detail::RotationPart;
using detail::SolverBody;

namespace {

friction::StribeckCurve curveOf(JointFrictionCurve c) {
  switch (c) {
    case JointFrictionCurve::Lorentz: return friction::StribeckCurve::Lorentz;
    case JointFrictionCurve::Tustin: return friction::StribeckCurve::Tustin;
    case JointFrictionCurve::Gaussian: return friction::StribeckCurve::Gaussian;
    case JointFrictionCurve::Generalised:
    case JointFrictionCurve::Constant: break;
  }
  return friction::StribeckCurve::Generalised;
}

/// The joint's Stribeck curve: from `breakaway` at rest to `coulomb`, over `stribeck_speed`.
friction::StribeckParams stribeckOf(const JointFriction& f) {
  friction::StribeckParams sp;
  sp.coulomb = f.coulomb;
  sp.breakaway = f.breakaway;
  sp.stribeck_speed = f.stribeck_speed;
  sp.exponent = f.exponent;
  return sp;
}

/// The output friction curve of a seed 000 drive unit (the generalised curve).
friction::StribeckParams stribeckOf(const DriveDef& d) {
  friction::StribeckParams sp;
  sp.coulomb = d.coulomb;
  sp.breakaway = d.breakaway;
  sp.stribeck_speed = d.stribeck_speed;
  sp.exponent = d.exponent;
  return sp;
}

/// Seed 003 Gaussian curve g(v) of a LuGre joint.
double lugreCurve(const JointFriction& f, double v) {
  return friction::stribeckMagnitude(friction::StribeckCurve::Gaussian, stribeckOf(f), std::abs(v));
}

/// x += d y, written out: GCC leaves Eigen's 3-vector expression uninlined in long loops.
inline void addScaled(Vec3& x, double d, const Vec3& y) {
  x[0] += d * y[0];
  x[1] += d * y[1];
  x[2] += d * y[2];
}

std::string joinErrors(const std::vector<ModelError>& errors) {
  std::ostringstream out;
  out << "invalid model:";
  for (const ModelError& e : errors) out << " " << e.field << ": " << e.message << ";";
  return out.str();
}

/// Rotation vector taking orientation qa to qb (world axes), shortest way.
Vec3 rotationError(const Quat& qa, const Quat& qb) {
  Quat e = qb * qa.conjugate();
  if (e.w() < 0.0) e.coeffs() = -e.coeffs();
  return 2.0 * e.vec();
}

}  // namespace

ModelInvalid::ModelInvalid(std::vector<ModelError> errors)
    : std::invalid_argument(joinErrors(errors)), errors_(std::move(errors)) {}

std::string Fault::describe() const {
  if (kind == Kind::None) return "no fault";
  std::ostringstream out;
  out << (kind == Kind::NonFinite ? "non-finite value" : "runaway value") << " in " << item << "."
      << field << " = " << value << " at step " << step;
  return out.str();
}

// ---------------------------------------------------------------------------------------------
// Per-step working data. Rebuilt in prepare(); vectors are sized once in the constructor so a
// step allocates nothing.

struct JointWork {
  int a = 0, b = 0;  // solver body indices (the world is the last body)
  JointType type = JointType::Hinge;
  PointPart point;
  HingeRotationPart hinge_rotation;
  detail::PointRotationBlock<3> fixed_block;  // point + full rotation (fixed joints)
  RotationPart rotation;
  LineRows line;
  AxisRow axis;              // along the joint coordinate (hinge and prismatic)
  double axis_mass = 0.0;    // effective mass of the axis with the joint's other rows held
  // The joint's six rows (five hard rows, then the axis row) and the impulses along them that
  // change the axis speed by one unit while the five hard rows keep their speeds:
  // column 5 of K^-1 (axis_response) and of K^-1 with the driving rotor added (coupling_response).
  // Axis rows (limits, friction, damping, position couplings) act through these, so a pivot far
  // from the centre of mass does not make them fight the point rows.
  using Row = detail::Row;
  Row rows[6];
  Eigen::Matrix<double, 6, 1> axis_response = Eigen::Matrix<double, 6, 1>::Zero();
  Eigen::Matrix<double, 6, 1> coupling_response = Eigen::Matrix<double, 6, 1>::Zero();
  bool has_axis_rows = false;
  double position = 0.0;     // unwrapped joint coordinate at the start of the substep
  int limit_side = 0;        // +1 lower limit row, -1 upper limit row, 0 none
  double limit_bias = 0.0;   // allowed approach speed (speculative limit)
  double viscous_gamma = 0;  // soft row: impulse per unit speed
  double viscous_target = 0.0;  // speed the soft row damps toward (LuGre drive output friction)
  bool has_friction = false;
  double friction_level = 0.0;  // load-independent Coulomb bound this substep (N m or N)
  double start_speed = 0.0;     // axis speed at the start of the substep (LuGre z update)
  // A joint of a block solved in rotor coordinates needs its own responses (rows, axis_response,
  // coupling_response, axis_mass) only when a position pass corrects it: computed then.
  bool response_deferred = false;
  double rotor_mobility = 0.0;  // ratio^2 / I_m of the rotor driving the axis (0: undriven)
  // Seed 000 drive output on this joint: the drive, and whose coupling impulse (M1 h) it carries,
  // the motor's or a repeater's. With eq. 22 friction, z_end = lugre_decay z + lugre_gain Ω_end.
  const DriveDef* drive = nullptr;
  int drive_motor = -1;
  int drive_repeater = -1;
  double lugre_decay = 1.0;
  double lugre_gain = 0.0;
  // Flexure: rows 0-2 hold the out-of-plane motion (translation along the axis, two tilts) hard;
  // rows 3-5 are the spring on (x, y, θ), soft rows whose compliance gamma comes from the
  // stiffness and damping (soft_row.h). The torsion-spring model holds rows 3-4 hard too. All six
  // are solved as one block: d_lambda = -(K + Gamma)^-1 (Cdot + bias + Gamma lambda), Gamma the
  // soft rows' compliance (zero on hard rows, coupled between the spring's rows).
  Row flex_rows[6];
  Eigen::Matrix<double, 6, 6> flex_inv = Eigen::Matrix<double, 6, 6>::Zero();
  Eigen::Matrix<double, 6, 6> flex_gamma = Eigen::Matrix<double, 6, 6>::Zero();
  Eigen::Matrix<double, 6, 1> flex_bias = Eigen::Matrix<double, 6, 1>::Zero();  // row speed
  Eigen::Matrix<double, 6, 1> flex_lambda = Eigen::Matrix<double, 6, 1>::Zero();  // this substep
};

namespace {

using Row6 = Eigen::Matrix<double, 6, 1>;

/// The flexure's six rows at frames f (see JointWork), its deformation q = (x, y, θ) and the
/// errors of its three out-of-plane rows (along the axis, two tilts).
void flexureRows(const JointFrames& f, JointWork::Row rows[6], Vec3& q, Vec3& out_of_plane) {
  const Vec3 d = f.anchor_b - f.anchor_a;
  const Vec3 a0 = f.axes_a.col(0);
  auto linear = [&](const Vec3& e) {
    return JointWork::Row{-e, -(f.arm_a + d).cross(e), e, f.arm_b.cross(e)};
  };
  auto angular = [](const Vec3& u) { return JointWork::Row{Vec3::Zero(), -u, Vec3::Zero(), u}; };
  rows[0] = linear(a0);
  rows[1] = angular(f.axes_b.col(1).cross(a0));
  rows[2] = angular(f.axes_b.col(2).cross(a0));
  rows[3] = linear(f.axes_a.col(1));
  rows[4] = linear(f.axes_a.col(2));
  rows[5] = angular(detail::hingeAngleGradient(f));
  q = {d.dot(f.axes_a.col(1)), d.dot(f.axes_a.col(2)), detail::hingeAngle(f)};
  out_of_plane = {d.dot(a0), a0.dot(f.axes_b.col(1)), a0.dot(f.axes_b.col(2))};
}

}  // namespace

struct MotorWork {
  double inv_inertia = 0.0;  // 1 / I_m
  double gamma = 0.0;        // characteristic row softness (N m s per rad/s)
  double target_speed = 0.0; // rad/s
  double damping = 0.0;      // c = Mp / w_xx + b / r^2 (N m s/rad at the rotor)
  double coupling_ratio = 0.0;  // 1/r
  double coupling_k_inv = 0.0;
  int joint = 0;
  const DriveDef* drive = nullptr;  // seed 000 drive unit, or none (rigid gear coupling)
};

struct RepeaterWork {
  int joint = 0, motor = 0;
  double ratio = 0.0;  // k/r
  double offset = 0.0; // joint coordinate minus (k/r) a_m in the initial state
  double k_inv = 0.0;
};

struct Simulator::Impl {
  Model model;
  int world = 0;  // index of the static world body in `bodies`
  std::vector<double> body_inv_mass;
  std::vector<Mat3> body_inv_inertia_local;
  std::vector<Mat3> body_inertia_local;
  std::vector<char> body_gyroscopic;  // 1 when the inertia is not isotropic (ω × Iω can be nonzero)
  std::vector<double> repeater_offset;
  std::vector<int> motor_of_joint;  // -1 when undriven
  std::vector<Vec3> load_force, load_torque;  // setBodyLoad(), per body (world axes)

  // Scratch, sized once.
  std::vector<SolverBody> bodies;
  std::vector<Vec3> positions;
  std::vector<Quat> orientations;
  std::vector<double> rotor_angle, rotor_speed;
  std::vector<JointWork> joints;
  // Point + hinge rotation rows of every hinge outside a motor block, solved as one block each.
  // Packed apart from JointWork so the velocity sweeps over a long chain stay in cache.
  struct HingeSweep {
    int a = 0, b = 0;
    detail::PointRotationBlock<2> block;
  };
  std::vector<HingeSweep> hinge_sweeps;
  std::vector<int> hinge_sweep_of_joint;  // index into hinge_sweeps, -1 for other joints
  // Body-local anchors and axes of each swept hinge (parallel to hinge_sweeps), so the position
  // pass measures its error from two rotation matrices instead of the full joint frames.
  struct HingeLocalFrame {
    Vec3 anchor_a, anchor_b, axis_a, side_b1, side_b2;
  };
  std::vector<HingeLocalFrame> hinge_frames;
  std::vector<MotorWork> motors;
  std::vector<RepeaterWork> repeaters;
  // Driven mechanisms: rotors and the joints they drive, grouped by connectivity (see RowBlock).
  struct BlockPlan {
    std::vector<int> motors;
    std::vector<int> joints;       // driven joints, main joints first
    std::vector<int> drivers;      // per joint: motor index, or -(repeater index) - 2
    // Hinges and sliders on rigid couplings, each moving body the follower of exactly one of
    // them, leading back to a static body: the structure a reduced block needs (ReducedBlock).
    bool rotor_tree = false;
  };
  std::vector<BlockPlan> block_plans;
  std::vector<RowBlock> blocks;
  // A rotor-tree block solved in its rotors' coordinates (detail::ReducedMechanism). Its RowBlock keeps only the characteristic and limit rows
  // (targets, the limits' active set, where their impulses go) and is neither assembled nor
  // factored; the joints' rows go straight into the mechanism (buildReduced).
  struct ReducedBlock {
    bool planned = false;  // the block has the structure
    bool ready = false;    // this substep's build succeeded (else the RowBlock is factored)
    detail::ReducedMechanism mechanism;
    std::vector<int> link_body;   // solver body per link slot
    std::vector<int> plan_joint;  // per joint slot: index into BlockPlan::joints
    std::vector<int> slot_of_joint;  // per model joint: its joint slot (-1: not in the block)
    std::vector<int> limit_row;   // per limit (this substep): its row in RowBlock::rows
    std::vector<int> limit_of_slot;  // per joint slot (this substep): its limit, or -1
    std::vector<detail::ReducedMechanism::Limit> limits;
    std::vector<detail::Vec6> velocity, wrench;  // per link, scratch
    Eigen::VectorXd rotor_speed, targets, accumulated, gamma;  // per rotor slot, scratch
    detail::ReducedMechanism::Impulses impulses;
  };
  std::vector<ReducedBlock> reduced;  // per block
  bool buildReduced(int bi, double h);
  void solveReduced(int bi, State& s, double& largest);
  void addReducedImpulses(int bi, const detail::ReducedMechanism::Impulses& in, State& s,
                          double* largest);
  std::vector<char> joint_in_block;       // joint solved inside a block
  std::vector<char> reduced_joint;        // joint of a block planned in rotor coordinates
  std::vector<int> axis_row_joints;       // joints with viscous, friction or limit rows this substep
  std::vector<double> rotor_inv_inertia;  // 1 / I_m per motor
  detail::ContactSolver contacts;
  bool fault_reported = false;

  // Links of the blocks as contacts see them (detail::BlockArticulation): per link, the response
  // of the whole mechanism to a unit wrench on it, computed on first use each substep from the
  // block's factor and active set. A limit that engages or releases later in the substep leaves
  // the response stale; the block's own solve, still run every sweep, then corrects the
  // velocities, so a stale response only slows convergence.
  struct LinkResponse {
    bool computed = false;
    detail::Mat6 self;                                  // the link's own (v; w) per (f; tau)
    std::vector<std::pair<int, detail::Mat6>> others;   // the other links of the block
    std::vector<std::pair<int, detail::Vec6>> rotors;   // rotor speed per unit wrench
    // Block rows' impulses per unit wrench (a block in full coordinates; a reduced block finds
    // them from its snapshot when needed).
    Eigen::Matrix<double, Eigen::Dynamic, 6, Eigen::RowMajor> impulses;
    detail::Vec6 pending = detail::Vec6::Zero();  // wrench whose block impulses are not yet added
  };
  // Per block, built on first use each substep: what one unit impulse of each row does, M^-1 J^T
  // on each moving body (6 x rows) and rotor (1 x rows).
  struct BlockMoves {
    bool built = false;
    std::vector<int> bodies;
    std::vector<Eigen::Matrix<double, 6, Eigen::Dynamic>> body_moves;
    std::vector<int> rotors;
    std::vector<Eigen::RowVectorXd> rotor_moves;
    Eigen::VectorXd pending;  // block rows' impulses for the pending wrenches (pending_valid)
    bool pending_valid = false;
    Eigen::VectorXd limit_pending;  // a reduced block's limits' part of them (limits_valid)
    bool limits_valid = false;
  };
  struct Articulation final : detail::BlockArticulation {
    Impl* impl = nullptr;
    State* state = nullptr;
    std::vector<int> block_of_body;   // per solver body: its block, or -1
    std::vector<BlockMoves> moves;    // per block
    std::vector<LinkResponse> links;  // per solver body
    bool any_pending = false;

    int blockOf(int body) const override { return block_of_body[body]; }
    const detail::Mat6* response(int body) override;
    void propagate(int body, const detail::Vec6& wrench, std::vector<SolverBody>& bodies,
                   std::vector<double>& rotor_speed) override;
    void compute(int body);
    void buildMoves(int block);
    const Eigen::VectorXd& pendingImpulses(int block);
    void flush();
    double pendingImpulse(int bi, Eigen::Index i);
    const std::vector<detail::Vec6>& pendingWrenches(int bi);
  } articulation;
  std::vector<char> block_closed;  // per block: only its rows and articulated contacts act on it
  void prepareArticulation();
  void articulateContacts(State& s);
  bool blockStillHolds(int bi, const State& s);
  bool all_blocks_closed = false;

  void planBlocks();
  void addJointRows(RowBlock& block, int j);
  void buildBlocks(const State& s, double h);
  void solveBlock(RowBlock& block, State& s, double& largest);
  void addDriveRows(RowBlock& block, const State& s, int motor, int repeater, double h);
  void addDriveFriction(JointWork& w, const State& s, int j, double h);
  void updateDrivesAndFriction(State& s, double h);

  explicit Impl(Model m);
  void load(const State& s);
  void store(State& s, double h) const;
  void applyForces(const State& s, double h);
  void prepare(const State& s, double h);
  void warmStart(State& s);
  void solveVelocity(State& s, double h, int& iterations, double& residual, bool& capped);
  void integrate(double h);
  double solvePosition(int& iterations);
  void updateJointCoordinates(State& s);
  void updateSleep(State& s);
  void prepareFlexure(JointWork& w, const FlexureDef& def, const JointFrames& f, double h);
  double solveFlexurePosition(int j, double beta);
  detail::UnionFind sleep_groups;  // scratch of updateSleep, sized once
  std::vector<int> sleep_flags;
  JointFrames frames(const JointDef& def, const JointWork& w) const {
    return detail::computeFrames(positions[w.a], orientations[w.a], def.frame_a, positions[w.b],
                                 orientations[w.b], def.frame_b);
  }
  double measureJoint(int j) const;
  double unwrappedJoint(int j, double reference) const;
  Fault check(const State& s) const;
};

// A hinge's or slider's six rows this substep: five hard rows, then the axis row (see
// JointWork::rows), and the hard rows' target speeds. A hinge's rows 0-2 hold its point (their
// impulses are the joint's linear impulse) and 3-4 its axis direction (angular); a slider's rows
// 0-2 hold its rotation (angular) and 3-4 its line (linear).
void jointRows(const JointWork& w, JointWork::Row rows[6], double targets[5]) {
  using Row = JointWork::Row;
  const Vec3 zero = Vec3::Zero();
  if (w.type == JointType::Hinge) {
    for (int k = 0; k < 3; ++k) {
      const Vec3 e = Vec3::Unit(k);
      rows[k] = Row{-e, -w.point.r_a.cross(e), e, w.point.r_b.cross(e)};
      targets[k] = w.point.bias[k];
    }
    rows[3] = Row{zero, -w.hinge_rotation.u1, zero, w.hinge_rotation.u1};
    rows[4] = Row{zero, -w.hinge_rotation.u2, zero, w.hinge_rotation.u2};
    targets[3] = w.hinge_rotation.bias[0];
    targets[4] = w.hinge_rotation.bias[1];
  } else {
    for (int k = 0; k < 3; ++k) rows[k] = Row{zero, -Vec3::Unit(k), zero, Vec3::Unit(k)};
    rows[3] = Row{-w.line.row1.lin, w.line.row1.ang_a, w.line.row1.lin, w.line.row1.ang_b};
    rows[4] = Row{-w.line.row2.lin, w.line.row2.ang_a, w.line.row2.lin, w.line.row2.ang_b};
    for (int k = 0; k < 5; ++k) targets[k] = 0.0;
  }
  rows[5] = Row{-w.axis.lin, w.axis.ang_a, w.axis.lin, w.axis.ang_b};
}

// Where a hinge's or slider's hard row k keeps its impulse (jointRows()).
ImpulseSink hardRowSink(JointType type, int k) {
  return (k < 3) == (type == JointType::Hinge) ? ImpulseSink::JointLinear
                                                : ImpulseSink::JointAngular;
}

// The joint's 6x6 K = J M^-1 J^T over its five hard rows and its axis row, and the responses
// described at JointWork::rows. `rotor_mobility` is ratio^2 / I_m of the rotor driving the axis
// (0 when undriven). The axis mass (K^-1)_55 is the effective mass of the joint coordinate.
void setupJointResponse(JointWork& w, const SolverBody& a, const SolverBody& b,
                        double rotor_mobility) {
  double targets[5];
  jointRows(w, w.rows, targets);
  Vec3 turn_a[6], turn_b[6];  // I^-1 times each row's angular parts, once per row
  for (int j = 0; j < 6; ++j) {
    turn_a[j] = a.inv_inertia * w.rows[j].ang_a;
    turn_b[j] = b.inv_inertia * w.rows[j].ang_b;
  }
  Eigen::Matrix<double, 6, 6> k;
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j <= i; ++j) {
      const double v = a.inv_mass * w.rows[i].lin_a.dot(w.rows[j].lin_a) +
                       w.rows[i].ang_a.dot(turn_a[j]) +
                       b.inv_mass * w.rows[i].lin_b.dot(w.rows[j].lin_b) +
                       w.rows[i].ang_b.dot(turn_b[j]);
      k(i, j) = k(j, i) = v;
    }
  }
  // K is a Gram matrix J M^-1 J^T: symmetric positive semi-definite, singular when its rows are
  // dependent (e.g. both sides static). Only column 5 of K^-1 is needed.
  const bool invertible = detail::lastInverseColumn<6>(k, w.axis_response);
  if (!invertible) {  // act on the axis row alone
    w.axis_response = w.axis.k > 0.0 ? Eigen::Matrix<double, 6, 1>(Eigen::Matrix<double, 6, 1>::Unit(5) / w.axis.k)
                                     : Eigen::Matrix<double, 6, 1>::Zero();
  }
  w.axis_mass = std::max(0.0, w.axis_response[5]);
  // With the rotor, K + m e5 e5^T; by Sherman-Morrison its column 5 of the inverse is
  // axis_response / (1 + m axis_response[5]).
  if (rotor_mobility > 0.0) {
    w.coupling_response = invertible ? Eigen::Matrix<double, 6, 1>(
                                           w.axis_response / (1.0 + rotor_mobility * w.axis_response[5]))
                                     : Eigen::Matrix<double, 6, 1>::Zero();
  }
}

Simulator::Impl::Impl(Model m) : model(std::move(m)) {
  const int nb = static_cast<int>(model.bodies.size());
  world = nb;
  body_inv_mass.assign(nb + 1, 0.0);
  body_inv_inertia_local.assign(nb + 1, Mat3::Zero());
  body_inertia_local.assign(nb + 1, Mat3::Zero());
  body_gyroscopic.assign(nb + 1, 0);
  load_force.assign(nb + 1, Vec3::Zero());
  load_torque.assign(nb + 1, Vec3::Zero());
  for (int i = 0; i < nb; ++i) {
    const BodyDef& b = model.bodies[i];
    if (b.is_static) continue;
    body_inv_mass[i] = 1.0 / b.mass_kg;
    body_inv_inertia_local[i] = b.inertia_kgm2.inverse();
    body_inertia_local[i] = b.inertia_kgm2;
    const double trace = b.inertia_kgm2.trace() / 3.0;
    body_gyroscopic[i] = (b.inertia_kgm2 - trace * Mat3::Identity()).norm() > 1e-12 * trace;
  }
  bodies.assign(nb + 1, SolverBody{});
  positions.assign(nb + 1, Vec3::Zero());
  orientations.assign(nb + 1, Quat::Identity());
  rotor_angle.assign(model.motors.size(), 0.0);
  rotor_speed.assign(model.motors.size(), 0.0);
  joints.assign(model.joints.size(), JointWork{});
  for (std::size_t j = 0; j < model.joints.size(); ++j) {
    const JointDef& def = model.joints[j];
    joints[j].a = def.body_a == kWorld ? world : def.body_a;
    joints[j].b = def.body_b;
    joints[j].type = def.type;
    joints[j].has_friction = def.friction.coefficient > 0.0 || def.friction.breakaway > 0.0 ||
                             def.friction.model == JointFrictionModel::LuGre;
  }
  motors.assign(model.motors.size(), MotorWork{});
  motor_of_joint.assign(model.joints.size(), -1);
  for (std::size_t i = 0; i < model.motors.size(); ++i) {
    const MotorDef& md = model.motors[i];
    motor_of_joint[md.joint] = static_cast<int>(i);
    if (md.drive) {
      motors[i].drive = &*md.drive;
      joints[md.joint].has_friction = true;  // the drive's output friction
      joints[md.joint].drive = &*md.drive;
      joints[md.joint].drive_motor = static_cast<int>(i);
    }
    if (md.brake_torque > 0.0) joints[md.joint].has_friction = true;  // the holding brake
  }
  for (std::size_t i = 0; i < model.repeaters.size(); ++i) {
    const RepeaterDef& rd = model.repeaters[i];
    if (!model.motors[rd.motor].drive) continue;
    JointWork& jw = joints[rd.joint];  // a follower gets its own transmission and output friction
    jw.has_friction = true;
    jw.drive = &*model.motors[rd.motor].drive;
    jw.drive_motor = rd.motor;
    jw.drive_repeater = static_cast<int>(i);
  }
  repeaters.assign(model.repeaters.size(), RepeaterWork{});
  rotor_inv_inertia.assign(model.motors.size(), 0.0);
  for (std::size_t i = 0; i < model.motors.size(); ++i) {
    rotor_inv_inertia[i] = 1.0 / model.motors[i].rotorInertia();
  }
  planBlocks();
  contacts.init(model);
  sleep_groups.reset(nb);
  sleep_flags.assign(nb, 0);
  hinge_sweep_of_joint.assign(model.joints.size(), -1);
  for (std::size_t j = 0; j < model.joints.size(); ++j) {
    if (joints[j].type != JointType::Hinge || joint_in_block[j]) continue;
    hinge_sweep_of_joint[j] = static_cast<int>(hinge_sweeps.size());
    hinge_sweeps.push_back({joints[j].a, joints[j].b, {}});
    const JointDef& def = model.joints[j];
    hinge_frames.push_back({def.frame_a.position, def.frame_b.position,
                            def.frame_a.rotation * Vec3::UnitX(),
                            def.frame_b.rotation * Vec3::UnitY(),
                            def.frame_b.rotation * Vec3::UnitZ()});
  }
  // Repeaters hold whatever offset the initial poses give them.
  const State s0 = makeInitialState(model);
  for (std::size_t i = 0; i < model.repeaters.size(); ++i) {
    const RepeaterDef& r = model.repeaters[i];
    RepeaterWork& w = repeaters[i];
    w.joint = r.joint;
    w.motor = r.motor;
    w.ratio = r.ratio / model.motors[r.motor].gear_ratio;
    w.offset = s0.joints[r.joint].position - w.ratio * s0.motors[r.motor].angle_rad;
  }
}

double Simulator::Impl::measureJoint(int j) const {
  const JointDef& def = model.joints[j];
  return detail::jointCoordinate(def.type, frames(def, joints[j]));
}

/// The joint coordinate nearest to `reference`: hinge angles continue across +-pi.
double Simulator::Impl::unwrappedJoint(int j, double reference) const {
  return detail::unwrapCoordinate(model.joints[j].type, measureJoint(j), reference);
}

void Simulator::Impl::load(const State& s) {
  const int nb = world;
  for (int i = 0; i < nb; ++i) {
    const BodyState& bs = s.bodies[i];
    positions[i] = bs.position_m;
    orientations[i] = bs.orientation;
    // A sleeping body is frozen: static for the solver until it wakes.
    bodies[i].v = bs.asleep ? Vec3::Zero() : bs.linear_velocity_mps;
    bodies[i].w = bs.asleep ? Vec3::Zero() : bs.angular_velocity_radps;
    bodies[i].inv_mass = bs.asleep ? 0.0 : body_inv_mass[i];
  }
  for (std::size_t m = 0; m < motors.size(); ++m) {
    rotor_angle[m] = s.motors[m].angle_rad;
    rotor_speed[m] = s.motors[m].speed_radps;
  }
}

void Simulator::Impl::store(State& s, double h) const {
  const int nb = world;
  for (int i = 0; i < nb; ++i) {
    BodyState& bs = s.bodies[i];
    bs.position_m = positions[i];
    bs.orientation = orientations[i];
    bs.linear_velocity_mps = bodies[i].v;
    bs.angular_velocity_radps = bodies[i].w;
  }
  for (std::size_t m = 0; m < motors.size(); ++m) {
    const MotorDef& def = model.motors[m];
    MotorState& ms = s.motors[m];
    ms.angle_rad = rotor_angle[m];
    ms.speed_radps = rotor_speed[m];
    const double u = std::clamp(ms.voltage, -1.0, 1.0);
    ms.torque_Nm = def.drive ? def.drive->k_M * ms.current_A
                             : def.stall_torque_Nm * (u - ms.speed_radps / def.no_load_speed_radps);
  }
  for (std::size_t j = 0; j < joints.size(); ++j) {
    const JointWork& w = joints[j];
    if (w.type == JointType::Hinge || w.type == JointType::Prismatic)
      s.joints[j].speed = w.axis.velocity(bodies[w.a], bodies[w.b]);
    if (w.type == JointType::Flexure)
      s.joints[j].speed = w.flex_rows[5].velocity(bodies[w.a], bodies[w.b]);
  }
  (void)h;
}

// Stage 1: known forces. Gravity on bodies; the motor characteristic is a soft row (stage 4).
void Simulator::Impl::applyForces(const State& s, double h) {
  (void)s;
  const Vec3 dv = model.gravity_mps2 * h;
  for (int i = 0; i < world; ++i) {
    if (bodies[i].inv_mass == 0.0) continue;
    bodies[i].v += dv + (bodies[i].inv_mass * h) * load_force[i];
    if (load_torque[i].squaredNorm() > 0.0) {  // world inverse inertia at this pose
      const Mat3 r = orientations[i].toRotationMatrix();
      bodies[i].w += h * (r * body_inv_inertia_local[i] * r.transpose() * load_torque[i]);
    }
  }
  // Gyroscopic torque -ω × Iω, integrated implicitly in body axes with one Newton step
  // (I(ω' - ω) + h ω' × Iω' = 0 linearised at ω): stable at any spin rate, keeps the angular
  // momentum's direction, and loses a little energy where explicit integration would gain it.
  for (int i = 0; i < world; ++i) {
    if (bodies[i].inv_mass == 0.0 || !body_gyroscopic[i]) continue;
    const Quat& q = orientations[i];
    const Mat3& inertia = body_inertia_local[i];
    const Vec3 w = q.conjugate() * bodies[i].w;
    const Vec3 momentum = inertia * w;
    const Vec3 residual = h * w.cross(momentum);
    if (residual.squaredNorm() == 0.0) continue;
    const Mat3 jacobian = inertia + h * (detail::skew(w) * inertia - detail::skew(momentum));
    // Closed-form 3x3 inverse: the Jacobian is the inertia plus an h-small part, far from
    // singular, and this is 10x cheaper than a pivoting LU.
    bodies[i].w = q * (w - jacobian.inverse() * residual);
  }
}

// Stage 2: world inertia, joint geometry, effective masses, motor softness.
void Simulator::Impl::prepare(const State& s, double h) {
  for (int i = 0; i < world; ++i) {
    if (bodies[i].inv_mass == 0.0) {
      bodies[i].inv_inertia.setZero();
      continue;
    }
    const Mat3 r = orientations[i].toRotationMatrix();
    bodies[i].inv_inertia = r * body_inv_inertia_local[i] * r.transpose();
  }
  for (std::size_t j = 0; j < joints.size(); ++j) {
    const JointDef& def = model.joints[j];
    JointWork& w = joints[j];
    const SolverBody& a = bodies[w.a];
    const SolverBody& b = bodies[w.b];
    const JointFrames f = frames(def, w);
    w.position = s.joints[j].position;
    switch (def.type) {
      case JointType::Ball:
        w.point.setup(a, b, f.arm_a, f.arm_b);
        w.point.setCurvatureTarget(a, b, h);
        break;
      case JointType::Fixed:
        w.point.setup(a, b, f.arm_a, f.arm_b);
        w.point.setCurvatureTarget(a, b, h);
        w.rotation.setup(a, b);
        w.fixed_block.setup(a, b, w.point, Mat3::Identity());
        break;
      case JointType::Hinge: {
        // Blocks and joint responses build their own K from arms and directions.
        w.point.setArms(f.arm_a, f.arm_b);
        w.point.setCurvatureTarget(a, b, h);
        w.hinge_rotation.setDirections(f.axes_a.col(0), f.axes_b.col(1), f.axes_b.col(2));
        w.hinge_rotation.setCurvatureTarget(a, b, f.axes_a.col(0), f.axes_b.col(1),
                                            f.axes_b.col(2), h);
        if (!joint_in_block[j]) {
          Eigen::Matrix<double, 3, 2> u;
          u << w.hinge_rotation.u1, w.hinge_rotation.u2;
          HingeSweep& sweep = hinge_sweeps[hinge_sweep_of_joint[j]];
          sweep.block.setup(a, b, w.point, u);
          sweep.block.bias.tail<2>() = w.hinge_rotation.bias;
        }
        const Vec3 g = detail::hingeAngleGradient(f);
        w.axis.setup(a, b, Vec3::Zero(), -g, g);
        break;
      }
      case JointType::Flexure:
        prepareFlexure(w, def.flexure, f, h);
        break;
      case JointType::Prismatic: {
        const Vec3 d = f.anchor_b - f.anchor_a;
        w.rotation.setup(a, b);
        w.line.setup(a, b, f.arm_a, f.arm_b, d, f.axes_a.col(1), f.axes_a.col(2));
        const Vec3 n = f.axes_a.col(0);
        w.axis.setup(a, b, n, -(f.arm_a + d).cross(n), f.arm_b.cross(n));
        break;
      }
    }
    w.has_axis_rows = (def.type == JointType::Hinge || def.type == JointType::Prismatic) &&
                      (def.limit_enabled || w.has_friction || def.friction.viscous > 0.0 ||
                       joint_in_block[j]);
    if (w.has_axis_rows) {
      double rotor_mobility = 0.0;
      if (motor_of_joint[j] >= 0) {
        const MotorDef& md = model.motors[motor_of_joint[j]];
        rotor_mobility = 1.0 / (md.gear_ratio * md.gear_ratio * md.rotorInertia());
      }
      for (const RepeaterDef& rd : model.repeaters) {
        if (rd.joint != static_cast<int>(j)) continue;
        const MotorDef& md = model.motors[rd.motor];
        rotor_mobility = rd.ratio * rd.ratio / (md.gear_ratio * md.gear_ratio * md.rotorInertia());
      }
      w.rotor_mobility = rotor_mobility;
      // Deferred where only position passes read the responses (no friction or viscous rows).
      w.response_deferred = reduced_joint[j] && !w.has_friction && def.friction.viscous == 0.0;
      if (!w.response_deferred) setupJointResponse(w, a, b, rotor_mobility);
    }
    // Limits: one active side, the nearer one; speculative so an approaching joint stops at it.
    w.limit_side = 0;
    if (def.limit_enabled) {
      const double to_lower = w.position - def.lower_limit;
      const double to_upper = def.upper_limit - w.position;
      w.limit_side = to_lower <= to_upper ? 1 : -1;
      const double gap = w.limit_side > 0 ? to_lower : to_upper;
      w.limit_bias = gap > 0.0 ? gap / h : 0.0;
    }
    // Stribeck curve: the bound follows g(|v|) at the substep's starting speed (explicit in v,
    // so the row stays a plain bounded row; the lag is one substep).
    w.friction_level = def.friction.breakaway;
    if (w.has_axis_rows && def.friction.curve != JointFrictionCurve::Constant) {
      w.friction_level = friction::stribeckMagnitude(curveOf(def.friction.curve),
                                                     stribeckOf(def.friction),
                                                     std::abs(w.axis.velocity(a, b)));
    }
    w.start_speed = w.has_axis_rows ? w.axis.velocity(a, b) : 0.0;
    if (def.friction.model == JointFrictionModel::LuGre) {
      // Seed 003 LuGre: |F| at the starting speed bounds the friction row (stick while the
      // load stays below it); σ2 v is the viscous soft row below.
      const JointFriction& fr = def.friction;
      const double v = w.start_speed;
      const double g = lugreCurve(fr, v);
      const double z = s.joints[j].friction_z;
      const double zdot = v - fr.sigma0 * std::abs(v) * z / g;
      w.friction_level = std::abs(fr.sigma0 * z + fr.sigma1 * zdot);
    }
    // Joint viscous friction as a soft row (backward Euler: impulse = c h * speed).
    w.viscous_gamma = def.friction.viscous * h;
    // A power-off brake holds while the motor is unpowered: one more Coulomb level on the row.
    if (const int m = motor_of_joint[j]; m >= 0) {
      const MotorDef& md = model.motors[m];
      const MotorState& ms = s.motors[m];
      if (md.brake_torque > 0.0 && !ms.brake_released && std::abs(ms.voltage) < md.brake_release_u)
        w.friction_level += md.brake_torque;
    }
    w.viscous_target = 0.0;
    if (w.drive != nullptr) addDriveFriction(w, s, static_cast<int>(j), h);
  }
  // The joints whose axis rows have work this substep, in joint order: the sweeps skip the rest
  // without touching them (a long chain of bare hinges has none).
  axis_row_joints.clear();
  for (std::size_t j = 0; j < joints.size(); ++j) {
    const JointWork& w = joints[j];
    if (w.type != JointType::Hinge && w.type != JointType::Prismatic) continue;
    if (!(w.axis_mass > 0.0)) continue;
    if (w.viscous_gamma > 0.0 || w.has_friction || (w.limit_side != 0 && !joint_in_block[j]))
      axis_row_joints.push_back(static_cast<int>(j));
  }

  // Motors: the characteristic tau = Mp (u - w_m / w_xx) - (b / r^2) w_m (bearing friction moved
  // to the rotor through the gear) is a damper c (w_target - w_m); its softness is set in
  // buildBlocks once the inertia the rotor sees is known.
  for (std::size_t m = 0; m < motors.size(); ++m) {
    const MotorDef& def = model.motors[m];
    MotorWork& w = motors[m];
    const double r = def.gear_ratio;
    const double im = def.rotorInertia();
    w.inv_inertia = 1.0 / im;
    w.joint = def.joint;
    w.coupling_ratio = 1.0 / r;
    const double u = std::clamp(s.motors[m].voltage, -1.0, 1.0);
    if (w.drive != nullptr) {
      // Armature circuit L di/dt = U u - R i - k_E w_m by backward Euler with the rotor speed at
      // the end of the substep: i' = (L i + h (U u - k_E w')) / (L + h R). The motor torque
      // k_M i' = A - B w' is then a damper B toward A / B on the rotor, solved with the rest of
      // the block, so current and speed are implicit together (no algebraic loop).
      const DriveDef& d = *w.drive;
      const double denom = d.inductance_H + h * d.resistance_ohm;
      const double a = d.k_M * (d.inductance_H * s.motors[m].current_A + h * d.supply_V * u) / denom;
      const double b = d.k_M * d.k_E * h / denom;
      w.damping = b + def.bearing_friction / (r * r);
      w.target_speed = a / w.damping;
    } else {
      const double c_motor = def.stall_torque_Nm / def.no_load_speed_radps;
      const double c = c_motor + def.bearing_friction / (r * r);
      w.target_speed = c_motor * def.no_load_speed_radps * u / c;
      w.damping = c;
    }
    const double kc = joints[def.joint].axis.k + w.inv_inertia / (r * r);
    w.coupling_k_inv = kc > 0.0 ? 1.0 / kc : 0.0;
  }
  for (RepeaterWork& w : repeaters) {
    const double kc = joints[w.joint].axis.k + w.ratio * w.ratio * motors[w.motor].inv_inertia;
    w.k_inv = kc > 0.0 ? 1.0 / kc : 0.0;
  }
  buildBlocks(s, h);
  contacts.prepare(model, positions, orientations, bodies, s, h);
  block_closed.assign(blocks.size(), 0);
  all_blocks_closed = false;
  if (model.solver.articulated_contacts && !blocks.empty()) prepareArticulation();
}

// A flexure's rows and block (see JointWork). The spring is linearised per substep about the
// present deformation: load W(q) and tangent S = dW/dq of eq. 2 give the soft rows' compliance
// and bias (soft_row.h), so the step is implicit Euler of the full coupled spring.
void Simulator::Impl::prepareFlexure(JointWork& w, const FlexureDef& def, const JointFrames& f,
                                     double h) {
  Vec3 q, out_of_plane;
  flexureRows(f, w.flex_rows, q, out_of_plane);
  const SolverBody& a = bodies[w.a];
  const SolverBody& b = bodies[w.b];
  static constexpr int kAll[6] = {0, 1, 2, 3, 4, 5};
  Eigen::Matrix<double, 6, 6> k = detail::gram<6>(w.flex_rows, kAll, a, b);
  w.flex_gamma.setZero();
  w.flex_bias.setZero();
  w.flex_lambda.setZero();  // warmStart() sets it from the stored impulses
  const Vec3 load = flexureWrench(def, q);
  const Mat3 tangent = flexureTangent(def, q);
  if (def.model == FlexureModel::PlanarSpring) {
    Mat3 stiffness = tangent;
    // A softening table can make an own-coordinate slope tiny; a tenth of the slope at rest keeps
    // the rows' compliance finite (the load W(q) itself stays exact).
    const StiffnessCurve* curves[3] = {&def.k_x, &def.k_y, &def.k_z};
    for (int i = 0; i < 3; ++i)
      stiffness(i, i) = std::max(stiffness(i, i), 0.1 * curves[i]->tangent(0.0));
    const Vec3 damping(def.damping_linear, def.damping_linear, def.damping_angular);
    const detail::SoftBlockCoefficients<3> c =
        detail::softBlockCoefficients<3>(stiffness, damping, load, h);
    w.flex_gamma.bottomRightCorner<3, 3>() = c.gamma;
    w.flex_bias.tail<3>() = c.bias;
  } else {
    const double stiffness = std::max(tangent(2, 2), 0.1 * def.k_z.tangent(0.0));
    const detail::SoftRowCoefficients c =
        detail::softRowCoefficients(stiffness, def.damping_angular, h);
    w.flex_gamma(5, 5) = c.gamma;
    w.flex_bias[5] = c.bias * (load.z() / stiffness) / h;
  }
  k += w.flex_gamma;
  // K + Gamma is not symmetric when the spring's coupling is not (eq. 2): full-pivot LU.
  Eigen::FullPivLU<Eigen::Matrix<double, 6, 6>> lu(k);
  lu.setThreshold(1e-12);
  w.flex_inv = lu.isInvertible() ? Eigen::Matrix<double, 6, 6>(lu.inverse())
                                 : Eigen::Matrix<double, 6, 6>::Zero();
}

// Split-impulse pass on a flexure's hard rows (the spring's rows have no position error to
// remove: their softness already accounts for it). Returns the largest error.
double Simulator::Impl::solveFlexurePosition(int j, double beta) {
  const JointDef& def = model.joints[j];
  JointWork& w = joints[j];
  const SolverBody& a = bodies[w.a];
  const SolverBody& b = bodies[w.b];
  JointWork::Row rows[6];
  Vec3 q, out_of_plane;
  flexureRows(frames(def, w), rows, q, out_of_plane);
  Vec3 dx_a = Vec3::Zero(), dt_a = Vec3::Zero(), dx_b = Vec3::Zero(), dt_b = Vec3::Zero();
  auto accumulate = [&](const JointWork::Row& r, double l) {
    dx_a += l * r.lin_a;
    dt_a += l * r.ang_a;
    dx_b += l * r.lin_b;
    dt_b += l * r.ang_b;
  };
  double largest = out_of_plane.cwiseAbs().maxCoeff();
  if (def.flexure.model == FlexureModel::PlanarSpring) {
    static constexpr int kHard[3] = {0, 1, 2};
    const Mat3 k = detail::gram<3>(rows, kHard, a, b);
    if (!(k.determinant() > 0.0)) return largest;
    const Vec3 p = -beta * k.ldlt().solve(out_of_plane);
    for (int i = 0; i < 3; ++i) accumulate(rows[kHard[i]], p[i]);
  } else {
    static constexpr int kHard[5] = {0, 1, 2, 3, 4};
    const Eigen::Matrix<double, 5, 5> k = detail::gram<5>(rows, kHard, a, b);
    Eigen::Matrix<double, 5, 1> c;
    c << out_of_plane, q.x(), q.y();
    largest = std::max(largest, c.cwiseAbs().maxCoeff());
    const Eigen::LDLT<Eigen::Matrix<double, 5, 5>> ldlt(k);
    if (ldlt.info() != Eigen::Success || !(ldlt.vectorD().minCoeff() > 0.0)) return largest;
    const Eigen::Matrix<double, 5, 1> p = -beta * ldlt.solve(c);
    for (int i = 0; i < 5; ++i) accumulate(rows[kHard[i]], p[i]);
  }
  positions[w.a] += a.inv_mass * dx_a;
  orientations[w.a] = rotateBy(orientations[w.a], a.inv_inertia * dt_a);
  positions[w.b] += b.inv_mass * dx_b;
  orientations[w.b] = rotateBy(orientations[w.b], b.inv_inertia * dt_b);
  return largest;
}

// The hard rows of a driven joint, in the generic row form of RowBlock.
void Simulator::Impl::addJointRows(RowBlock& block, int j) {
  const JointWork& w = joints[j];
  JointWork::Row rows[6];
  double targets[5];
  jointRows(w, rows, targets);
  for (int k = 0; k < 5; ++k) {
    block.add(bodies, w.a, w.b, rows[k], hardRowSink(w.type, k), j).target = targets[k];
  }
}

// Groups rotors and driven joints into blocks: a rotor joins the dynamic bodies of every joint it
// drives, and blocks are the connected components (static bodies and the world do not connect).
void Simulator::Impl::planBlocks() {
  const int nb = world;
  const int nm = static_cast<int>(model.motors.size());
  detail::UnionFind groups;
  groups.reset(nb + nm);
  auto join = [&](int rotor_node, int joint) {
    for (int body : {joints[joint].a, joints[joint].b}) {
      if (body != world && body_inv_mass[body] > 0.0) groups.join(body, rotor_node);
    }
  };
  for (int m = 0; m < nm; ++m) join(nb + m, model.motors[m].joint);
  for (const RepeaterDef& r : model.repeaters) join(nb + r.motor, r.joint);

  joint_in_block.assign(model.joints.size(), 0);
  std::vector<int> block_of_root(nb + nm, -1);
  for (int m = 0; m < nm; ++m) {
    const int root = groups.find(nb + m);
    if (block_of_root[root] < 0) {
      block_of_root[root] = static_cast<int>(block_plans.size());
      block_plans.emplace_back();
    }
    BlockPlan& plan = block_plans[block_of_root[root]];
    plan.motors.push_back(m);
    plan.joints.push_back(model.motors[m].joint);
    plan.drivers.push_back(m);
    for (std::size_t i = 0; i < model.repeaters.size(); ++i) {
      if (model.repeaters[i].motor != m) continue;
      plan.joints.push_back(model.repeaters[i].joint);
      plan.drivers.push_back(-static_cast<int>(i) - 2);
    }
  }
  blocks.assign(block_plans.size(), RowBlock{});
  for (std::size_t b = 0; b < block_plans.size(); ++b) {
    for (int j : block_plans[b].joints) joint_in_block[j] = 1;
    blocks[b].rows.reserve(block_plans[b].motors.size() + 8 * block_plans[b].joints.size());
  }
  // Which blocks have the rotor-tree structure; it does not change while the model stands.
  auto isStatic = [this](int body) { return body == world || body_inv_mass[body] == 0.0; };
  for (BlockPlan& plan : block_plans) {
    plan.rotor_tree = std::all_of(plan.motors.begin(), plan.motors.end(),
                                  [this](int m) { return motors[m].drive == nullptr; });
    std::vector<int> leader(world, -2);  // -2: no joint of the block leads to it; -1: static
    for (const int j : plan.joints) {
      const JointWork& w = joints[j];
      const bool slider_or_hinge = w.type == JointType::Hinge || w.type == JointType::Prismatic;
      if (!slider_or_hinge || isStatic(w.b) || leader[w.b] != -2) plan.rotor_tree = false;
      else leader[w.b] = isStatic(w.a) ? -1 : w.a;
    }
    for (const int j : plan.joints) {
      int at = joints[j].b;
      for (int hops = 0; plan.rotor_tree && at >= 0; ++hops) {
        if (at == world || leader[at] == -2 || hops > static_cast<int>(plan.joints.size()))
          plan.rotor_tree = false;  // not a follower, or a loop
        else
          at = leader[at];
      }
    }
  }
  // Rotor trees in their rotors' coordinates: links are the joints' followers, joints root first.
  reduced.assign(block_plans.size(), ReducedBlock{});
  reduced_joint.assign(model.joints.size(), 0);
  for (std::size_t bi = 0; bi < block_plans.size(); ++bi) {
    const BlockPlan& plan = block_plans[bi];
    ReducedBlock& rb = reduced[bi];
    if (!plan.rotor_tree) continue;
    const auto nj = static_cast<int>(plan.joints.size());
    for (const int j : plan.joints) rb.link_body.push_back(joints[j].b);
    auto linkOf = [&rb](int body) {
      const auto at = std::find(rb.link_body.begin(), rb.link_body.end(), body);
      return at == rb.link_body.end() ? -1 : static_cast<int>(at - rb.link_body.begin());
    };
    std::vector<char> placed(static_cast<std::size_t>(nj), 0);
    std::vector<detail::ReducedMechanism::Joint> order;
    for (bool progress = true; progress && static_cast<int>(order.size()) < nj;) {
      progress = false;  // stays false when a leader is outside the links
      for (int k = 0; k < nj; ++k) {
        const JointWork& w = joints[plan.joints[k]];
        const int leader = isStatic(w.a) ? -1 : linkOf(w.a);
        if (placed[k] || (leader >= 0 && !placed[leader])) continue;  // link k follows joint k
        placed[k] = 1;
        progress = true;
        const int driver = plan.drivers[k];
        const int motor = driver >= 0 ? driver : model.repeaters[-driver - 2].motor;
        const double ratio = driver >= 0 ? 1.0 / model.motors[motor].gear_ratio
                                         : model.repeaters[-driver - 2].ratio /
                                               model.motors[motor].gear_ratio;
        const int rotor = static_cast<int>(
            std::find(plan.motors.begin(), plan.motors.end(), motor) - plan.motors.begin());
        order.push_back({leader, k, rotor, ratio});
        rb.plan_joint.push_back(k);
      }
    }
    if (static_cast<int>(order.size()) < nj) continue;
    rb.mechanism.plan(nj, static_cast<int>(plan.motors.size()), std::move(order));
    for (const int j : plan.joints) reduced_joint[j] = 1;
    rb.slot_of_joint.assign(model.joints.size(), -1);
    for (std::size_t slot = 0; slot < rb.plan_joint.size(); ++slot)
      rb.slot_of_joint[plan.joints[rb.plan_joint[slot]]] = static_cast<int>(slot);
    rb.velocity.assign(static_cast<std::size_t>(nj), detail::Vec6::Zero());
    rb.wrench.assign(static_cast<std::size_t>(nj), detail::Vec6::Zero());
    rb.limits.reserve(static_cast<std::size_t>(nj));
    rb.limit_row.reserve(static_cast<std::size_t>(nj));
    rb.planned = true;
  }
}

namespace {

// The characteristic's weight of the end speed, alpha = 1 / (1 - exp(-x)) - 1 / x with x = c h / I
// (buildBlocks explains it).
double characteristicAlpha(double x) {
  if (!std::isfinite(x) || x > 700.0) return 1.0;
  if (x < 1e-4) return 0.5 + x / 12.0;  // series: cancellation-free near 0
  return 1.0 / (-std::expm1(-x)) - 1.0 / x;
}

}  // namespace

// Rows of every block: motor characteristics (soft rows on the rotors), the driven joints' hard
// rows, motor/repeater constraint rows, and limit rows (unilateral, active set).
void Simulator::Impl::buildBlocks(const State& s, double h) {
  for (std::size_t bi = 0; bi < blocks.size(); ++bi) {
    const BlockPlan& plan = block_plans[bi];
    RowBlock& block = blocks[bi];
    // A block in rotor coordinates has only its characteristics and limits as rows: the joints'
    // hard rows and couplings are held by construction (ReducedBlock).
    auto addRows = [&](bool reduced_rows) {
      block.clear();
      block.skip_moves = reduced_rows;
      for (int m : plan.motors) {
        const MotorWork& mw = motors[m];
        detail::BlockRow& ch = block.add(bodies, world, world, detail::Row{},
                                         ImpulseSink::MotorCharacteristic, m);
        ch.rotor = m;
        ch.rotor_coef = 1.0;
        ch.rotor_dw = mw.inv_inertia;
        ch.target = mw.target_speed;
      }
      for (std::size_t k = 0; k < plan.joints.size(); ++k) {
        const int j = plan.joints[k];
        const int driver = plan.drivers[k];
        const JointWork& w = joints[j];
        const AxisRow& ax = w.axis;
        const bool is_motor = driver >= 0;
        const int owner = is_motor ? driver : -driver - 2;
        const int rotor = is_motor ? driver : repeaters[owner].motor;
        const double ratio = is_motor ? motors[driver].coupling_ratio : repeaters[owner].ratio;
        if (!reduced_rows) {  // (in rotor coordinates these hold by construction)
          addJointRows(block, j);
          if (motors[rotor].drive == nullptr) {
            detail::BlockRow& c = block.add(bodies, w.a, w.b,
                                            detail::Row{-ax.lin, ax.ang_a, ax.lin, ax.ang_b},
                                            is_motor ? ImpulseSink::MotorCoupling
                                                     : ImpulseSink::Repeater,
                                            owner);
            c.rotor = rotor;
            c.rotor_coef = -ratio;
            c.rotor_dw = -ratio * motors[rotor].inv_inertia;
          } else {
            addDriveRows(block, s, rotor, is_motor ? -1 : owner, h);
          }
        }
        if (w.limit_side != 0) {
          const double sd = w.limit_side;
          detail::BlockRow& l = block.add(
              bodies, w.a, w.b, detail::Row{-sd * ax.lin, sd * ax.ang_a, sd * ax.lin, sd * ax.ang_b},
              ImpulseSink::JointLimit, j);
          l.unilateral = true;
          l.sign = sd;
          l.target = -w.limit_bias;
          l.active = sd * s.joints[j].impulses.limit > 0.0;
        }
      }
      block.order();
    };
    reduced[bi].ready = false;
    if (reduced[bi].planned) {
      addRows(true);
      reduced[bi].ready = buildReduced(static_cast<int>(bi), h);
      if (reduced[bi].ready) continue;
    }
    addRows(false);
    block.assemble(rotor_inv_inertia);
    // The characteristic is a damper c (w_t - w). Its impulse over the substep is taken as
    // c h (w_t - w_bar) with w_bar = alpha w_end + (1 - alpha) w_start, where
    //   alpha = 1 / (1 - exp(-x)) - 1 / x,  x = c h / I,
    // and I the inertia the rotor sees through the block's equality rows (rotor plus reflected
    // loads). For that inertial load this reproduces the exponential solution of eq. 8 exactly;
    // at any steady speed (w_end = w_start: stall, or a steady external load such as a contact)
    // it gives exactly c (w_t - w), the passport torque. alpha runs from 1/2 (x -> 0: the rotor
    // cannot move the load) to 1 (backward Euler): an A-stable theta method. As a soft row on
    // w_end: softness gamma = c h alpha, target (w_t - (1 - alpha) w_start) / alpha.
    block.factorEqualities();
    for (Eigen::Index i = block.first_motor; i < block.first_unilateral; ++i) {
      const int motor = block.rows[i].owner;
      MotorWork& mw = motors[motor];
      const double ch = mw.damping * h;
      // A drive's circuit is already a backward-Euler step: alpha = 1.
      const double x = mw.drive != nullptr ? 1e300 : ch * block.constrainedMobility(i);  // c h / I
      const double alpha = characteristicAlpha(x);
      mw.gamma = ch * alpha;
      block.rows[i].target = (mw.target_speed - (1.0 - alpha) * rotor_speed[motor]) / alpha;
      block.addMotorCompliance(i, 1.0 / mw.gamma);
    }
    block.factorMotorsAndLimits();
  }
}

// The transmission of a seed 000 drive unit (SPEC §3) in place of the rigid gear coupling. Twist
// θ = a_m / r - q (output side); M1 = c b(θ) + K_V1 b'(θ) dθ/dt. Without backlash one bilateral
// soft row (stiffness c, damping K_V1: the implicit-Euler spring-damper of soft_row.h, stable at
// any stiffness). With backlash θ_bn > 0 two one-sided soft rows, one per flank: flank s pushes
// only (its impulse s M1 h >= 0) and only once s θ exceeds θ_bn; while the flank is open it is
// speculative (it may close by its gap in one substep, no more), so the gap's lost motion 2 θ_bn
// is kept exactly. All rows store M1 h in the motor's coupling impulse. A repeater (`repeater`
// >= 0) of the motor gets the same transmission between the rotor and its own joint, with its
// ratio k / r and its initial offset, and stores its M1 h in the repeater's impulse.
void Simulator::Impl::addDriveRows(RowBlock& block, const State& s, int motor, int repeater,
                                   double h) {
  const MotorWork& mw = motors[motor];
  const DriveDef& d = *mw.drive;
  const bool follower = repeater >= 0;
  const int joint = follower ? repeaters[repeater].joint : mw.joint;
  const JointWork& w = joints[joint];
  const AxisRow& ax = w.axis;
  const double ratio = follower ? repeaters[repeater].ratio : mw.coupling_ratio;
  const int owner = follower ? repeater : motor;
  const double impulse = follower ? s.repeaters[repeater].coupling_impulse
                                  : s.motors[motor].coupling_impulse;
  // Row error C = q - a_m / r (- offset) = -θ: its velocity is the row's Cdot (axis - ratio *
  // rotor).
  const double error = w.position - ratio * rotor_angle[motor] -
                       (follower ? repeaters[repeater].offset : 0.0);
  const detail::SoftRowCoefficients soft = detail::softRowCoefficients(d.stiffness, d.damping, h);
  auto add = [&](double sign, ImpulseSink sink) -> detail::BlockRow& {
    detail::BlockRow& r = block.add(
        bodies, w.a, w.b, detail::Row{-sign * ax.lin, sign * ax.ang_a, sign * ax.lin, sign * ax.ang_b},
        sink, owner);
    r.rotor = motor;
    r.rotor_coef = -sign * ratio;
    r.rotor_dw = -sign * ratio * mw.inv_inertia;
    r.compliance = soft.gamma;
    r.sign = sign;
    return r;
  };
  if (d.backlash == 0.0) {
    add(1.0, follower ? ImpulseSink::Repeater : ImpulseSink::MotorCoupling).target =
        -soft.bias / h * error;
    return;
  }
  for (const double sign : {1.0, -1.0}) {
    // Flank `sign` holds sign * C >= -θ_bn: its row position is sign * C + θ_bn (>= 0 open).
    const double opening = sign * error + d.backlash;
    detail::BlockRow& r = add(sign, follower ? ImpulseSink::RepeaterBacklash
                                             : ImpulseSink::MotorBacklash);
    r.unilateral = true;
    r.target = opening > 0.0 ? -opening / h : -soft.bias / h * opening;
    r.active = sign * impulse > 0.0;
  }
}

// Seed 000 output friction M_F = (|M1| K_ML + 1) M_f(Ω) + K_V2 Ω, M1 from the last substep's
// transmission impulse so the load factor is known before the solve (no algebraic loop).
//  - Static: M_f = g(|Ω|) at the starting speed bounds the joint's friction row (exact stick).
//  - Eq. 22 (modified LuGre): with σ0(Ω), σ1(Ω) and the rate ρ = σ0 |Ω| / g taken at the starting
//    speed, z over the substep is exact for a constant end speed Ω':
//      z' = E z + φ Ω',  E = exp(-ρ h),  φ = (1 - E) / ρ,
//    so M_f = σ0 z' + σ1 (Ω' - ρ z') = A + D Ω' is affine in Ω': a damper D toward -A / D, solved
//    implicitly as the joint's soft row with the joint's own viscous friction. The steady state
//    σ0 z = g(Ω) sign Ω is exact; in stick (ρ = 0) the bristles are a spring σ0 with damping σ1.
void Simulator::Impl::addDriveFriction(JointWork& w, const State& s, int j, double h) {
  const DriveDef& d = *w.drive;
  const double impulse = w.drive_repeater >= 0 ? s.repeaters[w.drive_repeater].coupling_impulse
                                               : s.motors[w.drive_motor].coupling_impulse;
  const double load = std::abs(impulse) / h * d.K_ML + 1.0;
  const double speed = std::abs(w.start_speed);
  const double g = friction::stribeckMagnitude(friction::StribeckCurve::Generalised, stribeckOf(d),
                                               speed);
  double damping = model.joints[j].friction.viscous + d.viscous;  // N m s/rad
  double force_at_rest = 0.0;  // the damper's force at Ω' = 0 (N m)
  if (d.friction == DriveFriction::Static) {
    w.friction_level += load * g;
  } else {
    double sigma0 = d.sigma0;
    double sigma1 = d.sigma1;
    if (speed > 0.0) {
      if (d.t_min_s > 0.0) sigma0 = std::min(sigma0, g / (speed * d.t_min_s));
      sigma1 = std::min(sigma1, 4.0 * sigma0 * g / speed);
    }
    const double rate = sigma0 * speed / g;
    const double x = rate * h;
    w.lugre_decay = std::exp(-x);
    w.lugre_gain = x > 1e-9 ? -std::expm1(-x) / rate : h;
    const double z = s.joints[j].friction_z;
    force_at_rest = load * (sigma0 - sigma1 * rate) * w.lugre_decay * z;
    damping += load * (sigma0 * w.lugre_gain + sigma1 * w.lugre_decay);
  }
  w.viscous_gamma = damping * h;
  w.viscous_target = damping > 0.0 ? -force_at_rest / damping : 0.0;
}

// After a substep: the drive currents from the new rotor speeds (the same backward-Euler step
// the characteristic row used), LuGre bristle states and stick/slip flags.
void Simulator::Impl::updateDrivesAndFriction(State& s, double h) {
  for (std::size_t m = 0; m < motors.size(); ++m) {
    if (motors[m].drive == nullptr) continue;
    const DriveDef& d = *motors[m].drive;
    MotorState& ms = s.motors[m];
    const double u = std::clamp(ms.voltage, -1.0, 1.0);
    ms.current_A = (d.inductance_H * ms.current_A +
                    h * (d.supply_V * u - d.k_E * rotor_speed[m])) /
                   (d.inductance_H + h * d.resistance_ohm);
  }
  for (std::size_t j = 0; j < joints.size(); ++j) {
    const JointFriction& fr = model.joints[j].friction;
    if (fr.model != JointFrictionModel::LuGre) continue;
    JointState& js = s.joints[j];
    const JointWork& w = joints[j];
    // z exactly over the substep at the starting speed (dz/dt is linear in z).
    const double v = w.start_speed;
    const double rate = fr.sigma0 * std::abs(v) / lugreCurve(fr, v);
    const double z_inf = rate > 0.0 ? v / rate : 0.0;
    js.friction_z = rate > 0.0 ? z_inf + (js.friction_z - z_inf) * std::exp(-rate * h)
                               : js.friction_z + v * h;
    const bool in_window = std::abs(w.axis.velocity(bodies[w.a], bodies[w.b])) < fr.zero_speed;
    js.slipping = !in_window;
  }
  for (std::size_t j = 0; j < joints.size(); ++j) {
    const JointWork& w = joints[j];
    if (w.drive == nullptr || w.drive->friction != DriveFriction::LuGre) continue;
    // The same affine step the soft row was solved with, at the end speed it reached.
    JointState& js = s.joints[j];
    js.friction_z = w.lugre_decay * js.friction_z +
                    w.lugre_gain * w.axis.velocity(bodies[w.a], bodies[w.b]);
  }
}

// One block Gauss-Seidel update: solve the block's rows together, with a few active-set passes
// so limits push but never pull.
namespace {

// Adds a block row's impulse change to where the state keeps it.
void addBlockImpulse(const detail::BlockRow& r, double d, State& s) {
  switch (r.sink) {
    case ImpulseSink::JointLinear: s.joints[r.owner].impulses.linear += d * r.lin_b; break;
    case ImpulseSink::JointAngular: s.joints[r.owner].impulses.angular += d * r.ang_b; break;
    case ImpulseSink::JointLimit: s.joints[r.owner].impulses.limit += r.sign * d; break;
    case ImpulseSink::MotorCoupling: s.motors[r.owner].coupling_impulse += d; break;
    case ImpulseSink::MotorBacklash: s.motors[r.owner].coupling_impulse += r.sign * d; break;
    case ImpulseSink::MotorCharacteristic: s.motors[r.owner].characteristic_impulse += d; break;
    case ImpulseSink::Repeater: s.repeaters[r.owner].coupling_impulse += d; break;
    case ImpulseSink::RepeaterBacklash: s.repeaters[r.owner].coupling_impulse += r.sign * d; break;
  }
}

// The impulse a block row holds (of the rows whose accumulated value the block solve reads).
double blockAccumulated(const detail::BlockRow& r, const State& s) {
  switch (r.sink) {
    case ImpulseSink::MotorCharacteristic: return s.motors[r.owner].characteristic_impulse;
    case ImpulseSink::JointLimit: return r.sign * s.joints[r.owner].impulses.limit;
    case ImpulseSink::MotorCoupling: return s.motors[r.owner].coupling_impulse;
    case ImpulseSink::MotorBacklash:
      return std::max(0.0, r.sign * s.motors[r.owner].coupling_impulse);
    case ImpulseSink::Repeater: return s.repeaters[r.owner].coupling_impulse;
    case ImpulseSink::RepeaterBacklash:
      return std::max(0.0, r.sign * s.repeaters[r.owner].coupling_impulse);
    default: return 0.0;
  }
}

}  // namespace

// Which bodies are links of a block. Called once the blocks are built each substep.
void Simulator::Impl::prepareArticulation() {
  articulation.impl = this;
  articulation.block_of_body.assign(bodies.size(), -1);
  articulation.links.resize(bodies.size());
  articulation.moves.resize(blocks.size());
  for (BlockMoves& m : articulation.moves)
    m.built = m.pending_valid = m.limits_valid = false;
  for (std::size_t bi = 0; bi < blocks.size(); ++bi) {
    if (reduced[bi].ready) {  // its rows do not name every link
      for (const int body : reduced[bi].link_body) {
        articulation.block_of_body[body] = static_cast<int>(bi);
        articulation.links[body].computed = false;
      }
      continue;
    }
    for (const detail::BlockRow& r : blocks[bi].rows) {
      for (const int body : {r.a, r.b}) {
        if (bodies[body].inv_mass > 0.0) {
          articulation.block_of_body[body] = static_cast<int>(bi);
          articulation.links[body].computed = false;
        }
      }
    }
  }
  block_closed.assign(blocks.size(), 0);
  all_blocks_closed = false;
  articulation.any_pending = false;
}

// Sets up the articulated contact rows (see detail::BlockArticulation) after the blocks have been
// made to hold, and finds the blocks that nothing else acts on: once such a block holds, the
// articulated rows keep it holding, and its solve is needed only when a limit engages or
// releases (blockStillHolds).
void Simulator::Impl::articulateContacts(State& s) {
  if (!model.solver.articulated_contacts || blocks.empty() ||
      !contacts.wouldArticulate(articulation))
    return;
  double ignored = 0.0;
  for (RowBlock& block : blocks) solveBlock(block, s, ignored);
  contacts.articulate(bodies, articulation);
  const std::vector<int>& block_of = articulation.block_of_body;
  block_closed.assign(blocks.size(), 1);
  for (std::size_t body = 0; body < bodies.size(); ++body)
    if (block_of[body] >= 0 && contacts.rigidlyTouchesBody(static_cast<int>(body)))
      block_closed[block_of[body]] = 0;
  auto open = [&](int body) {
    if (block_of[body] >= 0) block_closed[block_of[body]] = 0;
  };
  for (std::size_t j = 0; j < joints.size(); ++j) {
    if (joint_in_block[j]) continue;
    open(joints[j].a);
    open(joints[j].b);
  }
  for (const int j : axis_row_joints) {  // driven joints' friction and viscous rows
    open(joints[j].a);
    open(joints[j].b);
  }
  for (std::size_t bi = 0; bi < blocks.size(); ++bi)
    for (const detail::BlockRow& r : blocks[bi].rows)
      if (r.rotor >= 0 && contacts.rigidlyTouchesRotor(r.rotor)) block_closed[bi] = 0;
  all_blocks_closed = std::all_of(block_closed.begin(), block_closed.end(), [](char c) { return c != 0; });
}

// A closed block's rows all still hold with the same active set: no active unilateral row pulls,
// none released holds an impulse, none inactive is violated.
bool Simulator::Impl::blockStillHolds(int bi, const State& s) {
  const RowBlock& block = blocks[bi];
  for (std::size_t i = 0; i < block.rows.size(); ++i) {
    const detail::BlockRow& r = block.rows[i];
    if (!r.unilateral) continue;
    const double pending = articulation.pendingImpulse(bi, static_cast<Eigen::Index>(i));
    double held = blockAccumulated(r, s) + pending;
    if (r.sink == ImpulseSink::MotorBacklash)
      held = std::max(0.0, r.sign * s.motors[r.owner].coupling_impulse + pending);
    else if (r.sink == ImpulseSink::RepeaterBacklash)
      held = std::max(0.0, r.sign * s.repeaters[r.owner].coupling_impulse + pending);
    if (r.active) {
      if (held < 0.0) return false;
      continue;
    }
    if (held > 0.0) return false;
    const SolverBody& a = bodies[r.a];
    const SolverBody& b = bodies[r.b];
    double c = r.lin_a.dot(a.v) + r.ang_a.dot(a.w) + r.lin_b.dot(b.v) + r.ang_b.dot(b.w) - r.target;
    if (r.rotor >= 0) c += r.rotor_coef * rotor_speed[r.rotor];
    if (c < 0.0) return false;
  }
  return true;
}

const detail::Mat6* Simulator::Impl::Articulation::response(int body) {
  if (block_of_body[body] < 0) return nullptr;
  if (!links[body].computed) compute(body);
  return &links[body].self;
}

void Simulator::Impl::Articulation::buildMoves(int bi) {
  const RowBlock& block = impl->blocks[bi];
  const std::vector<SolverBody>& bodies = impl->bodies;
  BlockMoves& bm = moves[bi];
  const auto n = static_cast<Eigen::Index>(block.rows.size());
  bm.bodies.clear();
  bm.rotors.clear();
  if (ReducedBlock& rb = impl->reduced[bi]; rb.ready) {
    // The responses come from the mechanism's rotor coordinates, with the limits active now.
    bm.bodies = rb.link_body;
    bm.rotors = impl->block_plans[bi].motors;
    for (std::size_t l = 0; l < rb.limits.size(); ++l)
      rb.limits[l].active = block.rows[rb.limit_row[l]].active;
    rb.mechanism.takeSnapshot(rb.limits);
    bm.built = true;
    return;
  }
  auto slot = [n](std::vector<int>& ids, auto& mats, int id) -> decltype(mats[0])& {
    for (std::size_t k = 0; k < ids.size(); ++k)
      if (ids[k] == id) return mats[k];
    ids.push_back(id);
    if (mats.size() < ids.size()) mats.emplace_back();
    mats[ids.size() - 1].setZero(mats[ids.size() - 1].rows(), n);
    return mats[ids.size() - 1];
  };
  for (Eigen::Index i = 0; i < n; ++i) {
    const detail::BlockRow& r = block.rows[i];
    for (int side = 0; side < 2; ++side) {
      const int b = side == 0 ? r.a : r.b;
      if (bodies[b].inv_mass == 0.0) continue;
      auto col = slot(bm.bodies, bm.body_moves, b).col(i);
      if (side == 0) {
        col.head<3>() += r.dv_a;
        col.tail<3>() += r.dw_a;
      } else {
        col.head<3>() += r.dv_b;
        col.tail<3>() += r.dw_b;
      }
    }
    if (r.rotor >= 0) slot(bm.rotors, bm.rotor_moves, r.rotor)[i] += r.rotor_dw;
  }
  bm.built = true;
}

// The mechanism's motion after a wrench w on the link: the link by `self` w, every other link
// and rotor by its entry of `others` / `rotors` (see BlockMoves). The block's row impulses that
// go with it are found when they are needed (pendingImpulses).
void Simulator::Impl::Articulation::compute(int body) {
  const int bi = block_of_body[body];
  const RowBlock& block = impl->blocks[bi];
  if (!moves[bi].built) buildMoves(bi);
  const BlockMoves& bm = moves[bi];
  LinkResponse& out = links[body];
  const auto own = static_cast<std::size_t>(
      std::find(bm.bodies.begin(), bm.bodies.end(), body) - bm.bodies.begin());
  out.others.resize(bm.bodies.size() - 1);
  out.rotors.resize(bm.rotors.size());
  if (ReducedBlock& rb = impl->reduced[bi]; rb.ready) {
    detail::ReducedMechanism& mech = rb.mechanism;
    mech.respondTo(static_cast<int>(own));
    out.self = mech.linkResponse(static_cast<int>(own));
    for (std::size_t k = 0, o = 0; k < bm.bodies.size(); ++k)
      if (k != own) out.others[o++] = {bm.bodies[k], mech.linkResponse(static_cast<int>(k))};
    for (std::size_t k = 0; k < bm.rotors.size(); ++k)
      out.rotors[k] = {bm.rotors[k], mech.rotorResponse(static_cast<int>(k))};
  } else {
    // Λ = -K^-1 J_link M_link^-1 over the active rows: the block's impulses per unit wrench.
    const SolverBody& link = impl->bodies[body];
    const auto n = static_cast<Eigen::Index>(block.rows.size());
    auto& impulses = out.impulses;
    impulses = bm.body_moves[own].transpose();
    for (Eigen::Index i = 0; i < n; ++i)
      if (!block.rows[i].active) impulses.row(i).setZero();
    block.ldlt.solveInPlace<6>(impulses);
    impulses = -impulses;
    out.self.setZero();
    out.self.topLeftCorner<3, 3>().diagonal().setConstant(link.inv_mass);
    out.self.bottomRightCorner<3, 3>() = link.inv_inertia;
    out.self.noalias() += bm.body_moves[own].lazyProduct(impulses);
    for (std::size_t k = 0, o = 0; k < bm.bodies.size(); ++k) {
      if (k == own) continue;
      out.others[o].first = bm.bodies[k];
      out.others[o++].second.noalias() = bm.body_moves[k].lazyProduct(impulses);
    }
    for (std::size_t k = 0; k < bm.rotors.size(); ++k) {
      out.rotors[k].first = bm.rotors[k];
      out.rotors[k].second.noalias() = bm.rotor_moves[k].lazyProduct(impulses).transpose();
    }
  }
  out.pending.setZero();
  out.computed = true;
}

// The other links and rotors move at once (the next manifold reads them); the block's impulses
// wait in `pending` until something reads them (flush, pendingImpulse).
void Simulator::Impl::Articulation::propagate(int body, const detail::Vec6& wrench,
                                              std::vector<SolverBody>& bodies,
                                              std::vector<double>& rotor_speed) {
  LinkResponse& link = links[body];
  for (const auto& [b, m] : link.others) {
    const detail::Vec6 d = m * wrench;
    bodies[b].v += d.head<3>();
    bodies[b].w += d.tail<3>();
  }
  for (const auto& [r, v] : link.rotors) rotor_speed[r] += v.dot(wrench);
  link.pending += wrench;
  moves[block_of_body[body]].pending_valid = false;
  moves[block_of_body[body]].limits_valid = false;
  any_pending = true;
}

// The block rows' impulses that the links' pending wrenches imply: the sum over the links of
// their responses' impulses per unit wrench (LinkResponse::impulses) times the wrench.
const Eigen::VectorXd& Simulator::Impl::Articulation::pendingImpulses(int bi) {
  BlockMoves& bm = moves[bi];
  if (bm.pending_valid) return bm.pending;
  const auto n = static_cast<Eigen::Index>(impl->blocks[bi].rows.size());
  bm.pending.setZero(n);
  const bool any = std::any_of(bm.bodies.begin(), bm.bodies.end(), [this](int body) {
    return links[body].computed && !links[body].pending.isZero(0.0);
  });
  for (const int body : bm.bodies) {
    const LinkResponse& link = links[body];
    if (any && link.computed) bm.pending.noalias() += link.impulses * link.pending;
  }
  bm.pending_valid = true;
  return bm.pending;
}

// Adds the impulses the links' pending wrenches imply to the state.
void Simulator::Impl::Articulation::flush() {
  if (!any_pending) return;
  for (std::size_t bi = 0; bi < moves.size(); ++bi) {
    if (!moves[bi].built) continue;
    if (ReducedBlock& rb = impl->reduced[bi]; rb.ready) {
      rb.mechanism.wrenchImpulses(pendingWrenches(static_cast<int>(bi)), rb.impulses);
      impl->addReducedImpulses(static_cast<int>(bi), rb.impulses, *state, nullptr);
      for (const int body : moves[bi].bodies) links[body].pending.setZero();
      moves[bi].limit_pending.setZero();
      moves[bi].limits_valid = true;
      continue;
    }
    const Eigen::VectorXd& add = pendingImpulses(static_cast<int>(bi));
    const RowBlock& block = impl->blocks[bi];
    for (Eigen::Index i = 0; i < add.size(); ++i)
      if (add[i] != 0.0) addBlockImpulse(block.rows[i], add[i], *state);
    for (const int body : moves[bi].bodies) links[body].pending.setZero();
    moves[bi].pending.setZero();
  }
  any_pending = false;
}

// The wrenches waiting on the links of reduced block `bi`, per link slot.
const std::vector<detail::Vec6>& Simulator::Impl::Articulation::pendingWrenches(int bi) {
  ReducedBlock& rb = impl->reduced[bi];
  for (std::size_t l = 0; l < rb.link_body.size(); ++l) {
    const LinkResponse& link = links[rb.link_body[l]];
    rb.wrench[l] = link.computed ? link.pending : detail::Vec6::Zero();
  }
  return rb.wrench;
}

// Row i's impulse still waiting in the pending wrenches of the links of block `bi`.
double Simulator::Impl::Articulation::pendingImpulse(int bi, Eigen::Index i) {
  if (!any_pending || !moves[bi].built) return 0.0;
  if (ReducedBlock& rb = impl->reduced[bi]; rb.ready) {
    // Its rows are the characteristics, then the limits (blockStillHolds asks for those), whose
    // impulses come without recovering the joints'.
    BlockMoves& bm = moves[bi];
    const RowBlock& block = impl->blocks[bi];
    if (i < block.first_unilateral) {
      rb.mechanism.wrenchImpulses(pendingWrenches(bi), rb.impulses);
      return rb.impulses.characteristic[i - block.first_motor];
    }
    if (!bm.limits_valid) {
      rb.mechanism.wrenchLimitImpulses(pendingWrenches(bi), bm.limit_pending);
      bm.limits_valid = true;
    }
    return bm.limit_pending[i - block.first_unilateral];
  }
  return pendingImpulses(bi)[i];
}

// This substep's data of a reduced block (see ReducedBlock): the joints' rows as the RowBlock
// has them, the links' inertias, and the characteristics' softness from the inertia each rotor
// sees (the same alpha as buildBlocks). False when the rows do not allow it.
bool Simulator::Impl::buildReduced(int bi, double h) {
  ReducedBlock& rb = reduced[bi];
  RowBlock& block = blocks[bi];
  const BlockPlan& plan = block_plans[bi];
  detail::ReducedMechanism& mech = rb.mechanism;
  for (std::size_t slot = 0; slot < rb.plan_joint.size(); ++slot) {
    const JointWork& w = joints[plan.joints[rb.plan_joint[slot]]];
    detail::ReducedMechanism::JointRows& f = mech.rows(static_cast<int>(slot));
    JointWork::Row rows[6];
    double targets[5];
    jointRows(w, rows, targets);
    for (int r = 0; r < 6; ++r) {
      f.rows_a.block<1, 3>(r, 0) = rows[r].lin_a.transpose();
      f.rows_a.block<1, 3>(r, 3) = rows[r].ang_a.transpose();
      f.rows_b.block<1, 3>(r, 0) = rows[r].lin_b.transpose();
      f.rows_b.block<1, 3>(r, 3) = rows[r].ang_b.transpose();
      if (r < 5) f.targets[r] = targets[r];
    }
    const SolverBody& lead = bodies[w.a];
    f.leader_velocity << lead.v, lead.w;
  }
  for (std::size_t l = 0; l < rb.link_body.size(); ++l) {
    const int b = rb.link_body[l];
    const Mat3 r = orientations[b].toRotationMatrix();
    mech.setLink(static_cast<int>(l), 1.0 / bodies[b].inv_mass,
                 r * body_inertia_local[b] * r.transpose());
  }
  for (std::size_t m = 0; m < plan.motors.size(); ++m)
    mech.setRotorInertia(static_cast<int>(m), model.motors[plan.motors[m]].rotorInertia());
  if (!mech.build()) return false;
  const auto nm = static_cast<Eigen::Index>(plan.motors.size());
  rb.gamma.resize(nm);
  rb.targets.resize(nm);
  for (Eigen::Index m = 0; m < nm; ++m) {  // characteristic rows are in plan.motors order
    const MotorWork& mw = motors[plan.motors[m]];
    const double ch = mw.damping * h;
    const double alpha = characteristicAlpha(ch * mech.rotorMobility(static_cast<int>(m)));
    rb.gamma[m] = ch * alpha;
    rb.targets[m] = (mw.target_speed - (1.0 - alpha) * rotor_speed[plan.motors[m]]) / alpha;
  }
  if (!mech.setCharacteristics(rb.gamma)) return false;
  for (Eigen::Index m = 0; m < nm; ++m) {
    detail::BlockRow& row = block.rows[block.first_motor + m];
    motors[row.owner].gamma = rb.gamma[m];
    row.target = rb.targets[m];
    row.compliance = 1.0 / rb.gamma[m];
  }
  rb.limits.clear();
  rb.limit_row.clear();
  rb.limit_of_slot.assign(rb.plan_joint.size(), -1);
  for (Eigen::Index i = block.first_unilateral; i < static_cast<Eigen::Index>(block.rows.size()); ++i) {
    const detail::BlockRow& row = block.rows[i];
    const int slot = rb.slot_of_joint[row.owner];
    rb.limit_of_slot[static_cast<std::size_t>(slot)] = static_cast<int>(rb.limits.size());
    rb.limits.push_back({slot, row.sign, row.target, row.active, 0.0});
    rb.limit_row.push_back(static_cast<int>(i));
  }
  return true;
}

// Adds a reduced solve's (or pending wrenches') impulses to where the state keeps them: the
// joints' hard rows by their rows' directions (as addBlockImpulse), a joint's coupling as its
// axis impulse less its limit's, the characteristics and limits through their rows. `largest`
// (if given) takes the largest change, as solveBlock's.
void Simulator::Impl::addReducedImpulses(int bi, const detail::ReducedMechanism::Impulses& in,
                                         State& s, double* largest) {
  const ReducedBlock& rb = reduced[bi];
  const RowBlock& block = blocks[bi];
  const BlockPlan& plan = block_plans[bi];
  double most = 0.0;
  for (std::size_t slot = 0; slot < rb.plan_joint.size(); ++slot) {
    const int k = rb.plan_joint[slot];
    const int j = plan.joints[k];
    const detail::Vec6& lambda = in.joints[slot];
    const detail::Mat6& rows_b = rb.mechanism.rows(static_cast<int>(slot)).rows_b;
    JointImpulses& imp = s.joints[j].impulses;
    for (int r = 0; r < 5; ++r) {
      if (hardRowSink(joints[j].type, r) == ImpulseSink::JointLinear)
        imp.linear += lambda[r] * rows_b.block<1, 3>(r, 0).transpose();
      else
        imp.angular += lambda[r] * rows_b.block<1, 3>(r, 3).transpose();
      most = std::max(most, std::abs(lambda[r]));
    }
    double coupling = lambda[5];
    if (const int l = rb.limit_of_slot[slot]; l >= 0)
      coupling -= rb.limits[static_cast<std::size_t>(l)].sign * in.limits[l];  // sign * axis row
    const int driver = plan.drivers[k];
    (driver >= 0 ? s.motors[driver].coupling_impulse
                 : s.repeaters[-driver - 2].coupling_impulse) += coupling;
    most = std::max(most, std::abs(coupling));
  }
  for (Eigen::Index m = 0; m < in.characteristic.size(); ++m) {
    addBlockImpulse(block.rows[block.first_motor + m], in.characteristic[m], s);
    most = std::max(most, std::abs(in.characteristic[m]));
  }
  for (std::size_t l = 0; l < rb.limit_row.size(); ++l) {
    const double d = in.limits[static_cast<Eigen::Index>(l)];
    if (d != 0.0) addBlockImpulse(block.rows[rb.limit_row[l]], d, s);
    most = std::max(most, std::abs(d));
  }
  if (largest != nullptr) *largest = std::max(*largest, most);
}

// solveBlock for a reduced block: the same result to rounding, in the rotors' coordinates.
void Simulator::Impl::solveReduced(int bi, State& s, double& largest) {
  ReducedBlock& rb = reduced[bi];
  RowBlock& block = blocks[bi];
  const BlockPlan& plan = block_plans[bi];
  for (std::size_t l = 0; l < rb.link_body.size(); ++l) {
    const SolverBody& b = bodies[rb.link_body[l]];
    rb.velocity[l] << b.v, b.w;
  }
  const auto nm = static_cast<Eigen::Index>(plan.motors.size());
  rb.rotor_speed.resize(nm);
  rb.targets.resize(nm);
  rb.accumulated.resize(nm);
  for (Eigen::Index m = 0; m < nm; ++m) {
    const detail::BlockRow& row = block.rows[block.first_motor + m];
    rb.rotor_speed[m] = rotor_speed[plan.motors[m]];
    rb.targets[m] = row.target;
    rb.accumulated[m] = blockAccumulated(row, s);
  }
  for (std::size_t l = 0; l < rb.limits.size(); ++l) {
    const detail::BlockRow& row = block.rows[rb.limit_row[l]];
    rb.limits[l].active = row.active;
    rb.limits[l].accumulated = blockAccumulated(row, s);
  }
  rb.mechanism.solve(rb.velocity, rb.rotor_speed, rb.targets, rb.accumulated, rb.limits,
                     rb.impulses);
  for (std::size_t l = 0; l < rb.link_body.size(); ++l) {
    SolverBody& b = bodies[rb.link_body[l]];
    b.v = rb.velocity[l].head<3>();
    b.w = rb.velocity[l].tail<3>();
  }
  for (Eigen::Index m = 0; m < nm; ++m) rotor_speed[plan.motors[m]] = rb.rotor_speed[m];
  for (std::size_t l = 0; l < rb.limits.size(); ++l)
    block.rows[rb.limit_row[l]].active = rb.limits[l].active;
  addReducedImpulses(bi, rb.impulses, s, &largest);
}

void Simulator::Impl::solveBlock(RowBlock& block, State& s, double& largest) {
  articulation.flush();
  if (const auto bi = static_cast<int>(&block - blocks.data()); reduced[bi].ready) {
    solveReduced(bi, s, largest);
    return;
  }
  const auto n = static_cast<Eigen::Index>(block.rows.size());
  auto accumulated = [&s](const detail::BlockRow& r) { return blockAccumulated(r, s); };
  // Velocity error of every row (the negative is the right-hand side).
  for (Eigen::Index i = 0; i < n; ++i) {
    const detail::BlockRow& r = block.rows[i];
    const SolverBody& a = bodies[r.a];
    const SolverBody& b = bodies[r.b];
    double c = r.lin_a.dot(a.v) + r.ang_a.dot(a.w) + r.lin_b.dot(b.v) + r.ang_b.dot(b.w) - r.target;
    if (r.rotor >= 0) c += r.rotor_coef * rotor_speed[r.rotor];
    if (r.compliance != 0.0) c += r.compliance * accumulated(r);
    block.predicted[i] = c;
  }
  constexpr int kMaxActiveSetPasses = 4;
  for (int pass = 0;; ++pass) {
    // A released unilateral row gives back the impulse it still holds (warm start): its change is
    // known, -accumulated, and the active rows are solved with it. Without this a limit released
    // while holding kept pushing through the warm start for good (a driven joint's limit is not
    // in the sweeps): a gripper's jaws leaving their open stops each kept the stop's force as a
    // phantom squeeze, twice the force one motor can give two jaws.
    bool any_released = false;
    for (Eigen::Index i = 0; i < n; ++i) {
      const detail::BlockRow& r = block.rows[i];
      const double held = r.unilateral && !r.active ? accumulated(r) : 0.0;
      block.released[i] = held > 0.0 ? -held : 0.0;
      any_released = any_released || block.released[i] != 0.0;
    }
    for (Eigen::Index i = 0; i < n; ++i) {
      double rhs = block.predicted[i];
      if (any_released) rhs += block.k_full.col(i).dot(block.released);
      block.residual[i] = block.rows[i].active ? -rhs : 0.0;
    }
    block.ldlt.solve(block.residual, block.delta);
    if (any_released) {
      for (Eigen::Index i = 0; i < n; ++i)
        if (!block.rows[i].active) block.delta[i] = block.released[i];
    }
    bool changed = false;
    for (Eigen::Index i = 0; i < n; ++i) {
      detail::BlockRow& r = block.rows[i];
      if (!r.unilateral) continue;
      if (r.active && accumulated(r) + block.delta[i] < 0.0) {
        r.active = false;  // would pull: release
        changed = true;
      } else if (!r.active && block.predicted[i] + block.k_full.col(i).dot(block.delta) < 0.0) {
        r.active = true;  // would be violated: engage
        changed = true;
      }
    }
    if (!changed) break;
    if (pass == kMaxActiveSetPasses) {
      for (Eigen::Index i = 0; i < n; ++i) {
        const detail::BlockRow& r = block.rows[i];
        if (r.unilateral)
          block.delta[i] = r.active ? std::max(block.delta[i], -accumulated(r)) : block.released[i];
      }
      break;
    }
    block.factorUnilateral();
  }
  for (Eigen::Index i = 0; i < n; ++i) {
    const detail::BlockRow& r = block.rows[i];
    const double d = block.delta[i];
    if (d == 0.0) continue;
    SolverBody& a = bodies[r.a];
    SolverBody& b = bodies[r.b];
    addScaled(a.v, d, r.dv_a);
    addScaled(a.w, d, r.dw_a);
    addScaled(b.v, d, r.dv_b);
    addScaled(b.w, d, r.dw_b);
    if (r.rotor >= 0) rotor_speed[r.rotor] += d * r.rotor_dw;
    addBlockImpulse(r, d, s);
    largest = std::max(largest, std::abs(d));
  }
}

// Stage 3: apply last substep's impulses so the iterations start near the answer.
void Simulator::Impl::warmStart(State& s) {
  contacts.warmStart(bodies, rotor_speed, rotor_inv_inertia);
  for (std::size_t j = 0; j < joints.size(); ++j) {
    const JointWork& w = joints[j];
    JointImpulses& imp = s.joints[j].impulses;
    if (w.type == JointType::Hinge) {
      // The hinge's rotation rows act perpendicular to its axis only. The stored impulse is a
      // world vector from the last substep; since then the axis has turned with the bodies, so
      // drop its part along the current axis: no row could ever take that torque back, and it
      // would drive the free coordinate (a torque that grew to several N m in a branching tree).
      Vec3 axis = w.hinge_rotation.u1.cross(w.hinge_rotation.u2);
      const double norm = axis.norm();
      if (norm > 0.0) {
        axis /= norm;
        imp.angular -= axis * axis.dot(imp.angular);
      }
    }
    SolverBody& a = bodies[w.a];
    SolverBody& b = bodies[w.b];
    switch (w.type) {
      case JointType::Flexure: {
        // The stored world vectors back onto this substep's rows: linear ones along orthonormal
        // directions, angular ones along near-orthogonal directions (exact at rest).
        JointWork& fw = joints[j];
        for (int r = 0; r < 6; ++r) {
          const bool lin = r == 0 || r == 3 || r == 4;
          const Vec3& dir = lin ? fw.flex_rows[r].lin_b : fw.flex_rows[r].ang_b;
          const double n2 = dir.squaredNorm();
          fw.flex_lambda[r] = n2 > 0.0 ? (lin ? imp.linear : imp.angular).dot(dir) / n2 : 0.0;
          fw.flex_rows[r].apply(a, b, fw.flex_lambda[r]);
        }
        break;
      }
      case JointType::Ball:
        w.point.apply(a, b, imp.linear);
        break;
      case JointType::Fixed:
        w.point.apply(a, b, imp.linear);
        HingeRotationPart::applyAngular(a, b, imp.angular);
        break;
      case JointType::Hinge:
        w.point.apply(a, b, imp.linear);
        HingeRotationPart::applyAngular(a, b, imp.angular);
        break;
      case JointType::Prismatic:
        HingeRotationPart::applyAngular(a, b, imp.angular);
        w.line.row1.apply(a, b, imp.linear.dot(w.line.row1.lin));
        w.line.row2.apply(a, b, imp.linear.dot(w.line.row2.lin));
        break;
    }
    if (w.type == JointType::Hinge || w.type == JointType::Prismatic) {
      w.axis.apply(a, b, imp.friction + imp.viscous + imp.limit);
    }
  }
  for (std::size_t m = 0; m < motors.size(); ++m) {
    const MotorWork& w = motors[m];
    const MotorState& ms = s.motors[m];
    rotor_speed[m] += ms.characteristic_impulse * w.inv_inertia;
    JointWork& jw = joints[w.joint];
    jw.axis.apply(bodies[jw.a], bodies[jw.b], ms.coupling_impulse);
    rotor_speed[m] -= w.coupling_ratio * ms.coupling_impulse * w.inv_inertia;
  }
  for (std::size_t i = 0; i < repeaters.size(); ++i) {
    const RepeaterWork& w = repeaters[i];
    const double p = s.repeaters[i].coupling_impulse;
    JointWork& jw = joints[w.joint];
    jw.axis.apply(bodies[jw.a], bodies[jw.b], p);
    rotor_speed[w.motor] -= w.ratio * p * motors[w.motor].inv_inertia;
  }
}

// Stage 4: sequential impulses. Soft and bounded rows first, hard rows last (they win).
void Simulator::Impl::solveVelocity(State& s, double h, int& iterations, double& residual,
                                    bool& capped) {
  const SolverSettings& cfg = model.solver;
  capped = true;
  articulation.state = &s;
  articulateContacts(s);
  for (iterations = 1; iterations <= cfg.velocity_iterations; ++iterations) {
    double largest = 0.0;
    auto note = [&largest](double d) { largest = std::max(largest, std::abs(d)); };

    // Joint axis rows: viscous (soft), Coulomb friction (bounded), limit (one-sided).
    for (const int j : axis_row_joints) {
      JointWork& w = joints[j];
      JointImpulses& imp = s.joints[j].impulses;
      SolverBody& a = bodies[w.a];
      SolverBody& b = bodies[w.b];
      // Changes the axis speed by dv through the joint response; returns the axis impulse.
      auto push = [&](double dv) {
        for (int r = 0; r < 5; ++r) {
          const double l = w.axis_response[r] * dv;
          if (l == 0.0) continue;
          const JointWork::Row& row = w.rows[r];
          a.v += (a.inv_mass * l) * row.lin_a;
          a.w += a.inv_inertia * (l * row.ang_a);
          b.v += (b.inv_mass * l) * row.lin_b;
          b.w += b.inv_inertia * (l * row.ang_b);
          if (w.type == JointType::Hinge) {
            if (r < 3) imp.linear += l * row.lin_b;
            else imp.angular += l * row.ang_b;
          } else {
            if (r < 3) imp.angular += l * row.ang_b;
            else imp.linear += l * row.lin_b;
          }
        }
        const double l5 = w.axis_response[5] * dv;
        w.axis.apply(a, b, l5);
        return l5;
      };
      if (w.viscous_gamma > 0.0 && w.axis_mass > 0.0) {
        // Soft row: impulse = -gamma * (final speed - target).
        const double v = w.axis.velocity(a, b) - w.viscous_target;
        const double dv = (-w.viscous_gamma * v - imp.viscous) / (w.axis_mass + w.viscous_gamma);
        imp.viscous += push(dv);
        note(dv * w.axis_mass);
      }
      if (w.has_friction && w.axis_mass > 0.0) {
        const JointFriction& fr = model.joints[j].friction;
        const double bound = fr.coefficient * imp.linear.norm() + w.friction_level * h;
        const double v = w.axis.velocity(a, b);
        const double old = imp.friction;
        const double target = std::clamp(old - v * w.axis_mass, -bound, bound);
        imp.friction += push((target - old) / w.axis_mass);
        note(target - old);
      }
      if (w.limit_side != 0 && w.axis_mass > 0.0 && !joint_in_block[j]) {
        const double v = w.limit_side * w.axis.velocity(a, b);
        const double old = w.limit_side * imp.limit;
        const double acc = std::max(0.0, old - (v + w.limit_bias) * w.axis_mass);
        imp.limit += push(w.limit_side * (acc - old) / w.axis_mass);
        note(acc - old);
      }
    }

    // Contacts: friction, torsion and non-penetration rows.
    note(contacts.solveVelocity(bodies, rotor_speed, rotor_inv_inertia, iterations % 2 == 0,
                                cfg.velocity_tolerance));
    // Rows outside a block may read its impulses (a driven joint's friction bound).
    if (!all_blocks_closed) articulation.flush();

    // Driven mechanisms (SPEC eqs. 13-16 with the characteristic), each solved as one block.
    for (std::size_t bi = 0; bi < blocks.size(); ++bi)
      if (!block_closed[bi] || !blockStillHolds(static_cast<int>(bi), s))
        solveBlock(blocks[bi], s, largest);

    // Hard joint rows: rotation, then point (the point rows are most visible).
    for (std::size_t j = 0; j < joints.size(); ++j) {
      JointImpulses& imp = s.joints[j].impulses;
      if (const int hs = hinge_sweep_of_joint[j]; hs >= 0) {
        const HingeSweep& sweep = hinge_sweeps[hs];
        note(sweep.block.solve(bodies[sweep.a], bodies[sweep.b], imp.linear, imp.angular));
        continue;
      }
      if (joint_in_block[j]) continue;
      JointWork& w = joints[j];
      SolverBody& a = bodies[w.a];
      SolverBody& b = bodies[w.b];
      switch (w.type) {
        case JointType::Hinge:
          break;  // solved above
        case JointType::Flexure: {
          Row6 r;
          for (int k = 0; k < 6; ++k) r[k] = w.flex_rows[k].velocity(a, b);
          r += w.flex_bias + w.flex_gamma * w.flex_lambda;
          const Row6 dl = -(w.flex_inv * r);
          for (int k = 0; k < 6; ++k) w.flex_rows[k].apply(a, b, dl[k]);
          w.flex_lambda += dl;
          note(dl.cwiseAbs().maxCoeff());
          break;
        }
        case JointType::Fixed:
          note(w.fixed_block.solve(a, b, imp.linear, imp.angular));
          break;
        case JointType::Prismatic: {
          const Vec3 l = -(w.rotation.k_inv * (b.w - a.w));
          HingeRotationPart::applyAngular(a, b, l);
          imp.angular += l;
          note(l.norm());
          const Eigen::Vector2d cdot(w.line.row1.velocity(a, b), w.line.row2.velocity(a, b));
          const Eigen::Vector2d lam = -(w.line.k_inv * cdot);
          w.line.row1.apply(a, b, lam.x());
          w.line.row2.apply(a, b, lam.y());
          imp.linear += w.line.row1.lin * lam.x() + w.line.row2.lin * lam.y();
          note(lam.norm());
          break;
        }
        case JointType::Ball: {
          const Vec3 p = -(w.point.k_inv * (w.point.velocity(a, b) - w.point.bias));
          w.point.apply(a, b, p);
          imp.linear += p;
          note(p.norm());
          break;
        }
      }
    }

    residual = largest;
    if (largest <= cfg.velocity_tolerance) {
      capped = false;
      break;
    }
  }
  iterations = std::min(iterations, cfg.velocity_iterations);
  articulation.flush();
  // Flexure impulses back into the joint's stored reaction (world vectors on body b).
  for (std::size_t j = 0; j < joints.size(); ++j) {
    const JointWork& w = joints[j];
    if (w.type != JointType::Flexure) continue;
    JointImpulses& imp = s.joints[j].impulses;
    imp.linear.setZero();
    imp.angular.setZero();
    for (int r = 0; r < 6; ++r) {
      if (r == 0 || r == 3 || r == 4) imp.linear += w.flex_lambda[r] * w.flex_rows[r].lin_b;
      else imp.angular += w.flex_lambda[r] * w.flex_rows[r].ang_b;
    }
  }
}

// Stage 5: semi-implicit Euler positions from the new velocities.
void Simulator::Impl::integrate(double h) {
  for (int i = 0; i < world; ++i) {
    if (bodies[i].inv_mass == 0.0) continue;
    positions[i] += bodies[i].v * h;
    orientations[i] = rotateBy(orientations[i], bodies[i].w * h);
  }
  for (std::size_t m = 0; m < motors.size(); ++m) rotor_angle[m] += rotor_speed[m] * h;
}

// Stage 6: split impulses. Pseudo-impulses move positions directly toward the constraint
// manifold and are then forgotten: real velocities never see them, so no energy is injected.
double Simulator::Impl::solvePosition(int& iterations) {
  const double beta = model.solver.position_correction;
  double largest = 0.0;
  auto shift = [this](int body, const Vec3& dx, const Vec3& dtheta) {
    positions[body] += dx;
    orientations[body] = rotateBy(orientations[body], dtheta);
  };
  // Moves the joint coordinate by dq (to first order) keeping its other rows: the position
  // version of the velocity stage's push. Returns the axis pseudo-impulse.
  auto moveAxis = [&](const JointWork& w, const Eigen::Matrix<double, 6, 1>& response, double dq) {
    const SolverBody& a = bodies[w.a];
    const SolverBody& b = bodies[w.b];
    Vec3 dx_a = Vec3::Zero(), dt_a = Vec3::Zero(), dx_b = Vec3::Zero(), dt_b = Vec3::Zero();
    for (int r = 0; r < 6; ++r) {
      const double l = response[r] * dq;
      dx_a += l * w.rows[r].lin_a;
      dt_a += l * w.rows[r].ang_a;
      dx_b += l * w.rows[r].lin_b;
      dt_b += l * w.rows[r].ang_b;
    }
    shift(w.a, a.inv_mass * dx_a, a.inv_inertia * dt_a);
    shift(w.b, b.inv_mass * dx_b, b.inv_inertia * dt_b);
    return response[5] * dq;
  };
  // A coupling or slider row within a thousandth of the position tolerance holds (in rotor
  // coordinates they are exact to rounding, 1e-16): its correction would move nothing, and
  // skipping it spares the joint's response and rows.
  const double held = 1e-3 * model.solver.position_tolerance_m;
  auto undefer = [this](JointWork& w) {
    if (!w.response_deferred) return;
    setupJointResponse(w, bodies[w.a], bodies[w.b], w.rotor_mobility);
    w.response_deferred = false;
  };
  for (iterations = 0; iterations < model.solver.position_iterations; ++iterations) {
    largest = contacts.solvePosition(model.contact, positions, orientations, bodies);
    for (std::size_t j = 0; j < joints.size(); ++j) {
      const JointDef& def = model.joints[j];
      JointWork& w = joints[j];
      const SolverBody& a = bodies[w.a];
      const SolverBody& b = bodies[w.b];
      if (def.type == JointType::Flexure) {
        largest = std::max(largest, solveFlexurePosition(static_cast<int>(j), beta));
        continue;
      }
      if (const int hs = hinge_sweep_of_joint[j]; hs >= 0) {
        // A hinge outside motor blocks: its point and rotation rows in one step with the
        // velocity stage's block factor from this substep's start. The errors are measured at
        // the poses as they are now; only the directions the correction takes are the
        // substep's, which moved by a few milliradians at most.
        const detail::PointRotationBlock<2>& block = hinge_sweeps[hs].block;
        const HingeLocalFrame& lf = hinge_frames[hs];
        const Mat3 rot_a = orientations[w.a].toRotationMatrix();
        const Mat3 rot_b = orientations[w.b].toRotationMatrix();
        const Vec3 a1 = rot_a * lf.axis_a;
        double c[5];
        const Vec3 gap = (positions[w.b] + rot_b * lf.anchor_b) - (positions[w.a] + rot_a * lf.anchor_a);
        c[0] = gap[0];
        c[1] = gap[1];
        c[2] = gap[2];
        c[3] = a1.dot(rot_b * lf.side_b1);
        c[4] = a1.dot(rot_b * lf.side_b2);
        for (const double e : c) largest = std::max(largest, std::abs(e));
        double lambda[5];
        block.impulseFor(c, beta, lambda);
        Vec3 dx_a, dt_a, dx_b, dt_b;
        for (int r = 0; r < 3; ++r) {
          block.turnsFor(lambda, r, dt_a[r], dt_b[r]);
          dx_a[r] = -a.inv_mass * lambda[r];
          dx_b[r] = b.inv_mass * lambda[r];
        }
        shift(w.a, dx_a, dt_a);
        shift(w.b, dx_b, dt_b);
      } else if (def.type == JointType::Prismatic) {
        const Vec3 e = rotationError(orientations[w.a] * def.frame_a.rotation,
                                     orientations[w.b] * def.frame_b.rotation);
        largest = std::max(largest, e.cwiseAbs().maxCoeff());
        if (e.cwiseAbs().maxCoeff() > held) {
          const Vec3 l = -beta * (w.rotation.k_inv * e);
          shift(w.a, Vec3::Zero(), -(a.inv_inertia * l));
          shift(w.b, Vec3::Zero(), b.inv_inertia * l);
        }
        const JointFrames g = frames(def, w);
        const Vec3 d = g.anchor_b - g.anchor_a;
        const Eigen::Vector2d c(d.dot(g.axes_a.col(1)), d.dot(g.axes_a.col(2)));
        largest = std::max(largest, c.cwiseAbs().maxCoeff());
        if (c.cwiseAbs().maxCoeff() > held) {
          LineRows line;
          line.setup(a, b, g.arm_a, g.arm_b, d, g.axes_a.col(1), g.axes_a.col(2));
          const Eigen::Vector2d lam = -beta * (line.k_inv * c);
          for (const auto& [row, l2] :
               {std::pair{&line.row1, lam.x()}, std::pair{&line.row2, lam.y()}}) {
            shift(w.a, -row->inv_mass_a * l2 * row->lin, l2 * row->dw_a);
            shift(w.b, row->inv_mass_b * l2 * row->lin, l2 * row->dw_b);
          }
        }
      } else {
        // Rotation rows, then the point rows on the arms as the rotation correction leaves them
        // (to first order), then one pose update per body: the frames are computed once.
        const JointFrames f = frames(def, w);
        Vec3 turn_a = Vec3::Zero(), turn_b = Vec3::Zero();
        if (def.type == JointType::Hinge) {
          const Vec3 a1 = f.axes_a.col(0);
          const Eigen::Vector2d c(a1.dot(f.axes_b.col(1)), a1.dot(f.axes_b.col(2)));
          largest = std::max(largest, c.cwiseAbs().maxCoeff());
          HingeRotationPart part;
          part.setup(a, b, a1, f.axes_b.col(1), f.axes_b.col(2));
          const Eigen::Vector2d lam = -beta * (part.k_inv * c);
          const Vec3 l = part.u1 * lam.x() + part.u2 * lam.y();
          turn_a = -(a.inv_inertia * l);
          turn_b = b.inv_inertia * l;
        } else if (def.type == JointType::Fixed) {
          const Vec3 e = rotationError(orientations[w.a] * def.frame_a.rotation,
                                       orientations[w.b] * def.frame_b.rotation);
          largest = std::max(largest, e.cwiseAbs().maxCoeff());
          const Vec3 l = -beta * (w.rotation.k_inv * e);
          turn_a = -(a.inv_inertia * l);
          turn_b = b.inv_inertia * l;
        }
        const Vec3 arm_a = f.arm_a + turn_a.cross(f.arm_a);
        const Vec3 arm_b = f.arm_b + turn_b.cross(f.arm_b);
        const Vec3 c = (f.anchor_b - f.arm_b + arm_b) - (f.anchor_a - f.arm_a + arm_a);
        largest = std::max(largest, c.cwiseAbs().maxCoeff());
        Vec3 move_a = Vec3::Zero(), move_b = Vec3::Zero();
        const Mat3 k = PointPart::effectiveMassInverse(a, b, arm_a, arm_b);
        if (k.determinant() > 0.0) {
          const Vec3 p = -beta * (k.inverse() * c);
          move_a = -a.inv_mass * p;
          move_b = b.inv_mass * p;
          turn_a -= a.inv_inertia * arm_a.cross(p);
          turn_b += b.inv_inertia * arm_b.cross(p);
        }
        shift(w.a, move_a, turn_a);
        shift(w.b, move_b, turn_b);
      }
      // Limits.
      if (w.limit_side != 0) {
        const double q = unwrappedJoint(static_cast<int>(j), w.position);
        const double gap = w.limit_side > 0 ? q - def.lower_limit : def.upper_limit - q;
        if (gap < 0.0) {
          largest = std::max(largest, -gap);
          undefer(w);
          if (w.axis_mass > 0.0) moveAxis(w, w.axis_response, -beta * w.limit_side * gap);
        }
      }
    }
    // Motor and repeater couplings: joint coordinate - ratio * rotor angle (- offset) = 0.
    for (std::size_t m = 0; m < motors.size(); ++m) {
      const MotorWork& mw = motors[m];
      if (mw.drive != nullptr) continue;  // an elastic transmission: its twist is physical
      const JointWork& w = joints[mw.joint];
      const double c = unwrappedJoint(mw.joint, w.position) - mw.coupling_ratio * rotor_angle[m];
      largest = std::max(largest, std::abs(c));
      if (std::abs(c) <= held) continue;
      undefer(joints[mw.joint]);
      const double lambda = moveAxis(w, w.coupling_response, -beta * c);
      rotor_angle[m] -= mw.coupling_ratio * lambda * mw.inv_inertia;
    }
    for (const RepeaterWork& rw : repeaters) {
      if (motors[rw.motor].drive != nullptr) continue;  // elastic too
      const JointWork& w = joints[rw.joint];
      const double c =
          unwrappedJoint(rw.joint, w.position) - rw.ratio * rotor_angle[rw.motor] - rw.offset;
      largest = std::max(largest, std::abs(c));
      if (std::abs(c) <= held) continue;
      undefer(joints[rw.joint]);
      const double lambda = moveAxis(w, w.coupling_response, -beta * c);
      rotor_angle[rw.motor] -= rw.ratio * lambda * motors[rw.motor].inv_inertia;
    }
    if (largest <= model.solver.position_tolerance_m) break;
  }
  return largest;
}

void Simulator::Impl::updateJointCoordinates(State& s) {
  for (std::size_t j = 0; j < joints.size(); ++j) {
    const JointType t = model.joints[j].type;
    if (t != JointType::Hinge && t != JointType::Prismatic && t != JointType::Flexure) continue;
    s.joints[j].position = unwrappedJoint(static_cast<int>(j), s.joints[j].position);
  }
}

// Sleeping by groups: bodies linked by joints or contacts (static bodies do not link) sleep
// together once every one has been slow for sleep_time_s, and wake together when any of them is
// awake (an awake body touched a sleeping one). Groups with a motor-driven joint never sleep.
void Simulator::Impl::updateSleep(State& s) {
  const ContactSettings& cfg = model.contact;
  const int nb = world;
  if (!cfg.sleep_enabled) {
    for (BodyState& b : s.bodies) {
      b.asleep = false;
      b.slow_time_s = 0.0;
    }
    return;
  }
  // Everything asleep: no group has an awake body to wake it, and sleepers stay asleep.
  bool any_awake = false;
  for (int i = 0; i < nb && !any_awake; ++i) any_awake = body_inv_mass[i] > 0.0 && !s.bodies[i].asleep;
  if (!any_awake) return;
  detail::UnionFind& groups = sleep_groups;
  groups.reset(nb);
  auto find = [&groups](int x) { return groups.find(x); };
  auto dynamic = [&](int b) { return b >= 0 && b < nb && body_inv_mass[b] > 0.0; };
  auto link = [&](int a, int b) {
    if (dynamic(a) && dynamic(b)) groups.join(a, b);
  };
  // Per group: 1 = has an awake body, 2 = has a sleeping body, 4 = someone not slow long
  // enough, 8 = motorised, 16 = rests on something (a contact). A group hanging on joints alone
  // never sleeps: slow is not at rest for a pendulum near its turning point. Bodies touching
  // something are marked 16 while linking, and the mark moves to their group's root below.
  std::vector<int>& flags = sleep_flags;
  std::fill(flags.begin(), flags.end(), 0);
  for (const JointDef& j : model.joints) link(j.body_a, j.body_b);
  for (std::size_t at = 0; at < s.contacts.size(); ++at) {
    const ContactState& c = s.contacts[at];
    // A pair's points are consecutive (sorted) and link the same two bodies: once is enough.
    if (at > 0 && c.shape_a == s.contacts[at - 1].shape_a && c.shape_b == s.contacts[at - 1].shape_b) continue;
    const int a = contacts.shapeOwner(static_cast<int>(c.shape_a));
    const int b = contacts.shapeOwner(static_cast<int>(c.shape_b));
    link(a, b);
    if (dynamic(a)) flags[a] |= 32;
    if (dynamic(b)) flags[b] |= 32;
  }
  for (int i = 0; i < nb; ++i) {
    if (flags[i] & 32) flags[find(i)] |= 16;
  }
  for (std::size_t j = 0; j < model.joints.size(); ++j) {
    if (!joint_in_block[j]) continue;
    const JointDef& def = model.joints[j];
    const int body = dynamic(def.body_b) ? def.body_b : def.body_a;
    if (dynamic(body)) flags[find(body)] |= 8;
  }
  const double dt = model.solver.time_step_s;
  for (int i = 0; i < nb; ++i) {
    if (!dynamic(i)) continue;
    BodyState& b = s.bodies[i];
    if (!b.asleep) {
      const bool slow = b.linear_velocity_mps.norm() < cfg.sleep_linear_speed_mps &&
                        b.angular_velocity_radps.norm() < cfg.sleep_angular_speed_radps;
      b.slow_time_s = slow ? b.slow_time_s + dt : 0.0;
    }
    int& f = flags[find(i)];
    f |= b.asleep ? 2 : 1;
    if (!b.asleep && b.slow_time_s < cfg.sleep_time_s) f |= 4;
  }
  for (int i = 0; i < nb; ++i) {
    if (!dynamic(i)) continue;
    BodyState& b = s.bodies[i];
    const int f = flags[find(i)];
    if ((f & 3) == 3) {  // mixed: wake the group
      b.asleep = false;
      b.slow_time_s = 0.0;
    } else if ((f & 16) && !(f & 2) && !(f & 4) && !(f & 8)) {  // resting, slow long enough
      b.asleep = true;
      b.linear_velocity_mps.setZero();
      b.angular_velocity_radps.setZero();
    }
  }
}

Fault Simulator::Impl::check(const State& s) const {
  const SolverSettings& cfg = model.solver;
  Fault f;
  f.step = s.step;
  // The item's name is built only when something is reported: check() runs every step.
  std::string_view prefix;
  const std::string* name = nullptr;
  auto report = [&](Fault::Kind kind, const char* field, double value) {
    if (f.kind != Fault::Kind::None) return;
    f.kind = kind;
    f.item = std::string(prefix) + *name;
    f.field = field;
    f.value = value;
  };
  for (std::size_t i = 0; i < s.bodies.size() && f.kind == Fault::Kind::None; ++i) {
    const BodyState& b = s.bodies[i];
    prefix = "body ";
    name = &model.bodies[i].name;
    if (!b.position_m.allFinite()) report(Fault::Kind::NonFinite, "position", b.position_m.norm());
    else if (!b.orientation.coeffs().allFinite()) report(Fault::Kind::NonFinite, "orientation", b.orientation.norm());
    else if (!b.linear_velocity_mps.allFinite()) report(Fault::Kind::NonFinite, "linear_velocity", b.linear_velocity_mps.norm());
    else if (!b.angular_velocity_radps.allFinite()) report(Fault::Kind::NonFinite, "angular_velocity", b.angular_velocity_radps.norm());
    else if (b.linear_velocity_mps.norm() > cfg.max_linear_speed_mps) report(Fault::Kind::Runaway, "linear_velocity", b.linear_velocity_mps.norm());
    else if (b.angular_velocity_radps.norm() > cfg.max_angular_speed_radps) report(Fault::Kind::Runaway, "angular_velocity", b.angular_velocity_radps.norm());
  }
  for (std::size_t m = 0; m < s.motors.size() && f.kind == Fault::Kind::None; ++m) {
    const MotorState& ms = s.motors[m];
    prefix = "motor ";
    name = &model.motors[m].name;
    if (!std::isfinite(ms.angle_rad)) report(Fault::Kind::NonFinite, "angle", ms.angle_rad);
    else if (!std::isfinite(ms.speed_radps)) report(Fault::Kind::NonFinite, "speed", ms.speed_radps);
    else if (std::abs(ms.speed_radps) > cfg.max_motor_speed_radps) report(Fault::Kind::Runaway, "speed", ms.speed_radps);
  }
  return f;
}

// ---------------------------------------------------------------------------------------------

Simulator::Simulator(Model model) {
  std::vector<ModelError> errors = validate(model);
  if (!errors.empty()) throw ModelInvalid(std::move(errors));
  impl_ = std::make_unique<Impl>(std::move(model));
}
Simulator::~Simulator() = default;
Simulator::Simulator(Simulator&&) noexcept = default;
Simulator& Simulator::operator=(Simulator&&) noexcept = default;

const Model& Simulator::model() const { return impl_->model; }
State Simulator::initialState() const { return makeInitialState(impl_->model); }

StepReport Simulator::step(State& state) {
  Impl& im = *impl_;
  const SolverSettings& cfg = im.model.solver;
  const double h = cfg.time_step_s / cfg.substeps;
  StepReport report;
  im.load(state);
  for (int sub = 0; sub < cfg.substeps; ++sub) {
    im.applyForces(state, h);
    im.prepare(state, h);
    // A limit whose side changed must not warm-start with the other side's impulse.
    for (std::size_t j = 0; j < im.joints.size(); ++j) {
      double& lim = state.joints[j].impulses.limit;
      if (im.joints[j].limit_side * lim < 0.0 || im.joints[j].limit_side == 0) lim = 0.0;
    }
    if (cfg.warm_start) {
      im.warmStart(state);
    } else {
      for (JointState& j : state.joints) j.impulses = JointImpulses{};
      for (MotorState& m : state.motors) m.characteristic_impulse = m.coupling_impulse = 0.0;
      for (RepeaterState& r : state.repeaters) r.coupling_impulse = 0.0;
    }
    int iterations = 0;
    double residual = 0.0;
    bool capped = false;
    im.solveVelocity(state, h, iterations, residual, capped);
    const auto reduced_now = std::count_if(im.reduced.begin(), im.reduced.end(),
                                           [](const Impl::ReducedBlock& r) { return r.ready; });
    report.reduced_blocks = std::max(report.reduced_blocks, static_cast<int>(reduced_now));
    report.velocity_iterations = std::max(report.velocity_iterations, iterations);
    report.velocity_residual = std::max(report.velocity_residual, residual);
    if (capped) report.velocity_end = SolveEnd::IterationCap;
    im.integrate(h);
    int pos_iterations = 0;
    const double err = im.solvePosition(pos_iterations);
    report.position_iterations = std::max(report.position_iterations, pos_iterations);
    report.position_error = std::max(report.position_error, err);
    im.updateJointCoordinates(state);
    im.updateDrivesAndFriction(state, h);
    im.contacts.store(state);
  }
  im.store(state, h);
  im.updateSleep(state);
  state.step += 1;
  state.time_s = static_cast<double>(state.step) * cfg.time_step_s;
  report.fault = im.check(state);
  // Reported once per episode: a state that recovers (e.g. the caller reset it) re-arms it.
  if (report.fault.kind == Fault::Kind::None) {
    im.fault_reported = false;
  } else if (!im.fault_reported) {
    report.fault_is_new = true;
    im.fault_reported = true;
  }
  return report;
}

JointReaction Simulator::jointReaction(const State& state, int joint) const {
  const Impl& im = *impl_;
  const double h = im.model.solver.time_step_s / im.model.solver.substeps;
  const JointImpulses& imp = state.joints.at(joint).impulses;
  JointReaction r;
  r.force_N = imp.linear / h;
  r.torque_Nm = imp.angular / h;
  double axis = imp.limit + imp.friction + imp.viscous;
  const int m = im.motor_of_joint[joint];
  if (m >= 0) axis += state.motors[m].coupling_impulse;
  for (std::size_t i = 0; i < im.repeaters.size(); ++i) {
    if (im.repeaters[i].joint == joint) axis += state.repeaters[i].coupling_impulse;
  }
  r.axis_force = axis / h;
  return r;
}

std::vector<ContactReport> Simulator::contacts(const State& state) const {
  const Impl& im = *impl_;
  const double h = im.model.solver.time_step_s / im.model.solver.substeps;
  std::vector<ContactReport> out;
  out.reserve(state.contacts.size());
  for (const ContactState& c : state.contacts) {
    ContactReport r;
    r.shape_a = static_cast<int>(c.shape_a);
    r.shape_b = static_cast<int>(c.shape_b);
    r.body_a = im.contacts.shapeOwner(r.shape_a);
    r.body_b = im.contacts.shapeOwner(r.shape_b);
    r.point_m = c.point_m;
    r.normal = c.normal;
    r.separation_m = c.separation_m;
    r.normal_force_N = c.normal_impulse / h;
    r.friction_force_N = c.friction_impulse / h;
    out.push_back(r);
  }
  return out;
}

double Simulator::measureJointPosition(const State& state, int joint) const {
  const JointDef& def = impl_->model.joints.at(static_cast<std::size_t>(joint));
  return detail::jointCoordinate(def.type, detail::computeFrames(def, state.bodies));
}

void detail::SimulatorTesting::solveBlocksInFullCoordinates(Simulator& sim) {
  Simulator::Impl& im = *sim.impl_;
  for (Simulator::Impl::ReducedBlock& rb : im.reduced) rb.planned = false;
  std::fill(im.reduced_joint.begin(), im.reduced_joint.end(), 0);
}

void Simulator::setBodyLoad(int body, const Vec3& force_N, const Vec3& torque_Nm) {
  impl_->load_force.at(static_cast<std::size_t>(body)) = force_N;
  impl_->load_torque.at(static_cast<std::size_t>(body)) = torque_Nm;
}

}  // namespace sim::dynamics
