// A step with several threads gives the state of a step with one, bit for bit (worker_pool.h):
// replays, scenario regressions and a class's stations rely on it whatever the machine.
#include <dynamics/samples.h>
#include <dynamics/simulator.h>
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "worker_pool.h"

using namespace sim::dynamics;

namespace {

/// The state's hash after every step.
std::vector<std::uint64_t> trace(const Model& model, int threads, int steps) {
  Simulator sim(model);
  sim.setThreads(threads);
  EXPECT_EQ(sim.threads(), threads);
  State s = sim.initialState();
  std::vector<std::uint64_t> hashes;
  for (int n = 0; n < steps; ++n) {
    const StepReport r = sim.step(s);
    EXPECT_EQ(r.fault.kind, Fault::Kind::None) << r.fault.describe();
    hashes.push_back(s.hash());
  }
  return hashes;
}

void expectSameTraces(const Model& model, int steps) {
  const std::vector<std::uint64_t> one = trace(model, 1, steps);
  for (const int threads : {2, 3}) {
    const std::vector<std::uint64_t> many = trace(model, threads, steps);
    ASSERT_EQ(many.size(), one.size());
    for (std::size_t n = 0; n < one.size(); ++n)
      ASSERT_EQ(many[n], one[n]) << threads << " threads: the state differs after step " << n + 1;
  }
}

}  // namespace

TEST(ParallelStep, APileGivesTheSameStateWithOneToThreeThreads) {
  // 8 x 8 columns: each level of the contact sweeps holds 64 manifolds (16 batches), shared
  // among the threads, as are the narrow phase's pairs and the position passes. Sleeping off so
  // every step solves the whole pile.
  Model model = samples::boxPile(8, 8, 4, 1.0 / 240.0);
  model.contact.sleep_enabled = false;
  // No slop: every resting contact has a little penetration for the position passes to push.
  model.contact.slop_m = 0.0;
  expectSameTraces(model, 240);
}

TEST(ParallelStep, APyramidWhoseThreadsShareBodiesGivesTheSameState) {
  // Each box rests on two below it, and the threads own the bodies in ranges of index (rows of
  // the pyramid): manifolds of one thread touch bodies of another, so the threads' sweeps wait
  // for each other's levels (ContactBatches::waitFor), forward and in reverse.
  Model model = samples::boxPyramid(12, 0.2, 0.5, 1.0 / 240.0);
  model.contact.sleep_enabled = false;
  model.contact.slop_m = 0.0;
  expectSameTraces(model, 240);
}

TEST(ParallelStep, TheGraspAndTheTrackedChassisGiveTheSameStateWithSeveralThreads) {
  expectSameTraces(samples::graspScene(1.0 / 240.0), 120);
  expectSameTraces(samples::trackedChassis(1.0 / 240.0), 120);
}

TEST(WorkerPool, RunsEveryTaskOnceAndRethrowsATasksException) {
  sim::dynamics::detail::WorkerPool pool;
  for (const int threads : {1, 2, 3, 1, 4}) {
    pool.resize(threads);
    EXPECT_EQ(pool.threads(), threads);
    for (const int count : {0, 1, 2, 5, 97}) {
      std::vector<std::atomic<int>> runs(static_cast<std::size_t>(count));
      for (int round = 0; round < 50; ++round)
        pool.run(count, [&](int i) { runs[static_cast<std::size_t>(i)].fetch_add(1); });
      for (int i = 0; i < count; ++i)
        EXPECT_EQ(runs[static_cast<std::size_t>(i)].load(), 50)
            << threads << " threads, task " << i;
    }
  }
  pool.resize(2);
  EXPECT_THROW(pool.run(4,
                        [](int i) {
                          if (i == 3) throw std::runtime_error("task 3");
                        }),
               std::runtime_error);
  // The pool still works after a task threw.
  std::atomic<int> sum{0};
  pool.run(10, [&](int i) { sum += i; });
  EXPECT_EQ(sum.load(), 45);
  EXPECT_THROW(pool.resize(0), std::invalid_argument);
}
