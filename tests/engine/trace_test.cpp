// Pins engine/src/trace.cpp: column names and order, full-precision rows.
#include <dynamics/model.h>
#include <dynamics/state.h>
#include <engine/trace.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace sim::engine {
namespace {

dynamics::Model twoBodyModel() {
  dynamics::Model model;
  model.bodies.resize(2);
  model.bodies[0].name = "base";
  model.bodies[1].name = "arm";
  model.joints.resize(1);
  model.joints[0].name = "elbow";
  model.motors.resize(1);
  model.motors[0].name = "drive";
  return model;
}

dynamics::State stateFor(const dynamics::Model& model) {
  dynamics::State state;
  state.bodies.resize(model.bodies.size());
  state.joints.resize(model.joints.size());
  state.motors.resize(model.motors.size());
  return state;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(Trace, ColumnsInDocumentedOrder) {
  const auto columns = traceColumns(twoBodyModel());
  const std::vector<std::string> expected{"time",
                                          "joint.elbow.angle",
                                          "joint.elbow.speed",
                                          "motor.drive.angle",
                                          "motor.drive.speed",
                                          "motor.drive.voltage",
                                          "motor.drive.torque",
                                          "body.base.x",
                                          "body.base.y",
                                          "body.base.z",
                                          "body.base.qw",
                                          "body.base.qx",
                                          "body.base.qy",
                                          "body.base.qz",
                                          "body.arm.x",
                                          "body.arm.y",
                                          "body.arm.z",
                                          "body.arm.qw",
                                          "body.arm.qx",
                                          "body.arm.qy",
                                          "body.arm.qz",
                                          "solver.velocity.end",
                                          "solver.velocity.iterations",
                                          "solver.velocity.residual",
                                          "solver.position.end",
                                          "solver.position.iterations",
                                          "solver.position.residual"};
  EXPECT_EQ(columns, expected);
}

TEST(Trace, WritesHeaderAndFullPrecisionRows) {
  const auto model = twoBodyModel();
  auto state = stateFor(model);
  state.time_s = 0.01;
  state.joints[0].position = 0.1;  // not exactly representable: needs 17 digits to round-trip
  state.joints[0].speed = -1.0 / 3.0;
  state.motors[0].voltage = 1.0;
  state.bodies[1].position_m = {1.0, 2.0, 3.0};
  dynamics::StepReport report;
  report.velocity_end = dynamics::SolveEnd::IterationCap;
  report.velocity_iterations = 20;
  report.velocity_residual = 1.0 / 7.0;
  report.position_end = dynamics::SolveEnd::Tolerance;
  report.position_iterations = 3;
  report.position_error = 2e-9;

  const std::string path =
      (std::filesystem::temp_directory_path() / "simtrainer_trace_test.csv").string();
  {
    TraceWriter writer(path, model);
    writer.write(state, report);
    writer.flush();
    EXPECT_EQ(writer.rows(), 1u);
  }
  const std::string text = readFile(path);
  std::remove(path.c_str());

  std::istringstream lines(text);
  std::string header, row, extra;
  ASSERT_TRUE(std::getline(lines, header));
  ASSERT_TRUE(std::getline(lines, row));
  EXPECT_FALSE(std::getline(lines, extra));
  EXPECT_EQ(header.rfind("time,joint.elbow.angle,joint.elbow.speed,motor.drive.angle,", 0), 0u);
  EXPECT_EQ(row.rfind("0.01,0.10000000000000001,-0.33333333333333331,0,0,1,0,", 0), 0u) << row;
  // The solver's columns last: end codes (2 cap, 1 tolerance), iterations, residuals.
  const std::string tail = ",2,20,0.14285714285714285,1,3,2.0000000000000001e-09";
  EXPECT_EQ(row.substr(row.size() - tail.size()), tail) << row;

  // Every value parses back to the same double.
  std::vector<double> values;
  std::istringstream cells(row);
  for (std::string cell; std::getline(cells, cell, ',');) values.push_back(std::stod(cell));
  EXPECT_EQ(values, traceRow(state, report));
  EXPECT_EQ(values.size(), traceColumns(model).size());
}

TEST(Trace, UnwritablePathThrowsNamingIt) {
  try {
    TraceWriter writer("/nonexistent-dir/trace.csv", twoBodyModel());
    ADD_FAILURE() << "no error";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/trace.csv"), std::string::npos);
  }
}

}  // namespace
}  // namespace sim::engine
