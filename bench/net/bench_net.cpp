// bench_net: the training class on loopback (docs/network.md).
//   1. End-to-end latency: a server (in this process, the real serve() loop paced to real time)
//      publishes; a probe in a separate process (this program with --probe) polls its reader
//      every 0.2 ms and measures CLOCK_MONOTONIC at reception minus at publication.
//   2. Server frame time with 0, 1 and 8 subscribers (`simtrainer view --remote --headless`
//      processes, the real station): the run loop's per-frame figures, the publication alone
//      being the "observer" share (RunResult::render_time), and within it the state write
//      (Bus::publishState, ServeResult::state_write_time). Then 8 subscribers twice more, to see
//      whether they cost the server by its sends or by taking its CPU: with the server pinned to
//      CPU 0 and the subscribers to CPU 1 (`taskset -c 1`), and with the subscribers at `nice 19`.
//      Every configuration runs with the state written on the server's writer thread (the default,
//      ServeOptions::publish_thread; "publish" is then the hand-over and "write" is timed on that
//      thread), and 0 and 8 subscribers also with the frames written inline ("inline" rows, ratio
//      to "0 inline"), so both ways are measured in one run.
// Usage: bench_net [--seconds 5] [--scene scenes/mf4.yaml]
#include <engine/remote.h>

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace remote = sim::engine::remote;

