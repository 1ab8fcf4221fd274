// The running score of a graded session (docs/scenarios.md, "Scoring"), as plain values for the
// HUD, the network and anything else that shows it while the session runs. engine/scoring.h
// computes it; RunResult carries the latest copy to the loop's frame observer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sim::engine {

/// Something the trainee should see at once: a penalty, a task done or failed.
struct ScoreEvent {
  double time_s = 0.0;  ///< Simulated time it happened (s).
  double points = 0.0;  ///< Points deducted (0 for a task done).
  std::string text;     ///< As shown, e.g. "-5 struck the shelf (12.3 s)".
};

struct LiveScore {
  /// How long (simulated s) an event stays in `recent`.
  static constexpr double kRecentS = 4.0;

  bool scored = false;     ///< The session has scoring rules; false: nothing to show.
  double score = 100.0;    ///< Out of 100, with every penalty and failed task so far deducted.
  double pass_mark = 0.0;  ///< Out of 100.
  bool critical = false;   ///< A critical task or penalty has failed the exercise already.
  std::vector<ScoreEvent> recent;  ///< Events of the last kRecentS seconds, oldest first.
  std::uint64_t event_count = 0;   ///< Every event so far (a change means a new one).

  /// HUD lines: "score 87/100 (pass 70)" then the text of each recent event; none when unscored.
  std::vector<std::string> lines() const;
};

}  // namespace sim::engine
