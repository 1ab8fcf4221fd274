// Motor blocks solved in their rotors' coordinates (motor_block.h: ReducedBlock): the glue
// between a block's plan, the constraint kinds' rows and ReducedMechanism (reduced_mechanism.h,
// where the method is derived). The result is the full block's to rounding (tests/dynamics:
// ReducedMechanism.HingeTreesMatchTheFullCoordinateBlock, Contact.ReducedMechanismMatches...).
#include <algorithm>
#include <cmath>

#include "joints.h"
#include "motor_block.h"
#include "motors.h"

namespace sim::dynamics::detail {

// Links are the joints' followers, joints root first.
void MotorBlocks::planReduced(const Model& model, const Bodies& bodies, Joints& joints, int bi) {
  const BlockPlan& plan = plans[static_cast<std::size_t>(bi)];
  ReducedBlock& rb = reduced[static_cast<std::size_t>(bi)];
  const auto nj = static_cast<int>(plan.joints.size());
  for (const int j : plan.joints) rb.link_body.push_back(joints[j].b);
  auto linkOf = [&rb](int body) {
    const auto at = std::find(rb.link_body.begin(), rb.link_body.end(), body);
    return at == rb.link_body.end() ? -1 : static_cast<int>(at - rb.link_body.begin());
  };
  std::vector<char> placed(static_cast<std::size_t>(nj), 0);
  std::vector<ReducedMechanism::Joint> order;
  for (bool progress = true; progress && static_cast<int>(order.size()) < nj;) {
    progress = false;  // stays false when a leader is outside the links
    for (int k = 0; k < nj; ++k) {
      const JointWork& w = joints[plan.joints[static_cast<std::size_t>(k)]];
      const int leader = bodies.isStatic(w.a) ? -1 : linkOf(w.a);
      // Link k follows joint k.
      if (placed[static_cast<std::size_t>(k)] ||
          (leader >= 0 && !placed[static_cast<std::size_t>(leader)]))
        continue;
      placed[static_cast<std::size_t>(k)] = 1;
      progress = true;
      const int driver = plan.drivers[static_cast<std::size_t>(k)];
      const RepeaterDef* rd =
          driver >= 0 ? nullptr : &model.repeaters[static_cast<std::size_t>(-driver - 2)];
      const int motor = driver >= 0 ? driver : rd->motor;
      const double gear = model.motors[static_cast<std::size_t>(motor)].gear_ratio;
      const double ratio = driver >= 0 ? 1.0 / gear : rd->ratio / gear;
      const int rotor = static_cast<int>(std::find(plan.motors.begin(), plan.motors.end(), motor) -
                                         plan.motors.begin());
      order.push_back({leader, k, rotor, ratio});
      rb.plan_joint.push_back(k);
    }
  }
  if (static_cast<int>(order.size()) < nj) return;
  rb.mechanism.plan(nj, static_cast<int>(plan.motors.size()), std::move(order));
  for (const int j : plan.joints) joints.reduced[static_cast<std::size_t>(j)] = 1;
  rb.slot_of_joint.assign(model.joints.size(), -1);
  for (std::size_t slot = 0; slot < rb.plan_joint.size(); ++slot)
    rb.slot_of_joint[static_cast<std::size_t>(
        plan.joints[static_cast<std::size_t>(rb.plan_joint[slot])])] = static_cast<int>(slot);
  rb.velocity.assign(static_cast<std::size_t>(nj), Vec6::Zero());
  rb.wrench.assign(static_cast<std::size_t>(nj), Vec6::Zero());
  rb.limits.reserve(static_cast<std::size_t>(nj));
  rb.limit_row.reserve(static_cast<std::size_t>(nj));
  rb.planned = true;
}

// This substep's data of a reduced block: the joints' rows, the links' inertias, and the
// characteristics' softness from the inertia each rotor sees (motor.cpp). False when the rows do
// not allow it (a follower's rows do not fix its motion): the block is then solved in full.
bool MotorBlocks::buildReduced(StepContext& ctx, int bi) {
  ReducedBlock& rb = reduced[static_cast<std::size_t>(bi)];
  RowBlock& block = blocks[static_cast<std::size_t>(bi)];
  const BlockPlan& plan = plans[static_cast<std::size_t>(bi)];
  ReducedMechanism& mech = rb.mechanism;
  for (std::size_t slot = 0; slot < rb.plan_joint.size(); ++slot) {
    const JointWork& w = ctx.joints[plan.joints[static_cast<std::size_t>(rb.plan_joint[slot])]];
    Row rows[6];
    double targets[5];
    joint_axis::rows(w, rows, targets);
    const SolverBody& lead = ctx.bodies[w.a];
    Vec6 leader_velocity;
    leader_velocity << lead.v, lead.w;
    mech.setJoint(static_cast<int>(slot), rows, targets, leader_velocity);
  }
  for (std::size_t l = 0; l < rb.link_body.size(); ++l) {
    const int b = rb.link_body[l];
    const Mat3 r = ctx.bodies.orientations[static_cast<std::size_t>(b)].toRotationMatrix();
    mech.setLink(static_cast<int>(l), 1.0 / ctx.bodies[b].inv_mass,
                 r * ctx.bodies.inertia_local[static_cast<std::size_t>(b)] * r.transpose());
  }
  for (std::size_t m = 0; m < plan.motors.size(); ++m)
    mech.setRotorInertia(static_cast<int>(m),
                         ctx.model.motors[static_cast<std::size_t>(plan.motors[m])].rotorInertia());
  if (!mech.build()) return false;
  const auto nm = static_cast<Eigen::Index>(plan.motors.size());
  rb.gamma.resize(nm);
  rb.targets.resize(nm);
  for (Eigen::Index m = 0; m < nm; ++m) {  // characteristic rows are in plan.motors order
    const motor::Characteristic c = motor::characteristic(
        ctx, plan.motors[static_cast<std::size_t>(m)], mech.rotorMobility(static_cast<int>(m)));
    rb.gamma[m] = c.gamma;
    rb.targets[m] = c.target;
  }
  if (!mech.setCharacteristics(rb.gamma)) return false;
  for (Eigen::Index m = 0; m < nm; ++m) {
    BlockRow& row = block.rows[static_cast<std::size_t>(block.first_motor + m)];
    ctx.motors.motor[static_cast<std::size_t>(row.owner)].gamma = rb.gamma[m];
    row.target = rb.targets[m];
    row.compliance = 1.0 / rb.gamma[m];
  }
  rb.limits.clear();
  rb.limit_row.clear();
  for (auto i = static_cast<std::size_t>(block.first_bounded); i < block.rows.size(); ++i) {
    const BlockRow& row = block.rows[i];
    const int slot = rb.slot_of_joint[static_cast<std::size_t>(row.owner)];
    ReducedMechanism::Limit& l = rb.limits.emplace_back();
    l.joint = slot;
    l.sign = row.sign;
    l.target = row.target;
    l.active = row.active;
    l.at_upper = row.at_upper;
    rb.limit_row.push_back(static_cast<int>(i));
  }
  return true;
}

// The joints' hard rows by their rows' directions (as addBlockImpulse), a joint's coupling as
// its axis impulse less its limit's, the characteristics and limits through their rows.
void MotorBlocks::addReducedImpulses(StepContext& ctx, int bi, const ReducedMechanism::Impulses& in,
                                     double* largest) {
  const ReducedBlock& rb = reduced[static_cast<std::size_t>(bi)];
  const RowBlock& block = blocks[static_cast<std::size_t>(bi)];
  const BlockPlan& plan = plans[static_cast<std::size_t>(bi)];
  State& s = ctx.state;
  double most = 0.0;
  for (std::size_t slot = 0; slot < rb.plan_joint.size(); ++slot) {
    const int k = rb.plan_joint[slot];
    const int j = plan.joints[static_cast<std::size_t>(k)];
    const Vec6& lambda = in.joints[slot];
    const Mat6& rows_b = rb.mechanism.rows(static_cast<int>(slot)).rows_b;
    JointImpulses& imp = s.joints[static_cast<std::size_t>(j)].impulses;
    for (int r = 0; r < 5; ++r) {
      if (joint_axis::linearRow(ctx.joints[j].type, r))
        imp.linear += lambda[r] * rows_b.block<1, 3>(r, 0).transpose();
      else
        imp.angular += lambda[r] * rows_b.block<1, 3>(r, 3).transpose();
      most = std::max(most, std::abs(lambda[r]));
    }
    double coupling = lambda[5];
    for (std::size_t l = 0; l < rb.limits.size(); ++l)  // the bounded rows on this axis
      if (rb.limits[l].joint == static_cast<int>(slot))
        coupling -= rb.limits[l].sign * in.limits[static_cast<Eigen::Index>(l)];
    const int driver = plan.drivers[static_cast<std::size_t>(k)];
    (driver >= 0 ? s.motors[static_cast<std::size_t>(driver)].coupling_impulse
                 : s.repeaters[static_cast<std::size_t>(-driver - 2)].coupling_impulse) += coupling;
    most = std::max(most, std::abs(coupling));
  }
  for (Eigen::Index m = 0; m < in.characteristic.size(); ++m) {
    addBlockImpulse(block.rows[static_cast<std::size_t>(block.first_motor + m)],
                    in.characteristic[m], s);
    most = std::max(most, std::abs(in.characteristic[m]));
  }
  for (std::size_t l = 0; l < rb.limit_row.size(); ++l) {
    const double d = in.limits[static_cast<Eigen::Index>(l)];
    if (d != 0.0) addBlockImpulse(block.rows[static_cast<std::size_t>(rb.limit_row[l])], d, s);
    most = std::max(most, std::abs(d));
  }
  if (largest != nullptr) *largest = std::max(*largest, most);
}

// MotorBlocks::solve for a reduced block: the same result to rounding, in the rotors' coordinates.
void MotorBlocks::solveReduced(StepContext& ctx, int bi, double& largest) {
  ReducedBlock& rb = reduced[static_cast<std::size_t>(bi)];
  RowBlock& block = blocks[static_cast<std::size_t>(bi)];
  const BlockPlan& plan = plans[static_cast<std::size_t>(bi)];
  for (std::size_t l = 0; l < rb.link_body.size(); ++l) {
    const SolverBody& b = ctx.bodies[rb.link_body[l]];
    rb.velocity[l] << b.v, b.w;
  }
  const auto nm = static_cast<Eigen::Index>(plan.motors.size());
  rb.rotor_speed.resize(nm);
  rb.targets.resize(nm);
  rb.accumulated.resize(nm);
  for (Eigen::Index m = 0; m < nm; ++m) {
    const BlockRow& row = block.rows[static_cast<std::size_t>(block.first_motor + m)];
    rb.rotor_speed[m] =
        ctx.rotors.speed[static_cast<std::size_t>(plan.motors[static_cast<std::size_t>(m)])];
    rb.targets[m] = row.target;
    rb.accumulated[m] = blockAccumulated(row, ctx.state);
  }
  for (std::size_t l = 0; l < rb.limits.size(); ++l) {
    BlockRow& row = block.rows[static_cast<std::size_t>(rb.limit_row[l])];
    refreshBounds(row, ctx.state);
    ReducedMechanism::Limit& li = rb.limits[l];
    li.active = row.active;
    li.at_upper = row.at_upper;
    li.lower = row.lower;
    li.upper = row.upper;
    li.accumulated = blockAccumulated(row, ctx.state);
  }
  rb.mechanism.solve(rb.velocity, rb.rotor_speed, rb.targets, rb.accumulated, rb.limits,
                     rb.impulses);
  for (std::size_t l = 0; l < rb.link_body.size(); ++l) {
    SolverBody& b = ctx.bodies[rb.link_body[l]];
    b.v = rb.velocity[l].head<3>();
    b.w = rb.velocity[l].tail<3>();
  }
  for (Eigen::Index m = 0; m < nm; ++m)
    ctx.rotors.speed[static_cast<std::size_t>(plan.motors[static_cast<std::size_t>(m)])] =
        rb.rotor_speed[m];
  for (std::size_t l = 0; l < rb.limits.size(); ++l) {
    BlockRow& row = block.rows[static_cast<std::size_t>(rb.limit_row[l])];
    row.active = rb.limits[l].active;
    row.at_upper = rb.limits[l].at_upper;
  }
  addReducedImpulses(ctx, bi, rb.impulses, &largest);
}

}  // namespace sim::dynamics::detail
