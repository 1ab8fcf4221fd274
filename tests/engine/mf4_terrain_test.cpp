// The MF-4 on the work site's terrain: placed at the foot of the 15° ramp (the robot's bodies
// moved together in the loaded model; joints are body-relative, so the mechanism is unchanged),
// it drives up the ramp on its belts and onto the 0.8 m platform.
#include <engine/scene.h>
#include <engine/session.h>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

namespace sim::engine {
namespace {

using dynamics::Vec3;

TEST(Mf4Terrain, ClimbsTheRampOntoThePlatform) {
  Scene scene =
      loadScene((std::filesystem::path(SIMTRAINER_SOURCE_DIR) / "scenes/mf4.yaml").string());
  // The robot is every dynamic body but the container; move it from (1.0, -2.2) to the ramp's
  // centre line, 1.5 m before its foot (ramp: foot at x = 2, y = 5; top at x = 4.986, 0.8 m).
  const Vec3 shift(-0.5, 7.2, 0.0);
  int moved = 0;
  for (auto& body : scene.model.bodies) {
    if (body.is_static || body.name == "container") continue;
    body.position_m += shift;
    ++moved;
  }
  ASSERT_EQ(moved, 12);  // ten links and two sprockets
  Session session(scene);
  const int chassis = scene.model.findBody("chassis");
  const int drive = scene.pult.find("drive");
  ASSERT_GE(chassis, 0);
  ASSERT_GE(drive, 0);
  const auto& body = [&]() -> const dynamics::BodyState& {
    return session.dynamics().bodies[static_cast<std::size_t>(chassis)];
  };
  const double z0 = body().position_m.z();
  const auto run = [&](double seconds) {
    const auto steps = static_cast<int>(std::lround(seconds / scene.model.solver.time_step_s));
    for (int i = 0; i < steps; ++i) {
      const dynamics::StepReport report = session.step();
      ASSERT_EQ(report.fault.kind, dynamics::Fault::Kind::None) << report.fault.describe();
    }
  };
  session.setControl(drive, 1.0);
  run(3.0);
  // On the slope: climbing at a good fraction of the 1.18 m/s belt speed, pitched nose-up.
  const Vec3 v = body().linear_velocity_mps;
  EXPECT_GT(v.z(), 0.1) << "climbing";
  EXPECT_GT(v.norm(), 0.7) << "at speed on the slope";
  std::printf("MF-4 at 3 s: (%.3f, %.3f, %.3f) moving %.3f m/s\n", body().position_m.x(),
              body().position_m.y(), body().position_m.z(), v.norm());
  run(2.5);
  session.setControl(drive, 0.0);
  run(1.5);
  // On the platform (deck x 4.986 .. 6.986, y 4 .. 6, top at 0.8 m) with the whole 1.2 m of
  // both tracks on the deck (they span -0.62 .. +0.58 m along x about the chassis centre of
  // mass), resting, 0.8 m higher than it started (z within 2 cm: the deck is flat and level).
  const Vec3 p = body().position_m;
  EXPECT_NEAR(p.z(), z0 + 0.8, 0.02);
  EXPECT_GT(p.x(), 4.986 + 0.62);
  EXPECT_LT(p.x(), 6.986 - 0.58);
  EXPECT_NEAR(p.y(), 5.0, 0.3);
  EXPECT_LT(body().linear_velocity_mps.norm(), 0.01);
  std::printf("MF-4 on the platform at (%.3f, %.3f, %.3f)\n", p.x(), p.y(), p.z());
}

}  // namespace
}  // namespace sim::engine
