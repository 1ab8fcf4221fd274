#include <dynamics/model.h>

#include <cmath>
#include <string>

#include <Eigen/Eigenvalues>

namespace sim::dynamics {

namespace {

template <class Def>
int findByName(const std::vector<Def>& items, const std::string& name) {
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

bool finite(const Vec3& v) {
  return v.allFinite();
}

// "bodies[arm]" when the item has a name, "bodies[3]" otherwise.
template <class Def>
std::string label(const char* list, const Def& def, std::size_t index) {
  return std::string(list) + "[" + (def.name.empty() ? std::to_string(index) : def.name) + "]";
}

}  // namespace

int Model::findBody(const std::string& name) const {
  return findByName(bodies, name);
}
int Model::findJoint(const std::string& name) const {
  return findByName(joints, name);
}
int Model::findMotor(const std::string& name) const {
  return findByName(motors, name);
}

std::vector<ModelError> validate(const Model& model) {
  std::vector<ModelError> errors;
  auto fail = [&errors](std::string field, std::string message) {
    errors.push_back({std::move(field), std::move(message)});
  };

  // Solver settings.
  const SolverSettings& s = model.solver;
  if (!(s.time_step_s > 0.0) || !std::isfinite(s.time_step_s))
    fail("solver.time_step", "must be a positive number of seconds");
  if (s.substeps < 1) fail("solver.substeps", "must be at least 1");
  if (s.velocity_iterations < 1) fail("solver.velocity_iterations", "must be at least 1");
  if (s.position_iterations < 0) fail("solver.position_iterations", "must be 0 or more");
  if (!(s.velocity_tolerance >= 0.0)) fail("solver.velocity_tolerance", "must be >= 0");
  if (!(s.velocity_change_tolerance >= 0.0))
    fail("solver.velocity_change_tolerance", "must be >= 0");
  if (!(s.position_correction > 0.0 && s.position_correction <= 1.0))
    fail("solver.position_correction", "must be in (0, 1]");
  if (!finite(model.gravity_mps2)) fail("gravity", "must be finite");

  // Contacts and materials.
  const ContactSettings& c = model.contact;
  if (!(c.margin_m >= 0.0)) fail("contact.margin", "must be >= 0 m");
  if (!(c.slop_m >= 0.0)) fail("contact.slop", "must be >= 0 m");
  if (!(c.restitution_threshold_mps >= 0.0))
    fail("contact.restitution_threshold", "must be >= 0 m/s");
  if (!(c.max_position_correction_m > 0.0))
    fail("contact.max_position_correction", "must be > 0 m");
  if (!(c.position_correction > 0.0 && c.position_correction <= 1.0))
    fail("contact.position_correction", "must be in (0, 1]");
  if (!(c.sleep_linear_speed_mps >= 0.0)) fail("contact.sleep_linear_speed", "must be >= 0 m/s");
  if (!(c.sleep_angular_speed_radps >= 0.0))
    fail("contact.sleep_angular_speed", "must be >= 0 rad/s");
  if (!(c.sleep_time_s >= 0.0)) fail("contact.sleep_time", "must be >= 0 s");
  if (!(c.manifold_reuse_distance_m >= 0.0) || !std::isfinite(c.manifold_reuse_distance_m))
    fail("contact.manifold_reuse_distance", "must be >= 0 m (0: off)");
  if (!(c.manifold_reuse_angle_rad >= 0.0 && c.manifold_reuse_angle_rad <= 0.5))
    fail("contact.manifold_reuse_angle", "must be in [0, 0.5] rad (0: off)");
  if (model.materials.empty()) fail("materials", "must hold at least the default material");
  for (std::size_t i = 0; i < model.materials.size(); ++i) {
    const MaterialDef& m = model.materials[i];
    const std::string at = label("materials", m, i);
    if (!(m.friction >= 0.0) || !std::isfinite(m.friction)) fail(at + ".friction", "must be >= 0");
    if (!(m.restitution >= 0.0 && m.restitution <= 1.0))
      fail(at + ".restitution", "must be in [0, 1]");
    if (!(m.torsion_radius_m >= 0.0)) fail(at + ".torsion_radius", "must be >= 0 m");
    if (!(m.contact_stiffness_npm >= 0.0) || !std::isfinite(m.contact_stiffness_npm))
      fail(at + ".stiffness", "must be a finite number >= 0 N/m (0: rigid)");
    if (!(m.contact_damping_nspm >= 0.0) || !std::isfinite(m.contact_damping_nspm))
      fail(at + ".damping", "must be a finite number >= 0 N s/m");
  }

  // Bodies: positive mass and a symmetric positive-definite inertia tensor.
  for (std::size_t i = 0; i < model.bodies.size(); ++i) {
    const BodyDef& b = model.bodies[i];
    const std::string at = label("bodies", b, i);
    if (b.name.empty()) fail(at + ".name", "must not be empty");
    if (findByName(model.bodies, b.name) != static_cast<int>(i))
      fail(at + ".name", "duplicate body name '" + b.name + "'");
    if (!finite(b.position_m) || !b.orientation.coeffs().allFinite())
      fail(at + ".pose", "must be finite");
    if (std::abs(b.orientation.norm() - 1.0) > 1e-6)
      fail(at + ".orientation", "must be a unit quaternion");
    for (std::size_t k = 0; k < b.shapes.size(); ++k) {
      const ShapeDef& sh = b.shapes[k];
      const std::string sat = at + ".shapes[" + std::to_string(k) + "]";
      if (!finite(sh.pose.position) || std::abs(sh.pose.rotation.norm() - 1.0) > 1e-6)
        fail(sat + ".pose", "must be finite with a unit quaternion");
      switch (sh.type) {
        case ShapeType::Box:
          if (!(sh.half_extents_m.minCoeff() > 0.0) || !finite(sh.half_extents_m))
            fail(sat + ".half_extents", "must be three positive lengths (m)");
          break;
        case ShapeType::Capsule:
          if (!(sh.half_length_m >= 0.0) || !std::isfinite(sh.half_length_m))
            fail(sat + ".half_length", "must be >= 0 m");
          [[fallthrough]];
        case ShapeType::Sphere:
          if (!(sh.radius_m > 0.0) || !std::isfinite(sh.radius_m))
            fail(sat + ".radius", "must be > 0 m");
          break;
        case ShapeType::Plane:
          if (!b.is_static) fail(sat + ".type", "a plane may only belong to a static body");
          break;
        case ShapeType::Cylinder:
          if (!(sh.radius_m > 0.0) || !std::isfinite(sh.radius_m))
            fail(sat + ".radius", "must be > 0 m");
          if (!(sh.half_length_m > 0.0) || !std::isfinite(sh.half_length_m))
            fail(sat + ".half_length", "must be > 0 m");
          break;
        case ShapeType::ConvexHull:
          if (!sh.hull) fail(sat + ".points", "a hull shape needs its hull (makeConvexHull)");
          break;
        case ShapeType::TriangleMesh:
          if (!sh.mesh) fail(sat + ".triangles", "a mesh shape needs its mesh (makeTriangleMesh)");
          if (!b.is_static) fail(sat + ".type", "a triangle mesh may only belong to a static body");
          break;
      }
      if (sh.material < 0 || sh.material >= static_cast<int>(model.materials.size()))
        fail(sat + ".material", "refers to a material that does not exist");
      if (sh.belt_motor >= static_cast<int>(model.motors.size()) || sh.belt_motor < -1)
        fail(sat + ".belt_motor", "refers to a motor that does not exist");
      if (sh.belt_motor >= 0 && std::abs(sh.belt_direction.norm() - 1.0) > 1e-6)
        fail(sat + ".belt_direction", "must be a unit vector");
    }
    if (b.is_static) continue;
    if (!(b.mass_kg > 0.0) || !std::isfinite(b.mass_kg))
      fail(at + ".mass", "must be a positive number of kilograms");
    const Mat3& I = b.inertia_kgm2;
    if (!I.allFinite() ||
        (I - I.transpose()).cwiseAbs().maxCoeff() > 1e-9 * I.cwiseAbs().maxCoeff()) {
      fail(at + ".inertia", "must be a finite symmetric 3x3 tensor");
    } else {
      Eigen::SelfAdjointEigenSolver<Mat3> eig(I);
      if (eig.eigenvalues().minCoeff() <= 0.0)
        fail(at + ".inertia", "must be positive definite (all principal moments > 0)");
    }
  }

  auto checkBody = [&](const std::string& field, int index, bool allow_world) {
    if (index == kWorld && allow_world) return;
    if (index < 0 || index >= static_cast<int>(model.bodies.size()))
      fail(field, "refers to a body that does not exist");
  };

  // Joints.
  for (std::size_t i = 0; i < model.joints.size(); ++i) {
    const JointDef& j = model.joints[i];
    const std::string at = label("joints", j, i);
    if (findByName(model.joints, j.name) != static_cast<int>(i))
      fail(at + ".name", "duplicate joint name '" + j.name + "'");
    checkBody(at + ".parent", j.body_a, true);
    checkBody(at + ".child", j.body_b, false);
    if (j.body_a == j.body_b) fail(at + ".child", "must differ from the parent body");
    if (std::abs(j.frame_a.rotation.norm() - 1.0) > 1e-6 ||
        std::abs(j.frame_b.rotation.norm() - 1.0) > 1e-6)
      fail(at + ".frame", "rotations must be unit quaternions");
    if (j.limit_enabled && !(j.lower_limit <= j.upper_limit))
      fail(at + ".limits", "lower limit must not exceed the upper limit");
    if (j.type == JointType::Flexure) {
      for (const std::string& e : validateFlexure(j.flexure)) {
        const auto colon = e.find(':');
        fail(at + ".flexure." + e.substr(0, colon), e.substr(colon + 2));
      }
    }
    if (j.limit_enabled &&
        (j.type == JointType::Fixed || j.type == JointType::Ball || j.type == JointType::Flexure))
      fail(at + ".limits", "limits apply to hinge and prismatic joints only");
    if (j.friction.coefficient < 0 || j.friction.breakaway < 0 || j.friction.viscous < 0)
      fail(at + ".friction", "coefficients must be >= 0");
    if (j.friction.curve != JointFrictionCurve::Constant) {
      if (!(j.friction.coulomb >= 0.0) || !(j.friction.coulomb <= j.friction.breakaway))
        fail(at + ".friction.coulomb", "must be >= 0 and <= breakaway");
      if (!(j.friction.stribeck_speed > 0.0) || !std::isfinite(j.friction.stribeck_speed))
        fail(at + ".friction.stribeck_speed", "must be > 0 with a Stribeck curve");
      if (!(j.friction.exponent > 0.0) || !std::isfinite(j.friction.exponent))
        fail(at + ".friction.exponent", "must be > 0");
    }
    if (j.friction.model == JointFrictionModel::LuGre) {
      const JointFriction& f = j.friction;
      if (j.type != JointType::Hinge && j.type != JointType::Prismatic)
        fail(at + ".friction.model", "lugre applies to hinge and prismatic joints only");
      if (!(f.coulomb > 0.0) || !std::isfinite(f.coulomb))
        fail(at + ".friction.coulomb", "must be > 0 with lugre");
      if (!(f.breakaway >= f.coulomb) || !std::isfinite(f.breakaway))
        fail(at + ".friction.breakaway", "must be >= coulomb with lugre");
      if (!(f.stribeck_speed > 0.0) || !std::isfinite(f.stribeck_speed))
        fail(at + ".friction.stribeck_speed", "must be > 0 with lugre");
      if (!(f.sigma0 > 0.0) || !std::isfinite(f.sigma0))
        fail(at + ".friction.sigma0", "must be > 0");
      if (!(f.sigma1 >= 0.0) || !std::isfinite(f.sigma1))
        fail(at + ".friction.sigma1", "must be >= 0");
      if (!(f.zero_speed > 0.0) || !std::isfinite(f.zero_speed))
        fail(at + ".friction.zero_speed", "must be > 0");
      if (f.curve != JointFrictionCurve::Constant)
        fail(at + ".friction.curve", "not used with lugre (its curve is the Gaussian one)");
    }
  }

  auto isDrivable = [&](int joint) {
    return joint >= 0 && joint < static_cast<int>(model.joints.size()) &&
           (model.joints[joint].type == JointType::Hinge ||
            model.joints[joint].type == JointType::Prismatic);
  };

  // Motors: passport data (SPEC §2.1).
  for (std::size_t i = 0; i < model.motors.size(); ++i) {
    const MotorDef& m = model.motors[i];
    const std::string at = label("motors", m, i);
    if (findByName(model.motors, m.name) != static_cast<int>(i))
      fail(at + ".name", "duplicate motor name '" + m.name + "'");
    if (!isDrivable(m.joint)) fail(at + ".joint", "must name a hinge or prismatic joint");
    if (!(m.stall_torque_Nm > 0.0)) fail(at + ".Mp", "stall torque must be > 0 N m");
    if (!(m.no_load_speed_radps > 0.0)) fail(at + ".w_xx", "no-load speed must be > 0 rad/s");
    if (m.rotor_inertia_kgm2) {
      if (!(*m.rotor_inertia_kgm2 > 0.0)) fail(at + ".I_m", "rotor inertia must be > 0 kg m^2");
    } else if (!(m.time_constant_s > 0.0)) {
      fail(at + ".t_m", "time constant must be > 0 s (or give the rotor inertia I_m)");
    }
    if (!(m.gear_ratio > 0.0) || !std::isfinite(m.gear_ratio))
      fail(at + ".r", "gear ratio must be > 0");
    if (m.bearing_friction < 0.0) fail(at + ".b", "bearing friction must be >= 0");
    if (!(std::abs(m.initial_voltage) <= 1.0)) fail(at + ".u", "voltage must be in [-1, 1]");
    if (!(m.brake_torque >= 0.0) || !std::isfinite(m.brake_torque))
      fail(at + ".brake.torque", "brake torque must be >= 0 (N m, or N for a prismatic joint)");
    if (!(m.brake_release_u > 0.0 && m.brake_release_u <= 1.0))
      fail(at + ".brake.release_u", "release voltage must be in (0, 1]");
    if (!(m.max_torque > 0.0))
      fail(at + ".max_torque", "torque limit must be > 0 (N m, or N for a prismatic joint)");
    if (!(m.max_speed > 0.0))
      fail(at + ".max_speed", "speed limit must be > 0 (rad/s, or m/s for a prismatic joint)");
    const bool limited = std::isfinite(m.max_torque) || std::isfinite(m.max_speed);
    if (m.drive && limited)
      fail(at + ".max_torque",
           "torque and speed limits act on the passport characteristic; a "
           "drive unit's current comes from its circuit (remove them or the drive)");
    if (m.drive) {
      const DriveDef& d = *m.drive;
      const std::string dat = at + ".drive.";
      auto positive = [&](double v, const char* key, const char* what) {
        if (!(v > 0.0) || !std::isfinite(v)) fail(dat + key, std::string(what) + " must be > 0");
      };
      auto nonNegative = [&](double v, const char* key, const char* what) {
        if (!(v >= 0.0) || !std::isfinite(v)) fail(dat + key, std::string(what) + " must be >= 0");
      };
      positive(d.inductance_H, "L", "inductance (H)");
      positive(d.resistance_ohm, "R", "resistance (ohm)");
      positive(d.k_E, "k_E", "back-EMF constant (V s/rad)");
      positive(d.k_M, "k_M", "torque constant (N m/A)");
      positive(d.supply_V, "U", "supply voltage (V)");
      positive(d.stiffness, "c", "transmission stiffness (N m/rad)");
      nonNegative(d.damping, "K_V1", "internal damping (N m s/rad)");
      nonNegative(d.backlash, "backlash", "half gap theta_bn (rad)");
      nonNegative(d.K_ML, "K_ML", "load-dependent friction factor (1/(N m))");
      nonNegative(d.coulomb, "M_C", "Coulomb friction (N m)");
      if (!(d.breakaway >= d.coulomb) || !std::isfinite(d.breakaway))
        fail(dat + "M_S", "breakaway friction must be >= M_C");
      positive(d.stribeck_speed, "stribeck_speed", "Stribeck speed (rad/s)");
      positive(d.exponent, "exponent", "Stribeck exponent");
      nonNegative(d.viscous, "K_V2", "viscous output friction (N m s/rad)");
      if (d.friction == DriveFriction::LuGre) {
        positive(d.sigma0, "sigma0", "bristle stiffness (N m/rad)");
        nonNegative(d.sigma1, "sigma1", "bristle damping (N m s/rad)");
        nonNegative(d.t_min_s, "T_min", "bristle time-constant bound (s)");
        positive(d.coulomb, "M_C", "Coulomb friction of the LuGre model (g > 0)");
      }
    }
    for (std::size_t k = 0; k < i; ++k) {
      if (model.motors[k].joint == m.joint) fail(at + ".joint", "joint already has a motor");
    }
    // Eq. 22 output friction keeps its bristle state in the joint's LuGre state.
    auto lugreJoint = [&](int j) {
      return j >= 0 && j < static_cast<int>(model.joints.size()) &&
             model.joints[j].friction.model == JointFrictionModel::LuGre;
    };
    if (m.drive && m.drive->friction == DriveFriction::LuGre) {
      if (lugreJoint(m.joint))
        fail(at + ".drive.friction", "lugre output friction on a joint with LuGre friction");
      for (std::size_t k = 0; k < model.repeaters.size(); ++k) {
        if (model.repeaters[k].motor == static_cast<int>(i) && lugreJoint(model.repeaters[k].joint))
          fail(at + ".drive.friction",
               "lugre output friction on repeater joint with LuGre friction");
      }
    }
  }

  // Repeaters (SPEC §2.3).
  for (std::size_t i = 0; i < model.repeaters.size(); ++i) {
    const RepeaterDef& r = model.repeaters[i];
    const std::string at = label("repeaters", r, i);
    if (r.motor < 0 || r.motor >= static_cast<int>(model.motors.size()))
      fail(at + ".motor", "refers to a motor that does not exist");
    if (!isDrivable(r.joint)) fail(at + ".joint", "must name a hinge or prismatic joint");
    if (!(r.ratio != 0.0) || !std::isfinite(r.ratio)) fail(at + ".k", "ratio k must be nonzero");
    for (const MotorDef& m : model.motors) {
      if (m.joint == r.joint) fail(at + ".joint", "joint is already driven by a motor");
    }
  }
  return errors;
}

}  // namespace sim::dynamics
