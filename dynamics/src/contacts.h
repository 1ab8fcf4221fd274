// Internal header, not API: contact rows inside the sequential-impulse solver.
//
// Per contact point: a non-penetration row (unilateral; speculative while the shapes are still
// apart, so they may close the gap in one substep but no more; a bounce target for impacts faster
// than the restitution threshold) and two friction rows bounded by mu times the point's normal
// impulse; per manifold an optional torsional friction row. Friction rows see the belt speed of a
// conveyor shape through its motor's rotor, so a track belt drives the chassis and loads the
// motor. Penetration beyond the slop is removed by split-impulse position passes (never by
// velocity), so resting contacts gain no energy.
#pragma once

#include <dynamics/model.h>
#include <dynamics/state.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <memory>
#include <vector>

#include "articulation.h"
#include "belt.h"
#include "collision.h"
#include "contact_batches.h"
#include "rows.h"
#include "worker_pool.h"

namespace sim::dynamics::detail {

/// Gives the empty list `list` room for `count` items and writes that room once, leaving it empty:
/// its pages are faulted in now, not in a step where it first grows.
template <class T>
void touchCapacity(std::vector<T>& list, std::size_t count) {
  if (!list.empty() || list.capacity() >= count) return;
  list.resize(count);
  list.clear();
}

/// Whether the model reuses manifolds (ContactSettings::manifold_reuse_distance_m and angle).
inline bool reusesManifolds(const Model& model) {
  return model.contact.manifold_reuse_distance_m > 0.0 &&
         model.contact.manifold_reuse_angle_rad > 0.0;
}

/// Local alternating sweeps over a manifold's normal rows per solver sweep (see solveVelocity).
inline constexpr int kManifoldSweeps = 4;

/// The least work a thread is given (ContactSolver::threadsFor): the shapes to place, the narrow
/// phase's pairs, the manifolds to set up and to store.
inline constexpr int kPairsPerThread = 16;
/// The least a thread is given in the level sweeps (sweepLevels): manifolds (a batched manifold
/// is some 0.1 us a sweep, handing a sweep over some 1-2 us).
inline constexpr int kSweepManifoldsPerThread = 64;

/// SIM_VALIDATE's allowance on |friction|^2 <= (mu lambda_n)^2: the disc projection scales by
/// bound / |f|, a few roundings (about 1e-15 relative), so a wider gap is a solver error.
inline constexpr double kConeSlack = 1e-12;

/// One scalar contact row: Cdot = dir.(v_b - v_a) + ang_b.w_b - ang_a.w_a (+ rotor terms). Its
/// accumulated impulse is kept apart (ContactPoint, ContactManifold::torsion_impulse).
struct ContactRow {
  Vec3 dir = Vec3::Zero();
  Vec3 ang_a = Vec3::Zero(), ang_b = Vec3::Zero();  ///< r x dir
  Vec3 dw_a = Vec3::Zero(), dw_b = Vec3::Zero();    ///< I^-1 (r x dir)
  double mass = 0.0;                                ///< 1 / (J M^-1 J^T)
};

/// A contact point. What the passes over every point of a step read comes first, in the few
/// cache lines they share: the batches' fill the arms, impulses and target; the position passes
/// the witness points; the store the impulses, separation and point. The rows come last: a plain
/// manifold's are set up in its batch, not here (ContactManifold::rows_pending).
struct ContactPoint {
  int a = 0, b = 0;  ///< Solver body indices.
  int manifold = 0;
  std::uint32_t feature = 0;
  Vec3 r_a = Vec3::Zero(), r_b = Vec3::Zero();  ///< Arms at detection (world).
  /// Accumulated over the substep: the normal row's and the tangent rows'.
  double normal_impulse = 0.0, tangent_impulse[2] = {0.0, 0.0};
  double target = 0.0;                                  ///< Smallest allowed normal speed (m/s).
  Vec3 local_a = Vec3::Zero(), local_b = Vec3::Zero();  ///< Witness points in body frames.
  double separation = 0.0;
  double friction = 0.0;
  Vec3 point = Vec3::Zero();  ///< Midway point at detection (world).
  // Belt (conveyor) drive of the tangent rows (belt.h): surface speed = coef * rotor speed.
  int rotor[2] = {-1, -1};       ///< Motor rotors of side a and side b belts.
  double rotor_coef[2][2] = {};  ///< [tangent][side] Cdot contribution per rotor rad/s.
  ContactRow normal, tangent[2];
};

struct ContactManifold {
  int shape_a = 0, shape_b = 0;
  int first = 0, count = 0;  ///< Range in the point list.
  double torsion_radius = 0.0;
  double friction = 0.0;
  ContactRow torsion;
  double torsion_impulse = 0.0;
  /// Coupling of the normal rows through the two bodies: k[i][j] is the change of point i's
  /// normal speed per unit normal impulse at point j (J_i M^-1 J_j^T). The local sweeps over a
  /// manifold's points run on these numbers and touch the bodies once.
  double k[4][4] = {};
  /// Soft contact (MaterialDef::contact_stiffness_npm): each normal row solves
  /// Cdot + (soft_bias / h) C + compliance * lambda = 0 (soft_row.h), C the separation; its
  /// k[i][i] and mass include the compliance. 0: rigid rows (the position passes remove overlap).
  double compliance = 0.0;
  double soft_bias = 0.0;
  /// Side (0: a, 1: b) that is a link of a block seen through its block's response (see
  /// ContactSolver::articulate), or -1: both sides rigid.
  int articulated_side = -1;
  int articulated_first = 0;  ///< Index of its rows' link responses in the solver's list.
  /// A plain manifold's rows (its points' ang_a ... mass, and k) are not set up with it: its batch
  /// sets them up in its lanes (ContactBatches::fill), and ContactSolver::ensureRows into the
  /// points when it is solved otherwise. Until then the points' rows are stale.
  bool rows_pending = false;
};

class ContactSolver {
 public:
  void init(const Model& model);
  /// How many contact points init() takes storage for (expectedPoints): kExpectedPointsPerShape
  /// per shape of a moving body, as for a box that rests on one and carries another.
  static constexpr int kExpectedPointsPerShape = 8;
  std::size_t expectedPoints() const { return expected_points_; }
  /// The threads the sweeps may use (none: the caller's alone). The result is the same bits.
  void setWorkers(WorkerPool* workers) { workers_ = workers; }
  bool empty() const { return shape_owner_.empty(); }

