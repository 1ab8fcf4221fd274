#include <engine/recording.h>
#include <engine/replayer.h>

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <type_traits>

#ifndef SIMTRAINER_GIT_COMMIT
#define SIMTRAINER_GIT_COMMIT "unknown"
#endif
#ifndef SIMTRAINER_VERSION
#define SIMTRAINER_VERSION "0"
#endif

namespace sim::engine {

namespace {

constexpr const char* kMagic = "simtrainer-recording 1";

std::uint64_t fnv(const void* data, std::size_t size, std::uint64_t h = 14695981039346656037ull) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  return h;
}

std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace

std::string buildIdentity() {
  return fmt::format("{} {} gcc-{}", SIMTRAINER_VERSION, SIMTRAINER_GIT_COMMIT, __VERSION__);
}

std::vector<std::uint64_t> bodyHashes(const dynamics::State& state) {
  std::vector<std::uint64_t> out;
  out.reserve(state.bodies.size());
  for (const dynamics::BodyState& b : state.bodies) {
    std::uint64_t h = fnv(b.position_m.data(), 3 * sizeof(double));
    h = fnv(b.orientation.coeffs().data(), 4 * sizeof(double), h);
    h = fnv(b.linear_velocity_mps.data(), 3 * sizeof(double), h);
    h = fnv(b.angular_velocity_radps.data(), 3 * sizeof(double), h);
    h = fnv(&b.slow_time_s, sizeof b.slow_time_s, h);
    const unsigned char asleep = b.asleep ? 1 : 0;
    out.push_back(fnv(&asleep, 1, h));
  }
  return out;
}

RecordingWriter::RecordingWriter(const std::string& path, const Scene& scene,
                                 const RecordingHeader& header)
    : path_(path), steps_per_frame_(scene.stepsPerFrame()) {
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_)
    throw RecordingError(fmt::format("{}: cannot write recording: {}", path, std::strerror(errno)));
  std::error_code ec;
  const auto scene_path = std::filesystem::absolute(scene.file, ec).lexically_normal().string();
  line(kMagic);
  line("build " + buildIdentity());
  line(fmt::format("scene {} {:016x}", scene_path, scene.source_hash));
  if (!header.scenario_path.empty()) {
    line(
        fmt::format("scenario {} {:016x}",
                    std::filesystem::absolute(header.scenario_path, ec).lexically_normal().string(),
                    header.scenario_hash));
  }
  if (!header.trainee.empty()) line("trainee " + header.trainee);
  if (!header.started.empty()) line("started " + header.started);
  for (const Override& o : scene.overrides) line(fmt::format("set {}={}", o.path, o.value));
  overrides_written_ = scene.overrides.size();
  std::string controls = "controls";
  for (const ControlDef& c : scene.pult.controls) controls += " " + c.name;
  line(controls);
  line("start");
  std::fflush(file_);
}

RecordingWriter::~RecordingWriter() {
  if (file_) std::fclose(file_);
}

void RecordingWriter::line(const std::string& text) {
  if (std::fputs(text.c_str(), file_) < 0 || std::fputc('\n', file_) == EOF) {
    throw RecordingError(fmt::format("{}: write failed: {}", path_, std::strerror(errno)));
  }
}

void RecordingWriter::writeFaults(const Session& session) {
  // One `<tag> <step> <index> <kind> <value>` line per fault that changed since the last call.
  auto changed = [&](const char* tag, const auto& faults, auto& last, auto name) {
    if (last.size() != faults.size()) last.assign(faults.size(), {});
    for (std::size_t i = 0; i < faults.size(); ++i) {
      if (faults[i] == last[i]) continue;
      line(fmt::format("{} {} {} {} {:.17g}", tag, session.stepIndex(), i, name(faults[i].kind),
                       faults[i].value));
      last[i] = faults[i];
    }
  };
  changed("f", session.motorFaults(), last_faults_, motorFaultName);
  changed("s", session.sensorFaults(), last_sensor_faults_, sensorFaultName);
  changed("a", session.controlFaults(), last_control_faults_, controlFaultName);
}

