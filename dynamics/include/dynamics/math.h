// Public math aliases of the dynamics library. SI units everywhere: metres, kilograms, seconds,
// radians, newtons, newton-metres.
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <Eigen/LU>

namespace sim::dynamics {

using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;
using Quat = Eigen::Quaterniond;

/// A rigid frame: origin and orientation relative to a parent (a body or the world).
struct Frame {
  Vec3 position = Vec3::Zero();      ///< Origin in the parent frame (m).
  Quat rotation = Quat::Identity();  ///< Orientation relative to the parent (unit quaternion).
};

}  // namespace sim::dynamics
