// Internal header, not API: motor blocks, the rows of a driven mechanism solved together.
//
// A motor's rotor joins the dynamic bodies of every joint it drives (directly or through
// repeaters); the connected groups are the blocks (union-find over bodies and rotors: static
// bodies and the world do not connect). A block's rows are gathered from the constraint kinds:
// each motor's characteristic (motor.cpp), each driven joint's five hard rows (hinge_joint.cpp,
// prismatic_joint.cpp), its coupling to its rotor (motor.cpp, repeater.cpp: rigid, or a drive's
// transmission), its limit (joint_limit.cpp) and its Coulomb friction (joint_friction.cpp: a
// power-off brake, bearing friction, a drive's output friction). They are solved together exactly
// each sweep (block Gauss-Seidel), which removes the slow convergence that large reflected rotor
// inertias (r^2 I_m) cause between separate scalar rows, e.g. along a motorised arm; limits,
// backlash flanks and Coulomb rows (bounded rows) enter through a small active-set loop. Two ways
// to solve a block, one per structure:
//  - a tree of hinges and sliders on a static base, each coupled rigidly to a rotor, has one
//    freedom per rotor and is solved in its rotors' coordinates (ReducedBlock,
//    reduced_block.cpp, reduced_mechanism.h): its RowBlock keeps only the characteristics and
//    the bounded rows;
//  - anything else (drive units, loops, balls) in full coordinates: every row an unknown, K
//    factored once per substep in the order equality rows, characteristics, bounded rows, so
//    the factor also yields each rotor's constrained inertia and an active-set change refactors
//    only the trailing rows (RowBlock, motor_block.cpp).
#pragma once

#include <dynamics/model.h>
#include <dynamics/state.h>

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "articulation.h"
#include "dense_factor.h"
#include "reduced_mechanism.h"
#include "rows.h"
#include "step_context.h"

namespace sim::dynamics::detail {

/// Where a block row's accumulated impulse is kept in the state (warm start and reactions).
enum class ImpulseSink {
  JointLinear,
  JointAngular,
  JointLimit,
  JointFriction,
  MotorCoupling,
  MotorBacklash,
  MotorCharacteristic,
  Repeater,
  RepeaterBacklash
};

/// One scalar row of a RowBlock: Cdot = lin_a.v_a + ang_a.w_a + lin_b.v_b + ang_b.w_b
/// + rotor_coef * w_rotor, driven to `target` (soft rows: Cdot + compliance * lambda = target;
/// bounded rows: the accumulated impulse in [lower, upper], Cdot = target while inside, Cdot >=
/// target at lower and <= target at upper; a limit or backlash flank has [0, inf), a Coulomb row
/// [-bound, bound]).
struct BlockRow : Row {
  int a = 0, b = 0, rotor = -1;
  /// M^-1 J^T: the bodies' velocity change per unit impulse.
  Vec3 dv_a = Vec3::Zero(), dw_a = Vec3::Zero(), dv_b = Vec3::Zero(), dw_b = Vec3::Zero();
  double rotor_coef = 0.0, rotor_dw = 0.0;
  double compliance = 0.0, target = 0.0;
  bool bounded = false;
  double lower = 0.0, upper = std::numeric_limits<double>::infinity();  ///< bounded rows (N s)
  /// A Coulomb row's bound is load_coefficient |the joint's linear impulse| + bound_level, read
  /// at each block solve (the load part lags by one sweep, as outside blocks).
  double load_coefficient = 0.0, bound_level = 0.0;
  bool active = true;     ///< Bounded rows: in the active set (held at the target).
  bool at_upper = false;  ///< An inactive bounded row holds `upper`, else `lower`.
  double sign = 1.0;      ///< JointLimit: +1 lower, -1 upper limit; MotorBacklash: the flank.
  ImpulseSink sink = ImpulseSink::JointLinear;
  int owner = 0;  ///< Joint, motor or repeater index the sink refers to.
};

/// A group of rows solved together exactly (block Gauss-Seidel): the motors of one connected
/// mechanism, the joints they drive (directly or through repeaters) and those joints' limits.
/// Solving rotors with the links they drive removes the slow convergence that the large reflected
/// rotor inertias (r^2 I_m) cause between separate scalar rows, e.g. along a motorised arm.
/// Limits enter through a small active-set loop.
struct RowBlock {
  std::vector<BlockRow> rows;
  Eigen::MatrixXd k_full;  ///< J M^-1 J^T + diag(compliance), all rows
  Eigen::MatrixXd k;       ///< the same with inactive bounded rows replaced by identity
  SmallLdlt ldlt;
  Eigen::VectorXd residual, delta, predicted;
  Eigen::VectorXd released;  ///< impulse change of inactive bounded rows (to their bound)
  /// After order(): rows [0, first_motor) are the equality rows of joints and transmissions,
  /// [first_motor, first_bounded) the motors' characteristic rows, the rest bounded (limits,
  /// backlash flanks, Coulomb rows). The factor then yields the motors' constrained inertia on the
  /// way (factorEqualities) and an active-set change refactors only the trailing bounded rows.
  Eigen::Index first_motor = 0, first_bounded = 0;
  std::vector<BlockRow> ordered;  ///< scratch of order()
  /// add() leaves dv, dw zero: a block solved in rotor coordinates never reads them.
  bool skip_moves = false;

