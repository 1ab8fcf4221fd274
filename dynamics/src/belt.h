// Internal header, not API: conveyor belts, the contact rows' drive by a motor (a track belt).
//
// A shape with a belt (ShapeDef::belt_motor) has a surface that moves over its body along
// belt_direction at belt_m_per_rad times the motor's rotor speed. A contact's two friction rows
// then hold the relative speed of the two surfaces, not of the bodies:
//   Cdot_t = t.(v_b - v_a) + ang_b.w_b - ang_a.w_a + sum_side coef_t,side w_rotor,side,
//   coef_t,side = +-belt_m_per_rad t.belt_dir (+ for side b's surface, - for side a's),
// so the rotor is a third body of each friction row: its inverse inertia adds coef^2 / I_m to the
// row's K, and the row's impulse turns the rotor (coef * impulse / I_m): contact friction drives
// the belt and loads the motor. The tangent basis follows the belt (t1 along its direction in the
// contact plane), so the Coulomb disc's rows run along and across the belt. A manifold with a belt
// is solved by the scalar sweep (not batched, not articulated: its rows reach a rotor).
#pragma once

#include <dynamics/model.h>

#include <vector>

#include "rows.h"

namespace sim::dynamics::detail {

/// The belts of one manifold (the same for all of its points).
struct BeltCoupling {
  Vec3 tangent[2];                 ///< t1 (along the belt, if any), t2 = n x t1.
  int rotor[2] = {-1, -1};         ///< Motor rotor of side a's and side b's belt, or -1.
  double coef[2][2] = {};          ///< [tangent][side]: Cdot per rotor rad/s.
  double extra_k[2] = {0.0, 0.0};  ///< Per tangent row: the rotors' share of its K.
};

/// The tangent basis and belt coupling of a manifold with normal n between shapes a and b, whose
/// bodies have orientations qa and qb.
BeltCoupling beltCoupling(const Model& model, const ShapeDef& a, const ShapeDef& b, const Quat& qa,
                          const Quat& qb, const Vec3& n);

inline bool hasBelt(const int (&rotor)[2]) {
  return rotor[0] >= 0 || rotor[1] >= 0;
}

/// Adds the belts' surface speed to tangent row t's speed v.
inline void addBeltSpeed(double& v, const int (&rotor)[2], const double (&coef)[2][2], int t,
                         const std::vector<double>& rotor_speed) {
  for (int side = 0; side < 2; ++side)
    if (rotor[side] >= 0) v += coef[t][side] * rotor_speed[static_cast<std::size_t>(rotor[side])];
}

/// The rotors' share of the tangent rows' impulse changes d0, d1.
inline void applyBelt(const int (&rotor)[2], const double (&coef)[2][2], double d0, double d1,
                      std::vector<double>& rotor_speed,
                      const std::vector<double>& rotor_inv_inertia) {
  for (int side = 0; side < 2; ++side) {
    if (rotor[side] < 0) continue;
    const auto r = static_cast<std::size_t>(rotor[side]);
    rotor_speed[r] += (d0 * coef[0][side] + d1 * coef[1][side]) * rotor_inv_inertia[r];
  }
}

/// The rotors' share of tangent row t's warm-start impulse.
inline void warmStartBelt(const int (&rotor)[2], const double (&coef)[2][2], int t, double impulse,
                          std::vector<double>& rotor_speed,
                          const std::vector<double>& rotor_inv_inertia) {
  for (int side = 0; side < 2; ++side) {
    if (rotor[side] < 0) continue;
    const auto r = static_cast<std::size_t>(rotor[side]);
    rotor_speed[r] += impulse * coef[t][side] * rotor_inv_inertia[r];
  }
}

}  // namespace sim::dynamics::detail
