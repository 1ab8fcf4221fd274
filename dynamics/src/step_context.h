// Internal header, not API: what every stage of a step works on.
//
// Simulator::step (simulator.cpp) builds one StepContext per step, as Box2D's b2StepContext: the
// step's constants (the substep h, its inverse, which substep runs), the model, the state being
// advanced (it keeps every impulse between substeps: warm starts, reactions), and the solver's
// arrays, which the simulator owns and sizes once so that a step allocates nothing. Every stage
// and every constraint kind's verb takes it.
#pragma once

#include <dynamics/model.h>
#include <dynamics/state.h>

#include <vector>

#include "rows.h"

namespace sim::dynamics::detail {

/// The bodies as the solver advances them: velocities and masses (SolverBody) and poses, loaded
/// from the state at the start of a step and stored back at its end, with what the model fixes.
/// Index `world` (the last) is the static world, the other side of joints to the ground.
struct Bodies {
  int world = 0;
  std::vector<SolverBody> solver;  ///< A sleeping body has inv_mass 0 (frozen) while it sleeps.
  std::vector<Vec3> positions;     ///< Centre of mass (world).
  std::vector<Quat> orientations;
  // From the model.
  std::vector<double> inv_mass;     ///< 0 for static bodies and the world.
  std::vector<Mat3> inertia_local;  ///< About the centre of mass, body axes.
  std::vector<Mat3> inv_inertia_local;
  std::vector<char> gyroscopic;               ///< 1 when ω × Iω can be nonzero (anisotropic I).
  std::vector<Vec3> load_force, load_torque;  ///< Simulator::setBodyLoad (world axes).

  SolverBody& operator[](int i) { return solver[static_cast<std::size_t>(i)]; }
  const SolverBody& operator[](int i) const { return solver[static_cast<std::size_t>(i)]; }
  bool isStatic(int i) const { return i == world || inv_mass[static_cast<std::size_t>(i)] == 0.0; }

  void compile(const Model& model);
  // Each of these works on the bodies [first, last) (forBodies: each thread its own range).
  /// Poses and velocities from the state; a sleeping body is frozen (static) until it wakes.
  void load(const State& s, int first, int last);
  /// Gravity, the bodies' loads and the gyroscopic torque over one substep.
  void integrateForces(const Vec3& gravity, double h, int first, int last);
  /// World inverse inertias at the substep's poses (a frozen body's is zero from load on).
  void updateInertia(int first, int last);
  /// Semi-implicit Euler: positions from the new velocities.
  void integratePositions(double h, int first, int last);
  /// Poses and velocities back to the state.
  void store(State& s, int first, int last) const;
  /// A position pass's move of `body` by dx and the small rotation dtheta (world).
  void shift(int body, const Vec3& dx, const Vec3& dtheta) {
    const auto i = static_cast<std::size_t>(body);
    positions[i] += dx;
    orientations[i] = rotateBy(orientations[i], dtheta);
  }
};

/// The motors' rotors: one freedom each (SPEC §2.1), advanced with the bodies.
struct Rotors {
  std::vector<double> angle, speed;  ///< rad, rad/s
  std::vector<double> inv_inertia;   ///< 1 / I_m, from the model
};

struct Joints;
struct Motors;
struct MotorBlocks;
class ContactSolver;
class WorkerPool;

/// The velocities of the velocity solve's last two sweeps (SolverSettings::
/// velocity_change_tolerance): bodies (v, w) then rotors over their gear ratios.
struct SweepVelocities {
  std::vector<double> sweep[2];  ///< [k % 2]: after sweep k
  std::vector<double> current;   ///< Scratch for the sweep just done.
};

struct StepContext {
  const Model& model;
  State& state;
  double h = 0.0;      ///< The substep (s): time_step_s / substeps.
  double inv_h = 0.0;  ///< 1 / h.
  int substep = 0;     ///< Which substep of the step runs, from 0.
  Bodies& bodies;
  Rotors& rotors;
  Joints& joints;
  Motors& motors;
  MotorBlocks& blocks;
  ContactSolver& contacts;
  SweepVelocities& sweep_velocities;
  WorkerPool& workers;
};

}  // namespace sim::dynamics::detail
