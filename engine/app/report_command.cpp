#include "report_command.h"

#include <engine/recording.h>
#include <engine/report.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdio>

namespace simtrainer_app {

namespace se = sim::engine;

namespace {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;
constexpr int kExitDiverged = 3;

// Writes and never throws: a failing result file must not hide the session's own error.
void writeQuietly(const ResultArgs& args, const se::ResultFile& result) {
  try {
    se::writeResultFile(args.path, result);
    args.last = result;
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
  }
}

std::string describe(const std::exception& e) {
  if (const auto* invalid = dynamic_cast<const se::SceneInvalid*>(&e)) {
    std::string text;
    for (const auto& error : invalid->errors())
      text += (text.empty() ? "" : "; ") + std::string(error.what());
    return text;
  }
  return e.what();
}

}  // namespace

void addResultOptions(CLI::App* command, ResultArgs& args, bool trainee) {
  command
      ->add_option("--result", args.path,
                   "Write the session's result file (JSON: score, penalties, tasks, figures; "
                   "docs/result-format.md)")
      ->option_text("FILE.json");
  if (!trainee) return;
  command
      ->add_option("--trainee", args.trainee,
                   "The trainee or station, in the result file and the recording")
      ->option_text("NAME")
      ->check(CLI::Validator(
          [](std::string& name) -> std::string {
            if (name.empty()) return "expected a name";
            for (char c : name)
              if (static_cast<unsigned char>(c) < 0x20) return "expected a name on one line";
            return "";
          },
          "NAME"));
}

int guardResult(const ResultArgs& args, const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    if (!args.path.empty() && !args.final) {
      se::ResultFile r = args.last ? *args.last : se::ResultFile{};
      if (r.started.empty()) r.started = se::utcNow();
      if (r.build.empty()) r.build = se::buildIdentity();
      se::setOutcome(r, false, "error", describe(e));
      writeQuietly(args, r);
      args.final = true;
    }
    throw;
  }
}

ResultOutput::ResultOutput(const ResultArgs& args, se::ResultFile header, const se::Scorer* scorer)
    : args_(args), scorer_(scorer) {
  header.outcome = "running";
  se::writeResultFile(args.path,
                      header);  // throws: an unwritable path stops the session before it starts
  args.last = std::move(header);
}

ResultOutput::~ResultOutput() {
  if (args_.final) return;
  se::ResultFile r = *args_.last;
  if (scorer_) se::takeGrade(r, *scorer_);
  se::setOutcome(r, false, "error", "the session stopped on an error");
  writeQuietly(args_, r);
}

void ResultOutput::finish(bool complete, const std::string& outcome, const std::string& error) {
  se::ResultFile r = *args_.last;
  if (scorer_) se::takeGrade(r, *scorer_);
  se::setOutcome(r, complete, outcome, error);
  se::writeResultFile(args_.path, r);
  args_.last = std::move(r);
  args_.final = true;
  spdlog::info("result written to {}", args_.path);
}

std::string outcomeOf(const se::RunResult& run) {
  return run.fault ? "fault" : run.interrupted ? "interrupted" : run.closed ? "closed" : "ok";
}

void printGrade(const se::ScenarioResult& result) {
  const se::ScoreSheet& s = result.score;
  if (!s.scored) return;
  fmt::print("  score {:g}/100, pass mark {:g}: {}{}\n", std::round(s.score * 10.0) / 10.0,
             s.pass_mark, s.passed ? "PASSED" : "NOT PASSED",
             s.critical_failure ? " (critical failure)" : "");
  for (const se::Penalty& p : s.penalties) fmt::print("    {}\n", p.text);
  for (const se::TaskResult& t : s.tasks) {
    if (t.points_lost > 0.0) fmt::print("    -{:g} task failed: {}\n", t.points_lost, t.name);
  }
}

