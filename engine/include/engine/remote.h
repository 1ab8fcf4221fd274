// A training class across machines (docs/network.md): one authoritative server runs the session
// and publishes its state over DDS (eProsima Fast DDS); stations render the received state with
// the same view code as a local run, and may send their pult; an instructor watches every station
// and sends commands (pause, resume, reset, faults, parameters).
//
// This header is plain C++: the DDS types generated from net/idl/simtrainer.idl stay inside
// engine/src/remote_*.cpp. Every received sample is checked before use (sizes, finite numbers,
// order); a bad one is dropped and counted, never trusted.
#pragma once

#include <engine/run.h>
#include <engine/scenario.h>
#include <engine/scene.h>
#include <engine/session.h>

#include <engine/frame_clock.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace sim::engine::remote {

/// Which class: DDS domain id (0..232; different domains use different UDP ports) and partition
/// (endpoints only match within one). Two classes differing in either never see each other.
struct ClassAddress {
  int domain = 0;
  std::string partition = "simtrainer";
  /// Unicast addresses to announce to besides multicast (another machine, or 127.0.0.1 inside a
  /// network namespace without multicast). 127.0.0.1 is always added.
  std::vector<std::string> peers;
  /// A secured class (docs/network.md): the participant's folder made by `simtrainer security
  /// issue` (engine/class_security.h). Empty: open, anyone who knows domain and partition joins.
  std::string security;
};

struct SceneIdentity {
  std::uint64_t run_id = 0;
  std::string scene_name;
  std::string scene_file;
  std::uint64_t scene_hash = 0;
  std::uint32_t body_count = 0;
  std::uint32_t motor_count = 0;
  std::vector<std::string> controls;
  double frame_rate_hz = 0.0;
  double time_step_s = 0.0;
};

/// The state after one server frame.
struct StateFrame {
  std::uint64_t run_id = 0;
  std::uint64_t frame = 0;  ///< Increases by one per server frame (also while paused).
  std::uint64_t step = 0;
  double sim_time_s = 0.0;
  bool paused = false;
  std::vector<double> poses;  ///< 7 per body: x y z (m), qw qx qy qz.
  std::vector<double> motor_angle_rad, motor_speed_radps, motor_voltage;
  std::vector<double> pult;
  std::uint64_t state_hash = 0;
  std::int64_t sent_ns = 0;  ///< CLOCK_MONOTONIC at publication.
  bool scored = false;       ///< A graded session (a served scenario with `scoring:`).
  double score = 0.0;        ///< Its running score out of 100 (LiveScore::score).
};

struct PultInput {
  std::string station;
  std::uint64_t seq = 0;
  std::vector<double> values;
  /// Taken in a secured class: the authenticated name of the station that wrote the sample (the
  /// partition its permissions confine its writer to); empty when unknown or the class is open.
  std::string writer;
};

struct StationStatus {
  std::string station;
  std::string role;
  std::uint64_t last_step = 0;
  std::uint64_t frames_received = 0;
  std::uint64_t dropped = 0;
  bool link_ok = false;
  bool has_pult = false;
  bool scored = false;  ///< The last state this station received was graded...
  double score = 0.0;   ///< ...with this running score.
};

enum class CommandKind : int {
  Pause = 1,
  Resume = 2,
  Reset = 3,  ///< target: keyframe name ("start": the initial state)
  InjectFault =
      4,  ///< target: motor or control; fault: stuck, weak, reversed, brake_released, axis_stuck
  ClearFault = 5,    ///< target: motor or control
  SetParameter = 6,  ///< target: a scene key (as `--set`); value
};

struct Command {
  std::string issuer;
  std::uint64_t seq = 0;
  CommandKind kind = CommandKind::Pause;
  std::string target;
  std::string fault;
  double value = 0.0;
  /// Taken in a secured class: the authenticated instructor who wrote it (as PultInput::writer).
  std::string writer;
};

struct Event {
  std::uint64_t run_id = 0;
  std::uint64_t step = 0;
  double sim_time_s = 0.0;
  std::string
      kind;  ///< command, refused, fault, set, score (a penalty or task of a graded session), info
  std::string text;
};

/// Samples dropped because they failed a check, by reason.
struct DropCounts {
  std::uint64_t malformed = 0;     ///< wrong sizes, non-finite numbers, unknown kinds or names
  std::uint64_t out_of_order = 0;  ///< older than one already used
  std::uint64_t foreign = 0;       ///< another server run or scene than the identity's
  /// Secured class: a pult sample or command under another name than its writer's
  /// authenticated one (a station sending another station's pult).
  std::uint64_t impostor = 0;
  std::uint64_t total() const { return malformed + out_of_order + foreign + impostor; }
};

