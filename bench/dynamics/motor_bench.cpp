// WG-7152 gear motor (SPEC §2.4) through the motor constraint: the largest error of the link speed
// against eq. 8 over 10 s at dt = 0.01 s, for t_m = 1 s and 0.5 s, then Google Benchmark timings
// of one step of that scene.
#include <dynamics/samples.h>
#include <dynamics/simulator.h>

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>

using namespace sim::dynamics;

namespace {

double maxError(double t_m) {
  Simulator sim(samples::wg7152(t_m, 0.01));
  const MotorDef& mo = sim.model().motors[0];
  const double r = mo.gear_ratio;
  const double T =
      (30.833 + r * r * mo.rotorInertia()) * mo.no_load_speed_radps / (r * r * mo.stall_torque_Nm);
  State s = sim.initialState();
  double worst = 0.0;
  for (int n = 0; n < 1000; ++n) {
    sim.step(s);
    const double analytic = (mo.no_load_speed_radps / r) * (1.0 - std::exp(-s.time_s / T));
    worst = std::max(worst, std::abs(s.joints[0].speed - analytic));
  }
  return worst;
}

void BM_Wg7152Step(benchmark::State& st) {
  Simulator sim(samples::wg7152(1.0, 0.01));
  State s = sim.initialState();
  for (auto _ : st) {
    sim.step(s);
    benchmark::DoNotOptimize(s.joints[0].speed);
  }
}
BENCHMARK(BM_Wg7152Step);

void BM_GripperStep(benchmark::State& st) {
  Simulator sim(samples::gripper(0.005));
  State s = sim.initialState();
  s.motors[0].voltage = 0.5;
  for (auto _ : st) {
    sim.step(s);
    benchmark::DoNotOptimize(s.joints[0].speed);
  }
}
BENCHMARK(BM_GripperStep);

}  // namespace

int main(int argc, char** argv) {
  std::printf("WG-7152, dt = 0.01 s, 10 s: max |w_L - analytic| (rad/s)\n");
  for (double t_m : {1.0, 0.5}) std::printf("  t_m = %.1f s: %.3e\n", t_m, maxError(t_m));
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
