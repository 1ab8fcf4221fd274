// Errors that point at the cause (issue 34): a scenario's `set:` key, its missing scene, anything
// scheduled after its end, YAML tabs and unclosed brackets, two scenarios of one run with the
// same name, a --set path through an included file, a negative mass. Each names the file, line and
// key the author has to change.
#include <engine/scenario.h>
#include <engine/scene.h>

#include <gtest/gtest.h>

#include "scratch_dir.h"

#include <string>
#include <vector>

namespace sim::engine {
namespace {

const std::string kSourceDir = SIMTRAINER_SOURCE_DIR;

class AuthoringErrorsTest : public testing::ScratchDirTest {
 protected:
  AuthoringErrorsTest() : ScratchDirTest("simtrainer_authoring_") {}
};

struct Located {
  std::string file, key, message;
  int line = 0;
};

template <class Load>
Located errorOf(Load load) {
  try {
    load();
  } catch (const SceneError& e) {
    return {e.file(), e.key(), e.message(), e.line()};
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST_F(AuthoringErrorsTest, ScenarioMistakesNameTheScenarioLine) {
  const std::string grasp = "scene: " + kSourceDir + "/scenes/grasp.yaml\nduration: 1\n";
  struct Case {
    std::string text, key, message;
    int line;
  };
  const std::vector<Case> cases = {
      {grasp + "set:\n  motors.nosuch.t_m: 0.5\n", "set.motors.nosuch.t_m",
       "no item named \"nosuch\" in \"motors\"", 4},
      {"scene: nosuch.yaml\nduration: 1\n", "scene", "no scene file", 1},
      {grasp + "timeline:\n  - {at: 5, control: lift, set: 1}\n", "timeline[0].at",
       "at 5 s is after the scenario ends (1 s)", 4},
      {grasp + "faults:\n  - {at: 2, motor: jaws, fault: reversed}\n", "faults[0].at",
       "after the scenario ends", 4},
      {grasp + "changes:\n  - {at: 1.5, set: motors.jaws.t_m, value: 0.1}\n", "changes[0].at",
       "after the scenario ends", 4},
  };
  for (const Case& c : cases) {
    const std::string path = write("bad.scenario.yaml", c.text);
    const Located e = errorOf([&] { loadScenario(path); });
    EXPECT_EQ(e.file, path) << c.text;
    EXPECT_EQ(e.line, c.line) << e.message;
    EXPECT_EQ(e.key, c.key) << e.message;
    EXPECT_NE(e.message.find(c.message), std::string::npos) << e.message;
  }
}

TEST(AuthoringErrors, YamlSyntaxErrorsPointAtTheCause) {
  // A tab in an indentation: named, at its line, whatever yaml-cpp says.
  Located e = errorOf(
      [] { loadSceneFromString("name: x\nbodies:\n\t- {name: a, static: true}\n", "tab.yaml"); });
  EXPECT_EQ(e.file, "tab.yaml");
  EXPECT_EQ(e.line, 3);
  EXPECT_NE(e.message.find("a tab in the indentation (column 1)"), std::string::npos) << e.message;
  // An unclosed brace is noticed on the next line: the message names the line that opened it.
  e = errorOf([] {
    loadSceneFromString(
        "name: x\nbodies:\n  - {name: a, static: true\n  - {name: b, static: true}\n",
        "brace.yaml");
  });
  EXPECT_EQ(e.line, 4);
  EXPECT_NE(e.message.find("(column "), std::string::npos) << e.message;
  EXPECT_NE(e.message.find(": `  - {name: b, static: true}`)"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("line 3 opens a `{` or `[` it does not close"), std::string::npos)
      << e.message;
}

// A --set path that exists nowhere is blamed on the file where most of it exists: the robot
// file's motors, not "no key motors in the scene".
TEST_F(AuthoringErrorsTest, SetKeyThroughAnIncludedFileIsBlamedWhereThePathStops) {
  const std::string robot = write(
      "robot.yaml",
      "bodies:\n  - {name: link, mass: 1, box: [1, 1, 1], position: [0, 0, 1]}\n"
      "joints:\n  - {name: hinge, type: hinge, parent: world, child: link, anchor: [0, 0, 1]}\n"
      "motors:\n  - {name: drive, joint: hinge, Mp: 0.2, w_xx: 5, t_m: 0.1, r: 50}\n");
  const std::string scene = write("scene.yaml", "include:\n  - file: robot.yaml\n");
  Located e = errorOf([&] { loadScene(scene, {parseOverride("motors.drvie.t_m=0.5")}); });
  EXPECT_EQ(e.file, robot);
  EXPECT_EQ(e.key, "--set motors.drvie.t_m");
  EXPECT_EQ(e.message, "no item named \"drvie\" in \"motors\"");
  e = errorOf([&] { loadScene(scene, {parseOverride("motors.drive.t_m.x=0.5")}); });
  EXPECT_EQ(e.file, robot);
  EXPECT_EQ(e.message, "\"motors.drive.t_m\" is a value, not a section");
  // A path of neither file: the scene file's error, as before.
  e = errorOf([&] { loadScene(scene, {parseOverride("nosuch.x=1")}); });
  EXPECT_EQ(e.file, scene);
  EXPECT_EQ(e.message, "no key \"nosuch\" in the scene");
  // And the right path applies to the included file.
  EXPECT_EQ(
      loadScene(scene, {parseOverride("motors.drive.t_m=0.5")}).model.motors[0].time_constant_s,
      0.5);
}

// A negative mass makes the inertia computed from it (from `box`, or from the shapes) negative
// too: one error, at the mass the author wrote, none about an `inertia` never written.
TEST(AuthoringErrors, NegativeMassIsOneErrorNotTwo) {
  for (const std::string inertia :
       {"box: [1, 0.2, 0.1]", "shapes: [{type: sphere, radius: 0.1}]"}) {
    SCOPED_TRACE(inertia);
    try {
      loadSceneFromString("bodies:\n  - name: link\n    mass: -2.0\n    " + inertia + "\n",
                          "neg.yaml");
      ADD_FAILURE() << "no error";
    } catch (const SceneInvalid& e) {
      ASSERT_EQ(e.errors().size(), 1u) << e.what();
      EXPECT_EQ(e.errors()[0].key(), "bodies[link].mass");
      EXPECT_EQ(e.errors()[0].line(), 3);
    }
  }
  // A written inertia that is wrong as well is still reported.
  try {
    loadSceneFromString("bodies:\n  - name: link\n    mass: -2.0\n    inertia: [-1, 1, 1]\n",
                        "neg.yaml");
    ADD_FAILURE() << "no error";
  } catch (const SceneInvalid& e) {
    ASSERT_EQ(e.errors().size(), 2u) << e.what();
    EXPECT_EQ(e.errors()[1].key(), "bodies[link].inertia");
  }
}

TEST_F(AuthoringErrorsTest, TwoScenariosOfOneRunMayNotShareAName) {
  const std::string body =
      "name: same\nscene: " + kSourceDir + "/scenes/grasp.yaml\nduration: 0.1\n";
  const std::string a = write("a.scenario.yaml", body), b = write("b.scenario.yaml", body);
  const auto results = runScenarios({a, b}, 1, {});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].load_error.empty()) << results[0].load_error;
  EXPECT_NE(results[1].load_error.find("the scenario name \"same\" is also that of " + a),
            std::string::npos)
      << results[1].load_error;
  EXPECT_FALSE(results[1].passed());
}

}  // namespace
}  // namespace sim::engine
