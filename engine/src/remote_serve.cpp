// The authoritative server of a class (engine/remote.h): the ordinary run loop (runHeadless), with
// the pult and the instructor's commands taken from the bus at the start of each frame and the
// state published at its end.
#include <engine/recording.h>
#include <engine/remote.h>
#include <engine/scoring.h>
#include <engine/snapshot.h>

#include "latest_writer.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>

namespace sim::engine::remote {

SceneIdentity identityOf(const Scene& scene, std::uint64_t run_id) {
  SceneIdentity id;
  id.run_id = run_id;
  id.scene_name = scene.name;
  id.scene_file = scene.file;
  id.scene_hash = scene.source_hash;
  id.body_count = static_cast<std::uint32_t>(scene.model.bodies.size());
  id.motor_count = static_cast<std::uint32_t>(scene.model.motors.size());
  for (const ControlDef& c : scene.pult.controls) id.controls.push_back(c.name);
  id.frame_rate_hz = scene.frame_rate_hz;
  id.time_step_s = scene.model.solver.time_step_s;
  return id;
}

void frameOf(const Session& session, std::uint64_t run_id, std::uint64_t frame_number, bool paused,
             StateFrame& frame) {
  const dynamics::State& s = session.dynamics();
  frame.run_id = run_id;
  frame.frame = frame_number;
  frame.step = s.step;
  frame.sim_time_s = s.time_s;
  frame.paused = paused;
  frame.poses.clear();
  for (const dynamics::BodyState& b : s.bodies) {
    const auto& p = b.position_m;
    const auto& q = b.orientation;
    frame.poses.insert(frame.poses.end(), {p.x(), p.y(), p.z(), q.w(), q.x(), q.y(), q.z()});
  }
  frame.motor_angle_rad.clear();
  frame.motor_speed_radps.clear();
  frame.motor_voltage.clear();
  for (const dynamics::MotorState& m : s.motors) {
    frame.motor_angle_rad.push_back(m.angle_rad);
    frame.motor_speed_radps.push_back(m.speed_radps);
    frame.motor_voltage.push_back(m.voltage);
  }
  frame.pult = session.state().pult.values;
  frame.state_hash = session.hash();
  frame.sent_ns = monotonicNs();
}

namespace {
bool allFinite(const std::vector<double>& values) {
  for (double v : values) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}
}  // namespace

bool FrameFilter::accept(const StateFrame& f, const SceneIdentity& id) {
  if (f.run_id != id.run_id) {
    ++drops_.foreign;
    return false;
  }
  const bool sizes =
      f.poses.size() == 7 * std::size_t{id.body_count} &&
      f.motor_angle_rad.size() == id.motor_count && f.motor_speed_radps.size() == id.motor_count &&
      f.motor_voltage.size() == id.motor_count && f.pult.size() == id.controls.size();
  bool ok = sizes && std::isfinite(f.sim_time_s) && allFinite(f.poses) &&
            allFinite(f.motor_angle_rad) && allFinite(f.motor_speed_radps) &&
            allFinite(f.motor_voltage) && allFinite(f.pult) && std::isfinite(f.score);
  for (std::size_t b = 0; ok && b + 7 <= f.poses.size(); b += 7) {
    const double n = f.poses[b + 3] * f.poses[b + 3] + f.poses[b + 4] * f.poses[b + 4] +
                     f.poses[b + 5] * f.poses[b + 5] + f.poses[b + 6] * f.poses[b + 6];
    ok = std::abs(n - 1.0) < 1e-6;  // the solver keeps unit quaternions to ~1e-15
  }
  if (!ok) {
    ++drops_.malformed;
    return false;
  }
  if (have_last_ && f.run_id == last_run_ && f.frame <= last_frame_) {
    ++drops_.out_of_order;
    return false;
  }
  have_last_ = true;
  last_run_ = f.run_id;
  last_frame_ = f.frame;
  return true;
}

void applyFrame(const StateFrame& f, Session& session) {
  SessionState st = session.state();
  dynamics::State& s = st.dynamics;
  s.step = f.step;
  s.time_s = f.sim_time_s;
  for (std::size_t b = 0; b < s.bodies.size() && 7 * b + 7 <= f.poses.size(); ++b) {
    const double* p = &f.poses[7 * b];
    s.bodies[b].position_m = dynamics::Vec3(p[0], p[1], p[2]);
    s.bodies[b].orientation = dynamics::Quat(p[3], p[4], p[5], p[6]);
    s.bodies[b].linear_velocity_mps.setZero();
    s.bodies[b].angular_velocity_radps.setZero();
  }
  for (std::size_t m = 0; m < s.motors.size() && m < f.motor_voltage.size(); ++m) {
    s.motors[m].angle_rad = f.motor_angle_rad[m];
    s.motors[m].speed_radps = f.motor_speed_radps[m];
    s.motors[m].voltage = f.motor_voltage[m];
  }
  if (f.pult.size() == st.pult.values.size()) st.pult.values = f.pult;
  session.restore(st);
}

std::string poseTraceLine(std::uint64_t step, const std::vector<double>& poses) {
  std::string line = fmt::format("{}", step);
  for (double v : poses) fmt::format_to(std::back_inserter(line), " {:a}", v);
  return line;
}

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Everything the server does between frames with what came over the bus.
class ServerLink {
 public:
  ServerLink(Bus& bus, const Scene& scene, const ServeOptions& options, std::uint64_t run_id)
      : bus_(bus), scene_(scene), options_(options), run_id_(run_id) {
    if (!options.trace_path.empty()) {
      trace_ = std::fopen(options.trace_path.c_str(), "w");
      if (!trace_) throw std::runtime_error(options.trace_path + ": cannot write the pose trace");
    }
    if (!options.events_path.empty()) {
      events_ = std::fopen(options.events_path.c_str(), "w");
      if (!events_) throw std::runtime_error(options.events_path + ": cannot write the event log");
    }
    if (options.publish_thread) {
      publisher_ = std::make_unique<LatestWriter<StateFrame>>(
          [&bus](const StateFrame& frame) { bus.publishState(frame); });
    }
  }
  ~ServerLink() {
    if (trace_) std::fclose(trace_);
    if (events_) std::fclose(events_);
  }
  ServerLink(const ServerLink&) = delete;
  ServerLink& operator=(const ServerLink&) = delete;

