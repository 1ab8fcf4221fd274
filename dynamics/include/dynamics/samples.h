// Reference mechanisms defined once and shared by tests, benchmarks and the app (SPEC §2.4 and
// the validation experiments of the dynamics issue).
#pragma once

#include <dynamics/model.h>
#include <dynamics/state.h>

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

}  // namespace sim::dynamics::samples
