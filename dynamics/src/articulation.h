// Internal header, not API: contacts that see a motor block's link through its whole mechanism.
//
// A contact row on a block's link (a jaw) normally sees the link's own mass, 0.1 kg, while the
// mechanism behind it weighs hundreds of kilograms through r^2 I_m: the sweeps then bounce
// between the contact and the block and converge slowly. With SolverSettings::
// articulated_contacts, each substep gives every link touched by a contact with a body outside
// all blocks the mechanism's response to a unit wrench on it, from the block's factor (full
// coordinates) or its rotor-space inertia (reduced): the link's 6 x 6 velocity response
// Phi = M^-1 - M^-1 J^T K^-1 J M^-1, the other links' and the rotors' responses, and the block
// impulses that go with them. The contact rows use Phi for their effective masses and the link's
// velocity changes; after each manifold its net wrench moves the rest of the mechanism at once,
// and its block impulses are added to the state when something reads them, so motor loads and
// joint reactions stay exact. A limit that engages or releases later in the substep leaves a
// response stale; the block's own solve, still run each sweep, then corrects the velocities, so a
// stale response only slows convergence. A block that only its own rows and articulated contacts
// act on is skipped in the sweeps while its rows hold with the same active set.
#pragma once

#include <Eigen/Dense>

#include <utility>
#include <vector>

#include "rows.h"

namespace sim::dynamics::detail {

/// Bodies that are links of a mechanism solved as one block (RowBlock). An impulse on such a link
/// moves the whole mechanism: its velocity response is not the link's own inverse mass but the
/// block's constrained one (for a jaw on a geared lift, the rotor's reflected inertia). Contact
/// rows that see the link through this response converge in a few sweeps where rows that see
/// the bare link (0.1 kg against hundreds of kilograms reflected) need many.
class BlockArticulation {
 public:
  /// The block `body` is a link of, or -1.
  virtual int blockOf(int body) const = 0;
  bool isLink(int body) const { return blockOf(body) >= 0; }
  /// (v; w) change of `body` per unit (force; torque) on it while its block's rows hold, or
  /// nullptr when the body is not a link of a block.
  virtual const Mat6* response(int body) = 0;
  /// Applies the rest of the mechanism's response to `wrench` on `body` (the other links, the
  /// rotors and the block's impulses; the body's own velocity has already taken response*wrench).
  virtual void propagate(int body, const Vec6& wrench, std::vector<SolverBody>& bodies,
                         std::vector<double>& rotor_speed) = 0;

 protected:
  ~BlockArticulation() = default;
};

struct StepContext;

/// The motor blocks' links as contacts see them (see the top of this file).
class Articulation final : public BlockArticulation {
 public:
  int blockOf(int body) const override { return block_of_body_[static_cast<std::size_t>(body)]; }
  const Mat6* response(int body) override;
  void propagate(int body, const Vec6& wrench, std::vector<SolverBody>& bodies,
                 std::vector<double>& rotor_speed) override;

  /// Which bodies are links of a block. Called once the blocks are built each substep.
  void prepare(StepContext& ctx);
  /// Makes the blocks hold, sets up the articulated contact rows, and finds the blocks that
  /// nothing else acts on (MotorBlocks::closed). Called before the velocity sweeps.
  void articulateContacts(StepContext& ctx);
  /// A closed block's rows all still hold with the same active set: no active bounded row leaves
  /// its range (a limit pulls), none inactive has left its bound, none inactive is violated.
  bool blockStillHolds(StepContext& ctx, int bi);
  /// Adds the impulses the links' pending wrenches imply to the state.
  void flush();

 private:
  struct LinkResponse {
    bool computed = false;
    Mat6 self;                                 // the link's own (v; w) per (f; tau)
    std::vector<std::pair<int, Mat6>> others;  // the other links of the block
    std::vector<std::pair<int, Vec6>> rotors;  // rotor speed per unit wrench
    // Block rows' impulses per unit wrench (a block in full coordinates; a reduced block finds
    // them from its snapshot when needed).
    Eigen::Matrix<double, Eigen::Dynamic, 6, Eigen::RowMajor> impulses;
    Vec6 pending = Vec6::Zero();  // wrench whose block impulses are not yet added
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

  void compute(int body);
  void buildMoves(int bi);
  const Eigen::VectorXd& pendingImpulses(int bi);
  double pendingImpulse(int bi, Eigen::Index i);
  const std::vector<Vec6>& pendingWrenches(int bi);

  StepContext* ctx_ = nullptr;       // the step running (set by prepare)
  std::vector<int> block_of_body_;   // per solver body: its block, or -1
  std::vector<BlockMoves> moves_;    // per block
  std::vector<LinkResponse> links_;  // per solver body
  bool any_pending_ = false;
};

}  // namespace sim::dynamics::detail