  RunControl control;
  ServeResult result;

  /// After the run: writes the frame still waiting, stops the writer thread and takes its figures
  /// into `result`.
  void finishWriting() {
    if (!publisher_) return;
    publisher_->stop();
    result.state_write_time = publisher_->writeTimes();
    result.frames_superseded = publisher_->superseded();
  }

  void beforeSteps(Session& session) {
    if (!initial_) initial_ = session.state();
    if (faults_applied_.size() != options_.faults.size())
      faults_applied_.assign(options_.faults.size(), 0);
    for (std::size_t k = 0; k < options_.faults.size(); ++k) {
      if (!faults_applied_[k] && options_.faults[k].at_s <= session.time() + 1e-9) {
        const ScheduledFault& f = options_.faults[k];
        if (f.sensor >= 0) {
          event(session, "fault",
                fmt::format("scenario: sensor {} {} (value {:g})", f.signal,
                            sensorFaultName(f.sensor_fault.kind), f.sensor_fault.value));
        } else if (f.control >= 0) {
          const double value =
              f.hold_current ? session.state().pult.values[static_cast<std::size_t>(f.control)]
                             : f.control_fault.value;
          event(session, "fault",
                fmt::format("scenario: control {} {} (value {:g})",
                            scene_.pult.controls[static_cast<std::size_t>(f.control)].name,
                            controlFaultName(f.control_fault.kind), value));
        } else {
          event(session, "fault",
                fmt::format("scenario: motor {} {} (value {:g})",
                            scene_.model.motors[static_cast<std::size_t>(f.motor)].name,
                            motorFaultName(f.fault.kind), f.fault.value));
        }
      }
    }
    applyDueFaults(options_.faults, faults_applied_, session);
    for (; changes_applied_ < options_.changes.size() &&
           options_.changes[changes_applied_].at_s <= session.time() + 1e-9;
         ++changes_applied_) {
      setParameter(options_.changes[changes_applied_].change, "scenario", session);
    }
    PultInput pult;
    while (bus_.takePult(pult)) applyPult(pult, session);
    Command command;
    while (bus_.takeCommand(command)) applyCommand(command, session);
    if (options_.drops) *options_.drops = result.drops;
    // The grader's sample of the initial state (after the first step's inputs, as a replay).
    if (options_.scorer && !graded_start_) {
      options_.scorer->sample(session);
      graded_start_ = true;
    }
  }

