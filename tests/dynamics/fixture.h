// The dynamics tests' shared fixture: stepping that fails the test on any fault report (a
// non-finite or runaway value, StepReport::fault), as MuJoCo's test/fixture.h fails a test on any
// warning. A test that steps a simulator and does not look at the report itself steps through
// these, so a solver change that makes a scene blow up cannot pass silently because the quantity
// a test checks happened to stay in range. Tests of the fault report itself call Simulator::step.
#pragma once

#include <dynamics/simulator.h>
#include <dynamics/state.h>

#include <gtest/gtest.h>

namespace sim::dynamics {

/// One step; a fault report fails the calling test (non-fatally: the test goes on to say what
/// else is wrong). Returns the report for the test's own checks.
inline StepReport checkedStep(Simulator& sim, State& state) {
  StepReport report = sim.step(state);
  EXPECT_EQ(report.fault.kind, Fault::Kind::None) << report.fault.describe();
  return report;
}

/// `steps` steps, stopping at the first fault report, which fails the calling test.
inline void checkedSteps(Simulator& sim, State& state, int steps) {
  for (int n = 0; n < steps; ++n)
    if (checkedStep(sim, state).fault.kind != Fault::Kind::None) return;
}

}  // namespace sim::dynamics
