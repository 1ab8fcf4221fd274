// Pins engine/app/main.cpp by running the built simtrainer program: its subcommands, exit codes
// (0 ok, 1 run or expectation failed, 2 usage or load error, 3 replay divergence) and one-line
// error messages are its interface.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

const std::string kExe = SIMTRAINER_EXE;
const std::string kSourceDir = SIMTRAINER_SOURCE_DIR;

struct Outcome {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int countLines(const std::string& text) {
  int lines = 0;
  for (char c : text) lines += c == '\n';
  return lines;
}

// Runs simtrainer with `args` (already shell-quoted), capturing stdout and stderr.
Outcome run(const std::string& args) {
  const auto dir = std::filesystem::temp_directory_path();
  const auto out = dir / ("simtrainer_cli_out_" + std::to_string(::getpid()));
  const auto err = dir / ("simtrainer_cli_err_" + std::to_string(::getpid()));
  const std::string command =
      "'" + kExe + "' " + args + " >'" + out.string() + "' 2>'" + err.string() + "'";
  const int status = std::system(command.c_str());
  Outcome outcome;
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  outcome.out = readFile(out);
  outcome.err = readFile(err);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return outcome;
}

TEST(Cli, HelpListsSubcommands) {
  const Outcome o = run("--help");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  for (const char* sub : {"run", "play", "test", "replay", "validate", "devices", "identify"}) {
    EXPECT_NE(o.out.find(sub), std::string::npos) << sub << "\n" << o.out;
  }
}

TEST(Cli, SubcommandHelp) {
  const Outcome o = run("run --help");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  for (const char* flag : {"--headless", "--duration", "--trace", "--trace-every", "--set"}) {
    EXPECT_NE(o.out.find(flag), std::string::npos) << flag << "\n" << o.out;
  }
}

TEST(Cli, BadFlagIsOneLineAndExit2) {
  const Outcome o = run("run --no-such-flag scene.yaml");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(countLines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find("--no-such-flag"), std::string::npos) << o.err;
}

TEST(Cli, NoSubcommandIsExit2) {
  const Outcome o = run("");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(countLines(o.err), 1) << o.err;
}

TEST(Cli, MissingSceneIsExit2) {
  const Outcome o = run("run /nonexistent/scene.yaml --headless");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(countLines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find("/nonexistent/scene.yaml"), std::string::npos) << o.err;
}

TEST(Cli, BadSetIsExit2) {
  const std::string scene = "'" + kSourceDir + "/scenes/wg7152.yaml'";
  Outcome o = run("validate " + scene + " --set motors.nosuch.t_m=0.5");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(countLines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find("motors.nosuch.t_m"), std::string::npos) << o.err;

  o = run("validate " + scene + " --set motors.drive.t_m=fast");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(countLines(o.err), 1) << o.err;
}

TEST(Cli, ValidateScene) {
  const Outcome o =
      run("validate '" + kSourceDir + "/scenes/wg7152.yaml' --set motors.drive.t_m=0.5");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("ok: 1 bodies, 1 joints, 1 motors"), std::string::npos) << o.out;
}

TEST(Cli, BoxStackValidatesAndRuns) {
  const std::string scene = "'" + kSourceDir + "/scenes/box_stack.yaml'";
  Outcome o = run("validate " + scene + " --set materials.wood.friction=0.2");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("ok: 6 bodies, 0 joints, 0 motors"), std::string::npos) << o.out;

  o = run("run " + scene + " --headless --duration 2");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("steps 480"), std::string::npos) << o.out;

  o = run("validate " + scene + " --set bodies.box3.shapes.0.radius=0.3");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(countLines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find("bodies[box3].shapes[0].radius: not used by a box shape"), std::string::npos)
      << o.err;
}

TEST(Cli, DevicesWorksWithoutDevices) {
  const Outcome o = run("devices");
  EXPECT_EQ(o.exit_code, 0) << o.err;
}

