#include <engine/recording.h>
#include <engine/result_file.h>
#include <engine/scenario.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

namespace sim::engine {

namespace {

using Json = nlohmann::ordered_json;

std::string hex(std::uint64_t h) {
  return fmt::format("{:016x}", h);
}

std::string absolute(const std::string& path) {
  if (path.empty()) return path;
  std::error_code ec;
  return std::filesystem::absolute(path, ec).lexically_normal().string();
}

Json source(const ResultFile::Source& s) {
  return Json{{"name", s.name}, {"file", s.file}, {"hash", hex(s.hash)}};
}

Json orNull(const std::string& s) {
  return s.empty() ? Json(nullptr) : Json(s);
}

// Reading: every field checked, errors naming the file and the field's path.
class Reader {
 public:
  Reader(const std::string& file) : file_(file) {}
  [[noreturn]] void fail(const std::string& at, const std::string& what) const {
    throw ResultError(fmt::format("{}: {}: {}", file_, at, what));
  }
  const Json& get(const Json& j, const std::string& at, const char* key) const {
    if (!j.is_object()) fail(at, "expected an object");
    auto it = j.find(key);
    if (it == j.end()) fail(join(at, key), "missing");
    return *it;
  }
  std::string str(const Json& j, const std::string& at, const char* key,
                  bool nullable = false) const {
    const Json& v = get(j, at, key);
    if (nullable && v.is_null()) return {};
    if (!v.is_string()) fail(join(at, key), "expected a string");
    return v.get<std::string>();
  }
  double num(const Json& j, const std::string& at, const char* key) const {
    const Json& v = get(j, at, key);
    if (!v.is_number()) fail(join(at, key), "expected a number");
    return v.get<double>();
  }
  std::uint64_t count(const Json& j, const std::string& at, const char* key) const {
    const Json& v = get(j, at, key);
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0)) {
      fail(join(at, key), "expected a whole number >= 0");
    }
    return v.get<std::uint64_t>();
  }
  bool flag(const Json& j, const std::string& at, const char* key) const {
    const Json& v = get(j, at, key);
    if (!v.is_boolean()) fail(join(at, key), "expected true or false");
    return v.get<bool>();
  }
  const Json& list(const Json& j, const std::string& at, const char* key) const {
    const Json& v = get(j, at, key);
    if (!v.is_array()) fail(join(at, key), "expected a list");
    return v;
  }
  std::uint64_t hash(const Json& j, const std::string& at, const char* key) const {
    const std::string s = str(j, at, key);
    std::uint64_t h = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), h, 16);
    if (s.size() != 16 || ec != std::errc() || ptr != s.data() + s.size())
      fail(join(at, key), "expected 16 hex digits");
    return h;
  }
  ResultFile::Source src(const Json& j, const std::string& at) const {
    return {str(j, at, "name"), str(j, at, "file"), hash(j, at, "hash")};
  }
  static std::string join(const std::string& at, const std::string& key) {
    return at.empty() ? key : at + "." + key;
  }

 private:
  std::string file_;
};

}  // namespace

std::string utcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

ResultFile resultHeader(const Scene& scene, const Scenario* scenario, const std::string& trainee,
                        const std::string& started, const std::string& recording) {
  ResultFile r;
  r.trainee = trainee;
  r.started = started;
  r.build = buildIdentity();
  if (scenario)
    r.scenario =
        ResultFile::Source{scenario->name, absolute(scenario->file), scenario->source_hash};
  r.scene = ResultFile::Source{scene.name, absolute(scene.file), scene.source_hash};
  r.overrides = scene.overrides;
  r.recording = absolute(recording);
  r.time_step_s = scene.model.solver.time_step_s;
  return r;
}

void takeGrade(ResultFile& result, const Scorer& scorer) {
  result.score = scorer.sheet();
  result.stats = scorer.stats();
  result.duration_s = scorer.time();
  result.steps = scorer.step();
}

void setOutcome(ResultFile& result, bool complete, const std::string& outcome,
                const std::string& error) {
  result.complete = complete;
  result.outcome = complete ? "ok" : outcome;
  result.error = error;
}

