// Pins scenarios (engine/include/engine/scenario.h, docs/scenarios.md): timeline semantics,
// expectations that pass and fail with a reason, load errors, parallel regression runs with
// JUnit output, and determinism of playback.
#include <engine/scenario.h>
#include <engine/session.h>

#include <gtest/gtest.h>

#include "scratch_dir.h"

#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

namespace sim::engine {
namespace {

const std::string kSourceDir = SIMTRAINER_SOURCE_DIR;
const std::string kGraspScene = kSourceDir + "/scenes/grasp.yaml";

// A scratch directory per test, removed at the end.
class ScenarioTest : public testing::ScratchDirTest {
 protected:
  ScenarioTest() : ScratchDirTest("simtrainer_scenario_") {}
};

std::string scenario(const std::string& body) {
  return "scene: " + kGraspScene + "\nduration: 1.0\n" + body;
}

TEST_F(ScenarioTest, TimelineSetRampPulseHold) {
  const Scenario s = loadScenario(write("t.scenario.yaml", scenario(R"(timeline:
  - {at: 0.1, control: lift, set: 0.5}
  - {at: 0.2, control: lift, ramp: -0.5, over: 0.4}
  - {at: 0.3, control: lift, pulse: 1, for: 0.1}
  - {at: 0.8, control: lift, hold: 0.9, for: 0.1}
)")));
  const int lift = s.scene.pult.find("lift");
  EXPECT_DOUBLE_EQ(timelineValue(s, lift, 0.05), 0.0);       // initial
  EXPECT_DOUBLE_EQ(timelineValue(s, lift, 0.1), 0.5);        // set
  EXPECT_DOUBLE_EQ(timelineValue(s, lift, 0.25), 0.375);     // ramp 0.5 -> -0.5, 1/8 of the way
  EXPECT_DOUBLE_EQ(timelineValue(s, lift, 0.35), 1.0);       // pulse on top of the ramp
  EXPECT_NEAR(timelineValue(s, lift, 0.45), -0.125, 1e-15);  // pulse over: back to the ramp
  EXPECT_DOUBLE_EQ(timelineValue(s, lift, 0.7), -0.5);       // ramp done: holds its target
  EXPECT_DOUBLE_EQ(timelineValue(s, lift, 0.85), 0.9);       // hold
  EXPECT_DOUBLE_EQ(timelineValue(s, lift, 0.95), 0.0);       // released: back to initial
}

TEST_F(ScenarioTest, ExpectationsPassAndFailWithReasons) {
  const Scenario s = loadScenario(write("e.scenario.yaml", scenario(R"(timeline:
  - {at: 0.0, control: lift, set: 1}
expect:
  - {name: rises, signal: body.palm.z, min: 0.2, by: 0.9}
  - {name: too fast, signal: body.palm.z, min: 0.5, at: 0.5}
  - {name: stays low, signal: body.palm.z, max: 0.22, during: [0, 0.5]}
  - {signal: body.box.z, min: 0.049, max: 0.051}
)")));
  const ScenarioResult r = playScenario(s);
  ASSERT_EQ(r.expectations.size(), 4u);
  EXPECT_TRUE(r.expectations[0].passed) << r.expectations[0].detail;
  EXPECT_FALSE(r.expectations[1].passed);
  EXPECT_NE(r.expectations[1].detail.find("body.palm.z = "), std::string::npos)
      << r.expectations[1].detail;
  EXPECT_NE(r.expectations[1].detail.find("at t = 0.5 s, expected >= 0.5"), std::string::npos)
      << r.expectations[1].detail;
  EXPECT_TRUE(r.expectations[2].passed) << r.expectations[2].detail;
  EXPECT_TRUE(r.expectations[3].passed) << r.expectations[3].detail;
  EXPECT_EQ(r.expectations[3].name, "body.box.z in [0.049, 0.051] at the end");
  EXPECT_FALSE(r.passed());
  EXPECT_NE(r.failureSummary().find("expectation failed: too fast"), std::string::npos);
}

TEST_F(ScenarioTest, LoadErrorsNameFileLineAndKey) {
  const std::string path = write("bad.scenario.yaml", scenario(R"(timeline:
  - {at: 0.1, control: throttle, set: 1}
)"));
  try {
    loadScenario(path);
    FAIL() << "no error";
  } catch (const SceneError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.line(), 4);
    EXPECT_EQ(e.key(), "timeline[0].control");
    EXPECT_NE(std::string(e.what()).find("no pult control \"throttle\""), std::string::npos)
        << e.what();
  }
  const std::string late = write("late.scenario.yaml", scenario(R"(expect:
  - {signal: time, min: 0, at: 2}
)"));
  EXPECT_THROW(loadScenario(late), SceneError);
}

TEST_F(ScenarioTest, RegressionRunReportsFailuresInJUnit) {
  const std::string good =
      write("a_good.scenario.yaml", scenario("expect:\n  - {signal: time, min: 0.99}\n"));
  const std::string bad = write(
      "b_bad.scenario.yaml", scenario("expect:\n  - {name: impossible, signal: time, min: 5}\n"));
  const std::string broken = write("c_broken.scenario.yaml", "scene: nowhere.yaml\nduration: 1\n");
  const auto files = findScenarios({dir_.string()});
  ASSERT_EQ(files, (std::vector<std::string>{good, bad, broken}));
  std::size_t calls = 0;
  const auto results =
      runScenarios(files, 2, [&](const ScenarioResult&, std::size_t done, std::size_t total) {
        ++calls;
        EXPECT_EQ(done, calls);
        EXPECT_EQ(total, 3u);
      });
  EXPECT_EQ(calls, 3u);
  EXPECT_TRUE(results[0].passed());
  EXPECT_FALSE(results[1].passed());
  EXPECT_TRUE(results[1].loaded);
  EXPECT_FALSE(results[2].loaded);
  EXPECT_NE(results[2].load_error.find("nowhere.yaml"), std::string::npos) << results[2].load_error;
  const std::string xml = junitXml(results, 1.0);
  EXPECT_NE(xml.find("tests=\"3\" failures=\"1\" errors=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<failure message=\"expectation failed: impossible: time = 1 at t = 1 s, "
                     "expected &gt;= 5\""),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<error message="), std::string::npos) << xml;
}

// Session::contactsOf (what contact sensors and scoring rules read): for every body, exactly the
// indices of the contacts() that touch it, in contact order, following the state step by step;
// nothing for an index that is not a body.
TEST(SessionContacts, ContactsOfABodyAreItsContactsInOrder) {
  Session session(loadScene(kGraspScene));
  std::size_t listed = 0;
  for (int n = 0; n < 240; ++n) {
    session.step();
    if (n % 60 != 59) continue;
    const std::vector<dynamics::ContactReport>& contacts = session.contacts();
    ASSERT_FALSE(contacts.empty()) << "step " << n;
    const int bodies = static_cast<int>(session.scene().model.bodies.size());
    for (int b = 0; b < bodies; ++b) {
      std::vector<int> expected;
      for (std::size_t k = 0; k < contacts.size(); ++k)
        if (contacts[k].body_a == b || contacts[k].body_b == b)
          expected.push_back(static_cast<int>(k));
      const std::span<const int> of = session.contactsOf(b);
      EXPECT_EQ(std::vector<int>(of.begin(), of.end()), expected) << "body " << b << ", step " << n;
      listed += expected.size();
    }
    EXPECT_TRUE(session.contactsOf(-1).empty());
    EXPECT_TRUE(session.contactsOf(bodies).empty());
  }
  EXPECT_GT(listed, 0u);
}

TEST(ScenarioDeterminism, SameFinalHashSerialAndParallel) {
  const std::string file = kSourceDir + "/scenes/scenarios/grasp_lift.scenario.yaml";
  const auto serial = runScenarios({file, file}, 1, {});
  const auto parallel = runScenarios({file, file}, 2, {});
  ASSERT_TRUE(serial[0].passed()) << serial[0].failureSummary();
  EXPECT_EQ(serial[0].final_hash, serial[1].final_hash);
  EXPECT_EQ(serial[0].final_hash, parallel[0].final_hash);
  EXPECT_EQ(serial[0].final_hash, parallel[1].final_hash);
}

}  // namespace
}  // namespace sim::engine
