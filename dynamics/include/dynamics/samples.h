// Reference mechanisms defined once and shared by tests, benchmarks and the app (SPEC §2.4 and
// the validation experiments of the dynamics issue).
#pragma once

#include <dynamics/model.h>
#include <dynamics/state.h>

#include <string>

namespace sim::dynamics::samples {

/// Largest distance between the two anchor points of any joint (m): how far the split impulses
/// left the joints apart.
double maxAnchorSeparation(const Model& model, const State& state);

/// Inertia tensor of a solid box (kg m^2) with full edge lengths `size` (m).
Mat3 boxInertia(double mass_kg, const Vec3& size_m);

/// WG-7152 gear motor driving one link about the vertical axis through its centre of mass
/// (SPEC §2.4): r = 50, Mp = 0.2 N m, w_xx = 49 rpm, I_L = 30.833 kg m^2, u = 1.
Model wg7152(double time_constant_s, double time_step_s = 0.01, double bearing_friction = 0.0);

/// The same motor on a horizontal link of length 1 m swinging about a horizontal hinge, so gravity
/// loads it: a nonlinear (non-analytic) case for convergence studies.
Model wg7152GravityLoaded(double time_constant_s, double time_step_s, double bearing_friction);

/// Chain of `links` boxes (0.1 x 0.02 x 0.02 m, 0.1 kg) with hinges about y, the first hinged to
/// the world at the origin, starting horizontal along +x; gravity -9.81 z (the benchmark chain).
Model chain(int links, double time_step_s = 1e-3, int velocity_iterations = 10,
            int position_iterations = 2);

/// A simple pendulum: point-like bob of mass 1 kg (tiny inertia) on a massless-looking rod of
/// length `length_m`, hinged about y at the origin, released from angle `angle0_rad` (from the
/// downward vertical).
Model pendulum(double length_m, double angle0_rad, double time_step_s);

/// Two-link arm: the first link hinged to the world about z and spun by a motor "shoulder"; the
/// second hinged to the first and driven by the WG-7152-like motor "elbow".
Model twoLinkArm(double time_step_s);

/// Gripper: a palm body (hinged to the world about z so it can be loaded) with two jaws on hinges
/// about z; motor "jaws" drives jaw "left", a repeater with k = -1 drives jaw "right".
Model gripper(double time_step_s);

// ---- Contact scenes (the collision issue) -------------------------------------------------

/// A static body "ground" carrying a plane through `point` with upward normal `up` (unit),
/// material `material`. Returns the body index.
int addGround(Model& model, const Vec3& up = Vec3::UnitZ(), const Vec3& point = Vec3::Zero(),
              int material = 0);

/// A dynamic box body of full edge lengths `size_m`, mass `mass_kg`, at `position`, with one box
/// shape of material `material`. Returns the body index.
int addBox(Model& model, std::string name, const Vec3& size_m, double mass_kg, const Vec3& position,
           const Quat& orientation = Quat::Identity(), int material = 0);

/// A dynamic solid sphere. Returns the body index.
int addSphere(Model& model, std::string name, double radius_m, double mass_kg, const Vec3& position,
              int material = 0);

/// Contact-scene solver settings: time step, 20 velocity (the solver default) and 2 position
/// iterations, no early exit, gravity -z.
Model contactScene(double time_step_s, int velocity_iterations = 20, int position_iterations = 2);

/// `count` cubes of edge `edge_m`, 1 kg, stacked on the ground plane with a gap of `gap_m`
/// between them (0: touching), friction `mu`.
Model boxStack(int count, double edge_m, double mu, double time_step_s, double gap_m = 0.0);

/// A pyramid of cubes: `base` cubes on the bottom row, one fewer on each row above
/// (base = 10: 55 cubes), in the x-z plane, with a small gap between neighbours in a row.
Model boxPyramid(int base, double edge_m, double mu, double time_step_s);

/// The benchmark pile: columns_x * columns_y columns of `height` cubes (0.2 m, 1 kg) in a grid,
/// dropped from a small height onto the ground, mu = 0.5.
Model boxPile(int columns_x, int columns_y, int height, double time_step_s);

/// The grasp scene: a 0.1 m, 0.5 kg box (mu = 0.8 against the jaws) on the ground between two
/// jaws (0.02 x 0.08 x 0.08 m boxes) that slide along x on a palm. Motor "jaws" drives the left
/// jaw's slider ("left", +x closes), a repeater with k = -1 mirrors it on "right"; the palm slides
/// along z on "lift", driven by motor "lift" and held at z = 0 by a lower limit. Stall forces:
/// 20 N shared by the two jaws, 100 N for the lift. Shape materials: 0 ground (mu 0.5), 1 grip
/// (0.8). Articulated contacts on.
Model graspScene(double time_step_s);

/// A tracked chassis (20 kg, 0.6 x 0.4 x 0.15 m) on the ground: two track shapes (0.6 x 0.08 x
/// 0.1 m boxes at y = +-0.22, material "track", mu 0.8 against the ground) whose bottom runs are
/// conveyor belts driven by motors "left" and "right" (each through a sprocket on a hinge about
/// y; belt speed = 0.001 m/rad times the rotor speed: 0.5 m/s at no load, 100 N at stall).
/// Positive voltage drives the chassis forward along +x.
Model trackedChassis(double time_step_s);

}  // namespace sim::dynamics::samples
