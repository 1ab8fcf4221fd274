// Internal header, not API: a driven mechanism solved in its rotors' coordinates.
//
// A motor block whose joints are hinges and sliders forming a tree on a static base, each joint
// coupled rigidly to a rotor (directly or through a repeater), has one freedom per rotor. Its
// block solve in full coordinates (RowBlock: every joint's five hard rows, the couplings, the
// characteristics and the limits, 20-odd rows for a two-jaw gripper on a lift) is the projection
//   u' = argmin 1/2 (u' - u)^T M (u' - u)  subject to the block's rows,
// and every velocity that keeps the hard rows and couplings is u' = N w' + c: the rotors' speeds
// w' (k numbers) through N (the joints' motion per unit rotor speed, composed root to leaf) plus
// c (what the rows' own target speeds and the static bases' motion give). With A = N^T M N the
// mechanism's inertia in rotor coordinates (rotors included) the solve becomes
//   A w' = N^T M (u - c) + G^T dlambda    (G: the characteristic and limit rows on w'),
// k + (limits) unknowns instead of the rows'. The hard rows' impulses, which the state keeps for
// warm starts and joint reactions, follow leaf to root from each link's momentum change.
// The same A gives the mechanism's response to a wrench on a link (articulated contacts):
// N_other H N_link^T, H the inverse of A with the characteristics and active limits.
#pragma once

#include "rows.h"

#include <Eigen/Dense>

#include <limits>
#include <vector>

namespace sim::dynamics::detail {

/// The impulse change that takes an inactive bounded row (a limit, a backlash flank, a Coulomb
/// row) from `accumulated` to the bound it holds, exactly 0 when it is there.
inline double toBound(bool at_upper, double lower, double upper, double accumulated) {
  const double bound = at_upper ? upper : lower;
  return accumulated != bound ? bound - accumulated : 0.0;
}

class ReducedMechanism {
 public:
  /// A driven hinge or slider. Its six rows are the five hard rows, then the axis row (the
  /// joint coordinate's speed); the axis speed equals ratio * the rotor's speed.
  struct Joint {
    int leader = -1;     ///< link slot of the body the joint hangs from, -1 for a static body
    int follower = 0;    ///< link slot of the body it moves
    int rotor = 0;       ///< rotor slot that drives it
    double ratio = 0.0;  ///< axis speed per rotor speed (m/rad or rad/rad)
  };
  /// A joint's rows this substep: row i of rows_a / rows_b is the row's (lin; ang) part on the
  /// leader / follower, so a row's speed is rows_a.row(i) V_leader + rows_b.row(i) V_follower.
  struct JointRows {
    Mat6 rows_a = Mat6::Zero(), rows_b = Mat6::Zero();
    Eigen::Matrix<double, 5, 1> targets = Eigen::Matrix<double, 5, 1>::Zero();  ///< hard rows
    Vec6 leader_velocity = Vec6::Zero();  ///< (v; w) of a static leader
  };
  /// A bounded row on a joint's axis (RowBlock's bounded rows): a limit, sign * axis speed >=
  /// target while active, its impulse in [0, inf); or a Coulomb row, axis speed = target while
  /// active, its impulse in [-bound, bound]. Inactive, it holds its lower or upper bound.
  struct Limit {
    int joint = 0;  ///< joint slot
    double sign = 1.0;
    double target = 0.0;
    bool active = false;
    double accumulated = 0.0;  ///< impulse it holds this substep (N s or N m s)
    double lower = 0.0, upper = std::numeric_limits<double>::infinity();
    bool at_upper = false;
  };
  /// Impulse changes of one solve (or of a set of wrenches on the links).
  struct Impulses {
    std::vector<Vec6> joints;  ///< per joint slot: five hard rows, then the axis row (all of it)
    Eigen::VectorXd characteristic;  ///< per rotor
    Eigen::VectorXd limits;          ///< per limit
  };

  /// The structure; joints in an order where each joint's leader is an earlier joint's follower.
  void plan(int links, int rotors, std::vector<Joint> joints);
  int linkCount() const { return links_; }
  int rotorCount() const { return rotors_; }
  const std::vector<Joint>& joints() const { return joints_; }