/// One process's connection to a class: a DDS participant (UDPv4 only) with the topics its role
/// uses. Reading never blocks; writing state never blocks (best effort), reliable topics keep the
/// last samples only, so a slow or dead subscriber cannot hold a writer up.
class Bus {
 public:
  enum class Role { Server, Station, Instructor };
  /// Throws std::runtime_error when the participant or an endpoint cannot be made (in a secured
  /// class also when a file of the folder is missing or invalid, or the permissions refuse).
  /// The writers of a station or instructor in a secured class write in their own partition
  /// (security::writerPartition), named after the certificate's CN.
  Bus(const ClassAddress& address, Role role);
  ~Bus();
  Bus(const Bus&) = delete;
  Bus& operator=(const Bus&) = delete;

  // Server.
  void publishIdentity(const SceneIdentity& identity);
  void publishState(const StateFrame& frame);
  void publishEvent(const Event& event);
  bool takePult(PultInput& pult);
  bool takeCommand(Command& command);
  /// Station readers of the state topic currently matched.
  int stateSubscribers() const;
  /// Secured class: remote participants that failed authentication (without DDS Security,
  /// another CA, a bad certificate), each counted and logged once.
  std::uint64_t participantsRefused() const;
  /// Secured class: remote DataWriters the access control refused since this bus was made (a
  /// participant writing a topic or partition its permissions do not allow), in this process.
  std::uint64_t writersRefused() const;
  /// Waits up to `timeout_s` until every matched reader has acknowledged the identity. A reader
  /// acknowledges only once it has matched this writer, so this tells that the stations see the
  /// server, not only that the server sees them (discovery is one-sided until then).
  bool identityAcknowledged(double timeout_s) const;

  // Stations and instructor.
  bool takeIdentity(SceneIdentity& identity);
  bool takeState(StateFrame& frame);  ///< The next received frame (keep last 1: the newest).
  bool takeEvent(Event& event);
  bool takeStatus(StationStatus& status);
  void publishPult(const PultInput& pult);
  void publishStatus(const StationStatus& status);
  void publishCommand(const Command& command);
  /// Readers of the command topic matched (the server is listening).
  int commandSubscribers() const;
  /// Readers of the pult topic matched (a station's: the server is listening to it).
  int pultSubscribers() const;
  /// Waits up to `timeout_s` until the server has acknowledged every command published so far
  /// (reliable delivery: each reached its reader's queue). False on timeout or with no server.
  bool commandsAcknowledged(double timeout_s) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// CLOCK_MONOTONIC in nanoseconds (the same clock in every process of one machine).
std::int64_t monotonicNs();

/// The identity of a scene as a server announces it.
SceneIdentity identityOf(const Scene& scene, std::uint64_t run_id);
/// The state of a session after a frame, into `frame` (vectors keep their capacity).
void frameOf(const Session& session, std::uint64_t run_id, std::uint64_t frame_number, bool paused,
             StateFrame& frame);

/// Checks a received frame against the identity (run, sizes, finite numbers, unit quaternions
/// within 1e-6) and the last frame accepted; counts a drop and returns false when it fails.
class FrameFilter {
 public:
  bool accept(const StateFrame& frame, const SceneIdentity& identity);
  const DropCounts& drops() const { return drops_; }
  void reset() { have_last_ = false; }