  /// Detects contacts at the substep's start poses and sets up their rows; last substep's
  /// contacts in `s` warm-start the matching points.
  void prepare(const Model& model, const std::vector<Vec3>& positions,
               const std::vector<Quat>& orientations, const std::vector<SolverBody>& bodies,
               const State& s, double h);
  /// Applies the points' stored impulses to the bodies. `may_articulate`: articulate() may be
  /// called in this substep (it rebuilds the batches), so the points are applied one by one in
  /// their order rather than from batches built for the warm start alone.
  void warmStart(std::vector<SolverBody>& bodies, std::vector<double>& rotor_speed,
                 const std::vector<double>& rotor_inv_inertia, bool may_articulate);
  /// Makes the rows of every manifold between one block link and a body outside any block see
  /// the link through `articulation` (until the next prepare): their effective masses and the
  /// link's velocity changes come from the block's response, and each manifold's net impulse on
  /// the link moves the rest of the mechanism. Manifolds with a belt keep rigid rows.
  void articulate(const std::vector<SolverBody>& bodies, BlockArticulation& articulation);
  /// Whether articulate() would articulate any manifold.
  bool wouldArticulate(const BlockArticulation& articulation) const;
  /// After articulate(): whether any row outside the articulated manifolds acts on the body
  /// (or, for rotors, on the motor's rotor through a belt).
  bool rigidlyTouchesBody(int body) const { return rigid_body_touch_[body] != 0; }
  bool rigidlyTouchesRotor(int motor) const {
    return static_cast<std::size_t>(motor) < rigid_rotor_touch_.size() &&
           rigid_rotor_touch_[motor] != 0;
  }
  /// One sweep over all rows; returns the largest impulse change. Sweeps alternate direction
  /// (symmetric Gauss-Seidel) so the order of a manifold's points leaves no net bias (a lopsided
  /// first sweep would tilt a resting box, and the tilt hides inside the slop). `tolerance` is
  /// the solver's (N s): a block's articulated manifolds stop their local sweeps below it.
  double solveVelocity(std::vector<SolverBody>& bodies, std::vector<double>& rotor_speed,
                       const std::vector<double>& rotor_inv_inertia, bool reverse,
                       double tolerance);
  /// One split-impulse pass, removing cfg.position_correction of each point's penetration beyond
  /// the slop; returns the largest penetration beyond the slop.
  double solvePosition(const ContactSettings& cfg, std::vector<Vec3>& positions,
                       std::vector<Quat>& orientations, const std::vector<SolverBody>& bodies);
  /// Writes the points and their impulses to the state (sorted; the next warm start).
  void store(State& s);

