// Rigid-body behaviour with cylinders, convex hulls and triangle meshes (the contact rows of
// dynamics/src/contacts.cpp fed by collision_convex.cpp): resting, rolling against the analytic
// acceleration, meshes as ground, and bit-exact save/restore.
#include <dynamics/samples.h>
#include <dynamics/shapes.h>
#include <dynamics/simulator.h>

#include <cmath>
#include <cstdio>
#include <numbers>
#include <random>

#include <gtest/gtest.h>

#include "contact_test_util.h"
#include "fixture.h"
#include "shape_test_util.h"

namespace sim::dynamics {
namespace {

using contact_testing::cylinder;

using contact_testing::maxPenetration;
using contact_testing::run;

constexpr double kPi = std::numbers::pi;
constexpr double kG = 9.81;

/// A dynamic body with one shape; mass and inertia from the shape at `density` (kg/m^3).
int addBody(Model& m, const std::string& name, const ShapeDef& shape, double density,
            const Vec3& position, const Quat& orientation = Quat::Identity()) {
  const auto props = computeMassProperties(shape, density);
  EXPECT_TRUE(props);
  BodyDef b;
  b.name = name;
  b.mass_kg = props->mass_kg;
  b.inertia_kgm2 = props->inertia_kgm2;
  b.position_m = position;
  b.orientation = orientation;
  ShapeDef centred = shape;
  centred.pose.position -= props->center_m;  // the body frame sits at the centre of mass
  b.shapes.push_back(centred);
  m.bodies.push_back(b);
  return static_cast<int>(m.bodies.size()) - 1;
}

ShapeDef hullOf(const std::vector<Vec3>& pts) {
  ShapeDef s;
  s.type = ShapeType::ConvexHull;
  s.hull = makeConvexHull(pts);
  EXPECT_TRUE(s.hull);
  return s;
}

std::vector<Vec3> cubeCorners(double half) {
  std::vector<Vec3> c;
  for (int i = 0; i < 8; ++i)
    c.emplace_back(i & 1 ? half : -half, i & 2 ? half : -half, i & 4 ? half : -half);
  return c;
}

/// A static body carrying an n x n grid of `cell`-sized squares (two triangles each) at z = 0.
int addMeshGround(Model& m, int n, double cell) {
  BodyDef g;
  g.name = "terrain";
  g.is_static = true;
  g.shapes.push_back(shape_testing::meshShape(shape_testing::grid(n, cell)));
  m.bodies.push_back(g);
  return static_cast<int>(m.bodies.size()) - 1;
}

// An upright cylinder (r 0.1 m, height 0.3 m, 9.4 kg) on the ground for 5 s: no drift beyond
// 1 mm, at rest, penetration within the slop (plus 0.1 mm while settling, as for the box).
TEST(ShapeContacts, CylinderStandsUprightOnPlane) {
  Model m = samples::contactScene(1.0 / 240.0, 20, 2);
  samples::addGround(m);
  const int c = addBody(m, "cyl", cylinder(0.1, 0.15), 1000.0, Vec3(0.3, -0.2, 0.15));
  Simulator sim(m);
  State s = sim.initialState();
  const Vec3 start = s.bodies[c].position_m;
  const double worst = run(sim, s, 5.0);
  std::printf("cylinder upright: drift %.3g m, speed %.3g m/s, worst penetration %.3g m\n",
              (s.bodies[c].position_m - start).norm(), s.bodies[c].linear_velocity_mps.norm(),
              worst);
  EXPECT_LT((s.bodies[c].position_m - start).norm(), 1e-3);
  EXPECT_LT(s.bodies[c].linear_velocity_mps.norm(), 1e-4);
  EXPECT_LT(s.bodies[c].angular_velocity_radps.norm(), 1e-3);
  EXPECT_LE(worst, m.contact.slop_m + 1e-4);
  EXPECT_LE(maxPenetration(s), m.contact.slop_m + 1e-5);
  EXPECT_NEAR((s.bodies[c].orientation * Vec3::UnitZ()).z(), 1.0, 1e-6);  // still upright
}

// A solid cylinder on its side rolls without slipping down a 10 degree incline (mu = 1 holds it:
// the needed friction ratio is tan(10)/3 = 0.06): a = (2/3) g sin(theta), measured from the
// speed between 0.5 s and 1.5 s, within 2 %.
TEST(ShapeContacts, CylinderRollsDownInclineAtTwoThirdsGSinTheta) {
  const double th = 10.0 * kPi / 180.0;
  Model m = samples::contactScene(1.0 / 240.0, 20, 2);
  m.materials[0].friction = 1.0;
  const Quat tilt(Eigen::AngleAxisd(th, Vec3::UnitY()));
  const Vec3 up = tilt * Vec3::UnitZ();
  samples::addGround(m, up);
  // Axis along world y (across the slope): turn local z onto y, then tilt with the incline.
  const Quat lying = tilt * Quat(Eigen::AngleAxisd(kPi / 2, Vec3::UnitX()));
  const int c = addBody(m, "cyl", cylinder(0.1, 0.15), 1000.0, 0.1 * up, lying);
  Simulator sim(m);
  State s = sim.initialState();
  const Vec3 downhill = tilt * Vec3::UnitX();
  run(sim, s, 0.5);
  const double v0 = s.bodies[c].linear_velocity_mps.dot(downhill);
  run(sim, s, 1.0);
  const double v1 = s.bodies[c].linear_velocity_mps.dot(downhill);
  const double expected = 2.0 / 3.0 * kG * std::sin(th);
  std::printf("cylinder rolling: a = %.5f m/s^2, expected %.5f (%.3f %%)\n", v1 - v0, expected,
              100.0 * (v1 - v0 - expected) / expected);
  EXPECT_NEAR(v1 - v0, expected, 0.02 * expected);
  // Rolling, not sliding: the contact point's speed is small against the centre's.
  const Vec3 w = s.bodies[c].angular_velocity_radps;
  const Vec3 contact_speed = s.bodies[c].linear_velocity_mps + w.cross(-0.1 * up);
  EXPECT_LT(contact_speed.norm(), 0.02 * v1);
  // It stays on the incline, not in it or above it.
  EXPECT_NEAR(s.bodies[c].position_m.dot(up), 0.1, 2e-4);
}

// A box-shaped hull on a two-triangle mesh ground rests as a box on a plane: at rest, no drift,
// penetration within the slop, the contacts carrying m g.
TEST(ShapeContacts, HullBoxRestsOnTwoTriangleMeshLikeBoxOnPlane) {
  Model m = samples::contactScene(1.0 / 240.0, 20, 2);
  BodyDef g;
  g.name = "ground";
  g.is_static = true;
  ShapeDef ground;
  ground.type = ShapeType::TriangleMesh;
  ground.mesh = makeTriangleMesh({Vec3(-2, -2, 0), Vec3(2, -2, 0), Vec3(2, 2, 0), Vec3(-2, 2, 0)},
                                 {{0, 1, 2}, {0, 2, 3}});
  g.shapes.push_back(ground);
  m.bodies.push_back(g);
  // Straddling the diagonal (two manifolds), turned about z.
  const int b = addBody(m, "box", hullOf(cubeCorners(0.1)), 125.0, Vec3(0.02, -0.01, 0.1),
                        Quat(Eigen::AngleAxisd(0.3, Vec3::UnitZ())));
  Simulator sim(m);
  State s = sim.initialState();
  const Vec3 start = s.bodies[b].position_m;
  const double worst = run(sim, s, 5.0);
  std::printf(
      "hull box on mesh: drift %.3g m, speed %.3g m/s, worst penetration %.3g m, %zu points\n",
      (s.bodies[b].position_m - start).norm(), s.bodies[b].linear_velocity_mps.norm(), worst,
      s.contacts.size());
  EXPECT_LE(worst, m.contact.slop_m + 1e-4);
  EXPECT_LE(maxPenetration(s), m.contact.slop_m + 1e-6);
  EXPECT_LT(s.bodies[b].linear_velocity_mps.norm(), 1e-5);
  EXPECT_LT(s.bodies[b].angular_velocity_radps.norm(), 1e-4);
  EXPECT_LT((s.bodies[b].position_m - start).head<2>().norm(), 1e-4);
  double total = 0.0;
  for (const ContactReport& c : sim.contacts(s)) total += c.normal_force_N;
  EXPECT_NEAR(total, m.bodies[b].mass_kg * kG, 1e-3 * m.bodies[b].mass_kg * kG);
}

// A ball rolls over a mesh of 5 cm squares (3200 triangles) at 1 m/s: the joins are flat,
// internal edges, so the ball must not hop: vertical speed below 1 cm/s throughout.
TEST(ShapeContacts, SphereRollsAcrossFineMeshWithoutBumps) {
  Model m = samples::contactScene(1.0 / 240.0, 20, 2);
  m.contact.sleep_enabled = false;
  addMeshGround(m, 40, 0.05);
  const int ball = samples::addSphere(m, "ball", 0.1, 1.0,
                                      Vec3(-0.8, -0.3, 0.099));  // 1 mm deep: many triangles touch
  m.bodies[ball].linear_velocity_mps = Vec3(1.0, 0.37, 0.0);
  // Rolling: the contact point at rest, v + w x (-r z) = 0, so w = z x v / r.
  m.bodies[ball].angular_velocity_radps = Vec3::UnitZ().cross(Vec3(1.0, 0.37, 0.0)) / 0.1;
  Simulator sim(m);
  State s = sim.initialState();
  double worst_vz = 0.0, worst_pen = 0.0;
  for (int i = 0; i < 360; ++i) {  // 1.5 s: about 1.6 m across the grid
    const StepReport r = sim.step(s);
    ASSERT_EQ(r.fault.kind, Fault::Kind::None) << r.fault.describe();
    worst_vz = std::max(worst_vz, std::abs(s.bodies[ball].linear_velocity_mps.z()));
    worst_pen = std::max(worst_pen, maxPenetration(s));
  }
  std::printf("ball on fine mesh: max |vz| %.3g m/s, max penetration %.3g m, x %.3f\n", worst_vz,
              worst_pen, s.bodies[ball].position_m.x());
  EXPECT_LT(worst_vz, 0.01);
  EXPECT_GT(s.bodies[ball].position_m.x(), 0.6);  // it did roll across
  EXPECT_NEAR(s.bodies[ball].position_m.z(), 0.1, 1e-3);
}

// A random hull dropped from 0.4 m onto a mesh comes to rest on it (never below it).
TEST(ShapeContacts, HullDroppedOnMeshStaysOnIt) {
  Model m = samples::contactScene(1.0 / 240.0, 20, 2);
  addMeshGround(m, 8, 0.25);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<Vec3> pts;
  while (pts.size() < 24) {
    const Vec3 p(u(rng), u(rng), u(rng));
    if (p.norm() <= 1.0) pts.push_back(Vec3(0.15, 0.1, 0.08).cwiseProduct(p));
  }
  const ShapeDef shape = hullOf(pts);
  const int h = addBody(m, "rock", shape, 2000.0, Vec3(0.1, 0.2, 0.4),
                        Quat(Eigen::AngleAxisd(0.8, Vec3(1, 2, 0.5).normalized())));
  m.bodies[h].angular_velocity_radps = Vec3(2.0, -1.0, 0.5);
  Simulator sim(m);
  State s = sim.initialState();
  const double worst = run(sim, s, 4.0);
  // Lowest vertex of the hull now.
  double lowest = 1e9;
  const auto& body = s.bodies[h];
  for (const Vec3& v : m.bodies[h].shapes[0].hull->vertices)
    lowest = std::min(
        lowest,
        (body.position_m + body.orientation * (v + m.bodies[h].shapes[0].pose.position)).z());
  std::printf("hull on mesh: lowest vertex %.3g m, worst penetration %.3g m, speed %.3g m/s\n",
              lowest, worst, body.linear_velocity_mps.norm());
  EXPECT_GT(lowest, -m.contact.slop_m - 1e-4);
  EXPECT_LT(lowest, 0.01);  // resting on it, not hovering
  EXPECT_LT(body.linear_velocity_mps.norm(), 1e-3);
  EXPECT_LE(worst, 0.02);  // the impact at ~2.8 m/s may dig in briefly, never through
}

// Save mid-run with every new shape in contact (cylinders on a plane and on a hull, a hull on a
// mesh, a capsule and a ball on the mesh), restore into a fresh simulator: bit-identical.
TEST(ShapeContacts, SaveRestoreWithNewShapesIsBitExact) {
  Model m = samples::contactScene(1.0 / 240.0, 20, 2);
  samples::addGround(m, Vec3::UnitZ(), Vec3(0, 0, -0.01));
  addMeshGround(m, 6, 0.3);
  addBody(m, "cyl", cylinder(0.08, 0.1), 800.0, Vec3(0.5, 0.5, 0.3),
          Quat(Eigen::AngleAxisd(0.3, Vec3::UnitX())));
  addBody(m, "box", hullOf(cubeCorners(0.1)), 500.0, Vec3(-0.4, 0.0, 0.15));
  addBody(m, "cyl2", cylinder(0.05, 0.05), 800.0, Vec3(-0.4, 0.0, 0.4));
  ShapeDef cap;
  cap.type = ShapeType::Capsule;
  cap.radius_m = 0.04;
  cap.half_length_m = 0.1;
  addBody(m, "cap", cap, 900.0, Vec3(0.0, -0.5, 0.2), Quat(Eigen::AngleAxisd(1.2, Vec3::UnitY())));
  samples::addSphere(m, "ball", 0.07, 1.0, Vec3(0.3, -0.3, 0.3));
  Simulator sim(m);
  State s = sim.initialState();
  checkedSteps(sim, s, 150);
  ASSERT_GT(s.contacts.size(), 6u);
  const State restored_image = State::deserialize(s.serialize());
  State restored = restored_image;
  Simulator fresh(m);
  for (int i = 0; i < 150; ++i) {
    checkedStep(sim, s);
    checkedStep(fresh, restored);
    ASSERT_EQ(s.hash(), restored.hash()) << "step " << i;
  }
  EXPECT_TRUE(s == restored);
}

}  // namespace
}  // namespace sim::dynamics