void RecordingWriter::beforeStep(const Session& session) {
  const std::vector<Override>& overrides = session.scene().overrides;
  for (; overrides_written_ < overrides.size(); ++overrides_written_) {
    const Override& o = overrides[overrides_written_];
    line(fmt::format("c {} {}={}", session.stepIndex(), o.path, o.value));
  }
  writeFaults(session);
  const std::vector<double>& values = session.state().pult.values;
  // Bit patterns, not values (a -0 after a +0 is a change the replay must see); an empty pult
  // (a scene without one) has no data to compare.
  if (wrote_pult_ && values.size() == last_pult_.size() &&
      (values.empty() ||
       std::memcmp(values.data(), last_pult_.data(), values.size() * sizeof(double)) == 0)) {
    return;
  }
  writeFaults(session);
  std::string text = fmt::format("p {}", session.stepIndex());
  for (double v : values) text += fmt::format(" {:.17g}", v);
  line(text);
  last_pult_ = values;
  wrote_pult_ = true;
}

const char* motorFaultName(MotorFault::Kind kind) {
  switch (kind) {
    case MotorFault::Kind::Stuck: return "stuck";
    case MotorFault::Kind::Weak: return "weak";
    case MotorFault::Kind::Reversed: return "reversed";
    case MotorFault::Kind::BrakeReleased: return "brake_released";
    case MotorFault::Kind::None: break;
  }
  return "none";
}

bool parseMotorFaultKind(const std::string& name, MotorFault::Kind& kind) {
  for (auto k : {MotorFault::Kind::None, MotorFault::Kind::Stuck, MotorFault::Kind::Weak,
                 MotorFault::Kind::Reversed, MotorFault::Kind::BrakeReleased}) {
    if (name == motorFaultName(k)) {
      kind = k;
      return true;
    }
  }
  return false;
}

const char* sensorFaultName(SensorFault::Kind kind) {
  switch (kind) {
    case SensorFault::Kind::Noise: return "noise";
    case SensorFault::Kind::Dropout: return "dropout";
    case SensorFault::Kind::None: break;
  }
  return "none";
}

bool parseSensorFaultKind(const std::string& name, SensorFault::Kind& kind) {
  for (auto k : {SensorFault::Kind::None, SensorFault::Kind::Noise, SensorFault::Kind::Dropout}) {
    if (name == sensorFaultName(k)) {
      kind = k;
      return true;
    }
  }
  return false;
}

const char* controlFaultName(ControlFault::Kind kind) {
  return kind == ControlFault::Kind::AxisStuck ? "axis_stuck" : "none";
}

bool parseControlFaultKind(const std::string& name, ControlFault::Kind& kind) {
  for (auto k : {ControlFault::Kind::None, ControlFault::Kind::AxisStuck}) {
    if (name == controlFaultName(k)) {
      kind = k;
      return true;
    }
  }
  return false;
}

void RecordingWriter::afterStep(const Session& session) {
  const std::uint64_t step = session.stepIndex();
  line(fmt::format("h {} {:016x}", step, session.hash()));
  if (step % static_cast<std::uint64_t>(steps_per_frame_) == 0) {
    std::string text = fmt::format("b {}", step);
    for (std::uint64_t h : bodyHashes(session.dynamics())) text += fmt::format(" {:016x}", h);
    line(text);
    std::fflush(file_);
  }
}

void RecordingWriter::finish(const Session& session, const std::string& outcome) {
  if (finished_) return;
  finished_ = true;
  line(fmt::format("end {} {}", session.stepIndex(), outcome));
  if (std::fflush(file_) != 0) throw RecordingError(path_ + ": flush failed");
}

