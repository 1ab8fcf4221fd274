// Pins the run loop's pacing and frame statistics (engine/include/engine/frame_clock.h,
// runHeadless with RunOptions::realtime).
#include <engine/frame_clock.h>
#include <engine/run.h>
#include <engine/scene.h>

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

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

TEST(FramePacer, SlowFramesAreOverrunsAndDoNotBurst) {
  // 2 ms slots, 10 ms of work per frame: every frame is a whole slot late.
  FramePacer pacer(0.002, true);
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    pacer.endFrame();
  }
  EXPECT_EQ(pacer.overruns(), 5u);
  // After the slow frames, a fast frame must wait for its own slot rather than run at once to
  // catch up: the schedule was re-based.
  const auto t0 = std::chrono::steady_clock::now();
  pacer.endFrame();
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::microseconds(500));
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
  EXPECT_EQ(r.frames, 30u);  // 60 Hz
  EXPECT_EQ(r.steps, 120u);  // 4 steps of 1/240 s per frame
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
