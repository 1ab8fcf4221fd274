// Session result files (docs/result-format.md; JSON Schema docs/schemas/result-v1.schema.json): one
// JSON document per session — what was played, by whom, when, the grade (score, every penalty and
// task) and the session's figures — written by `play`, `run`, `replay` and `serve` with
// `--result FILE.json`, kept by the instructor per trainee, read by `simtrainer report`.
//
// A result is written at once when the session starts (complete: false, outcome "running") and
// again at its end, each time to a temporary file that is flushed to disk and then renamed over
// the old one: a reader never sees half a file, and a session that fails, is interrupted or is
// killed still leaves one (complete: false).
#pragma once

#include <engine/scene.h>
#include <engine/scoring.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace sim::engine {

class ResultError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ResultFile {
  static constexpr int kVersion = 1;
  static constexpr const char* kFormat = "simtrainer-result";

  /// The session ran its whole duration without a fault, interruption or closed window.
  bool complete = false;
  /// running (the session has not ended), ok, fault, interrupted, closed (window), error.
  std::string outcome = "running";
  std::string error;    ///< What went wrong (fault, error); empty otherwise.
  std::string trainee;  ///< `--trainee`; empty: not given.
  std::string started;  ///< ISO 8601 UTC.
  std::string build;    ///< buildIdentity() of the program that ran the session.
  struct Source {
    std::string name, file;  ///< file: absolute path.
    std::uint64_t hash = 0;  ///< FNV-1a of the file's bytes (a scene: with its includes).
  };
  std::optional<Source> scenario;  ///< Absent for a plain scene (`run`, `serve SCENE`).
  Source scene;
  std::vector<Override> overrides;  ///< The scene's --set overrides.
  std::string recording;            ///< The session's recording (absolute path); empty: none.
  double duration_s = 0.0;          ///< Simulated time reached.
  std::uint64_t steps = 0;
  double time_step_s = 0.0;
  ScoreSheet score;  ///< score.scored false: the session is not graded ("score": null).
  SessionStats stats;
};

/// The current time as ISO 8601 UTC to the second, e.g. 2025-05-01T09:30:00Z.
std::string utcNow();

/// What is known before the session starts: the scene and scenario (may be null), who and when.
ResultFile resultHeader(const Scene& scene, const Scenario* scenario, const std::string& trainee,
                        const std::string& started, const std::string& recording);
/// Takes the grade, the figures, the time and step reached from a scorer (after finish(): final).
void takeGrade(ResultFile& result, const Scorer& scorer);
/// Sets complete and outcome: ok when complete, else fault / interrupted / closed as given.
void setOutcome(ResultFile& result, bool complete, const std::string& outcome,
                const std::string& error = {});

/// The JSON document (2-space indent, keys in a fixed order, numbers that read back exactly).
std::string resultToJson(const ResultFile& result);
/// Parses a document of this format and version; throws ResultError naming the file and field.
ResultFile resultFromJson(const std::string& text, const std::string& file);

/// Writes atomically (temporary file, flushed and synced, renamed); throws ResultError.
void writeResultFile(const std::string& path, const ResultFile& result);
ResultFile readResultFile(const std::string& path);

}  // namespace sim::engine