Recording readRecording(const std::string& path, RecordingRead mode) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RecordingError(path + ": cannot open recording");
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  Recording r;
  r.file = path;
  std::size_t start = 0;
  int number = 0;
  auto fail = [&](const std::string& what) {
    throw RecordingError(fmt::format("{}:{}: {}", path, number, what));
  };
  auto hex = [&](const std::string& w) {
    std::uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(w.data(), w.data() + w.size(), v, 16);
    if (ec != std::errc() || ptr != w.data() + w.size())
      fail("expected a hex hash, got \"" + w + "\"");
    return v;
  };
  auto integer = [&](const std::string& w) {
    std::uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
    if (ec != std::errc() || ptr != w.data() + w.size())
      fail("expected a step number, got \"" + w + "\"");
    return v;
  };
  // `<tag> <step> <index> <kind> <value>`: a motor or sensor fault from that step on.
  auto faultLine = [&](const std::vector<std::string>& w, auto& faults, auto parseKind,
                       const char* form) {
    typename std::decay_t<decltype(faults)>::mapped_type::value_type::second_type fault;
    double value = 0.0;
    if (w.size() != 5 || !parseKind(w[3], fault.kind) ||
        std::from_chars(w[4].data(), w[4].data() + w[4].size(), value).ec != std::errc()) {
      fail(std::string("expected: ") + form);
    }
    fault.value = value;
    faults[integer(w[1])].emplace_back(static_cast<int>(integer(w[2])), fault);
  };
  try {
    while (start < text.size()) {
      const auto end = text.find('\n', start);
      if (end == std::string::npos) break;  // a line cut off by a kill: ignored
      const std::string line = text.substr(start, end - start);
      start = end + 1;
      ++number;
      if (number == 1) {
        if (line != kMagic)
          fail("not a simtrainer recording (expected \"" + std::string(kMagic) + "\")");
        continue;
      }
      const auto w = words(line);
      if (w.empty()) continue;
      const std::string& tag = w[0];
      if (tag == "build") {
        r.build = line.substr(6);
      } else if (tag == "scene") {
        if (w.size() != 3) fail("expected: scene <path> <hash>");
        r.scene_path = w[1];
        r.scene_hash = hex(w[2]);
      } else if (tag == "scenario") {
        if (w.size() != 3) fail("expected: scenario <path> <hash>");
        r.header.scenario_path = w[1];
        r.header.scenario_hash = hex(w[2]);
      } else if (tag == "trainee") {
        r.header.trainee = line.size() > 8 ? line.substr(8) : "";
      } else if (tag == "started") {
        if (w.size() != 2) fail("expected: started <time>");
        r.header.started = w[1];
      } else if (tag == "set") {
        try {
          r.overrides.push_back(parseOverride(line.substr(4)));
        } catch (const SceneError& e) {
          fail(e.message());
        }
      } else if (tag == "controls") {
        r.controls.assign(w.begin() + 1, w.end());
      } else if (tag == "start") {
      } else if (tag == "p") {
        if (w.size() != r.controls.size() + 2)
          fail(fmt::format("expected {} pult values", r.controls.size()));
        std::vector<double> values;
        for (std::size_t i = 2; i < w.size(); ++i) {
          double v = 0.0;
          auto [ptr, ec] = std::from_chars(w[i].data(), w[i].data() + w[i].size(), v);
          if (ec != std::errc() || ptr != w[i].data() + w[i].size())
            fail("expected a number, got \"" + w[i] + "\"");
          values.push_back(v);
        }
        r.pult[integer(w[1])] = std::move(values);
      } else if (tag == "f") {
        faultLine(w, r.faults, parseMotorFaultKind,
                  "f <step> <motor> <none|stuck|weak|reversed|brake_released> <value>");
      } else if (tag == "s") {
        faultLine(w, r.sensor_faults, parseSensorFaultKind,
                  "s <step> <sensor> <none|noise|dropout> <value>");
      } else if (tag == "a") {
        faultLine(w, r.control_faults, parseControlFaultKind,
                  "a <step> <control> <none|axis_stuck> <value>");
      } else if (tag == "c") {
        if (w.size() != 3) fail("expected: c <step> <key>=<value>");
        try {
          r.changes[integer(w[1])].push_back(parseOverride(w[2]));
        } catch (const SceneError& e) {
          fail(e.message());
        }
      } else if (tag == "h") {
        if (w.size() != 3) fail("expected: h <step> <hash>");
        if (integer(w[1]) != r.hashes.size() + 1) fail("steps out of order");
        r.hashes.push_back(hex(w[2]));
      } else if (tag == "b") {
        std::vector<std::uint64_t> hashes;
        for (std::size_t i = 2; i < w.size(); ++i) hashes.push_back(hex(w[i]));
        r.body_hashes[integer(w[1])] = std::move(hashes);
      } else if (tag == "end") {
        if (w.size() != 3) fail("expected: end <steps> <outcome>");
        r.complete = true;
        r.outcome = w[2];
      } else {
        fail("unknown line \"" + tag + "\"");
      }
    }
  } catch (const RecordingError& e) {
    if (mode == RecordingRead::Strict || r.scene_path.empty()) throw;
    // Keep the steps up to the last frame whose body hashes were written (a frame's end).
    r.damage = e.what();
    const std::uint64_t last_frame = r.body_hashes.empty() ? 0 : r.body_hashes.rbegin()->first;
    if (r.hashes.size() > last_frame) r.hashes.resize(last_frame);
    r.complete = false;
  }
  if (number == 0) throw RecordingError(path + ": empty recording");
  if (r.scene_path.empty()) throw RecordingError(path + ": no scene line");
  return r;
}

