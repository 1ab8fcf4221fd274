// The box-pile benchmark of the collision issue: columns of 0.2 m, 1 kg cubes (10 high) in a
// grid, dropped onto a plane, mu = 0.5, dt = 1/240 s for 5 s, 10 velocity iterations (the
// setting the issue quotes for Jolt) and 20 (our default), 2 position iterations. Prints
// microseconds per step with sleeping off and on, the final largest speed (the pile must come to
// rest), the largest penetration over the last second and at the end, and writes the table as CSV.
// With sleeping on, also when every box is first asleep and the mean time of the steps after
// that (a resting scene's cost per step). "faults": the minor page faults the steps took (fresh
// memory written for the first time; the simulator's construction and its first state not
// counted), about 10 us each on a virtual machine.
//
// Also times the grasp scene (samples::graspScene): close, lift 0.3 m, slip. Each repeat runs it
// with articulated contacts (the scene's setting) and the solver's default tolerances (iterations
// stop once no impulse changes by 1e-10 N s, position passes below 1e-7 m; the cap is
// --grasp-iterations, or the scene's 20), then with every iteration run (the scene's tolerances
// of 0), then with rigid-link contacts (--grasp-engine-only: the first only).
//
//   bench_pile [--csv FILE] [--columns N ...] [--iterations I ...] [--seconds S]
//              [--grasp-only] [--grasp-engine-only] [--grasp-repeats R] [--grasp-iterations I]
//              [--no-grasp] [--trace [--trace-steps N]]
//              [--sleep on|off] [--height H] [--position-iterations P]
//              [--position-correction F]   (contact.position_correction; the sample's 0.2)
//              [--manifold-reuse D A]   (contact.manifold_reuse_distance D m and _angle A rad,
//                                        pile and grasp; Jolt's defaults are 1e-3 m and 0.0349
//                                        rad, i.e. 2 deg)
//              [--batch-sweep F]   (the batched contact sweep's form: 2 AVX-512, 1 AVX2,
//                                   0 baseline; default the widest this processor runs)
#include <dynamics/samples.h>
#include <dynamics/simulator.h>

#include "contact_batches.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace sim::dynamics;

