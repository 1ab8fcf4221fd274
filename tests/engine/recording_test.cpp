// Pins record and replay (engine/include/engine/recording.h): a recorded session replays bit for
// bit, a tampered or diverging recording is caught at its first differing step and body, a
// recording cut off mid-line still replays, and a recording turns into an equivalent scenario.
#include <engine/recording.h>
#include <engine/scenario.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace sim::engine {
namespace {

const std::string kSourceDir = SIMTRAINER_SOURCE_DIR;
const std::string kGrasp = kSourceDir + "/scenes/scenarios/grasp_lift.scenario.yaml";

class RecordingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("simtrainer_recording_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "grasp.rec").string();
    PlayOptions options;
    options.record_path = path_;
    played_ = playScenario(loadScenario(kGrasp), options);
    ASSERT_TRUE(played_.passed()) << played_.failureSummary();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string text() const {
    std::ifstream in(path_, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  void rewrite(const std::string& t) const { std::ofstream(path_, std::ios::binary) << t; }

  std::filesystem::path dir_;
  std::string path_;
  ScenarioResult played_;
};

TEST_F(RecordingTest, ReplayIsBitIdentical) {
  const Recording r = readRecording(path_);
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.outcome, "ok");
  EXPECT_EQ(r.hashes.size(), played_.run.steps);
  EXPECT_EQ(r.controls, (std::vector<std::string>{"grip", "lift"}));
  EXPECT_GE(r.pult.size(), 5u);  // initial, grip on/off, lift on/off, ...
  const ReplayResult replayed = replay(r, true);
  EXPECT_FALSE(replayed.diverged) << "step " << replayed.diverged_step;
  EXPECT_EQ(replayed.steps, played_.run.steps);
  EXPECT_EQ(replayed.final_hash, played_.final_hash);
  EXPECT_TRUE(replayed.final_state == played_.run.final_state);
}

TEST_F(RecordingTest, TamperedHashIsFoundAtItsStep) {
  std::string t = text();
  const auto at = t.find("\nh 700 ");
  ASSERT_NE(at, std::string::npos);
  t[at + 7] = t[at + 7] == '0' ? '1' : '0';  // first hex digit of step 700's hash
  rewrite(t);
  const ReplayResult replayed = replay(readRecording(path_), true);
  EXPECT_TRUE(replayed.diverged);
  EXPECT_EQ(replayed.diverged_step, 700u);
}

TEST_F(RecordingTest, ChangedInputDivergesAndNamesTheBody) {
  // Push the lift stick for one frame (4 steps; the scheme reads the pult once per frame) at
  // step 12, before the jaws reach the box: the palm (and the jaws on it, which come later in
  // body order) move; the box and the ground do not.
  std::string t = text();
  const auto at = t.find("\nh 12 ");
  ASSERT_NE(at, std::string::npos);
  t.insert(at + 1, "p 12 0 1\np 16 0 0\n");
  rewrite(t);
  const ReplayResult replayed = replay(readRecording(path_), true);
  EXPECT_TRUE(replayed.diverged);
  EXPECT_EQ(replayed.diverged_step, 13u);
  EXPECT_EQ(replayed.diverged_body, "palm");
}

TEST_F(RecordingTest, CutOffRecordingStillReplays) {
  std::string t = text();
  t.resize(t.size() / 2);  // a kill mid-write: the last line is partial, no end line
  rewrite(t);
  const Recording r = readRecording(path_);
  EXPECT_FALSE(r.complete);
  EXPECT_GT(r.hashes.size(), 100u);
  EXPECT_FALSE(replay(r, true).diverged);
}

TEST_F(RecordingTest, MalformedLinesAndChangedScenesAreErrors) {
  rewrite("simtrainer-recording 1\nscene " + kSourceDir +
          "/scenes/grasp.yaml 0123456789abcdef\ncontrols grip lift\n");
  try {
    replay(readRecording(path_), true);
    FAIL() << "a changed scene must not replay";
  } catch (const RecordingError& e) {
    EXPECT_NE(std::string(e.what()).find("has changed since it was recorded"), std::string::npos)
        << e.what();
  }
  rewrite("simtrainer-recording 1\nscene x 1\ncontrols a\np 0 zero\n");
  try {
    readRecording(path_);
    FAIL() << "no error";
  } catch (const RecordingError& e) {
    EXPECT_NE(std::string(e.what()).find(path_ + ":4: expected a number, got \"zero\""),
              std::string::npos)
        << e.what();
  }
  rewrite("hello\n");
  EXPECT_THROW(readRecording(path_), RecordingError);
}

TEST_F(RecordingTest, RecordingBecomesAnEquivalentScenario) {
  const Recording r = readRecording(path_);
  const std::string scenario_path = (dir_ / "again.scenario.yaml").string();
  std::ofstream(scenario_path) << recordingToScenario(r, 1.0 / 240.0);
  const ScenarioResult again = playScenario(loadScenario(scenario_path));
  EXPECT_EQ(again.run.steps, played_.run.steps);
  EXPECT_EQ(again.final_hash, played_.final_hash);
}

}  // namespace
}  // namespace sim::engine