int replayToResult(const std::string& recording, const ResultArgs& result) {
  se::ReportOptions options;
  options.collect = false;
  se::GradedReplay g;
  try {
    g = se::gradeRecording(recording, options);
  } catch (const se::ReplayDiverged& e) {
    std::fprintf(stderr, "simtrainer: error: %s\n", e.what());
    return kExitDiverged;
  }
  se::writeResultFile(result.path, g.result);
  result.last = g.result;
  result.final = true;
  fmt::print(
      "replayed {} steps of {}, every step identical to the recording; result written to {}\n",
      g.result.steps, g.result.scene.file, result.path);
  if (g.result.score.scored) {
    fmt::print("  score {:g}/100: {}\n", std::round(g.result.score.score * 10.0) / 10.0,
               g.result.score.passed ? "PASSED" : "NOT PASSED");
  }
  return kExitOk;
}

struct ReportCommand::Args {
  CLI::App* command = nullptr;
  std::string input, out, class_dir, size = "800x450";
  bool force = false, no_screenshots = false;
};

ReportCommand::ReportCommand(CLI::App& app) : args_(std::make_unique<Args>()) {
  Args& a = *args_;
  a.command = app.add_subcommand("report",
                                 "After-action report of a session (HTML: score, timeline, plots, "
                                 "worst moments), or a class summary");
  a.command
      ->add_option("INPUT", a.input,
                   "A session recording, or a result file (its recording is replayed when there)")
      ->option_text("RECORDING_OR_RESULT");
  a.command->add_option("--out", a.out, "Directory for index.html (and result.json)")
      ->required()
      ->option_text("DIR");
  a.command
      ->add_option("--class", a.class_dir, "Summarise every result file (*.json) of DIR instead")
      ->option_text("DIR");
  a.command->add_flag(
      "--force", a.force,
      "Report a recording whose scene or scenario changed since, or that no longer replays "
      "bit for bit (unverified; the page says so)");
  a.command->add_flag("--no-screenshots", a.no_screenshots,
                      "Leave out the screenshots of the worst moments");
  a.command->add_option("--size", a.size, "Screenshot size (default 800x450)")->option_text("WxH");
}

ReportCommand::~ReportCommand() = default;

bool ReportCommand::chosen() const {
  return args_->command->parsed();
}

int ReportCommand::run() {
  const Args& a = *args_;
  if (a.input.empty() == a.class_dir.empty()) {
    std::fprintf(stderr,
                 "simtrainer: error: report: give a recording or result file, or --class DIR (one "
                 "of them)\n");
    return kExitUsage;
  }
  try {
    if (!a.class_dir.empty()) {
      std::vector<std::string> skipped;
      const std::string page = se::writeClassReport(a.class_dir, a.out, &skipped);
      for (const std::string& s : skipped) spdlog::warn("left out: {}", s);
      fmt::print("wrote {}\n", page);
      return kExitOk;
    }
    se::ReportOptions options;
    options.force = a.force;
    options.screenshots = !a.no_screenshots;
    if (std::sscanf(a.size.c_str(), "%dx%d", &options.width, &options.height) != 2 ||
        options.width < 16 || options.height < 16 || options.width > 4096 ||
        options.height > 4096) {
      std::fprintf(stderr,
                   "simtrainer: error: --size: expected WIDTHxHEIGHT, e.g. 800x450, got %s\n",
                   a.size.c_str());
      return kExitUsage;
    }
    const se::ReportFiles files = se::writeReport(a.input, a.out, options);
    if (!files.screenshot_note.empty()) spdlog::info("{}", files.screenshot_note);
    fmt::print("wrote {}{}{}\n", files.html, files.result.empty() ? "" : " and " + files.result,
               files.screenshots > 0 ? fmt::format(" ({} screenshots)", files.screenshots) : "");
    return kExitOk;
  } catch (const se::ReplayDiverged& e) {
    std::fprintf(stderr, "simtrainer: error: %s\n", e.what());
    return kExitDiverged;
  } catch (const se::ResultError& e) {
    std::fprintf(stderr, "simtrainer: error: %s\n", e.what());
    return kExitUsage;
  }
}

}  // namespace simtrainer_app
