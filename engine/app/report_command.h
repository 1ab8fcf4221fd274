// Result files and the after-action report in the `simtrainer` program: the `--result` and
// `--trainee` options of play, run, replay (and serve), and the `report` subcommand. main.cpp
// registers the options and dispatches; what they do is here.
#pragma once

#include <engine/result_file.h>
#include <engine/run.h>
#include <engine/scenario.h>
#include <engine/scoring.h>

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace simtrainer_app {

struct ResultArgs {
  std::string path;     ///< --result FILE.json; empty: none.
  std::string trainee;  ///< --trainee NAME
  // What has been written so far (for a session that throws); kept by the writers below.
  mutable std::optional<sim::engine::ResultFile> last;
  mutable bool final = false;
};

/// Adds --result (and, with `trainee`, --trainee) to a subcommand.
void addResultOptions(CLI::App* command, ResultArgs& args, bool trainee = true);

/// Runs a command's body; when it throws before its result file was finished, writes the result
/// (what was known, complete: false, outcome "error", the message) and rethrows.
int guardResult(const ResultArgs& args, const std::function<int()>& body);

/// Keeps a session's result file: written at once (outcome "running"), finished at the end, and,
/// when destroyed unfinished (an exception), written with the grade so far and outcome "error".
class ResultOutput {
 public:
  /// Writes the provisional file; throws ResultError when it cannot be written (exit code 2,
  /// before the session starts).
  ResultOutput(const ResultArgs& args, sim::engine::ResultFile header,
               const sim::engine::Scorer* scorer);
  ~ResultOutput();
  ResultOutput(const ResultOutput&) = delete;
  ResultOutput& operator=(const ResultOutput&) = delete;
  /// The final file: the scorer's grade (already finished) and the outcome.
  void finish(bool complete, const std::string& outcome, const std::string& error);
  const std::string& started() const { return args_.last->started; }

 private:
  const ResultArgs& args_;
  const sim::engine::Scorer* scorer_;
};

/// ok, fault, interrupted or closed, from how a run ended.
std::string outcomeOf(const sim::engine::RunResult& run);

/// Prints a graded scenario's score, penalties and tasks (nothing for an ungraded one).
void printGrade(const sim::engine::ScenarioResult& result);

/// `replay RECORDING --result FILE`: replays with the grader of the recorded scenario and writes
/// the result file. Returns the exit code (3 when the replay diverges).
int replayToResult(const std::string& recording, const ResultArgs& result);

/// The `report` subcommand.
class ReportCommand {
 public:
  explicit ReportCommand(CLI::App& app);
  ~ReportCommand();
  bool chosen() const;
  int run();

  struct Args;

 private:
  std::unique_ptr<Args> args_;
};

}  // namespace simtrainer_app
