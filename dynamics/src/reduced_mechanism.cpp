#include "reduced_mechanism.h"

#include "dense_factor.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace sim::dynamics::detail {

void ReducedMechanism::plan(int links, int rotors, std::vector<Joint> joints) {
  links_ = links;
  rotors_ = rotors;
  joints_ = std::move(joints);
  const auto nl = static_cast<std::size_t>(links);
  const auto nj = joints_.size();
  frames_.assign(nj, JointRows{});
  follower_inverse_.assign(nj, Mat6::Zero());
  mass_.assign(nl, 0.0);
  inertia_.assign(nl, Mat3::Zero());
  change_.assign(nl, Vec6::Zero());
  rotor_inertia_.setZero(rotors);
  gamma_.setZero(rotors);
  n_.setZero(6 * links, rotors);
  c_.setZero(6 * links);
  a_.setZero(rotors, rotors);
  a_inverse_.setZero(rotors, rotors);
  a_soft_.setZero(rotors, rotors);
  work_.setZero(rotors, rotors);
  link_work_.setZero(6, rotors);
  z_.setZero(rotors, rotors);
  h_.setZero(rotors, rotors);
  const auto limits = static_cast<Eigen::Index>(2 * nj);  // a limit and a Coulomb row per joint
  s_.setZero(limits, limits);
  t_.setZero(limits, rotors);
  limit_map_.setZero(limits, rotors);
  g_.setZero(rotors);
  w_.setZero(rotors);
  rhs_.setZero(rotors);
  lambda_.setZero(limits);
  limit_work_.setZero(limits);
  to_link_.setZero(6, rotors);
  active_.reserve(2 * nj);
  snapshot_active_.reserve(2 * nj);
}

void ReducedMechanism::setJoint(int joint, const Row rows[6], const double targets[5],
                                const Vec6& leader_velocity) {
  JointRows& f = frames_[static_cast<std::size_t>(joint)];
  for (int r = 0; r < 6; ++r) {
    f.rows_a.block<1, 3>(r, 0) = rows[r].lin_a.transpose();
    f.rows_a.block<1, 3>(r, 3) = rows[r].ang_a.transpose();
    f.rows_b.block<1, 3>(r, 0) = rows[r].lin_b.transpose();
    f.rows_b.block<1, 3>(r, 3) = rows[r].ang_b.transpose();
    if (r < 5) f.targets[r] = targets[r];
  }
  f.leader_velocity = leader_velocity;
}

void ReducedMechanism::setLink(int link, double mass, const Mat3& inertia_world) {
  mass_[static_cast<std::size_t>(link)] = mass;
  inertia_[static_cast<std::size_t>(link)] = inertia_world;
}

void ReducedMechanism::setRotorInertia(int rotor, double inertia) {
  rotor_inertia_[rotor] = inertia;
}

Vec6 ReducedMechanism::momentum(int link, const Vec6& velocity) const {
  Vec6 p;
  p.head<3>() = mass_[static_cast<std::size_t>(link)] * velocity.head<3>();
  p.tail<3>() = inertia_[static_cast<std::size_t>(link)] * velocity.tail<3>();
  return p;
}

bool ReducedMechanism::build() {
  for (std::size_t k = 0; k < joints_.size(); ++k) {
    const Joint& j = joints_[k];
    const JointRows& f = frames_[k];
    // The follower's twist from the leader's and the axis speed: rows_b V_b = (targets; qdot)
    // - rows_a V_a. Its rows must fix all six of the follower's freedoms.
    Mat6& inv = follower_inverse_[k];
    if (!invertBlocks(f.rows_b, inv) && !invert6(f.rows_b, inv)) return false;
    // V_b = -rows_b^-1 rows_a V_a + rows_b^-1 (targets; ratio w_rotor).
    Vec6 rhs = Vec6::Zero();
    rhs.head<5>() = f.targets;
    auto n_b = n_.middleRows<6>(6 * static_cast<Eigen::Index>(j.follower));
    auto c_b = c_.segment<6>(6 * static_cast<Eigen::Index>(j.follower));
    if (j.leader >= 0) {
      const auto lead = 6 * static_cast<Eigen::Index>(j.leader);
      link_work_.noalias() = f.rows_a.lazyProduct(n_.middleRows<6>(lead));
      n_b.noalias() = -inv.lazyProduct(link_work_);
      rhs.noalias() -= f.rows_a * c_.segment<6>(lead);
    } else {
      n_b.setZero();
      rhs.noalias() -= f.rows_a * f.leader_velocity;
    }
    c_b.noalias() = inv * rhs;
    n_b.col(j.rotor) += j.ratio * inv.col(5);
  }
  a_.setZero();
  a_.diagonal() = rotor_inertia_;
  Eigen::Matrix<double, 6, Eigen::Dynamic>& mn = link_work_;
  for (int l = 0; l < links_; ++l) {
    const auto n_l = n_.middleRows<6>(6 * static_cast<Eigen::Index>(l));
    mn.topRows<3>() = mass_[static_cast<std::size_t>(l)] * n_l.topRows<3>();
    mn.bottomRows<3>().noalias() = inertia_[static_cast<std::size_t>(l)] * n_l.bottomRows<3>();
    a_.noalias() += n_l.transpose().lazyProduct(mn);
  }
  symmetrise(a_);
  return invertSpd(a_, work_, a_inverse_);
}

