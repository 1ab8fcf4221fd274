#include <dynamics/drive_unit.h>

#include <cmath>

namespace sim::dynamics::drive {

std::string validate(const DriveUnitParams& p) {
  if (!(p.L > 0.0)) return "L: must be > 0";
  if (!(p.R > 0.0)) return "R: must be > 0";
  if (!(p.k_E >= 0.0)) return "k_E: must be >= 0";
  if (!(p.k_M >= 0.0)) return "k_M: must be >= 0";
  if (!(p.J1 > 0.0)) return "J1: must be > 0";
  if (!(p.ratio > 0.0)) return "ratio: must be > 0";
  if (!(p.K_V1 >= 0.0)) return "K_V1: must be >= 0";
  if (!(p.c > 0.0)) return "c: must be > 0";
  if (!(p.backlash >= 0.0)) return "backlash: must be >= 0";
  if (!(p.J2 > 0.0)) return "J2: must be > 0";
  if (!(p.K_ML >= 0.0)) return "K_ML: must be >= 0";
  if (auto e = friction::validate(p.friction); !e.empty()) return "friction." + e;
  return {};
}

double backlashB(double twist, double gap) {
  if (twist > gap) return twist - gap;
  if (twist < -gap) return twist + gap;
  return 0.0;
}

double backlashBPrime(double twist, double gap) {
  return std::abs(twist) > gap ? 1.0 : 0.0;
}

DriveUnitOutputs stepDriveUnit(const DriveUnitParams& p, DriveUnitState& s, double voltage_V,
                               double load_Nm, double dt, bool output_locked) {
  DriveUnitOutputs out;
  const double motorSpeed = p.ratio * s.omega1_radps;
  // L di/dt = U − R i − k_E ω_m: exact over the step for the start-of-step speed (L/R = 0.1 ms
  // is far shorter than any mechanical step we would want to take).
  const double iss = (voltage_V - p.k_E * motorSpeed) / p.R;
  s.current_A = iss + (s.current_A - iss) * std::exp(-p.R * dt / p.L);
  out.motor_torque_Nm = p.k_M * s.current_A;

  const double twist = s.alpha1_rad - s.alpha2_rad;
  const double twistRate = s.omega1_radps - s.omega2_radps;
  out.M1_Nm =
      p.K_V1 * backlashBPrime(twist, p.backlash) * twistRate + p.c * backlashB(twist, p.backlash);
  const double mf =
      friction::stepModifiedLuGre(p.friction, s.friction, s.omega2_radps, dt).friction;
  // K_V2 is inside stepModifiedLuGre (curve.viscous); only the Coulomb-like part grows with M1.
  const double viscous = p.friction.curve.viscous * s.omega2_radps;
  out.friction_Nm = (std::abs(out.M1_Nm) * p.K_ML + 1.0) * (mf - viscous) + viscous;

  // Input shaft, motor side: J1 ε_m = M_in − M1 / i; reduced to the output ε1 = ε_m / i.
  const double epsMotor = (out.motor_torque_Nm - out.M1_Nm / p.ratio) / p.J1;
  s.omega1_radps += dt * epsMotor / p.ratio;
  s.alpha1_rad += dt * s.omega1_radps;
  if (output_locked) {
    s.omega2_radps = 0.0;
  } else {
    s.omega2_radps += dt * (out.M1_Nm - out.friction_Nm - load_Nm) / p.J2;
    s.alpha2_rad += dt * s.omega2_radps;
  }
  return out;
}

}  // namespace sim::dynamics::drive
