// Articulated contacts (articulation.h): the mechanism's response to a wrench on a block's link.
#include "articulation.h"

#include <algorithm>

#include "contacts.h"
#include "joints.h"
#include "motor_block.h"
#include "step_context.h"

namespace sim::dynamics::detail {

void Articulation::prepare(StepContext& ctx) {
  ctx_ = &ctx;
  MotorBlocks& mb = ctx.blocks;
  const std::size_t nb = ctx.bodies.solver.size();
  block_of_body_.assign(nb, -1);
  links_.resize(nb);
  moves_.resize(mb.blocks.size());
  for (BlockMoves& m : moves_) m.built = m.pending_valid = m.limits_valid = false;
  for (std::size_t bi = 0; bi < mb.blocks.size(); ++bi) {
    if (mb.reduced[bi].ready) {  // its rows do not name every link
      for (const int body : mb.reduced[bi].link_body) {
        block_of_body_[static_cast<std::size_t>(body)] = static_cast<int>(bi);
        links_[static_cast<std::size_t>(body)].computed = false;
      }
      continue;
    }
    for (const BlockRow& r : mb.blocks[bi].rows) {
      for (const int body : {r.a, r.b}) {
        if (ctx.bodies[body].inv_mass > 0.0) {
          block_of_body_[static_cast<std::size_t>(body)] = static_cast<int>(bi);
          links_[static_cast<std::size_t>(body)].computed = false;
        }
      }
    }
  }
  mb.closed.assign(mb.blocks.size(), 0);
  mb.all_closed = false;
  any_pending_ = false;
}

void Articulation::articulateContacts(StepContext& ctx) {
  MotorBlocks& mb = ctx.blocks;
  ContactSolver& contacts = ctx.contacts;
  if (!ctx.model.solver.articulated_contacts || mb.blocks.empty() ||
      !contacts.wouldArticulate(*this))
    return;
  double ignored = 0.0;
  for (std::size_t bi = 0; bi < mb.blocks.size(); ++bi)
    mb.solve(ctx, static_cast<int>(bi), ignored);
  contacts.articulate(ctx.bodies.solver, *this);
  const std::vector<int>& block_of = block_of_body_;
  mb.closed.assign(mb.blocks.size(), 1);
  for (std::size_t body = 0; body < ctx.bodies.solver.size(); ++body)
    if (block_of[body] >= 0 && contacts.rigidlyTouchesBody(static_cast<int>(body)))
      mb.closed[static_cast<std::size_t>(block_of[body])] = 0;
  auto open = [&](int body) {
    if (block_of[static_cast<std::size_t>(body)] >= 0)
      mb.closed[static_cast<std::size_t>(block_of[static_cast<std::size_t>(body)])] = 0;
  };
  const Joints& joints = ctx.joints;
  for (std::size_t j = 0; j < joints.work.size(); ++j) {
    if (joints.in_block[j]) continue;
    open(joints.work[j].a);
    open(joints.work[j].b);
  }
  for (const int j : joints.with_axis_rows) {  // driven joints' friction and viscous rows
    open(joints[j].a);
    open(joints[j].b);
  }
  for (std::size_t bi = 0; bi < mb.blocks.size(); ++bi)
    for (const BlockRow& r : mb.blocks[bi].rows)
      if (r.rotor >= 0 && contacts.rigidlyTouchesRotor(r.rotor)) mb.closed[bi] = 0;
  mb.all_closed = std::all_of(mb.closed.begin(), mb.closed.end(), [](char c) { return c != 0; });
}

bool Articulation::blockStillHolds(StepContext& ctx, int bi) {
  const RowBlock& block = ctx.blocks.blocks[static_cast<std::size_t>(bi)];
  const State& s = ctx.state;
  for (std::size_t i = 0; i < block.rows.size(); ++i) {
    const BlockRow& r = block.rows[i];
    if (!r.bounded) continue;
    const double pending = pendingImpulse(bi, static_cast<Eigen::Index>(i));
    double held = blockAccumulated(r, s) + pending;
    if (r.sink == ImpulseSink::MotorBacklash)
      held = std::max(
          0.0, r.sign * s.motors[static_cast<std::size_t>(r.owner)].coupling_impulse + pending);
    else if (r.sink == ImpulseSink::RepeaterBacklash)
      held = std::max(
          0.0, r.sign * s.repeaters[static_cast<std::size_t>(r.owner)].coupling_impulse + pending);
    if (r.active) {
      if (held < r.lower || held > r.upper) return false;
      continue;
    }
    if (r.at_upper ? held < r.upper : held > r.lower) return false;
    double c = r.velocity(ctx.bodies[r.a], ctx.bodies[r.b]) - r.target;
    if (r.rotor >= 0) c += r.rotor_coef * ctx.rotors.speed[static_cast<std::size_t>(r.rotor)];
    if (r.at_upper ? c > 0.0 : c < 0.0) return false;
  }
  return true;
}

const Mat6* Articulation::response(int body) {
  if (block_of_body_[static_cast<std::size_t>(body)] < 0) return nullptr;
  if (!links_[static_cast<std::size_t>(body)].computed) compute(body);
  return &links_[static_cast<std::size_t>(body)].self;
}

void Articulation::buildMoves(int bi) {
  MotorBlocks& mb = ctx_->blocks;
  const RowBlock& block = mb.blocks[static_cast<std::size_t>(bi)];
  BlockMoves& bm = moves_[static_cast<std::size_t>(bi)];
  const auto n = static_cast<Eigen::Index>(block.rows.size());
  bm.bodies.clear();
  bm.rotors.clear();
  if (ReducedBlock& rb = mb.reduced[static_cast<std::size_t>(bi)]; rb.ready) {
    // The responses come from the mechanism's rotor coordinates, with the limits active now.
    bm.bodies = rb.link_body;
    bm.rotors = mb.plans[static_cast<std::size_t>(bi)].motors;
    for (std::size_t l = 0; l < rb.limits.size(); ++l)
      rb.limits[l].active = block.rows[static_cast<std::size_t>(rb.limit_row[l])].active;
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
    const BlockRow& r = block.rows[static_cast<std::size_t>(i)];
    for (int side = 0; side < 2; ++side) {
      const int b = side == 0 ? r.a : r.b;
      if (ctx_->bodies[b].inv_mass == 0.0) continue;
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
// and rotor by its entry of `others` / `rotors`. The block's row impulses that go with it are
// found when they are needed (pendingImpulses).
void Articulation::compute(int body) {
  MotorBlocks& mb = ctx_->blocks;
  const int bi = block_of_body_[static_cast<std::size_t>(body)];
  const RowBlock& block = mb.blocks[static_cast<std::size_t>(bi)];
  if (!moves_[static_cast<std::size_t>(bi)].built) buildMoves(bi);
  const BlockMoves& bm = moves_[static_cast<std::size_t>(bi)];
  LinkResponse& out = links_[static_cast<std::size_t>(body)];
  const auto own = static_cast<std::size_t>(std::find(bm.bodies.begin(), bm.bodies.end(), body) -
                                            bm.bodies.begin());
  out.others.resize(bm.bodies.size() - 1);
  out.rotors.resize(bm.rotors.size());
  if (ReducedBlock& rb = mb.reduced[static_cast<std::size_t>(bi)]; rb.ready) {
    ReducedMechanism& mech = rb.mechanism;
    mech.respondTo(static_cast<int>(own));
    out.self = mech.linkResponse(static_cast<int>(own));
    for (std::size_t k = 0, o = 0; k < bm.bodies.size(); ++k)
      if (k != own) out.others[o++] = {bm.bodies[k], mech.linkResponse(static_cast<int>(k))};
    for (std::size_t k = 0; k < bm.rotors.size(); ++k)
      out.rotors[k] = {bm.rotors[k], mech.rotorResponse(static_cast<int>(k))};
  } else {
    // Λ = -K^-1 J_link M_link^-1 over the active rows: the block's impulses per unit wrench.
    const SolverBody& link = ctx_->bodies[body];
    const auto n = static_cast<Eigen::Index>(block.rows.size());
    auto& impulses = out.impulses;
    impulses = bm.body_moves[own].transpose();
    for (Eigen::Index i = 0; i < n; ++i)
      if (!block.rows[static_cast<std::size_t>(i)].active) impulses.row(i).setZero();
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
void Articulation::propagate(int body, const Vec6& wrench, std::vector<SolverBody>& bodies,
                             std::vector<double>& rotor_speed) {
  LinkResponse& link = links_[static_cast<std::size_t>(body)];
  for (const auto& [b, m] : link.others) {
    const Vec6 d = m * wrench;
    bodies[static_cast<std::size_t>(b)].v += d.head<3>();
    bodies[static_cast<std::size_t>(b)].w += d.tail<3>();
  }
  for (const auto& [r, v] : link.rotors) rotor_speed[static_cast<std::size_t>(r)] += v.dot(wrench);
  link.pending += wrench;
  BlockMoves& bm = moves_[static_cast<std::size_t>(block_of_body_[static_cast<std::size_t>(body)])];
  bm.pending_valid = false;
  bm.limits_valid = false;
  any_pending_ = true;
}

// The block rows' impulses that the links' pending wrenches imply: the sum over the links of
// their responses' impulses per unit wrench (LinkResponse::impulses) times the wrench.
const Eigen::VectorXd& Articulation::pendingImpulses(int bi) {
  BlockMoves& bm = moves_[static_cast<std::size_t>(bi)];
  if (bm.pending_valid) return bm.pending;
  const auto n =
      static_cast<Eigen::Index>(ctx_->blocks.blocks[static_cast<std::size_t>(bi)].rows.size());
  bm.pending.setZero(n);
  const bool any = std::any_of(bm.bodies.begin(), bm.bodies.end(), [this](int body) {
    const LinkResponse& link = links_[static_cast<std::size_t>(body)];
    return link.computed && !link.pending.isZero(0.0);
  });
  for (const int body : bm.bodies) {
    const LinkResponse& link = links_[static_cast<std::size_t>(body)];
    if (any && link.computed) bm.pending.noalias() += link.impulses * link.pending;
  }
  bm.pending_valid = true;
  return bm.pending;
}

void Articulation::flush() {
  if (!any_pending_) return;
  MotorBlocks& mb = ctx_->blocks;
  for (std::size_t bi = 0; bi < moves_.size(); ++bi) {
    if (!moves_[bi].built) continue;
    if (ReducedBlock& rb = mb.reduced[bi]; rb.ready) {
      rb.mechanism.wrenchImpulses(pendingWrenches(static_cast<int>(bi)), rb.impulses);
      mb.addReducedImpulses(*ctx_, static_cast<int>(bi), rb.impulses, nullptr);
      for (const int body : moves_[bi].bodies)
        links_[static_cast<std::size_t>(body)].pending.setZero();
      moves_[bi].limit_pending.setZero();
      moves_[bi].limits_valid = true;
      continue;
    }
    const Eigen::VectorXd& add = pendingImpulses(static_cast<int>(bi));
    const RowBlock& block = mb.blocks[bi];
    for (Eigen::Index i = 0; i < add.size(); ++i)
      if (add[i] != 0.0)
        addBlockImpulse(block.rows[static_cast<std::size_t>(i)], add[i], ctx_->state);
    for (const int body : moves_[bi].bodies)
      links_[static_cast<std::size_t>(body)].pending.setZero();
    moves_[bi].pending.setZero();
  }
  any_pending_ = false;
}

// The wrenches waiting on the links of reduced block `bi`, per link slot.
const std::vector<Vec6>& Articulation::pendingWrenches(int bi) {
  ReducedBlock& rb = ctx_->blocks.reduced[static_cast<std::size_t>(bi)];
  for (std::size_t l = 0; l < rb.link_body.size(); ++l) {
    const LinkResponse& link = links_[static_cast<std::size_t>(rb.link_body[l])];
    rb.wrench[l] = link.computed ? link.pending : Vec6::Zero();
  }
  return rb.wrench;
}

// Row i's impulse still waiting in the pending wrenches of the links of block `bi`.
double Articulation::pendingImpulse(int bi, Eigen::Index i) {
  BlockMoves& bm = moves_[static_cast<std::size_t>(bi)];
  if (!any_pending_ || !bm.built) return 0.0;
  if (ReducedBlock& rb = ctx_->blocks.reduced[static_cast<std::size_t>(bi)]; rb.ready) {
    // Its rows are the characteristics, then the limits (blockStillHolds asks for those), whose
    // impulses come without recovering the joints'.
    const RowBlock& block = ctx_->blocks.blocks[static_cast<std::size_t>(bi)];
    if (i < block.first_bounded) {
      rb.mechanism.wrenchImpulses(pendingWrenches(bi), rb.impulses);
      return rb.impulses.characteristic[i - block.first_motor];
    }
    if (!bm.limits_valid) {
      rb.mechanism.wrenchLimitImpulses(pendingWrenches(bi), bm.limit_pending);
      bm.limits_valid = true;
    }
    return bm.limit_pending[i - block.first_bounded];
  }
  return pendingImpulses(bi)[i];
}

}  // namespace sim::dynamics::detail
