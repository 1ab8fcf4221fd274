// Pins engine/src/run.cpp: the headless loop's step count, trace sampling and summary. Solver
// accuracy is pinned by tests/dynamics; here the WG-7152 scene is only checked loosely against
// the analytic exponential (1 % of the final speed) to prove the loop wires the model through.
#include <engine/recording.h>
#include <engine/run.h>
#include <engine/scene.h>
#include <engine/session.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace sim::engine {
namespace {

const std::string kWg7152 = std::string(SIMTRAINER_SOURCE_DIR) + "/scenes/wg7152.yaml";

TEST(Run, StepCountCoversTheDuration) {
  EXPECT_EQ(stepCount(10.0, 0.01), 1000u);
  EXPECT_EQ(stepCount(0.3, 0.1), 3u);  // 0.3 / 0.1 = 2.9999999999999996
  EXPECT_EQ(stepCount(0.25, 0.1), 3u);
  EXPECT_EQ(stepCount(0.0, 0.01), 0u);
}

TEST(Run, Wg7152HeadlessWithTrace) {
  const Scene scene = loadScene(kWg7152);
  const std::string path =
      (std::filesystem::temp_directory_path() / "simtrainer_run_test.csv").string();
  RunOptions options;
  options.duration_s = 3.0;
  options.trace_path = path;
  options.trace_every = 10;
  const RunResult result = runHeadless(scene, options);

  EXPECT_FALSE(result.fault.has_value()) << result.fault->describe();
  EXPECT_EQ(result.steps, 300u);
  EXPECT_NEAR(result.sim_time_s, 3.0, 1e-9);
  EXPECT_EQ(result.trace_rows, 31u);  // t = 0, then every 10th step

  // Rows in the file: header + 31.
  std::ifstream in(path);
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  EXPECT_EQ(lines, 32);
  std::remove(path.c_str());

  // Loose physics check (SPEC §2.4): w_L(t) = (w_xx / r)(1 - exp(-t / T)).
  const auto& motor = scene.model.motors[0];
  const double r = motor.gear_ratio;
  const double I_L = 30.833;
  const double T = (I_L + r * r * motor.rotorInertia()) * motor.no_load_speed_radps /
                   (r * r * motor.stall_torque_Nm);
  const double w_max = motor.no_load_speed_radps / r;
  const double expected = w_max * (1.0 - std::exp(-3.0 / T));
  EXPECT_NEAR(result.final_state.joints[0].speed, expected, 0.01 * w_max);

  const std::string summary = formatSummary(scene, result);
  EXPECT_NE(summary.find("steps 300"), std::string::npos) << summary;
  EXPECT_NE(summary.find("joint hinge"), std::string::npos) << summary;
  EXPECT_NE(summary.find("motor drive"), std::string::npos) << summary;
}

TEST(Run, BoxStackStaysStacked) {
  // Contacts are pinned by tests/dynamics; this proves the loader's shapes, materials and contact
  // settings reach the solver: without them the boxes would fall through the ground.
  const Scene scene = loadScene(std::string(SIMTRAINER_SOURCE_DIR) + "/scenes/box_stack.yaml");
  RunOptions options;
  options.duration_s = 2.0;
  const RunResult result = runHeadless(scene, options);
  EXPECT_FALSE(result.fault.has_value()) << result.fault->describe();
  EXPECT_EQ(result.steps, 480u);
  ASSERT_EQ(result.final_state.bodies.size(), 6u);
  for (std::size_t i = 1; i < 6; ++i) {
    const auto& start = scene.model.bodies[i].position_m;
    const auto& end = result.final_state.bodies[i].position_m;
    EXPECT_NEAR(end.z(), start.z(), 1e-3) << scene.model.bodies[i].name;
    EXPECT_LT((end - start).head<2>().norm(), 1e-3) << scene.model.bodies[i].name;
  }
}

// How each step's solves ended (StepReport) reaches both outputs alike: the trace's last six
// columns row by row and the summary's counts and residual statistics. The box stack at 4 sweeps
// and 1e-5 N s has steps of all three ends: at the cap while it settles, by the tolerance, and
// with no work once it sleeps (no rows between sleeping bodies).
TEST(Run, SolverColumnsOfTheTraceAgreeWithTheSummary) {
  const Scene scene =
      loadScene(std::string(SIMTRAINER_SOURCE_DIR) + "/scenes/box_stack.yaml",
                {{"solver.velocity_iterations", "4"}, {"solver.velocity_tolerance", "1e-5"}});
  const std::string path =
      (std::filesystem::temp_directory_path() / "simtrainer_run_solver_columns.csv").string();
  RunOptions options;
  options.duration_s = 2.0;
  options.trace_path = path;
  const RunResult result = runHeadless(scene, options);
  ASSERT_FALSE(result.fault.has_value());

  std::ifstream in(path);
  std::string header;
  ASSERT_TRUE(std::getline(in, header));
  const std::string names =
      ",solver.velocity.end,solver.velocity.iterations,solver.velocity.residual,"
      "solver.position.end,solver.position.iterations,solver.position.residual";
  ASSERT_GE(header.size(), names.size());
  EXPECT_EQ(header.substr(header.size() - names.size()), names);
  std::uint64_t velocity[3] = {}, position[3] = {};
  double velocity_max = 0.0, position_max = 0.0;
  std::uint64_t rows = 0;
  for (std::string line; std::getline(in, line); ++rows) {
    std::vector<double> v;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) v.push_back(std::stod(cell));
    ASSERT_GE(v.size(), 6u);
    const double* solver = v.data() + v.size() - 6;
    if (rows == 0) {  // the initial state: no step yet
      for (int k = 0; k < 6; ++k) EXPECT_EQ(solver[k], 0.0);
      continue;
    }
    const auto vend = static_cast<int>(solver[0]), pend = static_cast<int>(solver[3]);
    ASSERT_TRUE(vend >= 0 && vend <= 2 && pend >= 0 && pend <= 2) << line;
    ++velocity[vend];
    ++position[pend];
    EXPECT_LE(solver[1], 4.0);
    EXPECT_EQ(vend == 2, solver[2] > scene.model.solver.velocity_tolerance) << line;
    velocity_max = std::max(velocity_max, solver[2]);
    position_max = std::max(position_max, solver[5]);
  }
  std::remove(path.c_str());
  ASSERT_EQ(rows, result.steps + 1);
  EXPECT_EQ(velocity[0], result.velocity_solve.no_work);
  EXPECT_EQ(velocity[1], result.velocity_solve.tolerance);
  EXPECT_EQ(velocity[2], result.velocity_solve.cap);
  EXPECT_EQ(velocity[2], result.steps_at_iteration_cap);
  EXPECT_EQ(position[0], result.position_solve.no_work);
  EXPECT_EQ(position[1], result.position_solve.tolerance);
  EXPECT_EQ(position[2], result.position_solve.cap);
  for (int end = 0; end < 3; ++end) {
    EXPECT_GT(velocity[end], 0u) << "velocity end " << end;
    EXPECT_GT(position[end], 0u) << "position end " << end;
  }
  EXPECT_EQ(velocity_max, result.velocity_solve.residual.max());
  EXPECT_EQ(position_max, result.position_solve.residual.max());

