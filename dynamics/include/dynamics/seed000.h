// The seed 000 gripper drive as its paper identifies it (SPEC §3: the DC motor's circuit, the
// gearbox, the transmission's elasticity and damping, the output friction of eqs. 22 and 27):
// defined once here, the defaults of DriveDef (model.h), of drive::DriveUnitParams (drive_unit.h)
// and the friction report's curves.
#pragma once

namespace sim::dynamics::seed000 {

inline constexpr double kInductance_H = 0.746e-3;      ///< L
inline constexpr double kResistance_ohm = 7.25;        ///< R
inline constexpr double kBackEmf = 0.0453;             ///< k_E (V s/rad, motor side)
inline constexpr double kTorqueConstant = 0.0452;      ///< k_M (N m/A)
inline constexpr double kSupply_V = 12.0;              ///< U at input u = 1
inline constexpr double kInputInertia_kgm2 = 9.49e-7;  ///< J1, motor side
inline constexpr double kGearRatio = 28.0;             ///< i, motor speed / output speed
inline constexpr double kStiffness = 1003.0;           ///< c, output side (N m/rad)
inline constexpr double kInternalDamping = 0.146;      ///< K_V1, output side (N m s/rad)
inline constexpr double kOutputInertia_kgm2 = 0.0021;  ///< J2
inline constexpr double kLoadFriction = 3.266;         ///< K_ML, friction growth (1/(N m))
inline constexpr double kCoulomb_Nm = 0.0405;          ///< M_C
inline constexpr double kBreakaway_Nm = 0.0467;        ///< M_S
inline constexpr double kStribeckSpeed = 10.47;        ///< Ω_2S (rad/s)
inline constexpr double kStribeckExponent = 2.0;       ///< β
inline constexpr double kSigma0 = 100.0;               ///< σ0(0) of eq. 22 (N m/rad)
inline constexpr double kSigma1 = 0.923;               ///< σ1(0) of eq. 22 (N m s/rad)
inline constexpr double kTMin_s = 2e-6;                ///< T_min of eq. 22

}  // namespace sim::dynamics::seed000