namespace {

struct Result {
  int boxes = 0, iterations = 0;
  bool sleep = false;
  double us_per_step = 0, final_max_speed = 0, late_penetration = 0, final_penetration = 0;
  double late_max_speed = 0;  // largest body speed over the last second
  int asleep = 0;
  // Sleeping on: when every box was first asleep after a step (s; < 0: never), and the mean time
  // of the steps taken from then on with every box asleep (a resting scene's cost per step).
  double all_asleep_at_s = -1.0, us_per_asleep_step = 0.0;
  long page_faults = 0;  // minor page faults during the steps
  unsigned long long hash = 0;
};

long minorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

double penetration(const State& s) {
  double p = 0.0;
  for (const ContactState& c : s.contacts) p = std::max(p, -c.separation_m);
  return p;
}

bool g_trace = false;  // --trace: largest speeds and sleepers every --trace-steps steps
int g_trace_steps = 60;
int g_position_iterations = 2;
int g_height = 10;
int g_threads = 1;  // --threads: the step's threads (the same state for any count)
double g_position_correction = -1.0;                       // < 0: the sample's own
double g_reuse_distance_m = 0.0, g_reuse_angle_rad = 0.0;  // --manifold-reuse; 0: off

Result run(int columns, bool sleep, double seconds, int iterations) {
  Model model = samples::boxPile(columns, columns, g_height, 1.0 / 240.0);
  model.solver.velocity_iterations = iterations;
  model.solver.position_iterations = g_position_iterations;
  model.contact.sleep_enabled = sleep;
  if (g_position_correction >= 0.0) model.contact.position_correction = g_position_correction;
  model.contact.manifold_reuse_distance_m = g_reuse_distance_m;
  model.contact.manifold_reuse_angle_rad = g_reuse_angle_rad;
  Simulator sim(model);
  sim.setThreads(g_threads);
  State s = sim.initialState();
  const int steps = static_cast<int>(seconds * 240.0 + 0.5);
  Result r;
  r.boxes = static_cast<int>(model.bodies.size()) - 1;
  r.sleep = sleep;
  r.iterations = iterations;
  double busy_us = 0.0, asleep_us = 0.0;
  int asleep_steps = 0;
  bool all_asleep = false;  // every box asleep before this step
  const long faults_before = minorFaults();
  for (int n = 0; n < steps; ++n) {
    const auto t0 = std::chrono::steady_clock::now();
    const StepReport rep = sim.step(s);
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    busy_us += us;
    if (all_asleep) {
      asleep_us += us;
      ++asleep_steps;
    }
    all_asleep = sleep && std::all_of(s.bodies.begin() + 1, s.bodies.end(),
                                      [](const BodyState& b) { return b.asleep; });
    if (all_asleep && r.all_asleep_at_s < 0.0) r.all_asleep_at_s = (n + 1) / 240.0;
    if (rep.fault_is_new) std::fprintf(stderr, "fault: %s\n", rep.fault.describe().c_str());
    if (n >= steps - 240) {
      r.late_penetration = std::max(r.late_penetration, penetration(s));
      for (const BodyState& b : s.bodies)
        r.late_max_speed = std::max(r.late_max_speed, b.linear_velocity_mps.norm());
    }
    if (g_trace && (n + 1) % g_trace_steps == 0) {
      double v = 0.0, w = 0.0;
      int asleep = 0, fastest = 0;
      for (std::size_t i = 0; i < s.bodies.size(); ++i) {
        const BodyState& b = s.bodies[i];
        if (b.linear_velocity_mps.norm() > v) fastest = static_cast<int>(i);
        v = std::max(v, b.linear_velocity_mps.norm());
        w = std::max(w, b.angular_velocity_radps.norm());
        asleep += b.asleep ? 1 : 0;
      }
      const BodyState& f = s.bodies[fastest];
      std::printf(
          "  t %.2f s: max v %.4f m/s (body %d at z %.3f m, v %+.4f %+.4f %+.4f), max w %.4f "
          "rad/s, "
          "penetration %.3e m, asleep %d\n",
          (n + 1) / 240.0, v, fastest, f.position_m.z(), f.linear_velocity_mps.x(),
          f.linear_velocity_mps.y(), f.linear_velocity_mps.z(), w, penetration(s), asleep);
    }
  }
  r.page_faults = minorFaults() - faults_before;
  r.us_per_step = busy_us / steps;
  r.us_per_asleep_step = asleep_steps > 0 ? asleep_us / asleep_steps : 0.0;
  for (const BodyState& b : s.bodies) {
    r.final_max_speed = std::max(r.final_max_speed, b.linear_velocity_mps.norm());
    r.asleep += b.asleep ? 1 : 0;
  }
  r.final_penetration = penetration(s);
  r.hash = s.hash();
  return r;
}

/// One way to solve the grasp scene.
struct GraspVariant {
  bool articulated = true;
  bool engine_tolerances = true;  // SolverSettings' default tolerances, or the scene's 0 (every
                                  // iteration runs)
};

/// The grasp scene: close 0.8 s, lift 0.3 m. Prints microseconds per step and the slip.
void grasp(int iterations, const GraspVariant& v) {
  Model model = samples::graspScene(1.0 / 240.0);
  if (iterations > 0) model.solver.velocity_iterations = iterations;
  model.solver.articulated_contacts = v.articulated;
  model.contact.manifold_reuse_distance_m = g_reuse_distance_m;
  model.contact.manifold_reuse_angle_rad = g_reuse_angle_rad;
  if (v.engine_tolerances) {
    const SolverSettings defaults;
    model.solver.velocity_tolerance = defaults.velocity_tolerance;
    model.solver.position_tolerance_m = defaults.position_tolerance_m;
  }
  Simulator sim(model);
  State s = sim.initialState();
  const int box = model.findBody("box"), palm = model.findBody("palm");
  s.motors[model.findMotor("jaws")].voltage = 1.0;
  int steps = 0, most_iterations = 0, reduced_steps = 0;
  double busy_us = 0.0, iteration_sum = 0.0;
  auto step = [&]() {
    const auto t0 = std::chrono::steady_clock::now();
    const StepReport r = sim.step(s);
    busy_us +=
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    ++steps;
    reduced_steps += r.reduced_blocks > 0 ? 1 : 0;
    most_iterations = std::max(most_iterations, r.velocity_iterations);
    iteration_sum += r.velocity_iterations;
  };
  for (int i = 0; i < 192; ++i) step();
  const double offset = s.bodies[box].position_m.z() - s.bodies[palm].position_m.z();
  const double palm0 = s.bodies[palm].position_m.z();
  s.motors[model.findMotor("lift")].voltage = 1.0;
  double slip = 0.0;
  while (s.bodies[palm].position_m.z() < palm0 + 0.3 && steps < 2000) {
    step();
    slip = std::max(
        slip, std::abs(s.bodies[box].position_m.z() - s.bodies[palm].position_m.z() - offset));
  }
  std::printf(
      "grasp (%s, %s): %.2f us/step over %d steps, slip during the 0.3 m lift %.3e m; "
      "velocity iterations mean %.2f, max %d; reduced in %d steps\n",
      v.articulated ? "articulated contacts" : "rigid-link contacts",
      v.engine_tolerances ? "engine tolerances" : "every iteration", busy_us / steps, steps, slip,
      iteration_sum / steps, most_iterations, reduced_steps);
}

}  // namespace

