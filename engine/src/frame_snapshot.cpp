#include <engine/frame_snapshot.h>
#include <engine/snapshot.h>

#include <utility>

namespace sim::engine {

void takeSnapshot(const Session& session, const RunResult& so_far,
                  const std::vector<std::string>& notes, bool contacts, FrameSnapshot& out) {
  const dynamics::State& state = session.dynamics();
  out.frame = so_far.frames;
  out.step = state.step;
  out.time_s = state.time_s;
  bodyPoses(state, out.poses);
  out.pult = session.state().pult.values;
  out.motor_voltage.resize(state.motors.size());
  out.motor_speed.resize(state.motors.size());
  for (std::size_t m = 0; m < state.motors.size(); ++m) {
    out.motor_voltage[m] = state.motors[m].voltage;
    out.motor_speed[m] = state.motors[m].speed_radps;
  }
  out.has_contacts = contacts;
  if (contacts) {
    out.contacts = session.simulator().contacts(state);
  } else {
    out.contacts.clear();
  }
  out.sim.real_time_factor = so_far.realTimeFactor();
  out.sim.frame_work_ms = so_far.frame_time.count() > 0 ? 1e3 * so_far.frame_time.mean() : 0.0;
  out.sim.overruns = so_far.overruns;
  out.sim.behind = so_far.behind;
  out.paused = so_far.paused;
  out.reset_refused = so_far.reset_refused;
  out.fault = so_far.fault ? so_far.fault->describe() : std::string();
  out.notes = notes;
  out.score = so_far.score;
  out.replay = false;
}

void SnapshotChannel::publish() {
  {
    std::lock_guard lock(mutex_);
    std::swap(back_, middle_);
    if (fresh_) ++superseded_;
    fresh_ = true;
    ++published_;
  }
  fresh_cv_.notify_one();
}

void SnapshotChannel::close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  fresh_cv_.notify_all();
}

bool SnapshotChannel::take(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  if (!fresh_) fresh_cv_.wait_for(lock, timeout, [this] { return fresh_ || closed_; });
  if (!fresh_) return false;
  std::swap(front_, middle_);
  fresh_ = false;
  return true;
}

bool SnapshotChannel::closed() const {
  std::lock_guard lock(mutex_);
  return closed_;
}

std::uint64_t SnapshotChannel::published() const {
  std::lock_guard lock(mutex_);
  return published_;
}

std::uint64_t SnapshotChannel::superseded() const {
  std::lock_guard lock(mutex_);
  return superseded_;
}

}  // namespace sim::engine
