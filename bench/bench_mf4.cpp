// The MF-4 scene's real-time margin: plays the grip-and-lift scenario (scheme, contacts, motors:
// the whole session as `simtrainer play` runs it) or runs the scene alone, several times, and
// prints the real-time factor and the time per step of the fastest repeat, by the wall clock and
// by the process's CPU time (on this shared machine the wall clock includes time the process
// waited for a core; the CPU time is what a quiet core would take).
//
//   build/bin/bench_mf4                          # the scenario, 3 repeats
//   build/bin/bench_mf4 --duration 60            # the scenario, then 30 s more holding the pose
//   build/bin/bench_mf4 --scene --duration 60    # scenes/mf4.yaml with the pult at rest
//   build/bin/bench_mf4 --set solver.substeps=2  # any scene override, as with --set
//   build/bin/bench_mf4 --threads 2              # the step on 2 threads (the CPU time then
//                                                # counts both: compare the wall figures)
//   build/bin/bench_mf4 --containers 200         # the site with 200 more loose containers
//                                                # (copies of `container`, in a grid west of
//                                                # the robot's path: x -9..-3.6, y -9.5..1.9)
#include <engine/run.h>
#include <engine/scenario.h>
#include <engine/scene.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

const std::string kSourceDir = SIMTRAINER_SOURCE_DIR;

int usage() {
  std::fprintf(stderr,
               "usage: bench_mf4 [--scene] [--duration S] [--repeats N] [--threads N] "
               "[--containers N] [--set KEY=VALUE]...\n");
  return 2;
}

/// Adds `count` copies of the scene's `container` body, resting on the floor in a grid of 20
/// rows 0.6 m apart, 10 to a row, west of everything the scenario drives through.
void addLooseContainers(sim::engine::Scene& scene, int count) {
  const auto& bodies = scene.model.bodies;
  const auto it = std::find_if(bodies.begin(), bodies.end(),
                               [](const auto& b) { return b.name == "container"; });
  if (it == bodies.end()) throw std::runtime_error("the scene has no body named container");
  const auto index = static_cast<std::size_t>(it - bodies.begin());
  const sim::dynamics::BodyDef original = *it;
  const sim::engine::BodyLook look = scene.looks.at(index);
  for (int i = 0; i < count; ++i) {
    sim::dynamics::BodyDef copy = original;
    copy.name = "loose_container_" + std::to_string(i + 1);
    copy.position_m.x() = -9.0 + 0.6 * (i % 10);
    copy.position_m.y() = -9.5 + 0.6 * (i / 10);
    scene.model.bodies.push_back(copy);
    scene.looks.push_back(look);
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace sim::engine;
  bool scene_only = false;
  double duration_s = 60.0;  // --scene; for the scenario only when given (it has its own)
  bool duration_given = false;
  int repeats = 3;
  int threads = 1;
  int containers = 0;
  std::vector<Override> overrides;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--scene") {
      scene_only = true;
    } else if (arg == "--duration" && has_value) {
      duration_s = std::atof(argv[++i]);
      duration_given = true;
    } else if (arg == "--repeats" && has_value) {
      repeats = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--threads" && has_value) {
      threads = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--containers" && has_value) {
      containers = std::max(0, std::atoi(argv[++i]));
    } else if (arg == "--set" && has_value) {
      try {
        overrides.push_back(parseOverride(argv[++i]));
      } catch (const SceneError& e) {
        std::fprintf(stderr, "bench_mf4: %s\n", e.what());
        return 2;
      }
    } else {
      return usage();
    }
  }
  try {
    double best_wall_s = 1e300, best_cpu_s = 1e300;
    RunResult best;
    bool all_passed = true;
    // Loaded once: the timings are of the runs alone.
    Scenario scenario;
    Scene scene;
    if (scene_only) {
      scene = loadScene(kSourceDir + "/scenes/mf4.yaml", overrides);
    } else {
      scenario = loadScenario(kSourceDir + "/scenes/scenarios/mf4_grip_lift.scenario.yaml");
      if (!overrides.empty()) {  // the scenario's own `set:` first, then ours
        std::vector<Override> all = scenario.scene.overrides;
        all.insert(all.end(), overrides.begin(), overrides.end());
        scenario.scene = loadScene(scenario.scene.file, all);
      }
      // Longer than the timeline: the pult holds its last values (the robot holds its pose).
      if (duration_given) scenario.duration_s = duration_s;
    }
    addLooseContainers(scene_only ? scene : scenario.scene, containers);
    for (int r = 0; r < repeats; ++r) {
      RunResult run;
      const std::clock_t cpu0 = std::clock();
      if (scene_only) {
        RunOptions options;
        options.duration_s = duration_s;
        options.threads = threads;
        run = runHeadless(scene, options);
      } else {
        PlayOptions options;
        options.threads = threads;
        const ScenarioResult result = playScenario(scenario, options);
        all_passed = all_passed && result.passed();
        if (!result.passed()) std::fprintf(stderr, "%s\n", result.failureSummary().c_str());
        run = result.run;
      }
      const double cpu_s = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
      if (run.fault) {
        std::fprintf(stderr, "numerical fault: %s\n", run.fault->describe().c_str());
        return 1;
      }
      const double steps = static_cast<double>(run.steps);
      std::printf(
          "repeat %d: %.1f s simulated; wall %.3f s: real-time factor %.1f, %.1f us/step; "
          "CPU %.3f s: real-time factor %.1f, %.1f us/step\n",
          r + 1, run.sim_time_s, run.wall_time_s, run.realTimeFactor(),
          1e6 * run.wall_time_s / steps, cpu_s, run.sim_time_s / cpu_s, 1e6 * cpu_s / steps);
      if (run.wall_time_s < best_wall_s) {
        best_wall_s = run.wall_time_s;
        best = run;
      }
      best_cpu_s = std::min(best_cpu_s, cpu_s);
    }
    std::printf(
        "%s: best of %d: wall: real-time factor %.1f, %.1f us/step; CPU: real-time "
        "factor %.1f, %.1f us/step (%llu steps), max velocity iterations %d, "
        "%llu steps at the cap%s\n",
        scene_only ? "mf4 scene" : "mf4_grip_lift scenario", repeats, best.realTimeFactor(),
        1e6 * best.wall_time_s / static_cast<double>(best.steps), best.sim_time_s / best_cpu_s,
        1e6 * best_cpu_s / static_cast<double>(best.steps),
        static_cast<unsigned long long>(best.steps), best.max_velocity_iterations,
        static_cast<unsigned long long>(best.steps_at_iteration_cap),
        scene_only ? "" : (all_passed ? ", expectations passed" : ", EXPECTATIONS FAILED"));
    std::fputs(
        formatSolveSummary((scene_only ? scene : scenario.scene).model.solver, best, "  ").c_str(),
        stdout);
    return all_passed ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_mf4: %s\n", e.what());
    return 2;
  }
}
