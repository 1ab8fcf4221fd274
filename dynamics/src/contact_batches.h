// Internal header, not API: rigid contact manifolds solved eight at a time (kBatchLanes).
//
// The Gauss-Seidel sweep visits manifolds in a fixed order. A manifold only has to wait for the
// earlier ones that share a moving body (or a belt's rotor) with it, so each gets a level: one
// more than the highest level among those. Manifolds of one level share nothing and may run in
// any order, and visiting the levels in order (in reverse for a reverse sweep) keeps the order of
// every pair that does share something: the result is the sequential sweep's, bit for bit. A
// level's rigid manifolds without belt or torsion rows go through the solver in batches of
// kBatchLanes, one manifold per SIMD lane, with the same IEEE operations as the scalar sweep (no
// contraction, so with or without AVX). In a pile of columns a level holds one contact of every
// column.
//
// With several threads each manifold belongs to one thread, by its bodies, and each level is cut
// into the threads' shares. A thread runs its shares level after level and waits only where one
// of its manifolds shares a body with a manifold of another thread from an earlier level (from a
// later one in a reverse sweep): separate parts of a scene (the columns of a pile) never wait for
// each other, and a body's data stays in one processor's cache from stage to stage instead of
// crossing to the other processor at every level.
//
// (Colouring the contact graph instead, as wide solvers often do, would change the order to
// red-black along each column: 10 sweeps then no longer carry the load down a stack of 10, and
// the pile settles with its contacts beyond the slop.)
#pragma once

#include <cstdint>
#include <vector>

#include "rows.h"