  const std::string summary = formatSummary(scene, result);
  EXPECT_NE(
      summary.find(fmt::format("velocity solve: steps ended by tolerance {}, cap {}, no work {}",
                               velocity[1], velocity[2], velocity[0])),
      std::string::npos)
      << summary;
  EXPECT_NE(
      summary.find(fmt::format("position solve: steps ended by tolerance {}, cap {}, no work {}",
                               position[1], position[2], position[0])),
      std::string::npos)
      << summary;
  EXPECT_NE(summary.find(fmt::format("max {:.3g} N s", velocity_max)), std::string::npos)
      << summary;
}

// A NaN reaching a body's velocity mid-session (issue 31: numerical faults) stops the run at that
// step with a message naming the body, the field and the step; the trace gets the faulted row and
// the recording is closed with outcome "fault", readable to its last step.
TEST(Run, NanInABodyVelocityMidSessionStopsAndFlushes) {
  const Scene scene = loadScene(std::string(SIMTRAINER_SOURCE_DIR) + "/scenes/box_stack.yaml");
  const auto dir = std::filesystem::temp_directory_path() / "simtrainer_run_nan";
  std::filesystem::create_directories(dir);
  RunOptions options;
  options.duration_s = 2.0;
  options.trace_path = (dir / "t.csv").string();
  options.record_path = (dir / "r.rec").string();
  constexpr std::uint64_t kInjectAtStep = 120;
  options.before_steps = [&](Session& session) {
    if (session.stepIndex() != kInjectAtStep) return;
    SessionState corrupted = session.state();
    corrupted.dynamics.bodies[3].angular_velocity_radps.y() = std::nan("");
    session.restore(corrupted);
  };
  const RunResult result = runHeadless(scene, options);
  ASSERT_TRUE(result.fault.has_value()) << "the NaN went unnoticed";
  EXPECT_EQ(result.fault->kind, dynamics::Fault::Kind::NonFinite);
  const std::string message = result.fault->describe();
  // The check names the first body in model order whose state is not finite: by the end of the
  // step the NaN has spread through the stack's contacts, so that need not be box3 itself.
  EXPECT_NE(message.find("non-finite value in body "), std::string::npos) << message;
  EXPECT_NE(message.find("at step " + std::to_string(kInjectAtStep + 1)), std::string::npos)
      << message;
  EXPECT_EQ(result.steps, kInjectAtStep + 1) << "the run stops at the faulted step";
  EXPECT_NE(formatSummary(scene, result).find("FAULT: " + message), std::string::npos);

  std::ifstream trace(options.trace_path);
  std::string line, last;
  while (std::getline(trace, line)) last = line;
  EXPECT_NE(last.find("nan"), std::string::npos) << "the faulted row is traced: " << last;
  const Recording rec = readRecording(options.record_path);
  EXPECT_EQ(rec.outcome, "fault");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sim::engine