  /// This substep's data (before build()): a joint's six rows (Row: its parts on the leader,
  /// a, and the follower, b), the five hard rows' target speeds and a static leader's velocity.
  void setJoint(int joint, const Row rows[6], const double targets[5], const Vec6& leader_velocity);
  const JointRows& rows(int joint) const { return frames_[static_cast<std::size_t>(joint)]; }
  void setLink(int link, double mass, const Mat3& inertia_world);
  void setRotorInertia(int rotor, double inertia);
  /// N, c and A from the rows. False when a follower's rows do not fix its motion (then the
  /// block is solved in full coordinates).
  bool build();
  /// 1 / the inertia a rotor sees with every joint and coupling held: (A^-1)_rr.
  double rotorMobility(int rotor) const { return a_inverse_(rotor, rotor); }
  /// The characteristics as soft rows on the rotor speeds: impulse gamma (target - w') over the
  /// substep (gamma per rotor, N m s per rad/s). False if the result is not positive definite.
  bool setCharacteristics(const Eigen::VectorXd& gamma);

  /// One exact block solve from the links' and rotors' velocities: sets them to the solution and
  /// returns the impulse changes. `limits` (active flags) follow the same active-set passes as
  /// RowBlock; `targets` and `accumulated` are the characteristics' target speeds and impulses.
  void solve(std::vector<Vec6>& link_velocity, Eigen::VectorXd& rotor_speed,
             const Eigen::VectorXd& targets, const Eigen::VectorXd& accumulated,
             std::vector<Limit>& limits, Impulses& out);

  /// Freezes H with the limits active now, for the responses below (the articulated contacts
  /// of this substep use it even if the block's active set changes later).
  void takeSnapshot(const std::vector<Limit>& limits);
  /// Sets the link whose responses the next calls give: H N_link^T.
  void respondTo(int link);
  /// (v; w) change of `other` per unit (force; torque) on the link chosen by respondTo().
  Mat6 linkResponse(int other) const {
    Mat6 m = Mat6::Zero();  // sum of outer products: k is a handful, fixed 6 x 6 updates
    const auto at = 6 * static_cast<Eigen::Index>(other);
    for (Eigen::Index r = 0; r < rotors_; ++r)
      m.noalias() += n_.block<6, 1>(at, r) * to_link_.col(r).transpose();
    return m;
  }
  /// Rotor speed change per unit (force; torque) on that link.
  Vec6 rotorResponse(int rotor) const { return to_link_.col(rotor); }
  /// The impulse changes that wrenches on the links imply under the snapshot (the motion itself
  /// was given by the responses).
  void wrenchImpulses(const std::vector<Vec6>& wrench, Impulses& out);
  /// Only the limits' part of wrenchImpulses().
  void wrenchLimitImpulses(const std::vector<Vec6>& wrench, Eigen::VectorXd& limits);

 private:
  Vec6 momentum(int link, const Vec6& velocity) const;
  /// Joint impulses from each link's momentum change, leaf to root; `change` is consumed.
  void recover(std::vector<Vec6>& change, Impulses& out) const;
  /// S = G_L Z G_L^T over the active limits (regularised as RowBlock does), Cholesky in place.
  bool factorLimits(const std::vector<int>& active, const std::vector<Limit>& limits);
  double limitRow(const Limit& l) const;  // sign * ratio of the limit's joint
  int limitRotor(const Limit& l) const;

  int links_ = 0, rotors_ = 0;
  std::vector<Joint> joints_;
  std::vector<JointRows> frames_;
  std::vector<double> mass_;
  std::vector<Mat3> inertia_;
  Eigen::VectorXd rotor_inertia_;
  std::vector<Mat6> follower_inverse_;          // rows_b^-1 per joint
  Eigen::MatrixXd n_;                           // 6 links x rotors
  Eigen::VectorXd c_;                           // 6 links
  Eigen::MatrixXd a_, a_inverse_, a_soft_, z_;  // A, A^-1, A + diag gamma, its inverse
  Eigen::VectorXd gamma_;
  // Solve and snapshot work, sized once.
  std::vector<int> active_;
  Eigen::MatrixXd s_, t_, h_, limit_map_;
  Eigen::VectorXd g_, w_, rhs_, lambda_, limit_work_;
  Eigen::MatrixXd work_;
  Eigen::Matrix<double, 6, Eigen::Dynamic> link_work_;
  std::vector<int> snapshot_active_;
  Eigen::Matrix<double, 6, Eigen::Dynamic> to_link_;  // (H N_link^T)^T: a column per rotor
  std::vector<Vec6> change_;
};

}  // namespace sim::dynamics::detail
