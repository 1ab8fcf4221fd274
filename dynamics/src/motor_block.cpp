// Motor blocks (motor_block.h): grouping, the rows gathered from the constraint kinds, and the
// exact block solve with its active set.
#include "motor_block.h"

#include <algorithm>
#include <cmath>

#include "joints.h"
#include "motors.h"
#include "union_find.h"

namespace sim::dynamics::detail {

namespace {

/// x += d y, written out: GCC leaves Eigen's 3-vector expression uninlined in long loops.
inline void addScaled(Vec3& x, double d, const Vec3& y) {
  x[0] += d * y[0];
  x[1] += d * y[1];
  x[2] += d * y[2];
}

}  // namespace

void MotorBlocks::plan(const Model& model, const Bodies& bodies, Joints& joints,
                       const Motors& motors) {
  const int nb = bodies.world;
  const int nm = static_cast<int>(model.motors.size());
  UnionFind groups;
  groups.reset(nb + nm);
  auto join = [&](int rotor_node, int joint) {
    for (int body : {joints[joint].a, joints[joint].b}) {
      if (!bodies.isStatic(body)) groups.join(body, rotor_node);
    }
  };
  for (int m = 0; m < nm; ++m) join(nb + m, model.motors[static_cast<std::size_t>(m)].joint);
  for (const RepeaterDef& r : model.repeaters) join(nb + r.motor, r.joint);

  joints.in_block.assign(model.joints.size(), 0);
  std::vector<int> block_of_root(static_cast<std::size_t>(nb + nm), -1);
  for (int m = 0; m < nm; ++m) {
    const int root = groups.find(nb + m);
    if (block_of_root[static_cast<std::size_t>(root)] < 0) {
      block_of_root[static_cast<std::size_t>(root)] = static_cast<int>(plans.size());
      plans.emplace_back();
    }
    BlockPlan& plan =
        plans[static_cast<std::size_t>(block_of_root[static_cast<std::size_t>(root)])];
    plan.motors.push_back(m);
    plan.joints.push_back(model.motors[static_cast<std::size_t>(m)].joint);
    plan.drivers.push_back(m);
    for (std::size_t i = 0; i < model.repeaters.size(); ++i) {
      if (model.repeaters[i].motor != m) continue;
      plan.joints.push_back(model.repeaters[i].joint);
      plan.drivers.push_back(-static_cast<int>(i) - 2);
    }
  }
  blocks.assign(plans.size(), RowBlock{});
  for (std::size_t b = 0; b < plans.size(); ++b) {
    for (int j : plans[b].joints) joints.in_block[static_cast<std::size_t>(j)] = 1;
    blocks[b].rows.reserve(plans[b].motors.size() + 8 * plans[b].joints.size());
  }
  // Which blocks have the rotor-tree structure (BlockPlan::rotor_tree).
  for (BlockPlan& plan : plans) {
    plan.rotor_tree = std::all_of(plan.motors.begin(), plan.motors.end(), [&motors](int m) {
      return motors.motor[static_cast<std::size_t>(m)].drive == nullptr;
    });
    std::vector<int> leader(static_cast<std::size_t>(nb), -2);  // -2: no joint of the block
                                                                // leads to it; -1: static
    for (const int j : plan.joints) {
      const JointWork& w = joints[j];
      const bool slider_or_hinge = w.type == JointType::Hinge || w.type == JointType::Prismatic;
      if (!slider_or_hinge || bodies.isStatic(w.b) || leader[static_cast<std::size_t>(w.b)] != -2)
        plan.rotor_tree = false;
      else
        leader[static_cast<std::size_t>(w.b)] = bodies.isStatic(w.a) ? -1 : w.a;
    }
    for (const int j : plan.joints) {
      int at = joints[j].b;
      for (int hops = 0; plan.rotor_tree && at >= 0; ++hops) {
        if (at == nb || leader[static_cast<std::size_t>(at)] == -2 ||
            hops > static_cast<int>(plan.joints.size()))
          plan.rotor_tree = false;  // not a follower, or a loop
        else
          at = leader[static_cast<std::size_t>(at)];
      }
    }
  }
  reduced.assign(plans.size(), ReducedBlock{});
  joints.reduced.assign(model.joints.size(), 0);
  for (std::size_t bi = 0; bi < plans.size(); ++bi)
    if (plans[bi].rotor_tree) planReduced(model, bodies, joints, static_cast<int>(bi));
}

void MotorBlocks::build(StepContext& ctx) {
  for (std::size_t bi = 0; bi < blocks.size(); ++bi) {
    const BlockPlan& plan = plans[bi];
    RowBlock& block = blocks[bi];
    // A block in rotor coordinates has only its characteristics and limits as rows: the joints'
    // hard rows and couplings are held by construction (ReducedBlock).
    auto addRows = [&](bool reduced_rows) {
      block.clear();
      block.skip_moves = reduced_rows;
      for (int m : plan.motors) motor::addCharacteristicRow(ctx, block, m);
      for (std::size_t k = 0; k < plan.joints.size(); ++k) {
        const int j = plan.joints[k];
        const int driver = plan.drivers[k];
        if (!reduced_rows) {  // (in rotor coordinates these hold by construction)
          const JointWork& w = ctx.joints[j];
          Row rows[6];
          double targets[5];
          joint_axis::rows(w, rows, targets);
          for (int r = 0; r < 5; ++r) {
            block
                .add(ctx.bodies.solver, w.a, w.b, rows[r],
                     joint_axis::linearRow(w.type, r) ? ImpulseSink::JointLinear
                                                      : ImpulseSink::JointAngular,
                     j)
                .target = targets[r];
          }
          if (driver >= 0)
            motor::addCouplingRows(ctx, block, driver, -1);
          else
            motor::addCouplingRows(ctx, block,
                                   ctx.motors.repeater[static_cast<std::size_t>(-driver - 2)].motor,
                                   -driver - 2);
        }
        limit::addBlockRow(ctx, block, j);
        joint_friction::addBlockRow(ctx, block, j);
      }
      block.order();
    };
    reduced[bi].ready = false;
    if (reduced[bi].planned) {
      addRows(true);
      reduced[bi].ready = buildReduced(ctx, static_cast<int>(bi));
      if (reduced[bi].ready) continue;
    }
    addRows(false);
    block.assemble(ctx.rotors.inv_inertia);
    // The characteristics' softness needs the inertia each rotor sees through the block's
    // equality rows (motor.cpp): the factor of those rows yields it on the way.
    block.factorEqualities();
    for (Eigen::Index i = block.first_motor; i < block.first_bounded; ++i) {
      const int m = block.rows[static_cast<std::size_t>(i)].owner;
      const motor::Characteristic c = motor::characteristic(ctx, m, block.constrainedMobility(i));
      ctx.motors.motor[static_cast<std::size_t>(m)].gamma = c.gamma;
      block.rows[static_cast<std::size_t>(i)].target = c.target;
      block.addMotorCompliance(i, 1.0 / c.gamma);
    }
    block.factorMotorsAndLimits();
  }
  closed.assign(blocks.size(), 0);
  all_closed = false;
}

// One block Gauss-Seidel update: the block's rows solved together, with a few active-set passes
// so that limits and backlash flanks push but never pull and Coulomb rows stay within their bound.
void MotorBlocks::solve(StepContext& ctx, int bi, double& largest) {
  articulation.flush();
  if (reduced[static_cast<std::size_t>(bi)].ready) {
    solveReduced(ctx, bi, largest);
    return;
  }
  RowBlock& block = blocks[static_cast<std::size_t>(bi)];
  State& s = ctx.state;
  std::vector<double>& rotor_speed = ctx.rotors.speed;
  const auto n = static_cast<Eigen::Index>(block.rows.size());
  auto accumulated = [&s](const BlockRow& r) { return blockAccumulated(r, s); };
  for (auto i = static_cast<std::size_t>(block.first_bounded); i < block.rows.size(); ++i)
    refreshBounds(block.rows[i], s);
  // Velocity error of every row (the negative is the right-hand side).
  for (Eigen::Index i = 0; i < n; ++i) {
    const BlockRow& r = block.rows[static_cast<std::size_t>(i)];
    double c = r.velocity(ctx.bodies[r.a], ctx.bodies[r.b]) - r.target;
    if (r.rotor >= 0) c += r.rotor_coef * rotor_speed[static_cast<std::size_t>(r.rotor)];
    if (r.compliance != 0.0) c += r.compliance * accumulated(r);
    block.predicted[i] = c;
  }
  constexpr int kMaxActiveSetPasses = 4;
  for (int pass = 0;; ++pass) {
    // An inactive bounded row holds its bound: its change is known (toBound: a released limit
    // gives back the impulse it still holds from the warm start, a slipping Coulomb row goes to
    // its bound), and the active rows are solved with it. Without this a limit released while
    // holding kept pushing through the warm start for good (a driven joint's limit is not in the
    // sweeps): a gripper's jaws leaving their open stops each kept the stop's force as a phantom
    // squeeze, twice the force one motor can give two jaws.
    bool any_released = false;
    for (Eigen::Index i = 0; i < n; ++i) {
      const BlockRow& r = block.rows[static_cast<std::size_t>(i)];
      block.released[i] =
          r.bounded && !r.active ? toBound(r.at_upper, r.lower, r.upper, accumulated(r)) : 0.0;
      any_released = any_released || block.released[i] != 0.0;
    }
    for (Eigen::Index i = 0; i < n; ++i) {
      double rhs = block.predicted[i];
      if (any_released) rhs += block.k_full.col(i).dot(block.released);
      block.residual[i] = block.rows[static_cast<std::size_t>(i)].active ? -rhs : 0.0;
    }
    block.ldlt.solve(block.residual, block.delta);
    if (any_released) {
      for (Eigen::Index i = 0; i < n; ++i)
        if (!block.rows[static_cast<std::size_t>(i)].active) block.delta[i] = block.released[i];
    }
    bool changed = false;
    for (Eigen::Index i = 0; i < n; ++i) {
      BlockRow& r = block.rows[static_cast<std::size_t>(i)];
      if (!r.bounded) continue;
      const double held = accumulated(r) + block.delta[i];
      if (r.active && (held < r.lower || held > r.upper)) {
        r.active = false;  // beyond a bound: hold that bound
        r.at_upper = held > r.upper;
        changed = true;
      } else if (!r.active) {
        // Engage when the bound held pushes the row past its target (a limit or flank would be
        // violated, a Coulomb row would reverse the motion it opposes).
        const double speed = block.predicted[i] + block.k_full.col(i).dot(block.delta);
        if (r.lower < r.upper && (r.at_upper ? speed > 0.0 : speed < 0.0)) {
          r.active = true;
          changed = true;
        }
      }
    }
    if (!changed) break;
    if (pass == kMaxActiveSetPasses) {
      for (Eigen::Index i = 0; i < n; ++i) {
        const BlockRow& r = block.rows[static_cast<std::size_t>(i)];
        if (!r.bounded) continue;
        const double acc = accumulated(r);
        block.delta[i] =
            r.active ? std::clamp(block.delta[i], r.lower - acc, r.upper - acc) : block.released[i];
      }
      break;
    }
    block.factorBounded();
  }
  for (Eigen::Index i = 0; i < n; ++i) {
    const BlockRow& r = block.rows[static_cast<std::size_t>(i)];
    const double d = block.delta[i];
    if (d == 0.0) continue;
    SolverBody& a = ctx.bodies[r.a];
    SolverBody& b = ctx.bodies[r.b];
    addScaled(a.v, d, r.dv_a);
    addScaled(a.w, d, r.dw_a);
    addScaled(b.v, d, r.dv_b);
    addScaled(b.w, d, r.dw_b);
    if (r.rotor >= 0) rotor_speed[static_cast<std::size_t>(r.rotor)] += d * r.rotor_dw;
    addBlockImpulse(r, d, s);
    largest = std::max(largest, std::abs(d));
  }
}

}  // namespace sim::dynamics::detail