  /// Publishes the grader's events not yet published, each with the running score.
  void publishScoreEvents() {
    if (!options_.scorer) return;
    const Scorer& scorer = *options_.scorer;
    for (; score_events_ < scorer.events().size(); ++score_events_) {
      event(scorer.step(), scorer.time(), "score",
            fmt::format("{}; score {:g}/100", scorer.events()[score_events_].text,
                        std::round(scorer.live().score * 10.0) / 10.0));
    }
  }
  /// After the grader's finish(): what the end decided, and the final score.
  void publishFinalScore() {
    if (!options_.scorer || !options_.scorer->live().scored) return;
    publishScoreEvents();
    const ScoreSheet sheet = options_.scorer->sheet();
    event(options_.scorer->step(), options_.scorer->time(), "score",
          fmt::format("final score {:g}/100, pass mark {:g}: {}",
                      std::round(sheet.score * 10.0) / 10.0, sheet.pass_mark,
                      sheet.passed ? "PASSED" : "NOT PASSED"));
  }

  bool afterFrame(const Session& session) {
    frameOf(session, run_id_, frames_++, control.paused, frame_);
    if (options_.scorer) {
      frame_.scored = options_.scorer->live().scored;
      frame_.score = options_.scorer->live().score;
      publishScoreEvents();
    }
    if (trace_) {
      std::fputs(poseTraceLine(frame_.step, frame_.poses).c_str(), trace_);
      std::fputc('\n', trace_);
      std::fflush(trace_);
    }
    const auto write_start = std::chrono::steady_clock::now();
    if (publisher_) {
      publisher_->post(frame_);
      result.state_handoff_time.add(secondsSince(write_start));
    } else {
      bus_.publishState(frame_);
      result.state_write_time.add(secondsSince(write_start));
    }
    // The identity again every ~2 s: cheap, and a station whose latched copy was lost recovers.
    if (frames_ % 120 == 0) bus_.publishIdentity(identityOf(scene_, run_id_));
    return true;
  }

 private:
  void event(const Session& session, const std::string& kind, const std::string& text) {
    event(session.stepIndex(), session.time(), kind, text);
  }
  void event(std::uint64_t step, double t, const std::string& kind, const std::string& text) {
    Event e;
    e.run_id = run_id_;
    e.step = step;
    e.sim_time_s = t;
    e.kind = kind;
    e.text = text;
    bus_.publishEvent(e);
    spdlog::info("serve: step {} {}: {}", e.step, kind, text);
    if (events_) {
      std::fputs(fmt::format("{} {:.6f} {} {}\n", e.step, e.sim_time_s, kind, text).c_str(),
                 events_);
      std::fflush(events_);
    }
  }

  // Sequence numbers per sender must increase; an older or repeated one is counted and dropped.
  bool inOrder(std::map<std::string, std::uint64_t>& last, const std::string& sender,
               std::uint64_t seq) {
    auto [it, first] = last.try_emplace(sender, seq);
    if (first) return true;
    if (seq <= it->second) {
      ++result.drops.out_of_order;
      return false;
    }
    it->second = seq;
    return true;
  }

  // In a secured class a sample counts only under its writer's authenticated name (the partition
  // the writer's permissions confine it to): a station cannot drive another station's pult, nor
  // an instructor sign as another. Each impostor is counted; the first of each pair is logged.
  bool authentic(const std::string& claimed, const std::string& writer, const char* what,
                 const char* role) {
    if (options_.address.security.empty() || claimed == writer) return true;
    ++result.drops.impostor;
    if (impostors_logged_.insert(writer + "\n" + claimed).second) {
      spdlog::warn("serve: {} under {} \"{}\" from {}: dropped (counted, not logged again)", what,
                   role, claimed,
                   writer.empty() ? std::string("a writer of no authenticated name")
                                  : fmt::format("{} \"{}\"", role, writer));
    }
    return false;
  }

