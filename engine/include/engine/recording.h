// Session recordings: the operator's pult over time plus a hash of the whole state after every
// step, so a session can be replayed bit for bit and any divergence found at its first step.
//
// The file is line-oriented text, written as the session runs and flushed at every frame, so a
// crash or a kill loses at most the last frame:
//   simtrainer-recording 1
//   build <version> <git commit> <compiler>
//   scene <absolute path> <FNV-1a of its bytes, hex>
//   scenario <absolute path> <FNV-1a of its bytes, hex>  (optional: the scenario played, whose
//                                        scoring and expectations grade the session)
//   trainee <name>                       (optional: who drove, as `--trainee`; rest of the line)
//   started <ISO 8601 UTC time>          (optional: when the session started)
//   set <key>=<value>                    (one per override)
//   controls <name> ...                  (the pult's controls, in order)
//   p <step> <value> ...                 (pult before that step, when it changed; 17 digits)
//   f <step> <motor> <none|stuck|weak|reversed|brake_released> <value>  (a motor fault from
//                                        that step on)
//   s <step> <sensor> <none|noise|dropout> <value>  (a fault of the scheme's sensor <sensor>, an
//                                        index into scheme.sensors, from that step on; value:
//                                        noise's standard deviation or the value dropout holds)
//   a <step> <control> <none|axis_stuck> <value>  (a fault of pult control <control>, an index
//                                        into `controls`, from that step on; value: the value
//                                        held. The pult lines carry the held value as well, so
//                                        recordings written before `a` lines existed still replay)
//   c <step> <key>=<value>               (a parameter changed from that step on, as `set`:
//                                        the scene reloaded with it, Session::changeScene)
//   h <step> <hash>                      (Session::hash() after that step, hex)
//   b <step> <hash> ...                  (per-body state hashes at the end of each frame)
//   end <steps> <ok|fault|interrupted|closed>  (missing when the run was killed; closed: the
//                                        window was closed before the end)
// Readers accept files without the optional lines (recordings made before they existed).
#pragma once

#include <engine/scene.h>
#include <engine/session.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace sim::engine {

class RecordingError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Identity of this build: version, git commit and compiler (recordings carry it).
std::string buildIdentity();

/// Per-body hash of a dynamics state (pose, velocities, sleep), in body order.
std::vector<std::uint64_t> bodyHashes(const dynamics::State& state);

/// The optional header lines: what was played, by whom, when. Empty fields are not written.
struct RecordingHeader {
  std::string scenario_path;  ///< Made absolute when written.
  std::uint64_t scenario_hash = 0;
  std::string trainee;
  std::string started;  ///< ISO 8601 UTC, e.g. 2025-05-01T09:30:00Z.
};

class RecordingWriter {
 public:
  /// Opens (truncates) `path` and writes the header; throws RecordingError naming the path.
  RecordingWriter(const std::string& path, const Scene& scene, const RecordingHeader& header = {});
  ~RecordingWriter();
  RecordingWriter(const RecordingWriter&) = delete;
  RecordingWriter& operator=(const RecordingWriter&) = delete;

  /// Call before each step with the pult the step will use.
  void beforeStep(const Session& session);
  /// Call after each step; flushes at the end of every frame.
  void afterStep(const Session& session);
  /// Writes the end line and flushes. `outcome`: ok, fault or interrupted.
  void finish(const Session& session, const std::string& outcome);

 private:
  void line(const std::string& text);
  void writeFaults(const Session& session);
  std::string path_;
  std::FILE* file_ = nullptr;
  int steps_per_frame_ = 1;
  std::vector<double> last_pult_;
  std::vector<MotorFault> last_faults_;
  std::vector<SensorFault> last_sensor_faults_;
  std::vector<ControlFault> last_control_faults_;
  std::size_t overrides_written_ = 0;  // of the session scene's overrides (header and c lines)
  bool wrote_pult_ = false;
  bool finished_ = false;
};

