#include "robots.h"

#include <numbers>

namespace sim::assetgen {
namespace {

constexpr Colour kSilver{0.70, 0.72, 0.75, 1.0};

RobotLink link(const std::string& name, double mass, const std::string& material) {
  RobotLink l;
  l.name = name;
  l.mass = mass;
  l.material = material;
  l.meshes.push_back(Mesh{});
  l.meshes.back().name = name;
  return l;
}

RobotJoint joint(const std::string& name, const std::string& type, const std::string& parent,
                 const std::string& child, const Vec3& xyz, const Vec3& axis) {
  RobotJoint j;
  j.name = name;
  j.type = type;
  j.parent = parent;
  j.child = child;
  j.xyz = xyz;
  j.axis = axis;
  return j;
}

void limits(RobotJoint& j, double lower, double upper, double effort, double velocity,
            double damping, double friction) {
  j.lower = lower;
  j.upper = upper;
  j.effort = effort;
  j.velocity = velocity;
  j.damping = damping;
  j.friction = friction;
}

}  // namespace

// Link frames follow the joints (ROS-Industrial style): at zero the upper arm stands vertical
// and the forearm points along +x; the wrist is spherical (axes 4, 5, 6 meet at joint 5); tool0
// has its z axis out of the flange. Masses are of an arm of this class (about 23 kg moving);
// joint speeds up to 360 deg/s as such arms have, torques for its 5 kg payload at full reach.
Robot arm6() {
  Robot r;
  r.name = "sim_arm6";
  r.package = "sim_arm6_description";
  r.description =
      "Six-axis industrial arm of the 5 kg payload class, reach 0.9 m (simtrainer example)";
  r.materials = {{"orange", kOrange}, {"dark_grey", kDarkGrey}};

  RobotLink base = link("base_link", 20.0, "dark_grey");
  base.meshes[0].cylinder({0, 0, 0.1}, kZ, 0.12, 0.2);
  base.meshes[0].box(Vec3(-0.16, -0.16, 0.0), Vec3(0.16, 0.16, 0.02));
  r.links.push_back(base);

  RobotLink l1 = link("link_1", 9.0, "orange");
  l1.meshes[0].cylinder({0, 0, 0.03}, kZ, 0.11, 0.06);
  l1.meshes[0].box(Vec3(-0.06, -0.07, 0.06), Vec3(0.14, 0.07, 0.20));
  l1.meshes[0].cylinder({0.1, 0, 0.25}, kY, 0.07, 0.16);
  r.links.push_back(l1);

  RobotLink l2 = link("link_2", 7.0, "orange");
  l2.meshes[0].cylinder(Vec3::Zero(), kY, 0.075, 0.18);
  l2.meshes[0].box(Vec3(-0.045, -0.055, 0.0), Vec3(0.045, 0.055, 0.45));
  l2.meshes[0].cylinder({0, 0, 0.45}, kY, 0.065, 0.15);
  r.links.push_back(l2);

  RobotLink l3 = link("link_3", 3.0, "orange");
  l3.meshes[0].cylinder(Vec3::Zero(), kY, 0.06, 0.13);
  l3.meshes[0].box(Vec3(0.0, -0.05, -0.05), Vec3(0.1, 0.05, 0.05));
  r.links.push_back(l3);

  RobotLink l4 = link("link_4", 2.4, "orange");
  l4.meshes[0].cylinder({0.14, 0, 0}, kX, 0.045, 0.28);
  l4.meshes[0].box(Vec3(0.26, -0.045, -0.03), Vec3(0.30, 0.045, 0.03));
  r.links.push_back(l4);

  RobotLink l5 = link("link_5", 1.2, "dark_grey");
  l5.meshes[0].cylinder(Vec3::Zero(), kY, 0.04, 0.09);
  l5.meshes[0].box(Vec3(0.0, -0.035, -0.035), Vec3(0.06, 0.035, 0.035));
  r.links.push_back(l5);

  RobotLink l6 = link("link_6", 0.2, "dark_grey");
  l6.meshes[0].cylinder({0.005, 0, 0}, kX, 0.035, 0.01);
  l6.meshes[0].box(Vec3(0.006, -0.004, 0.024), Vec3(0.010, 0.004, 0.033));  // orientation mark
  r.links.push_back(l6);

  RobotLink tool0;
  tool0.name = "tool0";  // a frame: no mass, no geometry
  r.links.push_back(tool0);

  RobotJoint j1 = joint("joint_1", "revolute", "base_link", "link_1", {0, 0, 0.2}, kZ);
  limits(j1, -2.967, 2.967, 400, 6.3, 1.0, 0.5);
  RobotJoint j2 = joint("joint_2", "revolute", "link_1", "link_2", {0.1, 0, 0.25}, kY);
  limits(j2, -1.9, 2.2, 460, 5.3, 1.5, 1.0);
  RobotJoint j3 = joint("joint_3", "revolute", "link_2", "link_3", {0, 0, 0.45}, kY);
  limits(j3, -2.6, 2.6, 230, 5.3, 0.8, 0.5);
  RobotJoint j4 = joint("joint_4", "revolute", "link_3", "link_4", {0.1, 0, 0}, kX);
  limits(j4, -3.05, 3.05, 80, 7.9, 0.2, 0.2);
  RobotJoint j5 = joint("joint_5", "revolute", "link_4", "link_5", {0.3, 0, 0}, kY);
  limits(j5, -2.1, 2.1, 80, 7.9, 0.2, 0.2);
  RobotJoint j6 = joint("joint_6", "continuous", "link_5", "link_6", {0.07, 0, 0}, kX);
  limits(j6, 0, 0, 60, 10.5, 0.05, 0.1);
  RobotJoint flange = joint("joint_6-tool0", "fixed", "link_6", "tool0", {0.01, 0, 0}, kX);
  flange.rpy = Vec3(0, std::numbers::pi / 2, 0);
  r.joints = {j1, j2, j3, j4, j5, j6, flange};
  return r;
}

// The fingers close to touch at zero and open 0.04 m each; the right one mimics the left
// (multiplier 1 on a mirrored axis), drawn with the left finger's mesh mirrored (scale 1 -1 1).
Robot gripper() {
  Robot r;
  r.name = "sim_gripper";
  r.package = "sim_gripper_description";
  r.description = "Parallel two-finger gripper, 80 mm stroke, mimic finger (simtrainer example)";
  r.materials = {{"silver", kSilver}, {"dark_grey", kDarkGrey}};

  RobotLink base = link("gripper_base", 0.6, "silver");
  base.meshes[0].cylinder({0, 0, 0.005}, kZ, 0.035, 0.01);
  base.meshes[0].box(Vec3(-0.025, -0.055, 0.01), Vec3(0.025, 0.055, 0.06));
  Eigen::Isometry3d body = Eigen::Isometry3d::Identity();
  body.translation() = Vec3(0, 0, 0.035);
  base.collision_boxes.emplace_back(body, Vec3(0.05, 0.11, 0.05));
  r.links.push_back(base);

  for (const double side : {1.0, -1.0}) {
    const std::string name = side > 0 ? "finger_left" : "finger_right";
    RobotLink finger = link(name, 0.08, "dark_grey");
    finger.meshes[0].box(Vec3(-0.01, side > 0 ? 0.0 : -0.012, 0.0),
                         Vec3(0.01, side > 0 ? 0.012 : 0.0, 0.07));
    Eigen::Isometry3d pad = Eigen::Isometry3d::Identity();
    pad.translation() = Vec3(0, side * 0.006, 0.035);
    finger.collision_boxes.emplace_back(pad, Vec3(0.02, 0.012, 0.07));
    if (side < 0) {
      finger.mesh_file = "finger_left.stl";
      finger.mesh_scale = Vec3(1, -1, 1);
    }
    r.links.push_back(finger);
  }
  RobotLink tcp;
  tcp.name = "gripper_tcp";  // the grasp point between the finger pads
  r.links.push_back(tcp);

  RobotJoint left =
      joint("finger_left_joint", "prismatic", "gripper_base", "finger_left", {0, 0, 0.06}, kY);
  limits(left, 0.0, 0.04, 100, 0.1, 5.0, 1.0);
  RobotJoint right =
      joint("finger_right_joint", "prismatic", "gripper_base", "finger_right", {0, 0, 0.06}, -kY);
  limits(right, 0.0, 0.04, 100, 0.1, 5.0, 1.0);
  right.mimic = "finger_left_joint";
  RobotJoint tcp_joint =
      joint("gripper_tcp_joint", "fixed", "gripper_base", "gripper_tcp", {0, 0, 0.12}, kX);
  r.joints = {left, right, tcp_joint};
  return r;
}

}  // namespace sim::assetgen