  void applyPult(const PultInput& p, Session& session) {
    const bool ok =
        !p.station.empty() && p.values.size() == scene_.pult.controls.size() && allFinite(p.values);
    if (!ok) {
      ++result.drops.malformed;
      return;
    }
    if (!authentic(p.station, p.writer, "pult sample", "station")) return;
    if (!inOrder(pult_seq_, p.station, p.seq)) return;
    ++result.pult_samples;
    for (std::size_t c = 0; c < p.values.size(); ++c)
      session.setControl(static_cast<int>(c), p.values[c]);
  }

  int motorIndex(const std::string& name) const {
    for (std::size_t m = 0; m < scene_.model.motors.size(); ++m) {
      if (scene_.model.motors[m].name == name) return static_cast<int>(m);
    }
    return -1;
  }
  int controlIndex(const std::string& name) const {
    for (std::size_t c = 0; c < scene_.pult.controls.size(); ++c) {
      if (scene_.pult.controls[c].name == name) return static_cast<int>(c);
    }
    return -1;
  }

  void applyCommand(const Command& c, Session& session) {
    const int kind = static_cast<int>(c.kind);
    if (c.issuer.empty() || kind < 1 || kind > 6 || !std::isfinite(c.value)) {
      ++result.drops.malformed;
      return;
    }
    if (!authentic(c.issuer, c.writer, "command", "instructor")) return;
    if (!inOrder(command_seq_, c.issuer, c.seq)) return;
    ++result.commands;
    const std::string who = c.issuer;
    switch (c.kind) {
      case CommandKind::Pause:
        control.paused = true;
        event(session, "command", "pause by " + who);
        return;
      case CommandKind::Resume:
        control.paused = false;
        event(session, "command", "resume by " + who);
        return;
      case CommandKind::Reset:
        if (!c.target.empty() && c.target != "start") {
          event(session, "refused",
                fmt::format("reset to \"{}\": the only keyframe is \"start\"", c.target));
        } else if (!options_.record_path.empty()) {
          event(session, "refused", "reset while recording (the recording would jump)");
        } else {
          // Controls freed first: a stuck one would keep its held value through the restore.
          for (std::size_t k = 0; k < session.controlFaults().size(); ++k)
            session.setControlFault(static_cast<int>(k), {});
          session.restore(*initial_);
          for (std::size_t m = 0; m < session.motorFaults().size(); ++m)
            session.setMotorFault(static_cast<int>(m), {});
          for (std::size_t k = 0; k < session.sensorFaults().size(); ++k)
            session.setSensorFault(static_cast<int>(k), {});
          faults_applied_.assign(options_.faults.size(), 0);  // the scenario's faults are due again
          if (options_.scorer) {  // a new attempt: graded from the start again
            options_.scorer->reset();
            graded_start_ = false;
            score_events_ = 0;
          }
          event(session, "command", "reset to start by " + who);
        }
        return;
      case CommandKind::InjectFault:
      case CommandKind::ClearFault: applyFault(c, session); return;
      case CommandKind::SetParameter:
        // The shortest digits that read back as the same double.
        setParameter(Override{c.target, fmt::format("{}", c.value)}, c.issuer, session);
        return;
    }
  }

  // Parameters are compiled into the model at load: the scene is loaded again with one more
  // override (as `--set`) and the session goes on with it from its current state, when the
  // structure is the same. The recording gets a `c` line, so a replay changes it at this step.
  void setParameter(const Override& change, const std::string& who, Session& session) {
    const std::string what = fmt::format("set {}={}", change.path, change.value);
    std::vector<Override> overrides = session.scene().overrides;
    std::string why;
    try {
      overrides.push_back(parseOverride(change.path + "=" + change.value));
      Scene next = loadScene(session.scene().file, overrides);
      if (next.source_hash != session.scene().source_hash) {
        why = "the scene file has changed on disk since the session started";
      } else {
        why = session.changeScene(std::move(next));
      }
    } catch (const SceneInvalid& e) {
      why = e.what();
    } catch (const SceneError& e) {
      why = e.what();
    }
    if (!why.empty()) {
      std::replace(why.begin(), why.end(), '\n', ' ');  // one event line
      event(session, "refused", fmt::format("{}: {}", what, why));
      return;
    }
    event(session, "set", fmt::format("{} by {}", what, who));
  }

