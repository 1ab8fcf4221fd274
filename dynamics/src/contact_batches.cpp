#include "contact_batches.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>

#include <immintrin.h>

#include "check.h"
#include "contacts.h"

namespace sim::dynamics::detail {

namespace {

// The hot helpers are forced inline so that the AVX2 clone of solveBatches (below) compiles them
// with AVX2 too.
#define SIM_LANES_INLINE [[gnu::always_inline]] inline

/// x in every lane of V (Lanes: a manifold's points; BatchLanes: a batch's manifolds).
template <class V = Lanes>
SIM_LANES_INLINE V splat(double x) {
  V v;
  for (int l = 0; l < static_cast<int>(sizeof(V) / sizeof(double)); ++l) v[l] = x;
  return v;
}
template <class V>
SIM_LANES_INLINE V minLanes(V a, V b) {
  return a < b ? a : b;
}
template <class V>
SIM_LANES_INLINE V maxLanes(V a, V b) {
  return a > b ? a : b;
}
template <class V>
SIM_LANES_INLINE V absLanes(V a) {
  return a < 0.0 ? -a : a;
}
/// x.y per lane, summed left to right as Eigen's 3-vector dot: (x0 y0 + x1 y1) + x2 y2.
template <class V>
SIM_LANES_INLINE V dot3(const V (&x)[3], const V (&y)[3]) {
  return x[0] * y[0] + x[1] * y[1] + x[2] * y[2];
}

/// The smallest lane of x, folded in vector halves.
template <class V>
SIM_LANES_INLINE double smallestLane(V x) {
  constexpr int n = static_cast<int>(sizeof(V) / sizeof(double));
  static_assert(n == 4 || n == 8);
  const auto fold = [](V a, V b) { return a < b ? a : b; };
  if constexpr (n == 8) {
    x = fold(x, __builtin_shufflevector(x, x, 4, 5, 6, 7, 0, 1, 2, 3));
    x = fold(x, __builtin_shufflevector(x, x, 2, 3, 0, 1, 6, 7, 4, 5));
    x = fold(x, __builtin_shufflevector(x, x, 1, 0, 3, 2, 5, 4, 7, 6));
  } else {
    x = fold(x, __builtin_shufflevector(x, x, 2, 3, 0, 1));
    x = fold(x, __builtin_shufflevector(x, x, 1, 0, 3, 2));
  }
  return x[0];
}

using B = BatchLanes;
/// Half a batch's lanes: the AVX2 and baseline sweeps take a batch in two halves, one after the
/// other (eight lanes at once do not fit their registers).
using HalfLanes = double __attribute__((vector_size(4 * kBatchLanes)));

/// Lanes of vector type V.
#define SIM_WIDTH(V) static_cast<int>(sizeof(V) / sizeof(double))

/// Lanes [H W, H W + W) of a batch value as a W-lane vector V: the whole value (V = BatchLanes,
/// H = 0) or one half (V = HalfLanes, H = 0 or 1). Copied (one vector load or store), not
/// aliased, so the half's type need not alias the whole's.
template <class V, int H>
SIM_LANES_INLINE V part(const B& x) {
  V v;
  std::memcpy(&v, reinterpret_cast<const char*>(&x) + H * sizeof(V), sizeof(V));
  return v;
}
template <class V, int H>
SIM_LANES_INLINE void put(B& x, const V& v) {
  std::memcpy(reinterpret_cast<char*>(&x) + H * sizeof(V), &v, sizeof(V));
}

template <class V, int H>
SIM_LANES_INLINE void gather(const std::vector<SolverBody>& bodies, const int (&index)[kBatchLanes],
                             V (&v)[3], V (&w)[3]) {
  for (int c = 0; c < 3; ++c) v[c] = w[c] = splat<V>(0.0);
  for (int l = 0; l < SIM_WIDTH(V); ++l) {
    const int body = index[H * SIM_WIDTH(V) + l];
    if (body < 0) continue;
    const SolverBody& b = bodies[body];
    for (int c = 0; c < 3; ++c) {
      v[c][l] = b.v[c];
      w[c][l] = b.w[c];
    }
  }
}

template <class V, int H>
SIM_LANES_INLINE void scatter(std::vector<SolverBody>& bodies, const int (&index)[kBatchLanes],
                              const bool (&write)[kBatchLanes], const V (&v)[3], const V (&w)[3]) {
  for (int l = 0; l < SIM_WIDTH(V); ++l) {
    if (!write[H * SIM_WIDTH(V) + l]) continue;
    SolverBody& b = bodies[index[H * SIM_WIDTH(V) + l]];
    for (int c = 0; c < 3; ++c) {
      b.v[c] = v[c][l];
      b.w[c] = w[c][l];
    }
  }
}

/// Row speed dir.(v_b - v_a) + ang_b.w_b - ang_a.w_a, per lane.
template <class V, int H>
SIM_LANES_INLINE V rowSpeed(const B (&batch_dir)[3], const ContactBatch::Row& r, const V (&dv)[3],
                            const V (&wa)[3], const V (&wb)[3]) {
  const V dir[3] = {part<V, H>(batch_dir[0]), part<V, H>(batch_dir[1]), part<V, H>(batch_dir[2])};
  const V ang_a[3] = {part<V, H>(r.ang_a[0]), part<V, H>(r.ang_a[1]), part<V, H>(r.ang_a[2])};
  const V ang_b[3] = {part<V, H>(r.ang_b[0]), part<V, H>(r.ang_b[1]), part<V, H>(r.ang_b[2])};
  return dot3(dir, dv) + dot3(ang_b, wb) - dot3(ang_a, wa);
}

/// ContactSolver::solveVelocity's rigid-manifold sweep over lanes [H W, H W + W) of a batch: W
/// manifolds of N points at a time.
template <int N, bool Reverse, class V, int H>
SIM_LANES_INLINE V solveBatch(ContactBatch& bt, std::vector<SolverBody>& bodies) {
#define SIM_PART(x) part<V, H>(x)
  V va[3], wa[3], vb[3], wb[3];
  gather<V, H>(bodies, bt.body_a, va, wa);
  gather<V, H>(bodies, bt.body_b, vb, wb);
  V largest = splat<V>(0.0);
  // Friction first, bounded by the current normal impulses: the Coulomb disc per point.
#pragma GCC unroll 4
  for (int kk = 0; kk < N; ++kk) {
    ContactBatch::Point& p = bt.point[Reverse ? N - 1 - kk : kk];
    V dv[3];
    for (int c = 0; c < 3; ++c) dv[c] = vb[c] - va[c];
    V fresh[2];
    for (int tt = 0; tt < 2; ++tt)
      fresh[tt] =
          SIM_PART(p.tangent[tt].impulse) -
          rowSpeed<V, H>(bt.t[tt], p.tangent[tt], dv, wa, wb) * SIM_PART(p.tangent[tt].mass);
    const V bound = SIM_PART(bt.friction) * SIM_PART(p.normal.impulse);
    const V len2 = fresh[0] * fresh[0] + fresh[1] * fresh[1];
    // Inside the cone by a margin no rounding can cross (the usual case for resting contacts)
    // in every lane: no scaling, and no square root or division. (Correctly rounded products
    // and root: len2 < b^2 (1 - 1e-14) gives sqrt(len2) < b (1 - 4e-15) with b^2 normal, which
    // b > 1e-150 ensures; otherwise the lane takes the full test.) Tested as the smallest lane
    // of min(thr - len2, bound - 1e-150) > 0, the sign of a difference being its comparison's:
    // GCC compiles a comparison's lane mask lane by lane in scalar code, a minimum to one
    // instruction. A NaN lane can only pass where the full test would not scale it either.
    const V thr = bound * bound * splat<V>(1.0 - 1e-14);
    if (!(smallestLane(minLanes(thr - len2, bound - splat<V>(1e-150))) > 0.0)) {
      V len = len2;
      for (int l = 0; l < SIM_WIDTH(V); ++l) len[l] = std::sqrt(len[l]);
      // len > bound implies len > 0 (bound >= 0), so the division is only used where it is finite.
      const V scale = len > bound ? bound / len : splat<V>(1.0);
      fresh[0] *= scale;
      fresh[1] *= scale;
    }
    if constexpr (kValidate) {
      for (int l = 0; l < SIM_WIDTH(V); ++l) {
        SIM_VALIDATE(!(bound[l] < 0.0),
                     "a contact's friction bound (mu * normal impulse) is negative");
        SIM_VALIDATE(
            !(fresh[0][l] * fresh[0][l] + fresh[1][l] * fresh[1][l] >
              bound[l] * bound[l] * (1.0 + kConeSlack)),
            "a contact's friction impulse is outside its Coulomb cone (|f| > mu * normal)");
      }
    }
    const V d0 = fresh[0] - SIM_PART(p.tangent[0].impulse);
    const V d1 = fresh[1] - SIM_PART(p.tangent[1].impulse);
    put<V, H>(p.tangent[0].impulse, fresh[0]);
    put<V, H>(p.tangent[1].impulse, fresh[1]);
    for (int c = 0; c < 3; ++c) {
      const V push = d0 * SIM_PART(bt.t[0][c]) + d1 * SIM_PART(bt.t[1][c]);
      va[c] -= SIM_PART(bt.inv_mass_a) * push;
      wa[c] -= d0 * SIM_PART(p.tangent[0].dw_a[c]) + d1 * SIM_PART(p.tangent[1].dw_a[c]);
      vb[c] += SIM_PART(bt.inv_mass_b) * push;
      wb[c] += d0 * SIM_PART(p.tangent[0].dw_b[c]) + d1 * SIM_PART(p.tangent[1].dw_b[c]);
    }
    largest = maxLanes(largest, maxLanes(absLanes(d0), absLanes(d1)));
  }
  // The normal rows: local alternating sweeps on the coupling numbers, then one body update.
  V speed[N], lambda[N], start[N];
  {
    V dv[3];
    for (int c = 0; c < 3; ++c) dv[c] = vb[c] - va[c];
    for (int i = 0; i < N; ++i) {
      speed[i] =
          rowSpeed<V, H>(bt.n, bt.point[i].normal, dv, wa, wb) - SIM_PART(bt.point[i].target);
      start[i] = lambda[i] = SIM_PART(bt.point[i].normal.impulse);
    }
  }
  constexpr int inner = N > 1 ? kManifoldSweeps : 1;
#pragma GCC unroll 16
  for (int pass = 0; pass < inner; ++pass) {
    const bool back = Reverse != (pass % 2 == 1);
#pragma GCC unroll 4
    for (int kk = 0; kk < N; ++kk) {
      const int i = back ? N - 1 - kk : kk;
      const V old = lambda[i];
      lambda[i] = maxLanes(splat<V>(0.0), old - speed[i] * SIM_PART(bt.point[i].normal.mass));
      const V d = lambda[i] - old;
#pragma GCC unroll 4
      for (int j = 0; j < N; ++j) speed[j] += SIM_PART(bt.k[j][i]) * d;
      largest = maxLanes(largest, absLanes(d));
    }
  }
  V sum = splat<V>(0.0), turn_a[3] = {}, turn_b[3] = {};
  for (int i = 0; i < N; ++i) {
    ContactBatch::Row& row = bt.point[i].normal;
    const V d = lambda[i] - start[i];
    put<V, H>(row.impulse, lambda[i]);
    sum += d;
    for (int c = 0; c < 3; ++c) {
      turn_a[c] += d * SIM_PART(row.dw_a[c]);
      turn_b[c] += d * SIM_PART(row.dw_b[c]);
    }
  }
  for (int c = 0; c < 3; ++c) {
    va[c] -= SIM_PART(bt.inv_mass_a) * sum * SIM_PART(bt.n[c]);
    wa[c] -= turn_a[c];
    vb[c] += SIM_PART(bt.inv_mass_b) * sum * SIM_PART(bt.n[c]);
    wb[c] += turn_b[c];
  }
  scatter<V, H>(bodies, bt.body_a, bt.write_a, va, wa);
  scatter<V, H>(bodies, bt.body_b, bt.write_b, vb, wb);
  return largest;
#undef SIM_PART
}

template <bool Reverse, class V, int H>
SIM_LANES_INLINE V solveAny(ContactBatch& bt, std::vector<SolverBody>& bodies) {
  switch (bt.points) {
    case 1: return solveBatch<1, Reverse, V, H>(bt, bodies);
    case 2: return solveBatch<2, Reverse, V, H>(bt, bodies);
    case 3: return solveBatch<3, Reverse, V, H>(bt, bodies);
    default: return solveBatch<4, Reverse, V, H>(bt, bodies);
  }
}

/// The batches [first, last) whole, eight lanes at a time (AVX-512: one register per value).
[[gnu::target("avx512f")]] double solveBatchesWide(ContactBatch* first, ContactBatch* last,
                                                   std::vector<SolverBody>& bodies, bool reverse) {
  B largest = splat<B>(0.0);
  for (ContactBatch* bt = first; bt != last; ++bt)
    largest = maxLanes(
        largest, reverse ? solveAny<true, B, 0>(*bt, bodies) : solveAny<false, B, 0>(*bt, bodies));
  double most = 0.0;
  for (int l = 0; l < kBatchLanes; ++l) most = std::max(most, largest[l]);
  return most;
}

/// The batches [first, last) in halves of four lanes (the lanes are independent manifolds).
SIM_LANES_INLINE double solveBatchesHalves(ContactBatch* first, ContactBatch* last,
                                           std::vector<SolverBody>& bodies, bool reverse) {
  using V = HalfLanes;
  V largest = splat<V>(0.0);
  for (ContactBatch* bt = first; bt != last; ++bt) {
    // Lanes fill in order: an empty first lane of the second half leaves that half empty (a
    // level's last batch), and it is skipped.
    const bool second = bt->manifold[SIM_WIDTH(V)] >= 0;
    if (reverse) {
      largest = maxLanes(largest, solveAny<true, V, 0>(*bt, bodies));
      if (second) largest = maxLanes(largest, solveAny<true, V, 1>(*bt, bodies));
    } else {
      largest = maxLanes(largest, solveAny<false, V, 0>(*bt, bodies));
      if (second) largest = maxLanes(largest, solveAny<false, V, 1>(*bt, bodies));
    }
  }
  double most = 0.0;
  for (int l = 0; l < SIM_WIDTH(V); ++l) most = std::max(most, largest[l]);
  return most;
}

/// AVX2: one register per half.
[[gnu::target("avx2")]] double solveBatchesAvx2(ContactBatch* first, ContactBatch* last,
                                                std::vector<SolverBody>& bodies, bool reverse) {
  return solveBatchesHalves(first, last, bodies, reverse);
}

/// The x86-64 baseline: two SSE2 registers per half.
double solveBatchesBaseline(ContactBatch* first, ContactBatch* last,
                            std::vector<SolverBody>& bodies, bool reverse) {
  return solveBatchesHalves(first, last, bodies, reverse);
}

/// Solves batches [first, last); returns the largest impulse change. The widest form this
/// processor runs, chosen once; all do the same IEEE operations per lane, so they give the same
/// bits (the test of the batched sweep and the pile's state hash check it on whichever runs).
std::atomic<int> g_forced_sweep{-1};

double solveBatches(ContactBatch* first, ContactBatch* last, std::vector<SolverBody>& bodies,
                    bool reverse) {
  static const int widest = batchSweepWidest();
  const int forced = g_forced_sweep.load(std::memory_order_relaxed);
  switch (forced >= 0 ? std::min(forced, widest) : widest) {
    case 2: return solveBatchesWide(first, last, bodies, reverse);
    case 1: return solveBatchesAvx2(first, last, bodies, reverse);
    default: return solveBatchesBaseline(first, last, bodies, reverse);
  }
}

/// ContactSolver::warmStart's applyRow over lanes [H W, H W + W) of a batch: each lane's points
/// in order, the normal row and then the two tangents, with applyRow's operations per component
/// (v -= (m^-1 lambda) dir, w -= lambda dw on side a; += on side b), so every body takes the same
/// bits as from the point-by-point warm start. A lane's points beyond its own count are left out:
/// adding their +0 would turn a velocity's -0 into +0.
template <class V, int H>
SIM_LANES_INLINE void warmStartBatch(const ContactBatch& bt, std::vector<SolverBody>& bodies) {
#define SIM_PART(x) part<V, H>(x)
  V va[3], wa[3], vb[3], wb[3];
  gather<V, H>(bodies, bt.body_a, va, wa);
  gather<V, H>(bodies, bt.body_b, vb, wb);
  V count;
  for (int l = 0; l < SIM_WIDTH(V); ++l) count[l] = bt.count[H * SIM_WIDTH(V) + l];
  const V inv_mass_a = SIM_PART(bt.inv_mass_a), inv_mass_b = SIM_PART(bt.inv_mass_b);
  for (int i = 0; i < bt.points; ++i) {
    const auto in = count > splat<V>(i);
    const auto apply = [&](const B(&dir)[3], const ContactBatch::Row& row) {
      const V lambda = SIM_PART(row.impulse);
      const V push_a = inv_mass_a * lambda, push_b = inv_mass_b * lambda;
      for (int c = 0; c < 3; ++c) {
        const V d = SIM_PART(dir[c]);
        va[c] = in ? va[c] - push_a * d : va[c];
        wa[c] = in ? wa[c] - lambda * SIM_PART(row.dw_a[c]) : wa[c];
        vb[c] = in ? vb[c] + push_b * d : vb[c];
        wb[c] = in ? wb[c] + lambda * SIM_PART(row.dw_b[c]) : wb[c];
      }
    };
    apply(bt.n, bt.point[i].normal);
    apply(bt.t[0], bt.point[i].tangent[0]);
    apply(bt.t[1], bt.point[i].tangent[1]);
  }
  scatter<V, H>(bodies, bt.body_a, bt.write_a, va, wa);
  scatter<V, H>(bodies, bt.body_b, bt.write_b, vb, wb);
#undef SIM_PART
}

[[gnu::target("avx512f")]] void warmStartBatchesWide(const ContactBatch* first,
                                                     const ContactBatch* last,
                                                     std::vector<SolverBody>& bodies) {
  for (const ContactBatch* bt = first; bt != last; ++bt) warmStartBatch<B, 0>(*bt, bodies);
}

SIM_LANES_INLINE void warmStartBatchesHalves(const ContactBatch* first, const ContactBatch* last,
                                             std::vector<SolverBody>& bodies) {
  for (const ContactBatch* bt = first; bt != last; ++bt) {
    warmStartBatch<HalfLanes, 0>(*bt, bodies);
    if (bt->manifold[SIM_WIDTH(HalfLanes)] >= 0) warmStartBatch<HalfLanes, 1>(*bt, bodies);
  }
}

[[gnu::target("avx2")]] void warmStartBatchesAvx2(const ContactBatch* first,
                                                  const ContactBatch* last,
                                                  std::vector<SolverBody>& bodies) {
  warmStartBatchesHalves(first, last, bodies);
}

void warmStartBatchesBaseline(const ContactBatch* first, const ContactBatch* last,
                              std::vector<SolverBody>& bodies) {
  warmStartBatchesHalves(first, last, bodies);
}

/// The widest form, as solveBatches (each gives the same bits).
void warmStartBatches(const ContactBatch* first, const ContactBatch* last,
                      std::vector<SolverBody>& bodies) {
  static const int widest = batchSweepWidest();
  const int forced = g_forced_sweep.load(std::memory_order_relaxed);
  switch (forced >= 0 ? std::min(forced, widest) : widest) {
    case 2: warmStartBatchesWide(first, last, bodies); break;
    case 1: warmStartBatchesAvx2(first, last, bodies); break;
    default: warmStartBatchesBaseline(first, last, bodies); break;
  }
}

// ThreadSanitizer instruments the resolver that target_clones makes, and the loader runs it before
// the sanitizer's runtime is up (every TSan binary crashed at load): TSan builds keep the
// baseline clone only, which gives the same bits (below).
#if defined(__SANITIZE_THREAD__)
#define SIMTRAINER_AVX2_CLONES
#else
#define SIMTRAINER_AVX2_CLONES [[gnu::target_clones("avx2", "default")]]
#endif

/// r x d per lane (Eigen's 3-vector cross product's operations).
template <class V>
SIM_LANES_INLINE void crossLanes(const V (&r)[3], const V (&d)[3], V (&out)[3]) {
  out[0] = r[1] * d[2] - r[2] * d[1];
  out[1] = r[2] * d[0] - r[0] * d[2];
  out[2] = r[0] * d[1] - r[1] * d[0];
}

/// m x per lane, summed as Eigen's 3 x 3 product does it on x86-64 (rows 0 and 1 as one SSE2
/// pair, left to right; row 2 on its own, the last two terms first); the bit-for-bit test of the
/// batched sweep and the pile's state hash check the match.
SIM_LANES_INLINE void turnLanes(const Mat3& m, const Lanes (&x)[3], Lanes (&out)[3]) {
  for (int i = 0; i < 2; ++i)
    out[i] = splat(m(i, 0)) * x[0] + splat(m(i, 1)) * x[1] + splat(m(i, 2)) * x[2];
  out[2] = splat(m(2, 0)) * x[0] + (splat(m(2, 1)) * x[1] + splat(m(2, 2)) * x[2]);
}

/// Two vectors of each of a manifold's points (members `first` and `second` of ContactPoint),
/// points in lanes; lanes past `count` are zero.
SIM_LANES_INLINE void pointLanes(const ContactPoint* points, int count, Vec3 ContactPoint::*first,
                                 Vec3 ContactPoint::*second, Lanes (&a)[3], Lanes (&b)[3]) {
  for (int c = 0; c < 3; ++c) a[c] = b[c] = splat(0.0);
  for (int i = 0; i < count; ++i)
    for (int c = 0; c < 3; ++c) {
      a[c][i] = (points[i].*first)[c];
      b[c][i] = (points[i].*second)[c];
    }
}

/// x + q local per lane, as Eigen's quaternion rotation: uv = 2 (q.vec x local),
/// then local + w uv + q.vec x uv.
SIM_LANES_INLINE void placeLanes(const Vec3& x, const Quat& q, const Lanes (&local)[3],
                                 Lanes (&out)[3]) {
  const Lanes qv[3] = {splat(q.x()), splat(q.y()), splat(q.z())};
  Lanes uv[3], turn[3];
  crossLanes(qv, local, uv);
  for (int c = 0; c < 3; ++c) uv[c] += uv[c];
  crossLanes(qv, uv, turn);
  const Lanes w = splat(q.w());
  for (int c = 0; c < 3; ++c) out[c] = splat(x[c]) + ((local[c] + w * uv[c]) + turn[c]);
}

}  // namespace

void ContactBatches::reserve(int manifolds) {
  // Full batches, and a part-filled one per kind in each level's share (a pile's column height of
  // levels, give or take).
  const int batches = manifolds / kBatchLanes + 64;
  if (static_cast<int>(batches_.size()) < batches)
    batches_.resize(static_cast<std::size_t>(batches));
  batch_lanes_.reserve(static_cast<std::size_t>(batches) * kBatchLanes);
}

int batchSweepWidest() {
  return __builtin_cpu_supports("avx512f") ? 2 : __builtin_cpu_supports("avx2") ? 1 : 0;
}

void forceBatchSweep(int isa) {
  g_forced_sweep.store(isa, std::memory_order_relaxed);
}

SIMTRAINER_AVX2_CLONES void measureManifold(const ContactPoint* points, int count, const Vec3& x_a,
                                            const Quat& q_a, const Vec3& x_b, const Quat& q_b,
                                            const Vec3& n, double slop, double (&depth)[4],
                                            Vec3 (&mid)[4]) {
  Lanes local_a[3], local_b[3];
  pointLanes(points, count, &ContactPoint::local_a, &ContactPoint::local_b, local_a, local_b);
  Lanes pa[3], pb[3], gap[3];
  placeLanes(x_a, q_a, local_a, pa);
  placeLanes(x_b, q_b, local_b, pb);
  for (int c = 0; c < 3; ++c) gap[c] = pb[c] - pa[c];
  const Lanes nn[3] = {splat(n.x()), splat(n.y()), splat(n.z())};
  const Lanes d = dot3(nn, gap) + splat(slop);
  Lanes half[3];
  for (int c = 0; c < 3; ++c) half[c] = splat(0.5) * (pa[c] + pb[c]);
  for (int i = 0; i < count; ++i) {
    depth[i] = d[i];
    mid[i] = Vec3(half[0][i], half[1][i], half[2][i]);
  }
}

SIMTRAINER_AVX2_CLONES void setupManifoldRows(ContactPoint* points, int count, const SolverBody& a,
                                              const SolverBody& b, const double (&extra_k)[2],
                                              double (&k)[4][4]) {
  Lanes ra[3], rb[3];
  pointLanes(points, count, &ContactPoint::r_a, &ContactPoint::r_b, ra, rb);
  const Lanes inv_mass_sum = splat(a.inv_mass + b.inv_mass);
  Lanes normal_ang_a[3], normal_ang_b[3], normal_dw_a[3], normal_dw_b[3];
  for (int row = 0; row < 3; ++row) {
    ContactRow& first = row == 0 ? points[0].normal : points[0].tangent[row - 1];
    Lanes dir[3], ang_a[3], ang_b[3], dw_a[3], dw_b[3];
    for (int c = 0; c < 3; ++c) dir[c] = splat(first.dir[c]);
    crossLanes(ra, dir, ang_a);
    crossLanes(rb, dir, ang_b);
    turnLanes(a.inv_inertia, ang_a, dw_a);
    turnLanes(b.inv_inertia, ang_b, dw_b);
    const Lanes kk = inv_mass_sum + dot3(ang_a, dw_a) + dot3(ang_b, dw_b) +
                     splat(row == 0 ? 0.0 : extra_k[row - 1]);
    const Lanes mass = kk > 0.0 ? splat(1.0) / kk : splat(0.0);
    for (int i = 0; i < count; ++i) {
      ContactRow& r = row == 0 ? points[i].normal : points[i].tangent[row - 1];
      for (int c = 0; c < 3; ++c) {
        r.ang_a[c] = ang_a[c][i];
        r.ang_b[c] = ang_b[c][i];
        r.dw_a[c] = dw_a[c][i];
        r.dw_b[c] = dw_b[c][i];
      }
      r.mass = mass[i];
    }
    if (row == 0)
      for (int c = 0; c < 3; ++c) {
        normal_ang_a[c] = ang_a[c];
        normal_ang_b[c] = ang_b[c];
        normal_dw_a[c] = dw_a[c];
        normal_dw_b[c] = dw_b[c];
      }
  }
  // k[r][c] = m_a^-1 + m_b^-1 + ang_a(r).dw_a(c) + ang_b(r).dw_b(c): lanes over c.
  for (int r = 0; r < count; ++r) {
    Lanes ang_a[3], ang_b[3];
    for (int c = 0; c < 3; ++c) {
      ang_a[c] = splat(normal_ang_a[c][r]);
      ang_b[c] = splat(normal_ang_b[c][r]);
    }
    const Lanes row = inv_mass_sum + dot3(ang_a, normal_dw_a) + dot3(ang_b, normal_dw_b);
    for (int c = 0; c < count; ++c) k[r][c] = row[c];
  }
}

namespace {

/// What the rows of a batch are set up from, manifolds in lanes: each point's arms, and each
/// side's world inverse inertia and the inverse masses' sum; zero in empty lanes and for the points
/// beyond a lane's own count.
struct BatchRowInputs {
  B r_a[4][3], r_b[4][3];
  B inv_inertia_a[3][3], inv_inertia_b[3][3];
  B inv_mass_sum;
};

/// m x per lane with a matrix per lane, summed as Eigen's 3 x 3 product does it on x86-64 (as
/// turnLanes).
template <class V>
SIM_LANES_INLINE void turnPerLane(const V (&m)[3][3], const V (&x)[3], V (&out)[3]) {
  for (int i = 0; i < 2; ++i) out[i] = m[i][0] * x[0] + m[i][1] * x[1] + m[i][2] * x[2];
  out[2] = m[2][0] * x[0] + (m[2][1] * x[1] + m[2][2] * x[2]);
}

// Lane masks for the rows' set-up. GCC 12 builds the mask of a comparison of eight-double
// vectors lane by lane in scalar code; the AVX-512 form takes its masks in a mask register
// instead (WideMask), the others as vectors of 0 or all ones.
struct WideMask {
  __mmask8 bits;
};
SIM_LANES_INLINE WideMask operator&(WideMask a, WideMask b) {
  return {static_cast<__mmask8>(a.bits & b.bits)};
}

/// The lanes [H W, H W + W) whose manifold has more than `i` points.
template <class V, int H>
SIM_LANES_INLINE auto lanesWithMoreThan(const ContactBatch& bt, int i) {
  if constexpr (sizeof(V) == sizeof(B)) {
    unsigned bits = 0;
    for (int l = 0; l < kBatchLanes; ++l) bits |= static_cast<unsigned>(bt.count[l] > i) << l;
    return WideMask{static_cast<__mmask8>(bits)};
  } else {
    decltype(V{} < V{}) mask;
    for (int l = 0; l < SIM_WIDTH(V); ++l) mask[l] = bt.count[H * SIM_WIDTH(V) + l] > i ? -1 : 0;
    return mask;
  }
}

/// x where `mask` is set, +0 elsewhere (exact: a bitwise and, or a zeroing move).
template <class M, class V>
SIM_LANES_INLINE V keepIf(M mask, V x) {
  M bits;
  std::memcpy(&bits, &x, sizeof(V));
  bits &= mask;
  std::memcpy(&x, &bits, sizeof(V));
  return x;
}
// (Not forced inline: the set-up's template is compiled for no target; setupBatchRowsWide,
// flattened, inlines these into its AVX-512 code.)
[[gnu::target("avx512f")]] inline B keepIf(WideMask mask, B x) {
  return reinterpret_cast<B>(_mm512_maskz_mov_pd(mask.bits, reinterpret_cast<__m512d>(x)));
}

/// setupManifoldRows's row mass where `mask` is set: 1 / kk where kk > 0, else +0.
template <class M, class V>
SIM_LANES_INLINE V massIf(M mask, V kk) {
  return keepIf(mask & (kk > splat<V>(0.0)), splat<V>(1.0) / kk);
}
[[gnu::target("avx512f")]] inline B massIf(WideMask mask, B kk) {
  const __m512d k = reinterpret_cast<__m512d>(kk);
  const __mmask8 positive = _mm512_cmp_pd_mask(k, _mm512_setzero_pd(), _CMP_GT_OQ);
  return reinterpret_cast<B>(
      _mm512_maskz_div_pd(static_cast<__mmask8>(mask.bits & positive), _mm512_set1_pd(1.0), k));
}

/// The rows' set-up (setupManifoldRows) of lanes [H W, H W + W) of a batch, one manifold per lane,
/// written into the batch: each lane does setupManifoldRows's IEEE operations in its order, so
/// the rows are the same bits; the points beyond a lane's count get zero rows. The normal,
/// tangents and the lanes' point counts must be in `bt` already.
template <class V, int H>
SIM_LANES_INLINE void setupBatchRowsPart(ContactBatch& bt, const BatchRowInputs& in) {
#define SIM_PART(x) part<V, H>(x)
  const V zero = splat<V>(0.0);
  V inv_inertia_a[3][3], inv_inertia_b[3][3];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      inv_inertia_a[r][c] = SIM_PART(in.inv_inertia_a[r][c]);
      inv_inertia_b[r][c] = SIM_PART(in.inv_inertia_b[r][c]);
    }
  const V inv_mass_sum = SIM_PART(in.inv_mass_sum);
  V dirs[3][3];
  for (int c = 0; c < 3; ++c) {
    dirs[0][c] = SIM_PART(bt.n[c]);
    dirs[1][c] = SIM_PART(bt.t[0][c]);
    dirs[2][c] = SIM_PART(bt.t[1][c]);
  }
  V normal_ang_a[4][3], normal_ang_b[4][3], normal_dw_a[4][3], normal_dw_b[4][3];
  for (int i = 0; i < 4; ++i) {
    const auto on = lanesWithMoreThan<V, H>(bt, i);
    V r_a[3], r_b[3];
    for (int c = 0; c < 3; ++c) {
      r_a[c] = SIM_PART(in.r_a[i][c]);
      r_b[c] = SIM_PART(in.r_b[i][c]);
    }
    for (int row = 0; row < 3; ++row) {
      V ang_a[3], ang_b[3], dw_a[3], dw_b[3];
      crossLanes(r_a, dirs[row], ang_a);
      crossLanes(r_b, dirs[row], ang_b);
      turnPerLane(inv_inertia_a, ang_a, dw_a);
      turnPerLane(inv_inertia_b, ang_b, dw_b);
      // + 0: setupManifoldRows adds the belt rotors' share, none in a batched manifold.
      const V kk = inv_mass_sum + dot3(ang_a, dw_a) + dot3(ang_b, dw_b) + zero;
      ContactBatch::Row& r = row == 0 ? bt.point[i].normal : bt.point[i].tangent[row - 1];
      for (int c = 0; c < 3; ++c) {
        put<V, H>(r.ang_a[c], keepIf(on, ang_a[c]));
        put<V, H>(r.ang_b[c], keepIf(on, ang_b[c]));
        put<V, H>(r.dw_a[c], keepIf(on, dw_a[c]));
        put<V, H>(r.dw_b[c], keepIf(on, dw_b[c]));
      }
      put<V, H>(r.mass, massIf(on, kk));
      if (row == 0)
        for (int c = 0; c < 3; ++c) {
          normal_ang_a[i][c] = ang_a[c];
          normal_ang_b[i][c] = ang_b[c];
          normal_dw_a[i][c] = dw_a[c];
          normal_dw_b[i][c] = dw_b[c];
        }
    }
  }
  // k[r][c] = m_a^-1 + m_b^-1 + ang_a(r).dw_a(c) + ang_b(r).dw_b(c) (ContactManifold::k).
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) {
      const V k = inv_mass_sum + dot3(normal_ang_a[r], normal_dw_a[c]) +
                  dot3(normal_ang_b[r], normal_dw_b[c]);
      put<V, H>(bt.k[r][c], keepIf(lanesWithMoreThan<V, H>(bt, std::max(r, c)), k));
    }
#undef SIM_PART
}

