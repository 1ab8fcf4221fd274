// A reduced-coordinate model of the kinematic trees in a Model (SPEC §6, seed 002): an
// independent reference for the full-coordinate solver. Bodies are numbered depth-first from the
// root(s); a hinge or prismatic joint is one coordinate, a fixed joint merges its child into the
// parent, and a dynamic body with no parent joint is a floating base joined to the world by six
// fictitious massless joints: prismatic along world x, y, z, then hinges about z, y', x''
// (q = x, y, z, yaw, pitch, roll of its centre-of-mass frame; singular at pitch = ±pi/2).
// Coordinates follow the solver's conventions: the joint axis is frame_a's x, a hinge turns frame b
// about it (right hand), a prismatic joint slides it along it, zero where the frames coincide.
#pragma once

#include <dynamics/model.h>
#include <dynamics/state.h>

#include <Eigen/Core>

#include <vector>

namespace sim::dynamics {

class KinematicTree {
 public:
  /// One coordinate (one node of the tree).
  struct Coordinate {
    JointType type = JointType::Hinge;  ///< Hinge or Prismatic.
    int parent = -1;                    ///< Coordinate of the parent node, or -1 (the world).
    int joint = -1;             ///< Model joint, or -1 for a floating base's fictitious joint.
    int body = -1;              ///< Model body this node carries (for fictitious joints: the base).
    int fictitious_index = -1;  ///< 0..5 for a floating base's joints (x, y, z, yaw, pitch, roll).
  };

  /// World pose and velocity of one body's centre-of-mass frame.
  struct BodyMotion {
    Vec3 position_m = Vec3::Zero();
    Quat orientation = Quat::Identity();
    Vec3 linear_velocity_mps = Vec3::Zero();
    Vec3 angular_velocity_radps = Vec3::Zero();
  };

  /// Inverse dynamics: generalised forces and, per coordinate, the force and torque the parent
  /// exerts on the node through its joint, at the child's anchor (world axes; as JointReaction
  /// plus the axis component).
  struct Forces {
    Eigen::VectorXd tau;  ///< N m (hinge) or N (prismatic).
    std::vector<Vec3> force_N;
    std::vector<Vec3> torque_Nm;
  };

  /// The tree of `bodies` (all dynamic bodies when empty). Static bodies and bodies fixed to the
  /// world are the world. Throws std::invalid_argument for ball joints, loops, or a joint whose
  /// parent is body_b's descendant.
  explicit KinematicTree(const Model& model, std::vector<int> bodies = {});

  int dof() const { return static_cast<int>(coords_.size()); }
  const std::vector<Coordinate>& coordinates() const { return coords_; }
  /// Coordinate of a model joint, or -1.
  int coordinateOfJoint(int joint) const;
  /// First fictitious coordinate of a floating base body, or -1.
  int floatingBaseOf(int body) const;

  /// q and qdot read from a state: joint positions and speeds as the solver stores them; a
  /// floating base's from its body pose and velocity.
  Eigen::VectorXd positions(const State& state) const;
  Eigen::VectorXd velocities(const State& state) const;

  /// Forward kinematics of every model body in the tree (others are left default).
  std::vector<BodyMotion> bodyMotions(const Eigen::VectorXd& q, const Eigen::VectorXd& qd) const;

  /// Recursive Newton-Euler: tau = H(q) qdd + C(q, qd) (gravity inside C).
  Forces inverseDynamics(const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                         const Eigen::VectorXd& qdd, const Vec3& gravity) const;
  /// Joint-space inertia matrix by the composite-rigid-body algorithm (independent of RNEA).
  Eigen::MatrixXd massMatrix(const Eigen::VectorXd& q) const;
  /// C(q, qd) = ID(q, qd, 0, g): Coriolis, centrifugal and gravity forces.
  Eigen::VectorXd bias(const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                       const Vec3& gravity) const;
  /// qdd = H^-1 (tau - C).
  Eigen::VectorXd forwardDynamics(const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                                  const Eigen::VectorXd& tau, const Vec3& gravity) const;

 private:
  struct Node {
    Eigen::Isometry3d parent_to_joint;  ///< Joint frame (side a) in the parent node's frame.
    Eigen::Isometry3d joint_to_node;    ///< Node frame in the moved joint frame (frame_b^-1).
    Vec3 anchor_local = Vec3::Zero();   ///< Child's anchor in the node frame (frame_b origin).
    double mass = 0.0;                  ///< Node plus merged (fixed) bodies.
    Vec3 com = Vec3::Zero();            ///< In node frame.
    Mat3 inertia = Mat3::Zero();        ///< About com, node axes.
  };
  struct Placement {
    int node = -1;                                             ///< -1: fixed to the world.
    Eigen::Isometry3d offset = Eigen::Isometry3d::Identity();  ///< Body frame in node (or world).
  };
  struct Kinematics {
    std::vector<Eigen::Isometry3d> pose;  ///< Node frames (world).
    std::vector<Vec3> axis, anchor;       ///< Joint axis and side-a anchor (world).
    std::vector<Vec3> w, v;               ///< Angular velocity, velocity of the node origin.
    std::vector<Vec3> dw, dv;             ///< Their accelerations (dv includes -g).
  };

  Kinematics kinematics(const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                        const Eigen::VectorXd& qdd, const Vec3& gravity) const;
  int addNode(Coordinate c, const Eigen::Isometry3d& parent_to_joint,
              const Eigen::Isometry3d& joint_to_node);
  void mergeBody(int body, const BodyDef& def, int node, const Eigen::Isometry3d& offset);

  std::vector<Coordinate> coords_;
  std::vector<Node> nodes_;
  std::vector<Placement> placement_;  ///< Per model body.
  std::vector<int> joint_coord_;      ///< Per model joint.
};

}  // namespace sim::dynamics
