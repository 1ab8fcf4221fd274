// Shared by engine tests of recorded session events (faults, parameter changes): a recording must
// replay bit for bit, and must diverge without the lines that carry the event.
#pragma once

#include <engine/recording.h>
#include <engine/scenario.h>

#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdint>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace sim::engine::testing {

/// A recording path in the temporary directory, unique to this test process and `tag`.
inline std::string tempRecording(const std::string& tag) {
  return (std::filesystem::temp_directory_path() /
          ("simtrainer_" + tag + "_" + std::to_string(::getpid()) + ".rec"))
      .string();
}

/// Replays the recording `rec` with verification (no divergence, final state `final_state`), then
/// a copy of it without its lines that start with `prefix`, which must diverge at the step after
/// `step` (the event took effect before step + 1). Removes both files.
inline void expectReplayNeedsLines(const std::string& rec, const std::string& prefix,
                                   std::uint64_t step, const dynamics::State& final_state) {
  const ReplayResult same = replay(readRecording(rec), true);
  EXPECT_FALSE(same.diverged) << "diverged at step " << same.diverged_step;
  EXPECT_EQ(same.final_state, final_state);
  const std::string stripped = rec + ".stripped";
  {
    std::ifstream in(rec);
    std::ofstream out(stripped);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(prefix, 0) != 0) out << line << '\n';
    }
  }
  const ReplayResult without = replay(readRecording(stripped), true);
  std::remove(rec.c_str());
  std::remove(stripped.c_str());
  EXPECT_TRUE(without.diverged) << "without its \"" << prefix << "\" lines";
  EXPECT_EQ(without.diverged_step, step + 1);
}

/// Loading a scenario on `scene` (a file in `dir`) whose `faults:` has the one entry `fault` fails
/// with an error naming the scenario file, the entry's line (4) and `needle`.
inline void expectFaultError(const std::string& dir, const std::string& scene,
                             const std::string& fault, const std::string& needle) {
  try {
    loadScenarioFromString("scene: " + scene + "\nduration: 1\nfaults:\n  - " + fault +
                               "\nexpect:\n  - {signal: time, min: 0.99}\n",
                           dir + "/inline.scenario.yaml");
    ADD_FAILURE() << "no error for " << fault;
  } catch (const SceneError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("inline.scenario.yaml"), std::string::npos) << what;
    EXPECT_NE(what.find(":4"), std::string::npos) << what;
    EXPECT_NE(what.find(needle), std::string::npos) << what;
  }
}

}  // namespace sim::engine::testing