std::string resultToJson(const ResultFile& r) {
  Json j;
  j["format"] = ResultFile::kFormat;
  j["version"] = ResultFile::kVersion;
  j["complete"] = r.complete;
  j["outcome"] = r.outcome;
  j["error"] = orNull(r.error);
  j["trainee"] = orNull(r.trainee);
  j["started"] = r.started;
  j["build"] = r.build;
  j["scenario"] = r.scenario ? source(*r.scenario) : Json(nullptr);
  j["scene"] = source(r.scene);
  Json overrides = Json::array();
  for (const Override& o : r.overrides) overrides.push_back(o.path + "=" + o.value);
  j["scene"]["overrides"] = overrides;
  j["recording"] = orNull(r.recording);
  j["duration_s"] = r.duration_s;
  j["steps"] = r.steps;
  j["time_step_s"] = r.time_step_s;
  const ScoreSheet& s = r.score;
  if (s.scored) {
    j["score"] = Json{{"total", s.score},
                      {"max", 100},
                      {"pass_mark", s.pass_mark},
                      {"passed", s.passed},
                      {"critical_failure", s.critical_failure},
                      {"penalty_points", s.penalty_points},
                      {"task_points_lost", s.task_points_lost},
                      {"exercise_time_s", s.exercise_time_s}};
  } else {
    j["score"] = nullptr;
  }
  Json penalties = Json::array();
  for (const Penalty& p : s.penalties) {
    penalties.push_back(Json{{"kind", p.kind},
                             {"name", p.name},
                             {"bodies", p.bodies},
                             {"item", orNull(p.item)},
                             {"time_s", p.time_s},
                             {"step", p.step},
                             {"value", p.value},
                             {"unit", p.unit},
                             {"speed_mps", p.speed},
                             {"points", p.points},
                             {"critical", p.critical},
                             {"text", p.text}});
  }
  j["penalties"] = penalties;
  Json tasks = Json::array();
  for (const TaskResult& t : s.tasks) {
    tasks.push_back(Json{{"name", t.name},
                         {"done", t.done},
                         {"time_s", t.time_s},
                         {"points", t.points},
                         {"points_lost", t.points_lost},
                         {"critical", t.critical},
                         {"detail", t.detail}});
  }
  j["tasks"] = tasks;
  const SessionStats& st = r.stats;
  Json motors = Json::array();
  for (const MotorPeak& m : st.motors) {
    motors.push_back(Json{{"name", m.name},
                          {"peak_torque_Nm", m.peak_torque_Nm},
                          {"peak_fraction_of_stall", m.peak_fraction},
                          {"time_s", m.time_s}});
  }
  j["statistics"] =
      Json{{"load", st.load.empty() ? Json(nullptr)
                                    : Json{{"body", st.load}, {"path_length_m", st.load_path_m}}},
           {"motors", motors},
           {"max_velocity_iterations", st.max_velocity_iterations},
           {"steps_at_iteration_cap", st.steps_at_iteration_cap},
           {"time_at_iteration_cap_s", st.time_at_iteration_cap_s}};
  return j.dump(2) + "\n";
}

