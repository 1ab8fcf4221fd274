// The motor catalogue (motor_catalogue.h; the table is in docs/scenes.md).
//
// Servomotor classes: a low-inertia AC servomotor of rated power P at the usual rated speed of
// 3000 rev/min has the rated torque P / (314.16 rad/s); its peak torque, the passport model's
// stall torque Mp at u = 1, is three times that, and its maximum speed 6000 rev/min is the
// no-load speed w_xx. The rotor inertias are typical of the class (60 mm flange up to 400 W,
// 80 mm at 750 W). They are classes to size a joint with, not a particular vendor's product.
#include "motor_catalogue.h"

#include <array>
#include <numbers>

namespace sim::engine::detail {

namespace {

constexpr double kRpm = 2.0 * std::numbers::pi / 60.0;

// Peak torque of a servomotor class: three times the rated torque at 3000 rev/min.
constexpr double servoPeakTorque(double watts) {
  return 3.0 * watts / (3000.0 * kRpm);
}

constexpr std::array kMotors{
    CatalogueMotor{"wg7152", 0.2, 49.0 * kRpm, 0.0, 1.0, 50.0,
                   "gear motor WG-7152 of the seed 004 validation experiment (SPEC section 2.4)"},
    CatalogueMotor{"servo_100w", servoPeakTorque(100), 6000 * kRpm, 0.051e-4, 0.0, 0.0,
                   "100 W low-inertia AC servomotor class"},
    CatalogueMotor{"servo_200w", servoPeakTorque(200), 6000 * kRpm, 0.14e-4, 0.0, 0.0,
                   "200 W low-inertia AC servomotor class"},
    CatalogueMotor{"servo_400w", servoPeakTorque(400), 6000 * kRpm, 0.26e-4, 0.0, 0.0,
                   "400 W low-inertia AC servomotor class"},
    CatalogueMotor{"servo_750w", servoPeakTorque(750), 6000 * kRpm, 0.87e-4, 0.0, 0.0,
                   "750 W low-inertia AC servomotor class"},
};

}  // namespace

std::span<const CatalogueMotor> catalogueMotors() {
  return kMotors;
}

const CatalogueMotor* findCatalogueMotor(std::string_view name) {
  for (const CatalogueMotor& m : kMotors) {
    if (name == m.name) return &m;
  }
  return nullptr;
}

}  // namespace sim::engine::detail