[[gnu::target("avx512f"), gnu::flatten]] void setupBatchRowsWide(ContactBatch& bt,
                                                                 const BatchRowInputs& in) {
  setupBatchRowsPart<B, 0>(bt, in);
}
[[gnu::target("avx2")]] void setupBatchRowsAvx2(ContactBatch& bt, const BatchRowInputs& in) {
  setupBatchRowsPart<HalfLanes, 0>(bt, in);
  setupBatchRowsPart<HalfLanes, 1>(bt, in);
}
void setupBatchRowsBaseline(ContactBatch& bt, const BatchRowInputs& in) {
  setupBatchRowsPart<HalfLanes, 0>(bt, in);
  setupBatchRowsPart<HalfLanes, 1>(bt, in);
}

/// The widest form, as solveBatches (each gives the same bits).
void setupBatchRows(ContactBatch& bt, const BatchRowInputs& in) {
  static const int widest = batchSweepWidest();
  const int forced = g_forced_sweep.load(std::memory_order_relaxed);
  switch (forced >= 0 ? std::min(forced, widest) : widest) {
    case 2: setupBatchRowsWide(bt, in); break;
    case 1: setupBatchRowsAvx2(bt, in); break;
    default: setupBatchRowsBaseline(bt, in); break;
  }
}

