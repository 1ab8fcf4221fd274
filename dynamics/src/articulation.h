// Internal header, not API: contacts that see a motor block's link through its mechanism.
#pragma once

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

}  // namespace sim::dynamics::detail