namespace sim::dynamics::detail {

struct ContactPoint;
struct ContactManifold;

/// Four doubles, one per manifold (GCC/Clang vector extension: one AVX register, or two SSE2).
/// Aligned to 32 bytes explicitly: without AVX enabled GCC would give the type 16, while the
/// AVX2 clone of the solver loads it with aligned 32-byte moves.
using Lanes = double __attribute__((vector_size(32), aligned(32)));

/// Manifolds per batch, one per lane. Eight: two AVX2 registers (or one AVX-512) per value, so
/// each step of a batch's long chain of dependent operations has two independent halves in
/// flight; four lanes left the sweep waiting on that chain.
inline constexpr int kBatchLanes = 8;
using BatchLanes = double __attribute__((vector_size(8 * kBatchLanes), aligned(8 * kBatchLanes)));

/// The rows of kBatchLanes manifolds, structure of arrays. Empty lanes and the points beyond a
/// lane's own count have zero masses and directions, so their impulses stay zero.
struct alignas(64) ContactBatch {
  struct Row {
    BatchLanes ang_a[3], ang_b[3], dw_a[3], dw_b[3];
    BatchLanes mass, impulse;
  };
  struct Point {
    Row normal, tangent[2];
    BatchLanes target;  ///< Smallest allowed normal speed (m/s).
  };
  BatchLanes n[3], t[2][3];  ///< Normal and tangents, shared by a manifold's points.
  BatchLanes inv_mass_a, inv_mass_b, friction;
  BatchLanes k[4][4];  ///< ContactManifold::k
  Point point[4];
  int manifold[kBatchLanes];                     ///< -1: empty lane.
  int body_a[kBatchLanes], body_b[kBatchLanes];  ///< -1: empty lane (reads zero velocity).
  /// Whether the side moves (static and sleeping bodies do not).
  bool write_a[kBatchLanes], write_b[kBatchLanes];
  int count[kBatchLanes];  ///< Each lane's own point count (0: empty lane).
  int points;              ///< Largest point count over the lanes.
};

/// The widest form of the batched sweep this processor runs: 2 AVX-512 (a batch's eight lanes at
/// once), 1 AVX2, 0 the x86-64 baseline (both a batch in two halves of four lanes). All do the
/// same IEEE operations per lane: the same bits.
int batchSweepWidest();
/// For tests: sweep as `isa` (at most batchSweepWidest()) from now on; -1: the widest.
void forceBatchSweep(int isa);

/// Sets up the normal and tangent rows of a manifold's points (their dir, r_a and r_b set) and
/// the manifold's normal coupling numbers k, with the points in SIMD lanes. Each lane does the
/// IEEE operations of the one-row set-up in the same order (r x dir, I^-1 (r x dir),
/// 1 / (m_a^-1 + m_b^-1 + ...)), so the rows are the same bits. `extra_k[t]`: the belt rotors'
/// share of tangent row t's inverse mass.
void setupManifoldRows(ContactPoint* points, int count, const SolverBody& a, const SolverBody& b,
                       const double (&extra_k)[2], double (&k)[4][4]);

/// The position pass's measure of a manifold's points at the poses as they are now, points in
/// lanes: depth[i] = n.(p_b - p_a) + slop and mid[i] = (p_a + p_b) / 2 (m), where p = x + q local
/// with Eigen's quaternion rotation's operations in its order (same bits as the scalar code).
void measureManifold(const ContactPoint* points, int count, const Vec3& x_a, const Quat& q_a,
                     const Vec3& x_b, const Quat& q_b, const Vec3& n, double slop,
                     double (&depth)[4], Vec3 (&mid)[4]);

/// The thread, of `threads`, that owns body `body` of `bodies`: bodies are dealt out to the
/// threads in contiguous ranges of index.
inline int bodyThread(int body, int bodies, int threads) {
  return static_cast<int>(static_cast<long long>(body) * threads / bodies);
}

/// The first body thread `thread` of `threads` owns (bodyThread); thread `threads`: `bodies`.
inline int firstBodyOf(int thread, int bodies, int threads) {
  return static_cast<int>((static_cast<long long>(thread) * bodies + threads - 1) / threads);
}

/// The thread, of `threads`, that a manifold between bodies a and b belongs to: that of its
/// first moving body (a, else b), bodies dealt out to the threads in contiguous ranges of index.
/// Every stage shares its work by it, so a body's data stays with one thread.
int ownerThread(const std::vector<SolverBody>& bodies, int a, int b, int threads);

/// Whether a solver body moves this substep (static and sleeping bodies do not).
inline bool bodyMoves(const SolverBody& b) {
  return b.inv_mass > 0.0 || !b.inv_inertia.isZero(0.0);
}

/// What ContactBatches::build reads of a manifold: a few bytes, written by the thread that sets the
/// manifold up, instead of the manifold's and its points' cache lines (which that thread wrote,
/// and which cost far more to read from another processor).
struct ManifoldKey {
  int body_a = 0, body_b = 0;             ///< Solver body indices.
  int first = 0, count = 0;               ///< The manifold's points.
  int thread = 0;                         ///< ownerThread, for the solver's thread count.
  bool moves_a = false, moves_b = false;  ///< bodyMoves of each side.
  bool rotors = false;       ///< A belt row reaches a rotor (build reads the points' rotors).
  bool plain = false;        ///< Rigid rows only, no torsion, no belt: batchable.
  bool articulated = false;  ///< Solved by its block (ContactSolver::articulate): not levelled.
};

class ContactBatches {
 public:
  /// Levels the manifolds (in index order; articulated ones are left out), gives each to one of
  /// `threads` threads (ManifoldKey::thread, the thread of the first moving body it touches, so
  /// that a body's manifolds stay with one thread in every level and every stage), and places the
  /// plain manifolds of each level's share of each thread in batches (filled by fill()), the
  /// others to be solved one by one. `bodies`: the solver's body count; `rotors`: the number of
  /// motor rotors a belt row may reach.
  void build(const std::vector<ManifoldKey>& keys, const std::vector<ContactPoint>& points,
             int bodies, int rotors, int threads);
  int threads() const { return threads_; }
  /// Takes and writes storage for the batches of `manifolds` manifolds (ContactSolver::init).
  void reserve(int manifolds);
  /// Fills the batches of thread `thread`'s shares with their manifolds: the rows set up in the
  /// lanes (setupManifoldRows's operations, lane by lane: the same bits), the stored impulses,
  /// targets, directions and bodies copied.
  void fill(int thread, const std::vector<ContactManifold>& manifolds,
            const std::vector<ContactPoint>& points, const std::vector<SolverBody>& bodies);
  void clear() {
    levels_ = 0;
    share_batch_.assign(1, 0);
    share_scalar_.assign(1, 0);
    share_start_.assign(1, 0);
    scalar_.clear();
  }
  int levels() const { return levels_; }
  /// Solves thread `thread`'s batches of level `level`; returns the largest impulse change. The
  /// manifolds of one level share no moving body (nor rotor), so the threads' shares of a level
  /// may run at the same time.
  double solveShare(int level, int thread, std::vector<SolverBody>& bodies, bool reverse);
  /// Applies the stored impulses of thread `thread`'s batches of level `level` to their bodies
  /// (the warm start), point by point in each lane as applyRow does: the same bits.
  void warmStartShare(int level, int thread, std::vector<SolverBody>& bodies);
  /// Thread `thread`'s manifolds of level `level` (batched or not), in manifold order.
  const int* manifoldsBegin(int level, int thread) const {
    return by_share_.data() + share_start_[share(level, thread)];
  }
  const int* manifoldsEnd(int level, int thread) const {
    return by_share_.data() + share_start_[share(level, thread) + 1];
  }
  /// Those of them to be solved one by one.
  const int* scalarBegin(int level, int thread) const {
    return scalar_.data() + share_scalar_[share(level, thread)];
  }
  const int* scalarEnd(int level, int thread) const {
    return scalar_.data() + share_scalar_[share(level, thread) + 1];
  }
  /// How many levels thread `other` must have finished, in a sweep in forward (or reverse)
  /// level order, before thread `thread` may solve its share of level `level`: the ones in which
  /// `other` touched a body (or rotor) that this share touches. The sequential sweep's order of
  /// every two manifolds that share something is kept, so the result is the same for any
  /// thread count.
  int waitFor(int level, int thread, int other, bool reverse) const {
    const std::vector<int>& wait = reverse ? wait_reverse_ : wait_forward_;
    return wait[static_cast<std::size_t>(share(level, thread) * threads_ + other)];
  }
  /// Writes the impulses of thread `thread`'s batches back to their contact points.
  void storeImpulses(int thread, std::vector<ContactPoint>& points,
                     const std::vector<ContactManifold>& manifolds) const;