/// Fills lane `lane` of `bt` with manifold `mi`, or clears it when mi < 0: all but the rows'
/// set-up, whose inputs go to `in` (setupBatchRows).
void fillLane(ContactBatch& bt, BatchRowInputs& in, int lane, int mi,
              const std::vector<ContactManifold>& manifolds,
              const std::vector<ContactPoint>& points, const std::vector<SolverBody>& bodies) {
  bt.manifold[lane] = mi;
  const int count = mi >= 0 ? manifolds[mi].count : 0;
  bt.count[lane] = count;
  for (int i = 0; i < 4; ++i) {
    ContactBatch::Point& dst = bt.point[i];
    const ContactPoint* p = i < count ? &points[manifolds[mi].first + i] : nullptr;
    dst.normal.impulse[lane] = p ? p->normal_impulse : 0.0;
    dst.tangent[0].impulse[lane] = p ? p->tangent_impulse[0] : 0.0;
    dst.tangent[1].impulse[lane] = p ? p->tangent_impulse[1] : 0.0;
    dst.target[lane] = p ? p->target : 0.0;
    for (int c = 0; c < 3; ++c) {
      in.r_a[i][c][lane] = p ? p->r_a[c] : 0.0;
      in.r_b[i][c][lane] = p ? p->r_b[c] : 0.0;
    }
  }
  if (mi < 0) {
    bt.body_a[lane] = bt.body_b[lane] = -1;
    bt.write_a[lane] = bt.write_b[lane] = false;
    for (int c = 0; c < 3; ++c) bt.n[c][lane] = bt.t[0][c][lane] = bt.t[1][c][lane] = 0.0;
    bt.inv_mass_a[lane] = bt.inv_mass_b[lane] = bt.friction[lane] = 0.0;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) in.inv_inertia_a[r][c][lane] = in.inv_inertia_b[r][c][lane] = 0.0;
    in.inv_mass_sum[lane] = 0.0;
    return;
  }
  const ContactPoint& p0 = points[manifolds[mi].first];
  const SolverBody& a = bodies[p0.a];
  const SolverBody& b = bodies[p0.b];
  bt.body_a[lane] = p0.a;
  bt.body_b[lane] = p0.b;
  bt.write_a[lane] = bodyMoves(a);
  bt.write_b[lane] = bodyMoves(b);
  for (int c = 0; c < 3; ++c) {
    bt.n[c][lane] = p0.normal.dir[c];
    bt.t[0][c][lane] = p0.tangent[0].dir[c];
    bt.t[1][c][lane] = p0.tangent[1].dir[c];
  }
  bt.inv_mass_a[lane] = a.inv_mass;
  bt.inv_mass_b[lane] = b.inv_mass;
  bt.friction[lane] = p0.friction;
  bt.points = std::max(bt.points, count);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      in.inv_inertia_a[r][c][lane] = a.inv_inertia(r, c);
      in.inv_inertia_b[r][c][lane] = b.inv_inertia(r, c);
    }
  in.inv_mass_sum[lane] = a.inv_mass + b.inv_mass;
}

}  // namespace