  void clear() { rows.clear(); }

  /// Puts the rows in the order described at first_motor, keeping their order within each kind.
  void order() {
    ordered.clear();
    auto kind = [](const BlockRow& r) {
      return r.sink == ImpulseSink::MotorCharacteristic ? 1 : r.bounded ? 2 : 0;
    };
    for (int want = 0; want < 3; ++want) {
      if (want == 1) first_motor = static_cast<Eigen::Index>(ordered.size());
      if (want == 2) first_bounded = static_cast<Eigen::Index>(ordered.size());
      for (const BlockRow& r : rows)
        if (kind(r) == want) ordered.push_back(r);
    }
    rows.swap(ordered);
  }

  /// Appends row j on bodies a and b (solver indices) and returns it for the caller to finish.
  BlockRow& add(const std::vector<SolverBody>& bodies, int a, int b, const Row& j, ImpulseSink sink,
                int owner) {
    BlockRow r;
    r.a = a;
    r.b = b;
    static_cast<Row&>(r) = j;
    if (!skip_moves) {
      r.dv_a = bodies[a].inv_mass * j.lin_a;
      r.dw_a = bodies[a].inv_inertia * j.ang_a;
      r.dv_b = bodies[b].inv_mass * j.lin_b;
      r.dw_b = bodies[b].inv_inertia * j.ang_b;
    }
    r.sink = sink;
    r.owner = owner;
    rows.push_back(r);
    return rows.back();
  }

  /// Assembles K from the rows' Jacobians; rotor_inv_inertia[i] is 1 / I_m of rotor i.
  void assemble(const std::vector<double>& rotor_inv_inertia) {
    const auto n = static_cast<Eigen::Index>(rows.size());
    k_full.resize(n, n);
    for (Eigen::Index i = 0; i < n; ++i) {
      const BlockRow& ri = rows[i];
      for (Eigen::Index j = 0; j <= i; ++j) {
        const BlockRow& rj = rows[j];
        double s = 0.0;
        if (ri.a == rj.a) s += ri.lin_a.dot(rj.dv_a) + ri.ang_a.dot(rj.dw_a);
        if (ri.a == rj.b) s += ri.lin_a.dot(rj.dv_b) + ri.ang_a.dot(rj.dw_b);
        if (ri.b == rj.a) s += ri.lin_b.dot(rj.dv_a) + ri.ang_b.dot(rj.dw_a);
        if (ri.b == rj.b) s += ri.lin_b.dot(rj.dv_b) + ri.ang_b.dot(rj.dw_b);
        if (ri.rotor >= 0 && ri.rotor == rj.rotor)
          s += ri.rotor_coef * rj.rotor_coef * rotor_inv_inertia[ri.rotor];
        k_full(i, j) = s;
        k_full(j, i) = s;
      }
      k_full(i, i) += ri.compliance;
      // A row that cannot move anything (both sides static) would make K singular.
      if (k_full(i, i) <= 0.0) k_full(i, i) = 1.0;
    }
    residual.resize(n);
    released.resize(n);
    delta.resize(n);
    predicted.resize(n);
  }