struct Recording {
  std::string file;
  std::string build;
  std::string scene_path;
  std::uint64_t scene_hash = 0;
  RecordingHeader header;  ///< The optional lines (empty fields when absent).
  std::vector<Override> overrides;
  std::vector<std::string> controls;
  std::map<std::uint64_t, std::vector<double>> pult;  ///< Step -> values before it.
  /// Step -> motor faults that take effect before it (motor index, fault).
  std::map<std::uint64_t, std::vector<std::pair<int, MotorFault>>> faults;
  /// Step -> sensor faults that take effect before it (scheme sensor index, fault).
  std::map<std::uint64_t, std::vector<std::pair<int, SensorFault>>> sensor_faults;
  /// Step -> pult control faults that take effect before it (control index, fault).
  std::map<std::uint64_t, std::vector<std::pair<int, ControlFault>>> control_faults;
  /// Step -> parameter changes that take effect before it (added to `overrides`, in order).
  std::map<std::uint64_t, std::vector<Override>> changes;
  std::vector<std::uint64_t> hashes;  ///< hashes[s - 1]: after step s.
  std::map<std::uint64_t, std::vector<std::uint64_t>> body_hashes;  ///< Step -> per body.
  bool complete = false;                                            ///< The end line was read.
  std::string outcome;                                              ///< From the end line.
  /// Read with RecordingRead::UpToDamage: the first problem found (file:line: what), after which
  /// the recording was cut back to its last complete frame. Empty when it read cleanly.
  std::string damage;
};

enum class RecordingRead {
  Strict,      ///< Anything malformed throws RecordingError.
  UpToDamage,  ///< Keep what precedes the first malformed line, to the last complete frame.
};

/// Reads a recording. A truncated last line (a killed run) is ignored; anything else malformed
/// throws RecordingError naming the file and the line, or with RecordingRead::UpToDamage ends
/// the recording at its last complete frame before that line (Recording::damage says where).
/// A file without its header (magic, scene) always throws.
Recording readRecording(const std::string& path, RecordingRead mode = RecordingRead::Strict);

struct ReplayResult {
  std::uint64_t steps = 0;
  bool diverged = false;
  std::uint64_t diverged_step = 0;  ///< First step whose hash differs.
  std::string diverged_body;        ///< First body whose hash differs at the next frame end.
  std::uint64_t final_hash = 0;
  dynamics::State final_state;
};

struct ReplayOptions {
  bool verify = false;  ///< Stop at the first step whose hash differs from the recording.
  /// Replay a scene whose files changed since the recording (after-action reports with --force);
  /// the steps may then differ from the session's.
  bool allow_changed_scene = false;
  /// Called once before the first step, after that step's recorded inputs are applied (report
  /// null), and after every step (a grader, the report's signals).
  std::function<void(const Session& session, const dynamics::StepReport* report)> on_step;
};

/// Loads the recorded scene (it must hash as recorded, else RecordingError) and replays the pult.
/// With `verify`, stops at the first step whose hash differs from the recording.
ReplayResult replay(const Recording& recording, const ReplayOptions& options);
ReplayResult replay(const Recording& recording, bool verify);

/// A scenario that reproduces the recording: its scene, overrides, parameter changes (`changes:`)
/// and every pult change as `set`.
std::string recordingToScenario(const Recording& recording, double time_step_s);

}  // namespace sim::engine

namespace sim::engine {
/// "none", "stuck", "weak", "reversed", "brake_released"; and back (false for an unknown name).
const char* motorFaultName(MotorFault::Kind kind);
bool parseMotorFaultKind(const std::string& name, MotorFault::Kind& kind);
/// "none", "noise", "dropout"; and back (false for an unknown name).
const char* sensorFaultName(SensorFault::Kind kind);
bool parseSensorFaultKind(const std::string& name, SensorFault::Kind& kind);
/// "none", "axis_stuck"; and back (false for an unknown name).
const char* controlFaultName(ControlFault::Kind kind);
bool parseControlFaultKind(const std::string& name, ControlFault::Kind& kind);
}  // namespace sim::engine
