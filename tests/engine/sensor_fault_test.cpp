// Sensor faults (engine/session.h): the scheme sees a noisy or frozen reading of a sensor while the
// dynamics stays true. The scene servoes a link on a 0.03 rad/s ramp by a PID (kp = 10 /rad;
// the start transient decays as exp(-0.38 t), so the tests start their faults at 8 s) on
// joint.hinge.position (tests/engine/data/sensor_servo.yaml).
#include <engine/recording.h>
#include <engine/scenario.h>
#include <engine/scene.h>
#include <engine/session.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "replay_check.h"

namespace {

using sim::engine::SensorFault;
using sim::engine::Session;

const std::string kDir = std::string(SIMTRAINER_SOURCE_DIR) + "/tests/engine/data";
const std::string kScene = kDir + "/sensor_servo.yaml";

int hingeSensor(const Session& s) {
  std::string error;
  const int k = s.schemeSensor("joint.hinge.position", error);
  EXPECT_GE(k, 0) << error;
  return k;
}

double trackingError(const Session& s) {
  return std::abs(0.03 * s.time() - s.dynamics().joints[0].position);
}

void runTo(Session& s, double t) {
  while (s.time() < t - 1e-9) s.step();
}

TEST(SensorFault, DropoutMakesTheServoLoseTrack) {
  Session healthy(sim::engine::loadScene(kScene));
  Session faulted(sim::engine::loadScene(kScene));
  runTo(healthy, 8.0);
  runTo(faulted, 8.0);
  const int k = hingeSensor(faulted);
  faulted.setSensorFault(k, {SensorFault::Kind::Dropout, 0.0});
  // Dropout holds the value the scheme saw at its last evaluation (one step of 0.03 rad/s ago).
  EXPECT_NEAR(faulted.sensorFaults()[static_cast<std::size_t>(k)].value,
              faulted.dynamics().joints[0].position, 1e-3);
  runTo(healthy, 14.0);
  runTo(faulted, 14.0);
  std::printf("tracking error at 14 s: healthy %.4f rad, dropout since 8 s %.4f rad\n",
              trackingError(healthy), trackingError(faulted));
  // Healthy: a P servo on a ramp lags by u/kp = (0.03 / 0.1026) / 10 = 0.029 rad. Frozen: the PID
  // sees a growing error and drives the link at full voltage (0.1 rad/s), past the ramp.
  EXPECT_LT(trackingError(healthy), 0.04);
  EXPECT_GT(trackingError(faulted), 0.1) << "the frozen measurement must lose the ramp";
  // Cleared, the servo catches up again.
  faulted.setSensorFault(k, {});
  runTo(faulted, 30.0);
  EXPECT_LT(trackingError(faulted), 0.04);
}

TEST(SensorFault, NoiseRaisesTheCommandedVoltageVariance) {
  Session healthy(sim::engine::loadScene(kScene));
  Session noisy(sim::engine::loadScene(kScene));
  const double sigma = 0.02;  // rad
  runTo(healthy, 8.0);        // past the start transient
  runTo(noisy, 8.0);
  noisy.setSensorFault(hingeSensor(noisy), {SensorFault::Kind::Noise, sigma});
  // The voltage difference is kp * noise (plus the tiny motion the noise causes): its standard
  // deviation must be kp sigma = 0.2 within 15 % (400 samples: the estimate's own spread is ~4 %).
  double sum = 0.0, sum2 = 0.0, healthy_sum = 0.0, healthy_sum2 = 0.0;
  const int n = 400;
  for (int i = 0; i < n; ++i) {
    healthy.step();
    noisy.step();
    const double uh = healthy.dynamics().motors[0].voltage;
    const double d = noisy.dynamics().motors[0].voltage - uh;
    sum += d;
    sum2 += d * d;
    healthy_sum += uh;
    healthy_sum2 += uh * uh;
  }
  const double sd = std::sqrt(sum2 / n - (sum / n) * (sum / n));
  EXPECT_NEAR(sd, 10.0 * sigma, 0.15 * 10.0 * sigma);
  std::printf("voltage sd: kp sigma %.3f, measured %.4f\n", 10.0 * sigma, sd);
  const double healthy_var = healthy_sum2 / n - (healthy_sum / n) * (healthy_sum / n);
  EXPECT_GT(sd * sd, 10.0 * healthy_var) << "noise must dominate the commanded voltage's variance";
  // The dynamics itself is not noised: a scenario expectation on the joint reads the truth.
  EXPECT_LT(trackingError(noisy), 0.04);
}

// Scenario faults reach the recording as `s` lines; the replay re-applies them and matches every
// step's hash (the noise generator is seeded from the scene, so it draws the same numbers).
TEST(SensorFault, ScenarioFaultsAreRecordedAndReplayBitIdentically) {
  const sim::engine::Scenario scenario = sim::engine::loadScenarioFromString(
      "scene: sensor_servo.yaml\nduration: 1.5\nfaults:\n"
      "  - {at: 0.2, signal: joint.hinge.position, fault: noise, value: 0.01}\n"
      "  - {at: 0.6, signal: joint.hinge.position, fault: dropout}\n"
      "  - {at: 1.0, signal: joint.hinge.position, fault: none}\n"
      "expect:\n  - {signal: time, min: 1.49}\n",
      kDir + "/inline.scenario.yaml");
  ASSERT_EQ(scenario.faults.size(), 3u);
  const std::string rec = sim::engine::testing::tempRecording("sensor_a");
  sim::engine::PlayOptions options;
  options.record_path = rec;
  sim::engine::playScenario(scenario, options);
  const sim::engine::Recording r = sim::engine::readRecording(rec);
  std::remove(rec.c_str());
  ASSERT_EQ(r.sensor_faults.size(), 3u);
  auto it = r.sensor_faults.begin();
  EXPECT_EQ(it->second.at(0).second.kind, SensorFault::Kind::Noise);
  EXPECT_EQ(it->second.at(0).second.value, 0.01);
  ++it;
  EXPECT_EQ(it->second.at(0).second.kind, SensorFault::Kind::Dropout);
  const sim::engine::ReplayResult replayed = sim::engine::replay(r, true);
  EXPECT_FALSE(replayed.diverged) << "diverged at step " << replayed.diverged_step;
  EXPECT_EQ(replayed.steps, r.hashes.size());
  // And the faults matter: a healthy run of the same scene ends in another state.
  Session healthy(sim::engine::loadScene(kScene));
  for (std::size_t s = 0; s < r.hashes.size(); ++s) healthy.step();
  EXPECT_NE(healthy.hash(), replayed.final_hash);
}

void expectScenarioError(const std::string& fault, const std::string& needle) {
  sim::engine::testing::expectFaultError(kDir, "sensor_servo.yaml", fault, needle);
}

TEST(SensorFault, ScenarioErrorsNameTheFileAndLine) {
  expectScenarioError("{at: 0.5, signal: joint.nosuch.position, fault: dropout}", "nosuch");
  // A real sensor the scheme does not read: faulting it would change nothing.
  expectScenarioError("{at: 0.5, signal: joint.hinge.speed, fault: dropout}", "does not read");
  expectScenarioError("{at: 0.5, signal: joint.hinge.position, fault: noise}", "value");
  expectScenarioError("{at: 0.5, signal: joint.hinge.position, fault: stuck}", "noise, dropout");
}

}  // namespace