  /// Factors K of rows put in order() (as buildBlocks does, with the motors' compliance known).
  void factor() {
    factorEqualities();
    factorMotorsAndLimits();
  }

  /// Starts the factor of K (as copyRegularised() describes): factors the equality rows and
  /// eliminates the motor rows against them. The motors' diagonals may then still change
  /// (addMotorCompliance) before factorMotorsAndLimits() finishes.
  void factorEqualities() {
    const auto n = static_cast<Eigen::Index>(rows.size());
    k.resize(n, n);
    ldlt.resize(n);
    for (Eigen::Index i = 0; i < first_bounded; ++i) copyRegularised(i);
    ldlt.factorLeading(k, first_motor, first_bounded);
  }

  /// Inverse of the inertia that motor row i sees when the equality rows hold:
  /// K_ii - K_iH K_HH^-1 K_Hi, read off the factor begun by factorEqualities().
  double constrainedMobility(Eigen::Index i) const {
    return k_full(i, i) - ldlt.eliminatedSquare(i, first_motor);
  }

  /// Adds a motor row's compliance to K (before factorMotorsAndLimits()).
  void addMotorCompliance(Eigen::Index i, double compliance) {
    rows[i].compliance = compliance;
    k_full(i, i) += compliance;
    copyRegularised(i);
  }

  void factorMotorsAndLimits() {
    for (Eigen::Index i = first_motor; i < first_bounded; ++i) {
      ldlt.eliminateRow(k, i, first_motor, i);
      ldlt.setPivot(i, k(i, i));
    }
    factorBounded();
  }

  /// Refactors the bounded rows after their active set changed; the rows before them do not
  /// depend on it.
  void factorBounded() {
    const auto n = static_cast<Eigen::Index>(rows.size());
    for (Eigen::Index i = first_bounded; i < n; ++i) copyRegularised(i);
    ldlt.factorRows(k, first_bounded, n);
  }

  /// The factor is of K restricted to the active rows. Rows may be redundant (the two jaws'
  /// limits of a repeater pair reach their stops together), which makes K singular; a relative
  /// 1e-12 on the diagonal keeps the factor finite and picks the even split of the redundant
  /// impulses. An inactive row is a row of the identity. Only row i's lower triangle is read.
  void copyRegularised(Eigen::Index i) {
    if (!rows[i].active) {
      k.row(i).head(i + 1).setZero();
      k(i, i) = 1.0;
      return;
    }
    k.row(i).head(i) = k_full.col(i).head(i).transpose();  // K is symmetric
    for (Eigen::Index c = first_bounded; c < i; ++c)
      if (!rows[c].active) k(i, c) = 0.0;
    k(i, i) = k_full(i, i) * (1.0 + 1e-12);
  }
};

/// How a block groups the mechanism: its rotors and the joints they drive.
struct BlockPlan {
  std::vector<int> motors;
  std::vector<int> joints;   ///< Driven joints, each motor's own first, then its repeaters'.
  std::vector<int> drivers;  ///< Per joint: motor index, or -(repeater index) - 2.
  /// Hinges and sliders on rigid couplings, each moving body the follower of exactly one of
  /// them, leading back to a static body: the structure a reduced block needs.
  bool rotor_tree = false;
};

/// A rotor-tree block solved in its rotors' coordinates (ReducedMechanism). Its RowBlock keeps
/// only the characteristic and limit rows (targets, the limits' active set, where their impulses
/// go) and is neither assembled nor factored; the joints' rows go straight into the mechanism.
struct ReducedBlock {
  bool planned = false;  ///< The block has the structure.
  bool ready = false;    ///< This substep's build succeeded (else the RowBlock is factored).
  ReducedMechanism mechanism;
  std::vector<int> link_body;      ///< Solver body per link slot.
  std::vector<int> plan_joint;     ///< Per joint slot: index into BlockPlan::joints.
  std::vector<int> slot_of_joint;  ///< Per model joint: its joint slot (-1: not in the block).
  std::vector<int> limit_row;      ///< Per bounded row (this substep): its row in RowBlock::rows.
  std::vector<ReducedMechanism::Limit> limits;  ///< The bounded rows: limits, Coulomb rows.
  std::vector<Vec6> velocity, wrench;           ///< Per link, scratch.
  Eigen::VectorXd rotor_speed, targets, accumulated, gamma;  ///< Per rotor slot, scratch.
  ReducedMechanism::Impulses impulses;
};

struct Joints;
struct Motors;

struct MotorBlocks {
  std::vector<BlockPlan> plans;
  std::vector<RowBlock> blocks;
  std::vector<ReducedBlock> reduced;  ///< Per block.
  Articulation articulation;
  std::vector<char> closed;  ///< Per block: only its rows and articulated contacts act on it.
  bool all_closed = false;