ResultFile resultFromJson(const std::string& text, const std::string& file) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw ResultError(fmt::format("{}: not JSON: {}", file, e.what()));
  }
  const Reader in(file);
  if (!j.is_object() || !j.contains("format") || j["format"] != ResultFile::kFormat) {
    throw ResultError(fmt::format("{}: not a simtrainer result file (\"format\": \"{}\" missing)",
                                  file, ResultFile::kFormat));
  }
  const auto version = in.count(j, "", "version");
  if (version != ResultFile::kVersion) {
    throw ResultError(fmt::format("{}: result format version {} (this program reads version {})",
                                  file, version, ResultFile::kVersion));
  }
  ResultFile r;
  r.complete = in.flag(j, "", "complete");
  r.outcome = in.str(j, "", "outcome");
  r.error = in.str(j, "", "error", true);
  r.trainee = in.str(j, "", "trainee", true);
  r.started = in.str(j, "", "started");
  r.build = in.str(j, "", "build");
  if (!in.get(j, "", "scenario").is_null()) r.scenario = in.src(j["scenario"], "scenario");
  r.scene = in.src(in.get(j, "", "scene"), "scene");
  for (const Json& o : in.list(j["scene"], "scene", "overrides")) {
    if (!o.is_string()) in.fail("scene.overrides", "expected KEY=VALUE strings");
    try {
      r.overrides.push_back(parseOverride(o.get<std::string>()));
    } catch (const SceneError& e) {
      in.fail("scene.overrides", e.message());
    }
  }
  r.recording = in.str(j, "", "recording", true);
  r.duration_s = in.num(j, "", "duration_s");
  r.steps = in.count(j, "", "steps");
  r.time_step_s = in.num(j, "", "time_step_s");
  const Json& score = in.get(j, "", "score");
  ScoreSheet& s = r.score;
  if (!score.is_null()) {
    s.scored = true;
    s.score = in.num(score, "score", "total");
    s.pass_mark = in.num(score, "score", "pass_mark");
    s.passed = in.flag(score, "score", "passed");
    s.critical_failure = in.flag(score, "score", "critical_failure");
    s.penalty_points = in.num(score, "score", "penalty_points");
    s.task_points_lost = in.num(score, "score", "task_points_lost");
    s.exercise_time_s = in.num(score, "score", "exercise_time_s");
  }
  const Json& penalties = in.list(j, "", "penalties");
  for (std::size_t i = 0; i < penalties.size(); ++i) {
    const std::string at = fmt::format("penalties[{}]", i);
    const Json& p = penalties[i];
    Penalty pen;
    pen.kind = in.str(p, at, "kind");
    pen.name = in.str(p, at, "name");
    for (const Json& b : in.list(p, at, "bodies")) {
      if (!b.is_string()) in.fail(at + ".bodies", "expected body names");
      pen.bodies.push_back(b.get<std::string>());
    }
    pen.item = in.str(p, at, "item", true);
    pen.time_s = in.num(p, at, "time_s");
    pen.step = in.count(p, at, "step");
    pen.value = in.num(p, at, "value");
    pen.unit = in.str(p, at, "unit");
    pen.speed = in.num(p, at, "speed_mps");
    pen.points = in.num(p, at, "points");
    pen.critical = in.flag(p, at, "critical");
    pen.text = in.str(p, at, "text");
    s.penalties.push_back(std::move(pen));
  }
  const Json& tasks = in.list(j, "", "tasks");
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const std::string at = fmt::format("tasks[{}]", i);
    TaskResult t;
    t.name = in.str(tasks[i], at, "name");
    t.done = in.flag(tasks[i], at, "done");
    t.time_s = in.num(tasks[i], at, "time_s");
    t.points = in.num(tasks[i], at, "points");
    t.points_lost = in.num(tasks[i], at, "points_lost");
    t.critical = in.flag(tasks[i], at, "critical");
    t.detail = in.str(tasks[i], at, "detail");
    s.tasks.push_back(std::move(t));
  }
  const Json& st = in.get(j, "", "statistics");
  const Json& load = in.get(st, "statistics", "load");
  if (!load.is_null()) {
    r.stats.load = in.str(load, "statistics.load", "body");
    r.stats.load_path_m = in.num(load, "statistics.load", "path_length_m");
  }
  const Json& motors = in.list(st, "statistics", "motors");
  for (std::size_t i = 0; i < motors.size(); ++i) {
    const std::string at = fmt::format("statistics.motors[{}]", i);
    r.stats.motors.push_back(MotorPeak{
        in.str(motors[i], at, "name"), in.num(motors[i], at, "peak_torque_Nm"),
        in.num(motors[i], at, "peak_fraction_of_stall"), in.num(motors[i], at, "time_s")});
  }
  r.stats.max_velocity_iterations =
      static_cast<int>(in.count(st, "statistics", "max_velocity_iterations"));
  r.stats.steps_at_iteration_cap = in.count(st, "statistics", "steps_at_iteration_cap");
  r.stats.time_at_iteration_cap_s = in.num(st, "statistics", "time_at_iteration_cap_s");
  return r;
}

void writeResultFile(const std::string& path, const ResultFile& result) {
  const std::string text = resultToJson(result);
  const std::string temp = path + ".tmp";
  auto fail = [&](const char* what) {
    throw ResultError(
        fmt::format("{}: cannot write the result file ({}: {})", path, what, std::strerror(errno)));
  };
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("open");
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      fail("write");
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail("fsync");
  }
  if (::close(fd) != 0) fail("close");
  if (std::rename(temp.c_str(), path.c_str()) != 0) fail("rename");
}

ResultFile readResultFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ResultError(path + ": cannot open result file");
  std::stringstream text;
  text << in.rdbuf();
  return resultFromJson(text.str(), path);
}

}  // namespace sim::engine