void ContactBatches::fill(int thread, const std::vector<ContactManifold>& manifolds,
                          const std::vector<ContactPoint>& points,
                          const std::vector<SolverBody>& bodies) {
  for (int level = 0; level < levels_; ++level) {
    const int s = share(level, thread);
    for (int b = share_batch_[s]; b < share_batch_[s + 1]; ++b) {
      ContactBatch& bt = batches_[static_cast<std::size_t>(b)];
      bt.points = 0;
      BatchRowInputs in;
      for (int lane = 0; lane < kBatchLanes; ++lane)
        fillLane(bt, in, lane, batch_lanes_[static_cast<std::size_t>(b) * kBatchLanes + lane],
                 manifolds, points, bodies);
      setupBatchRows(bt, in);
    }
  }
}

int ownerThread(const std::vector<SolverBody>& bodies, int a, int b, int threads) {
  return bodyThread(bodyMoves(bodies[static_cast<std::size_t>(a)]) ? a : b,
                    static_cast<int>(bodies.size()), threads);
}

[[gnu::always_inline]] inline int ContactBatches::touches(const ManifoldKey& key,
                                                          const std::vector<ContactPoint>& points,
                                                          int bodies, int (&out)[10]) const {
  int n = 0;
  if (key.moves_a) out[n++] = key.body_a;
  if (key.moves_b) out[n++] = key.body_b;
  if (key.rotors)
    for (int k = key.first; k < key.first + key.count; ++k)
      for (const int rotor : points[k].rotor)
        if (rotor >= 0 && n < 10) out[n++] = bodies + rotor;
  return n;
}