bool ReducedMechanism::setCharacteristics(const Eigen::VectorXd& gamma) {
  gamma_ = gamma;
  a_soft_ = a_;
  a_soft_.diagonal() += gamma_;
  return invertSpd(a_soft_, work_, z_);
}

double ReducedMechanism::limitRow(const Limit& l) const {
  return l.sign * joints_[static_cast<std::size_t>(l.joint)].ratio;
}

int ReducedMechanism::limitRotor(const Limit& l) const {
  return joints_[static_cast<std::size_t>(l.joint)].rotor;
}

bool ReducedMechanism::factorLimits(const std::vector<int>& active,
                                    const std::vector<Limit>& limits) {
  const auto m = static_cast<Eigen::Index>(active.size());
  for (Eigen::Index i = 0; i < m; ++i) {
    const Limit& li = limits[static_cast<std::size_t>(active[static_cast<std::size_t>(i)])];
    t_.row(i) = limitRow(li) * z_.row(limitRotor(li));  // G_i Z
  }
  // Two limits on one rotor (the jaws of a repeater pair reaching their stops together) are
  // redundant; the relative 1e-12 on the diagonal, as RowBlock's, splits their impulse evenly.
  for (double regularisation : {1e-12, 1e-9}) {
    for (Eigen::Index i = 0; i < m; ++i) {
      for (Eigen::Index j = 0; j <= i; ++j) {
        const Limit& lj = limits[static_cast<std::size_t>(active[static_cast<std::size_t>(j)])];
        s_(i, j) = t_(i, limitRotor(lj)) * limitRow(lj);
      }
      s_(i, i) *= 1.0 + regularisation;
    }
    if (choleskyInPlace(s_, m)) return true;
  }
  return false;
}

void ReducedMechanism::solve(std::vector<Vec6>& link_velocity, Eigen::VectorXd& rotor_speed,
                             const Eigen::VectorXd& targets, const Eigen::VectorXd& accumulated,
                             std::vector<Limit>& limits, Impulses& out) {
  // Generalised momentum about c, with the characteristics' known part: A_s w' = g + G_L^T dl.
  g_ = rotor_inertia_.cwiseProduct(rotor_speed) + gamma_.cwiseProduct(targets) - accumulated;
  for (int l = 0; l < links_; ++l) {
    const auto i = 6 * static_cast<Eigen::Index>(l);
    g_.noalias() += n_.middleRows<6>(i).transpose() *
                    momentum(l, link_velocity[static_cast<std::size_t>(l)] - c_.segment<6>(i));
  }
  const std::size_t nl = limits.size();
  constexpr int kMaxActiveSetPasses = 4;  // as RowBlock
  for (int pass = 0;; ++pass) {
    // A released limit gives back what it holds (see Simulator's solveBlock).
    rhs_ = g_;
    active_.clear();
    for (std::size_t i = 0; i < nl; ++i) {
      const Limit& li = limits[i];
      if (li.active) {
        active_.push_back(static_cast<int>(i));
        continue;
      }
      lambda_[static_cast<Eigen::Index>(i)] =
          toBound(li.at_upper, li.lower, li.upper, li.accumulated);
      rhs_[limitRotor(li)] += limitRow(li) * lambda_[static_cast<Eigen::Index>(i)];
    }
    w_.noalias() = z_ * rhs_;
    if (!active_.empty() && factorLimits(active_, limits)) {
      const auto m = static_cast<Eigen::Index>(active_.size());
      for (Eigen::Index a = 0; a < m; ++a) {
        const Limit& la = limits[static_cast<std::size_t>(active_[static_cast<std::size_t>(a)])];
        limit_work_[a] = la.target - limitRow(la) * w_[limitRotor(la)];
      }
      choleskySolve(s_, m, limit_work_);
      for (Eigen::Index a = 0; a < m; ++a) {
        lambda_[active_[static_cast<std::size_t>(a)]] = limit_work_[a];
        w_.noalias() += limit_work_[a] * t_.row(a).transpose();
      }
    }
    bool changed = false;
    for (std::size_t i = 0; i < nl; ++i) {
      Limit& li = limits[i];
      const double l = lambda_[static_cast<Eigen::Index>(i)];
      const double held = li.accumulated + l;
      if (li.active && (held < li.lower || held > li.upper)) {
        li.active = false;  // beyond a bound: hold that bound
        li.at_upper = held > li.upper;
        changed = true;
      } else if (!li.active) {
        const double speed = limitRow(li) * w_[limitRotor(li)] - li.target;
        if (li.lower < li.upper && (li.at_upper ? speed > 0.0 : speed < 0.0)) {
          li.active = true;  // the bound would push it past its target: engage
          changed = true;
        }
      }
    }
    if (!changed) break;
    if (pass == kMaxActiveSetPasses) {
      // Keep the last impulses within their bounds and move the rotors by exactly them.
      rhs_ = g_;
      for (std::size_t i = 0; i < nl; ++i) {
        const Limit& li = limits[i];
        double& l = lambda_[static_cast<Eigen::Index>(i)];
        l = li.active ? std::clamp(l, li.lower - li.accumulated, li.upper - li.accumulated)
                      : toBound(li.at_upper, li.lower, li.upper, li.accumulated);
        rhs_[limitRotor(li)] += limitRow(li) * l;
      }
      w_.noalias() = z_ * rhs_;
      break;
    }
  }
  out.limits = lambda_.head(static_cast<Eigen::Index>(nl));
  out.characteristic = gamma_.cwiseProduct(targets - w_) - accumulated;
  for (int l = 0; l < links_; ++l) {
    const auto i = 6 * static_cast<Eigen::Index>(l);
    Vec6& v = link_velocity[static_cast<std::size_t>(l)];
    const Vec6 next = n_.middleRows<6>(i) * w_ + c_.segment<6>(i);
    change_[static_cast<std::size_t>(l)] = momentum(l, next - v);
    v = next;
  }
  rotor_speed = w_;
  recover(change_, out);
}

