// Internal header, not API: rigid contact manifolds solved eight at a time (kBatchLanes).
//
// The Gauss-Seidel sweep visits manifolds in a fixed order. A manifold only has to wait for the
// earlier ones that share a moving body (or a belt's rotor) with it, so each gets a level: one
// more than the highest level among those. Manifolds of one level share nothing and may run in
// any order, and visiting the levels in order (in reverse for a reverse sweep) keeps the order of
// every pair that does share something: the result is the sequential sweep's, bit for bit. A
// level's rigid manifolds without belt or torsion rows go through the solver in batches of four,
// one manifold per SIMD lane, with the same IEEE operations as the scalar sweep (no contraction,
// so with or without AVX). In a pile of columns a level holds one contact of every column.
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
  int points;  ///< Largest point count over the lanes.
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

/// How ContactBatches::build treats a manifold.
enum class Scheduling : char {
  Skip,     ///< Solved elsewhere (articulated manifolds, by block).
  Scalar,   ///< Levelled, solved one by one (belt or torsion rows).
  Batched,  ///< Levelled, solved in a batch.
};

class ContactBatches {
 public:
  /// Levels the manifolds (in index order) and places each level's batchable ones in batches
  /// (filled by fill()). `rotors`: the number of motor rotors a belt row may reach.
  void build(const std::vector<ContactManifold>& manifolds, const std::vector<ContactPoint>& points,
             const std::vector<SolverBody>& bodies, int rotors,
             const std::vector<Scheduling>& scheduling);
  int batchCount() const { return batch_count_; }
  /// Fills batches [first, last) with their manifolds' rows (batches are independent: any
  /// ranges, in any order or at the same time).
  void fill(int first, int last, const std::vector<ContactManifold>& manifolds,
            const std::vector<ContactPoint>& points, const std::vector<SolverBody>& bodies);
  void clear() {
    batch_count_ = 0;
    level_batch_.assign(1, 0);
    level_scalar_.assign(1, 0);
    scalar_.clear();
  }
  int levels() const { return static_cast<int>(level_batch_.size()) - 1; }
  /// Solves level `level`'s batches; returns the largest impulse change.
  double solveLevel(int level, std::vector<SolverBody>& bodies, bool reverse) {
    return solveLevel(level, 0, levelBatches(level), bodies, reverse);
  }
  /// Level `level`'s batches number `levelBatches(level)`; they share no moving body, so any
  /// of them may be solved in any order or at the same time (WorkerPool).
  int levelBatches(int level) const { return level_batch_[level + 1] - level_batch_[level]; }
  /// Solves the level's batches [first, last); returns the largest impulse change.
  double solveLevel(int level, int first, int last, std::vector<SolverBody>& bodies, bool reverse);
  /// Every manifold of level `level` (batched or not), in manifold order.
  const int* levelManifoldsBegin(int level) const { return by_level_.data() + level_start_[level]; }
  const int* levelManifoldsEnd(int level) const {
    return by_level_.data() + level_start_[level + 1];
  }
  /// The manifolds of level `level` to be solved one by one.
  const int* scalarBegin(int level) const { return scalar_.data() + level_scalar_[level]; }
  const int* scalarEnd(int level) const { return scalar_.data() + level_scalar_[level + 1]; }
  /// Writes the impulses of batches [first, last) back to their contact points.
  void storeImpulses(int first, int last, std::vector<ContactPoint>& points,
                     const std::vector<ContactManifold>& manifolds) const;

 private:
  std::vector<ContactBatch> batches_;  // grows only; the first batch_count_ are in use
  int batch_count_ = 0;
  std::vector<int> level_batch_{0};   // level l's batches: [level_batch_[l], level_batch_[l+1])
  std::vector<int> level_scalar_{0};  // level l's scalar manifolds, likewise, in scalar_
  std::vector<int> scalar_;
  std::vector<int> batch_lanes_;  // per batch, its kBatchLanes lanes' manifolds (-1: empty)
  std::vector<int> last_level_;   // per body, then per rotor: the level that last touched it
  std::vector<int> level_of_;     // per manifold, -1: skipped
  std::vector<int> level_start_, by_level_, level_next_;  // counting sort by level
};

}  // namespace sim::dynamics::detail
