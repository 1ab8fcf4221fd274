// Internal header, not API: the joints as the solver sees them, and the verbs of each joint kind.
//
// Every constraint kind has the same verbs, called by the stages of Simulator::step (simulator.cpp
// dispatches on JointType, as Box2D's joint.c does):
//   prepare        this substep's rows and effective masses, at the substep's start poses
//   warmStart      last substep's impulses (kept in the State) applied to the bodies
//   solveVelocity  one sequential-impulse update of the kind's rows; returns the largest change
//   solvePosition  one split-impulse pass on its position error; returns the largest error left
//   store          what the kind keeps in the State after the substep or step
//   coordinate     the joint coordinate (joint_geometry.h: jointCoordinate dispatches)
// Each kind is one file with its derivation at the top: hinge_joint.cpp, prismatic_joint.cpp,
// ball_joint.cpp, fixed_joint.cpp, flexure_joint.cpp. What acts along a hinge's or slider's
// coordinate are kinds of their own, sharing the joint's axis response (joint_response.cpp):
// joint_limit.cpp, joint_friction.cpp, and the motors' couplings (motor.cpp, repeater.cpp).
// docs/dynamics.md ("How to add a constraint kind") lists what a new kind touches.
#pragma once

#include <dynamics/model.h>

#include <vector>

#include "joint_geometry.h"
#include "joint_parts.h"
#include "rows.h"
#include "step_context.h"

namespace sim::dynamics::detail {

struct RowBlock;

/// A joint's response along its coordinate (hinge, prismatic), for the rows acting there: the
/// joint's six rows (five hard rows, then the axis row) and the impulses along them that change
/// the axis speed by one unit while the hard rows keep their speeds: column 5 of K^-1 (`axis`),
/// and of K^-1 with the driving rotor's mobility added (`coupling`). Limits, friction, damping
/// and position couplings act through these, so a pivot far from the centre of mass does not make
/// them fight the point rows.
struct AxisResponse {
  bool active = false;  ///< The joint has rows along its axis this substep (set in prepare).
  Row rows[6];
  Vec6 axis = Vec6::Zero();
  Vec6 coupling = Vec6::Zero();
  double mass = 0.0;  ///< (K^-1)_55: the effective mass of the joint coordinate.
  /// A joint of a block solved in rotor coordinates needs its response only when a position pass
  /// corrects it: computed then (joint_axis::undefer).
  bool deferred = false;
  double rotor_mobility = 0.0;  ///< ratio^2 / I_m of the rotor driving the axis (0: undriven).
};

/// A limit's row this substep (joint_limit.cpp).
struct LimitWork {
  int side = 0;       ///< +1 lower limit row, -1 upper limit row, 0 none.
  double bias = 0.0;  ///< Allowed approach speed (speculative limit).
};

/// Friction along the coordinate this substep (joint_friction.cpp): a Coulomb row bounded by
/// `level` (plus the joint's load), in the motor block of a driven joint, and a soft viscous row.
struct FrictionWork {
  bool coulomb = false;         ///< The joint has a Coulomb row (coefficient, breakaway, LuGre,
                                ///< a drive's output friction, a brake).
  double level = 0.0;           ///< Load-independent bound this substep (N m or N).
  double start_speed = 0.0;     ///< Axis speed at the substep's start (explicit curves, LuGre).
  double viscous_gamma = 0.0;   ///< Soft row: impulse per unit speed.
  double viscous_target = 0.0;  ///< Speed the soft row damps toward (a drive's eq. 22 friction).
  // A seed 000 drive's output on this joint: the drive, and whose coupling impulse (M1 h) it
  // carries, the motor's or a repeater's. With eq. 22, z_end = lugre_decay z + lugre_gain Ω_end.
  const DriveDef* drive = nullptr;
  int drive_motor = -1;
  int drive_repeater = -1;
  double lugre_decay = 1.0;
  double lugre_gain = 0.0;
};

/// A flexure's six rows (flexure_joint.cpp): 0-2 hold the out-of-plane motion, 3-5 are its spring.
struct FlexureWork {
  Row rows[6];
  Mat6 inv = Mat6::Zero();     ///< (K + Gamma)^-1
  Mat6 gamma = Mat6::Zero();   ///< The soft rows' compliance.
  Vec6 bias = Vec6::Zero();    ///< Row speed targets.
  Vec6 lambda = Vec6::Zero();  ///< Impulses this substep.
};

/// One joint's solver data, rebuilt in prepare each substep.
struct JointWork {
  int a = 0, b = 0;  ///< Solver bodies (the world is Bodies::world).
  JointType type = JointType::Hinge;
  double position = 0.0;  ///< The unwrapped coordinate at the substep's start.
  // The kinds' parts.
  PointPart point;                    ///< ball, fixed, hinge
  HingeRotationPart hinge_rotation;   ///< hinge
  RotationPart rotation;              ///< fixed, prismatic
  PointRotationBlock<3> fixed_block;  ///< fixed: point + full rotation
  LineRows line;                      ///< prismatic
  FlexureWork flexure;
  // Along the coordinate (hinge, prismatic).
  AxisRow axis;
  AxisResponse response;
  LimitWork limit;
  FrictionWork friction;
};

/// A hinge outside motor blocks: its point and rotation rows solved as one block. Packed apart
/// from JointWork so the velocity sweeps over a long chain stay in cache.
struct HingeSweep {
  int a = 0, b = 0;
  PointRotationBlock<2> block;
};

/// A swept hinge's body-local anchors and axes, so the position pass measures its error from two
/// rotation matrices instead of the full joint frames.
struct HingeLocalFrame {
  Vec3 anchor_a, anchor_b, axis_a, side_b1, side_b2;
};

struct Joints {
  std::vector<JointWork> work;  ///< Per model joint.
  std::vector<char> in_block;   ///< Driven: solved inside a motor block (motor_block.h).
  std::vector<char> reduced;    ///< In a block planned in its rotors' coordinates.
  std::vector<int> motor;       ///< The motor driving the joint, or -1.
  std::vector<int> sweep;       ///< Index into sweeps (a free hinge), or -1.
  std::vector<HingeSweep> sweeps;
  std::vector<HingeLocalFrame> sweep_frames;  ///< Parallel to sweeps.
  std::vector<int> with_axis_rows;  ///< This substep, in joint order: the joints whose axis rows
                                    ///< (friction, viscous, limit outside blocks) have work.
  /// The joints outside motor blocks in the velocity sweep's order (joint order), as runs: a run
  /// of consecutive free hinges (consecutive sweep slots too) is one hinge::solveVelocityRun, any
  /// other joint a run of its own.
  struct SweepRun {
    int first = 0, count = 1;
    bool hinges = false;
  };
  std::vector<SweepRun> velocity_runs;

