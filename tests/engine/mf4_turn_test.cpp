// The MF-4's spot turn (issue 29): its tracks' belt contacts against a converged solve and against
// a closed-form skid-steer balance.
//
// Each track stands on 12 belt points (3 segments, 4 corners each), 24 on a rigid robot: rigid,
// how the load shares among them is left to the solver's order, the turning resistance depends on
// that share, and no number of sweeps settles it (rigid belts: the spot turn's heading is 133° at
// the 20-sweep cap, 134° at 20 000 sweeps with 94 steps still not converged; bench/README.md).
// The tracks' rubber is soft (scenes/mf4.yaml, material `track`): the load spreads as on an
// elastic foundation, every step's solve converges (57 sweeps a step on average), and the cap
// costs less than the time step does. A belt point's friction is solved in its rows' own metric
// so that it opposes the slip (contacts.cpp, solveFrictionDisc).
#include <engine/scenario.h>
#include <engine/scene.h>
#include <engine/session.h>

#include <dynamics/simulator.h>

#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>
#include <vector>

namespace sim::engine {
namespace {

using dynamics::Vec3;
constexpr double kPi = std::numbers::pi;

const std::string kSource = SIMTRAINER_SOURCE_DIR;
const std::string kScenario = kSource + "/scenes/scenarios/mf4_drive_turn.scenario.yaml";

double yaw(const dynamics::Quat& q) {
  return std::atan2(2.0 * (q.w() * q.z() + q.x() * q.y()),
                    1.0 - 2.0 * (q.y() * q.y() + q.z() * q.z()));
}

struct Pose {
  Vec3 position;
  double yaw_rad;
};

/// The chassis after every step of the turn scenario's first 3 s (full steer 0.5-1.3 s), with
/// `overrides` on the scene.
std::vector<Pose> chassisPath(const std::vector<std::string>& overrides) {
  Scenario scenario = loadScenario(kScenario);
  std::vector<Override> all = scenario.scene.overrides;
  for (const std::string& o : overrides) all.push_back(parseOverride(o));
  scenario.scene = loadScene(scenario.scene.file, all);
  scenario.duration_s = 3.0;
  const int chassis = scenario.scene.model.findBody("chassis");
  std::vector<Pose> path;
  PlayOptions options;
  options.after_step = [&](const Session& session, const dynamics::StepReport&) {
    const auto& b = session.dynamics().bodies[static_cast<std::size_t>(chassis)];
    path.push_back({b.position_m, yaw(b.orientation)});
  };
  playScenario(scenario, options);
  return path;
}

// At the scene's solver settings (1e-4 N s or 1e-4 m/s; a 20-sweep cap did as well) the chassis
// stays within 3 mm and 0.5° of the run solved until no velocity changes by 1e-7 m/s over two
// sweeps. 3 mm: below the time step's own error (the
// converged run at 1/480 s is 4.1 mm away over the scenario); 0.5°: the converged runs' headings
// at 1/240, 1/480 and 1/960 s agree to 0.1°. Rigid tracks fail it.
TEST(Mf4SpotTurn, TheScenesSolveStaysWithinTheTimeStepsErrorOfAConvergedOne) {
  const std::vector<Pose> capped = chassisPath({});  // the scene's settings
  const std::vector<Pose> converged =
      chassisPath({"solver.velocity_tolerance=0", "solver.velocity_change_tolerance=1e-7",
                   "solver.velocity_iterations=20000"});
  ASSERT_EQ(capped.size(), converged.size());
  ASSERT_EQ(capped.size(), 3u * 240u);
  double distance = 0.0, heading = 0.0;
  for (std::size_t i = 0; i < capped.size(); ++i) {
    distance = std::max(distance, (capped[i].position - converged[i].position).norm());
    heading = std::max(heading, std::abs(capped[i].yaw_rad - converged[i].yaw_rad));
  }
  const double turned_deg = converged.back().yaw_rad * 180.0 / kPi;
  std::printf(
      "spot turn: %.2f° converged, %.2f° at the scene's settings; chassis within %.3f mm, %.3f°\n",
      turned_deg, capped.back().yaw_rad * 180.0 / kPi, distance * 1e3, heading * 180.0 / kPi);
  EXPECT_LT(distance, 3e-3) << "the chassis's largest distance from the converged run (m)";
  EXPECT_LT(heading, 0.5 * kPi / 180.0) << "largest heading difference (rad)";
  EXPECT_GT(turned_deg, 45.0);  // it did turn
}

// The steady spot turn against the skid-steer balance of its own belt speeds. With the belts'
// surface speeds u (rotor speed times the belt's m/rad, taken from the simulation) the robot's
// planar motion (v of its centre of mass, yaw rate w) is the one at which the Coulomb friction of
// the 24 points, each sliding at v + w z x r + u d, pulls the centre of mass round its circle
// (M w z x v) and turns it with no net moment (steady). Each point's load is that of an elastic
// foundation under a rigid body (a plane of sinkage: weight carried, no moment about the centre
// of mass, the friction forces at ground level included). Solved by Newton from a turn about
// the robot's centre; nothing of the solver is used but the belt speeds and the points' places.
// Tolerance 3 % of the yaw rate: the balance leaves out the rocking of the robot on its springs
// and the inertia of the yaw rate's last rise (0.2 % over the last 0.4 s).
TEST(Mf4SpotTurn, YawRateMatchesTheSkidSteerBalanceOfItsBelts) {
  const Scene scene = loadScene(kSource + "/scenes/mf4.yaml");
  const dynamics::Model& model = scene.model;
  dynamics::Simulator sim(model);
  dynamics::State s = sim.initialState();
  const int left = model.findMotor("drive_left"), right = model.findMotor("drive_right");
  const int chassis = model.findBody("chassis");
  const int track[2] = {model.findBody("track_left"), model.findBody("track_right")};
  for (int n = 0; n < 120; ++n) sim.step(s);  // settle on the tracks
  s.motors[static_cast<std::size_t>(left)].voltage = -1.0;
  s.motors[static_cast<std::size_t>(right)].voltage = 1.0;
  double yaw_rate_before = 0.0;
  // 1.6 s of full steer: steady from about 1 s on; the arm, stretched 1.6 m, sweeps into the
  // shelf after about 300° (2.9 s).
  for (int n = 0; n < 384; ++n) {
    ASSERT_EQ(sim.step(s).fault.kind, dynamics::Fault::Kind::None);
    if (n == 287) yaw_rate_before = s.bodies[chassis].angular_velocity_radps.z();
  }
  // The robot: every body but the container and the site.
  double mass = 0.0;
  Vec3 com = Vec3::Zero(), momentum = Vec3::Zero();
  for (std::size_t b = 0; b < model.bodies.size(); ++b) {
    const dynamics::BodyDef& def = model.bodies[b];
    if (def.is_static || def.name == "container") continue;
    mass += def.mass_kg;
    com += def.mass_kg * s.bodies[b].position_m;
    momentum += def.mass_kg * s.bodies[b].linear_velocity_mps;
  }
  com /= mass;
  const Vec3 v_sim = momentum / mass;
  const double w_sim = s.bodies[chassis].angular_velocity_radps.z();

  // The belt points on the floor: place and belt surface velocity relative to the track.
  struct Point {
    Vec3 r;     // from the centre of mass (m)
    Vec3 belt;  // belt surface velocity relative to the track body (m/s)
  };
  std::vector<Point> points;
  double friction = 0.0, carried = 0.0;
  std::vector<int> shape_base(model.bodies.size(), 0);  // contact reports number shapes over all
  for (std::size_t b = 1; b < model.bodies.size(); ++b)
    shape_base[b] = shape_base[b - 1] + static_cast<int>(model.bodies[b - 1].shapes.size());
  for (const dynamics::ContactReport& c : sim.contacts(s)) {
    const int side = c.body_a == track[0] || c.body_b == track[0]   ? 0
                     : c.body_a == track[1] || c.body_b == track[1] ? 1
                                                                    : -1;
    if (side < 0 || c.normal_force_N <= 0.0) continue;
    const int body = track[side];
    const int shape =
        (c.body_a == body ? c.shape_a : c.shape_b) - shape_base[static_cast<std::size_t>(body)];
    const dynamics::ShapeDef& def =
        model.bodies[static_cast<std::size_t>(body)].shapes[static_cast<std::size_t>(shape)];
    ASSERT_GE(def.belt_motor, 0);
    const Vec3 dir = s.bodies[static_cast<std::size_t>(body)].orientation *
                     (def.pose.rotation * def.belt_direction);
    const double u =
        def.belt_m_per_rad * s.motors[static_cast<std::size_t>(def.belt_motor)].speed_radps;
    points.push_back({c.point_m - com, u * dir});
    const auto& ma = model.materials[static_cast<std::size_t>(def.material)];
    friction = std::sqrt(ma.friction * model.materials[0].friction);  // on the floor (default)
    carried += c.normal_force_N;
  }
  ASSERT_EQ(points.size(), 24u);
  const double weight = mass * 9.81;
  EXPECT_NEAR(carried, weight, 0.05 * weight);  // the floor carries the robot

  // Friction forces for planar motion x = (vx, vy, w), loads N.
  auto forces = [&](const Eigen::Vector3d& x, const std::vector<double>& load) {
    std::vector<Vec3> f(points.size());
    for (std::size_t i = 0; i < points.size(); ++i) {
      const Vec3& r = points[i].r;
      Vec3 slip = Vec3(x[0], x[1], 0.0) + x[2] * Vec3(-r.y(), r.x(), 0.0) + points[i].belt;
      slip.z() = 0.0;
      const double speed = std::sqrt(slip.squaredNorm() + 1e-18);
      f[i] = -friction * load[i] / speed * slip;
    }
    return f;
  };
  // Loads of the elastic foundation: N_i = d + a r_i.x + b r_i.y with sum N = W and no moment
  // about the centre of mass from the loads and the ground-level friction forces f.
  auto loads = [&](const std::vector<Vec3>& f) {
    Eigen::Matrix3d a = Eigen::Matrix3d::Zero();
    Eigen::Vector3d rhs(weight, 0.0, 0.0);
    for (std::size_t i = 0; i < points.size(); ++i) {
      const Vec3& r = points[i].r;
      const Eigen::Vector3d basis(1.0, r.x(), r.y());
      a.row(0) += basis.transpose();
      a.row(1) += r.x() * basis.transpose();  // moment about y: sum N x - z f_x = 0
      a.row(2) += r.y() * basis.transpose();  // about x: sum N y - z f_y = 0
      rhs[1] += r.z() * f[i].x();
      rhs[2] += r.z() * f[i].y();
    }
    const Eigen::Vector3d c = a.lu().solve(rhs);
    std::vector<double> n(points.size());
    for (std::size_t i = 0; i < points.size(); ++i)
      n[i] = c[0] + c[1] * points[i].r.x() + c[2] * points[i].r.y();
    return n;
  };
  // Residual: net force minus M times the centripetal acceleration w z x v; net yaw moment.
  auto residual = [&](const Eigen::Vector3d& x, const std::vector<double>& load) {
    const std::vector<Vec3> f = forces(x, load);
    Eigen::Vector3d r = Eigen::Vector3d::Zero();
    for (std::size_t i = 0; i < points.size(); ++i) {
      r[0] += f[i].x();
      r[1] += f[i].y();
      r[2] += points[i].r.x() * f[i].y() - points[i].r.y() * f[i].x();
    }
    r[0] -= mass * (-x[2] * x[1]);
    r[1] -= mass * (x[2] * x[0]);
    return r;
  };
  Eigen::Vector3d x(0.0, 0.0, 1.0);  // a turn about the centre of mass
  std::vector<double> load(points.size(), weight / 24.0);
  for (int outer = 0; outer < 20; ++outer) {
    for (int it = 0; it < 50; ++it) {
      const Eigen::Vector3d r = residual(x, load);
      Eigen::Matrix3d jac;
      for (int k = 0; k < 3; ++k) {
        Eigen::Vector3d dx = x;
        dx[k] += 1e-7;
        jac.col(k) = (residual(dx, load) - r) / 1e-7;
      }
      x -= jac.lu().solve(r);
    }
    load = loads(forces(x, load));
  }
  ASSERT_LT(residual(x, load).norm(), 1e-6 * weight);
  // Friction opposes each point's slip (maximum dissipation): the slip from the track body's
  // motion and its belt after the step, the friction as the contact reports it. Measured 1.75°
  // at most, the same with the solve converged to 1e-9 m/s (so not the solve's tolerance; its
  // cause, in how the slip is taken here after the step, is not examined); the rows' own masses
  // (projectOntoDisc's radial projection) made it 34°. Bound: 3°.
  double worst_deg = 0.0;
  std::size_t i = 0;
  for (const dynamics::ContactReport& c : sim.contacts(s)) {
    const int side = c.body_a == track[0] || c.body_b == track[0]   ? 0
                     : c.body_a == track[1] || c.body_b == track[1] ? 1
                                                                    : -1;
    if (side < 0 || c.normal_force_N <= 0.0) continue;
    const auto& body = s.bodies[static_cast<std::size_t>(track[side])];
    Vec3 slip = body.linear_velocity_mps +
                body.angular_velocity_radps.cross(c.point_m - body.position_m) + points[i++].belt;
    slip.z() = 0.0;
    // On the track (side a: the report's friction acts on body b).
    Vec3 f = c.body_a == track[side] ? Vec3(-c.friction_force_N) : c.friction_force_N;
    f.z() = 0.0;
    if (slip.norm() < 0.05) continue;  // direction not defined near the turn's pivots
    worst_deg = std::max(
        worst_deg,
        std::acos(std::clamp(-f.dot(slip) / (f.norm() * slip.norm()), -1.0, 1.0)) * 180.0 / kPi);
  }
  std::printf("friction against the slip: at most %.2f° off\n", worst_deg);
  EXPECT_LT(worst_deg, 3.0);
  std::printf(
      "skid-steer balance: yaw rate %.4f rad/s (simulated %.4f; %.4f 0.4 s before), "
      "centre of mass at %.4f m/s (simulated %.4f)\n",
      x[2], w_sim, yaw_rate_before, std::hypot(x[0], x[1]), v_sim.head<2>().norm());
  EXPECT_GT(w_sim, 1.0);
  EXPECT_NEAR(w_sim, x[2], 0.03 * x[2]);
  EXPECT_NEAR(w_sim, yaw_rate_before, 0.01 * w_sim);  // steady
}

}  // namespace
}  // namespace sim::engine