  /// Groups the rotors and driven joints, marks Joints::in_block and ::reduced, and plans the
  /// rotor trees in their rotors' coordinates (it does not change while the model stands).
  void plan(const Model& model, const Bodies& bodies, Joints& joints, const Motors& motors);
  /// This substep's rows of every block, assembled and factored (or built reduced).
  void build(StepContext& ctx);
  /// One exact update of block bi's rows; `largest` takes the largest impulse change.
  void solve(StepContext& ctx, int bi, double& largest);

  // reduced_block.cpp
  void planReduced(const Model& model, const Bodies& bodies, Joints& joints, int bi);
  bool buildReduced(StepContext& ctx, int bi);
  void solveReduced(StepContext& ctx, int bi, double& largest);
  /// Adds a reduced solve's (or pending wrenches') impulses to where the state keeps them;
  /// `largest` (if given) takes the largest change.
  void addReducedImpulses(StepContext& ctx, int bi, const ReducedMechanism::Impulses& in,
                          double* largest);
};

/// Adds a block row's impulse change to where the state keeps it.
inline void addBlockImpulse(const BlockRow& r, double d, State& s) {
  const auto o = static_cast<std::size_t>(r.owner);
  switch (r.sink) {
    case ImpulseSink::JointLinear: s.joints[o].impulses.linear += d * r.lin_b; break;
    case ImpulseSink::JointAngular: s.joints[o].impulses.angular += d * r.ang_b; break;
    case ImpulseSink::JointLimit: s.joints[o].impulses.limit += r.sign * d; break;
    case ImpulseSink::JointFriction: s.joints[o].impulses.friction += d; break;
    case ImpulseSink::MotorCoupling: s.motors[o].coupling_impulse += d; break;
    case ImpulseSink::MotorBacklash: s.motors[o].coupling_impulse += r.sign * d; break;
    case ImpulseSink::MotorCharacteristic: s.motors[o].characteristic_impulse += d; break;
    case ImpulseSink::Repeater: s.repeaters[o].coupling_impulse += d; break;
    case ImpulseSink::RepeaterBacklash: s.repeaters[o].coupling_impulse += r.sign * d; break;
  }
}

/// The impulse a block row holds (of the rows whose accumulated value the block solve reads).
inline double blockAccumulated(const BlockRow& r, const State& s) {
  const auto o = static_cast<std::size_t>(r.owner);
  switch (r.sink) {
    case ImpulseSink::MotorCharacteristic: return s.motors[o].characteristic_impulse;
    case ImpulseSink::JointLimit: return r.sign * s.joints[o].impulses.limit;
    case ImpulseSink::JointFriction: return s.joints[o].impulses.friction;
    case ImpulseSink::MotorCoupling: return s.motors[o].coupling_impulse;
    case ImpulseSink::MotorBacklash: return std::max(0.0, r.sign * s.motors[o].coupling_impulse);
    case ImpulseSink::Repeater: return s.repeaters[o].coupling_impulse;
    case ImpulseSink::RepeaterBacklash:
      return std::max(0.0, r.sign * s.repeaters[o].coupling_impulse);
    default: return 0.0;
  }
}

/// A Coulomb row's range this solve (BlockRow::load_coefficient); other rows keep theirs.
inline void refreshBounds(BlockRow& r, const State& s) {
  if (r.sink != ImpulseSink::JointFriction) return;
  const double bound =
      r.load_coefficient * s.joints[static_cast<std::size_t>(r.owner)].impulses.linear.norm() +
      r.bound_level;
  r.lower = -bound;
  r.upper = bound;
}

}  // namespace sim::dynamics::detail
