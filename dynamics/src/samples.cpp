#include <dynamics/samples.h>

#include <algorithm>
#include <numbers>

#include "joint_geometry.h"

namespace sim::dynamics::samples {

namespace {

// Frame whose x-axis is `axis` (world), placed at `anchor` relative to a body at x, q.
Frame frameFor(const Vec3& anchor_world, const Vec3& axis_world, const Vec3& body_position,
               const Quat& body_orientation) {
  Frame f;
  f.position = body_orientation.conjugate() * (anchor_world - body_position);
  const Quat world_axis = Quat::FromTwoVectors(Vec3::UnitX(), axis_world.normalized());
  f.rotation = body_orientation.conjugate() * world_axis;
  return f;
}

// Hinge between a (or the world) and b about `axis` through `anchor`, frames coinciding now.
JointDef hinge(const Model& m, std::string name, int a, int b, const Vec3& anchor,
               const Vec3& axis) {
  JointDef j;
  j.name = std::move(name);
  j.type = JointType::Hinge;
  j.body_a = a;
  j.body_b = b;
  const Vec3 xa = a == kWorld ? Vec3::Zero() : m.bodies[a].position_m;
  const Quat qa = a == kWorld ? Quat::Identity() : m.bodies[a].orientation;
  j.frame_a = frameFor(anchor, axis, xa, qa);
  j.frame_b = frameFor(anchor, axis, m.bodies[b].position_m, m.bodies[b].orientation);
  return j;
}

MotorDef wgMotor(double t_m, int joint, double b) {
  MotorDef mo;
  mo.name = "drive";
  mo.joint = joint;
  mo.stall_torque_Nm = 0.2;
  mo.no_load_speed_radps = 49.0 * 2.0 * std::numbers::pi / 60.0;
  mo.time_constant_s = t_m;
  mo.gear_ratio = 50.0;
  mo.bearing_friction = b;
  mo.initial_voltage = 1.0;
  return mo;
}

}  // namespace

double maxAnchorSeparation(const Model& m, const State& s) {
  double worst = 0.0;
  const BodyState world;
  for (const JointDef& j : m.joints) {
    const BodyState& a = j.body_a == kWorld ? world : s.bodies[j.body_a];
    const BodyState& b = s.bodies[j.body_b];
    const auto f = detail::computeFrames(a.position_m, a.orientation, j.frame_a, b.position_m,
                                         b.orientation, j.frame_b);
    worst = std::max(worst, (f.anchor_b - f.anchor_a).norm());
  }
  return worst;
}

Mat3 boxInertia(double mass, const Vec3& s) {
  const double k = mass / 12.0;
  return Vec3(k * (s.y() * s.y() + s.z() * s.z()), k * (s.x() * s.x() + s.z() * s.z()),
              k * (s.x() * s.x() + s.y() * s.y()))
      .asDiagonal();
}

Model wg7152(double t_m, double dt, double b) {
  Model m;
  m.solver.time_step_s = dt;
  m.solver.velocity_iterations = 50;
  BodyDef link;
  link.name = "link";
  link.mass_kg = 10.0;
  link.inertia_kgm2 = Vec3(30.833, 30.833, 30.833).asDiagonal();
  m.bodies.push_back(link);
  m.joints.push_back(hinge(m, "joint", kWorld, 0, Vec3::Zero(), Vec3::UnitZ()));
  m.motors.push_back(wgMotor(t_m, 0, b));
  return m;
}

Model wg7152GravityLoaded(double t_m, double dt, double b) {
  Model m;
  m.solver.time_step_s = dt;
  m.solver.velocity_iterations = 50;
  BodyDef link;
  link.name = "link";
  link.mass_kg = 2.0;
  link.position_m = Vec3(0.5, 0, 0);
  link.inertia_kgm2 = boxInertia(2.0, Vec3(1.0, 0.05, 0.05));
  m.bodies.push_back(link);
  m.joints.push_back(hinge(m, "joint", kWorld, 0, Vec3::Zero(), Vec3::UnitY()));
  MotorDef mo = wgMotor(t_m, 0, b);
  mo.stall_torque_Nm = 0.5;  // strong enough to lift the link against gravity
  m.motors.push_back(mo);
  return m;
}

Model chain(int links, double dt, int vel_it, int pos_it) {
  Model m;
  m.solver.time_step_s = dt;
  m.solver.velocity_iterations = vel_it;
  m.solver.position_iterations = pos_it;
  m.solver.velocity_tolerance = 0.0;  // fixed work per step, as the engines we compare with
  m.solver.position_tolerance_m = 0.0;
  const Vec3 size(0.1, 0.02, 0.02);
  for (int i = 0; i < links; ++i) {
    BodyDef b;
    b.name = "link" + std::to_string(i);
    b.mass_kg = 0.1;
    b.inertia_kgm2 = boxInertia(0.1, size);
    b.position_m = Vec3(0.1 * i + 0.05, 0, 0);
    m.bodies.push_back(b);
    m.joints.push_back(hinge(m, "hinge" + std::to_string(i), i == 0 ? kWorld : i - 1, i,
                             Vec3(0.1 * i, 0, 0), Vec3::UnitY()));
  }
  return m;
}

Model pendulum(double length, double angle0, double dt) {
  Model m;
  m.solver.time_step_s = dt;
  m.solver.velocity_iterations = 30;
  BodyDef bob;
  bob.name = "bob";
  bob.mass_kg = 1.0;
  bob.inertia_kgm2 = Mat3::Identity() * 1e-6;
  bob.position_m = Vec3(0, 0, -length);
  m.bodies.push_back(bob);
  // Joint coordinate zero is hanging straight down; then swing the bob rigidly to angle0.
  m.joints.push_back(hinge(m, "pivot", kWorld, 0, Vec3::Zero(), Vec3::UnitY()));
  const Quat swing(Eigen::AngleAxisd(angle0, Vec3::UnitY()));
  m.bodies[0].position_m = swing * m.bodies[0].position_m;
  m.bodies[0].orientation = swing;
  return m;
}

Model twoLinkArm(double dt) {
  Model m;
  m.solver.time_step_s = dt;
  m.solver.velocity_iterations = 50;
  m.gravity_mps2 = Vec3::Zero();
  BodyDef upper;
  upper.name = "upper";
  upper.mass_kg = 3.0;
  upper.position_m = Vec3(0.5, 0, 0);
  upper.inertia_kgm2 = boxInertia(3.0, Vec3(1.0, 0.1, 0.1));
  m.bodies.push_back(upper);
  BodyDef fore = upper;
  fore.name = "fore";
  fore.mass_kg = 2.0;
  fore.position_m = Vec3(1.5, 0, 0);
  fore.inertia_kgm2 = boxInertia(2.0, Vec3(1.0, 0.1, 0.1));
  m.bodies.push_back(fore);
  m.joints.push_back(hinge(m, "shoulder", kWorld, 0, Vec3::Zero(), Vec3::UnitZ()));
  m.joints.push_back(hinge(m, "elbow", 0, 1, Vec3(1.0, 0, 0), Vec3::UnitZ()));
  MotorDef shoulder = wgMotor(0.5, 0, 0.0);
  shoulder.name = "shoulder";
  shoulder.stall_torque_Nm = 2.0;
  shoulder.gear_ratio = 20.0;
  m.motors.push_back(shoulder);
  MotorDef elbow = wgMotor(1.0, 1, 0.0);
  elbow.name = "elbow";
  elbow.initial_voltage = -0.7;
  m.motors.push_back(elbow);
  return m;
}

Model gripper(double dt) {
  Model m;
  m.solver.time_step_s = dt;
  m.solver.velocity_iterations = 50;
  m.gravity_mps2 = Vec3(0, -9.81, 0);  // gravity across the jaws' plane: asymmetric loads
  BodyDef palm;
  palm.name = "palm";
  palm.mass_kg = 1.0;
  palm.inertia_kgm2 = boxInertia(1.0, Vec3(0.1, 0.1, 0.05));
  palm.is_static = true;
  m.bodies.push_back(palm);
  for (int side : {1, -1}) {
    BodyDef jaw;
    jaw.name = side > 0 ? "left" : "right";
    jaw.mass_kg = side > 0 ? 0.2 : 0.5;  // unequal jaws: asymmetric loads
    jaw.position_m = Vec3(0.05, side * 0.04, 0);
    jaw.inertia_kgm2 = boxInertia(jaw.mass_kg, Vec3(0.1, 0.01, 0.02));
    m.bodies.push_back(jaw);
  }
  m.joints.push_back(hinge(m, "left", 0, 1, Vec3(0, 0.04, 0), Vec3::UnitZ()));
  m.joints.push_back(hinge(m, "right", 0, 2, Vec3(0, -0.04, 0), Vec3::UnitZ()));
  MotorDef mo;
  mo.name = "jaws";
  mo.joint = 0;
  mo.stall_torque_Nm = 0.05;
  mo.no_load_speed_radps = 300.0;
  mo.time_constant_s = 0.02;
  mo.gear_ratio = 200.0;
  m.motors.push_back(mo);
  RepeaterDef rep;
  rep.name = "mirror";
  rep.motor = 0;
  rep.joint = 1;
  rep.ratio = -1.0;
  m.repeaters.push_back(rep);
  return m;
}

// ---- Contact scenes ---------------------------------------------------------------------------

int addGround(Model& model, const Vec3& up, const Vec3& point, int material) {
  BodyDef g;
  g.name = "ground";
  g.is_static = true;
  ShapeDef plane;
  plane.type = ShapeType::Plane;
  plane.pose.position = point;
  plane.pose.rotation = Quat::FromTwoVectors(Vec3::UnitZ(), up.normalized());
  plane.material = material;
  g.shapes.push_back(plane);
  model.bodies.push_back(g);
  return static_cast<int>(model.bodies.size()) - 1;
}

int addBox(Model& model, std::string name, const Vec3& size_m, double mass_kg, const Vec3& position,
           const Quat& orientation, int material) {
  BodyDef b;
  b.name = std::move(name);
  b.mass_kg = mass_kg;
  b.inertia_kgm2 = boxInertia(mass_kg, size_m);
  b.position_m = position;
  b.orientation = orientation;
  ShapeDef box;
  box.type = ShapeType::Box;
  box.half_extents_m = 0.5 * size_m;
  box.material = material;
  b.shapes.push_back(box);
  model.bodies.push_back(b);
  return static_cast<int>(model.bodies.size()) - 1;
}

int addSphere(Model& model, std::string name, double radius_m, double mass_kg, const Vec3& position,
              int material) {
  BodyDef b;
  b.name = std::move(name);
  b.mass_kg = mass_kg;
  b.inertia_kgm2 = Mat3::Identity() * (0.4 * mass_kg * radius_m * radius_m);
  b.position_m = position;
  ShapeDef sphere;
  sphere.type = ShapeType::Sphere;
  sphere.radius_m = radius_m;
  sphere.material = material;
  b.shapes.push_back(sphere);
  model.bodies.push_back(b);
  return static_cast<int>(model.bodies.size()) - 1;
}

Model contactScene(double time_step_s, int velocity_iterations, int position_iterations) {
  Model m;
  m.solver.time_step_s = time_step_s;
  m.solver.velocity_iterations = velocity_iterations;
  m.solver.position_iterations = position_iterations;
  m.solver.velocity_tolerance = 0.0;
  m.solver.position_tolerance_m = 0.0;
  return m;
}

Model boxStack(int count, double edge_m, double mu, double time_step_s, double gap_m) {
  Model m = contactScene(time_step_s);
  m.materials[0].friction = mu;
  addGround(m);
  for (int i = 0; i < count; ++i) {
    addBox(m, "box" + std::to_string(i), Vec3::Constant(edge_m), 1.0,
           Vec3(0, 0, (edge_m + gap_m) * (i + 0.5)));
  }
  return m;
}

Model boxPyramid(int base, double edge_m, double mu, double time_step_s) {
  Model m = contactScene(time_step_s);
  m.materials[0].friction = mu;
  addGround(m);
  const double spacing = edge_m * 1.02;
  int n = 0;
  for (int row = 0; row < base; ++row) {
    const int count = base - row;
    for (int i = 0; i < count; ++i) {
      const double x = (i - 0.5 * (count - 1)) * spacing;
      addBox(m, "box" + std::to_string(n++), Vec3::Constant(edge_m), 1.0,
             Vec3(x, 0, edge_m * (row + 0.5)));
    }
  }
  return m;
}

Model boxPile(int columns_x, int columns_y, int height, double time_step_s) {
  Model m = contactScene(time_step_s);
  m.materials[0].friction = 0.5;
  addGround(m);
  const double edge = 0.2, spacing = 0.3, drop = 0.05;
  int n = 0;
  for (int ix = 0; ix < columns_x; ++ix) {
    for (int iy = 0; iy < columns_y; ++iy) {
      for (int k = 0; k < height; ++k) {
        addBox(m, "box" + std::to_string(n++), Vec3::Constant(edge), 1.0,
               Vec3((ix - 0.5 * (columns_x - 1)) * spacing, (iy - 0.5 * (columns_y - 1)) * spacing,
                    drop + (edge + 0.01) * (k + 0.5)));
      }
    }
  }
  return m;
}

Model graspScene(double time_step_s) {
  Model m = contactScene(time_step_s, 20, 2);
  m.solver.articulated_contacts = true;
  MaterialDef grip;
  grip.name = "grip";
  grip.friction = 0.8;
  m.materials.push_back(grip);
  addGround(m);
  const int box = addBox(m, "box", Vec3::Constant(0.1), 0.5, Vec3(0, 0, 0.05), Quat::Identity(), 1);
  (void)box;
  BodyDef palm;
  palm.name = "palm";
  palm.mass_kg = 1.0;
  palm.inertia_kgm2 = boxInertia(1.0, Vec3(0.25, 0.1, 0.05));
  palm.position_m = Vec3(0, 0, 0.15);
  m.bodies.push_back(palm);
  const int palm_index = static_cast<int>(m.bodies.size()) - 1;
  const double open_x = 0.075;  // jaw centres; they touch the box at +-0.06
  const int left = addBox(m, "left_jaw", Vec3(0.02, 0.08, 0.08), 0.1, Vec3(-open_x, 0, 0.05),
                          Quat::Identity(), 1);
  const int right = addBox(m, "right_jaw", Vec3(0.02, 0.08, 0.08), 0.1, Vec3(open_x, 0, 0.05),
                           Quat::Identity(), 1);
  auto slider = [&](std::string name, int a, int b, const Vec3& axis) {
    JointDef j = hinge(m, std::move(name), a, b, m.bodies[b].position_m, axis);
    j.type = JointType::Prismatic;
    return j;
  };
  JointDef lift = slider("lift", kWorld, palm_index, Vec3::UnitZ());
  lift.limit_enabled = true;
  lift.lower_limit = 0.0;
  lift.upper_limit = 1.0;
  m.joints.push_back(lift);
  JointDef jl = slider("left", palm_index, left, Vec3::UnitX());
  jl.limit_enabled = true;
  jl.lower_limit = -0.01;
  jl.upper_limit = 0.06;
  m.joints.push_back(jl);
  JointDef jr = slider("right", palm_index, right, Vec3::UnitX());
  jr.limit_enabled = true;
  jr.lower_limit = -0.06;
  jr.upper_limit = 0.01;
  m.joints.push_back(jr);
  MotorDef jaws;
  jaws.name = "jaws";
  jaws.joint = 1;
  jaws.stall_torque_Nm = 0.01;  // 20 N at the jaw through r = 2000 rad/m
  jaws.no_load_speed_radps = 300.0;
  jaws.time_constant_s = 0.02;
  jaws.gear_ratio = 2000.0;
  m.motors.push_back(jaws);
  MotorDef lifter = jaws;
  lifter.name = "lift";
  lifter.joint = 0;
  lifter.stall_torque_Nm = 0.05;  // 100 N
  m.motors.push_back(lifter);
  RepeaterDef mirror;
  mirror.name = "mirror";
  mirror.motor = 0;
  mirror.joint = 2;
  mirror.ratio = -1.0;
  m.repeaters.push_back(mirror);
  return m;
}

Model trackedChassis(double time_step_s) {
  Model m = contactScene(time_step_s, 20, 2);
  m.materials[0].friction = 0.8;
  MaterialDef track;
  track.name = "track";
  track.friction = 0.8;
  m.materials.push_back(track);
  addGround(m);
  BodyDef chassis;
  chassis.name = "chassis";
  chassis.mass_kg = 20.0;
  chassis.inertia_kgm2 = boxInertia(20.0, Vec3(0.6, 0.4, 0.15));
  chassis.position_m = Vec3(0, 0, 0.1);
  const double belt_m_per_rad = 0.05 / 50.0;  // sprocket radius / gear ratio
  for (int side : {0, 1}) {
    ShapeDef t;
    t.type = ShapeType::Box;
    t.half_extents_m = Vec3(0.3, 0.04, 0.05);
    t.pose.position = Vec3(0, side == 0 ? 0.22 : -0.22, -0.05);
    t.material = 1;
    t.belt_motor = side;
    t.belt_direction = -Vec3::UnitX();  // the bottom run moves backward to drive forward
    t.belt_m_per_rad = belt_m_per_rad;
    chassis.shapes.push_back(t);
  }
  m.bodies.push_back(chassis);
  const int c = static_cast<int>(m.bodies.size()) - 1;
  for (int side : {0, 1}) {
    BodyDef sprocket;
    sprocket.name = side == 0 ? "left_sprocket" : "right_sprocket";
    sprocket.mass_kg = 0.5;
    sprocket.inertia_kgm2 = Mat3::Identity() * (0.5 * 0.5 * 0.05 * 0.05);
    sprocket.position_m = Vec3(0.3, side == 0 ? 0.22 : -0.22, 0.05);
    m.bodies.push_back(sprocket);
    const int b = static_cast<int>(m.bodies.size()) - 1;
    m.joints.push_back(hinge(m, sprocket.name, c, b, sprocket.position_m, Vec3::UnitY()));
    MotorDef motor;
    motor.name = side == 0 ? "left" : "right";
    motor.joint = static_cast<int>(m.joints.size()) - 1;
    motor.stall_torque_Nm = 0.1;
    motor.no_load_speed_radps = 500.0;
    motor.time_constant_s = 0.05;
    motor.gear_ratio = 50.0;
    m.motors.push_back(motor);
  }
  return m;
}

}  // namespace sim::dynamics::samples
