// Pins the run loop's pacing and frame statistics (engine/include/engine/frame_clock.h,
// runHeadless with RunOptions::realtime).
#include <engine/frame_clock.h>
#include <engine/run.h>
#include <engine/scene.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <thread>
#include <vector>

namespace sim::engine {
namespace {

const std::string kSourceDir = SIMTRAINER_SOURCE_DIR;

TEST(TimingStats, MeanP99Max) {
  TimingStats t;
  for (int i = 1; i <= 200; ++i) t.add(i * 1e-3);
  EXPECT_NEAR(t.mean(), 100.5e-3, 1e-15);
  EXPECT_DOUBLE_EQ(t.p99(), 198e-3);  // nearest rank: ceil(0.99 * 200) = 198th
  EXPECT_DOUBLE_EQ(t.max(), 200e-3);
  EXPECT_EQ(TimingStats().p99(), 0.0);
}

// Past the exact samples (a session of hours) the statistics keep a bounded histogram: the mean
// and maximum stay exact, the p99 is at most 1 % above the exact one and never below it.
TEST(TimingStats, LongSessionsKeepBoundedMemoryAndAP99WithinOnePercent) {
  TimingStats t;
  const std::size_t n = 3 * TimingStats::kExact;
  std::vector<double> all;
  for (std::size_t i = 0; i < n; ++i) {
    const double s = 1e-4 * (1.0 + static_cast<double>((i * 7919) % n) / 1000.0);  // a permutation
    t.add(s);
    all.push_back(s);
  }
  EXPECT_EQ(t.count(), n);
  std::sort(all.begin(), all.end());
  const double exact = all[static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(n))) - 1];
  EXPECT_GE(t.p99(), exact);
  EXPECT_LE(t.p99(), exact * 1.01);
  EXPECT_DOUBLE_EQ(t.max(), all.back());
  EXPECT_NEAR(t.mean(), std::accumulate(all.begin(), all.end(), 0.0) / static_cast<double>(n),
              1e-12);
}

// A frame whose own work takes longer than its slot is an overrun; the lag it leaves is caught up
// by running the next frames at once, so the simulation keeps wall-clock time.
TEST(FramePacer, SlowFramesAreOverrunsAndTheirLagIsCaughtUp) {
  FramePacer pacer(0.005, true, 0.1);  // 5 ms slots, up to 100 ms of lag caught up
  for (int i = 0; i < 2; ++i) {
    pacer.beginFrame();
    std::this_thread::sleep_for(std::chrono::milliseconds(12));
    pacer.endFrame();
  }
  EXPECT_EQ(pacer.overruns(), 2u);
  EXPECT_EQ(pacer.resyncs(), 0u);
  EXPECT_TRUE(pacer.behind());
  // 24 ms of work in 10 ms of slots: the next frame starts at once instead of waiting.
  const auto t0 = std::chrono::steady_clock::now();
  pacer.beginFrame();
  pacer.endFrame();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(4));
  EXPECT_EQ(pacer.overruns(), 2u) << "a fast frame is no overrun";
}

// A frame that starts late because the thread was not scheduled is no overrun (its work fit its
// slot), and its lag is caught up.
TEST(FramePacer, ALateStartIsNoOverrun) {
  FramePacer pacer(0.005, true, 0.1);
  std::this_thread::sleep_for(std::chrono::milliseconds(12));  // preempted before the frame
  pacer.beginFrame();
  pacer.endFrame();
  EXPECT_EQ(pacer.overruns(), 0u);
  EXPECT_EQ(pacer.resyncs(), 0u);
}

// More behind than the bounded lag: the schedule restarts from now (the time is given up,
// counted), so no burst of catch-up frames follows.
TEST(FramePacer, TooFarBehindRestartsTheScheduleInsteadOfBursting) {
  FramePacer pacer(0.002, true, 0.01);  // 2 ms slots, 10 ms of lag at most
  pacer.beginFrame();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  pacer.endFrame();
  EXPECT_EQ(pacer.overruns(), 1u);
  EXPECT_EQ(pacer.resyncs(), 1u);
  EXPECT_GT(pacer.lostSeconds(), 0.015);
  const auto t0 = std::chrono::steady_clock::now();
  pacer.beginFrame();
  pacer.endFrame();
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::microseconds(500))
      << "the next frame waits for its own slot";
}

TEST(FramePacer, AsFastAsPossibleNeverWaits) {
  FramePacer pacer(10.0, false);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 3; ++i) pacer.endFrame();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  EXPECT_EQ(pacer.overruns(), 0u);
}

TEST(RunLoop, RealtimeRunTakesItsSimulatedTimeAndReportsFrames) {
  const Scene scene = loadScene(kSourceDir + "/scenes/grasp.yaml");
  RunOptions options;
  options.duration_s = 0.5;
  options.realtime = true;
  const RunResult r = runHeadless(scene, options);
  EXPECT_EQ(r.frames, 30u);                    // 60 Hz
  EXPECT_EQ(r.steps, 120u);                    // 4 steps of 1/240 s per frame
  EXPECT_GE(r.wall_time_s, 0.5 - 1.0 / 60.0);  // the last frame's slot is not waited out
  EXPECT_EQ(r.physics_time.count(), 30u);
  EXPECT_GT(r.physics_time.mean(), 0.0);
  EXPECT_LE(r.physics_time.max(), r.frame_time.max());
  EXPECT_EQ(r.scheme_time.count(), 30u);
  // Same steps as the fast run: pacing never changes the simulation.
  options.realtime = false;
  EXPECT_TRUE(runHeadless(scene, options).final_state == r.final_state);
}

}  // namespace
}  // namespace sim::engine
