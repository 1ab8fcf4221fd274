// Pins result files (engine/result_file.h, docs/result-format.md): a document reads back to
// itself, is replaced atomically, and a bad one is refused naming the file and the field.
#include <engine/result_file.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace sim::engine {
namespace {

ResultFile sample() {
  ResultFile r;
  r.complete = true;
  r.outcome = "ok";
  r.trainee = "Jo \"the\" Operator";
  r.started = "2025-05-01T09:30:00Z";
  r.build = "0.1.0 abc gcc-12";
  r.scenario = ResultFile::Source{"ex", "/x/ex.scenario.yaml", 0x0123456789abcdefull};
  r.scene = ResultFile::Source{"mf4", "/x/mf4.yaml", 0xfedcba9876543210ull};
  r.overrides = {Override{"motors.lift.Mp", "0.02"}};
  r.recording = "/x/a.rec";
  r.duration_s = 30.0;
  r.steps = 7200;
  r.time_step_s = 1.0 / 240.0;
  r.score.scored = true;
  r.score.score = 100.0 - 0.1 - 1.0 / 3.0;  // not a short decimal: must round-trip exactly
  r.score.pass_mark = 70;
  r.score.passed = true;
  r.score.penalty_points = 0.1 + 1.0 / 3.0;
  r.score.exercise_time_s = 24.4;
  Penalty p;
  p.kind = "collision";
  p.name = "struck the shelf";
  p.bodies = {"jaw_right", "shelf"};
  p.time_s = 30.904166666666665;
  p.step = 7417;
  p.value = 18.636;
  p.unit = "N s";
  p.speed = 0.3778;
  p.points = 10;
  p.text = "-10 struck the shelf (30.9 s)";
  r.score.penalties = {p};
  r.score.tasks = {
      TaskResult{"lifted", true, 16.3125, 15, 0, true, "body.container.z = 1 at t = 16.3 s"}};
  r.stats.load = "container";
  r.stats.load_path_m = 2.3145817045332940;
  r.stats.motors = {MotorPeak{"shoulder", 0.7567, 0.5675, 3.058}};
  r.stats.max_velocity_iterations = 20;
  r.stats.steps_at_iteration_cap = 3844;
  r.stats.time_at_iteration_cap_s = 3844.0 / 240.0;
  return r;
}

TEST(ResultFile, ReadsBackToTheSameDocument) {
  const std::string text = resultToJson(sample());
  const ResultFile back = resultFromJson(text, "mem.json");
  EXPECT_EQ(resultToJson(back), text);
  EXPECT_EQ(back.score.score, sample().score.score);  // bit for bit
  EXPECT_EQ(back.trainee, "Jo \"the\" Operator");
  EXPECT_EQ(back.scenario->hash, 0x0123456789abcdefull);
  EXPECT_EQ(back.score.penalties.at(0).bodies[1], "shelf");
  // Unscored, no scenario, nothing optional.
  ResultFile plain;
  plain.started = "2025-05-01T09:30:00Z";
  const std::string plain_text = resultToJson(plain);
  EXPECT_NE(plain_text.find("\"score\": null"), std::string::npos) << plain_text;
  EXPECT_NE(plain_text.find("\"scenario\": null"), std::string::npos) << plain_text;
  EXPECT_EQ(resultToJson(resultFromJson(plain_text, "plain.json")), plain_text);
}

TEST(ResultFile, WritesAtomicallyAndReplaces) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("simtrainer_result_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "r.json").string();
  ResultFile r = sample();
  r.outcome = "running";
  r.complete = false;
  writeResultFile(path, r);
  writeResultFile(path, sample());
  EXPECT_EQ(resultToJson(readResultFile(path)), resultToJson(sample()));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  EXPECT_THROW(writeResultFile((dir / "missing" / "r.json").string(), r), ResultError);
  std::filesystem::remove_all(dir);
}

TEST(ResultFile, BadDocumentsNameTheFileAndField) {
  auto error = [](const std::string& text) {
    try {
      resultFromJson(text, "f.json");
    } catch (const ResultError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("{not json").find("f.json: not JSON"), std::string::npos);
  EXPECT_NE(error("{\"format\": \"other\"}").find("not a simtrainer result file"),
            std::string::npos);
  std::string text = resultToJson(sample());
  std::string v2 = text;
  v2.replace(v2.find("\"version\": 1"), 12, "\"version\": 2");
  EXPECT_NE(error(v2).find("version 2 (this program reads version 1)"), std::string::npos)
      << error(v2);
  std::string bad = text;
  bad.replace(bad.find("\"step\": 7417"), 12, "\"step\": -3");
  EXPECT_NE(error(bad).find("f.json: penalties[0].step: expected a whole number >= 0"),
            std::string::npos)
      << error(bad);
  std::string missing = text;
  missing.replace(missing.find("\"detail\""), 8, "\"detale\"");
  EXPECT_NE(error(missing).find("f.json: tasks[0].detail: missing"), std::string::npos)
      << error(missing);
}

}  // namespace
}  // namespace sim::engine
