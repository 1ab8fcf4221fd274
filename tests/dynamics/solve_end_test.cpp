// Pins how each solve of a step ends (StepReport::velocity_end, position_end, their iterations
// and residuals; docs/dynamics.md, "How each solve ends"): a pendulum that converges ends both
// solves by their tolerances, the same pendulum allowed one sweep and one pass ends both at the
// cap, and a body with nothing to solve against ends both with no work; the velocity-change stop
// (SolverSettings::velocity_change_tolerance) ends a solve exactly when no velocity moved by more
// than its tolerance over two sweeps.
#include <algorithm>

#include <dynamics/samples.h>
#include <dynamics/simulator.h>

#include <gtest/gtest.h>

namespace sim::dynamics {
namespace {

TEST(SolveEnd, AConvergingPendulumEndsBothSolvesByTheTolerance) {
  // One hinge outside any block: its five rows are solved exactly in a sweep, so the second
  // sweep changes nothing beyond round-off; the position passes remove 80 % of the error each.
  Model m = samples::pendulum(1.0, 1.0, 1e-3);
  m.solver.velocity_iterations = 20;
  m.solver.velocity_tolerance = 1e-10;
  m.solver.position_iterations = 30;
  m.solver.position_tolerance_m = 1e-9;
  Simulator sim(m);
  State s = sim.initialState();
  for (int n = 0; n < 1000; ++n) {
    const StepReport r = sim.step(s);
    ASSERT_EQ(r.fault.kind, Fault::Kind::None);
    ASSERT_EQ(r.velocity_end, SolveEnd::Tolerance)
        << "step " << n << " residual " << r.velocity_residual;
    ASSERT_LE(r.velocity_residual, m.solver.velocity_tolerance);
    ASSERT_GE(r.velocity_iterations, 1);
    ASSERT_LT(r.velocity_iterations, m.solver.velocity_iterations);
    ASSERT_EQ(r.position_end, SolveEnd::Tolerance) << "step " << n << " error " << r.position_error;
    ASSERT_LE(r.position_error, m.solver.position_tolerance_m);
    ASSERT_LT(r.position_iterations, m.solver.position_iterations);
  }
}

TEST(SolveEnd, OneSweepAndOnePassEndAtTheCap) {
  // Gravity needs the hinge's impulse every step and the joint drifts every step, so one sweep
  // and one pass with zero tolerances are always cut off by the cap, with what they changed as
  // the residuals.
  Model m = samples::pendulum(1.0, 1.0, 1e-3);
  m.solver.velocity_iterations = 1;
  m.solver.velocity_tolerance = 0.0;
  m.solver.position_iterations = 1;
  m.solver.position_tolerance_m = 0.0;
  Simulator sim(m);
  State s = sim.initialState();
  for (int n = 0; n < 1000; ++n) {
    const StepReport r = sim.step(s);
    ASSERT_EQ(r.fault.kind, Fault::Kind::None);
    ASSERT_EQ(r.velocity_end, SolveEnd::IterationCap) << "step " << n;
    ASSERT_EQ(r.velocity_iterations, 1);
    ASSERT_GT(r.velocity_residual, 0.0);
    ASSERT_EQ(r.velocity_residual_kind, RowKind::Joint);  // the hinge is the only row
    ASSERT_EQ(r.position_end, SolveEnd::IterationCap) << "step " << n;
    ASSERT_GT(r.position_error, 0.0);
  }
}

TEST(SolveEnd, AWorldWithNothingToSolveEndsWithNoWork) {
  // One falling body: no shapes (so no contacts), no joints, motors or repeaters.
  Model m;
  m.solver.time_step_s = 0.01;
  BodyDef b;
  b.name = "ball";
  b.mass_kg = 1.0;
  b.inertia_kgm2 = samples::boxInertia(1.0, Vec3(0.1, 0.1, 0.1));
  m.bodies.push_back(b);
  Simulator sim(m);
  State s = sim.initialState();
  for (int n = 0; n < 100; ++n) {
    const StepReport r = sim.step(s);
    ASSERT_EQ(r.velocity_end, SolveEnd::NoWork);
    ASSERT_EQ(r.position_end, SolveEnd::NoWork);
    ASSERT_EQ(r.velocity_iterations, 0);
    ASSERT_EQ(r.position_iterations, 0);
    ASSERT_EQ(r.velocity_residual, 0.0);
    ASSERT_EQ(r.position_error, 0.0);
    ASSERT_EQ(r.velocity_residual_kind, RowKind::None);
  }
  // The step still ran: free fall, v = g t after 1 s.
  EXPECT_NEAR(s.bodies[0].linear_velocity_mps.z(), m.gravity_mps2.z() * 1.0, 1e-12);
}

/// The largest difference of any body's linear or angular velocity between two states.
double largestVelocityDifference(const State& a, const State& b) {
  double d = 0.0;
  for (std::size_t i = 0; i < a.bodies.size(); ++i) {
    d = std::max(
        d,
        (a.bodies[i].linear_velocity_mps - b.bodies[i].linear_velocity_mps).cwiseAbs().maxCoeff());
    d = std::max(d, (a.bodies[i].angular_velocity_radps - b.bodies[i].angular_velocity_radps)
                        .cwiseAbs()
                        .maxCoeff());
  }
  return d;
}

TEST(SolveEnd, TheVelocityChangeStopEndsWhereNoVelocityMovesMoreThanItsToleranceOverTwoSweeps) {
  // A hanging 30-link chain converges slowly under Gauss-Seidel: with the impulse tolerance at 0
  // it always meets the 500-sweep cap. The stop on velocities ends it at the first sweep k whose
  // velocities lie within the tolerance of sweep k - 2's. Checked from outside: the same step
  // cut off by the cap at k and at k - 2 sweeps (stored velocities are the solve's) gives
  // velocities within the tolerance, at k - 1 and k - 3 not.
  const double tolerance = 1e-5;  // m/s, rad/s
  Model base = samples::chain(30, 1e-3, 500, 2);
  base.solver.velocity_tolerance = 0.0;
  State warm;
  {
    Simulator settle(base);
    warm = settle.initialState();
    for (int n = 0; n < 200; ++n) settle.step(warm);  // swinging, warm-started
  }
  const auto stepWith = [&](int cap, double change_tolerance, StepReport* report = nullptr) {
    Model m = base;
    m.solver.velocity_iterations = cap;
    m.solver.velocity_change_tolerance = change_tolerance;
    Simulator sim(m);
    State s = warm;
    const StepReport r = sim.step(s);
    if (report) *report = r;
    return s;
  };
  StepReport off;
  stepWith(500, 0.0, &off);
  EXPECT_EQ(off.velocity_end, SolveEnd::IterationCap);
  StepReport on;
  const State stopped = stepWith(500, tolerance, &on);
  ASSERT_EQ(on.velocity_end, SolveEnd::Tolerance);
  const int k = on.velocity_iterations;
  ASSERT_GT(k, 4);
  ASSERT_LT(k, 500);
  EXPECT_EQ(largestVelocityDifference(stepWith(k, 0.0), stopped), 0.0);  // the same sweeps
  EXPECT_LE(largestVelocityDifference(stepWith(k, 0.0), stepWith(k - 2, 0.0)), tolerance);
  EXPECT_GT(largestVelocityDifference(stepWith(k - 1, 0.0), stepWith(k - 3, 0.0)), tolerance);
  // A tighter stop sweeps longer.
  StepReport tighter;
  stepWith(500, tolerance / 100, &tighter);
  EXPECT_GT(tighter.velocity_iterations, k);
}

TEST(SolveEnd, NamesForTheSummary) {
  EXPECT_STREQ(solveEndName(SolveEnd::NoWork), "no work");
  EXPECT_STREQ(solveEndName(SolveEnd::Tolerance), "tolerance");
  EXPECT_STREQ(solveEndName(SolveEnd::IterationCap), "cap");
  EXPECT_STREQ(rowKindName(RowKind::MotorBlock), "motor block");
}

}  // namespace
}  // namespace sim::dynamics