int main(int argc, char** argv) {
  std::string csv = "pile_bench.csv";
  std::vector<int> columns;
  double seconds = 5.0;
  std::vector<int> iterations;
  int grasp_repeats = 1;
  int grasp_iterations = 0;  // 0: the scene's own (20)
  bool grasp_only = false, grasp_engine_only = false;
  std::vector<bool> sleep_modes = {false, true};
  for (int i = 1; i < argc; ++i) {
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_pile: %s needs a value\n", argv[i]);
        std::exit(2);
      }
      return argv[++i];
    };
    if (!std::strcmp(argv[i], "--csv"))
      csv = next();
    else if (!std::strcmp(argv[i], "--columns"))
      columns.push_back(std::atoi(next()));
    else if (!std::strcmp(argv[i], "--seconds"))
      seconds = std::atof(next());
    else if (!std::strcmp(argv[i], "--iterations"))
      iterations.push_back(std::atoi(next()));
    else if (!std::strcmp(argv[i], "--grasp-only"))
      grasp_only = true;
    else if (!std::strcmp(argv[i], "--grasp-engine-only"))
      grasp_engine_only = true;
    else if (!std::strcmp(argv[i], "--trace"))
      g_trace = true;
    else if (!std::strcmp(argv[i], "--trace-steps"))
      g_trace_steps = std::max(1, std::atoi(next()));
    else if (!std::strcmp(argv[i], "--height"))
      g_height = std::atoi(next());
    else if (!std::strcmp(argv[i], "--position-iterations"))
      g_position_iterations = std::atoi(next());
    else if (!std::strcmp(argv[i], "--position-correction"))
      g_position_correction = std::atof(next());
    else if (!std::strcmp(argv[i], "--no-grasp"))
      grasp_repeats = 0;
    else if (!std::strcmp(argv[i], "--sleep"))
      sleep_modes = {!std::strcmp(next(), "on")};
    else if (!std::strcmp(argv[i], "--grasp-repeats"))
      grasp_repeats = std::atoi(next());
    else if (!std::strcmp(argv[i], "--grasp-iterations"))
      grasp_iterations = std::atoi(next());
    else if (!std::strcmp(argv[i], "--manifold-reuse")) {
      g_reuse_distance_m = std::atof(next());
      g_reuse_angle_rad = std::atof(next());
    } else if (!std::strcmp(argv[i], "--batch-sweep")) {
      sim::dynamics::detail::forceBatchSweep(std::atoi(next()));
    } else if (!std::strcmp(argv[i], "--threads"))
      g_threads = std::max(1, std::atoi(next()));
    else {
      std::fprintf(stderr, "bench_pile: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  if (columns.empty()) columns = {5, 10};
  if (iterations.empty()) iterations = {10, 20};
  for (int r = 0; r < grasp_repeats; ++r) {
    // The engine's configuration first; then every iteration run to the cap, and rigid-link
    // contacts for comparison.
    grasp(grasp_iterations, GraspVariant{});
    if (grasp_engine_only) continue;
    grasp(grasp_iterations, GraspVariant{true, false});
    grasp(grasp_iterations, GraspVariant{false, false});
  }
  if (grasp_only) return 0;
  FILE* out = std::fopen(csv.c_str(), "w");
  if (!out) {
    std::fprintf(stderr, "bench_pile: cannot write %s\n", csv.c_str());
    return 1;
  }
  std::fprintf(out,
               "boxes,velocity_iterations,sleep,us_per_step,final_max_speed_mps,late_max_speed_mps,"
               "late_max_penetration_m,final_max_penetration_m,asleep,state_hash,all_asleep_at_s,"
               "us_per_asleep_step,page_faults\n");
  std::printf("%6s %5s %5s %12s %14s %14s %14s %14s %7s %10s %9s %7s\n", "boxes", "iters", "sleep",
              "us/step", "final v m/s", "v last 1s m/s", "pen last 1s m", "pen final m", "asleep",
              "all at s", "us asleep", "faults");
  for (int c : columns) {
    for (int it : iterations)
      for (bool sleep : sleep_modes) {
        const Result r = run(c, sleep, seconds, it);
        std::printf("%6d %5d %5s %12.1f %14.3e %14.3e %14.3e %14.3e %7d %10.3f %9.2f %7ld\n",
                    r.boxes, r.iterations, sleep ? "on" : "off", r.us_per_step, r.final_max_speed,
                    r.late_max_speed, r.late_penetration, r.final_penetration, r.asleep,
                    r.all_asleep_at_s, r.us_per_asleep_step, r.page_faults);
        std::fprintf(out, "%d,%d,%s,%.2f,%.4e,%.4e,%.4e,%.4e,%d,%016llx,%.4f,%.3f,%ld\n", r.boxes,
                     r.iterations, sleep ? "on" : "off", r.us_per_step, r.final_max_speed,
                     r.late_max_speed, r.late_penetration, r.final_penetration, r.asleep, r.hash,
                     r.all_asleep_at_s, r.us_per_asleep_step, r.page_faults);
        std::fflush(stdout);
      }
  }
  std::fclose(out);
  return 0;
}
