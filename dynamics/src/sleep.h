// Internal header, not API: sleeping islands.
//
// Bodies linked by joints or contacts (static bodies do not link) sleep together once every one
// has been slower than the sleep speeds for sleep_time_s and the group rests on a contact, and
// wake together when any of them is awake (an awake body touched a sleeping one). Groups with a
// motor-driven joint never sleep, nor groups hanging on joints alone: slow is not at rest for a
// pendulum near its turning point. A sleeping body is frozen (zero velocity, static for the
// solver); the flags live in BodyState, so sleeping is part of the deterministic state.
#pragma once

#include <vector>

#include "step_context.h"
#include "union_find.h"

namespace sim::dynamics::detail {

class Sleep {
 public:
  void init(int bodies);
  /// Once per step, after the bodies are stored.
  void update(StepContext& ctx);

 private:
  UnionFind groups_;  // scratch, sized once
  std::vector<int> flags_;
};

}  // namespace sim::dynamics::detail
