// The bodies' stages of a step (step_context.h: Bodies): load, integrate forces, world inertia,
// integrate positions, store.
//
// Integration is semi-implicit (symplectic) Euler: velocities from the forces, the constraints
// solved on the velocities, then positions from the new velocities; split-impulse position passes
// then move poses without touching velocities.
//
// Gyroscopic torque -w x I w, integrated implicitly in body axes with one Newton step of
// I (w' - w) + h w' x I w' = 0 linearised at w: stable at any spin rate, it keeps the angular
// momentum's direction and loses a little energy where an explicit term would gain it (the
// method Bullet and Box2D's successors use). Bodies with an isotropic inertia have none.
#include "step_context.h"

namespace sim::dynamics::detail {

void Bodies::compile(const Model& model) {
  const int nb = static_cast<int>(model.bodies.size());
  world = nb;
  const auto n = static_cast<std::size_t>(nb + 1);
  inv_mass.assign(n, 0.0);
  inv_inertia_local.assign(n, Mat3::Zero());
  inertia_local.assign(n, Mat3::Zero());
  gyroscopic.assign(n, 0);
  load_force.assign(n, Vec3::Zero());
  load_torque.assign(n, Vec3::Zero());
  for (std::size_t i = 0; i < model.bodies.size(); ++i) {
    const BodyDef& b = model.bodies[i];
    if (b.is_static) continue;
    inv_mass[i] = 1.0 / b.mass_kg;
    inv_inertia_local[i] = b.inertia_kgm2.inverse();
    inertia_local[i] = b.inertia_kgm2;
    const double trace = b.inertia_kgm2.trace() / 3.0;
    gyroscopic[i] = (b.inertia_kgm2 - trace * Mat3::Identity()).norm() > 1e-12 * trace;
  }
  solver.assign(n, SolverBody{});
  positions.assign(n, Vec3::Zero());
  orientations.assign(n, Quat::Identity());
}

void Bodies::load(const State& s, int first, int last) {
  for (std::size_t i = static_cast<std::size_t>(first); i < static_cast<std::size_t>(last); ++i) {
    const BodyState& bs = s.bodies[i];
    positions[i] = bs.position_m;
    orientations[i] = bs.orientation;
    // A sleeping body is frozen: static for the solver until it wakes. A body of inverse mass 0
    // has a zero inverse inertia (compile, then here as it falls asleep): updateInertia skips it.
    if (bs.asleep && solver[i].inv_mass != 0.0) solver[i].inv_inertia.setZero();
    solver[i].v = bs.asleep ? Vec3::Zero() : bs.linear_velocity_mps;
    solver[i].w = bs.asleep ? Vec3::Zero() : bs.angular_velocity_radps;
    solver[i].inv_mass = bs.asleep ? 0.0 : inv_mass[i];
  }
}

void Bodies::integrateForces(const Vec3& gravity, double h, int first, int last) {
  const Vec3 dv = gravity * h;
  for (std::size_t i = static_cast<std::size_t>(first); i < static_cast<std::size_t>(last); ++i) {
    SolverBody& b = solver[i];
    if (b.inv_mass == 0.0) continue;
    b.v += dv + (b.inv_mass * h) * load_force[i];
    if (load_torque[i].squaredNorm() > 0.0) {  // world inverse inertia at this pose
      const Mat3 r = orientations[i].toRotationMatrix();
      b.w += h * (r * inv_inertia_local[i] * r.transpose() * load_torque[i]);
    }
  }
  for (std::size_t i = static_cast<std::size_t>(first); i < static_cast<std::size_t>(last); ++i) {
    SolverBody& b = solver[i];
    if (b.inv_mass == 0.0 || !gyroscopic[i]) continue;
    const Quat& q = orientations[i];
    const Mat3& inertia = inertia_local[i];
    const Vec3 w = q.conjugate() * b.w;
    const Vec3 momentum = inertia * w;
    const Vec3 residual = h * w.cross(momentum);
    if (residual.squaredNorm() == 0.0) continue;
    const Mat3 jacobian = inertia + h * (skew(w) * inertia - skew(momentum));
    // Closed-form 3x3 inverse: the Jacobian is the inertia plus an h-small part, far from
    // singular, and this is 10x cheaper than a pivoting LU.
    b.w = q * (w - jacobian.inverse() * residual);
  }
}

void Bodies::updateInertia(int first, int last) {
  for (std::size_t i = static_cast<std::size_t>(first); i < static_cast<std::size_t>(last); ++i) {
    if (solver[i].inv_mass == 0.0) continue;  // zero already (load)
    const Mat3 r = orientations[i].toRotationMatrix();
    solver[i].inv_inertia = r * inv_inertia_local[i] * r.transpose();
  }
}

void Bodies::integratePositions(double h, int first, int last) {
  for (std::size_t i = static_cast<std::size_t>(first); i < static_cast<std::size_t>(last); ++i) {
    if (solver[i].inv_mass == 0.0) continue;
    positions[i] += solver[i].v * h;
    orientations[i] = rotateBy(orientations[i], solver[i].w * h);
  }
}

void Bodies::store(State& s, int first, int last) const {
  for (std::size_t i = static_cast<std::size_t>(first); i < static_cast<std::size_t>(last); ++i) {
    BodyState& bs = s.bodies[i];
    bs.position_m = positions[i];
    bs.orientation = orientations[i];
    bs.linear_velocity_mps = solver[i].v;
    bs.angular_velocity_radps = solver[i].w;
  }
}

}  // namespace sim::dynamics::detail
