// Seed 000 drive unit (SPEC §3) as a standalone model: DC motor circuit, input inertia, gearbox
// with backlash, torsional elasticity and internal damping, output inertia with load-dependent
// friction. The output shaft here is its own inertia J2 with an external torque M_out: the
// independent reference the solver's coupled drive (DriveDef in model.h: the motor's armature
// circuit and an elastic transmission inside the motor block) is validated against, see
// docs/dynamics.md. Defaults: the seed 000 gripper (seed000.h).
#pragma once

#include <dynamics/friction.h>
#include <dynamics/seed000.h>

#include <string>

namespace sim::dynamics::drive {

struct DriveUnitParams {
  double L = seed000::kInductance_H;         ///< Armature inductance (H).
  double R = seed000::kResistance_ohm;       ///< Armature resistance (Ω).
  double k_E = seed000::kBackEmf;            ///< Back-EMF constant (V s/rad), motor side.
  double k_M = seed000::kTorqueConstant;     ///< Torque constant (N m/A).
  double J1 = seed000::kInputInertia_kgm2;   ///< Input inertia, motor side (kg m²).
  double ratio = seed000::kGearRatio;        ///< Gear ratio i (motor speed / output speed).
  double K_V1 = seed000::kInternalDamping;   ///< Internal damping of the transmission, output side
                                             ///< (N m s/rad).
  double c = seed000::kStiffness;            ///< Transmission stiffness, output side (N m/rad).
  double backlash = 0.0;                     ///< θ_bn, half the gap, output side (rad).
  double J2 = seed000::kOutputInertia_kgm2;  ///< Output inertia (kg m²).
  double K_ML = seed000::kLoadFriction;      ///< Friction growth with transmitted torque (1/(N m)).
  /// Output friction M_f(Ω2): the modified LuGre model (eq. 22); curve.viscous is K_V2.
  friction::ModifiedLuGreParams friction = seed000Friction();

  /// The seed 000 drive's output friction: eq. 22 on its generalised Stribeck curve.
  static friction::ModifiedLuGreParams seed000Friction() {
    friction::ModifiedLuGreParams f;
    f.curve.coulomb = seed000::kCoulomb_Nm;
    f.curve.breakaway = seed000::kBreakaway_Nm;
    f.curve.stribeck_speed = seed000::kStribeckSpeed;
    f.curve.exponent = seed000::kStribeckExponent;
    f.sigma0 = seed000::kSigma0;
    f.sigma1 = seed000::kSigma1;
    f.t_min = seed000::kTMin_s;
    return f;
  }
};

/// Empty when valid, else "FIELD: why".
std::string validate(const DriveUnitParams& p);

struct DriveUnitState {
  double current_A = 0.0;
  double alpha1_rad = 0.0;    ///< Input angle reduced to the output (motor angle / i).
  double omega1_radps = 0.0;  ///< Input speed reduced to the output.
  double alpha2_rad = 0.0;    ///< Output angle.
  double omega2_radps = 0.0;  ///< Output speed.
  friction::LuGreState friction;
};

struct DriveUnitOutputs {
  double M1_Nm = 0.0;        ///< Transmitted torque, output side (eq. 15).
  double friction_Nm = 0.0;  ///< M_F = (|M1| K_ML + 1) M_f + K_V2 Ω2.
  double motor_torque_Nm = 0.0;
};

/// Backlash functions of eqs. 16–17.
double backlashB(double twist, double gap);
double backlashBPrime(double twist, double gap);

/// One step: the current by the exact exponential of its RL circuit at the step's back-EMF, z of
/// the friction model exactly (friction.h), then both shafts by semi-implicit Euler from the
/// torques at the start of the step. Stable for dt well below the shafts' periods
/// (2π sqrt(J/c) ≈ 5 ms) and 2 J2/σ1 (4.5 ms); validation runs use 1e-6…1e-5 s.
/// `output_locked` holds the output shaft (a stall test).
DriveUnitOutputs stepDriveUnit(const DriveUnitParams& p, DriveUnitState& s, double voltage_V,
                               double load_Nm, double dt, bool output_locked = false);

}  // namespace sim::dynamics::drive