 private:
  int share(int level, int thread) const { return level * threads_ + thread; }
  /// The moving bodies (index) and then the rotors (`bodies` + rotor) a manifold touches.
  int touches(const ManifoldKey& key, const std::vector<ContactPoint>& points, int bodies,
              int (&out)[10]) const;
  void computeWaits(const std::vector<ManifoldKey>& keys, const std::vector<ContactPoint>& points,
                    int bodies, int rotors);

  std::vector<ContactBatch> batches_;  // grows only; the first batch_count_ are in use
  int batch_count_ = 0;
  int threads_ = 1;
  int levels_ = 0;
  // Shares (level, thread), numbered level * threads_ + thread:
  std::vector<int> share_batch_{0};   // share s's batches: [share_batch_[s], share_batch_[s+1])
  std::vector<int> share_scalar_{0};  // share s's scalar manifolds, likewise, in scalar_
  std::vector<int> share_start_{0};   // share s's manifolds, likewise, in by_share_
  std::vector<int> scalar_;
  std::vector<int> batch_lanes_;  // per batch, its kBatchLanes lanes' manifolds (-1: empty)
  std::vector<int> last_level_;   // per body, then per rotor: the level that last touched it
  std::vector<int> level_of_;     // per manifold, -1: skipped
  std::vector<int> share_of_;     // per manifold, -1: skipped
  std::vector<int> by_share_, share_next_;        // counting sort by share
  std::vector<int> wait_forward_, wait_reverse_;  // per share, per other thread (waitFor)
  std::vector<int> last_share_;  // per body, then per rotor: the share that last touched it
};

}  // namespace sim::dynamics::detail
