// Internal header, not API: for tests only. The solver takes one path per idea; where that path
// is a second method for something the general path also computes, a test holds the two against
// each other, and this is how it reaches the general one.
#pragma once

#include <dynamics/simulator.h>

namespace sim::dynamics::detail {

struct SimulatorTesting {
  /// Solves every motor block of `sim` in full coordinates (RowBlock: every row of the block an
  /// unknown), never in its rotors' coordinates (ReducedMechanism), which the solver takes for a
  /// tree of hinges and sliders on a static base. Call before the first step.
  static void solveBlocksInFullCoordinates(Simulator& sim);
};

}  // namespace sim::dynamics::detail