TEST(Cli, RunWritesTraceAndSummary) {
  const auto trace = std::filesystem::temp_directory_path() / "simtrainer_cli_trace.csv";
  const Outcome o = run("run '" + kSourceDir + "/scenes/wg7152.yaml' --headless --duration 1 " +
                        "--trace '" + trace.string() + "' --trace-every 10");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("steps 100"), std::string::npos) << o.out;
  const std::string csv = readFile(trace);
  EXPECT_EQ(csv.rfind("time,joint.hinge.angle,joint.hinge.speed,motor.drive.angle,", 0), 0u);
  EXPECT_EQ(countLines(csv), 1 + 11);  // header, t = 0, then every 10th of 100 steps
  std::filesystem::remove(trace);
}

// --threads reaches the step (the summary says so) and changes nothing in the result: the MF-4's
// tracks on the ground give the narrow phase and the contact levels enough work to be shared.
TEST(Cli, ThreadsLeaveTheTraceUnchanged) {
  const std::string scene = "'" + kSourceDir + "/scenes/mf4.yaml'";
  std::string first;
  for (int threads : {1, 2, 3}) {
    const auto trace = std::filesystem::temp_directory_path() /
                       ("simtrainer_cli_threads_" + std::to_string(threads) + ".csv");
    const Outcome o = run("run " + scene + " --headless --duration 0.5 --threads " +
                          std::to_string(threads) + " --trace '" + trace.string() + "'");
    EXPECT_EQ(o.exit_code, 0) << o.err;
    EXPECT_NE(o.out.find("threads " + std::to_string(threads) + "\n"), std::string::npos) << o.out;
    const std::string csv = readFile(trace);
    std::filesystem::remove(trace);
    EXPECT_GT(countLines(csv), 100);
    if (threads == 1) first = csv;
    EXPECT_TRUE(csv == first) << threads << " threads: the trace differs from one thread's";
  }
  const Outcome o = run("run " + scene + " --headless --duration 0.1 --threads 0");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(countLines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find("--threads"), std::string::npos) << o.err;
}

TEST(Cli, NumericalFaultIsExit1AndFlushesTrace) {
  // A rotor speed bound far below the motor's no-load speed makes the per-step check report a
  // runaway fault after a few steps.
  // The result file and the recording are written too, saying how the run ended.
  const auto trace = std::filesystem::temp_directory_path() / "simtrainer_cli_fault.csv";
  const auto result = std::filesystem::temp_directory_path() / "simtrainer_cli_fault.json";
  const auto rec = std::filesystem::temp_directory_path() / "simtrainer_cli_fault.rec";
  const Outcome o = run("run '" + kSourceDir + "/scenes/wg7152.yaml' --headless " +
                        "--set solver.max_motor_speed=1 --trace '" + trace.string() +
                        "' --result '" + result.string() + "' --record '" + rec.string() + "'");
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_NE(o.err.find("numerical fault: runaway value in motor drive.speed"), std::string::npos)
      << o.err;
  EXPECT_GT(countLines(readFile(trace)), 2);
  const std::string json = readFile(result);
  EXPECT_NE(json.find("\"outcome\": \"fault\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"complete\": false"), std::string::npos) << json;
  const std::string recording = readFile(rec);
  EXPECT_NE(recording.find(" fault\n", recording.rfind("\nend ")), std::string::npos) << recording;
  for (const auto& f : {trace, result, rec}) std::filesystem::remove(f);
}

}  // namespace

// --- scenarios, recordings (issue: engine loop and scenarios) ---

std::filesystem::path scratch(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("simtrainer_cli_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(CliScenarios, PlayPassesAndFailsWithExitCodes) {
  const std::string grasp = kSourceDir + "/scenes/scenarios/grasp_lift.scenario.yaml";
  Outcome o = run("play --headless '" + grasp + "'");
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("PASSED"), std::string::npos) << o.out;
  const auto dir = scratch("play");
  const auto failing = dir / "f.scenario.yaml";
  std::ofstream(failing) << "scene: " << kSourceDir << "/scenes/grasp.yaml\nduration: 0.5\n"
                         << "expect:\n  - {name: box flies, signal: body.box.z, min: 1, by: 0.5}\n";
  o = run("play --headless '" + failing.string() + "'");
  EXPECT_EQ(o.exit_code, 1) << o.out << o.err;
  EXPECT_NE(o.out.find("FAIL box flies: body.box.z never >= 1 by 0.5 s"), std::string::npos)
      << o.out;
  o = run("test '" + dir.string() + "' --junit '" + (dir / "j.xml").string() + "'");
  EXPECT_EQ(o.exit_code, 1) << o.out << o.err;
  EXPECT_NE(readFile(dir / "j.xml").find("<failure message=\"expectation failed: box flies"),
            std::string::npos);
  std::ofstream(dir / "g.scenario.yaml") << "scene: missing.yaml\nduration: 1\n";
  o = run("test '" + dir.string() + "'");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  std::filesystem::remove_all(dir);
}

