// A training class on loopback: `simtrainer serve`, `view --remote` and `instruct` as separate
// processes (the real program), plus in-process buses where the test itself plays a rogue server
// or station. Every class uses its own partition (test name + pid), so tests run in parallel
// without seeing each other. Waits are polls with generous deadlines (a loaded 2-core machine);
// no assertion depends on a fixed sleep.
#include <engine/class_security.h>
#include <engine/recording.h>
#include <engine/remote.h>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

namespace remote = sim::engine::remote;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string source(const std::string& relative) {
  const char* dir = std::getenv("SIMTRAINER_SOURCE_DIR");
  return std::string(dir ? dir : ".") + "/" + relative;
}

fs::path scratch() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path dir = fs::temp_directory_path() /
                 ("simtrainer_net_" + std::string(info->name()) + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// A partition of its own for every test (and process), so parallel tests never meet.
std::string partition() {
  return std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "-" +
         std::to_string(getpid());
}

// A child process running `simtrainer ARGS`, stdout and stderr to files.
class Process {
 public:
  Process(const std::vector<std::string>& args, const fs::path& out) : out_(out) {
    std::vector<std::string> all = {SIMTRAINER_BIN};
    all.insert(all.end(), args.begin(), args.end());
    spawn(all);
  }
  // Runs `argv` exactly (for unshare).
  struct Raw {};
  Process(Raw, const std::vector<std::string>& argv, const fs::path& out) : out_(out) {
    spawn(argv);
  }
  pid_t pid() const { return pid_; }
  ~Process() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
  }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  /// Exit code, or -1 if it did not end within `timeout_s` (then it is killed), or 128+signal.
  int wait(double timeout_s) {
    const auto end = Clock::now() + std::chrono::duration<double>(timeout_s);
    while (true) {
      int status = 0;
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      if (Clock::now() > end) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  void kill(int signal) {
    if (pid_ > 0) ::kill(pid_, signal);
  }
  bool running() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    return true;
  }
  std::string output() const {
    std::ifstream in(out_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  void spawn(const std::vector<std::string>& argv) {
    std::vector<char*> c;
    for (const auto& a : argv) c.push_back(const_cast<char*>(a.c_str()));
    c.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    const int rc = posix_spawn(&pid_, c[0], &actions, nullptr, c.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) pid_ = -1;
  }
  fs::path out_;
  pid_t pid_ = -1;
};

std::vector<std::string> lines(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

// Pose trace: step -> the whole line (hex floats: equal lines are bit-identical poses).
std::map<std::uint64_t, std::string> poseTrace(const fs::path& path) {
  std::map<std::uint64_t, std::string> out;
  for (const auto& line : lines(path)) out[std::stoull(line.substr(0, line.find(' ')))] = line;
  return out;
}

// Polls `done` every 20 ms until it holds or `timeout_s` passes.
bool eventually(double timeout_s, const std::function<bool()>& done) {
  const auto end = Clock::now() + std::chrono::duration<double>(timeout_s);
  while (Clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

std::uint64_t lastStep(const fs::path& trace) {
  const auto t = poseTrace(trace);
  return t.empty() ? 0 : t.rbegin()->first;
}

const std::string kScene = "scenes/grasp.yaml";  // a pult (grip, lift) and two motors, 240 Hz steps

// The test itself as a station of class `part`, watching the state.
struct Watcher {
  explicit Watcher(const std::string& part) : bus(address(part), remote::Bus::Role::Station) {}
  static remote::ClassAddress address(const std::string& part) {
    remote::ClassAddress a;
    a.partition = part;
    return a;
  }
  /// Waits (30 s at most) for a frame past 0.5 s of simulated time: the server is running.
  bool running() {
    return eventually(30.0, [&] { return bus.takeState(frame) && frame.sim_time_s > 0.5; });
  }
  remote::Bus bus;
  remote::StateFrame frame;
};

// `simtrainer replay --verify` of the server's recording in `dir` passes, and of a copy without
// its lines that start with `prefix` diverges (exit 3): the events on those lines mattered.
void expectReplayNeedsLines(const fs::path& dir, const std::string& prefix) {
  Process replay({"replay", "--verify", (dir / "server.rec").string()}, dir / "replay.out");
  EXPECT_EQ(replay.wait(60.0), 0) << replay.output();
  {
    std::ifstream in(dir / "server.rec");
    std::ofstream out(dir / "stripped.rec");
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(prefix, 0) != 0) out << line << '\n';
    }
  }
  Process diverge({"replay", "--verify", (dir / "stripped.rec").string()}, dir / "diverge.out");
  EXPECT_EQ(diverge.wait(60.0), 3) << "without the \"" << prefix << "\" lines\n"
                                   << diverge.output();
}

std::vector<std::string> classArgs(const std::string& part, int domain = 0) {
  return {"--domain", std::to_string(domain), "--partition", part};
}

template <class... T>
std::vector<std::string> cat(std::vector<std::string> a, const T&... more) {
  (a.insert(a.end(), more.begin(), more.end()), ...);
  return a;
}

// `serve SCENE` for a minute in class `part`, recording to DIR/server.rec and, with `events`,
// logging events to DIR/events.log.
std::vector<std::string> recordingServe(const std::string& scene, const fs::path& dir,
                                        const std::string& part, bool events = true) {
  std::vector<std::string> args{"serve", scene,      "--duration",
                                "60",    "--record", (dir / "server.rec").string()};
  if (events) args.insert(args.end(), {"--events", (dir / "events.log").string()});
  return cat(args, classArgs(part));
}

TEST(Net, TwoViewersSeeTheServersPosesBitForBitWhileOneDrivesThePult) {
  const fs::path dir = scratch();
  const std::string part = partition();
  Process server(cat(std::vector<std::string>{"serve", source(kScene), "--duration", "60",
                                              "--trace", (dir / "server.trace").string(),
                                              "--record", (dir / "server.rec").string()},
                     classArgs(part)),
                 dir / "server.out");
  // Station "pult" lifts (lift axis to 1 at t = 0.5 s of received time); "watch" only watches.
  const std::uint64_t until = 4 * 240;  // steps: 4 s of simulated time after the start
  Process driver(
      cat(std::vector<std::string>{"view", "--remote", "--headless", "--station", "pult", "--pult",
                                   "lift=1@0.5", "--until-step", std::to_string(until)},
          classArgs(part)),
      dir / "driver.out");
  Process watcher(cat(std::vector<std::string>{"view", "--remote", "--headless", "--station",
                                               "watch", "--trace", (dir / "watch.trace").string(),
                                               "--until-step", std::to_string(until)},
                      classArgs(part)),
                  dir / "watch.out");
  ASSERT_EQ(watcher.wait(40.0), 0) << watcher.output();
  ASSERT_EQ(driver.wait(20.0), 0) << driver.output();
  server.kill(SIGINT);
  ASSERT_EQ(server.wait(20.0), 0) << server.output();  // Ctrl-C ends a server normally

  const auto served = poseTrace(dir / "server.trace");
  const auto seen = poseTrace(dir / "watch.trace");
  // Best effort, keep last 1: the watcher may skip frames, but each one it has must be the
  // server's at that step, bit for bit (hex floats compared as text).
  ASSERT_GT(seen.size(), 60u) << "the watcher received too few frames";
  std::size_t compared = 0;
  for (const auto& [step, line] : seen) {
    auto it = served.find(step);
    ASSERT_NE(it, served.end()) << "step " << step << " is not in the server's trace";
    ASSERT_EQ(line, it->second) << "poses differ at step " << step;
    ++compared;
  }
  EXPECT_GE(compared, 60u);
  // The driver's pult reached the server: the recording has lift = 1 from some step on, and the
  // lift moved the palm (the last pose differs from the first frame's).
  const sim::engine::Recording rec = sim::engine::readRecording((dir / "server.rec").string());
  bool lifted = false;
  for (const auto& [step, values] : rec.pult) lifted = lifted || values.at(1) == 1.0;
  EXPECT_TRUE(lifted) << "no pult line with lift = 1 in the server's recording";
  EXPECT_NE(served.begin()->second.substr(served.begin()->second.find(' ')),
            seen.rbegin()->second.substr(seen.rbegin()->second.find(' ')));
  // The server's recording replays bit for bit.
  Process replay({"replay", "--verify", (dir / "server.rec").string()}, dir / "replay.out");
  EXPECT_EQ(replay.wait(60.0), 0) << replay.output();
}

TEST(Net, FrozenOrKilledViewerLeavesTheServerAtRateAndARestartedOneResumes) {
  const fs::path dir = scratch();
  const std::string part = partition();
  Process server(cat(std::vector<std::string>{"serve", source(kScene), "--duration", "60",
                                              "--trace", (dir / "server.trace").string()},
                     classArgs(part)),
                 dir / "server.out");
  Process first(cat(std::vector<std::string>{"view", "--remote", "--headless", "--trace",
                                             (dir / "first.trace").string()},
                    classArgs(part)),
                dir / "first.out");
  ASSERT_TRUE(eventually(30.0, [&] { return lines(dir / "first.trace").size() > 20; }))
      << first.output();
  // The server's real-time factor over `seconds` of wall time, from its trace. It is paced to
  // real time, so on a loaded machine it may fall behind a little; below half would be a server
  // held up by a subscriber.
  auto rate = [&](double seconds) {
    const std::uint64_t s0 = lastStep(dir / "server.trace");
    const auto t0 = Clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    const std::uint64_t s1 = lastStep(dir / "server.trace");
    return static_cast<double>(s1 - s0) / 240.0 /
           std::chrono::duration<double>(Clock::now() - t0).count();
  };
  first.kill(SIGSTOP);  // a frozen subscriber: it reads nothing, its socket buffer fills
  EXPECT_GT(rate(1.5), 0.5) << "server real-time factor with a frozen viewer";
  first.kill(SIGKILL);
  first.wait(10.0);
  EXPECT_GT(rate(1.5), 0.5) << "server real-time factor after the viewer was killed";
  EXPECT_TRUE(server.running());
  // A new viewer (same station name) picks the stream up again.
  const std::uint64_t until = lastStep(dir / "server.trace") + 120;
  Process second(cat(std::vector<std::string>{"view", "--remote", "--headless", "--trace",
                                              (dir / "second.trace").string(), "--until-step",
                                              std::to_string(until)},
                     classArgs(part)),
                 dir / "second.out");
  ASSERT_EQ(second.wait(40.0), 0) << second.output();
  const auto served = poseTrace(dir / "server.trace");
  for (const auto& [step, line] : poseTrace(dir / "second.trace")) {
    ASSERT_EQ(line, served.at(step)) << "step " << step;
  }
}

TEST(Net, StationReportsLinkLostWhenTheServerDiesAndResumesWithANewServer) {
  const fs::path dir = scratch();
  const std::string part = partition();
  const std::vector<std::string> serve =
      cat(std::vector<std::string>{"serve", source(kScene), "--duration", "60"}, classArgs(part));
  auto first = std::make_unique<Process>(serve, dir / "first.out");
  Process viewer(
      cat(std::vector<std::string>{"view", "--remote", "--headless", "--station", "watch"},
          classArgs(part)),
      dir / "viewer.out");
  // The instructor's view of the station: its status topic (sent every 0.5 s).
  remote::ClassAddress address;
  address.partition = part;
  remote::Bus bus(address, remote::Bus::Role::Instructor);
  remote::StationStatus status;
  auto statusIs = [&](bool link_ok, std::uint64_t min_frames) {
    return [&, link_ok, min_frames] {
      while (bus.takeStatus(status)) {
        if (status.station == "watch" && status.link_ok == link_ok &&
            status.frames_received >= min_frames) {
          return true;
        }
      }
      return false;
    };
  };
  ASSERT_TRUE(eventually(30.0, statusIs(true, 10))) << viewer.output();
  first->kill(SIGKILL);  // the server (or its network) dies without a word
  first->wait(10.0);
  ASSERT_TRUE(eventually(10.0, statusIs(false, 0))) << "the station never reported the link lost\n"
                                                    << viewer.output();
  const std::uint64_t before = status.frames_received;
  Process second(serve, dir / "second.out");
  ASSERT_TRUE(eventually(30.0, statusIs(true, before + 10))) << "no resume with the new server\n"
                                                             << viewer.output();
  viewer.kill(SIGINT);
  ASSERT_EQ(viewer.wait(20.0), 0) << viewer.output();
  EXPECT_NE(viewer.output().find("link lost 1 times"), std::string::npos) << viewer.output();
}

TEST(Net, MalformedAndOutOfOrderSamplesAreDroppedAndCounted) {
  const fs::path dir = scratch();
  const std::string part = partition();
  // The test is the server: an identity, then good, malformed, out-of-order and foreign frames.
  remote::ClassAddress address;
  address.partition = part;
  remote::Bus rogue(address, remote::Bus::Role::Server);
  const sim::engine::Scene scene = sim::engine::loadScene(source(kScene));
  sim::engine::Session session(scene);
  const remote::SceneIdentity id = remote::identityOf(scene, 42);
  rogue.publishIdentity(id);
  Process viewer(cat(std::vector<std::string>{"view", "--remote", "--headless", "--duration", "8"},
                     classArgs(part)),
                 dir / "viewer.out");
  ASSERT_TRUE(eventually(30.0, [&] { return rogue.stateSubscribers() > 0; }));
  // Raw garbage at every DDS port of the domain on loopback: RTPS must reject it quietly.
  {
    const int sock = ::socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const char garbage[] = "RTPS\x02\x03garbage that is not a submessage";
    for (int port = 7400; port < 7400 + 250; ++port) {
      to.sin_port = htons(static_cast<std::uint16_t>(port));
      ::sendto(sock, garbage, sizeof garbage, 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
    }
    ::close(sock);
  }
  remote::StateFrame f;
  std::uint64_t n = 100;
  // Each kind is sent for a while (best effort, keep last 1: a sample can be lost on loopback
  // under load, so the assertion is "at least one counted", with the exact kinds apart).
  for (int round = 0; round < 40; ++round) {
    remote::frameOf(session, 42, n++, false, f);
    rogue.publishState(f);  // good
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    remote::frameOf(session, 42, n++, false, f);
    f.poses.pop_back();  // wrong size
    rogue.publishState(f);
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    remote::frameOf(session, 42, n++, false, f);
    f.poses[3] = std::nan("");  // not finite
    rogue.publishState(f);
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    remote::frameOf(session, 42, n - 50, false, f);  // an old frame number
    rogue.publishState(f);
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_EQ(viewer.wait(30.0), 0) << viewer.output();
  const std::string out = viewer.output();
  unsigned long long frames = 0, dropped = 0, malformed = 0, late = 0, foreign = 0, link = 0,
                     sent = 0;
  const auto pos = out.find("view station: frames");
  ASSERT_NE(pos, std::string::npos) << out;
  ASSERT_EQ(
      std::sscanf(out.c_str() + pos,
                  "view station: frames %llu, last step %*u, link lost %llu times, dropped %llu "
                  "(%llu malformed, %llu out of order, %llu foreign), pult samples sent %llu",
                  &frames, &link, &dropped, &malformed, &late, &foreign, &sent),
      7)
      << out;
  EXPECT_GE(frames, 1u);
  EXPECT_GE(malformed, 2u);  // at least one of each malformed kind
  EXPECT_GE(late, 1u);
  EXPECT_EQ(dropped, malformed + late + foreign);
}

// The server writes its state frames on a writer thread (ServeOptions::publish_thread): the
// frame loop only hands each frame over, a frame still waiting when the next is ready is replaced
// and counted, and stopping writes what is waiting. Run as fast as it goes (not paced), so frames
// do get replaced; every handed-over frame must be either written or counted as replaced, and the
// station must end up holding the very last frame. Inline writing is checked the same way.
TEST(Net, StateWriterThreadWritesOrCountsEveryFrameAndFlushesTheLastOnStop) {
  const std::string part = partition();
  remote::ClassAddress address;
  address.partition = part;
  remote::Bus station(address, remote::Bus::Role::Station);
  const sim::engine::Scene scene = sim::engine::loadScene(source(kScene));
  for (const bool threaded : {true, false}) {
    SCOPED_TRACE(threaded ? "writer thread" : "inline");
    remote::ServeOptions options;
    options.address = address;
    options.duration_s = 2.0;
    options.realtime = false;
    options.publish_thread = threaded;
    options.wait_for_subscribers = 1;
    options.wait_timeout_s = 30.0;
    const remote::ServeResult r = remote::serve(scene, options);
    const std::uint64_t frames = r.run.frame_time.count();
    ASSERT_GE(frames, 100u);  // 2 s at the scene's frame rate
    if (threaded) {
      EXPECT_EQ(r.state_handoff_time.count(), frames);
      EXPECT_EQ(r.state_write_time.count() + r.frames_superseded, frames);
    } else {
      EXPECT_EQ(r.state_handoff_time.count(), 0u);
      EXPECT_EQ(r.state_write_time.count(), frames);
      EXPECT_EQ(r.frames_superseded, 0u);
    }
    // The station's newest sample is the run's last frame (frame numbers count from 0).
    remote::StateFrame f;
    std::uint64_t newest = 0;
    EXPECT_TRUE(eventually(10.0,
                           [&] {
                             while (station.takeState(f)) newest = f.frame;
                             return newest == frames - 1;
                           }))
        << "newest frame received " << newest << " of " << frames;
  }
}

TEST(Net, MalformedPultAndCommandsAreCountedByTheServer) {
  const fs::path dir = scratch();
  const std::string part = partition();
  Process server(
      cat(std::vector<std::string>{"serve", source(kScene), "--duration", "60"}, classArgs(part)),
      dir / "server.out");
  remote::ClassAddress address;
  address.partition = part;
  remote::Bus station(address, remote::Bus::Role::Station);
  remote::SceneIdentity id;
  ASSERT_TRUE(eventually(30.0, [&] { return station.takeIdentity(id); })) << server.output();
  remote::StateFrame f;
  ASSERT_TRUE(eventually(30.0, [&] { return station.takeState(f); }));
  // Reliable topic: once the server's reader has matched (it sends state, so discovery is done
  // both ways soon after), every sample arrives. Send for a while to cover the match.
  for (int i = 0; i < 30; ++i) {
    station.publishPult({"rogue", 1000, {0.0}, {}});                // wrong size
    station.publishPult({"rogue", 1001, {0.0, std::nan("")}, {}});  // not finite
    station.publishPult({"", 1002, {0.0, 0.0}, {}});                // no station name
    station.publishPult(
        {"late", static_cast<std::uint64_t>(100 - i), {0.0, 0.0}, {}});  // seq going back
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  server.kill(SIGINT);
  ASSERT_EQ(server.wait(20.0), 0) << server.output();
  const std::string out = server.output();
  unsigned long long samples = 0, commands = 0, malformed = 0, late = 0;
  const auto pos = out.find("serve: pult samples");
  ASSERT_NE(pos, std::string::npos) << out;
  ASSERT_EQ(
      std::sscanf(
          out.c_str() + pos,
          "serve: pult samples %llu, commands %llu, dropped %llu malformed, %llu out of order",
          &samples, &commands, &malformed, &late),
      4)
      << out;
  EXPECT_GE(malformed, 3u);
  EXPECT_GE(late, 1u);
  EXPECT_GE(samples, 1u);  // the first "late" sample is accepted, the following ones are older
}

TEST(Net, ClassesOnOtherPartitionsOrDomainsAreInvisible) {
  const fs::path dir = scratch();
  const std::string part = partition();
  const std::string other = part + "-other";
  // Ours: grasp. Others: the same partition on another domain, another partition on ours.
  Process mine(cat(std::vector<std::string>{"serve", source(kScene), "--duration", "60"},
                   classArgs(part, 3)),
               dir / "mine.out");
  Process other_domain(
      cat(std::vector<std::string>{"serve", source("scenes/wg7152.yaml"), "--duration", "60"},
          classArgs(part, 4)),
      dir / "other_domain.out");
  Process other_partition(
      cat(std::vector<std::string>{"serve", source("scenes/wg7152.yaml"), "--duration", "60"},
          classArgs(other, 3)),
      dir / "other_partition.out");
  remote::ClassAddress address;
  address.domain = 3;
  address.partition = part;
  remote::Bus bus(address, remote::Bus::Role::Station);
  remote::SceneIdentity id;
  ASSERT_TRUE(eventually(30.0, [&] { return bus.takeIdentity(id); })) << mine.output();
  EXPECT_EQ(id.scene_name, sim::engine::loadScene(source(kScene)).name);
  // The other servers are up too (their own station sees them) ...
  remote::ClassAddress theirs = address;
  theirs.partition = other;
  remote::Bus probe(theirs, remote::Bus::Role::Station);
  remote::SceneIdentity their_id;
  ASSERT_TRUE(eventually(30.0, [&] { return probe.takeIdentity(their_id); }))
      << other_partition.output();
  // ... and for 2 s every frame our station gets is from our server.
  remote::StateFrame f;
  std::size_t frames = 0;
  const auto end = Clock::now() + std::chrono::seconds(2);
  while (Clock::now() < end) {
    while (bus.takeState(f)) {
      ++frames;
      ASSERT_EQ(f.run_id, id.run_id) << "a frame from another class";
    }
    remote::SceneIdentity again;
    while (bus.takeIdentity(again)) ASSERT_EQ(again.run_id, id.run_id);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GT(frames, 10u);

  // A class nobody serves: the instructor and a station give up after --server-timeout, naming
  // the class they looked for.
  const std::string empty = part + "-empty";
  Process lonely_instructor(
      cat(std::vector<std::string>{"instruct", "--command", "pause", "--server-timeout", "1.5"},
          classArgs(empty, 3)),
      dir / "lonely_instructor.out");
  Process lonely_station(
      cat(std::vector<std::string>{"view", "--remote", "--headless", "--server-timeout", "1.5"},
          classArgs(empty, 3)),
      dir / "lonely_station.out");
  const std::string missing = "no server in domain 3 partition \"" + empty + "\" after 1.5 s";
  EXPECT_EQ(lonely_instructor.wait(30.0), 1) << lonely_instructor.output();
  EXPECT_NE(lonely_instructor.output().find(missing), std::string::npos)
      << lonely_instructor.output();
  EXPECT_EQ(lonely_station.wait(30.0), 1) << lonely_station.output();
  EXPECT_NE(lonely_station.output().find(missing), std::string::npos) << lonely_station.output();
}

TEST(Net, InstructorPausesInjectsAFaultAndTheRecordingReplays) {
  const fs::path dir = scratch();
  const std::string part = partition();
  Process server(recordingServe(source(kScene), dir, part), dir / "server.out");
  Process driver(cat(std::vector<std::string>{"view", "--remote", "--headless", "--station", "pult",
                                              "--pult", "lift=1@0.2"},
                     classArgs(part)),
                 dir / "driver.out");
  Watcher watcher(part);
  remote::Bus& bus = watcher.bus;
  remote::StateFrame& f = watcher.frame;
  ASSERT_TRUE(watcher.running()) << server.output();

  Process pause(cat(std::vector<std::string>{"instruct", "--command", "pause", "--listen", "1"},
                    classArgs(part)),
                dir / "pause.out");
  ASSERT_EQ(pause.wait(40.0), 0) << pause.output();
  EXPECT_NE(pause.output().find("pause by instructor"), std::string::npos) << pause.output();
  // Paused: frames keep coming, flagged paused, with one step number.
  std::vector<std::uint64_t> paused_steps;
  ASSERT_TRUE(eventually(10.0, [&] {
    while (bus.takeState(f)) {
      if (f.paused) paused_steps.push_back(f.step);
    }
    return paused_steps.size() >= 10;
  }));
  for (std::uint64_t s : paused_steps) EXPECT_EQ(s, paused_steps.front());

  Process fault(cat(std::vector<std::string>{"instruct", "--command", "fault:lift:reversed",
                                             "--command", "resume", "--command",
                                             "fault:nosuch:weak", "--list", "--listen", "3"},
                    classArgs(part)),
                dir / "fault.out");
  ASSERT_EQ(fault.wait(40.0), 0) << fault.output();
  const std::string out = fault.output();
  EXPECT_NE(out.find("motor lift reversed"), std::string::npos) << out;
  EXPECT_NE(out.find("refused"), std::string::npos) << out;
  EXPECT_NE(out.find("station pult"), std::string::npos) << "the instructor lists the stations\n"
                                                         << out;
  // Running again after the resume.
  const std::uint64_t resumed_at = paused_steps.front();
  ASSERT_TRUE(
      eventually(10.0, [&] { return bus.takeState(f) && !f.paused && f.step > resumed_at + 120; }));
  server.kill(SIGINT);
  ASSERT_EQ(server.wait(20.0), 0) << server.output();
  const sim::engine::Recording rec = sim::engine::readRecording((dir / "server.rec").string());
  ASSERT_FALSE(rec.faults.empty()) << "the fault is in the recording";
  EXPECT_EQ(rec.faults.begin()->second.at(0).second.kind, sim::engine::MotorFault::Kind::Reversed);
  // Without the fault line the replay diverges: the fault changed the motion.
  expectReplayNeedsLines(dir, "f ");
}

// Pult-axis faults from the instructor: the server's session holds the control
// (Session::setControlFault) whatever the station sends; `clear` frees it. The recording gets `a`
// lines and replays bit for bit.
TEST(Net, InstructorSticksAPultAxisWhateverTheStationSends) {
  const fs::path dir = scratch();
  const std::string part = partition();
  Process server(recordingServe(source(kScene), dir, part), dir / "server.out");
  Process driver(cat(std::vector<std::string>{"view", "--remote", "--headless", "--station", "pult",
                                              "--pult", "lift=0.5@0.2", "--pult", "lift=-1@8"},
                     classArgs(part)),
                 dir / "driver.out");
  Watcher watcher(part);
  remote::Bus& bus = watcher.bus;
  remote::StateFrame& f = watcher.frame;
  ASSERT_TRUE(watcher.running()) << server.output();
  const std::size_t lift = 1;  // scenes/grasp.yaml: grip, lift
  ASSERT_TRUE(eventually(
      20.0, [&] { return bus.takeState(f) && f.pult.size() == 2 && f.pult[lift] == 0.5; }));
  Process stick(cat(std::vector<std::string>{"instruct", "--command", "fault:lift:axis_stuck",
                                             "--listen", "1"},
                    classArgs(part)),
                dir / "stick.out");
  ASSERT_EQ(stick.wait(40.0), 0) << stick.output();
  EXPECT_NE(stick.output().find("control lift axis_stuck at 0.5"), std::string::npos)
      << stick.output();
  // The station sets -1 at 8 s (late enough for a slow instructor start); the server keeps 0.5
  // for every frame after the fault, up to 9 s.
  bool held = true;
  ASSERT_TRUE(eventually(30.0, [&] {
    while (bus.takeState(f)) {
      if (f.pult[lift] != 0.5) held = false;
      if (f.sim_time_s > 9.0) return true;
    }
    return false;
  }));
  EXPECT_TRUE(held) << "the stuck axis moved";
  Process clear(
      cat(std::vector<std::string>{"instruct", "--command", "clear:lift", "--listen", "1"},
          classArgs(part)),
      dir / "clear.out");
  ASSERT_EQ(clear.wait(40.0), 0) << clear.output();
  EXPECT_TRUE(eventually(10.0, [&] { return bus.takeState(f) && f.pult[lift] == -1.0; }))
      << "freed, the axis follows the station's -1 again";
  server.kill(SIGINT);
  ASSERT_EQ(server.wait(20.0), 0) << server.output();
  const sim::engine::Recording rec = sim::engine::readRecording((dir / "server.rec").string());
  ASSERT_EQ(rec.control_faults.size(), 2u) << "stuck and cleared, as `a` lines";
  EXPECT_EQ(rec.control_faults.begin()->second.at(0).second.kind,
            sim::engine::ControlFault::Kind::AxisStuck);
  EXPECT_EQ(rec.control_faults.begin()->second.at(0).second.value, 0.5);
  Process replay({"replay", "--verify", (dir / "server.rec").string()}, dir / "replay.out");
  EXPECT_EQ(replay.wait(60.0), 0) << replay.output();
}

// Sensor faults from the instructor: a target with a dot is a sensor the scheme reads. The faults
// reach the recording as `s` lines; the replay matches, and diverges without them.
TEST(Net, InstructorInjectsSensorFaultsAndTheRecordingReplays) {
  const fs::path dir = scratch();
  const std::string part = partition();
  Process server(recordingServe(source("tests/engine/data/sensor_servo.yaml"), dir, part, false),
                 dir / "server.out");
  Watcher watcher(part);
  remote::Bus& bus = watcher.bus;
  remote::StateFrame& f = watcher.frame;
  ASSERT_TRUE(watcher.running()) << server.output();
  Process fault(
      cat(std::vector<std::string>{"instruct", "--command", "fault:joint.hinge.position:noise:0.01",
                                   "--command", "fault:joint.hinge.position:dropout", "--command",
                                   "fault:joint.nosuch.position:dropout", "--listen", "2"},
          classArgs(part)),
      dir / "fault.out");
  ASSERT_EQ(fault.wait(40.0), 0) << fault.output();
  const std::string out = fault.output();
  EXPECT_NE(out.find("sensor joint.hinge.position dropout"), std::string::npos) << out;
  EXPECT_NE(out.find("refused"), std::string::npos) << out;
  EXPECT_NE(out.find("nosuch"), std::string::npos) << out;
  const double faulted_at = f.sim_time_s;
  ASSERT_TRUE(
      eventually(10.0, [&] { return bus.takeState(f) && f.sim_time_s > faulted_at + 2.5; }));
  server.kill(SIGINT);
  ASSERT_EQ(server.wait(20.0), 0) << server.output();
  const sim::engine::Recording rec = sim::engine::readRecording((dir / "server.rec").string());
  ASSERT_FALSE(rec.sensor_faults.empty()) << "the sensor faults are in the recording";
  EXPECT_EQ(rec.sensor_faults.rbegin()->second.back().second.kind,
            sim::engine::SensorFault::Kind::Dropout);
  expectReplayNeedsLines(dir, "s ");
}

// Parameter changes from the instructor: the server reloads the scene with the override and goes
// on from its state. The event log shows the change and the refusals (an unknown key, a change of
// structure), each naming its key; the recording's `c` line makes the replay match, and without
// it the replay diverges (the stall torque changed the servo's motion).
TEST(Net, InstructorSetsAParameterAndTheRecordingReplays) {
  const fs::path dir = scratch();
  const std::string part = partition();
  Process server(recordingServe(source("tests/engine/data/sensor_servo.yaml"), dir, part),
                 dir / "server.out");
  Watcher watcher(part);
  remote::Bus& bus = watcher.bus;
  remote::StateFrame& f = watcher.frame;
  ASSERT_TRUE(watcher.running()) << server.output();
  Process set(cat(std::vector<std::string>{"instruct", "--command", "set:motors.drive.Mp:0.35",
                                           "--command", "set:motors.nosuch.Mp:1", "--command",
                                           "set:solver.time_step:0.005", "--command",
                                           "set:motors.drive.Mp:0", "--command",
                                           "set:motors.drive.Mp:-1", "--listen", "2"},
                  classArgs(part)),
              dir / "set.out");
  ASSERT_EQ(set.wait(40.0), 0) << set.output();
  const double set_at = f.sim_time_s;
  ASSERT_TRUE(eventually(10.0, [&] { return bus.takeState(f) && f.sim_time_s > set_at + 2.5; }));
  server.kill(SIGINT);
  ASSERT_EQ(server.wait(20.0), 0) << server.output();
  std::string events;
  for (const std::string& line : lines(dir / "events.log")) events += line + "\n";
  EXPECT_NE(events.find("set set motors.drive.Mp=0.35 by instructor"), std::string::npos) << events;
  EXPECT_NE(events.find("refused set motors.nosuch.Mp=1"), std::string::npos) << events;
  EXPECT_NE(events.find("nosuch"), std::string::npos) << events;
  EXPECT_NE(events.find("refused set solver.time_step=0.005: the time step changes"),
            std::string::npos)
      << events;
  // Numerical nonsense from the instructor is refused naming the key; the session goes on.
  EXPECT_NE(events.find("refused set motors.drive.Mp=0: "), std::string::npos) << events;
  EXPECT_NE(events.find("refused set motors.drive.Mp=-1: "), std::string::npos) << events;
  EXPECT_NE(events.find("stall torque must be > 0"), std::string::npos) << events;
  const sim::engine::Recording rec = sim::engine::readRecording((dir / "server.rec").string());
  ASSERT_EQ(rec.changes.size(), 1u) << "only the accepted change is recorded";
  EXPECT_EQ(rec.changes.begin()->second.at(0).path, "motors.drive.Mp");
  EXPECT_EQ(rec.changes.begin()->second.at(0).value, "0.35");
  expectReplayNeedsLines(dir, "c ");
}

// A served scenario's parameter change and an instructor's brake_released: the link that the
// brake held at zero voltage creeps down (0.04 rad/s against the unpowered motor, so its centre,
// at z = 0 when held, is below -0.01 m 1.5 s after the release); both events are in the log and
// the recording, and the replay diverges without the fault line.
TEST(Net, InstructorReleasesABrakeAndAServedScenarioChangesAParameter) {
  const fs::path dir = scratch();
  const std::string part = partition();
  {
    std::ofstream scenario(dir / "brake.scenario.yaml");
    scenario << "scene: " << source("tests/engine/data/braked_link.yaml") << "\nduration: 60\n"
             << "changes:\n  - {at: 0.2, set: motors.drive.b, value: 0.5}\n"
             << "expect:\n  - {signal: time, min: 0}\n";
  }
  Process server(cat(std::vector<std::string>{"serve", (dir / "brake.scenario.yaml").string(),
                                              "--record", (dir / "server.rec").string(), "--events",
                                              (dir / "events.log").string()},
                     classArgs(part)),
                 dir / "server.out");
  Watcher watcher(part);
  ASSERT_TRUE(watcher.running()) << server.output();
  EXPECT_NEAR(watcher.frame.poses.at(2), 0.0, 1e-6) << "held by the brake";
  Process release(cat(std::vector<std::string>{"instruct", "--command",
                                               "fault:drive:brake_released", "--listen", "1"},
                      classArgs(part)),
                  dir / "release.out");
  ASSERT_EQ(release.wait(40.0), 0) << release.output();
  const double released_at = watcher.frame.sim_time_s;
  ASSERT_TRUE(eventually(15.0, [&] {
    return watcher.bus.takeState(watcher.frame) && watcher.frame.sim_time_s > released_at + 2.0;
  }));
  EXPECT_LT(watcher.frame.poses.at(2), -0.01) << "released: the link creeps down";
  server.kill(SIGINT);
  ASSERT_EQ(server.wait(20.0), 0) << server.output();
  std::string events;
  for (const std::string& line : lines(dir / "events.log")) events += line + "\n";
  EXPECT_NE(events.find("set set motors.drive.b=0.5 by scenario"), std::string::npos) << events;
  EXPECT_NE(events.find("motor drive brake_released"), std::string::npos) << events;
  const sim::engine::Recording rec = sim::engine::readRecording((dir / "server.rec").string());
  ASSERT_EQ(rec.changes.size(), 1u);
  ASSERT_FALSE(rec.faults.empty());
  EXPECT_EQ(rec.faults.begin()->second.at(0).second.kind,
            sim::engine::MotorFault::Kind::BrakeReleased);
  expectReplayNeedsLines(dir, "f ");
}

// A served scenario is graded: the grasp's jaws, open against their limit from the start, stall;
// the overload (5 points) reaches the stations as a score event and in every state frame, the
// instructor's list shows the running score of the server and of each station, and the server's
// result file equals, byte for byte, the one `replay --result` makes from its recording.
TEST(Net, ServedScenarioIsGradedAndTheScoreReachesStationsAndInstructor) {
  const fs::path dir = scratch();
  const std::string part = partition();
  {
    std::ofstream scenario(dir / "graded.scenario.yaml");
    scenario << "scene: " << source(kScene) << "\nduration: 8\n"
             << "expect:\n  - {name: palm up, signal: body.palm.z, min: 0.16, by: 4}\n"
             << "scoring:\n  pass_mark: 50\n  penalties:\n"
             << "    - {kind: motor_overload, name: jaws stalled, motors: [jaws], fraction: 0.9, "
                "for: 0.5, points: 5}\n"
             << "  tasks:\n    - {expect: palm up, points: 10}\n";
  }
  Process server(cat(std::vector<std::string>{"serve", (dir / "graded.scenario.yaml").string(),
                                              "--record", (dir / "server.rec").string(), "--events",
                                              (dir / "events.log").string(), "--result",
                                              (dir / "served.json").string(), "--trainee", "Eve"},
                     classArgs(part)),
                 dir / "server.out");
  Process station(cat(std::vector<std::string>{"view", "--remote", "--headless", "--station", "eve",
                                               "--pult", "lift=1@0.1", "--duration", "30"},
                      classArgs(part)),
                  dir / "station.out");
  Watcher watcher(part);
  ASSERT_TRUE(eventually(30.0, [&] {
    return watcher.bus.takeState(watcher.frame) && watcher.frame.sim_time_s > 1.5;
  })) << server.output();
  EXPECT_TRUE(watcher.frame.scored);
  EXPECT_DOUBLE_EQ(watcher.frame.score, 95.0);
  Process list(
      cat(std::vector<std::string>{"instruct", "--list", "--listen", "3"}, classArgs(part)),
      dir / "list.out");
  ASSERT_EQ(list.wait(40.0), 0) << list.output();
  EXPECT_NE(list.output().find(", score 95/100"), std::string::npos) << list.output();
  EXPECT_NE(list.output().find("station eve: viewer"), std::string::npos) << list.output();
  EXPECT_NE(list.output().find("has a pult, score 95/100"), std::string::npos) << list.output();
  ASSERT_EQ(server.wait(30.0), 0) << server.output();
  std::string events;
  for (const std::string& line : lines(dir / "events.log")) events += line + "\n";
  EXPECT_NE(events.find("score -5 jaws stalled"), std::string::npos) << events;
  EXPECT_NE(events.find("score task done: palm up"), std::string::npos) << events;
  EXPECT_NE(events.find("score final score 95/100, pass mark 50: PASSED"), std::string::npos)
      << events;
  Process replay(
      {"replay", (dir / "server.rec").string(), "--result", (dir / "replayed.json").string()},
      dir / "replay.out");
  ASSERT_EQ(replay.wait(60.0), 0) << replay.output();
  auto read = [](const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  const std::string served = read(dir / "served.json");
  EXPECT_NE(served.find("\"trainee\": \"Eve\""), std::string::npos) << served;
  EXPECT_NE(served.find("\"total\": 95.0"), std::string::npos) << served;
  EXPECT_EQ(served, read(dir / "replayed.json"));
}

// A secured class (docs/network.md, "A secured class"): one authority; a server, station
// "alice" driving the pult, instructor "teach", and the test's own station "watch" seeing the
// state and the events. Four intruders act at once for a few seconds, then the instructor
// pauses:
// (a) a participant without DDS Security (an open station and instructor) sees nothing and its
//     commands and pult never match the server's readers;
// (b) station "bob" cannot make a command writer with its own files (its permissions refuse);
//     with a forged local governance (signed by a CA of its own, added to its CA file) its own
//     Fast DDS lets it, but the server refuses those writers (counted, logged by Fast DDS): its
//     pause has no effect;
// (c) station "bob" sends pult samples under the name "alice": the server drops them (the writer's
//     partition says bob), counts and logs them;
// (e) a station certified by another authority sees nothing and is counted as failing
//     authentication;
// (d) then the legitimate instructor's pause works in the same class.
namespace security = sim::engine::security;

// DIR/NAME with a CA, and ROLE-NAME folders issued from it.
fs::path authority(const fs::path& dir, const std::string& name) {
  security::AuthorityOptions options;
  options.centre = name + " centre";
  security::initAuthority((dir / name).string(), options);
  return dir / name;
}

// A domain of its own: the server counts every participant of the domain that fails
// authentication, and other tests' participants (domains 0, 3, 4) would be counted too.
constexpr int kSecuredDomain = 9;

remote::ClassAddress securedAddress(const std::string& part, const fs::path& folder) {
  remote::ClassAddress a;
  a.domain = kSecuredDomain;
  a.partition = part;
  a.security = folder.string();
  return a;
}

// Whether a server's output ends with a failure inside Fast DDS 2.9.1 itself, not in our code: one
// of the library's assertions (Debian builds it with them on), e.g. `receiving_list.size() > 0` in
// SecurityManager::encode_rtps_message, or an AddressSanitizer report whose faulting access is in
// libfastrtps, as its security discovery's use-after-free (tests/sanitizers/asan.supp). Both were
// seen in the secured class, whose intruders fail authentication over and over.
bool diedInsideFastDds(const std::string& out) {
  const auto assertion = out.find(": ./src/cpp/");
  if (assertion != std::string::npos && out.find("Assertion", assertion) != std::string::npos)
    return true;
  const auto asan = out.find("ERROR: AddressSanitizer");
  if (asan == std::string::npos) return false;
  const auto frame = out.find("#1 ", asan);
  const auto line_end = frame == std::string::npos ? frame : out.find('\n', frame);
  return frame != std::string::npos &&
         out.substr(frame, line_end - frame).find("libfastrtps") != std::string::npos;
}

TEST(Net, SecuredClassIgnoresIntrudersAndObeysItsInstructor) {
  const fs::path dir = scratch();
  const std::string part = partition();
  const fs::path centre = authority(dir, "centre");
  auto issue = [&](security::Role role, const std::string& name) {
    return fs::path(security::issue(centre.string(), role, name));
  };
  const fs::path server_dir = issue(security::Role::Server, "srv");
  const fs::path alice = issue(security::Role::Station, "alice");
  const fs::path watch = issue(security::Role::Station, "watch");
  const fs::path bob = issue(security::Role::Station, "bob");
  const fs::path teach = issue(security::Role::Instructor, "teach");
  // (e) Another centre's station.
  const fs::path other = authority(dir, "other");
  const fs::path mallory = security::issue(other.string(), security::Role::Station, "mallory");
  // (b) bob's folder with a forged governance: no read or write access control, signed by a CA
  // of bob's own that its CA file lists after the real one (whose subject it still announces).
  const fs::path forger = authority(dir, "forger");
  const fs::path rogue = dir / "rogue";
  fs::copy(bob, rogue);
  {
    std::ifstream real(centre / "ca.pem"), fake(forger / "ca.pem");
    std::stringstream both;
    both << real.rdbuf() << fake.rdbuf();
    fs::remove(rogue / "ca.pem");
    std::ofstream(rogue / "ca.pem") << both.str();
    std::ifstream in(centre / "governance.xml");
    std::stringstream text;
    text << in.rdbuf();
    std::string xml = text.str();
    for (const std::string kind : {"read", "write"}) {
      const std::string on = "<enable_" + kind + "_access_control>true";
      if (const auto at = xml.find(on); at != std::string::npos)
        xml.replace(at, on.size(), "<enable_" + kind + "_access_control>false");
    }
    std::ofstream(dir / "forged.xml") << xml;
    fs::remove(rogue / "governance.p7s");
    security::signDocument(forger.string(), (dir / "forged.xml").string(),
                           (rogue / "governance.p7s").string());
  }

  for (int attempt = 1; attempt <= 2; ++attempt) {
    Process server(cat(std::vector<std::string>{"serve", source(kScene), "--duration", "300",
                                                "--security", server_dir.string(), "--events",
                                                (dir / "events.log").string()},
                       classArgs(part, kSecuredDomain)),
                   dir / "server.out");
    Process station(
        cat(std::vector<std::string>{"view", "--remote", "--headless", "--security", alice.string(),
                                     "--pult", "lift=0.5@0.2", "--server-timeout", "120"},
            classArgs(part, kSecuredDomain)),
        dir / "alice.out");
    remote::Bus watcher(securedAddress(part, watch), remote::Bus::Role::Station);
    remote::StateFrame f;
    std::vector<std::string> events;
    auto poll = [&] {
      remote::Event e;
      while (watcher.takeEvent(e)) events.push_back(e.kind + ": " + e.text);
      return watcher.takeState(f);
    };
    const std::size_t lift = 1;  // scenes/grasp.yaml: grip, lift

    // The intruders, all at once from the start, until the watcher has seen alice's pult applied
    // for 3 s of frames (and 4 s at least). Up to 120 s: with every intruder's handshake retried
    // alongside, alice's station joined only after 40 s on a loaded machine (two builds beside it).
    remote::ClassAddress open;
    open.domain = kSecuredDomain;
    open.partition = part;
    remote::Bus open_station(open, remote::Bus::Role::Station);
    remote::Bus open_instructor(open, remote::Bus::Role::Instructor);
    // (b) With its real files, a station cannot even make a command writer: its own Fast DDS
    // checks bob's permissions. Forged (below), its writers reach the server and are refused there.
    EXPECT_THROW(remote::Bus(securedAddress(part, bob), remote::Bus::Role::Instructor),
                 std::runtime_error);
    remote::Bus forged(securedAddress(part, rogue), remote::Bus::Role::Instructor);
    remote::Bus bob_station(securedAddress(part, bob), remote::Bus::Role::Station);
    remote::Bus foreign(securedAddress(part, mallory), remote::Bus::Role::Station);
    std::uint64_t frames = 0, paused = 0, impostor_lift = 0, open_lift = 0, seen_open = 0,
                  seen_foreign = 0;
    bool alice_seen = false;
    const std::string kBobDropped =
        "pult sample under station \"alice\" from station \"bob\": dropped";
    Clock::time_point bob_dropped{};
    std::uint64_t bob_dropped_round = 0;
    const auto start = Clock::now();
    for (std::uint64_t i = 1; Clock::now() < start + std::chrono::seconds(120); ++i) {
      if (!server.running()) break;
      const std::uint64_t seq = 1'000'000'000'000 + i;  // past any of alice's
      open_station.publishPult({"alice", seq, {0.0, -0.25}, {}});
      open_instructor.publishCommand(
          {"open-intruder", seq, remote::CommandKind::Pause, "", "", 0.0, {}});
      forged.publishCommand({"bob", seq, remote::CommandKind::Pause, "", "", 0.0, {}});
      bob_station.publishPult({"alice", seq, {0.0, -1.0}, {}});
      remote::SceneIdentity id;
      remote::StateFrame other_frame;
      if (open_station.takeIdentity(id) || open_station.takeState(other_frame)) ++seen_open;
      if (foreign.takeIdentity(id) || foreign.takeState(other_frame)) ++seen_foreign;
      while (poll()) {
        if (f.pult.size() != 2) continue;
        if (f.pult[lift] == 0.5) alice_seen = true;
        if (alice_seen) ++frames;
        if (f.paused) ++paused;
        if (f.pult[lift] == -1.0) ++impostor_lift;
        if (f.pult[lift] == -0.25) ++open_lift;
      }
      // Bob's samples must reach the server for (c) to mean anything: the loop goes on for 3 s
      // and 20 rounds past the server's first log of one (his handshake, and the server's keys
      // for his writer, can come well after alice's, as under AddressSanitizer).
      if (bob_dropped_round == 0 && server.output().find(kBobDropped) != std::string::npos) {
        bob_dropped = Clock::now();
        bob_dropped_round = i;
      }
      if (frames >= 180 && Clock::now() > start + std::chrono::seconds(4) &&
          bob_dropped_round != 0 && i >= bob_dropped_round + 20 &&
          Clock::now() > bob_dropped + std::chrono::seconds(3)) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    // Fast DDS 2.9.1 itself can stop the server while it turns the intruders away (see
    // diedInsideFastDds): reported, and the class is run once more, since the checks are of our
    // access control, not of the library's robustness. Any other way of dying fails below.
    if (!alice_seen && attempt == 1 && !server.running() && diedInsideFastDds(server.output())) {
      std::fprintf(stderr, "the server stopped inside Fast DDS 2.9.1 (known flaw); once more:\n%s",
                   server.output().c_str());
      continue;
    }
    // Fast DDS 2.9.1 can also fail alice's handshake with the server while the intruders' are
    // retried around it under load (AddressSanitizer, two test jobs: the server logged a class
    // participant "failed authentication" and alice's station found no server in 120 s); the
    // library does not retry a failed handshake. Alice's station never matching the server is
    // that layer's failure, not our pult path's: reported, and the class is run once more. A
    // station our files make unable to authenticate fails both runs.
    if (!alice_seen && attempt == 1 && server.running()) {
      station.wait(15.0);  // its --server-timeout, 120 s, ends with the loop above
      if (station.output().find("no server in domain") != std::string::npos) {
        std::fprintf(stderr,
                     "alice's station never matched the server (Fast DDS handshake); once "
                     "more:\n%s%s",
                     server.output().c_str(), station.output().c_str());
        continue;
      }
    }
    EXPECT_EQ(seen_open, 0u) << "(a) a participant without a certificate saw the class";
    EXPECT_EQ(open_instructor.commandSubscribers(), 0)
        << "(a) its command writer matched the server";
    EXPECT_EQ(open_lift, 0u) << "(a) its pult reached the server";
    EXPECT_EQ(forged.commandSubscribers(), 0) << "(b) the forged command writer matched the server";
    EXPECT_EQ(paused, 0u) << "(a, b) an intruder paused the class";
    EXPECT_EQ(impostor_lift, 0u) << "(c) bob drove alice's pult";
    EXPECT_EQ(seen_foreign, 0u) << "(e) another authority's station saw the class";
    for (const std::string& e : events) {
      EXPECT_EQ(e.find("open-intruder"), std::string::npos) << e;
      EXPECT_EQ(e.find("by bob"), std::string::npos) << e;
    }

    ASSERT_TRUE(alice_seen) << "alice's pult never reached the server\n"
                            << server.output() << station.output();
    EXPECT_GE(frames, 180u) << "the watcher saw the class all along";

    // (d) The class's instructor pauses it (its handshakes with every participant took more than
    // 20 s once under AddressSanitizer on a busy machine: 60 s allowed). It listens 10 s for the
    // server's event: under AddressSanitizer the event reader's keys once came after 1 s.
    Process pause(
        cat(std::vector<std::string>{"instruct", "--security", teach.string(), "--command", "pause",
                                     "--listen", "10", "--server-timeout", "60"},
            classArgs(part, kSecuredDomain)),
        dir / "pause.out");
    ASSERT_EQ(pause.wait(90.0), 0) << pause.output();
    EXPECT_NE(pause.output().find("pause by teach"), std::string::npos) << pause.output();
    EXPECT_TRUE(eventually(10.0, [&] { return poll() && f.paused; }))
        << "(d) the pause had no effect";

    server.kill(SIGINT);
    ASSERT_EQ(server.wait(20.0), 0) << server.output();
    const std::string out = server.output();
    unsigned long long samples = 0, commands = 0, impostors = 0, refused = 0, writers = 0;
    const auto pos = out.find("serve: pult samples");
    ASSERT_NE(pos, std::string::npos) << out;
    ASSERT_EQ(std::sscanf(out.c_str() + pos, "serve: pult samples %llu, commands %llu", &samples,
                          &commands),
              2)
        << out;
    EXPECT_EQ(commands, 1u) << "only the instructor's pause was applied\n" << out;
    const auto sec = out.find("serve: security: ");
    ASSERT_NE(sec, std::string::npos) << out;
    ASSERT_EQ(std::sscanf(out.c_str() + sec,
                          "serve: security: %llu samples under another name than their writer's, "
                          "%llu participants failed authentication, %llu writers refused by the "
                          "permissions",
                          &impostors, &refused, &writers),
              3)
        << out;
    EXPECT_GE(impostors, 10u) << "(c) bob's samples under alice's name are counted";
    EXPECT_NE(out.find(kBobDropped), std::string::npos) << "(c) and logged\n" << out;
    // The two open participants and the other authority's station, each once (more when another
    // test on this machine uses the domain).
    EXPECT_GE(refused, 3u)
        << "(a, e) participants without or with another authority's certificate\n"
        << out;
    EXPECT_NE(out.find("failed authentication: ignored"), std::string::npos) << out;
    // The forged participant's command and status writers (bob may write neither the command topic
    // nor in an instructor's partition).
    EXPECT_GE(writers, 1u) << "(b) the forged writers are counted\n" << out;
    EXPECT_NE(out.find("Security manager returns an error for writer"), std::string::npos)
        << "(b) and logged (by Fast DDS)\n"
        << out;

    break;
  }
}

// Bad input to `security` and `--security` fails with the file or field and what was expected;
// an open server says so on stderr.
TEST(Net, SecurityFilesAreCheckedAndAnOpenServerSaysSo) {
  const fs::path dir = scratch();
  auto run = [&](const std::vector<std::string>& args, const std::string& name) {
    Process p(args, dir / (name + ".out"));
    const int code = p.wait(30.0);
    return std::make_pair(code, p.output());
  };
  auto [code, out] = run(
      {"security", "issue", (dir / "none").string(), "--role", "station", "--name", "a"}, "no_ca");
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find((dir / "none" / "ca.pem").string() + ": missing"), std::string::npos) << out;
  std::tie(code, out) = run({"security", "init", (dir / "ca").string()}, "init");
  ASSERT_EQ(code, 0) << out;
  std::tie(code, out) = run({"security", "init", (dir / "ca").string()}, "init_again");
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("ca.key: exists already"), std::string::npos) << out;
  std::tie(code, out) =
      run({"security", "issue", (dir / "ca").string(), "--role", "trainee", "--name", "a"}, "role");
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("--role"), std::string::npos) << out;
  std::tie(code, out) = run(
      {"security", "issue", (dir / "ca").string(), "--role", "station", "--name", "a.b"}, "name");
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("--name \"a.b\": expected"), std::string::npos) << out;
  std::tie(code, out) =
      run({"security", "issue", (dir / "ca").string(), "--role", "station", "--name", "alice"},
          "issue");
  ASSERT_EQ(code, 0) << out;
  const fs::path alice = dir / "ca" / "station-alice";
  // A station's folder for the server; a folder without its key; no folder at all.
  std::tie(code, out) =
      run({"serve", source(kScene), "--duration", "1", "--security", alice.string()}, "wrong_role");
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("identity.pem: a station certificate (subject OU=station); `serve` needs a "
                     "server certificate"),
            std::string::npos)
      << out;
  fs::remove(alice / "identity.key");
  std::tie(code, out) =
      run({"view", "--remote", "--headless", "--security", alice.string()}, "no_key");
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find((alice / "identity.key").string() + ": missing or unreadable"),
            std::string::npos)
      << out;
  std::tie(code, out) = run({"instruct", "--security", (dir / "nowhere").string()}, "no_dir");
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("nowhere: --security expects the folder"), std::string::npos) << out;
  // Open: one line on stderr at the start.
  std::tie(code, out) = run(cat(std::vector<std::string>{"serve", source(kScene), "--duration",
                                                         "0.2", "--as-fast-as-possible"},
                                classArgs(partition())),
                            "open");
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("serve: an OPEN class: anyone who knows domain 0"), std::string::npos) << out;
}

TEST(Net, ServerAndViewerInANetworkNamespace) {
  // `unshare -rn`: a user and network namespace with only a loopback interface, so the class is
  // cut off from the machine's network (no multicast route: discovery by the 127.0.0.1 peer).
  if (std::system("unshare -rn true >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "unshare -rn is not permitted here (user namespaces disabled)";
  }
  if (std::system("command -v ip >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "no `ip` command (iproute2)";
  const fs::path dir = scratch();
  const std::string bin = SIMTRAINER_BIN;
  const std::string script = "ip link set lo up && " + bin + " serve " + source(kScene) +
                             " --duration 30 --partition ns --trace " +
                             (dir / "server.trace").string() + " & server=$!; " + bin +
                             " view --remote --headless --partition ns --until-step 240 --trace " +
                             (dir / "view.trace").string() +
                             "; code=$?; kill -INT $server; wait $server; exit $code";
  Process ns(Process::Raw{}, {"/usr/bin/unshare", "-rn", "/bin/sh", "-c", script}, dir / "ns.out");
  ASSERT_EQ(ns.wait(50.0), 0) << ns.output();
  const auto served = poseTrace(dir / "server.trace");
  const auto seen = poseTrace(dir / "view.trace");
  ASSERT_GT(seen.size(), 10u);
  for (const auto& [step, line] : seen) ASSERT_EQ(line, served.at(step)) << "step " << step;
}

// A misbehaving network (docs/network.md#a-misbehaving-network): two classes at once, each in a
// network namespace of its own (`unshare -rn`) whose UDP packets all pass through netem_queue
// (NFQUEUE; this kernel has no sch_netem). "bad": 20 % loss, 100 ms ± 50 ms delay (reordering),
// and a 10 s partition that heals; "clean": the same path with no impairment, the control run
// beside it on the same machine at the same time. Each class has a server, a station with a pult
// and two instructors sending distinct commands (a weak fault of motor lift, each with its own
// value) across the partition: "steady" waits long enough for the heal, "hasty" gives up after
// 2 s. Checked: the station reports the link lost during the partition and comes back after it;
// the server's frame time (p99) is no worse than the clean run's; every command an instructor
// reports delivered was applied exactly once by the server and every other one at most once; the
// recording is complete and replays bit for bit.
class Namespace {
 public:
  // Starts the namespace's holder: loopback up, every UDP packet to NFQUEUE 0, netem_queue.
  Namespace(const fs::path& dir, const std::string& name, const std::string& impairments)
      : dir_(dir), name_(name) {
    const std::string script = std::string("ip link set lo up && iptables -A OUTPUT -p udp -j ") +
                               "NFQUEUE --queue-num 0 && exec " + NETEM_QUEUE_BIN + " " +
                               impairments;
    holder_ = std::make_unique<Process>(
        Process::Raw{},
        std::vector<std::string>{"/usr/bin/unshare", "-rn", "/bin/sh", "-c", script},
        dir / (name + ".netem.out"));
  }
  /// Waits for netem_queue to be bound; false with `why` when it ended (77: no NFQUEUE here).
  bool ready(std::string& why, int& code) {
    const bool up = eventually(20.0, [&] {
      return output().find("netem_queue: ready") != std::string::npos || !holder_->running();
    });
    if (up && holder_->running()) return true;
    code = holder_->wait(1.0);
    why = output();
    return false;
  }
  /// `simtrainer ARGS` inside this namespace (nsenter execs it: the pid is simtrainer's own).
  std::unique_ptr<Process> run(const std::vector<std::string>& args, const std::string& out) {
    std::vector<std::string> argv = {
        "/usr/bin/nsenter",       "-t",          std::to_string(holder_->pid()), "-U", "-n",
        "--preserve-credentials", SIMTRAINER_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    return std::make_unique<Process>(Process::Raw{}, argv, dir_ / (name_ + "." + out + ".out"));
  }
  void signal(int s) { holder_->kill(s); }
  int stop() {
    holder_->kill(SIGINT);
    return holder_->wait(10.0);
  }
  std::string output() const { return holder_->output(); }

 private:
  fs::path dir_;
  std::string name_;
  std::unique_ptr<Process> holder_;
};

// "total   mean A  p99 B  max C ms" of a server's summary: {mean, p99, max} in ms.
std::vector<double> frameTimeMs(const std::string& out) {
  std::smatch m;
  if (!std::regex_search(out, m,
                         std::regex(R"(total +mean ([0-9.]+) +p99 ([0-9.]+) +max ([0-9.]+) ms)"))) {
    return {};
  }
  return {std::stod(m[1]), std::stod(m[2]), std::stod(m[3])};
}

// Occurrences of "motor lift weak (value V) by ISSUER" in an event log, by "ISSUER V".
std::map<std::string, int> appliedWeakFaults(const fs::path& events) {
  std::map<std::string, int> out;
  const std::regex fault(R"(motor lift weak \(value ([0-9.]+)\) by (\w+))");
  for (const std::string& line : lines(events)) {
    std::smatch m;
    if (std::regex_search(line, m, fault)) ++out[m[2].str() + " " + m[1].str()];
  }
  return out;
}

// An instructor's report, by "ISSUER V": true delivered, false NOT confirmed.
std::map<std::string, bool> reportedWeakFaults(const std::string& issuer, const std::string& out) {
  std::map<std::string, bool> r;
  const std::regex line(R"(instruct: command \d+ \(fault:lift:weak:([0-9.]+)\) (delivered|NOT))");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), line); it != std::sregex_iterator();
       ++it) {
    r[issuer + " " + (*it)[1].str()] = (*it)[2] == "delivered";
  }
  return r;
}

// `--command fault:lift:weak:V` for V = first, first + 0.01, ... (count of them), each value as
// the server's events print it.
std::vector<std::string> weakFaults(double first, int count) {
  std::vector<std::string> args;
  for (int k = 0; k < count; ++k) {
    std::ostringstream v;
    v << first + 0.01 * k;
    args.insert(args.end(), {"--command", "fault:lift:weak:" + v.str()});
  }
  return args;
}

TEST(Net, LossDelayReorderAndAHealedPartitionLoseNoCommandAndNoFrameTime) {
#ifndef NETEM_QUEUE_BIN
  GTEST_SKIP() << "netem_queue was not built (libnetfilter_queue not found by CMake)";
#else
  if (std::system("unshare -rn true >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "unshare -rn is not permitted here (user namespaces disabled)";
  if (std::system("unshare -rn iptables -A OUTPUT -p udp -j NFQUEUE --queue-num 0 "
                  ">/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "iptables with the NFQUEUE target does not work in a user network namespace "
                    "here";
  }
  if (std::system("test -x /usr/bin/nsenter") != 0) GTEST_SKIP() << "no /usr/bin/nsenter";
  const fs::path dir = scratch();
  constexpr double kPartitionS = 10.0;  // netem_queue's --partition-for
  Namespace bad(dir, "bad", "--loss 0.2 --delay 0.1 --jitter 0.05 --seed 1 --partition-for 10");
  Namespace clean(dir, "clean", "--loss 0 --delay 0 --jitter 0");
  for (Namespace* ns : {&bad, &clean}) {
    std::string why;
    int code = 0;
    if (!ns->ready(why, code)) {
      if (code == 77) GTEST_SKIP() << "NFQUEUE cannot be bound here: " << why;
      FAIL() << "netem_queue ended (exit " << code << "): " << why;
    }
  }
  // The same class in both: a server recording, a station with a pult, two instructors.
  struct Class {
    Namespace& ns;
    fs::path rec, events, trace;
    std::unique_ptr<Process> server, station, steady, hasty;
  };
  Class classes[] = {
      {bad, dir / "bad.rec", dir / "bad.events", dir / "bad.trace", {}, {}, {}, {}},
      {clean, dir / "clean.rec", dir / "clean.events", dir / "clean.trace", {}, {}, {}, {}}};
  for (Class& c : classes) {
    c.server = c.ns.run({"serve", source(kScene), "--duration", "120", "--partition", "netem",
                         "--record", c.rec.string(), "--events", c.events.string()},
                        "server");
    c.station = c.ns.run({"view", "--remote", "--headless", "--partition", "netem", "--station",
                          "s1", "--pult", "lift=1@0.5", "--trace", c.trace.string()},
                         "station");
  }
  for (Class& c : classes) {
    ASSERT_TRUE(eventually(40.0, [&] { return lines(c.trace).size() > 10; }))
        << "the station received no state\n"
        << c.station->output() << c.ns.output();
  }
  // steady: 16 commands 0.75 s apart (12 s), waits 20 s for the last; hasty: 16 commands 0.5 s
  // apart (8 s), gives up 2 s after the last. The partition starts 1.5 s after both are sending,
  // so both send into it (unless one found the server 6 s before the other), and hasty gives up
  // inside it.
  for (Class& c : classes) {
    c.steady = c.ns.run(
        cat(std::vector<std::string>{"instruct", "--partition", "netem", "--name", "steady",
                                     "--interval", "0.75", "--ack-timeout", "20", "--listen", "0"},
            weakFaults(0.11, 16)),
        "steady");
    c.hasty = c.ns.run(
        cat(std::vector<std::string>{"instruct", "--partition", "netem", "--name", "hasty",
                                     "--interval", "0.5", "--ack-timeout", "2", "--listen", "0"},
            weakFaults(0.31, 16)),
        "hasty");
  }
  Class& b = classes[0];
  ASSERT_TRUE(eventually(40.0,
                         [&] {
                           return b.steady->output().find("sending") != std::string::npos &&
                                  b.hasty->output().find("sending") != std::string::npos;
                         }))
      << b.steady->output() << b.hasty->output();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // loss and delay alone
  // (1) Loss, delay and reordering alone never cost the station its link; the partition does,
  // and the station comes back after it.
  EXPECT_EQ(b.station->output().find("link lost"), std::string::npos)
      << "link lost before the partition\n"
      << b.station->output();
  bad.signal(SIGUSR1);
  EXPECT_TRUE(eventually(
      5.0, [&] { return b.station->output().find("link lost (no state") != std::string::npos; }))
      << "the station never reported the link lost\n"
      << b.station->output();
  // hasty gives up inside the partition, reporting its commands not confirmed (exit code 3).
  EXPECT_EQ(b.hasty->wait(kPartitionS + 10.0), 3) << b.hasty->output();
  ASSERT_TRUE(eventually(kPartitionS + 10.0, [&] {
    return bad.output().find("partition heals") != std::string::npos;
  })) << bad.output();
  const std::size_t frames_at_heal = lines(b.trace).size();
  EXPECT_TRUE(eventually(15.0,
                         [&] {
                           return b.station->output().find("link back at step") !=
                                      std::string::npos &&
                                  lines(b.trace).size() > frames_at_heal + 30;
                         }))
      << "the station did not resume after the heal\n"
      << b.station->output();
  // steady's commands sent into the partition are delivered after the heal.
  EXPECT_EQ(b.steady->wait(40.0), 0) << b.steady->output();
  for (Class& c : classes) {
    if (&c != &b) {
      EXPECT_EQ(c.steady->wait(40.0), 0) << c.steady->output();
      EXPECT_EQ(c.hasty->wait(40.0), 0) << c.hasty->output();  // a clean network confirms all
    }
    c.server->kill(SIGINT);
    ASSERT_EQ(c.server->wait(30.0), 0) << c.server->output();
    c.station->kill(SIGINT);
    ASSERT_EQ(c.station->wait(20.0), 0) << c.station->output();
  }
  const int bad_end = bad.stop(), clean_end = clean.stop();
  ASSERT_EQ(bad_end, 0) << bad.output();
  ASSERT_EQ(clean_end, 0) << clean.output();
  // The network did misbehave: packets lost, reordered and cut (and none in the control run).
  unsigned long long packets = 0, lost = 0, cut_off = 0, accepted = 0, reordered = 0;
  auto counts = [&](const std::string& out) {
    const auto at = out.find("netem_queue: packets");
    return at != std::string::npos &&
           std::sscanf(out.c_str() + at,
                       "netem_queue: packets %llu, dropped %llu by loss and %llu by partition, "
                       "accepted %llu (%llu reordered)",
                       &packets, &lost, &cut_off, &accepted, &reordered) == 5;
  };
  ASSERT_TRUE(counts(bad.output())) << bad.output();
  // Of the packets outside the partition, 20 % lost (binomial: about 0.5 % standard deviation
  // over the few thousand a run sees).
  const double loss = static_cast<double>(lost) / static_cast<double>(packets - cut_off);
  EXPECT_GT(loss, 0.15) << bad.output();
  EXPECT_LT(loss, 0.25) << bad.output();
  EXPECT_GT(cut_off, 0u) << bad.output();
  EXPECT_GT(reordered, 0u) << bad.output();
  ASSERT_TRUE(counts(clean.output())) << clean.output();
  EXPECT_EQ(lost + cut_off, 0u) << clean.output();

  const std::string station = b.station->output();
  EXPECT_NE(station.find("link lost 1 times"), std::string::npos) << station;

  // (2) The server's frame loop never waits on the network: its frame-time p99 under the bad
  // network is within 2x + 1 ms of the clean run's beside it (a frame held up by the network
  // waits tens of milliseconds or more: the delay is 100 ms, the partition 10 s).
  const std::vector<double> bad_ms = frameTimeMs(b.server->output()),
                            clean_ms = frameTimeMs(classes[1].server->output());
  ASSERT_EQ(bad_ms.size(), 3u) << b.server->output();
  ASSERT_EQ(clean_ms.size(), 3u) << classes[1].server->output();
  std::printf(
      "frame time (ms) bad network: mean %.3f p99 %.3f max %.3f; clean: mean %.3f p99 "
      "%.3f max %.3f\n",
      bad_ms[0], bad_ms[1], bad_ms[2], clean_ms[0], clean_ms[1], clean_ms[2]);
  EXPECT_LE(bad_ms[1], 2.0 * clean_ms[1] + 1.0) << b.server->output();

  // (3) Each command applied at most once; each one its instructor reports delivered, exactly
  // once. The bad network's hasty instructor, which gave up inside the partition, reported some
  // not confirmed.
  for (Class& c : classes) {
    SCOPED_TRACE(&c == &b ? "bad network" : "clean network");
    const auto applied = appliedWeakFaults(c.events);
    std::map<std::string, bool> reported = reportedWeakFaults("steady", c.steady->output());
    for (const auto& [k, v] : reportedWeakFaults("hasty", c.hasty->output())) reported[k] = v;
    EXPECT_EQ(reported.size(), 32u) << c.steady->output() << c.hasty->output();
    int total = 0;
    for (const auto& [key, n] : applied) {
      EXPECT_EQ(n, 1) << key << " applied " << n << " times";
      EXPECT_TRUE(reported.count(key)) << key << " was never sent";
      total += n;
    }
    for (const auto& [key, delivered] : reported) {
      const int n = applied.count(key) ? applied.at(key) : 0;
      if (delivered) {
        EXPECT_EQ(n, 1) << key << " reported delivered, applied " << n << " times";
      }
    }
    const std::string served = c.server->output();
    EXPECT_NE(served.find("commands " + std::to_string(total) + ","), std::string::npos)
        << "the server's count of commands differs from its events\n"
        << served;
  }
  {
    const std::map<std::string, bool> steady = reportedWeakFaults("steady", b.steady->output());
    for (const auto& [key, delivered] : steady) EXPECT_TRUE(delivered) << key;
    int not_confirmed = 0;
    for (const auto& [key, delivered] : reportedWeakFaults("hasty", b.hasty->output()))
      not_confirmed += delivered ? 0 : 1;
    EXPECT_GT(not_confirmed, 0) << "the partition left no command unconfirmed\n"
                                << b.hasty->output();
  }

  // (4) The recording is complete (its end line, a hash for every step the server ran) and
  // replays bit for bit; without its fault lines (the commands) it diverges.
  for (Class& c : classes) {
    const sim::engine::Recording rec = sim::engine::readRecording(c.rec.string());
    EXPECT_TRUE(rec.complete);
    std::smatch m;
    const std::string served = c.server->output();
    ASSERT_TRUE(std::regex_search(served, m, std::regex(R"(\nsteps (\d+) )"))) << served;
    EXPECT_EQ(rec.hashes.size(), std::stoull(m[1])) << "a hash per step";
    ASSERT_FALSE(rec.faults.empty());
    EXPECT_DOUBLE_EQ(rec.faults.rbegin()->second.back().second.value, 0.26)
        << "the last command applied (steady's last) is the recording's last fault";
  }
  fs::copy_file(b.rec, dir / "server.rec", fs::copy_options::overwrite_existing);
  expectReplayNeedsLines(dir, "f ");
  Process replay({"replay", "--verify", classes[1].rec.string()}, dir / "clean.replay.out");
  EXPECT_EQ(replay.wait(60.0), 0) << replay.output();
#endif
}

}  // namespace