  JointWork& operator[](int j) { return work[static_cast<std::size_t>(j)]; }
  const JointWork& operator[](int j) const { return work[static_cast<std::size_t>(j)]; }
  /// Joint j's frames at the solver's current poses.
  JointFrames frames(const StepContext& ctx, int j) const {
    const JointWork& w = work[static_cast<std::size_t>(j)];
    const JointDef& def = ctx.model.joints[static_cast<std::size_t>(j)];
    const auto a = static_cast<std::size_t>(w.a), b = static_cast<std::size_t>(w.b);
    return computeFrames(ctx.bodies.positions[a], ctx.bodies.orientations[a], def.frame_a,
                         ctx.bodies.positions[b], ctx.bodies.orientations[b], def.frame_b);
  }
  /// Joint j's coordinate measured now, continued from `reference`.
  double unwrapped(const StepContext& ctx, int j, double reference) const;
};

// ---- The joint kinds' verbs (one .cpp each). ----

namespace hinge {
void compile(const Model& model, Joints& joints, int j);  // a free hinge's sweep slot
void prepare(StepContext& ctx, int j, const JointFrames& f);
void warmStart(StepContext& ctx, int j);
/// One update of the free hinges [first, first + count) (a Joints::SweepRun), in joint order;
/// returns the largest change. Defined below: inlined into the sweep.
inline double solveVelocityRun(StepContext& ctx, int first, int count);
double solvePosition(StepContext& ctx, int j, double beta);
/// Its six rows (three point rows, two rotation rows, the axis row; see AxisResponse) and the
/// hard rows' target speeds (curvature).
void rows(const JointWork& w, Row rows[6], double targets[5]);
}  // namespace hinge

namespace prismatic {
void prepare(StepContext& ctx, int j, const JointFrames& f);
void warmStart(StepContext& ctx, int j);
double solveVelocity(StepContext& ctx, int j);
double solvePosition(StepContext& ctx, int j, double beta);
/// Its six rows (three rotation rows, two line rows, the axis row) and the hard rows' targets.
void rows(const JointWork& w, Row rows[6], double targets[5]);
}  // namespace prismatic

namespace ball {
void prepare(StepContext& ctx, int j, const JointFrames& f);
void warmStart(StepContext& ctx, int j);
double solveVelocity(StepContext& ctx, int j);
double solvePosition(StepContext& ctx, int j, double beta);
/// The point rows' position pass at frames f, after a rotation correction that turns a and b by
/// turn_a, turn_b (hinges in blocks and fixed joints use it too); moves both bodies once and
/// returns the anchors' gap.
double correctPoint(StepContext& ctx, int j, const JointFrames& f, Vec3 turn_a, Vec3 turn_b,
                    double beta);
}  // namespace ball

namespace fixed {
void prepare(StepContext& ctx, int j, const JointFrames& f);
void warmStart(StepContext& ctx, int j);
double solveVelocity(StepContext& ctx, int j);
double solvePosition(StepContext& ctx, int j, double beta);
}  // namespace fixed

namespace flexure {
void prepare(StepContext& ctx, int j, const JointFrames& f);
void warmStart(StepContext& ctx, int j);
double solveVelocity(StepContext& ctx, int j);
double solvePosition(StepContext& ctx, int j, double beta);
/// The solved impulses into the joint's stored reaction (after the velocity solve).
void storeImpulses(StepContext& ctx, int j);
/// d(θ)/dt of its deformation, the joint's speed.
double speed(const StepContext& ctx, int j);
}  // namespace flexure

// ---- Along a hinge's or slider's coordinate (joint_response.cpp). ----

namespace joint_axis {
/// The joint's six rows (hinge::rows or prismatic::rows).
void rows(const JointWork& w, Row rows[6], double targets[5]);
/// Where a hinge's or slider's hard row k keeps its impulse in JointImpulses: linear or angular
/// (a hinge's rows 0-2 hold its point, 3-4 its axis direction; a slider's 0-2 its rotation,
/// 3-4 its line).
inline bool linearRow(JointType type, int k) {
  return (k < 3) == (type == JointType::Hinge);
}
/// Sets up the joint's AxisResponse if it has rows along its axis this substep (their kinds have
/// prepared their flags: the limit, friction; blocks).
void prepareResponse(StepContext& ctx, int j);
/// Computes a deferred response (a position pass needs it).
void undefer(StepContext& ctx, int j);
/// Changes the axis speed by dv through the response, adding the hard rows' impulses to the
/// joint's; returns the axis row's impulse.
double push(StepContext& ctx, int j, double dv);
/// Moves the coordinate by dq (to first order) through `response` (AxisResponse::axis or
/// ::coupling), keeping the hard rows; returns the axis pseudo-impulse.
double move(StepContext& ctx, int j, const Vec6& response, double dq);
/// Last substep's impulses along the axis (friction, viscous and limit rows together).
void warmStart(StepContext& ctx, int j);
/// The axis speed now: the joint's speed (hinge, prismatic).
double speed(const StepContext& ctx, int j);
}  // namespace joint_axis

namespace limit {
void prepare(StepContext& ctx, int j);
/// Forgets a stored limit impulse whose side changed (it must not warm-start the other side).
void forgetStale(StepContext& ctx, int j);
/// The limit row of a joint outside blocks (a driven joint's is a block row).
double solveVelocity(StepContext& ctx, int j);
double solvePosition(StepContext& ctx, int j, double beta);
/// A driven joint's limit as a row of its motor block (unilateral, in the active set).
void addBlockRow(StepContext& ctx, RowBlock& block, int j);
}  // namespace limit

namespace joint_friction {
void compile(const Model& model, Joints& joints);  // which joints have Coulomb rows, drives
void prepare(StepContext& ctx, int j);
/// The viscous row, then the Coulomb row of a joint outside motor blocks (a driven joint's
/// Coulomb row is a block row).
double solveVelocity(StepContext& ctx, int j);
/// A driven joint's Coulomb row as a row of its motor block (bounded, in the active set).
void addBlockRow(StepContext& ctx, RowBlock& block, int j);
/// LuGre bristle states after the substep.
void store(StepContext& ctx);
}  // namespace joint_friction

// A free hinge's velocity rows, in the header so the sweep's dispatch inlines them: as a call
// into hinge_joint.cpp per row and iteration, a 200-link chain ran 11 % slower at the same
// instruction count (bench/README.md, the reshape's same-run timings).
//
// Along a chain, the body one hinge solves as b is the next one's a: its new velocities go to the
// next hinge in registers (they are stored too) instead of through a store and a load on the
// sweep's one dependency chain.
inline double hinge::solveVelocityRun(StepContext& ctx, int first, int count) {
  const HingeSweep* sweep = ctx.joints.sweeps.data() + ctx.joints.sweep[first];
  JointState* state = ctx.state.joints.data() + first;
  SolverBody* bodies = ctx.bodies.solver.data();
  double largest = 0.0;
  BodyVelocities carried{};
  int carried_body = -1;
  for (int k = 0; k < count; ++k) {
    const HingeSweep& s = sweep[k];
    SolverBody& a = bodies[s.a];
    SolverBody& b = bodies[s.b];
    BodyVelocities va = s.a == carried_body ? carried : BodyVelocities::of(a);
    BodyVelocities vb = BodyVelocities::of(b);
    JointImpulses& imp = state[k].impulses;
    largest =
        std::max(largest, s.block.solve(a.inv_mass, b.inv_mass, va, vb, imp.linear, imp.angular));
    va.storeTo(a);
    vb.storeTo(b);
    carried = vb;
    carried_body = s.b;
  }
  return largest;
}

}  // namespace sim::dynamics::detail