void ContactBatches::build(const std::vector<ManifoldKey>& keys,
                           const std::vector<ContactPoint>& points, int bodies, int rotors,
                           int threads) {
  const int nm = static_cast<int>(keys.size());
  threads_ = threads;
  last_level_.assign(static_cast<std::size_t>(bodies + rotors), -1);
  level_of_.assign(static_cast<std::size_t>(nm), -1);
  share_of_.assign(static_cast<std::size_t>(nm), -1);
  int levels = 0;
  int touched[10];
  for (int mi = 0; mi < nm; ++mi) {
    if (keys[mi].articulated) continue;
    const int n = touches(keys[mi], points, bodies, touched);
    int level = 0;
    for (int i = 0; i < n; ++i) level = std::max(level, last_level_[touched[i]] + 1);
    for (int i = 0; i < n; ++i) last_level_[touched[i]] = level;
    level_of_[mi] = level;
    levels = std::max(levels, level + 1);
  }
  levels_ = levels;
  // Each manifold's share: its level, and its thread.
  for (int mi = 0; mi < nm; ++mi)
    if (level_of_[mi] >= 0) share_of_[mi] = share(level_of_[mi], threads > 1 ? keys[mi].thread : 0);
  // Counting sort by share (stable: manifold order within a share).
  const int shares = levels * threads;
  share_start_.assign(static_cast<std::size_t>(shares) + 1, 0);
  for (int mi = 0; mi < nm; ++mi)
    if (share_of_[mi] >= 0) ++share_start_[share_of_[mi] + 1];
  for (int s = 0; s < shares; ++s) share_start_[s + 1] += share_start_[s];
  by_share_.resize(static_cast<std::size_t>(share_start_[shares]));
  share_next_.assign(share_start_.begin(), share_start_.end() - 1);
  for (int mi = 0; mi < nm; ++mi)
    if (share_of_[mi] >= 0) by_share_[share_next_[share_of_[mi]]++] = mi;
  // Each share: its batchable manifolds kBatchLanes to a batch, the others listed for the scalar
  // sweep.
  // Single-point manifolds get batches of their own: the scalar sweep gives them one normal pass,
  // not kManifoldSweeps.
  share_batch_.assign(1, 0);
  share_scalar_.assign(1, 0);
  scalar_.clear();
  batch_lanes_.clear();
  batch_count_ = 0;
  for (int s = 0; s < shares; ++s) {
    // A batch with one lane in use costs more than the scalar sweep: a kind's last manifold
    // goes scalar when it would be alone in its batch.
    int left[2] = {0, 0};  // batchable manifolds of each kind not yet placed
    for (int at = share_start_[s]; at < share_start_[s + 1]; ++at)
      if (const ManifoldKey& key = keys[by_share_[at]]; key.plain) ++left[key.count > 1 ? 1 : 0];
    int open[2] = {-1, -1}, lanes[2] = {0, 0};  // the share's batch being filled, per kind
    for (int at = share_start_[s]; at < share_start_[s + 1]; ++at) {
      const int mi = by_share_[at];
      const int kind = keys[mi].count > 1 ? 1 : 0;
      if (!keys[mi].plain || (left[kind] == 1 && (open[kind] < 0 || lanes[kind] == kBatchLanes))) {
        scalar_.push_back(mi);
        continue;
      }
      --left[kind];
      if (open[kind] < 0 || lanes[kind] == kBatchLanes) {
        if (static_cast<int>(batches_.size()) <= batch_count_) batches_.emplace_back();
        open[kind] = batch_count_++;
        lanes[kind] = 0;
        batch_lanes_.insert(batch_lanes_.end(), kBatchLanes, -1);
      }
      batch_lanes_[static_cast<std::size_t>(open[kind]) * kBatchLanes + lanes[kind]++] = mi;
    }
    share_batch_.push_back(batch_count_);
    share_scalar_.push_back(static_cast<int>(scalar_.size()));
  }
  computeWaits(keys, points, bodies, rotors);
}

