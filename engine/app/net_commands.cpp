#include "net_commands.h"
#include "report_command.h"
#include "threads_option.h"

#include <engine/class_security.h>
#include <engine/recording.h>
#include <engine/remote.h>
#include <engine/scenario.h>
#include <input/input_system.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <stdexcept>
#include <thread>

namespace simtrainer_app {

namespace remote = sim::engine::remote;

struct NetCommands::Args {
  // Shared by all three.
  int domain = 0;
  std::string partition = "simtrainer";
  std::vector<std::string> peers;
  std::string security;            // --security DIR
  double server_timeout_s = 20.0;  // view, instruct: no server for this long at the start: an error
  // serve
  CLI::App* serve = nullptr;
  std::string serve_file;
  double serve_duration = 0.0;
  std::string record, trace, events;
  std::vector<std::string> sets;
  bool as_fast = false;
  int threads = 1;
  ResultArgs result;
  // view
  CLI::App* view = nullptr;
  bool remote_flag = false;
  std::string station = "station";
  std::string input, scene, camera, size = "1280x720", view_trace;
  bool headless = false;
  double view_duration = 0.0;
  std::uint64_t until_step = 0;
  std::vector<std::string> pult_script;
  // instruct
  CLI::App* instruct = nullptr;
  std::string issuer = "instructor";
  std::vector<std::string> commands;
  double listen_s = 2.0;
  double interval_s = 0.0;
  double ack_timeout_s = 10.0;
  bool list = false;
  // security init / issue
  CLI::App* security_cmd = nullptr;
  CLI::App* security_init = nullptr;
  CLI::App* security_issue = nullptr;
  std::string authority_dir, centre = "simtrainer training centre", role, name;
  int days = 0;
};

namespace {

void addClassOptions(CLI::App* command, int& domain, std::string& partition,
                     std::vector<std::string>& peers, std::string& security) {
  command
      ->add_option("--security", security,
                   "A secured class: this participant's folder from `simtrainer security issue`")
      ->option_text("DIR");
  command->add_option("--domain", domain, "DDS domain id of the class (0..232, default 0)")
      ->check(CLI::Range(0, 232));
  command->add_option("--partition", partition, "DDS partition of the class (default simtrainer)");
  command
      ->add_option("--peer", peers,
                   "Unicast address of another machine to announce to (besides multicast)")
      ->option_text("IPv4");
}

void addServerTimeout(CLI::App* command, double& seconds) {
  command
      ->add_option("--server-timeout", seconds,
                   "Seconds to wait for the server at the start before giving up (default 20; "
                   "a secured class's handshakes can take longer on a slow or busy network)")
      ->check(CLI::PositiveNumber);
}

remote::ClassAddress address(const NetCommands::Args& a) {
  remote::ClassAddress address;
  address.domain = a.domain;
  address.partition = a.partition;
  address.peers = a.peers;
  address.security = a.security;
  return address;
}

// The certificate of --security must be of the command's role; returns its name (empty: open).
std::string securedName(const NetCommands::Args& a, sim::engine::security::Role role,
                        const char* command) {
  if (a.security.empty()) return "";
  const auto credentials = sim::engine::security::loadCredentials(a.security);
  if (credentials.role != role) {
    throw std::runtime_error(
        fmt::format("{}: a {} certificate (subject OU={}); `{}` needs a {} certificate",
                    credentials.certificate, sim::engine::security::roleName(credentials.role),
                    sim::engine::security::roleName(credentials.role), command,
                    sim::engine::security::roleName(role)));
  }
  return credentials.name;
}

std::vector<sim::engine::Override> overrides(const std::vector<std::string>& texts) {
  std::vector<sim::engine::Override> out;
  for (const auto& t : texts) out.push_back(sim::engine::parseOverride(t));
  return out;
}

// NAME=VALUE[@SECONDS]
remote::PultScriptEntry parseScriptEntry(const std::string& text) {
  remote::PultScriptEntry e;
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw std::invalid_argument("--pult: expected NAME=VALUE[@SECONDS], got " + text);
  }
  e.control = text.substr(0, eq);
  std::string rest = text.substr(eq + 1);
  const auto at = rest.find('@');
  try {
    if (at != std::string::npos) {
      e.at_s = std::stod(rest.substr(at + 1));
      rest = rest.substr(0, at);
    }
    e.value = std::stod(rest);
  } catch (const std::exception&) {
    throw std::invalid_argument("--pult: expected NAME=VALUE[@SECONDS], got " + text);
  }
  return e;
}

// kind[:target[:fault[:value]]], e.g. pause, fault:drive:weak:0.3, clear:drive, reset:start,
// fault:joint.hinge.position:noise:0.01 (a target with a dot is a scheme sensor)
remote::Command parseCommand(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto colon = text.find(':', start);
    parts.push_back(text.substr(start, colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  remote::Command c;
  const std::string& kind = parts[0];
  auto need = [&](std::size_t n) {
    if (parts.size() < n)
      throw std::invalid_argument("--command " + text + ": missing fields (see --help)");
  };
  if (kind == "pause") {
    c.kind = remote::CommandKind::Pause;
  } else if (kind == "resume") {
    c.kind = remote::CommandKind::Resume;
  } else if (kind == "reset") {
    c.kind = remote::CommandKind::Reset;
    c.target = parts.size() > 1 ? parts[1] : "start";
  } else if (kind == "fault") {
    need(3);
    c.kind = remote::CommandKind::InjectFault;
    c.target = parts[1];
    c.fault = parts[2];
  } else if (kind == "clear") {
    need(2);
    c.kind = remote::CommandKind::ClearFault;
    c.target = parts[1];
  } else if (kind == "set") {
    need(3);
    c.kind = remote::CommandKind::SetParameter;
    c.target = parts[1];
  } else {
    throw std::invalid_argument("--command " + text +
                                ": unknown command (pause, resume, reset, fault, clear, set)");
  }
  const std::size_t value_at = kind == "set" ? 2 : 3;
  if (parts.size() > value_at) {
    try {
      c.value = std::stod(parts[value_at]);
    } catch (const std::exception&) {
      throw std::invalid_argument("--command " + text + ": not a number: " + parts[value_at]);
    }
  }
  return c;
}

int serveSession(const NetCommands::Args& a, const NetHooks& hooks) {
  securedName(a, sim::engine::security::Role::Server, "serve");
  remote::ServeOptions options;
  options.address = address(a);
  options.record_path = a.record;
  options.trace_path = a.trace;
  options.events_path = a.events;
  options.realtime = !a.as_fast;
  options.threads = a.threads;
  options.interrupt = hooks.interrupt;
  options.duration_s = a.serve_duration;
  std::optional<sim::engine::Scenario> scenario;
  std::optional<sim::engine::Scene> plain;
  const bool is_scenario =
      a.serve_file.size() > 14 &&
      a.serve_file.compare(a.serve_file.size() - 14, 14, ".scenario.yaml") == 0;
  if (is_scenario) {
    // The scenario's scene, duration, faults, parameter changes and grading (expectations and
    // `scoring:`); its timeline is not played (the stations drive the pult).
    scenario = sim::engine::loadScenario(a.serve_file);
    options.faults = scenario->faults;
    options.changes = scenario->changes;
    if (!a.sets.empty())
      throw std::invalid_argument("--set: not with a scenario (put it in the scenario)");
    if (!scenario->timeline.empty())
      spdlog::warn("serve: the scenario's timeline is not played; stations drive the pult");
    if (options.duration_s <= 0.0) options.duration_s = scenario->duration_s;
    options.record_header.scenario_path = scenario->file;
    options.record_header.scenario_hash = scenario->source_hash;
  } else {
    plain = sim::engine::loadScene(a.serve_file, overrides(a.sets));
  }
  const sim::engine::Scene& scene = scenario ? scenario->scene : *plain;
  // Graded when a scenario is served (statistics only for a plain scene, with --result).
  std::unique_ptr<sim::engine::Scorer> scorer;
  if (scenario)
    scorer = std::make_unique<sim::engine::Scorer>(*scenario);
  else if (!a.result.path.empty())
    scorer = std::make_unique<sim::engine::Scorer>(scene);
  options.scorer = scorer.get();
  options.record_header.trainee = a.result.trainee;
  options.record_header.started = sim::engine::utcNow();
  std::optional<ResultOutput> result_file;
  if (!a.result.path.empty()) {
    result_file.emplace(
        a.result,
        sim::engine::resultHeader(scene, scenario ? &*scenario : nullptr, a.result.trainee,
                                  options.record_header.started, a.record),
        scorer.get());
  }
  spdlog::info("serve: {} on domain {} partition \"{}\"", scene.name, a.domain, a.partition);
  const remote::ServeResult r = remote::serve(scene, options);
  if (result_file)
    result_file->finish(r.complete, outcomeOf(r.run), r.run.fault ? r.run.fault->describe() : "");
  std::fputs(sim::engine::formatSummary(scene, r.run).c_str(), stdout);
  std::printf(
      "serve: pult samples %llu, commands %llu, dropped %llu malformed, %llu out of order\n",
      static_cast<unsigned long long>(r.pult_samples), static_cast<unsigned long long>(r.commands),
      static_cast<unsigned long long>(r.drops.malformed),
      static_cast<unsigned long long>(r.drops.out_of_order));
  if (!a.security.empty()) {
    std::printf(
        "serve: security: %llu samples under another name than their writer's, %llu participants "
        "failed authentication, %llu writers refused by the permissions\n",
        static_cast<unsigned long long>(r.drops.impostor),
        static_cast<unsigned long long>(r.participants_refused),
        static_cast<unsigned long long>(r.writers_refused));
  }
  std::fflush(stdout);
  if (r.run.fault) return 1;
  return 0;
}

int serveCommand(const NetCommands::Args& a, const NetHooks& hooks) {
  return guardResult(a.result, [&] { return serveSession(a, hooks); });
}

int viewCommand(const NetCommands::Args& a, const NetHooks& hooks) {
  if (!a.remote_flag) {
    throw std::invalid_argument("view: only --remote is supported (a local scene: simtrainer run)");
  }
  remote::StationOptions options;
  options.address = address(a);
  options.name = a.station;
  const std::string certified = securedName(a, sim::engine::security::Role::Station, "view");
  if (!certified.empty()) {
    // The server accepts this station's pult only under its certificate's name.
    if (a.view->count("--station") > 0 && a.station != certified) {
      throw std::runtime_error(fmt::format("--station {}: the certificate of {} is station \"{}\"",
                                           a.station, a.security, certified));
    }
    options.name = certified;
  }
  options.scene_path = a.scene;
  options.trace_path = a.view_trace;
  options.duration_s = a.view_duration;
  options.until_step = a.until_step;
  options.identity_timeout_s = a.server_timeout_s;
  options.interrupt = hooks.interrupt;
  for (const auto& t : a.pult_script) options.pult_script.push_back(parseScriptEntry(t));
  std::unique_ptr<sim::input::InputSystem> input;
  options.make_view = [&](const sim::engine::Scene& scene) {
    for (const auto& e : options.pult_script) {
      bool known = false;
      for (const auto& c : scene.pult.controls) known = known || c.name == e.control;
      if (!known)
        throw std::invalid_argument("--pult: no control named " + e.control + " in " + scene.file);
    }
    if (!a.input.empty()) {
      input = hooks.open_input(scene, a.input);
      options.input = input.get();
    }
    return hooks.make_view(scene, a.headless, a.camera, a.size);
  };
  const remote::StationResult r = remote::runStation(options);
  std::printf(
      "view %s: frames %llu, last step %llu, link lost %llu times, dropped %llu "
      "(%llu malformed, %llu out of order, %llu foreign), pult samples sent %llu\n",
      options.name.c_str(), static_cast<unsigned long long>(r.frames_received),
      static_cast<unsigned long long>(r.last_step), static_cast<unsigned long long>(r.link_lost),
      static_cast<unsigned long long>(r.drops.total()),
      static_cast<unsigned long long>(r.drops.malformed),
      static_cast<unsigned long long>(r.drops.out_of_order),
      static_cast<unsigned long long>(r.drops.foreign),
      static_cast<unsigned long long>(r.pult_sent));
  if (r.latency_s.count() > 0) {
    std::printf("view %s: latency mean %.3f ms, p99 %.3f ms\n", options.name.c_str(),
                1e3 * r.latency_s.mean(), 1e3 * r.latency_s.p99());
  }
  std::fflush(stdout);
  return r.frames_received > 0 ? 0 : 1;
}

// Sends the commands --interval apart and waits until the server has acknowledged each (reliable
// delivery retries lost packets) or --ack-timeout has passed since the last was sent. Prints
// each command's fate: delivered (and how long it took) or not confirmed, which an instructor
// must treat as lost: it may or may not have reached the server, whose events tell. The server
// applies a command at most once (sequence numbers per issuer). True when all were confirmed.
template <class Poll, class Stopped>
bool sendCommands(remote::Bus& bus, const NetCommands::Args& a, const std::string& issuer,
                  const std::vector<remote::Command>& commands, Poll& poll, Stopped& stopped) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  std::printf("instruct: server found, sending %zu commands\n", commands.size());
  std::fflush(stdout);
  std::uint64_t seq = static_cast<std::uint64_t>(remote::monotonicNs());  // increases across runs
  std::vector<double> sent_at;
  std::size_t confirmed = 0;  // reliable delivery is in order: a prefix of the sent ones
  double last_sent = 0.0;
  while (!stopped()) {
    if (sent_at.size() < commands.size() &&
        elapsed() >= a.interval_s * static_cast<double>(sent_at.size())) {
      remote::Command c = commands[sent_at.size()];
      c.issuer = issuer;
      c.seq = ++seq;
      bus.publishCommand(c);
      last_sent = elapsed();
      sent_at.push_back(last_sent);
    }
    if (confirmed < sent_at.size() && bus.commandsAcknowledged(0.01)) {
      for (; confirmed < sent_at.size(); ++confirmed) {
        std::printf("instruct: command %zu (%s) delivered after %.3f s\n", confirmed + 1,
                    a.commands[confirmed].c_str(), elapsed() - sent_at[confirmed]);
      }
      std::fflush(stdout);
    }
    poll();
    if (sent_at.size() == commands.size() &&
        (confirmed == sent_at.size() || elapsed() - last_sent > a.ack_timeout_s)) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (std::size_t k = confirmed; k < commands.size(); ++k) {
    std::printf(
        "instruct: command %zu (%s) NOT confirmed by the server within %.3g s: it may be lost "
        "(the server's events show whether it arrived)\n",
        k + 1, a.commands[k].c_str(), a.ack_timeout_s);
  }
  std::fflush(stdout);
  return confirmed == commands.size();
}

int securityCommand(const NetCommands::Args& a) {
  namespace security = sim::engine::security;
  if (*a.security_init) {
    security::AuthorityOptions options;
    options.centre = a.centre;
    if (a.days > 0) options.days = a.days;
    security::initAuthority(a.authority_dir, options);
    std::printf(
        "security: authority of \"%s\" in %s (ca.pem, ca.key: keep it off the class's "
        "machines; governance.p7s)\n",
        a.centre.c_str(), a.authority_dir.c_str());
    return 0;
  }
  if (*a.security_issue) {
    const security::Role role =
        a.role == "server"
            ? security::Role::Server
            : (a.role == "station" ? security::Role::Station : security::Role::Instructor);
    const std::string folder = a.days > 0 ? security::issue(a.authority_dir, role, a.name, a.days)
                                          : security::issue(a.authority_dir, role, a.name);
    std::printf("security: %s %s issued in %s (give it as --security %s)\n", a.role.c_str(),
                a.name.c_str(), folder.c_str(), folder.c_str());
    return 0;
  }
  throw std::invalid_argument("security: expected init or issue (see simtrainer security --help)");
}

int instructCommand(const NetCommands::Args& a, const NetHooks& hooks) {
  std::vector<remote::Command> commands;
  for (const auto& t : a.commands) commands.push_back(parseCommand(t));
  std::string issuer = a.issuer;
  const std::string certified = securedName(a, sim::engine::security::Role::Instructor, "instruct");
  if (!certified.empty()) {
    if (a.instruct->count("--name") > 0 && a.issuer != certified) {
      throw std::runtime_error(fmt::format("--name {}: the certificate of {} is instructor \"{}\"",
                                           a.issuer, a.security, certified));
    }
    issuer = certified;
  }
  remote::Bus bus(address(a), remote::Bus::Role::Instructor);
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  auto stopped = [&] { return hooks.interrupt && hooks.interrupt->load(); };
  remote::SceneIdentity identity;
  bool have_identity = false;
  std::map<std::string, remote::StationStatus> stations;
  remote::StateFrame frame;
  bool have_frame = false;
  bool unconfirmed = false;
  auto poll = [&] {
    remote::SceneIdentity id;
    while (bus.takeIdentity(id)) {
      identity = id;
      have_identity = true;
    }
    remote::StationStatus st;
    while (bus.takeStatus(st)) {
      if (st.role != "instructor") stations[st.station] = st;
    }
    while (bus.takeState(frame)) have_frame = true;
    remote::Event e;
    while (bus.takeEvent(e)) {
      std::printf("event step %llu t %.3f s %s: %s\n", static_cast<unsigned long long>(e.step),
                  e.sim_time_s, e.kind.c_str(), e.text.c_str());
    }
    std::fflush(stdout);
  };
  if (!commands.empty()) {
    // The server must be listening, else a reliable command goes to nobody.
    while (bus.commandSubscribers() == 0 || !have_identity) {
      poll();
      if (stopped()) return 1;
      if (elapsed() > a.server_timeout_s) {
        throw std::runtime_error(fmt::format("no server in domain {} partition \"{}\" after {:g} s",
                                             a.domain, a.partition, a.server_timeout_s));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!sendCommands(bus, a, issuer, commands, poll, stopped)) unconfirmed = true;
  }
  // Listen: events (the answers to the commands), stations and the state.
  const auto listen_start = Clock::now();
  while (!stopped() &&
         std::chrono::duration<double>(Clock::now() - listen_start).count() < a.listen_s) {
    poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  poll();
  if (a.list || commands.empty()) {
    if (!have_identity) {
      std::printf("no server in domain %d partition \"%s\"\n", a.domain, a.partition.c_str());
      return 1;
    }
    std::printf("server: %s (%s), run %016llx\n", identity.scene_name.c_str(),
                identity.scene_file.c_str(), static_cast<unsigned long long>(identity.run_id));
    if (have_frame) {
      std::printf(
          "state: step %llu t %.3f s%s%s\n", static_cast<unsigned long long>(frame.step),
          frame.sim_time_s, frame.paused ? " PAUSED" : "",
          frame.scored
              ? fmt::format(", score {:g}/100", std::round(frame.score * 10.0) / 10.0).c_str()
              : "");
      std::string pult = "pult:";
      for (std::size_t c = 0; c < frame.pult.size() && c < identity.controls.size(); ++c) {
        pult += fmt::format(" {}={:.3g}", identity.controls[c], frame.pult[c]);
      }
      std::printf("%s\n", pult.c_str());
      std::string motors = "motors (voltage, speed rad/s):";
      for (std::size_t m = 0; m < frame.motor_voltage.size(); ++m) {
        motors += fmt::format(" [{}] {:+.3f} {:+.3g}", m, frame.motor_voltage[m],
                              frame.motor_speed_radps[m]);
      }
      std::printf("%s\n", motors.c_str());
    }
    std::printf("stations: %zu\n", stations.size());
    for (const auto& [name, st] : stations) {
      std::printf("station %s: %s, link %s, step %llu, frames %llu, dropped %llu%s%s\n",
                  name.c_str(), st.role.c_str(), st.link_ok ? "ok" : "LOST",
                  static_cast<unsigned long long>(st.last_step),
                  static_cast<unsigned long long>(st.frames_received),
                  static_cast<unsigned long long>(st.dropped), st.has_pult ? ", has a pult" : "",
                  st.scored
                      ? fmt::format(", score {:g}/100", std::round(st.score * 10.0) / 10.0).c_str()
                      : "");
    }
  }
  std::fflush(stdout);
  return unconfirmed ? 3 : 0;
}

}  // namespace

NetCommands::NetCommands(CLI::App& app) : args_(std::make_unique<Args>()) {
  Args& a = *args_;
  a.serve = app.add_subcommand(
      "serve", "Run a scene authoritative and headless in real time, publishing its state (DDS)");
  a.serve->add_option("SCENE", a.serve_file, "Scene file (YAML) or scenario (*.scenario.yaml)")
      ->required();
  addClassOptions(a.serve, a.domain, a.partition, a.peers, a.security);
  a.serve->add_option("--duration", a.serve_duration, "Simulated seconds (default: until Ctrl-C)");
  a.serve
      ->add_option("--record", a.record, "Record the session, faults included (simtrainer replay)")
      ->option_text("FILE");
  a.serve->add_option("--trace", a.trace, "Pose trace of every published frame (hex floats)")
      ->option_text("FILE");
  a.serve->add_option("--events", a.events, "Log of commands, faults and refusals")
      ->option_text("FILE");
  a.serve->add_option("--set", a.sets, "Override a numeric scene parameter")
      ->option_text("KEY=VALUE");
  a.serve->add_flag("--as-fast-as-possible", a.as_fast,
                    "Do not pace to the wall clock (benchmarks)");
  addResultOptions(a.serve, a.result);
  addThreadsOption(a.serve, a.threads);

  a.view = app.add_subcommand(
      "view", "Show a served scene (--remote): same view as run, state from the server");
  a.view->add_flag("--remote", a.remote_flag, "Receive the state from `simtrainer serve`");
  addClassOptions(a.view, a.domain, a.partition, a.peers, a.security);
  addServerTimeout(a.view, a.server_timeout_s);
  a.view->add_option("--station", a.station, "This station's name (default station)");
  a.view->add_option("--scene", a.scene,
                     "The scene file here (default: the path the server names)");
  a.view->add_option("--input", a.input, "This station's pult: a mapping file, or keyboard")
      ->option_text("FILE|keyboard");
  a.view
      ->add_option("--pult", a.pult_script,
                   "Scripted pult: set a control when the received time reaches SECONDS")
      ->option_text("NAME=VALUE[@SECONDS]");
  a.view->add_flag("--headless", a.headless, "No window (a trace or a scripted pult only)");
  a.view->add_option("--camera", a.camera, "View from this camera of the scene");
  a.view->add_option("--size", a.size, "Window size (default 1280x720)");
  a.view->add_option("--trace", a.view_trace, "Pose trace of every frame received (hex floats)")
      ->option_text("FILE");
  a.view->add_option("--duration", a.view_duration, "Wall seconds to run (default: until closed)");
  a.view->add_option("--until-step", a.until_step, "Stop once a frame of this step is shown");

  a.instruct =
      app.add_subcommand("instruct", "Instructor: list stations and HUD values, send commands");
  addClassOptions(a.instruct, a.domain, a.partition, a.peers, a.security);
  addServerTimeout(a.instruct, a.server_timeout_s);
  a.instruct->add_option(
      "--command", a.commands,
      "pause | resume | reset[:start] | fault:MOTOR:stuck|weak|reversed|brake_released[:VALUE] | "
      "fault:CONTROL:axis_stuck | fault:SIGNAL:noise:SIGMA | fault:SIGNAL:dropout | "
      "clear:TARGET | set:KEY:VALUE (repeatable)");
  a.instruct
      ->add_option("--interval", a.interval_s, "Seconds between two commands (default 0: at once)")
      ->check(CLI::NonNegativeNumber);
  a.instruct
      ->add_option("--ack-timeout", a.ack_timeout_s,
                   "Seconds after the last command to wait for the server's acknowledgement of "
                   "each; an unacknowledged one is reported NOT confirmed and the exit code is 3 "
                   "(default 10)")
      ->check(CLI::NonNegativeNumber);
  a.instruct->add_option("--listen", a.listen_s,
                         "Seconds to listen for stations and events (default 2)");
  a.instruct->add_flag("--list", a.list,
                       "Print the server, the state's HUD values and the stations");
  a.instruct->add_option("--name", a.issuer, "The instructor's name (default instructor)");

  a.security_cmd = app.add_subcommand(
      "security", "Certificates of a secured class (DDS Security; docs/network.md)");
  a.security_cmd->require_subcommand(1);
  a.security_init = a.security_cmd->add_subcommand(
      "init", "Create the training centre's certificate authority and signed governance in DIR");
  a.security_init->add_option("DIR", a.authority_dir, "The authority's folder")->required();
  a.security_init->add_option("--centre", a.centre, "The centre's name (the certificates' O)");
  a.security_init->add_option("--days", a.days, "Validity of the CA (default 3650)")
      ->check(CLI::Range(1, 36500));
  a.security_issue = a.security_cmd->add_subcommand(
      "issue", "Issue a participant's certificate, key and permissions (DIR/ROLE-NAME)");
  a.security_issue->add_option("DIR", a.authority_dir, "The authority's folder (security init)")
      ->required();
  a.security_issue->add_option("--role", a.role, "server, station or instructor")
      ->required()
      ->check(CLI::IsMember({"server", "station", "instructor"}));
  a.security_issue->add_option("--name", a.name, "The participant's name (letters, digits, _ -)")
      ->required();
  a.security_issue
      ->add_option("--days", a.days, "Validity (default 365, at most the CA's remaining)")
      ->check(CLI::Range(1, 36500));
}

NetCommands::~NetCommands() = default;

int NetCommands::run(const NetHooks& hooks) {
  const Args& a = *args_;
  try {
    if (*a.serve) return serveCommand(a, hooks);
    if (*a.view) return viewCommand(a, hooks);
    if (*a.instruct) return instructCommand(a, hooks);
    if (*a.security_cmd) return securityCommand(a);
  } catch (const std::runtime_error& e) {
    // No server, another scene file, DDS refusing the domain: the run failed (exit code 1);
    // scene and usage errors (other exception types) reach main's handlers.
    if (dynamic_cast<const sim::engine::SceneError*>(&e) ||
        dynamic_cast<const sim::engine::SceneInvalid*>(&e) ||
        dynamic_cast<const sim::engine::RecordingError*>(&e) ||
        dynamic_cast<const sim::input::InputError*>(&e) ||
        dynamic_cast<const sim::engine::ResultError*>(&e)) {
      throw;
    }
    std::fprintf(stderr, "simtrainer: error: %s\n", e.what());
    return 1;
  }
  return -1;
}

}  // namespace simtrainer_app