void ReducedMechanism::recover(std::vector<Vec6>& change, Impulses& out) const {
  out.joints.resize(joints_.size());
  for (std::size_t k = joints_.size(); k-- > 0;) {
    const Joint& j = joints_[k];
    // The follower's momentum change is its joint's rows' impulses plus those of the joints
    // hanging from it (already taken off): rows_b^T lambda.
    const Vec6 lambda =
        follower_inverse_[k].transpose() * change[static_cast<std::size_t>(j.follower)];
    out.joints[k] = lambda;
    if (j.leader >= 0)
      change[static_cast<std::size_t>(j.leader)].noalias() -=
          frames_[k].rows_a.transpose() * lambda;
  }
}

void ReducedMechanism::takeSnapshot(const std::vector<Limit>& limits) {
  snapshot_active_.clear();
  for (std::size_t i = 0; i < limits.size(); ++i)
    if (limits[i].active) snapshot_active_.push_back(static_cast<int>(i));
  h_ = z_;
  const auto m = static_cast<Eigen::Index>(snapshot_active_.size());
  if (m == 0 || !factorLimits(snapshot_active_, limits)) {
    snapshot_active_.clear();
    return;
  }
  // H = Z - T^T S^-1 T, T = G_L Z: the rotors' response with the active limits held.
  for (Eigen::Index r = 0; r < rotors_; ++r) {
    auto column = limit_map_.col(r).head(m);
    column = t_.col(r).head(m);
    choleskySolve(s_, m, column);  // S^-1 T
  }
  h_.noalias() -= t_.topRows(m).transpose().lazyProduct(limit_map_.topRows(m));
}

void ReducedMechanism::respondTo(int link) {
  to_link_.setZero();
  for (Eigen::Index q = 0; q < rotors_; ++q) {
    const Vec6 column = n_.block<6, 1>(6 * static_cast<Eigen::Index>(link), q);
    for (Eigen::Index r = 0; r < rotors_; ++r) to_link_.col(r) += h_(r, q) * column;
  }
}

void ReducedMechanism::wrenchLimitImpulses(const std::vector<Vec6>& wrench,
                                           Eigen::VectorXd& limits) {
  g_.setZero();
  for (int l = 0; l < links_; ++l)
    g_.noalias() += n_.middleRows<6>(6 * static_cast<Eigen::Index>(l)).transpose() *
                    wrench[static_cast<std::size_t>(l)];
  limits.setZero(static_cast<Eigen::Index>(lambda_.size()));
  for (std::size_t a = 0; a < snapshot_active_.size(); ++a)
    limits[snapshot_active_[a]] = -limit_map_.row(static_cast<Eigen::Index>(a)).dot(g_);
}

void ReducedMechanism::wrenchImpulses(const std::vector<Vec6>& wrench, Impulses& out) {
  wrenchLimitImpulses(wrench, out.limits);  // also the generalised impulse g_
  w_.noalias() = h_ * g_;                   // the rotors' speed change
  out.characteristic = -gamma_.cwiseProduct(w_);
  for (int l = 0; l < links_; ++l) {
    const auto i = 6 * static_cast<Eigen::Index>(l);
    change_[static_cast<std::size_t>(l)] =
        momentum(l, n_.middleRows<6>(i) * w_) - wrench[static_cast<std::size_t>(l)];
  }
  recover(change_, out);
}

}  // namespace sim::dynamics::detail
