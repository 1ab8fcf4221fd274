// Internal header, not API: the motors a scene's `motors[].catalogue` names (docs/scenes.md,
// "Motor catalogue"), passport data in SI units.
#pragma once

#include <span>
#include <string_view>

namespace sim::engine::detail {

struct CatalogueMotor {
  const char* name;
  double stall_torque_Nm;      ///< Mp at u = 1.
  double no_load_speed_radps;  ///< w_xx.
  double rotor_inertia_kgm2;   ///< I_m; 0 when the time constant is given instead.
  double time_constant_s;      ///< t_m; 0 when the inertia is given instead.
  double gear_ratio;           ///< r of a gear motor; 0 for a bare motor (r from the scene).
  const char* what;            ///< Where the numbers come from.
};

std::span<const CatalogueMotor> catalogueMotors();

/// The entry of that name, or nullptr.
const CatalogueMotor* findCatalogueMotor(std::string_view name);

}  // namespace sim::engine::detail