  int shapeOwner(int shape) const { return shape_owner_.at(static_cast<std::size_t>(shape)); }
  std::size_t pointCount() const { return static_cast<std::size_t>(point_count_); }

 private:
  /// The link's (v; w) change per unit impulse of each row of an articulated manifold's point.
  struct ArticulatedRows {
    Vec6 normal, tangent[2], torsion;  // torsion: the manifold's, kept with its first point
  };
  double solveTorsion(ContactManifold& m, const SolverBody& a, const SolverBody& b) const;
  /// The scalar sweep over one manifold with rigid rows on both sides.
  double solveRigid(ContactManifold& m, std::vector<SolverBody>& bodies,
                    std::vector<double>& rotor_speed, const std::vector<double>& rotor_inv_inertia,
                    bool reverse);
  /// Levels the manifolds outside the articulated groups into batches_ (see ContactBatches);
  /// those with belt or torsion rows stay scalar.
  void batch(const std::vector<SolverBody>& bodies, int rotors);
  /// Copies the batches' impulses back to points_ and drops the batches.
  void unbatch();
  double solveArticulated(ContactManifold& m, std::vector<SolverBody>& bodies,
                          std::vector<double>& rotor_speed, bool reverse);

  std::vector<ShapeDef> shapes_;                 // flat, body-major
  std::vector<int> shape_owner_;                 // body of each flat shape
  std::vector<std::pair<int, int>> no_collide_;  // sorted body pairs joined without collision
  std::vector<WorldShape> world_shapes_;
  std::vector<std::pair<int, int>> pairs_;
  /// A pair the narrow phase looks at: shapes, bodies, its stored contacts (sorted by feature)
  /// and where its manifolds went (scratch_[list].manifolds, from found_first).
  struct PairWork {
    int i = 0, j = 0, oa = 0, ob = 0;
    const ContactState* stored = nullptr;
    const ContactState* stored_end = nullptr;
    int thread = 0;  ///< The thread whose bodies these are (ownerThread).
    int list = 0, found_first = 0, found_count = 0;
    bool convex = false;  ///< One manifold at most (no mesh): may be reused.
    bool reused = false;  ///< This substep's manifold is the stored one, moved with the bodies.
    const ContactAnchor* anchors = nullptr;  ///< The stored points' anchors, or none.
  };
  /// A manifold of this substep, in pair order: its pair, what the narrow phase found, and its
  /// first point's index.
  struct ManifoldWork {
    int pair = 0;
    const Manifold* found = nullptr;
    int first_point = 0;
  };
  /// One manifold's split-impulse push (solvePosition); returns its largest penetration beyond
  /// the slop (negative: none).
  double positionPass(const ContactSettings& cfg, const ContactManifold& m,
                      std::vector<Vec3>& positions, std::vector<Quat>& orientations,
                      const std::vector<SolverBody>& bodies) const;
  /// Writes manifold `manifold_index`'s points to fresh_ (store()).
  void storeManifold(int manifold_index);
  /// Sets up manifold `manifold_index` of manifold_work_: its points, rows and warm start.
  void setupManifold(const Model& model, const std::vector<Quat>& orientations,
                     const std::vector<Vec3>& positions, const std::vector<SolverBody>& bodies,
                     double h, int manifold_index);
  /// Sets up the rows of manifold `mi` in its points if they are pending (rows_pending).
  void ensureRows(int mi, const std::vector<SolverBody>& bodies);
  /// The thread that owns manifold `mi` of this substep (its pair's, ownerThread).
  int manifoldThread(int mi) const {
    return pair_work_[static_cast<std::size_t>(manifold_work_[static_cast<std::size_t>(mi)].pair)]
        .thread;
  }
  int threads() const { return workers_ ? workers_->threads() : 1; }
  std::vector<PairWork> pair_work_;
  std::vector<ManifoldWork> manifold_work_;
  /// Per thread, on cache lines of its own (a list's end moves with every manifold found): the
  /// manifolds of its pairs, and the shapes it placed (scratch).
  struct alignas(64) ThreadScratch {
    std::vector<Manifold> manifolds;
    int placed = 0;
    bool placed_frozen = false;  // a shape of a static or sleeping body among them
  };
  std::vector<ThreadScratch> scratch_;
  int placed_last_ = std::numeric_limits<int>::max();  // shapes placed in the last substep
  BroadPhase broad_;
  std::size_t expected_points_ = 0;
  std::vector<ContactPoint> points_;  // the first point_count_ are this substep's (never shrinks)
  int point_count_ = 0;
  std::vector<ContactManifold> manifolds_;
  std::vector<ManifoldKey> manifold_keys_;  // per manifold: what ContactBatches::build reads
  /// Positions in the state's (sorted) contacts of those of frozen (sleeping) pairs, kept
  /// unchanged: store() leaves the list alone when they are all of it and nothing is fresh (a
  /// sleeping scene copies no contacts).
  std::vector<int> carried_;
  bool all_carried_ = false;  // every contact is carried (nothing awake); carried_ left empty
  std::vector<ContactState> fresh_;   // this substep's contacts, sorted (scratch of store)
  std::vector<ContactState> merged_;  // scratch of store: carried and fresh, swapped in
  // Manifold reuse (ContactSettings::manifold_reuse_distance_m > 0 and angle > 0): the anchors
  // kept beside the contacts, in the same order, and their scratch lists.
  bool anchors_on_ = false;
  /// Per manifold while reuse is on: the pair's relative pose and normal, in body a's frame, when
  /// the narrow phase found its points (`valid` false for mesh pairs).
  std::vector<ContactAnchor> manifold_anchors_;
  std::vector<ContactAnchor> fresh_anchors_, merged_anchors_;
  std::vector<int> order_;       // scratch of store: the fallback sort's permutation
  std::vector<char> frozen_;     // per flat shape: its body does not move this substep
  std::vector<Vec3> placed_at_;  // per flat shape: the body pose its world shape has
  std::vector<Quat> placed_as_;
  std::vector<ArticulatedRows> articulated_;  // per point of the articulated manifolds
  // Articulated manifolds grouped by block: (first, count) ranges into articulated_order_.
  std::vector<int> articulated_order_;
  std::vector<std::pair<int, int>> articulated_groups_;
  std::vector<std::pair<int, int>> articulated_keys_;  // scratch of articulate()
  BlockArticulation* articulation_ = nullptr;
  ContactBatches batches_;
  bool batched_ = false;  // batches_ holds this substep's rows
  WorkerPool* workers_ = nullptr;
  /// Per thread, on a cache line of its own: how many levels of the sweep under way it has
  /// finished (sweepLevels), and its largest change.
  struct alignas(64) ThreadSlot {
    std::atomic<int> levels_done{0};
    double largest = 0.0;
  };
  std::unique_ptr<ThreadSlot[]> thread_slots_;
  int thread_slot_count_ = 0;
  /// Zeroes each thread's slot, then calls op(thread, level) for every level in sweep order
  /// (reverse: from the last), each thread for its own shares (ContactBatches), waiting only for
  /// the levels of other threads its share depends on: the order of every two manifolds that
  /// share a body is the sequential sweep's, for any thread count.
  template <class Op>
  void sweepLevels(bool reverse, Op&& op);
  /// The threads to share `count` items among (kPairsPerThread each at least), items going to the
  /// thread that owns their bodies; with one, it takes every item.
  int threadsFor(int count) const { return count >= kPairsPerThread * threads() ? threads() : 1; }
  /// The threads the level sweeps of this substep's manifolds use.
  int sweepThreads() const {
    return static_cast<int>(manifolds_.size()) >= kSweepManifoldsPerThread * threads() ? threads()
                                                                                       : 1;
  }
  /// Calls task(thread) once on each thread (the caller is thread 0).
  template <class Task>
  void runPerThread(int threads, Task&& task) {
    if (threads == 1 || !workers_)
      task(0);
    else
      workers_->run(threads, task);
  }
  std::vector<char> rigid_body_touch_, rigid_rotor_touch_;  // see rigidlyTouchesBody()
  bool articulable(const ContactManifold& m, const BlockArticulation& articulation) const;
};

}  // namespace sim::dynamics::detail