TEST(CliScenarios, ReplayVerifiesAndReportsDivergence) {
  const auto dir = scratch("replay");
  const auto rec = dir / "g.rec";
  Outcome o = run("play --headless '" + kSourceDir +
                  "/scenes/scenarios/grasp_lift.scenario.yaml' --record '" + rec.string() + "'");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  o = run("replay --verify '" + rec.string() + "'");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("every step identical"), std::string::npos) << o.out;
  std::string text = readFile(rec);
  const auto at = text.find("\nh 300 ");
  ASSERT_NE(at, std::string::npos);
  text[at + 7] = text[at + 7] == 'f' ? 'e' : 'f';
  std::ofstream(rec, std::ios::binary) << text;
  o = run("replay --verify '" + rec.string() + "'");
  EXPECT_EQ(o.exit_code, 3) << o.out << o.err;
  EXPECT_NE(o.err.find("replay diverges at step 300"), std::string::npos) << o.err;
  o = run("replay --verify '" + (dir / "none.rec").string() + "'");
  EXPECT_EQ(o.exit_code, 2);
  std::filesystem::remove_all(dir);
}

// Replay holds with seed 000 drive units (current, elastic twist, backlash flanks in the state).
TEST(CliScenarios, ReplayWithDriveUnitsIsBitIdentical) {
  const auto dir = scratch("replay_drive");
  const auto rec = dir / "d.rec";
  Outcome o =
      run("play --headless '" + kSourceDir +
          "/scenes/scenarios/grasp_drive_lift.scenario.yaml' --record '" + rec.string() + "'");
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  o = run("replay --verify '" + rec.string() + "'");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("every step identical"), std::string::npos) << o.out;
  std::filesystem::remove_all(dir);
}

// A recording run killed with SIGKILL leaves a file that replays up to where it stopped.
TEST(CliScenarios, KilledRecordingRunLeavesAReadableFile) {
  const auto dir = scratch("kill");
  const auto rec = dir / "stack.rec";
  const std::string command = "'" + kExe + "' run --headless --duration 100000 '" + kSourceDir +
                              "/scenes/box_stack.yaml' --record '" + rec.string() +
                              "' >/dev/null 2>&1 & pid=$!; sleep 1; kill -9 $pid; wait $pid";
  std::system(command.c_str());
  const std::string text = readFile(rec);
  EXPECT_EQ(text.find("\nend "), std::string::npos) << "the run should have been killed";
  EXPECT_GT(countLines(text), 20);
  const Outcome o = run("replay --verify '" + rec.string() + "'");
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.err.find("no end line"), std::string::npos) << o.err;
  std::filesystem::remove_all(dir);
}