void ContactBatches::computeWaits(const std::vector<ManifoldKey>& keys,
                                  const std::vector<ContactPoint>& points, int bodies, int rotors) {
  const int shares = levels_ * threads_;
  wait_forward_.assign(static_cast<std::size_t>(shares * threads_), 0);
  wait_reverse_.assign(static_cast<std::size_t>(shares * threads_), 0);
  if (threads_ == 1) return;
  int touched[10];
  // Visiting the shares in sweep order, each body remembers the last share that touched it; a
  // share of another thread is one to wait for.
  for (const bool reverse : {false, true}) {
    std::vector<int>& wait = reverse ? wait_reverse_ : wait_forward_;
    last_share_.assign(static_cast<std::size_t>(bodies + rotors), -1);
    for (int k = 0; k < levels_; ++k) {
      const int level = reverse ? levels_ - 1 - k : k;
      for (int thread = 0; thread < threads_; ++thread) {
        const int s = share(level, thread);
        for (int at = share_start_[s]; at < share_start_[s + 1]; ++at) {
          const int n = touches(keys[by_share_[at]], points, bodies, touched);
          for (int i = 0; i < n; ++i) {
            int& last = last_share_[static_cast<std::size_t>(touched[i])];
            if (last >= 0 && last % threads_ != thread) {
              const int last_level = last / threads_;
              // Levels done by the other thread once it has done last_level, in this order.
              const int done = reverse ? levels_ - last_level : last_level + 1;
              int& w = wait[static_cast<std::size_t>(s * threads_ + last % threads_)];
              w = std::max(w, done);
            }
            last = s;
          }
        }
      }
    }
  }
}