 private:
  DropCounts drops_;
  bool have_last_ = false;
  std::uint64_t last_run_ = 0, last_frame_ = 0;
};

/// Writes a received frame into a session so that SessionView draws it as if it were local:
/// body poses, motor angles, speeds and voltages, pult values, time and step. Velocities are
/// left at zero: the view does not use them. `frame` must have passed FrameFilter.
void applyFrame(const StateFrame& frame, Session& session);

/// One line of a pose trace: step and every pose number as a hexadecimal float (exact), so that
/// the traces of the server and a station compare bit for bit.
std::string poseTraceLine(std::uint64_t step, const std::vector<double>& poses);

struct ServeOptions {
  ClassAddress address;
  double duration_s = 0.0;  ///< Simulated time; <= 0 or infinite: until interrupted.
  std::string record_path;  ///< Session recording (faults as `f` lines); empty for none.
  std::string trace_path;   ///< Pose trace of every published frame (poseTraceLine).
  std::string events_path;  ///< Every event, one line each; empty for none.
  bool realtime = true;
  /// Threads each step may use (Session::setThreads): the result is the same for any count.
  int threads = 1;
  const std::atomic<bool>* interrupt = nullptr;
  /// A scenario's scheduled faults (`faults:`), injected at their times.
  std::vector<ScheduledFault> faults;
  /// A scenario's parameter changes (`changes:`, in time order), applied at their times.
  std::vector<ScheduledChange> changes;
  /// Write the state frames on a thread of their own (the frame loop only hands each frame over;
  /// a frame not yet written when the next is ready is replaced, as the keep-last-1 topic would).
  /// Off: written inline at the end of each frame.
  bool publish_thread = true;
  /// Before the first frame, wait up to `wait_timeout_s` for this many stations to match the
  /// state topic and acknowledge the identity (benchmarks and tests: every subscriber receives
  /// from the first frame). 0: start at once.
  int wait_for_subscribers = 0;
  double wait_timeout_s = 10.0;
  /// Counters of dropped pult and command samples, updated while serving (for tests).
  DropCounts* drops = nullptr;
  /// Grades the session (a served scenario's Scorer): sampled at the start and after every step,
  /// reset with the session, its penalties and tasks published as `score` events and its running
  /// score in every state frame. Null: not graded.
  Scorer* scorer = nullptr;
  /// The recording's optional header lines (the scenario, the trainee, the start time).
  RecordingHeader record_header;
};

struct ServeResult {
  RunResult run;
  /// Ran its whole duration without a fault (always false without a duration: it ends by an
  /// interrupt).
  bool complete = false;
  /// Per written frame: publishing the state (Bus::publishState: the sample's copy and the
  /// DataWriter's write, which sends to every station), s. Inline (publish_thread off) it is part
  /// of RunResult::render_time (the frame observer); otherwise it runs on the writer thread.
  TimingStats state_write_time;
  /// Per frame, with publish_thread: handing the frame to the writer thread, s (in render_time).
  TimingStats state_handoff_time;
  /// With publish_thread: frames replaced by the next before the writer thread took them.
  std::uint64_t frames_superseded = 0;
  DropCounts drops;
  std::uint64_t commands = 0;
  std::uint64_t pult_samples = 0;
  /// Secured class: participants that failed authentication (Bus::participantsRefused) and
  /// remote writers the access control refused (Bus::writersRefused).
  std::uint64_t participants_refused = 0;
  std::uint64_t writers_refused = 0;
};

/// Runs the scene authoritative and headless, paced to the wall clock, publishing its identity
/// once and its state every frame; applies the stations' pult and the instructor's commands.
ServeResult serve(const Scene& scene, const ServeOptions& options);

/// A pult change a station makes when the received simulated time reaches `at_s` (scripted
/// stations in tests and demonstrations).
struct PultScriptEntry {
  double at_s = 0.0;
  std::string control;
  double value = 0.0;
};

struct StationOptions {
  ClassAddress address;
  std::string name = "station";
  std::string scene_path;        ///< The scene file; empty: the file the server names.
  std::string trace_path;        ///< Pose trace of every frame used (poseTraceLine).
  double duration_s = 0.0;       ///< Wall time to run; <= 0: until interrupted or closed.
  std::uint64_t until_step = 0;  ///< Stop once a frame of this step or later is shown (0: never).
  double link_timeout_s = 0.5;   ///< No state for this long: "link lost".
  double identity_timeout_s = 20.0;  ///< No server for this long at the start: an error.
  std::vector<PultScriptEntry> pult_script;
  input::InputSystem* input = nullptr;  ///< This station's own pult devices; null: none.
  const std::atomic<bool>* interrupt = nullptr;
  /// Makes the view once the scene is known; the observer draws every frame (notes carry the
  /// "link lost" banner). Empty: headless.
  std::function<FrameObserver(const Scene& scene)> make_view;
};

struct StationResult {
  std::uint64_t frames_received = 0;  ///< Accepted frames.
  std::uint64_t last_step = 0;
  DropCounts drops;
  std::uint64_t link_lost = 0;  ///< Times the link was lost (and the banner shown).
  std::uint64_t pult_sent = 0;
  TimingStats latency_s;  ///< Publication to reception, per accepted frame (one host only).
  bool closed = false;
};

/// Runs a station: waits for the server's identity, loads the scene, then draws every received
/// frame through `make_view` (the same SessionView code as a local run) and sends its pult.
/// Throws std::runtime_error when no server answers or the scene file differs from the server's.
StationResult runStation(const StationOptions& options);

}  // namespace sim::engine::remote