TEST(CliScenarios, InterruptFlushesAndExitsOne) {
  const auto dir = scratch("int");
  const auto rec = dir / "stack.rec";
  const std::string command =
      "'" + kExe + "' run --headless --duration 100000 '" + kSourceDir +
      "/scenes/box_stack.yaml' --record '" + rec.string() +
      "' >/dev/null 2>&1 & pid=$!; sleep 1; kill -INT $pid; wait $pid; exit $?";
  const int status = std::system(command.c_str());
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 1);
  EXPECT_NE(readFile(rec).find(" interrupted\n"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(CliInput, BadMappingFileIsExit2NamingFileLineAndKey) {
  const auto mapping = std::filesystem::temp_directory_path() /
                       ("simtrainer_cli_mapping_" + std::to_string(::getpid()) + ".yaml");
  {
    std::ofstream out(mapping);
    out << "bindings:\n  - {control: grip, key: Space}\n  - {control: lfit, keys: [Down, Up]}\n";
  }
  const std::string scene = "'" + kSourceDir + "/scenes/grasp.yaml'";
  const Outcome o =
      run("run " + scene + " --headless --duration 0.1 --input '" + mapping.string() + "'");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_EQ(countLines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find(mapping.string() + ":3"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("bindings[1].control"), std::string::npos) << o.err;
  std::filesystem::remove(mapping);
}

TEST(CliInput, ValidateChecksAMappingWithoutDevices) {
  const auto mapping = std::filesystem::temp_directory_path() /
                       ("simtrainer_cli_vmapping_" + std::to_string(::getpid()) + ".yaml");
  {
    std::ofstream out(mapping);
    out << "devices: [{name: pad}]\nbindings:\n  - {control: lift, device: pad, axis: lefty, "
           "dead_zone: 0.1}\n"
           "  - {control: grip, device: pad, button: a}\n";
  }
  const std::string scene = "'" + kSourceDir + "/scenes/grasp.yaml'";
  Outcome o = run("validate " + scene + " --input '" + mapping.string() + "'");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("1 devices, 2 bindings"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("lift: pad axis lefty (axis, dead zone 0.1)"), std::string::npos) << o.out;
  {
    std::ofstream out(mapping);
    out << "devices: [{name: pad}]\nbindings:\n  - {control: lift, device: pad, axis: lefty, "
           "dead_zone: 1}\n";
  }
  o = run("validate " + scene + " --input '" + mapping.string() + "'");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find(mapping.string() + ":3: bindings[0].dead_zone"), std::string::npos) << o.err;
  std::filesystem::remove(mapping);
}

TEST(CliInput, ExampleMappingValidates) {
  const Outcome o = run("validate '" + kSourceDir + "/scenes/grasp.yaml' --input '" + kSourceDir +
                        "/docs/examples/grasp.input.yaml'");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("2 devices, 6 bindings"), std::string::npos) << o.out;
}

TEST(CliInput, ControllerDatabaseNeedsInputAndMustBeReadable) {
  const std::string scene = "'" + kSourceDir + "/scenes/grasp.yaml'";
  Outcome o = run("run " + scene + " --headless --gamecontrollerdb /nonexistent/db.txt");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  o = run("run " + scene +
          " --headless --duration 0.1 --input keyboard --gamecontrollerdb /nonexistent/db.txt");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("/nonexistent/db.txt"), std::string::npos) << o.err;
}

TEST(CliInput, DevicesTakesAControllerDatabase) {
  const Outcome o = run("devices --gamecontrollerdb /nonexistent/db.txt");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("/nonexistent/db.txt"), std::string::npos) << o.err;
}

TEST(CliInput, KeyboardLayoutRunsAndIsPrinted) {
  const std::string scene = "'" + kSourceDir + "/scenes/grasp.yaml'";
  const Outcome o = run("run " + scene + " --headless --duration 0.1 --input keyboard");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("grip: Space (button)"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("lift: Down / Up (axis, 2 /s)"), std::string::npos) << o.err;
}

// `identify efficiency`: the program reads the table, fits eq. 27 and prints estimates with
// 95 % intervals; the estimates must fall inside the paper's intervals (seed 000, section 3).
double numberAfter(const std::string& text, const std::string& key) {
  const auto at = text.find(key);
  if (at == std::string::npos) return std::nan("");
  return std::stod(text.substr(at + key.size()));
}

TEST(CliIdentify, EfficiencyTableOfSeed000) {
  const Outcome o = run("identify efficiency '" + kSourceDir +
                        "/data/identification/seed000_table2_efficiency.csv'");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const double kml = numberAfter(o.out, "K_ML = ");
  const double mc = numberAfter(o.out, "M_C  = ");
  EXPECT_GT(kml, 3.204) << o.out;
  EXPECT_LT(kml, 3.328) << o.out;
  EXPECT_GT(mc, 0.04022) << o.out;
  EXPECT_LT(mc, 0.04082) << o.out;
  // The printed intervals bracket the estimates.
  const double kmlLo = numberAfter(o.out, "95% CI [");
  EXPECT_LT(kmlLo, kml) << o.out;
  EXPECT_GT(kmlLo, 3.1) << o.out;
}

