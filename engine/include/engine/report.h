// After-action reports (docs/scenarios.md, "After-action report"): a recording replayed bit for bit
// with its scenario's grader, written as one self-contained HTML page (score and breakdown,
// timeline of penalties and tasks, inline SVG plots of chosen signals with the events marked,
// screenshots of the worst moments drawn offscreen by the session's own view), and the class
// summary of many trainees' result files.
#pragma once

#include <engine/result_file.h>
#include <engine/scenario.h>
#include <engine/session.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace sim::engine {

struct ReportOptions {
  /// Grade a recording whose scene or scenario changed since (by hash), or that diverges from
  /// its recorded hashes; the page says so.
  bool force = false;
  /// Screenshots of the worst moments (needs an X display; without one the page says so).
  bool screenshots = true;
  int width = 800, height = 450;  ///< Screenshot size, pixels.
  int max_samples = 1500;         ///< Per plotted signal (every Nth step).
  /// Collect plots and moments (false: the grade only, for `replay --result`).
  bool collect = true;
};

/// One signal against time.
struct SignalSeries {
  std::string name;
  std::vector<double> t_s, value;
};

struct PlotData {
  std::string title;
  std::vector<SignalSeries> series;
};

/// The state at one of the largest penalties, to draw.
struct Moment {
  Penalty penalty;
  SessionState state;
};

/// A replay that differs from its recording (exit code 3, as `replay --verify`).
class ReplayDiverged : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A recording replayed with its scenario's grader.
struct GradedReplay {
  ResultFile result;
  std::string recording;  ///< As given.
  Scene scene;            ///< As replayed (for screenshots).
  std::string camera;     ///< `report.camera`; empty: the scene's default.
  std::vector<PlotData> plots;
  std::vector<Moment> worst;          ///< Up to 3, largest points first.
  std::vector<std::string> warnings;  ///< Forced past a changed file (unverified replay).
  bool verified = false;              ///< Every step's hash equal to the recording's.
};

/// Replays a recording (bit-exact: every step's hash checked) with the grader of the scenario its
/// header names, or with statistics only for a plain scene. Throws RecordingError when the scene
/// or the scenario changed since the recording, ReplayDiverged when a step's hash differs from the
/// recorded one (neither with options.force, which replays without checking).
GradedReplay gradeRecording(const std::string& recording_path, const ReportOptions& options);

/// The default plots (docs/scenarios.md): motor voltages, motor speeds, the load's height and the
/// grip force (contact force between the load and each body holding it).
std::vector<ReportPlot> defaultPlots(const Scene& scene, const ScoringDef& scoring);

struct ReportFiles {
  std::string html;    ///< DIR/index.html
  std::string result;  ///< DIR/result.json (the replay's result file), empty from a result alone
  int screenshots = 0;
  std::string screenshot_note;  ///< Why there are none, when there are none.
};

/// `simtrainer report RECORDING_OR_RESULT --out DIR`. A result file is replayed from the
/// recording it names when that exists; otherwise the page shows the result alone.
ReportFiles writeReport(const std::string& input, const std::string& out_dir,
                        const ReportOptions& options);

/// `simtrainer report --class DIR --out DIR`: every result file of DIR (*.json) in one sortable
/// table with a histogram of scores. Returns the page's path; throws ResultError when DIR has no
/// result files.
std::string writeClassReport(const std::string& results_dir, const std::string& out_dir,
                             std::vector<std::string>* skipped = nullptr);

/// The HTML page of a graded session (self-contained: inline CSS, SVG and images).
/// `shots` are PNG files' bytes, in the order of `replay.worst`.
std::string reportHtml(const GradedReplay& replay, const std::vector<std::string>& shots,
                       const std::string& screenshot_note);

}  // namespace sim::engine
