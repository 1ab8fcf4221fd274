// The chain benchmark of the dynamics issue: N box links (0.1 x 0.02 x 0.02 m, 0.1 kg) on hinges
// about y, the first hinged to the world, released horizontal under gravity; dt = 1 ms for 1 s.
// Prints microseconds per step (minimum over repeats) and the largest joint anchor separation at
// t = 1 s, and writes the table as CSV.
//
//   bench_chain [--repeats R] [--csv FILE] [--links N ...] [--iterations I ...]
#include <dynamics/samples.h>
#include <dynamics/simulator.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace sim::dynamics;

namespace {

struct Result {
  int links, iterations;
  double us_per_step, separation_m;
  unsigned long long hash;
};

Result run(int links, int iterations, int repeats) {
  const Model model = samples::chain(links, 1e-3, iterations, 2);
  Result r{links, iterations, 1e300, 0.0, 0};
  for (int rep = 0; rep < repeats; ++rep) {
    Simulator sim(model);
    State s = sim.initialState();
    const auto t0 = std::chrono::steady_clock::now();
    for (int n = 0; n < 1000; ++n) sim.step(s);
    const auto t1 = std::chrono::steady_clock::now();
    r.us_per_step = std::min(r.us_per_step,
                             std::chrono::duration<double, std::micro>(t1 - t0).count() / 1000.0);
    r.separation_m = samples::maxAnchorSeparation(model, s);
    r.hash = s.hash();
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 3;
  std::string csv = "chain_bench.csv";
  std::vector<int> links, iterations;
  for (int i = 1; i < argc; ++i) {
    auto next = [&]() {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_chain: %s needs a value\n", argv[i]);
        std::exit(2);
      }
      return argv[++i];
    };
    if (!std::strcmp(argv[i], "--repeats"))
      repeats = std::atoi(next());
    else if (!std::strcmp(argv[i], "--csv"))
      csv = next();
    else if (!std::strcmp(argv[i], "--links"))
      links.push_back(std::atoi(next()));
    else if (!std::strcmp(argv[i], "--iterations"))
      iterations.push_back(std::atoi(next()));
    else {
      std::fprintf(stderr, "bench_chain: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  if (links.empty()) links = {10, 50, 200, 1000};
  if (iterations.empty()) iterations = {10, 50};
  std::FILE* out = std::fopen(csv.c_str(), "w");
  if (!out) {
    std::fprintf(stderr, "bench_chain: cannot write %s\n", csv.c_str());
    return 2;
  }
  std::fprintf(
      out, "links,velocity_iterations,position_iterations,us_per_step,separation_m,state_hash\n");
  std::printf("%6s %5s %12s %14s %18s\n", "links", "iters", "us/step", "separation m",
              "state hash");
  for (int it : iterations) {
    for (int n : links) {
      const Result r = run(n, it, repeats);
      std::printf("%6d %5d %12.2f %14.3e %18llx\n", r.links, r.iterations, r.us_per_step,
                  r.separation_m, r.hash);
      std::fprintf(out, "%d,%d,2,%.3f,%.4e,%llx\n", r.links, r.iterations, r.us_per_step,
                   r.separation_m, r.hash);
      std::fflush(out);
    }
  }
  std::fclose(out);
  return 0;
}