ReplayResult replay(const Recording& recording, bool verify) {
  ReplayOptions options;
  options.verify = verify;
  return replay(recording, options);
}

ReplayResult replay(const Recording& recording, const ReplayOptions& options) {
  Replayer replayer(recording, 2.0, options.allow_changed_scene);
  ReplayResult result;
  if (options.on_step) {
    replayer.applyInputs();
    options.on_step(replayer.session(), nullptr);
  }
  while (!replayer.atEnd()) {
    const dynamics::StepReport report = replayer.stepOnce();
    if (options.on_step) options.on_step(replayer.session(), &report);
    ++result.steps;
    if (options.verify && !replayer.matches()) {
      result.diverged = true;
      result.diverged_step = replayer.step();
      // Name the first body that differs at this or the next frame end with body hashes.
      const auto frame = recording.body_hashes.lower_bound(replayer.step());
      if (frame != recording.body_hashes.end()) {
        while (replayer.step() < frame->first && !replayer.atEnd()) replayer.stepOnce();
        if (replayer.step() == frame->first) {
          const auto now = bodyHashes(replayer.session().dynamics());
          for (std::size_t b = 0; b < now.size() && b < frame->second.size(); ++b) {
            if (now[b] != frame->second[b]) {
              result.diverged_body = replayer.session().scene().model.bodies[b].name;
              break;
            }
          }
        }
      }
      break;
    }
  }
  result.final_hash = replayer.session().hash();
  result.final_state = replayer.session().dynamics();
  return result;
}

std::string recordingToScenario(const Recording& recording, double time_step_s) {
  std::string text = fmt::format("# Made from the recording {} ({} steps).\n", recording.file,
                                 recording.hashes.size());
  text += fmt::format("scene: {}\n", recording.scene_path);
  if (!recording.overrides.empty()) {
    text += "set:\n";
    for (const Override& o : recording.overrides)
      text += fmt::format("  {}: {}\n", o.path, o.value);
  }
  text += fmt::format("duration: {:.17g}\n",
                      static_cast<double>(recording.hashes.size()) * time_step_s);
  if (!recording.changes.empty()) {
    text += "changes:\n";
    for (const auto& [step, changes] : recording.changes) {
      for (const Override& o : changes) {
        text += fmt::format("  - {{at: {:.17g}, set: {}, value: {}}}\n",
                            static_cast<double>(step) * time_step_s, o.path, o.value);
      }
    }
  }
  text += "timeline:\n";
  std::vector<double> last;
  for (const auto& [step, values] : recording.pult) {
    for (std::size_t c = 0; c < values.size(); ++c) {
      if (!last.empty() && last[c] == values[c]) continue;
      text +=
          fmt::format("  - {{at: {:.17g}, control: {}, set: {:.17g}}}\n",
                      static_cast<double>(step) * time_step_s, recording.controls[c], values[c]);
    }
    last = values;
  }
  return text;
}

}  // namespace sim::engine
