// Friction models of SPEC §3–§4 as standalone models (a parameter struct, a state struct where
// the model has memory, and pure functions), so they can be validated against the papers before
// they are coupled to joints. Sign convention: the returned friction opposes positive speed, i.e.
// the load sees −F. Units: torque N m and rad/s for rotary joints (N and m/s work the same).
#pragma once

#include <string>

namespace sim::dynamics::friction {

/// The Stribeck curves of seed 000 Table 1: friction at constant speed v,
///   Lorentz:     F_C + (F_S − F_C) / (1 + (v/v_S)²)
///   Tustin:      F_C + (F_S − F_C) exp(−|v|/v_S)
///   Gaussian:    F_C + (F_S − F_C) exp(−(v/v_S)²)
///   Generalised: F_C + (F_S − F_C) exp(−(|v|/v_S)^β)
/// each times sign(v), plus viscous F_V v.
enum class StribeckCurve { Lorentz, Tustin, Gaussian, Generalised };

struct StribeckParams {
  double coulomb = 0.0;         ///< F_C / M_C, sliding friction (N m).
  double breakaway = 0.0;       ///< F_S / M_S, static (breakaway) friction (N m), ≥ coulomb.
  double stribeck_speed = 1.0;  ///< v_S / Ω_2S (rad/s), > 0.
  double exponent = 2.0;        ///< β of the generalised curve, > 0.
  double viscous = 0.0;         ///< F_V / K_V2 (N m s/rad), ≥ 0.
};

/// Empty when valid, else the first bad field and why ("breakaway: must be >= coulomb").
std::string validate(const StribeckParams& p);

/// Magnitude of the curve without the viscous part, |v| ≥ 0: g(|v|).
double stribeckMagnitude(StribeckCurve curve, const StribeckParams& p, double speed_abs);

/// Table 1 curve at speed v: g(|v|) sign(v) + F_V v; 0 at v = 0 (the curve itself is singular
/// there, which is why eq. 21 and the dynamic models exist).
double stribeckFriction(StribeckCurve curve, const StribeckParams& p, double speed);

/// Seed 000 eq. 21: the generalised curve with a linearised zero-speed zone |Ω| ≤ δΩ,
///   (M_C + (M_S − M_C) exp(−((|Ω| − δΩ)/Ω_S)^β)) sign Ω,  |Ω| > δΩ,
///   (M_S / δΩ) Ω,                                         |Ω| ≤ δΩ,
/// plus K_V2 Ω. Continuous (M_S at |Ω| = δΩ) and single-valued: no memory.
double linearisedStribeck(const StribeckParams& p, double zero_zone_radps, double speed);

/// Seed 000 eq. 29: explicit integration of an inertia J with eq. 21 friction is stable for
/// Δt < 2 δΩ J / (k M_C), k ≈ 6…10 depending on the solver.
double staticFrictionStepBound(const StribeckParams& p, double zero_zone_radps, double inertia,
                               double k = 6.0);

/// Throws std::invalid_argument naming eq. 29 and the bound when dt exceeds it.
void checkStaticFrictionStep(const StribeckParams& p, double zero_zone_radps, double inertia,
                             double dt, double k = 6.0);

/// Seed 000 eq. 22: LuGre with speed-dependent σ0, σ1 bounded so that the bristle time constant
/// g/(σ0|Ω|) never falls below T_min:
///   M_f = σ0(Ω) z + σ1(Ω) dz/dt + K_V2 Ω,   dz/dt = Ω − σ0(Ω) |Ω| z / g(Ω),
///   σ0(Ω) = min(σ0(0), g/(|Ω| T_min)),  σ1(Ω) = min(σ1(0), 4 σ0(Ω) g/|Ω|),
/// with g the generalised curve of StribeckParams.
struct ModifiedLuGreParams {
  StribeckParams curve;   ///< g(Ω): coulomb, breakaway, stribeck_speed, exponent; viscous.
  double sigma0 = 100.0;  ///< σ0(0), bristle stiffness (N m/rad), > 0.
  double sigma1 = 0.0;    ///< σ1(0), bristle damping (N m s/rad), ≥ 0.
  double t_min = 0.0;     ///< T_min (s), ≥ 0; 0 leaves σ0 unbounded (classical LuGre).
};

std::string validate(const ModifiedLuGreParams& p);

/// The model's memory: the mean bristle deflection (rad). Part of the dynamics state when the
/// model is attached to a joint.
struct LuGreState {
  double z = 0.0;
};

struct FrictionSample {
  double friction = 0.0;  ///< M_f over the step (N m), opposing positive speed.
  double z_rate = 0.0;    ///< dz/dt used (rad/s).
};

/// Advances z over dt at constant speed Ω and returns the friction. dz/dt is linear in z for
/// fixed Ω, so z is integrated exactly (exponential): stable for any dt, and the steady state
/// σ0 z = g(Ω) sign Ω is reached exactly. The friction uses z and dz/dt at the end of the step.
FrictionSample stepModifiedLuGre(const ModifiedLuGreParams& p, LuGreState& s, double speed,
                                 double dt);

/// Seed 003 (SPEC §4): LuGre F = σ0 z + σ1 dz/dt + σ2 v with the Gaussian curve
/// g(v) = F_C + (F_S − F_C) exp(−(v/v_S)²), and explicit stick/slip states: inside the
/// zero-speed window |v| < v_zero the body sticks (acceleration 0) while |u| ≤ |F| and starts
/// when |u| > |F|; once slipping it sticks again when its speed falls back into the window.
struct StickSlipLuGreParams {
  double sigma0 = 1e5;
  double sigma1 = 316.0;
  double sigma2 = 0.4;
  double coulomb = 1.0;
  double breakaway = 1.5;
  double stribeck_speed = 1e-3;
  double zero_speed = 5e-5;  ///< v_zero, the window of the stick/slip switch.
};

std::string validate(const StickSlipLuGreParams& p);

struct StickSlipState {
  double z = 0.0;
  bool slipping = false;
};

struct StickSlipSample {
  double friction = 0.0;      ///< F at the start of the step.
  double acceleration = 0.0;  ///< (u − F)/m, or 0 while sticking.
  bool slipping = false;      ///< State after the switch logic.
};

/// Evaluates F at (v, z), applies the stick/slip switch for drive force u on mass (inertia) m,
/// and advances z over dt exactly at constant v. The caller integrates v and x.
StickSlipSample stepStickSlipLuGre(const StickSlipLuGreParams& p, StickSlipState& s, double u,
                                   double speed, double mass, double dt);

}  // namespace sim::dynamics::friction
