// Internal to the assetgen tool: the example robots shipped as URDF packages (assets/robots/):
// links as single-colour meshes in their link frames, joints as URDF writes them. Written by
// writeRobot() in main.cpp: package.xml, urdf/<name>.urdf and meshes/<link>.stl.
#pragma once

#include "geometry.h"

#include <string>
#include <utility>
#include <vector>

namespace sim::assetgen {

struct RobotLink {
  std::string name;
  double mass = 0.0;         ///< kg, spread over the meshes' solids; 0: a frame, no <inertial>.
  std::vector<Mesh> meshes;  ///< In the link frame; written as meshes/<name>.stl.
  std::string material;      ///< The URDF material of its visual.
  /// The visual's mesh file and scale, when it reuses another link's (a mirrored finger);
  /// empty: its own meshes/<name>.stl at scale 1.
  std::string mesh_file;
  Vec3 mesh_scale = Vec3::Ones();
  /// Collision: boxes (pose in the link frame, edge lengths); none: the visual mesh itself.
  std::vector<std::pair<Eigen::Isometry3d, Vec3>> collision_boxes;
};

struct RobotJoint {
  std::string name, type, parent, child;        ///< type: revolute, continuous, prismatic, fixed.
  Vec3 xyz = Vec3::Zero(), rpy = Vec3::Zero();  ///< <origin> in the parent link frame.
  Vec3 axis = Vec3::UnitX();
  double lower = 0, upper = 0, effort = 0, velocity = 0;  ///< <limit> (rad, m, N m, N, /s).
  double damping = 0, friction = 0;                       ///< <dynamics>.
  std::string mimic;                                      ///< The joint it mimics, or empty.
  double multiplier = 1.0;
};

struct RobotMaterial {
  std::string name;
  Colour colour;
};

struct Robot {
  std::string name;     ///< <robot name>, and the URDF's file name.
  std::string package;  ///< The ROS-style package directory and <name> of its package.xml.
  std::string description;
  std::vector<RobotMaterial> materials;
  std::vector<RobotLink> links;
  std::vector<RobotJoint> joints;
};

/// A six-axis industrial arm of the 5 kg payload class (reach 0.9 m).
Robot arm6();
/// A parallel gripper: two fingers on prismatic joints, the right one mimicking the left.
Robot gripper();

}  // namespace sim::assetgen