namespace {

pid_t spawn(const std::vector<std::string>& argv) {
  std::vector<char*> c;
  for (const auto& a : argv) c.push_back(const_cast<char*>(a.c_str()));
  c.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  if (posix_spawn(&pid, c[0], &actions, nullptr, c.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const auto k = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(k, v.size() - 1)];
}

// The probe: a station reader in its own process, polled every 0.2 ms; prints p50 p99 count.
int probe(const std::string& partition, double seconds) {
  remote::ClassAddress address;
  address.partition = partition;
  remote::Bus bus(address, remote::Bus::Role::Station);
  std::vector<double> latency;
  remote::StateFrame frame;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    while (bus.takeState(frame)) {
      latency.push_back(1e-9 * static_cast<double>(remote::monotonicNs() - frame.sent_ns));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  std::printf("%.6f %.6f %.6f %zu\n", percentile(latency, 0.5), percentile(latency, 0.99),
              latency.empty() ? 0.0 : *std::max_element(latency.begin(), latency.end()),
              latency.size());
  return 0;
}

struct Serve {
  sim::engine::RunResult run;
  sim::engine::TimingStats write;
  double publish_mean_ms = 0.0, publish_p99_ms = 0.0;
  std::uint64_t superseded = 0;
};

// Restricts the calling thread, and the threads it creates from now on (the DDS participant's),
// to `cpu`; -1: every CPU.
void pinTo(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  for (int c = 0; c < n; ++c) {
    if (cpu < 0 || c == cpu) CPU_SET(c, &set);
  }
  sched_setaffinity(0, sizeof set, &set);
}

Serve serveFor(const sim::engine::Scene& scene, const std::string& partition, double seconds,
               int subscribers, bool publish_thread) {
  remote::ServeOptions options;
  options.publish_thread = publish_thread;
  options.wait_for_subscribers = subscribers;
  options.wait_timeout_s = 30.0;
  options.address.partition = partition;
  options.duration_s = seconds;
  options.realtime = true;
  Serve s;
  remote::ServeResult r = remote::serve(scene, options);
  s.run = r.run;
  s.write = r.state_write_time;
  s.superseded = r.frames_superseded;
  s.publish_mean_ms = 1e3 * s.run.render_time.mean();
  s.publish_p99_ms = 1e3 * s.run.render_time.p99();
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 5.0;
  std::string scene_path = std::string(SIMTRAINER_SOURCE_DIR) + "/scenes/mf4.yaml";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--probe" && i + 2 < argc) return probe(argv[i + 1], std::atof(argv[i + 2]));
    if (a == "--seconds" && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (a == "--scene" && i + 1 < argc) {
      scene_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: bench_net [--seconds S] [--scene FILE]\n");
      return 2;
    }
  }
  const sim::engine::Scene scene = sim::engine::loadScene(scene_path);
  const std::string base = "bench-" + std::to_string(getpid());
  std::printf("bench_net: %s, %zu bodies, %g Hz frames, %g s per configuration (loopback, UDPv4)\n",
              scene.name.c_str(), scene.model.bodies.size(), scene.frame_rate_hz, seconds);

  // 1. Latency: the probe starts first and listens 2 s longer than the server serves.
  {
    const std::string partition = base + "-latency";
    char self[4096] = {};
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return 1;
    const std::string probe_seconds = std::to_string(seconds + 5.0);
    int fds[2];
    if (pipe(fds) != 0) return 1;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    std::vector<std::string> args = {self, "--probe", partition, probe_seconds};
    std::vector<char*> c;
    for (auto& a : args) c.push_back(a.data());
    c.push_back(nullptr);
    pid_t pid = -1;
    posix_spawn(&pid, self, &actions, nullptr, c.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    serveFor(scene, partition, seconds, 1, true);
    char buffer[256] = {};
    const ssize_t got = read(fds[0], buffer, sizeof buffer - 1);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    double p50 = 0, p99 = 0, max = 0;
    std::size_t count = 0;
    if (got <= 0 || std::sscanf(buffer, "%lf %lf %lf %zu", &p50, &p99, &max, &count) != 4) {
      std::printf("latency: the probe reported nothing\n");
    } else {
      std::printf(
          "latency server publish -> probe process has the pose: p50 %.3f ms  p99 %.3f ms  "
          "max %.3f ms  (%zu of %.0f frames; one frame is %.1f ms)\n",
          1e3 * p50, 1e3 * p99, 1e3 * max, count, seconds * scene.frame_rate_hz,
          1e3 / scene.frame_rate_hz);
    }
  }

  // 2. Server frame time with 0, 1 and 8 `simtrainer view --remote --headless` subscribers.
  struct Config {
    int subscribers;
    const char* label;
    std::vector<std::string> prefix;  // run each subscriber under this command
    int server_cpu;                   // -1: any
    const char* multicast = "";       // SIMTRAINER_STATE_MULTICAST for the subscribers
    bool publish_thread = true;
  };
  const std::vector<Config> configs = {
      {0, "0 inline", {}, -1, "", false},
      {8, "8 inline", {}, -1, "", false},
      {0, "0", {}, -1},
      {1, "1", {}, -1},
      {8, "8", {}, -1},
      {8, "8 cpu-split", {"/usr/bin/taskset", "-c", "1"}, 0},
      {8, "8 nice-19", {"/usr/bin/nice", "-n", "19"}, -1},
      {1, "1 cpu-split", {"/usr/bin/taskset", "-c", "1"}, 0},
      {8, "8 multicast", {}, -1, "239.255.0.2"},
      {8, "8 mc cpu-split", {"/usr/bin/taskset", "-c", "1"}, 0, "239.255.0.2"},
  };
  std::printf("%-13s %9s %9s %10s %11s %11s %10s %10s %8s %10s\n", "subscribers", "frame ms",
              "frame p99", "physics ms", "publish ms", "publish p99", "write ms", "write p99",
              "overruns", "superseded");
  double base_frame = 0.0;
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  for (const Config& config : configs) {
    if (config.server_cpu >= 0 && cpus < 2) continue;  // nothing to split
    const std::string partition = base + "-" + std::to_string(&config - configs.data());
    std::vector<pid_t> children;
    setenv("SIMTRAINER_STATE_MULTICAST", config.multicast, 1);
    for (int k = 0; k < config.subscribers; ++k) {
      std::vector<std::string> command = config.prefix;
      for (const std::string& a :
           {std::string(SIMTRAINER_BIN), std::string("view"), std::string("--remote"),
            std::string("--headless"), std::string("--partition"), partition,
            std::string("--station"), "s" + std::to_string(k), std::string("--duration"),
            std::to_string(seconds + 30.0)}) {
        command.push_back(a);
      }
      children.push_back(spawn(command));
    }
    unsetenv("SIMTRAINER_STATE_MULTICAST");
    pinTo(config.server_cpu);
    const Serve s = serveFor(scene, partition, seconds, config.subscribers, config.publish_thread);
    pinTo(-1);
    for (pid_t pid : children) {
      if (pid > 0) kill(pid, SIGINT);
    }
    for (pid_t pid : children) {
      int status = 0;
      if (pid > 0) waitpid(pid, &status, 0);
    }
    const double frame = 1e3 * s.run.frame_time.mean();
    if (config.subscribers == 0) base_frame = frame;
    std::printf(
        "%-13s %9.3f %9.3f %10.3f %11.4f %11.4f %10.4f %10.4f %8llu %10llu   ratio to 0%s: %.2f\n",
        config.label, frame, 1e3 * s.run.frame_time.p99(), 1e3 * s.run.physics_time.mean(),
        s.publish_mean_ms, s.publish_p99_ms, 1e3 * s.write.mean(), 1e3 * s.write.p99(),
        static_cast<unsigned long long>(s.run.overruns),
        static_cast<unsigned long long>(s.superseded), config.publish_thread ? "" : " inline",
        base_frame > 0.0 ? frame / base_frame : 0.0);
    std::fflush(stdout);
  }
  return 0;
}