  void applyFault(const Command& c, Session& session) {
    const bool clear = c.kind == CommandKind::ClearFault;
    // A motor and a control may share a name (scenes/grasp.yaml: `lift`): axis_stuck names the
    // control, the other faults the motor, and clear frees both.
    const int m = motorIndex(c.target), k = controlIndex(c.target);
    if (k >= 0 && (clear || c.fault == "axis_stuck")) {
      // The session holds it (Session::setControlFault): stations' samples no longer move it, and
      // the recording gets an `a` line.
      ControlFault fault;
      if (!clear)
        fault = {ControlFault::Kind::AxisStuck,
                 session.state().pult.values[static_cast<std::size_t>(k)]};
      session.setControlFault(k, fault);
      event(session, "fault",
            clear ? fmt::format("control {} free again ({})", c.target, c.issuer)
                  : fmt::format("control {} axis_stuck at {:g} by {}", c.target, fault.value,
                                c.issuer));
      if (!clear || m < 0) return;
    }
    if (m >= 0) {
      MotorFault fault;
      if (!clear &&
          (!parseMotorFaultKind(c.fault, fault.kind) || fault.kind == MotorFault::Kind::None)) {
        event(session, "refused",
              fmt::format(
                  "fault \"{}\" of motor {}: expected stuck, weak, reversed or brake_released",
                  c.fault, c.target));
        return;
      }
      if (fault.kind == MotorFault::Kind::BrakeReleased &&
          !(scene_.model.motors[static_cast<std::size_t>(m)].brake_torque > 0.0)) {
        event(session, "refused",
              fmt::format("fault brake_released of motor {}: it has no brake", c.target));
        return;
      }
      if (fault.kind == MotorFault::Kind::Stuck) {
        fault.value = session.dynamics().motors[static_cast<std::size_t>(m)].voltage;
      } else if (fault.kind == MotorFault::Kind::Weak) {
        fault.value = c.value > 0.0 && c.value <= 1.0 ? c.value : 0.5;
      }
      session.setMotorFault(m, fault);
      event(session, "fault",
            clear ? fmt::format("motor {} healthy again ({})", c.target, c.issuer)
                  : fmt::format("motor {} {} (value {:g}) by {}", c.target, c.fault, fault.value,
                                c.issuer));
      return;
    }
    if (k >= 0) {
      event(session, "refused",
            fmt::format("fault \"{}\" of control {}: expected axis_stuck", c.fault, c.target));
      return;
    }
    if (c.target.find('.') != std::string::npos) {
      applySensorFault(c, session);
      return;
    }
    event(session, "refused",
          fmt::format("fault target \"{}\": no motor or control of that name", c.target));
  }

  // A target with a dot is a signal the scheme reads: fault:joint.arm.position:noise:0.01.
  void applySensorFault(const Command& c, Session& session) {
    const bool clear = c.kind == CommandKind::ClearFault;
    std::string error;
    const int k = session.schemeSensor(c.target, error);
    if (k < 0) {
      event(session, "refused", fmt::format("fault target \"{}\": {}", c.target, error));
      return;
    }
    SensorFault fault;
    if (!clear &&
        (!parseSensorFaultKind(c.fault, fault.kind) || fault.kind == SensorFault::Kind::None)) {
      event(session, "refused",
            fmt::format("fault \"{}\" of sensor {}: expected noise or dropout", c.fault, c.target));
      return;
    }
    if (fault.kind == SensorFault::Kind::Noise) {
      if (!(c.value > 0.0 && std::isfinite(c.value))) {
        event(session, "refused",
              fmt::format("noise of sensor {}: expected a standard deviation > 0", c.target));
        return;
      }
      fault.value = c.value;
    }
    session.setSensorFault(k, fault);
    fault = session.sensorFaults()[static_cast<std::size_t>(k)];
    event(session, "fault",
          clear ? fmt::format("sensor {} healthy again ({})", c.target, c.issuer)
                : fmt::format("sensor {} {} (value {:g}) by {}", c.target, c.fault, fault.value,
                              c.issuer));
  }

