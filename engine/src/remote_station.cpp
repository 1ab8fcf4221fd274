// A station of a class (engine/remote.h): received frames are written into a local Session that
// never steps, and that Session is drawn by the same frame observer (SessionView) as a local run.
#include <engine/remote.h>
#include <engine/scheme.h>
#include <input/input_system.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <thread>

namespace sim::engine::remote {

namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}
}  // namespace

StationResult runStation(const StationOptions& options) {
  Bus bus(options.address, Bus::Role::Station);
  const auto start = Clock::now();
  auto stop = [&] { return options.interrupt && options.interrupt->load(); };

  // The server's identity (latched: it arrives even when the server started long ago).
  SceneIdentity identity;
  bool have_identity = false;
  while (!(have_identity = bus.takeIdentity(identity))) {
    if (stop()) return {};
    if (since(start) > options.identity_timeout_s) {
      throw std::runtime_error(fmt::format(
          "no server in domain {} partition \"{}\" after {:g} s (is `simtrainer serve` running "
          "with "
          "the same --domain and --partition?)",
          options.address.domain, options.address.partition, options.identity_timeout_s));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const std::string path = options.scene_path.empty() ? identity.scene_file : options.scene_path;
  const Scene scene = loadScene(path);
  if (scene.source_hash != identity.scene_hash) {
    throw std::runtime_error(
        fmt::format("{}: not the server's scene {} (hash {:016x}, the server's {:016x})", path,
                    identity.scene_name, scene.source_hash, identity.scene_hash));
  }
  spdlog::info("station {}: server runs {} ({}), {} bodies", options.name, identity.scene_name,
               identity.scene_file, identity.body_count);
  Session session(scene);
  const FrameObserver observer = options.make_view ? options.make_view(scene) : FrameObserver{};

  std::FILE* trace = nullptr;
  if (!options.trace_path.empty()) {
    trace = std::fopen(options.trace_path.c_str(), "w");
    if (!trace) throw std::runtime_error(options.trace_path + ": cannot write the pose trace");
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> trace_closer(trace,
                                                               trace ? &std::fclose : nullptr);

  // This station's own pult, sent when it changes and every 0.25 s (a server that starts later
  // gets it).
  const bool has_pult = options.input != nullptr || !options.pult_script.empty();
  std::vector<double> pult = initialPult(scene.pult).values;
  std::vector<double> sent_pult;
  std::vector<bool> script_done(options.pult_script.size(), false);
  Clock::time_point last_pult_sent{}, last_status{}, last_rx = start;
  std::uint64_t pult_seq = 0;

  StationResult result;
  RunResult stats;
  const double frame_s = 1.0 / (identity.frame_rate_hz > 0.0 ? identity.frame_rate_hz : 60.0);
  StateFrame frame;
  FrameFilter filter;
  bool link_ok = false;
  bool ever = false;
  std::vector<std::string> notes;
  std::vector<std::pair<Clock::time_point, std::string>> score_events;
  auto next = Clock::now();
  while (!stop()) {
    if (options.duration_s > 0.0 && since(start) > options.duration_s) break;
    // A restarted server announces a new run.
    SceneIdentity update;
    while (bus.takeIdentity(update)) {
      if (update.scene_hash == identity.scene_hash && update.run_id != identity.run_id) {
        spdlog::info("station {}: server restarted (run {:016x})", options.name, update.run_id);
        identity = update;
      }
    }
    // Every frame received since the last pass; the newest accepted one is shown.
    bool fresh = false;
    while (bus.takeState(frame)) {
      const std::int64_t now_ns = monotonicNs();
      if (!filter.accept(frame, identity)) {
        result.drops = filter.drops();
        continue;
      }
      result.latency_s.add(1e-9 * static_cast<double>(now_ns - frame.sent_ns));
      applyFrame(frame, session);
      ++result.frames_received;
      result.last_step = frame.step;
      if (trace) {
        std::fputs(poseTraceLine(frame.step, frame.poses).c_str(), trace);
        std::fputc('\n', trace);
      }
      fresh = true;
    }
    if (fresh) {
      if (trace) std::fflush(trace);
      last_rx = Clock::now();
      if (!link_ok && ever)
        spdlog::info("station {}: link back at step {}", options.name, result.last_step);
      link_ok = true;
      ever = true;
    } else if (link_ok && since(last_rx) > options.link_timeout_s) {
      link_ok = false;
      ++result.link_lost;
      spdlog::warn("station {}: link lost (no state for {:g} s)", options.name,
                   options.link_timeout_s);
    }
    // The pult: devices, then the script by received simulated time.
    if (options.input) options.input->sample(frame_s, pult);
    for (std::size_t i = 0; i < options.pult_script.size(); ++i) {
      const PultScriptEntry& e = options.pult_script[i];
      if (script_done[i] || !ever || session.time() < e.at_s - 1e-9) continue;
      for (std::size_t c = 0; c < scene.pult.controls.size(); ++c) {
        if (scene.pult.controls[c].name == e.control)
          pult[c] = scene.pult.controls[c].admit(e.value);
      }
      script_done[i] = true;
    }
    if (has_pult && (pult != sent_pult || since(last_pult_sent) > 0.25)) {
      bus.publishPult({options.name, ++pult_seq, pult, {}});
      sent_pult = pult;
      last_pult_sent = Clock::now();
      ++result.pult_sent;
    }
    // The server's score events (penalties, tasks), shown for LiveScore::kRecentS of wall time.
    Event event;
    while (bus.takeEvent(event)) {
      if (event.run_id == identity.run_id && event.kind == "score")
        score_events.emplace_back(Clock::now(), event.text);
    }
    while (!score_events.empty() && since(score_events.front().first) > LiveScore::kRecentS)
      score_events.erase(score_events.begin());
    if (since(last_status) > 0.5) {
      bus.publishStatus({options.name, "viewer", result.last_step, result.frames_received,
                         result.drops.total(), link_ok, has_pult, ever && frame.scored,
                         frame.score});
      last_status = Clock::now();
    }
    if (observer) {
      notes.clear();
      if (!ever) {
        notes.push_back("waiting for the server's state");
      } else if (!link_ok) {
        notes.push_back(fmt::format("LINK LOST: no state for {:.1f} s (showing step {})",
                                    since(last_rx), result.last_step));
      } else if (frame.paused) {
        notes.push_back("PAUSED by the instructor");
      }
      if (ever && frame.scored) {
        notes.push_back(fmt::format("score {:g}/100", std::round(frame.score * 10.0) / 10.0));
        for (const auto& [at, text] : score_events) notes.push_back(text);
      }
      stats.frames = result.frames_received;
      stats.sim_time_s = session.time();
      stats.wall_time_s = since(start);
      if (!observer(session, stats, notes)) {
        result.closed = true;
        break;
      }
    }
    if (options.until_step > 0 && ever && result.last_step >= options.until_step) break;
    next += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(frame_s));
    const auto now = Clock::now();
    if (next < now) next = now;  // late: no catching up with a burst of frames
    std::this_thread::sleep_until(next);
  }
  return result;
}

}  // namespace sim::engine::remote