Outcome identifyText(const std::string& name, const std::string& csv) {
  const auto file = std::filesystem::temp_directory_path() / ("simtrainer_identify_" + name);
  std::ofstream(file) << csv;
  Outcome o = run("identify efficiency '" + file.string() + "'");
  std::filesystem::remove(file);
  return o;
}

TEST(CliIdentify, BadTablesAreLocated) {
  {
    const Outcome o = identifyText("nocol.csv", "# comment\ntorque_Nm,eta\n0.1,0.4\n");
    EXPECT_EQ(o.exit_code, 2);
    EXPECT_NE(o.err.find("nocol.csv:2: header has no column 'efficiency'"), std::string::npos)
        << o.err;
  }
  {
    const Outcome o =
        identifyText("nan.csv", "torque_Nm,efficiency\n0.1,0.46\n0.2,abc\n0.3,0.7\n0.4,0.76\n");
    EXPECT_EQ(o.exit_code, 2);
    EXPECT_NE(o.err.find("nan.csv:3: column 2 'efficiency': 'abc' is not a finite number"),
              std::string::npos)
        << o.err;
  }
  {
    const Outcome o = identifyText("few.csv", "torque_Nm,efficiency\n0.1,0.46\n0.2,0.66\n");
    EXPECT_EQ(o.exit_code, 2);
    EXPECT_NE(o.err.find("few.csv: 2 data rows; need at least 3"), std::string::npos) << o.err;
  }
  {
    const Outcome o = identifyText("short.csv", "torque_Nm,efficiency\n0.1,0.46\n0.2\n0.3,0.7\n");
    EXPECT_EQ(o.exit_code, 2);
    EXPECT_NE(o.err.find("short.csv:3: 1 cells, the header has 2"), std::string::npos) << o.err;
  }
  {
    const Outcome o = identifyText("zero.csv", "torque_Nm,efficiency\n0,0.46\n0.2,0.66\n0.3,0.7\n");
    EXPECT_EQ(o.exit_code, 2);
    EXPECT_NE(o.err.find("zero.csv:2: column 1 'torque_Nm'"), std::string::npos) << o.err;
  }
  {
    const Outcome o = run("identify efficiency /nonexistent/table.csv");
    EXPECT_EQ(o.exit_code, 2);
    EXPECT_NE(o.err.find("/nonexistent/table.csv: cannot open"), std::string::npos) << o.err;
  }
  {
    const Outcome o = run("identify");  // a usage error: the kind of data must be given
    EXPECT_EQ(o.exit_code, 2);
  }
}

// A URDF robot on its own: `validate ROBOT.urdf` loads it (its package:// meshes found beside it),
// and `--package-path` is accepted; a bad URDF is one located line and exit 2.
TEST(CliUrdf, ValidateRobotAndBadRobot) {
  const std::string gripper =
      "'" + kSourceDir + "/assets/robots/sim_gripper_description/urdf/sim_gripper.urdf'";
  Outcome o = run("validate " + gripper + " --package-path '" + kSourceDir + "/assets/robots'");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("ok: 3 bodies, 2 joints"), std::string::npos) << o.out;

  const auto bad = std::filesystem::temp_directory_path() /
                   ("simtrainer_cli_bad_" + std::to_string(::getpid()) + ".urdf");
  std::ofstream(bad) << "<robot name=\"r\">\n  <link name=\"a\"/>\n"
                        "  <joint name=\"j\" type=\"fixed\">\n    <parent link=\"nobody\"/>\n"
                        "    <child link=\"a\"/>\n  </joint>\n</robot>\n";
  o = run("validate '" + bad.string() + "'");
  std::filesystem::remove(bad);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(countLines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find(bad.string() + ":4: joint[j].parent: no link named \"nobody\""),
            std::string::npos)
      << o.err;
}
