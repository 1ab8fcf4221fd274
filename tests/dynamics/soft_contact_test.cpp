// Soft contacts (MaterialDef::contact_stiffness_npm): each contact point is a spring and damper
// along the normal, solved implicitly (soft_row.h). Checked against closed forms: the static
// sinkage of a box, two soft materials in series, the damped oscillation of a box set down on its
// springs, and the load shares of a body on three feet (statically indeterminate when rigid:
// there the solver's order picks the shares; soft, the elastic foundation fixes them).
#include <dynamics/samples.h>
#include <dynamics/simulator.h>

#include <cmath>
#include <cstdio>
#include <numbers>
#include <vector>

#include <gtest/gtest.h>

#include "contact_test_util.h"
#include "fixture.h"

namespace sim::dynamics {
namespace {

using contact_testing::run;
constexpr double kG = 9.81;

// A soft material appended to the model; returns its index.
int addSoftMaterial(Model& m, double stiffness_npm, double damping_nspm) {
  MaterialDef soft;
  soft.name = "soft";
  soft.friction = 0.5;
  soft.contact_stiffness_npm = stiffness_npm;
  soft.contact_damping_nspm = damping_nspm;
  m.materials.push_back(soft);
  return static_cast<int>(m.materials.size()) - 1;
}

// The box's sinkage: how far its centre is below where it would rest on rigid ground (m).
double sinkage(const State& s, int box, double half_height) {
  return half_height - s.bodies[box].position_m.z();
}

// A 2 kg box on four soft corners sinks by m g / (4 k); the normal force at rest is exactly the
// spring's (the row's rest condition is k h C + lambda = 0 with no velocity), so the tolerance
// is the velocity solve's residual: 1e-9 m of 1.2e-4 m. Two soft materials: springs in series.
TEST(SoftContact, ABoxSinksByItsWeightOverItsCornersSprings) {
  for (const bool both_soft : {false, true}) {
    Model m = samples::contactScene(1.0 / 240.0, 50, 2);
    m.solver.velocity_tolerance = 0.0;
    const double k = 4.0e4, mass = 2.0;
    const int soft = addSoftMaterial(m, k, 2.0 * std::sqrt(k * mass / 4.0));
    samples::addGround(m, Vec3::UnitZ(), Vec3::Zero(), both_soft ? soft : 0);
    const int box = samples::addBox(m, "box", Vec3(0.3, 0.2, 0.1), mass, Vec3(0, 0, 0.05),
                                    Quat::Identity(), soft);
    Simulator sim(m);
    State s = sim.initialState();
    run(sim, s, 2.0);
    const double expected = mass * kG / 4.0 * (both_soft ? 2.0 / k : 1.0 / k);
    EXPECT_NEAR(sinkage(s, box, 0.05), expected, 1e-9) << (both_soft ? "both soft" : "one soft");
    double total = 0.0;
    for (const ContactReport& c : sim.contacts(s)) {
      EXPECT_NEAR(c.normal_force_N, mass * kG / 4.0, 1e-6);
      total += c.normal_force_N;
    }
    EXPECT_NEAR(total, mass * kG, 1e-6);
    std::printf("soft box (%s): sinkage %.6e m, closed form %.6e m\n",
                both_soft ? "both soft" : "one soft", sinkage(s, box, 0.05), expected);
  }
}

// Set down on its springs at rest, the box oscillates as z'' = -g - (K z + C z') / m with
// K = 4 k, C = 4 c (damping ratio 0.1, 100 rad/s): the closed form of a damped oscillator
// released from the unloaded spring. The implicit step damps it by about omega h / 2 more
// (0.125 % at h = 2.5e-5 s) and lags its phase by the same order: within 1 % of the static
// sinkage over the first 0.1 s (1.6 periods).
TEST(SoftContact, ABoxSetDownOscillatesAsAMassOnItsSprings) {
  const double h = 2.5e-5, mass = 1.0, omega = 100.0, zeta = 0.1;
  const double big_k = mass * omega * omega, big_c = 2.0 * zeta * omega * mass;
  Model m = samples::contactScene(h, 20, 2);
  m.solver.velocity_tolerance = 0.0;
  const int soft = addSoftMaterial(m, big_k / 4.0, big_c / 4.0);
  samples::addGround(m);
  const int box = samples::addBox(m, "box", Vec3(0.2, 0.2, 0.1), mass, Vec3(0, 0, 0.05),
                                  Quat::Identity(), soft);
  Simulator sim(m);
  State s = sim.initialState();
  const double rest = mass * kG / big_k;  // static sinkage (m)
  const double wd = omega * std::sqrt(1.0 - zeta * zeta);
  double worst = 0.0, deepest = 0.0;
  for (int n = 1; n <= 4000; ++n) {
    checkedStep(sim, s);
    const double t = n * h;
    const double closed =
        rest *
        (1.0 - std::exp(-zeta * omega * t) *
                   (std::cos(wd * t) + zeta / std::sqrt(1.0 - zeta * zeta) * std::sin(wd * t)));
    worst = std::max(worst, std::abs(sinkage(s, box, 0.05) - closed));
    deepest = std::max(deepest, sinkage(s, box, 0.05));
  }
  const double overshoot = std::exp(-zeta * std::numbers::pi / std::sqrt(1.0 - zeta * zeta));
  std::printf(
      "soft box set down: deepest %.4e m (closed form %.4e), largest error %.2e m "
      "(%.2f %% of the static sinkage)\n",
      deepest, rest * (1.0 + overshoot), worst, 100.0 * worst / rest);
  EXPECT_LT(worst, 0.01 * rest);
  EXPECT_NEAR(deepest, rest * (1.0 + overshoot), 0.01 * rest);
}

// A 10 kg body on three feet in a row (x = -0.4, 0, 0.4 m from the middle foot) with its centre
// of mass 0.1 m toward the front foot. Soft, each point pushes k times its sinkage, and the
// sinkage is a plane under a rigid body: N_p = k (d + theta x_p). Sum of loads = weight and no
// moment about the centre of mass fix d and theta; each foot carries its four points' sum.
// Tolerance 1e-4 of the weight: the tilt (1e-4 rad) makes the linearisation's error 1e-8, and
// the velocity solve's residual is about 1e-6 of it.
TEST(SoftContact, ThreeFeetShareTheLoadAsOnAnElasticFoundation) {
  Model m = samples::contactScene(1.0 / 240.0, 50, 2);
  m.solver.velocity_tolerance = 0.0;
  const double k = 1.0e5, mass = 10.0;
  const int soft = addSoftMaterial(m, k, 2.0 * std::sqrt(k * mass / 12.0));
  samples::addGround(m);
  BodyDef body;
  body.name = "bench";
  body.mass_kg = mass;
  body.inertia_kgm2 = Vec3(0.2, 0.8, 0.9).asDiagonal();
  body.position_m = Vec3(0, 0, 0.025);
  const double foot_x[3] = {-0.5, -0.1, 0.3};  // relative to the centre of mass
  for (const double x : foot_x) {
    ShapeDef foot;
    foot.type = ShapeType::Box;
    foot.half_extents_m = Vec3(0.05, 0.05, 0.025);
    foot.pose.position = Vec3(x, 0, 0);
    foot.material = soft;
    body.shapes.push_back(foot);
  }
  m.bodies.push_back(body);
  const int bench = static_cast<int>(m.bodies.size()) - 1;
  int first_foot = 0;
  for (int b = 0; b < bench; ++b) first_foot += static_cast<int>(m.bodies[b].shapes.size());
  // Closed form over the 12 points (each foot's at x +- 0.05).
  double s1 = 0.0, s2 = 0.0;
  for (const double x : foot_x)
    for (const double dx : {-0.05, -0.05, 0.05, 0.05}) {
      s1 += x + dx;
      s2 += (x + dx) * (x + dx);
    }
  const double weight = mass * kG;
  // k d 12 + k theta s1 = W;  k d s1 + k theta s2 = 0.
  const double det = 12.0 * s2 - s1 * s1;
  const double kd = weight * s2 / det, ktheta = -weight * s1 / det;
  double expected[3];
  for (int f = 0; f < 3; ++f) expected[f] = 4.0 * kd + 4.0 * ktheta * foot_x[f];

  for (const bool rigid : {true, false}) {
    Model mm = m;
    if (rigid) mm.materials[static_cast<std::size_t>(soft)].contact_stiffness_npm = 0.0;
    Simulator sim(mm);
    State s = sim.initialState();
    run(sim, s, 3.0);
    double load[3] = {0.0, 0.0, 0.0};
    for (const ContactReport& c : sim.contacts(s)) {
      const int shape = c.body_a == bench ? c.shape_a : c.shape_b;  // numbered over all bodies
      load[shape - first_foot] += c.normal_force_N;
    }
    std::printf("three feet, %s: %.4f %.4f %.4f N (elastic foundation %.4f %.4f %.4f N)\n",
                rigid ? "rigid" : "soft", load[0], load[1], load[2], expected[0], expected[1],
                expected[2]);
    EXPECT_NEAR(load[0] + load[1] + load[2], weight, 1e-6 * weight);
    if (!rigid) {
      for (int f = 0; f < 3; ++f) EXPECT_NEAR(load[f], expected[f], 1e-4 * weight) << "foot " << f;
    }
  }
}

}  // namespace
}  // namespace sim::dynamics
