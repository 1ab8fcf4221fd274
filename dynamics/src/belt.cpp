// Conveyor belts (belt.h): a manifold's tangent basis and its rows' coupling to the belts' rotors.
#include "belt.h"

#include <cmath>

namespace sim::dynamics::detail {

namespace {

/// A deterministic unit vector perpendicular to n.
Vec3 perpendicular(const Vec3& n) {
  const Vec3 t =
      std::abs(n.x()) < 0.57735 ? Vec3(n.cross(Vec3::UnitX())) : Vec3(n.cross(Vec3::UnitY()));
  return t.normalized();
}

}  // namespace

BeltCoupling beltCoupling(const Model& model, const ShapeDef& a, const ShapeDef& b, const Quat& qa,
                          const Quat& qb, const Vec3& n) {
  BeltCoupling out;
  // Tangent basis: along a belt when one side is a conveyor, else a fixed choice.
  Vec3 t1 = perpendicular(n);
  Vec3 belt_dir[2] = {Vec3::Zero(), Vec3::Zero()};
  const ShapeDef* sides[2] = {&a, &b};
  const Quat* orientations[2] = {&qa, &qb};
  for (int side = 0; side < 2; ++side) {
    const ShapeDef& sd = *sides[side];
    if (sd.belt_motor < 0) continue;
    belt_dir[side] = *orientations[side] * (sd.pose.rotation * sd.belt_direction);
    const Vec3 in_plane = belt_dir[side] - belt_dir[side].dot(n) * n;
    if (in_plane.norm() > 1e-6) t1 = in_plane.normalized();
  }
  out.tangent[0] = t1;
  out.tangent[1] = n.cross(t1);
  // Side b's surface speed adds to Cdot, side a's subtracts.
  for (int t = 0; t < 2; ++t) {
    for (int side = 0; side < 2; ++side) {
      const ShapeDef& sd = *sides[side];
      if (sd.belt_motor < 0) continue;
      const double coef =
          (side == 1 ? 1.0 : -1.0) * sd.belt_m_per_rad * out.tangent[t].dot(belt_dir[side]);
      out.rotor[side] = sd.belt_motor;
      out.coef[t][side] = coef;
      const MotorDef& md = model.motors[static_cast<std::size_t>(sd.belt_motor)];
      out.extra_k[t] += coef * coef / md.rotorInertia();
    }
  }
  return out;
}

}  // namespace sim::dynamics::detail
