// Pins how each solve of a step ends (StepReport::velocity_end, position_end, their iterations
// and residuals; docs/dynamics.md, "How each solve ends"): a pendulum that converges ends both
// solves by their tolerances, the same pendulum allowed one sweep and one pass ends both at the
// cap, and a body with nothing to solve against ends both with no work.
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

TEST(SolveEnd, NamesForTheSummary) {
  EXPECT_STREQ(solveEndName(SolveEnd::NoWork), "no work");
  EXPECT_STREQ(solveEndName(SolveEnd::Tolerance), "tolerance");
  EXPECT_STREQ(solveEndName(SolveEnd::IterationCap), "cap");
  EXPECT_STREQ(rowKindName(RowKind::MotorBlock), "motor block");
}

}  // namespace
}  // namespace sim::dynamics
