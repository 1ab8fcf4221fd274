// Pins engine/src/trace.cpp: column names and order, full-precision rows, scheme block outputs
// as columns (`trace: {scheme: [...]}`).
#include <dynamics/model.h>
#include <dynamics/state.h>
#include <engine/run.h>
#include <engine/scene.h>
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

// A hinged link whose scheme doubles the time and holds a constant; the scene traces both blocks
// (the constant first: the listed order, not the scheme's).
const std::string kTracedScheme = R"(solver: {time_step: 0.01}
frame_rate: 100
bodies:
  - {name: link, mass: 2.0, box: [1.0, 0.2, 0.1], position: [1, 0, 0]}
joints:
  - {name: hinge, type: hinge, parent: world, child: link, anchor: [0, 0, 0], axis: [0, 1, 0]}
scheme:
  blocks:
    - {name: twice, type: gain, input: time, k: 2}
    - {name: quarter, type: constant, value: 0.25}
trace:
  scheme: [quarter, twice]
)";

TEST(Trace, SchemeBlockOutputsAreColumns) {
  const Scene scene = loadSceneFromString(kTracedScheme, "traced.yaml");
  const auto path =
      (std::filesystem::temp_directory_path() / "simtrainer_trace_scheme.csv").string();
  RunOptions options;
  options.duration_s = 0.05;
  options.trace_path = path;
  (void)runHeadless(scene, options);
  std::istringstream lines(readFile(path));
  std::string header;
  std::getline(lines, header);
  const std::vector<std::string> columns = traceColumns(scene);
  ASSERT_EQ(columns.size(), traceColumns(scene.model).size() + 2);
  EXPECT_EQ(columns[columns.size() - 2], "scheme.quarter");
  EXPECT_EQ(columns.back(), "scheme.twice");
  EXPECT_TRUE(header.ends_with(",solver.position.residual,scheme.quarter,scheme.twice")) << header;
  int rows = 0;
  for (std::string row; std::getline(lines, row); ++rows) {
    std::vector<double> values;
    std::istringstream cells(row);
    for (std::string cell; std::getline(cells, cell, ',');) values.push_back(std::stod(cell));
    ASSERT_EQ(values.size(), columns.size());
    const double time = values.front();
    EXPECT_EQ(values[values.size() - 2], 0.25);
    // The evaluation that drove the step ran at its start, 0.01 s before the row's time; the
    // initial row has the output before any evaluation (0).
    EXPECT_NEAR(values.back(), rows == 0 ? 0.0 : 2.0 * (time - 0.01), 1e-12) << "row " << rows;
  }
  EXPECT_EQ(rows, 6);  // the initial row and 5 steps
  std::filesystem::remove(path);
}

TEST(Trace, TracedBlockErrorsNameTheLine) {
  auto error = [](const std::string& list) -> std::string {
    try {
      (void)loadSceneFromString(kTracedScheme.substr(0, kTracedScheme.find("trace:")) +
                                    "trace:\n  scheme: " + list + "\n",
                                "traced.yaml");
    } catch (const SceneError& e) {
      return e.what();
    }
    return "(loaded)";
  };
  EXPECT_EQ(
      error("[twice, nosuch]"),
      "traced.yaml:12: trace.scheme[1]: no scheme block named \"nosuch\" (known: twice, quarter)");
  EXPECT_EQ(error("[twice, twice]"),
            "traced.yaml:12: trace.scheme[1]: block \"twice\" is listed twice");
  EXPECT_EQ(error("twice"),
            "traced.yaml:12: trace.scheme: expected a list of scheme block names, got \"twice\"");
}

}  // namespace
}  // namespace sim::engine