  Bus& bus_;
  const Scene& scene_;
  const ServeOptions& options_;
  std::uint64_t run_id_;
  std::optional<SessionState> initial_;
  std::vector<char> faults_applied_;
  std::size_t changes_applied_ = 0;
  std::map<std::string, std::uint64_t> pult_seq_, command_seq_;
  std::set<std::string> impostors_logged_;
  StateFrame frame_;
  std::uint64_t frames_ = 0;
  std::FILE* trace_ = nullptr;
  std::FILE* events_ = nullptr;
  bool graded_start_ = false;
  std::size_t score_events_ = 0;  // of the grader's events, published
  // The state writer thread (null: frames are written inline, ServeOptions::publish_thread off).
  // Last member: joined first, while everything it uses still exists.
  std::unique_ptr<LatestWriter<StateFrame>> publisher_;
};

}  // namespace

ServeResult serve(const Scene& scene, const ServeOptions& options) {
  if (scene.model.bodies.size() > 1024 || scene.model.motors.size() > 512 ||
      scene.pult.controls.size() > 256) {
    throw std::runtime_error(
        fmt::format("{}: too large to serve (at most 1024 bodies, 512 motors, 256 controls: "
                    "net/idl/simtrainer.idl)",
                    scene.file));
  }
  std::random_device entropy;
  const std::uint64_t run_id =
      (std::uint64_t{entropy()} << 32) ^ entropy() ^ static_cast<std::uint64_t>(monotonicNs());
  Bus bus(options.address, Bus::Role::Server);
  if (options.address.security.empty()) {
    spdlog::warn(
        "serve: an OPEN class: anyone who knows domain {} and partition \"{}\" can join, drive "
        "the pult and send commands (--security DIR: docs/network.md)",
        options.address.domain, options.address.partition);
  }
  ServerLink link(bus, scene, options, run_id);
  bus.publishIdentity(identityOf(scene, run_id));
  const auto wait_end =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(options.wait_timeout_s);
  while (bus.stateSubscribers() < options.wait_for_subscribers &&
         std::chrono::steady_clock::now() < wait_end &&
         !(options.interrupt && options.interrupt->load())) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (options.wait_for_subscribers > 0) {
    bus.identityAcknowledged(
        std::chrono::duration<double>(wait_end - std::chrono::steady_clock::now()).count());
  }

  RunOptions run;
  run.duration_s =
      options.duration_s > 0.0 ? options.duration_s : std::numeric_limits<double>::infinity();
  run.record_path = options.record_path;
  run.realtime = options.realtime;
  run.threads = options.threads;
  run.interrupt = options.interrupt;
  run.control = &link.control;
  run.before_steps = [&link](Session& session) { link.beforeSteps(session); };
  run.after_frame = [&link](const Session& session, const RunResult&,
                            const std::vector<std::string>&) { return link.afterFrame(session); };
  run.record_header = options.record_header;
  if (options.scorer) {
    run.after_step = [scorer = options.scorer](const Session& session,
                                               const dynamics::StepReport& report) {
      scorer->sample(session, &report);
    };
  }
  ServeResult result;
  result.run = runHeadless(scene, run);
  // Complete: the whole duration (until interrupted without one) without a fault.
  result.complete =
      !result.run.fault &&
      (std::isfinite(run.duration_s)
           ? result.run.steps == stepCount(run.duration_s, scene.model.solver.time_step_s)
           : !result.run.interrupted);
  if (options.scorer) {
    options.scorer->finish(result.complete);  // the tasks still open are decided now
    link.publishFinalScore();
  }
  link.finishWriting();
  result.state_write_time = link.result.state_write_time;
  result.state_handoff_time = link.result.state_handoff_time;
  result.frames_superseded = link.result.frames_superseded;
  result.drops = link.result.drops;
  result.commands = link.result.commands;
  result.pult_samples = link.result.pult_samples;
  result.participants_refused = bus.participantsRefused();
  result.writers_refused = bus.writersRefused();
  if (options.drops) *options.drops = result.drops;
  return result;
}

}  // namespace sim::engine::remote
