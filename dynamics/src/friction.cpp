#include <dynamics/friction.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace sim::dynamics::friction {

namespace {

double sign(double v) {
  return v > 0.0 ? 1.0 : (v < 0.0 ? -1.0 : 0.0);
}

std::string fmtDouble(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// z(t + dt) for dz/dt = v − a z with a ≥ 0 constant over the step.
double exactRelax(double z, double v, double a, double dt) {
  const double x = a * dt;
  if (x < 1e-12) return z + v * dt;  // a ≈ 0: no relaxation, pure integration
  const double zss = v / a;
  return zss + (z - zss) * std::exp(-x);
}

}  // namespace

std::string validate(const StribeckParams& p) {
  if (!(p.coulomb >= 0.0) || !std::isfinite(p.coulomb)) return "coulomb: must be >= 0";
  if (!(p.breakaway >= p.coulomb) || !std::isfinite(p.breakaway))
    return "breakaway: must be >= coulomb";
  if (!(p.stribeck_speed > 0.0) || !std::isfinite(p.stribeck_speed))
    return "stribeck_speed: must be > 0";
  if (!(p.exponent > 0.0) || !std::isfinite(p.exponent)) return "exponent: must be > 0";
  if (!(p.viscous >= 0.0) || !std::isfinite(p.viscous)) return "viscous: must be >= 0";
  return {};
}

double stribeckMagnitude(StribeckCurve curve, const StribeckParams& p, double speed_abs) {
  const double r = speed_abs / p.stribeck_speed;
  double shape = 0.0;
  switch (curve) {
    case StribeckCurve::Lorentz: shape = 1.0 / (1.0 + r * r); break;
    case StribeckCurve::Tustin: shape = std::exp(-r); break;
    case StribeckCurve::Gaussian: shape = std::exp(-r * r); break;
    case StribeckCurve::Generalised: shape = std::exp(-std::pow(r, p.exponent)); break;
  }
  return p.coulomb + (p.breakaway - p.coulomb) * shape;
}

double stribeckFriction(StribeckCurve curve, const StribeckParams& p, double speed) {
  if (speed == 0.0) return 0.0;
  return stribeckMagnitude(curve, p, std::abs(speed)) * sign(speed) + p.viscous * speed;
}

double linearisedStribeck(const StribeckParams& p, double zero_zone_radps, double speed) {
  const double a = std::abs(speed);
  if (a <= zero_zone_radps) return (p.breakaway / zero_zone_radps) * speed + p.viscous * speed;
  const double g = stribeckMagnitude(StribeckCurve::Generalised, p, a - zero_zone_radps);
  return g * sign(speed) + p.viscous * speed;
}

double staticFrictionStepBound(const StribeckParams& p, double zero_zone_radps, double inertia,
                               double k) {
  return 2.0 * zero_zone_radps * inertia / (k * p.coulomb);
}

void checkStaticFrictionStep(const StribeckParams& p, double zero_zone_radps, double inertia,
                             double dt, double k) {
  const double bound = staticFrictionStepBound(p, zero_zone_radps, inertia, k);
  if (!(dt <= bound)) {
    throw std::invalid_argument(
        "time step " + fmtDouble(dt) +
        " s exceeds the stable bound of seed 000 eq. 29 for "
        "linearised Stribeck friction: dt < 2 dOmega J / (k M_C) = 2*" +
        fmtDouble(zero_zone_radps) + "*" + fmtDouble(inertia) + "/(" + fmtDouble(k) + "*" +
        fmtDouble(p.coulomb) + ") = " + fmtDouble(bound) +
        " s; use a smaller step, a wider zero-speed zone or the modified LuGre model");
  }
}

std::string validate(const ModifiedLuGreParams& p) {
  if (auto e = validate(p.curve); !e.empty()) return "curve." + e;
  if (!(p.sigma0 > 0.0) || !std::isfinite(p.sigma0)) return "sigma0: must be > 0";
  if (!(p.sigma1 >= 0.0) || !std::isfinite(p.sigma1)) return "sigma1: must be >= 0";
  if (!(p.t_min >= 0.0) || !std::isfinite(p.t_min)) return "t_min: must be >= 0";
  if (!(p.curve.coulomb > 0.0)) return "curve.coulomb: must be > 0 for LuGre (g > 0)";
  return {};
}

FrictionSample stepModifiedLuGre(const ModifiedLuGreParams& p, LuGreState& s, double speed,
                                 double dt) {
  const double a = std::abs(speed);
  const double g = stribeckMagnitude(StribeckCurve::Generalised, p.curve, a);
  double sigma0 = p.sigma0;
  double sigma1 = p.sigma1;
  if (a > 0.0) {
    if (p.t_min > 0.0) sigma0 = std::min(sigma0, g / (a * p.t_min));
    sigma1 = std::min(sigma1, 4.0 * sigma0 * g / a);
  }
  const double rate = sigma0 * a / g;  // 1 / (bristle time constant), ≤ 1/T_min
  s.z = exactRelax(s.z, speed, rate, dt);
  FrictionSample out;
  out.z_rate = speed - rate * s.z;
  out.friction = sigma0 * s.z + sigma1 * out.z_rate + p.curve.viscous * speed;
  return out;
}

std::string validate(const StickSlipLuGreParams& p) {
  if (!(p.sigma0 > 0.0)) return "sigma0: must be > 0";
  if (!(p.sigma1 >= 0.0)) return "sigma1: must be >= 0";
  if (!(p.sigma2 >= 0.0)) return "sigma2: must be >= 0";
  if (!(p.coulomb > 0.0)) return "coulomb: must be > 0";
  if (!(p.breakaway >= p.coulomb)) return "breakaway: must be >= coulomb";
  if (!(p.stribeck_speed > 0.0)) return "stribeck_speed: must be > 0";
  if (!(p.zero_speed > 0.0)) return "zero_speed: must be > 0";
  return {};
}

StickSlipSample stepStickSlipLuGre(const StickSlipLuGreParams& p, StickSlipState& s, double u,
                                   double speed, double mass, double dt) {
  StribeckParams curve;
  curve.coulomb = p.coulomb;
  curve.breakaway = p.breakaway;
  curve.stribeck_speed = p.stribeck_speed;
  const double g = stribeckMagnitude(StribeckCurve::Gaussian, curve, std::abs(speed));
  const double rate = p.sigma0 * std::abs(speed) / g;
  const double zdot = speed - rate * s.z;
  StickSlipSample out;
  out.friction = p.sigma0 * s.z + p.sigma1 * zdot + p.sigma2 * speed;
  const bool inWindow = std::abs(speed) < p.zero_speed;
  if (!s.slipping) {
    // Sticking: the drive must overcome the friction the bristles can hold before it moves.
    out.acceleration = std::abs(u) <= std::abs(out.friction) ? 0.0 : (u - out.friction) / mass;
    if (!inWindow) s.slipping = true;
  } else if (!inWindow) {
    out.acceleration = (u - out.friction) / mass;
  } else {
    out.acceleration = 0.0;  // speed fell back into the window: stick again
    s.slipping = false;
  }
  out.slipping = s.slipping;
  s.z = exactRelax(s.z, speed, rate, dt);
  return out;
}

}  // namespace sim::dynamics::friction
