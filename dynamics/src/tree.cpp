// Reduced-coordinate reference (SPEC §6). All vectors are in world axes: the forward pass carries
// each node's angular velocity/acceleration and the velocity/acceleration of its frame origin, the
// backward pass sums forces and moments about the world origin. Gravity enters as an acceleration
// -g of the world (the usual RNEA trick), so it appears in C(q, qd) and in the joint forces.
#include <dynamics/tree.h>

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace sim::dynamics {
namespace {

using Iso = Eigen::Isometry3d;
using Vec6 = Eigen::Matrix<double, 6, 1>;
using Mat6 = Eigen::Matrix<double, 6, 6>;

Iso toIso(const Frame& f) {
  Iso t = Iso::Identity();
  t.linear() = f.rotation.normalized().toRotationMatrix();
  t.translation() = f.position;
  return t;
}

Iso rot(double angle, const Vec3& axis) {
  Iso t = Iso::Identity();
  t.linear() = Eigen::AngleAxisd(angle, axis).toRotationMatrix();
  return t;
}

// Motion of the joint frame along/about its x axis.
Iso jointMotion(JointType type, double q) {
  if (type == JointType::Hinge) return rot(q, Vec3::UnitX());
  Iso t = Iso::Identity();
  t.translation() = Vec3(q, 0, 0);
  return t;
}

Mat3 skew(const Vec3& v) {
  Mat3 m;
  m << 0, -v.z(), v.y(), v.z(), 0, -v.x(), -v.y(), v.x(), 0;
  return m;
}

}  // namespace

int KinematicTree::addNode(Coordinate c, const Iso& parent_to_joint, const Iso& joint_to_node) {
  coords_.push_back(c);
  Node n;
  n.parent_to_joint = parent_to_joint;
  n.joint_to_node = joint_to_node;
  n.anchor_local = joint_to_node.inverse().translation();
  nodes_.push_back(n);
  return static_cast<int>(nodes_.size()) - 1;
}

// Accumulates mass, first moment (in com) and inertia about the node origin (in inertia);
// the constructor turns them into the com and the inertia about it.
void KinematicTree::mergeBody(int body, const BodyDef& def, int node, const Iso& offset) {
  placement_[body] = {node, offset};
  if (node < 0) return;
  Node& n = nodes_[node];
  const Vec3 p = offset.translation();
  const Mat3 r = offset.linear();
  n.mass += def.mass_kg;
  n.com += def.mass_kg * p;
  n.inertia += r * def.inertia_kgm2 * r.transpose() +
               def.mass_kg * (p.squaredNorm() * Mat3::Identity() - p * p.transpose());
}

KinematicTree::KinematicTree(const Model& model, std::vector<int> bodies) {
  const int nb = static_cast<int>(model.bodies.size());
  const int nj = static_cast<int>(model.joints.size());
  std::vector<bool> in_set(nb, bodies.empty());
  for (int b : bodies) in_set.at(b) = true;
  for (int b = 0; b < nb; ++b)
    if (model.bodies[b].is_static) in_set[b] = false;
  placement_.assign(nb, Placement{});
  joint_coord_.assign(nj, -1);

  // A joint belongs to the tree when its child is in the set; its parent side is the world when
  // body_a is the world or static, a tree body when in the set; otherwise the child floats.
  auto used = [&](int j) { return in_set[model.joints[j].body_b]; };
  auto parentIsWorld = [&](int j) {
    const int a = model.joints[j].body_a;
    return a == kWorld || model.bodies[a].is_static;
  };
  std::vector<int> incoming(nb, -1);
  for (int j = 0; j < nj; ++j) {
    if (!used(j)) continue;
    const JointDef& def = model.joints[j];
    if (def.type == JointType::Flexure)
      throw std::invalid_argument("KinematicTree: flexure joint '" + def.name + "' not supported");
    if (def.type == JointType::Ball)
      throw std::invalid_argument("KinematicTree: ball joint '" + def.name + "' not supported");
    if (!parentIsWorld(j) && !in_set[def.body_a]) continue;
    if (incoming[def.body_b] >= 0)
      throw std::invalid_argument("KinematicTree: body '" + model.bodies[def.body_b].name +
                                  "' has two parent joints (a closed loop)");
    incoming[def.body_b] = j;
  }
  std::vector<bool> placed(nb, false);
  for (int b = 0; b < nb; ++b) {
    if (model.bodies[b].is_static) {
      Frame f{model.bodies[b].position_m, model.bodies[b].orientation};
      placement_[b] = {-1, toIso(f)};
    }
  }

  // Depth first: a child's number is always larger than its parent's (seed 002).
  auto visit = [&](auto&& self, int body, int node, const Iso& offset) -> void {
    for (int j = 0; j < nj; ++j) {
      if (incoming[model.joints[j].body_b] != j || model.joints[j].body_a != body) continue;
      const JointDef& def = model.joints[j];
      const int c = def.body_b;
      if (placed[c]) throw std::invalid_argument("KinematicTree: loop at joint " + def.name);
      placed[c] = true;
      const Iso to_joint = offset * toIso(def.frame_a);
      const Iso joint_to_body = toIso(def.frame_b).inverse();
      if (def.type == JointType::Fixed) {
        mergeBody(c, model.bodies[c], node, to_joint * joint_to_body);
        self(self, c, node, to_joint * joint_to_body);
      } else {
        Coordinate co;
        co.type = def.type;
        co.parent = node;
        co.joint = j;
        co.body = c;
        const int k = addNode(co, to_joint, joint_to_body);
        joint_coord_[j] = k;
        mergeBody(c, model.bodies[c], k, Iso::Identity());
        self(self, c, k, Iso::Identity());
      }
    }
  };
  // Joints on the world (or on static bodies) first, in joint order.
  for (int j = 0; j < nj; ++j) {
    if (incoming[model.joints[j].body_b] != j || !parentIsWorld(j)) continue;
    const JointDef& def = model.joints[j];
    const Iso base = def.body_a == kWorld ? Iso::Identity() : placement_[def.body_a].offset;
    // Reuse visit on a one-joint basis: treat the parent as a body placed at `base` in the world.
    const int c = def.body_b;
    placed[c] = true;
    const Iso to_joint = base * toIso(def.frame_a);
    const Iso joint_to_body = toIso(def.frame_b).inverse();
    if (def.type == JointType::Fixed) {
      mergeBody(c, model.bodies[c], -1, to_joint * joint_to_body);
      visit(visit, c, -1, to_joint * joint_to_body);
    } else {
      Coordinate co;
      co.type = def.type;
      co.joint = j;
      co.body = c;
      const int k = addNode(co, to_joint, joint_to_body);
      joint_coord_[j] = k;
      mergeBody(c, model.bodies[c], k, Iso::Identity());
      visit(visit, c, k, Iso::Identity());
    }
  }
  // Floating bases: six massless fictitious joints x, y, z (prismatic), yaw, pitch, roll.
  const double half_pi = 0.5 * std::numbers::pi;
  const Iso to_y = rot(half_pi, Vec3::UnitZ()), to_z = rot(-half_pi, Vec3::UnitY());
  const Iso frames[6][2] = {{Iso::Identity(), Iso::Identity()},
                            {to_y, to_y.inverse()},
                            {to_z, to_z.inverse()},
                            {to_z, to_z.inverse()},
                            {to_y, to_y.inverse()},
                            {Iso::Identity(), Iso::Identity()}};
  for (int b = 0; b < nb; ++b) {
    if (!in_set[b] || incoming[b] >= 0) continue;
    placed[b] = true;
    int parent = -1;
    for (int k = 0; k < 6; ++k) {
      Coordinate co;
      co.type = k < 3 ? JointType::Prismatic : JointType::Hinge;
      co.parent = parent;
      co.body = b;
      co.fictitious_index = k;
      parent = addNode(co, frames[k][0], frames[k][1]);
    }
    mergeBody(b, model.bodies[b], parent, Iso::Identity());
    visit(visit, b, parent, Iso::Identity());
  }
  for (int b = 0; b < nb; ++b) {
    if (in_set[b] && !placed[b])
      throw std::invalid_argument("KinematicTree: body '" + model.bodies[b].name +
                                  "' is on a closed loop");
  }
  for (Node& n : nodes_) {
    if (n.mass <= 0.0) continue;
    n.com /= n.mass;
    n.inertia -= n.mass * (n.com.squaredNorm() * Mat3::Identity() - n.com * n.com.transpose());
  }
}

int KinematicTree::coordinateOfJoint(int joint) const {
  return joint_coord_.at(joint);
}

int KinematicTree::floatingBaseOf(int body) const {
  for (int i = 0; i < dof(); ++i)
    if (coords_[i].fictitious_index == 0 && coords_[i].body == body) return i;
  return -1;
}

namespace {
// yaw, pitch, roll of R = Rz(yaw) Ry(pitch) Rx(roll), and the matrix E with omega = E rates.
Vec3 eulerZYX(const Mat3& r) {
  return {std::atan2(r(1, 0), r(0, 0)), std::asin(std::clamp(-r(2, 0), -1.0, 1.0)),
          std::atan2(r(2, 1), r(2, 2))};
}
Mat3 eulerRateMap(double yaw, double pitch) {
  const Mat3 rz = Eigen::AngleAxisd(yaw, Vec3::UnitZ()).toRotationMatrix();
  const Mat3 ry = Eigen::AngleAxisd(pitch, Vec3::UnitY()).toRotationMatrix();
  Mat3 e;
  e.col(0) = Vec3::UnitZ();
  e.col(1) = rz * Vec3::UnitY();
  e.col(2) = rz * ry * Vec3::UnitX();
  return e;
}
}  // namespace

Eigen::VectorXd KinematicTree::positions(const State& state) const {
  Eigen::VectorXd q(dof());
  for (int i = 0; i < dof(); ++i) {
    const Coordinate& c = coords_[i];
    if (c.joint >= 0) {
      q[i] = state.joints.at(c.joint).position;
    } else if (c.fictitious_index == 0) {
      const BodyState& b = state.bodies.at(c.body);
      q.segment<3>(i) = b.position_m;
      q.segment<3>(i + 3) = eulerZYX(b.orientation.normalized().toRotationMatrix());
    }
  }
  return q;
}

Eigen::VectorXd KinematicTree::velocities(const State& state) const {
  Eigen::VectorXd qd(dof());
  for (int i = 0; i < dof(); ++i) {
    const Coordinate& c = coords_[i];
    if (c.joint >= 0) {
      qd[i] = state.joints.at(c.joint).speed;
    } else if (c.fictitious_index == 0) {
      const BodyState& b = state.bodies.at(c.body);
      const Vec3 e = eulerZYX(b.orientation.normalized().toRotationMatrix());
      qd.segment<3>(i) = b.linear_velocity_mps;
      qd.segment<3>(i + 3) = eulerRateMap(e[0], e[1]).lu().solve(b.angular_velocity_radps);
    }
  }
  return qd;
}

KinematicTree::Kinematics KinematicTree::kinematics(const Eigen::VectorXd& q,
                                                    const Eigen::VectorXd& qd,
                                                    const Eigen::VectorXd& qdd,
                                                    const Vec3& gravity) const {
  const int n = dof();
  Kinematics k;
  k.pose.resize(n);
  k.axis.resize(n);
  k.anchor.resize(n);
  k.w.resize(n);
  k.v.resize(n);
  k.dw.resize(n);
  k.dv.resize(n);
  for (int i = 0; i < n; ++i) {
    const int p = coords_[i].parent;
    const Iso tp = p < 0 ? Iso::Identity() : k.pose[p];
    const Vec3 xp = tp.translation();
    const Vec3 wp = p < 0 ? Vec3::Zero() : k.w[p];
    const Vec3 dwp = p < 0 ? Vec3::Zero() : k.dw[p];
    const Vec3 vp = p < 0 ? Vec3::Zero() : k.v[p];
    const Vec3 dvp = p < 0 ? Vec3(-gravity) : k.dv[p];
    const Iso joint_a = tp * nodes_[i].parent_to_joint;
    const Vec3 a = joint_a.linear().col(0);
    const Vec3 o = joint_a.translation();
    k.axis[i] = a;
    k.anchor[i] = o;
    k.pose[i] = joint_a * jointMotion(coords_[i].type, q[i]) * nodes_[i].joint_to_node;
    const Vec3 x = k.pose[i].translation();
    if (coords_[i].type == JointType::Hinge) {
      // The anchor is fixed on the parent; the node turns about the axis through it.
      const Vec3 r = o - xp, d = x - o;
      k.w[i] = wp + qd[i] * a;
      k.dw[i] = dwp + qdd[i] * a + wp.cross(qd[i] * a);
      const Vec3 v_o = vp + wp.cross(r);
      const Vec3 dv_o = dvp + dwp.cross(r) + wp.cross(wp.cross(r));
      k.v[i] = v_o + k.w[i].cross(d);
      k.dv[i] = dv_o + k.dw[i].cross(d) + k.w[i].cross(k.w[i].cross(d));
    } else {
      // Sliding along an axis fixed in the parent: Coriolis term 2 w x (qd a).
      const Vec3 r = x - xp;
      k.w[i] = wp;
      k.dw[i] = dwp;
      k.v[i] = vp + wp.cross(r) + qd[i] * a;
      k.dv[i] = dvp + dwp.cross(r) + wp.cross(wp.cross(r)) + 2.0 * wp.cross(qd[i] * a) + qdd[i] * a;
    }
  }
  return k;
}

std::vector<KinematicTree::BodyMotion> KinematicTree::bodyMotions(const Eigen::VectorXd& q,
                                                                  const Eigen::VectorXd& qd) const {
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(dof());
  const Kinematics k = kinematics(q, qd, zero, Vec3::Zero());
  std::vector<BodyMotion> out(placement_.size());
  for (std::size_t b = 0; b < placement_.size(); ++b) {
    const Placement& pl = placement_[b];
    const Iso node = pl.node < 0 ? Iso::Identity() : k.pose[pl.node];
    const Iso pose = node * pl.offset;
    out[b].position_m = pose.translation();
    out[b].orientation = Quat(pose.linear());
    if (pl.node < 0) continue;
    out[b].angular_velocity_radps = k.w[pl.node];
    out[b].linear_velocity_mps =
        k.v[pl.node] + k.w[pl.node].cross(pose.translation() - node.translation());
  }
  return out;
}

KinematicTree::Forces KinematicTree::inverseDynamics(const Eigen::VectorXd& q,
                                                     const Eigen::VectorXd& qd,
                                                     const Eigen::VectorXd& qdd,
                                                     const Vec3& gravity) const {
  const int n = dof();
  const Kinematics k = kinematics(q, qd, qdd, gravity);
  std::vector<Vec3> f(n, Vec3::Zero()), m(n, Vec3::Zero());  // moments about the world origin
  Forces out;
  out.tau.resize(n);
  out.force_N.resize(n);
  out.torque_Nm.resize(n);
  for (int i = n - 1; i >= 0; --i) {
    const Node& nd = nodes_[i];
    if (nd.mass > 0.0) {
      const Mat3 r = k.pose[i].linear();
      const Vec3 d = r * nd.com;
      const Vec3 c = k.pose[i].translation() + d;
      const Mat3 iw = r * nd.inertia * r.transpose();
      const Vec3 ac = k.dv[i] + k.dw[i].cross(d) + k.w[i].cross(k.w[i].cross(d));
      const Vec3 force = nd.mass * ac;
      f[i] += force;
      m[i] += iw * k.dw[i] + k.w[i].cross(iw * k.w[i]) + c.cross(force);
    }
    out.tau[i] = coords_[i].type == JointType::Hinge ? k.axis[i].dot(m[i] - k.anchor[i].cross(f[i]))
                                                     : k.axis[i].dot(f[i]);
    const Vec3 anchor_b = k.pose[i] * nd.anchor_local;
    out.force_N[i] = f[i];
    out.torque_Nm[i] = m[i] - anchor_b.cross(f[i]);
    const int p = coords_[i].parent;
    if (p >= 0) {
      f[p] += f[i];
      m[p] += m[i];
    }
  }
  return out;
}

Eigen::MatrixXd KinematicTree::massMatrix(const Eigen::VectorXd& q) const {
  // Composite rigid bodies with 6x6 spatial inertias about the world origin, motion vectors
  // (w, v_O): H_ij = s_j^T Ic_i s_i for j an ancestor of i (or i itself).
  const int n = dof();
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(n);
  const Kinematics k = kinematics(q, zero, zero, Vec3::Zero());
  std::vector<Mat6> ic(n, Mat6::Zero());
  std::vector<Vec6> s(n);
  for (int i = 0; i < n; ++i) {
    const Node& nd = nodes_[i];
    if (coords_[i].type == JointType::Hinge)
      s[i] << k.axis[i], k.anchor[i].cross(k.axis[i]);
    else
      s[i] << Vec3::Zero(), k.axis[i];
    if (nd.mass <= 0.0) continue;
    const Mat3 r = k.pose[i].linear();
    const Vec3 c = k.pose[i] * nd.com;
    const Mat3 cx = skew(c);
    ic[i].topLeftCorner<3, 3>() = r * nd.inertia * r.transpose() - nd.mass * cx * cx;
    ic[i].topRightCorner<3, 3>() = nd.mass * cx;
    ic[i].bottomLeftCorner<3, 3>() = -nd.mass * cx;
    ic[i].bottomRightCorner<3, 3>() = nd.mass * Mat3::Identity();
  }
  for (int i = n - 1; i >= 0; --i)
    if (coords_[i].parent >= 0) ic[coords_[i].parent] += ic[i];
  Eigen::MatrixXd h = Eigen::MatrixXd::Zero(n, n);
  for (int i = 0; i < n; ++i) {
    const Vec6 force = ic[i] * s[i];
    for (int j = i; j >= 0; j = coords_[j].parent) {
      h(i, j) = s[j].dot(force);
      h(j, i) = h(i, j);
    }
  }
  return h;
}

Eigen::VectorXd KinematicTree::bias(const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                                    const Vec3& gravity) const {
  return inverseDynamics(q, qd, Eigen::VectorXd::Zero(dof()), gravity).tau;
}

Eigen::VectorXd KinematicTree::forwardDynamics(const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                                               const Eigen::VectorXd& tau,
                                               const Vec3& gravity) const {
  return massMatrix(q).llt().solve(tau - bias(q, qd, gravity));
}

}  // namespace sim::dynamics
