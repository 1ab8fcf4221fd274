// The motor catalogue (engine/src/motor_catalogue.cpp) through the scene loader: a motor that
// names a class gets the passport data it does not give, as docs/scenes.md's table states them
// (a servo class's Mp is three times the rated torque P / (3000 rev/min)); keys the scene gives
// win; an unknown class is an error naming the line and the known classes.
#include <engine/scene.h>

#include "scene_text.h"

#include <gtest/gtest.h>

#include <numbers>
#include <string>
#include <tuple>

namespace sim::engine {
namespace {

constexpr double kRpm = 2.0 * std::numbers::pi / 60.0;  // rad/s per rev/min

// The motor of testing::hingedLinkScene with `passport` as its passport keys.
dynamics::MotorDef catalogueMotor(const std::string& passport) {
  return loadSceneFromString(testing::hingedLinkScene("", passport), "catalogue.yaml")
      .model.motors.at(0);
}

TEST(MotorCatalogue, ServoClassesFollowTheirRatedPower) {
  // Class, rated power (W), I_m (kg m^2) and Mp as docs/scenes.md's table rounds it (N m).
  for (const auto& [name, watts, inertia, table_Mp] :
       {std::tuple{"servo_100w", 100.0, 5.1e-6, 0.955},
        std::tuple{"servo_200w", 200.0, 1.4e-5, 1.91},
        std::tuple{"servo_400w", 400.0, 2.6e-5, 3.82},
        std::tuple{"servo_750w", 750.0, 8.7e-5, 7.16}}) {
    const auto m = catalogueMotor(std::string("catalogue: ") + name);
    // Exact formulas of the class (1e-12 relative: rounding only).
    EXPECT_NEAR(m.stall_torque_Nm, 3.0 * watts / (3000.0 * kRpm), 1e-12 * m.stall_torque_Nm)
        << name;
    EXPECT_NEAR(m.no_load_speed_radps, 6000.0 * kRpm, 1e-9) << name;
    ASSERT_TRUE(m.rotor_inertia_kgm2.has_value()) << name;
    EXPECT_DOUBLE_EQ(*m.rotor_inertia_kgm2, inertia) << name;
    EXPECT_EQ(m.gear_ratio, 1.0) << name;  // a bare motor: r from the scene (default 1)
    EXPECT_NEAR(m.stall_torque_Nm, table_Mp, 0.005) << name;  // the table's last digit
    EXPECT_NEAR(m.no_load_speed_radps, 628.3, 0.05) << name;
  }
  // The gear motor of SPEC §2.4: Mp 0.2 N m, 49 rev/min, t_m 1 s, r 50.
  const auto wg = catalogueMotor("catalogue: wg7152");
  EXPECT_EQ(wg.stall_torque_Nm, 0.2);
  EXPECT_NEAR(wg.no_load_speed_radps, 49.0 * kRpm, 1e-15);
  EXPECT_EQ(wg.time_constant_s, 1.0);
  EXPECT_FALSE(wg.rotor_inertia_kgm2.has_value());
  EXPECT_EQ(wg.gear_ratio, 50.0);
}

TEST(MotorCatalogue, KeysTheSceneGivesWin) {
  const auto m = catalogueMotor("Mp: 0.2, w_xx: 5.0, r: 50, catalogue: servo_750w");
  EXPECT_EQ(m.stall_torque_Nm, 0.2);
  EXPECT_EQ(m.no_load_speed_radps, 5.0);
  EXPECT_EQ(m.gear_ratio, 50.0);
  ASSERT_TRUE(m.rotor_inertia_kgm2.has_value());  // not given: the class's
  EXPECT_DOUBLE_EQ(*m.rotor_inertia_kgm2, 8.7e-5);
}

TEST(MotorCatalogue, UnknownClassNamesTheLineAndTheKnownOnes) {
  try {
    catalogueMotor("catalogue: servo_9kw");
    FAIL() << "accepted";
  } catch (const SceneError& e) {
    EXPECT_EQ(e.line(), 6) << e.what();
    EXPECT_EQ(e.key(), "motors[drive].catalogue") << e.what();
    EXPECT_NE(e.message().find("servo_9kw"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("known: wg7152, servo_100w, servo_200w, servo_400w, servo_750w"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace sim::engine