double ContactBatches::solveShare(int level, int thread, std::vector<SolverBody>& bodies,
                                  bool reverse) {
  const int s = share(level, thread);
  if (share_batch_[s] >= share_batch_[s + 1]) return 0.0;
  return solveBatches(batches_.data() + share_batch_[s], batches_.data() + share_batch_[s + 1],
                      bodies, reverse);
}

void ContactBatches::warmStartShare(int level, int thread, std::vector<SolverBody>& bodies) {
  const int s = share(level, thread);
  warmStartBatches(batches_.data() + share_batch_[s], batches_.data() + share_batch_[s + 1],
                   bodies);
}

void ContactBatches::storeImpulses(int thread, std::vector<ContactPoint>& points,
                                   const std::vector<ContactManifold>& manifolds) const {
  for (int level = 0; level < levels_; ++level) {
    const int s = share(level, thread);
    for (int bi = share_batch_[s]; bi < share_batch_[s + 1]; ++bi) {
      const ContactBatch& bt = batches_[bi];
      for (int lane = 0; lane < kBatchLanes; ++lane) {
        if (bt.manifold[lane] < 0) continue;
        const ContactManifold& m = manifolds[bt.manifold[lane]];
        for (int i = 0; i < m.count; ++i) {
          ContactPoint& p = points[m.first + i];
          p.normal_impulse = bt.point[i].normal.impulse[lane];
          p.tangent_impulse[0] = bt.point[i].tangent[0].impulse[lane];
          p.tangent_impulse[1] = bt.point[i].tangent[1].impulse[lane];
        }
      }
    }
  }
}

}  // namespace sim::dynamics::detail
