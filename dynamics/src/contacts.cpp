#include "contacts.h"

#include "check.h"
#include "soft_row.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

namespace sim::dynamics::detail {

namespace {

double rowVelocity(const ContactRow& row, const SolverBody& a, const SolverBody& b) {
  return row.dir.dot(b.v - a.v) + row.ang_b.dot(b.w) - row.ang_a.dot(a.w);
}

/// rowVelocity of a point's normal row (direction d) before its rows are set up: its ang_a and
/// ang_b as setupManifoldRows makes them (r x d, crossLanes's operations).
double normalSpeed(const ContactPoint& p, const Vec3& d, const SolverBody& a, const SolverBody& b) {
  const auto cross = [&d](const Vec3& r) {
    return Vec3(r[1] * d[2] - r[2] * d[1], r[2] * d[0] - r[0] * d[2], r[0] * d[1] - r[1] * d[0]);
  };
  ContactRow row;
  row.dir = d;
  row.ang_a = cross(p.r_a);
  row.ang_b = cross(p.r_b);
  return rowVelocity(row, a, b);
}

// A side that does not move (static or asleep: no inverse mass, no rotation response) takes no
// change, and is not written: the manifolds of several threads share it (the ground), and its
// velocity would come out the same anyway.
void applyRow(const ContactRow& row, SolverBody& a, SolverBody& b, double lambda) {
  if (bodyMoves(a)) {
    a.v -= (a.inv_mass * lambda) * row.dir;
    a.w -= lambda * row.dw_a;
  }
  if (bodyMoves(b)) {
    b.v += (b.inv_mass * lambda) * row.dir;
    b.w += lambda * row.dw_b;
  }
}

/// The Coulomb cone: scales the tangent impulse pair onto the disc of radius `bound` when it lies
/// outside. A pair clearly inside (by a margin rounding cannot cross; see solveBatch in
/// contact_batches.cpp) needs no root.
void projectOntoDisc(double (&fresh)[2], double bound) {
  SIM_VALIDATE(!(bound < 0.0), "a contact's friction bound (mu * normal impulse) is negative");
  const double len2 = fresh[0] * fresh[0] + fresh[1] * fresh[1];
  if (len2 < bound * bound * (1.0 - 1e-14) && bound > 1e-150) return;
  const double len = std::sqrt(len2);
  if (len > bound) {
    const double scale = len > 0.0 ? bound / len : 0.0;
    fresh[0] *= scale;
    fresh[1] *= scale;
  }
  SIM_VALIDATE(!(fresh[0] * fresh[0] + fresh[1] * fresh[1] > bound * bound * (1.0 + kConeSlack)),
               "a contact's friction impulse is outside its Coulomb cone (|f| > mu * normal)");
}

/// The friction impulse of a point whose two tangent rows couple unevenly (a belt's: the rows
/// along and across a light track body on a geared rotor differ several times in effective mass):
/// the impulse in the Coulomb disc of radius `bound` nearest to the unbounded solution in the
/// rows' own metric, the 2x2 block `k` (J M^-1 J^T of the two rows, rotors included). Sliding,
/// the rows' speed after the update is then opposite to the impulse: friction opposes the slip
/// (maximum dissipation). Projecting each row's update radially, as projectOntoDisc does, makes
/// the impulse opposite to diag(mass) times the slip instead: up to 34 degrees off the slip on
/// the MF-4's tracks, which turned them 30 % too fast. `fresh` holds the impulses on entry,
/// `speed` the rows' speeds; on return, the new impulses.
void solveFrictionDisc(const Eigen::Matrix2d& k, const double (&speed)[2], double bound,
                       double (&fresh)[2]) {
  SIM_VALIDATE(!(bound < 0.0), "a contact's friction bound (mu * normal impulse) is negative");
  const double a = k(0, 0), b = k(0, 1), c = k(1, 1);
  const double det = a * c - b * b;
  const double start[2] = {fresh[0], fresh[1]};
  fresh[0] = start[0] - (c * speed[0] - b * speed[1]) / det;
  fresh[1] = start[1] - (a * speed[1] - b * speed[0]) / det;
  if (!(fresh[0] * fresh[0] + fresh[1] * fresh[1] <= bound * bound)) {
    if (!(bound > 0.0)) {
      fresh[0] = fresh[1] = 0.0;
    } else {
      // (k + s I) out = k start - v with s >= 0 such that |out| = bound: then
      // k (out - start) + v = -s out. Newton on 1/|out(s)| - 1/bound, concave and increasing in
      // s (d out / ds = -(k + s I)^-1 out), from s = 0 (where |out| > bound): monotone.
      const double g0 = a * start[0] + b * start[1] - speed[0];
      const double g1 = b * start[0] + c * start[1] - speed[1];
      double s = 0.0, out0 = fresh[0], out1 = fresh[1];
      for (int it = 0; it < 50; ++it) {
        const double p = a + s, q = c + s, d = p * q - b * b;
        out0 = (q * g0 - b * g1) / d;
        out1 = (p * g1 - b * g0) / d;
        const double len2 = out0 * out0 + out1 * out1;
        const double len = std::sqrt(len2);
        const double m0 = (q * out0 - b * out1) / d, m1 = (p * out1 - b * out0) / d;
        const double slope = (out0 * m0 + out1 * m1) / (len2 * len);  // d(1/|out|)/ds
        const double step = (1.0 / len - 1.0 / bound) / slope;
        s -= step;
        if (!(std::abs(step) > 1e-13 * (s + a + c))) break;
      }
      const double scale = bound / std::sqrt(out0 * out0 + out1 * out1);  // on the circle
      fresh[0] = out0 * scale;
      fresh[1] = out1 * scale;
    }
  }
  SIM_VALIDATE(!(fresh[0] * fresh[0] + fresh[1] * fresh[1] > bound * bound * (1.0 + kConeSlack)),
               "a contact's friction impulse is outside its Coulomb cone (|f| > mu * normal)");
}

/// The 2x2 block of a point's tangent rows: bodies and belts' rotors.
Eigen::Matrix2d tangentBlock(const ContactPoint& p, const SolverBody& a, const SolverBody& b,
                             const std::vector<double>& rotor_inv_inertia) {
  Eigen::Matrix2d k;
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 2; ++c) {
      const ContactRow& rr = p.tangent[r];
      const ContactRow& rc = p.tangent[c];
      k(r, c) = (a.inv_mass + b.inv_mass) * rr.dir.dot(rc.dir) + rr.ang_a.dot(rc.dw_a) +
                rr.ang_b.dot(rc.dw_b);
    }
  // Each distinct rotor adds (its coefficients' sums) outer product over its inertia.
  for (int side = 0; side < 2; ++side) {
    const int rotor = p.rotor[side];
    if (rotor < 0 || (side == 1 && p.rotor[0] == rotor)) continue;
    double coef[2];
    for (int t = 0; t < 2; ++t)
      coef[t] =
          p.rotor_coef[t][side] + (side == 0 && p.rotor[1] == rotor ? p.rotor_coef[t][1] : 0.0);
    const double inv = rotor_inv_inertia[static_cast<std::size_t>(rotor)];
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 2; ++c) k(r, c) += coef[r] * coef[c] * inv;
  }
  return k;
}

/// The local alternating sweeps over one manifold's N normal rows (see solveVelocity), on its
/// coupling numbers k. N and the sweep directions are compile-time, so the loops unroll and the
/// speeds and impulses stay in registers (written for a dynamic count, the indices were run-time
/// and every update went through memory). Returns the largest impulse change.
template <int N, bool Reverse>
double localNormalSweepsIn(const double (&k)[4][4], const double* mass, double* speed_io,
                           double* lambda_io) {
  double speed[N], lambda[N];
  for (int i = 0; i < N; ++i) {
    speed[i] = speed_io[i];
    lambda[i] = lambda_io[i];
  }
  double largest = 0.0;
  constexpr int inner = N > 1 ? kManifoldSweeps : 1;
#pragma GCC unroll 16
  for (int pass = 0; pass < inner; ++pass) {
    const bool back = Reverse != (pass % 2 == 1);
#pragma GCC unroll 4
    for (int kk = 0; kk < N; ++kk) {
      const int i = back ? N - 1 - kk : kk;
      const double old = lambda[i];
      lambda[i] = std::max(0.0, old - speed[i] * mass[i]);
      const double d = lambda[i] - old;
      if (d == 0.0) continue;
#pragma GCC unroll 4
      for (int j = 0; j < N; ++j) speed[j] += k[j][i] * d;
      largest = std::max(largest, std::abs(d));
    }
  }
  for (int i = 0; i < N; ++i) {
    speed_io[i] = speed[i];
    lambda_io[i] = lambda[i];
  }
  return largest;
}

template <int N>
double localNormalSweeps(const double (&k)[4][4], const double* mass, double* speed, double* lambda,
                         bool reverse) {
  return reverse ? localNormalSweepsIn<N, true>(k, mass, speed, lambda)
                 : localNormalSweepsIn<N, false>(k, mass, speed, lambda);
}

/// localNormalSweeps for a manifold of `count` points (1-4), unrolled per count.
double localNormalSweeps(int count, const double (&k)[4][4], const double* mass, double* speed,
                         double* lambda, bool reverse) {
  switch (count) {
    case 1: return localNormalSweeps<1>(k, mass, speed, lambda, reverse);
    case 2: return localNormalSweeps<2>(k, mass, speed, lambda, reverse);
    case 3: return localNormalSweeps<3>(k, mass, speed, lambda, reverse);
    default: return localNormalSweeps<4>(k, mass, speed, lambda, reverse);
  }
}

/// Two springs in series (N/m, or dampers in N s/m); 0 stands for rigid.
double seriesSpring(double a, double b) {
  if (a == 0.0) return b;
  if (b == 0.0) return a;
  return a * b / (a + b);
}

auto key(const ContactState& c) {
  return std::tie(c.shape_a, c.shape_b, c.feature);
}
[[gnu::always_inline]] inline bool keyLess(const ContactState& x, const ContactState& y) {
  return key(x) < key(y);
}

/// Distance within which a new contact point takes over an old point's impulses (m).
constexpr double kMatchDistance = 0.01;

/// The last substep's contact that point k of manifold m continues, among the pair's stored
/// contacts [first, last) (sorted by feature): the same feature, or else the nearest old point of
/// the pair whose feature the manifold no longer has, not claimed by an earlier point, within
/// kMatchDistance and with a normal within ~8 degrees. Records a fallback match in claimed[k].
const ContactState* previousContact(const ContactState* first, const ContactState* last,
                                    const Manifold& m, int k, const Vec3& point,
                                    const ContactState* claimed[4]) {
  const std::uint32_t feature = m.points[k].feature;
  const ContactState* exact = std::lower_bound(
      first, last, feature, [](const ContactState& c, std::uint32_t f) { return c.feature < f; });
  if (exact != last && exact->feature == feature) return exact;
  const ContactState* best = nullptr;
  double best_d2 = kMatchDistance * kMatchDistance;
  for (const ContactState* it = first; it != last; ++it) {
    bool taken = false;
    for (int q = 0; q < m.count && !taken; ++q) taken = m.points[q].feature == it->feature;
    for (int q = 0; q < k && !taken; ++q) taken = claimed[q] == it;
    if (taken || it->normal.dot(m.normal) < 0.99) continue;
    const double d2 = (it->point_m - point).squaredNorm();
    if (d2 < best_d2) {
      best_d2 = d2;
      best = it;
    }
  }
  claimed[k] = best;
  return best;
}

/// The pair's stored manifold [first, last) moved with the two bodies (poses x, q), when every
/// point is anchored and the pair's relative pose is within `distance` and the turn whose half
/// angle has cosine `cos_half_angle` of the pose the points were found at; false otherwise.
/// Separations are measured at the new poses along the normal fixed in body a.
bool reuseManifold(const ContactState* first, const ContactState* last,
                   const ContactAnchor* anchors, const Vec3& xa, const Quat& qa, const Vec3& xb,
                   const Quat& qb, double distance, double cos_half_angle, Manifold& out) {
  if (first == last || last - first > static_cast<std::ptrdiff_t>(out.points.size())) return false;
  for (std::ptrdiff_t k = 0; k < last - first; ++k)
    if (!anchors[k].valid) return false;
  const ContactAnchor& found_at = anchors[0];
  const Quat qa_inv = qa.conjugate();
  if ((qa_inv * (xb - xa) - found_at.b_in_a_m).squaredNorm() > distance * distance) return false;
  if (std::abs((qa_inv * qb).coeffs().dot(found_at.b_to_a.coeffs())) < cos_half_angle) return false;
  out.normal = qa * found_at.normal_local;
  out.count = static_cast<int>(last - first);
  for (int k = 0; k < out.count; ++k) {
    const ContactState& c = first[k];
    ManifoldPoint& p = out.points[static_cast<std::size_t>(k)];
    p.on_a = xa + qa * anchors[k].on_a_local_m;
    p.on_b = xb + qb * anchors[k].on_b_local_m;
    p.separation = out.normal.dot(p.on_b - p.on_a);
    p.feature = c.feature;
  }
  return true;
}

/// Orders each pair's run of contacts by feature (insertion sort: a run holds a few points, or a
/// mesh pair's triangles); `anchors`, when given, follow their contacts.
template <bool kWithAnchors>
void sortPairRuns(std::vector<ContactState>& contacts, std::vector<ContactAnchor>& anchors) {
  for (std::size_t run = 0; run < contacts.size();) {
    std::size_t end = run + 1;
    while (end < contacts.size() && contacts[end].shape_a == contacts[run].shape_a &&
           contacts[end].shape_b == contacts[run].shape_b)
      ++end;
    for (std::size_t i = run + 1; i < end; ++i) {
      for (std::size_t k = i; k > run && keyLess(contacts[k], contacts[k - 1]); --k) {
        std::swap(contacts[k], contacts[k - 1]);
        if constexpr (kWithAnchors) std::swap(anchors[k], anchors[k - 1]);
      }
    }
    run = end;
  }
}

}  // namespace

void ContactSolver::init(const Model& model) {
  shapes_.clear();
  shape_owner_.clear();
  for (std::size_t b = 0; b < model.bodies.size(); ++b) {
    for (const ShapeDef& s : model.bodies[b].shapes) {
      shapes_.push_back(s);
      shape_owner_.push_back(static_cast<int>(b));
    }
  }
  no_collide_.clear();
  for (const JointDef& j : model.joints) {
    if (j.collide_connected || j.body_a == kWorld) continue;
    no_collide_.emplace_back(std::min(j.body_a, j.body_b), std::max(j.body_a, j.body_b));
  }
  std::sort(no_collide_.begin(), no_collide_.end());
  world_shapes_.resize(shapes_.size());
  // Storage for the contacts such a scene typically has, taken and written now rather than in
  // its first steps with contacts: every page of fresh memory faults on its first write (about
  // 10 us each on this virtual machine), and growing these lists there made a 1000-box pile's
  // first impacts take 1.4x its steps at rest (bench/README.md, "The chain's runs and the pile's
  // first impacts"). Not the manifold list (a sixth of those pages): taken here, it slowed the
  // resting pile by 5 %.
  std::size_t moving_shapes = 0;
  for (const BodyDef& b : model.bodies)
    if (!b.is_static) moving_shapes += b.shapes.size();
  expected_points_ = kExpectedPointsPerShape * moving_shapes;
  const std::size_t manifolds = expected_points_ / 4;
  if (points_.size() < expected_points_) points_.resize(expected_points_);
  touchCapacity(fresh_, expected_points_);
  touchCapacity(merged_, expected_points_);
  if (reusesManifolds(model)) {  // and the anchors that go with them
    touchCapacity(fresh_anchors_, expected_points_);
    touchCapacity(merged_anchors_, expected_points_);
    touchCapacity(manifold_anchors_, manifolds);
  }
  batches_.reserve(static_cast<int>(manifolds));
}

void ContactSolver::prepare(const Model& model, const std::vector<Vec3>& positions,
                            const std::vector<Quat>& orientations,
                            const std::vector<SolverBody>& bodies, const State& s, double h) {
  point_count_ = 0;
  anchors_on_ = reusesManifolds(model);
  batches_.clear();
  batched_ = false;
  articulated_.clear();
  articulated_groups_.clear();
  articulation_ = nullptr;
  carried_.clear();
  all_carried_ = false;
  if (shapes_.empty()) {
    manifolds_.clear();
    manifold_keys_.clear();
    return;
  }
  const ContactSettings& cfg = model.contact;
  frozen_.resize(shapes_.size());
  placed_at_.resize(shapes_.size(), Vec3::Constant(std::numeric_limits<double>::quiet_NaN()));
  placed_as_.resize(shapes_.size(), Quat(0.0, 0.0, 0.0, 0.0));
  // Each shape by the thread of its body; with several threads only when the last substep
  // placed enough shapes to be worth handing over (the shapes of static and sleeping bodies are
  // only compared: a site of sleeping containers placed on one thread).
  const int shape_count = static_cast<int>(shapes_.size());
  // With no body awake every contact is carried (each has a dynamic body, now asleep): no pair
  // can have a moving shape, so no shape is placed and the broad phase is not asked. The shapes
  // are placed when something moves again: each against the pose it was last placed at, so a
  // pose changed meanwhile (a state edited between steps) is caught then.
  all_carried_ = std::none_of(bodies.begin(), bodies.end(),
                              [](const SolverBody& b) { return b.inv_mass > 0.0; });
  const int place_threads = all_carried_ ? 0 : threadsFor(placed_last_);
  if (scratch_.size() < static_cast<std::size_t>(threads()))
    scratch_.resize(static_cast<std::size_t>(threads()));
  if (!all_carried_)
    runPerThread(place_threads, [&](int t) {
      int placed = 0;
      bool placed_frozen = false;
      for (int i = 0; i < shape_count; ++i) {
        const int body = shape_owner_[i];
        if (place_threads > 1 &&
            bodyThread(body, static_cast<int>(bodies.size()), place_threads) != t)
          continue;
        frozen_[i] = bodies[body].inv_mass == 0.0;
        // Static and sleeping bodies keep their poses: their shapes are placed once. (Every
        // coordinate compared, without branches: most shapes of a resting scene get here.)
        const Vec3& p = positions[body];
        const Vec3& was_p = placed_at_[i];
        const Quat& q = orientations[body];
        const Quat& was_q = placed_as_[i];
        if ((p.x() == was_p.x()) & (p.y() == was_p.y()) & (p.z() == was_p.z()) &
            (q.w() == was_q.w()) & (q.x() == was_q.x()) & (q.y() == was_q.y()) &
            (q.z() == was_q.z()))
          continue;
        world_shapes_[i] =
            placeShape(shapes_[i], body, positions[body], orientations[body], cfg.margin_m);
        placed_at_[i] = positions[body];
        placed_as_[i] = orientations[body];
        ++placed;
        placed_frozen |= frozen_[i] != 0;
      }
      scratch_[static_cast<std::size_t>(t)].placed = placed;
      scratch_[static_cast<std::size_t>(t)].placed_frozen = placed_frozen;
    });
  placed_last_ = 0;
  bool frozen_boxes_changed = false;
  for (int t = 0; t < place_threads; ++t) {
    placed_last_ += scratch_[static_cast<std::size_t>(t)].placed;
    frozen_boxes_changed |= scratch_[static_cast<std::size_t>(t)].placed_frozen;
  }
  // Frozen pairs (sleeping, or sleeping on static) keep their last contacts as they were, so
  // the group wakes warm-started and queries still see the load it carries. `s.contacts` is
  // sorted, so the kept ones stay sorted. (All of them with no body awake: no scan.)
  bool carry = false;
  for (std::size_t at = 0; at < s.contacts.size() && !all_carried_; ++at) {
    const ContactState& c = s.contacts[at];
    if (at == 0 || c.shape_a != s.contacts[at - 1].shape_a ||
        c.shape_b != s.contacts[at - 1].shape_b) {
      const int oa = shape_owner_[c.shape_a], ob = shape_owner_[c.shape_b];
      carry = bodies[oa].inv_mass == 0.0 && bodies[ob].inv_mass == 0.0 &&
              (s.bodies[oa].asleep || s.bodies[ob].asleep);
    }
    if (carry) carried_.push_back(static_cast<int>(at));
  }
  if (all_carried_)
    pairs_.clear();
  else
    broad_.findPairs(world_shapes_, frozen_, frozen_boxes_changed, pairs_);
  // The pairs that may touch, with their stored contacts. The pairs come sorted, like the stored
  // contacts: one forward walk finds each pair's old points.
  pair_work_.clear();
  const ContactAnchor* const stored_anchors =
      anchors_on_ && s.contact_anchors.size() == s.contacts.size() ? s.contact_anchors.data()
                                                                   : nullptr;
  const ContactState* stored = s.contacts.data();
  const ContactState* const stored_end = stored + s.contacts.size();
  for (const auto& [i, j] : pairs_) {
    const auto before_pair = [&](const ContactState& c) {
      return c.shape_a < static_cast<std::uint32_t>(i) ||
             (c.shape_a == static_cast<std::uint32_t>(i) &&
              c.shape_b < static_cast<std::uint32_t>(j));
    };
    while (stored != stored_end && before_pair(*stored)) ++stored;
    const ContactState* pair_end = stored;
    while (pair_end != stored_end && pair_end->shape_a == static_cast<std::uint32_t>(i) &&
           pair_end->shape_b == static_cast<std::uint32_t>(j))
      ++pair_end;
    const int oa = shape_owner_[i], ob = shape_owner_[j];
    if (oa == ob) continue;
    const ShapeDef& da = shapes_[i];
    const ShapeDef& db = shapes_[j];
    if (!(da.group & db.mask) || !(db.group & da.mask)) continue;
    if (std::binary_search(no_collide_.begin(), no_collide_.end(),
                           std::pair{std::min(oa, ob), std::max(oa, ob)}))
      continue;
    const bool convex = da.type != ShapeType::TriangleMesh && db.type != ShapeType::TriangleMesh;
    pair_work_.push_back(
        {i, j, oa, ob, stored, pair_end, threads() > 1 ? ownerThread(bodies, oa, ob, threads()) : 0,
         0, 0, 0, convex, false,
         stored_anchors ? stored_anchors + (stored - s.contacts.data()) : nullptr});
  }
  const double cos_half_angle = std::cos(0.5 * cfg.manifold_reuse_angle_rad);
  // The narrow phase, pairs shared among the threads: one manifold for convex pairs, one per
  // touched triangle against a mesh, each thread's into its own list in pair order.
  const int pair_count = static_cast<int>(pair_work_.size());
  const int pair_threads = threadsFor(pair_count);
  runPerThread(pair_threads, [&](int t) {
    std::vector<Manifold>& found = scratch_[static_cast<std::size_t>(t)].manifolds;
    found.clear();
    for (int k = 0; k < pair_count; ++k) {
      PairWork& w = pair_work_[static_cast<std::size_t>(k)];
      if (pair_threads > 1 && w.thread != t) continue;
      const std::size_t before = found.size();
      w.reused = false;
      if (w.convex && w.anchors) {
        Manifold kept;
        w.reused = reuseManifold(w.stored, w.stored_end, w.anchors, positions[w.oa],
                                 orientations[w.oa], positions[w.ob], orientations[w.ob],
                                 cfg.manifold_reuse_distance_m, cos_half_angle, kept);
        if (w.reused) found.push_back(kept);
      }
      if (!w.reused) collideAppend(world_shapes_[w.i], world_shapes_[w.j], cfg.margin_m, found);
      w.list = t;
      w.found_first = static_cast<int>(before);
      w.found_count = static_cast<int>(found.size() - before);
    }
  });
  // Each manifold's place, in pair order: the same numbering for any thread count.
  manifold_work_.clear();
  for (int k = 0; k < pair_count; ++k) {
    const PairWork& w = pair_work_[static_cast<std::size_t>(k)];
    for (int f = 0; f < w.found_count; ++f) {
      const Manifold& m = scratch_[static_cast<std::size_t>(w.list)]
                              .manifolds[static_cast<std::size_t>(w.found_first + f)];
      manifold_work_.push_back({k, &m, point_count_});
      point_count_ += m.count;
    }
  }
  // The records are large: they are reused from earlier substeps, every field set below.
  if (points_.size() < static_cast<std::size_t>(point_count_))
    points_.resize(static_cast<std::size_t>(point_count_));
  // Kept from earlier substeps (setupManifold sets every field): growing it is the only
  // initialisation, and clearing it first made every substep zero the whole list once more.
  manifolds_.resize(manifold_work_.size());
  manifold_keys_.resize(manifolds_.size());
  manifold_anchors_.resize(anchors_on_ ? manifolds_.size() : 0);
  // The manifolds' rows, each by the thread of its pair: each writes only its own records.
  const int manifold_count = static_cast<int>(manifold_work_.size());
  const int setup_threads = threadsFor(manifold_count);
  runPerThread(setup_threads, [&](int t) {
    for (int mi = 0; mi < manifold_count; ++mi)
      if (setup_threads == 1 || manifoldThread(mi) == t)
        setupManifold(model, orientations, positions, bodies, h, mi);
  });
}

// Flattened: the quaternion rotations and the normal rows' speeds inlined (called out of line
// they took 1.7 % more instructions of a pile's step).
[[gnu::flatten]] void ContactSolver::setupManifold(const Model& model,
                                                   const std::vector<Quat>& orientations,
                                                   const std::vector<Vec3>& positions,
                                                   const std::vector<SolverBody>& bodies, double h,
                                                   int manifold_index) {
  const ContactSettings& cfg = model.contact;
  const ManifoldWork& mw = manifold_work_[static_cast<std::size_t>(manifold_index)];
  const PairWork& w = pair_work_[static_cast<std::size_t>(mw.pair)];
  const Manifold& m = *mw.found;
  const int i = w.i, j = w.j, oa = w.oa, ob = w.ob;
  const SolverBody& a = bodies[oa];
  const SolverBody& b = bodies[ob];
  const ShapeDef& da = shapes_[i];
  const ShapeDef& db = shapes_[j];
  const MaterialDef& ma = model.materials[da.material];
  const MaterialDef& mb = model.materials[db.material];
  const double mu = std::sqrt(ma.friction * mb.friction);
  const double e = std::max(ma.restitution, mb.restitution);
  const Vec3 n = m.normal;
  // Tangent basis and belt drive (belt.h), the same for every point of the manifold.
  const BeltCoupling belt = beltCoupling(model, da, db, orientations[oa], orientations[ob], n);
  const Vec3& t1 = belt.tangent[0];
  const Vec3& t2 = belt.tangent[1];

  ContactManifold& cm = manifolds_[static_cast<std::size_t>(manifold_index)];
  cm = ContactManifold{};
  cm.shape_a = i;
  cm.shape_b = j;
  cm.first = mw.first_point;
  cm.count = m.count;
  cm.friction = mu;
  cm.torsion_radius = std::max(ma.torsion_radius_m, mb.torsion_radius_m);
  if (anchors_on_) {
    ContactAnchor& found_at = manifold_anchors_[static_cast<std::size_t>(manifold_index)];
    if (w.reused) {
      found_at = w.anchors[0];
    } else {
      const Quat qa_inv = orientations[oa].conjugate();
      found_at.valid = w.convex;
      found_at.normal_local = qa_inv * n;
      found_at.b_in_a_m = qa_inv * (positions[ob] - positions[oa]);
      found_at.b_to_a = qa_inv * orientations[ob];
    }
  }
  // Soft materials: two in series; a rigid one (0) leaves the other's compliance.
  const double stiffness = seriesSpring(ma.contact_stiffness_npm, mb.contact_stiffness_npm);
  // A plain manifold (no belt, torsion or softness; ManifoldKey::plain) is set up in its batch:
  // only its first point takes the directions (ensureRows gives them to the others).
  cm.rows_pending = !hasBelt(belt.rotor) && cm.torsion_radius == 0.0 && !(stiffness > 0.0);
  const ContactState* claimed[4] = {nullptr, nullptr, nullptr, nullptr};
  ContactPoint* const manifold_points = points_.data() + cm.first;
  for (int k = 0; k < m.count; ++k) {
    const ManifoldPoint& mp = m.points[k];
    ContactPoint& p = manifold_points[k];
    p.a = oa;
    p.b = ob;
    p.manifold = manifold_index;
    p.feature = mp.feature;
    const Vec3 mid = 0.5 * (mp.on_a + mp.on_b);
    p.point = mid;
    p.r_a = mid - positions[oa];
    p.r_b = mid - positions[ob];
    if (w.reused) {  // exactly the anchors found, so that reuse does not drift
      p.local_a = w.anchors[k].on_a_local_m;
      p.local_b = w.anchors[k].on_b_local_m;
    } else {
      p.local_a = orientations[oa].conjugate() * (mp.on_a - positions[oa]);
      p.local_b = orientations[ob].conjugate() * (mp.on_b - positions[ob]);
    }
    p.separation = mp.separation;
    p.friction = mu;
    if (k == 0 || !cm.rows_pending) {
      p.normal.dir = n;
      p.tangent[0].dir = t1;
      p.tangent[1].dir = t2;
    }
    p.normal_impulse = p.tangent_impulse[0] = p.tangent_impulse[1] = 0.0;
    for (int side = 0; side < 2; ++side) {
      p.rotor[side] = belt.rotor[side];
      for (int t = 0; t < 2; ++t) p.rotor_coef[t][side] = belt.coef[t][side];
    }
  }
  if (!cm.rows_pending) setupManifoldRows(manifold_points, m.count, a, b, belt.extra_k, cm.k);
  if (stiffness > 0.0) {
    const double damping = seriesSpring(ma.contact_damping_nspm, mb.contact_damping_nspm);
    const SoftRowCoefficients soft = softRowCoefficients(stiffness, damping, h);
    cm.compliance = soft.gamma;
    cm.soft_bias = soft.bias;
    for (int k = 0; k < m.count; ++k) {
      cm.k[k][k] += soft.gamma;
      manifold_points[k].normal.mass = 1.0 / cm.k[k][k];
    }
  }
  for (int k = 0; k < m.count; ++k) {
    const ManifoldPoint& mp = m.points[k];
    ContactPoint& p = manifold_points[k];
    // Allowed normal speed: close the gap, no more; bounce on fast impacts that close it now.
    // A soft point pushes an overlap out as its spring does (the position passes leave it).
    const double vn = cm.rows_pending ? normalSpeed(p, n, a, b) : rowVelocity(p.normal, a, b);
    p.target = mp.separation > 0.0   ? -mp.separation / h
               : cm.compliance > 0.0 ? -cm.soft_bias * mp.separation / h
                                     : 0.0;
    if (e > 0.0 && vn < -cfg.restitution_threshold_mps && mp.separation + vn * h < 0.0)
      p.target = std::max(p.target, -e * vn);
    // Warm start from the same feature of the same pair last substep or, when the
    // feature is new (a clipped corner of equal faces flips between an incident vertex
    // and an edge crossing as the bodies sway by microns), from the nearest contact of
    // the pair that this manifold no longer has, within kMatchDistance and with the same
    // normal. Without the fallback the flips drop warm starts at random points and pump
    // energy into tall stacks.
    if (model.solver.warm_start) {
      if (const ContactState* old =
              previousContact(w.stored, w.stored_end, m, k, p.point, claimed)) {
        p.normal_impulse = old->normal_impulse;
        p.tangent_impulse[0] = old->friction_impulse.dot(t1);
        p.tangent_impulse[1] = old->friction_impulse.dot(t2);
        if (k == 0) cm.torsion_impulse = old->torsion_impulse;
      }
    }
  }
  ManifoldKey& key = manifold_keys_[static_cast<std::size_t>(manifold_index)];
  key.body_a = oa;
  key.body_b = ob;
  key.first = cm.first;
  key.count = cm.count;
  key.thread = w.thread;
  key.moves_a = bodyMoves(a);
  key.moves_b = bodyMoves(b);
  key.rotors = false;
  for (int k = 0; k < m.count; ++k) key.rotors = key.rotors || hasBelt(manifold_points[k].rotor);
  key.plain = !key.rotors && cm.torsion_radius == 0.0 && cm.compliance == 0.0;
  key.articulated = false;
  if (cm.torsion_radius > 0.0) {
    // Cdot = n.(w_b - w_a): a purely angular row.
    cm.torsion.dir = Vec3::Zero();
    cm.torsion.ang_a = n;
    cm.torsion.ang_b = n;
    cm.torsion.dw_a = a.inv_inertia * n;
    cm.torsion.dw_b = b.inv_inertia * n;
    const double k = n.dot(cm.torsion.dw_a) + n.dot(cm.torsion.dw_b);
    cm.torsion.mass = k > 0.0 ? 1.0 / k : 0.0;
  } else {
    cm.torsion_impulse = 0.0;
  }
}

void ContactSolver::ensureRows(int mi, const std::vector<SolverBody>& bodies) {
  ContactManifold& m = manifolds_[static_cast<std::size_t>(mi)];
  if (!m.rows_pending) return;
  const ContactPoint& p0 = points_[m.first];
  for (int k = m.first + 1; k < m.first + m.count; ++k) {
    points_[k].normal.dir = p0.normal.dir;
    points_[k].tangent[0].dir = p0.tangent[0].dir;
    points_[k].tangent[1].dir = p0.tangent[1].dir;
  }
  const double no_belt[2] = {0.0, 0.0};
  setupManifoldRows(points_.data() + m.first, m.count, bodies[p0.a], bodies[p0.b], no_belt, m.k);
  m.rows_pending = false;
}

void ContactSolver::warmStart(std::vector<SolverBody>& bodies, std::vector<double>& rotor_speed,
                              const std::vector<double>& rotor_inv_inertia, bool may_articulate) {
  // The points [first, last): a manifold's, or every one in order (with one thread).
  auto apply = [&](int first, int last) {
    for (int k = first; k < last; ++k) {
      const ContactPoint& p = points_[k];
      SolverBody& a = bodies[p.a];
      SolverBody& b = bodies[p.b];
      applyRow(p.normal, a, b, p.normal_impulse);
      for (int t = 0; t < 2; ++t) {
        applyRow(p.tangent[t], a, b, p.tangent_impulse[t]);
        warmStartBelt(p.rotor, p.rotor_coef, t, p.tangent_impulse[t], rotor_speed,
                      rotor_inv_inertia);
      }
    }
  };
  // Level by level as the sweeps (each thread its own manifolds): every body takes the same
  // impulses in the same order as point by point in index order, the batched manifolds' from
  // their batches, which the sweeps read next, instead of from the points. (Articulated
  // manifolds are not levelled; with one thread, a scene that may articulate some would build
  // the batches twice.)
  if (articulated_groups_.empty() && (!may_articulate || sweepThreads() > 1)) {
    if (!batched_) batch(bodies, static_cast<int>(rotor_speed.size()));
    sweepLevels(false, [&](int t, int level) {
      batches_.warmStartShare(level, t, bodies);
      for (const int* mi = batches_.scalarBegin(level, t); mi != batches_.scalarEnd(level, t);
           ++mi) {
        const ContactManifold& m = manifolds_[static_cast<std::size_t>(*mi)];
        apply(m.first, m.first + m.count);
      }
    });
  } else {
    for (int mi = 0; mi < static_cast<int>(manifolds_.size()); ++mi) ensureRows(mi, bodies);
    apply(0, point_count_);
  }
  for (const ContactManifold& m : manifolds_) {
    if (m.torsion_impulse != 0.0) {
      const ContactPoint& p = points_[m.first];
      applyRow(m.torsion, bodies[p.a], bodies[p.b], m.torsion_impulse);
    }
  }
}

double ContactSolver::solveVelocity(std::vector<SolverBody>& bodies,
                                    std::vector<double>& rotor_speed,
                                    const std::vector<double>& rotor_inv_inertia, bool reverse,
                                    double tolerance) {
  double largest = 0.0;
  // The manifolds on the links of one block first, in a few local sweeps of alternating order.
  // They are coupled through the whole mechanism (a jaw's contact moves the other jaw through
  // the repeater), so a single sweep would hand the first one most of a symmetric squeeze and
  // the object's other contacts (its friction on the ground) would lock the lopsided split in.
  // The sweeps stop once one changes no impulse by more than the solver's tolerance (at 0, once
  // one changes nothing: the next would not either).
  for (const auto& [first, count] : articulated_groups_) {
    const int passes = count > 1 ? kManifoldSweeps : 1;
    for (int pass = 0; pass < passes; ++pass) {
      const bool back = reverse != (pass % 2 == 1);
      double changed = 0.0;
      for (int k = 0; k < count; ++k) {
        ContactManifold& m = manifolds_[articulated_order_[first + (back ? count - 1 - k : k)]];
        changed = std::max(changed, solveArticulated(m, bodies, rotor_speed, reverse));
      }
      largest = std::max(largest, changed);
      if (changed <= tolerance) break;
    }
  }
  if (!batched_) batch(bodies, static_cast<int>(rotor_speed.size()));
  // The others level by level (see ContactBatches): the sequential sweep's order, each thread
  // its share of each level, kBatchLanes manifolds at a time and then the scalar ones.
  sweepLevels(reverse, [&](int t, int level) {
    double& mine = thread_slots_[t].largest;
    mine = std::max(mine, batches_.solveShare(level, t, bodies, reverse));
    for (const int* mi = batches_.scalarBegin(level, t); mi != batches_.scalarEnd(level, t); ++mi)
      mine = std::max(mine,
                      solveRigid(manifolds_[*mi], bodies, rotor_speed, rotor_inv_inertia, reverse));
  });
  for (int t = 0; t < batches_.threads(); ++t)
    largest = std::max(largest, thread_slots_[t].largest);
  return largest;
}

template <class Op>
void ContactSolver::sweepLevels(bool reverse, Op&& op) {
  const int threads = batches_.threads();
  const int levels = batches_.levels();
  if (thread_slot_count_ < threads) {
    thread_slots_ = std::make_unique<ThreadSlot[]>(static_cast<std::size_t>(threads));
    thread_slot_count_ = threads;
  }
  ThreadSlot* slots = thread_slots_.get();
  for (int t = 0; t < threads; ++t) {
    slots[t].largest = 0.0;
    slots[t].levels_done.store(0, std::memory_order_relaxed);
  }
  if (threads == 1) {
    for (int k = 0; k < levels; ++k) op(0, reverse ? levels - 1 - k : k);
    return;
  }
  runPerThread(threads, [&](int t) {
    try {
      for (int k = 0; k < levels; ++k) {
        const int level = reverse ? levels - 1 - k : k;
        for (int other = 0; other < threads; ++other)
          if (other != t)
            waitAtLeast(slots[other].levels_done, batches_.waitFor(level, t, other, reverse));
        op(t, level);
        slots[t].levels_done.store(k + 1, std::memory_order_release);
      }
    } catch (...) {
      // Nobody waits for a thread that stopped.
      slots[t].levels_done.store(std::numeric_limits<int>::max(), std::memory_order_release);
      throw;
    }
  });
}

double ContactSolver::solveRigid(ContactManifold& m, std::vector<SolverBody>& bodies,
                                 std::vector<double>& rotor_speed,
                                 const std::vector<double>& rotor_inv_inertia, bool reverse) {
  double largest = 0.0;
  // Friction first (bounded by the current normal impulses); the normal rows, solved last,
  // then hold non-penetration.
  for (int kk = 0; kk < m.count; ++kk) {
    ContactPoint& p = points_[reverse ? m.first + m.count - 1 - kk : m.first + kk];
    SolverBody& a = bodies[p.a];
    SolverBody& b = bodies[p.b];
    // Coulomb cone: both tangent rows are solved together and their impulse vector is
    // projected onto the disc of radius mu * normal impulse. (Clamping each row to +-mu lambda
    // separately, a pyramid, lets a track sliding lengthwise still resist sideways with full
    // friction, and a skid-steered chassis could not turn.)
    const double bound = p.friction * p.normal_impulse;
    double fresh[2];
    if (hasBelt(p.rotor)) {
      double speed[2];
      for (int t = 0; t < 2; ++t) {
        speed[t] = rowVelocity(p.tangent[t], a, b);
        addBeltSpeed(speed[t], p.rotor, p.rotor_coef, t, rotor_speed);
        fresh[t] = p.tangent_impulse[t];
      }
      solveFrictionDisc(tangentBlock(p, a, b, rotor_inv_inertia), speed, bound, fresh);
    } else {
      for (int t = 0; t < 2; ++t) {
        const ContactRow& row = p.tangent[t];
        fresh[t] = p.tangent_impulse[t] - rowVelocity(row, a, b) * row.mass;
      }
      projectOntoDisc(fresh, bound);
    }
    // Both rows' changes reach the bodies in one update.
    const double d0 = fresh[0] - p.tangent_impulse[0], d1 = fresh[1] - p.tangent_impulse[1];
    p.tangent_impulse[0] = fresh[0];
    p.tangent_impulse[1] = fresh[1];
    if (d0 == 0.0 && d1 == 0.0) continue;
    const Vec3 push = d0 * p.tangent[0].dir + d1 * p.tangent[1].dir;
    if (bodyMoves(a)) {  // see applyRow
      a.v -= a.inv_mass * push;
      a.w -= d0 * p.tangent[0].dw_a + d1 * p.tangent[1].dw_a;
    }
    if (bodyMoves(b)) {
      b.v += b.inv_mass * push;
      b.w += d0 * p.tangent[0].dw_b + d1 * p.tangent[1].dw_b;
    }
    applyBelt(p.rotor, p.rotor_coef, d0, d1, rotor_speed, rotor_inv_inertia);
    largest = std::max(largest, std::max(std::abs(d0), std::abs(d1)));
  }
  // The points of one manifold share both bodies, so they fight through the bodies' rotation
  // and a single sweep leaves a lopsided split (a tilting torque). A few local sweeps,
  // alternating direction, split the load evenly. They run on the manifold's coupling numbers
  // (speeds are linear in the impulses, so this is the same Gauss-Seidel, not an
  // approximation) and the bodies take the sum of the changes once.
  {
    const int first = m.first, count = m.count;
    SolverBody& a = bodies[points_[first].a];
    SolverBody& b = bodies[points_[first].b];
    double speed[4], lambda[4], start[4];
    for (int i = 0; i < count; ++i) {
      const ContactPoint& p = points_[first + i];
      speed[i] = rowVelocity(p.normal, a, b) - p.target + m.compliance * p.normal_impulse;
      start[i] = lambda[i] = p.normal_impulse;
    }
    double mass[4] = {};  // zeroed: GCC cannot see that count bounds the reads
    for (int i = 0; i < count; ++i) mass[i] = points_[first + i].normal.mass;
    largest = std::max(largest, localNormalSweeps(count, m.k, mass, speed, lambda, reverse));
    double sum = 0.0;
    Vec3 turn_a = Vec3::Zero(), turn_b = Vec3::Zero();
    for (int i = 0; i < count; ++i) {
      ContactRow& row = points_[first + i].normal;
      const double d = lambda[i] - start[i];
      points_[first + i].normal_impulse = lambda[i];
      sum += d;
      turn_a += d * row.dw_a;
      turn_b += d * row.dw_b;
    }
    const Vec3& n = points_[first].normal.dir;
    if (bodyMoves(a)) {  // see applyRow
      a.v -= (a.inv_mass * sum) * n;
      a.w -= turn_a;
    }
    if (bodyMoves(b)) {
      b.v += (b.inv_mass * sum) * n;
      b.w += turn_b;
    }
  }
  if (m.torsion_radius > 0.0) {
    const ContactPoint& p = points_[m.first];
    SolverBody& a = bodies[p.a];
    SolverBody& b = bodies[p.b];
    const double d = solveTorsion(m, a, b);
    if (d != 0.0) {
      applyRow(m.torsion, a, b, d);
      largest = std::max(largest, std::abs(d));
    }
  }
  return largest;
}

void ContactSolver::batch(const std::vector<SolverBody>& bodies, int rotors) {
  batches_.build(manifold_keys_, points_, static_cast<int>(bodies.size()), rotors, sweepThreads());
  runPerThread(batches_.threads(), [&](int t) {
    batches_.fill(t, manifolds_, points_, bodies);
    for (int level = 0; level < batches_.levels(); ++level)
      for (const int* mi = batches_.scalarBegin(level, t); mi != batches_.scalarEnd(level, t); ++mi)
        ensureRows(*mi, bodies);
  });
  batched_ = true;
}

void ContactSolver::unbatch() {
  if (!batched_) return;
  runPerThread(batches_.threads(), [&](int t) { batches_.storeImpulses(t, points_, manifolds_); });
  batches_.clear();
  batched_ = false;
}

// The torsion row's new impulse, bounded by mu * radius * the manifold's normal impulse; returns
// its change.
double ContactSolver::solveTorsion(ContactManifold& m, const SolverBody& a,
                                   const SolverBody& b) const {
  double normal_sum = 0.0;
  for (int k = m.first; k < m.first + m.count; ++k) normal_sum += points_[k].normal_impulse;
  const double bound = m.friction * m.torsion_radius * normal_sum;
  SIM_VALIDATE(!(bound < 0.0), "a contact's torsion bound (mu * radius * normal) is negative");
  const double v = m.torsion.ang_b.dot(b.w) - m.torsion.ang_a.dot(a.w);
  const double old = m.torsion_impulse;
  m.torsion_impulse = std::clamp(old - v * m.torsion.mass, -bound, bound);
  return m.torsion_impulse - old;
}

// One side a block link, the other outside every block (two links keep rigid rows: Gauss-Seidel
// between them and their blocks), and no belt (its rows reach a rotor).
bool ContactSolver::articulable(const ContactManifold& m,
                                const BlockArticulation& articulation) const {
  const ContactPoint& p0 = points_[m.first];
  if (articulation.isLink(p0.a) == articulation.isLink(p0.b)) return false;
  if (m.compliance != 0.0) return false;
  for (int k = m.first; k < m.first + m.count; ++k)
    if (hasBelt(points_[k].rotor)) return false;
  return true;
}

bool ContactSolver::wouldArticulate(const BlockArticulation& articulation) const {
  for (const ContactManifold& m : manifolds_)
    if (articulable(m, articulation)) return true;
  return false;
}

void ContactSolver::articulate(const std::vector<SolverBody>& bodies,
                               BlockArticulation& articulation) {
  unbatch();
  articulation_ = &articulation;
  articulated_.clear();
  rigid_body_touch_.assign(bodies.size(), 0);
  rigid_rotor_touch_.clear();
  for (ContactManifold& m : manifolds_) {
    m.articulated_side = -1;
    manifold_keys_[static_cast<std::size_t>(&m - manifolds_.data())].articulated = false;
    const ContactPoint& p0 = points_[m.first];
    if (!articulable(m, articulation)) {
      rigid_body_touch_[p0.a] = rigid_body_touch_[p0.b] = 1;
      for (int k = m.first; k < m.first + m.count; ++k) {
        for (const int rotor : points_[k].rotor) {
          if (rotor < 0) continue;
          if (rigid_rotor_touch_.size() <= static_cast<std::size_t>(rotor))
            rigid_rotor_touch_.resize(static_cast<std::size_t>(rotor) + 1, 0);
          rigid_rotor_touch_[rotor] = 1;
        }
      }
      continue;
    }
    ensureRows(static_cast<int>(&m - manifolds_.data()), bodies);
    const int side = articulation.isLink(p0.a) ? 0 : 1;
    const Mat6& phi = *articulation.response(side == 0 ? p0.a : p0.b);
    const SolverBody& other = bodies[side == 0 ? p0.b : p0.a];
    m.articulated_side = side;
    manifold_keys_[static_cast<std::size_t>(&m - manifolds_.data())].articulated = true;
    m.articulated_first = static_cast<int>(articulated_.size());
    // The row's generalised direction on the link (its impulse acts on b with +, on a with -).
    auto onLink = [side](const ContactRow& row) {
      Vec6 g;
      if (side == 1)
        g << row.dir, row.ang_b;
      else
        g << -row.dir, -row.ang_a;
      return g;
    };
    auto onOther = [&](const ContactRow& r, const ContactRow& c) {
      return side == 1 ? other.inv_mass * r.dir.dot(c.dir) + r.ang_a.dot(c.dw_a)
                       : other.inv_mass * r.dir.dot(c.dir) + r.ang_b.dot(c.dw_b);
    };
    auto setUp = [&](ContactRow& row, Vec6& dx) {
      const Vec6 g = onLink(row);
      dx = phi * g;
      const double k = onOther(row, row) + g.dot(dx);
      row.mass = k > 0.0 ? 1.0 / k : 0.0;
    };
    for (int i = 0; i < m.count; ++i) {
      ContactPoint& p = points_[m.first + i];
      ArticulatedRows rows;
      setUp(p.normal, rows.normal);
      setUp(p.tangent[0], rows.tangent[0]);
      setUp(p.tangent[1], rows.tangent[1]);
      rows.torsion.setZero();
      if (i == 0 && m.torsion_radius > 0.0) setUp(m.torsion, rows.torsion);
      articulated_.push_back(rows);
    }
    for (int r = 0; r < m.count; ++r) {
      const ContactRow& ri = points_[m.first + r].normal;
      for (int c = 0; c < m.count; ++c) {
        const ContactRow& rc = points_[m.first + c].normal;
        m.k[r][c] = onOther(ri, rc) + onLink(ri).dot(articulated_[m.articulated_first + c].normal);
      }
    }
  }
  // Group by block, manifolds in their order within a group.
  articulated_order_.clear();
  articulated_groups_.clear();
  std::vector<std::pair<int, int>>& keyed = articulated_keys_;  // (block, manifold)
  keyed.clear();
  for (int mi = 0; mi < static_cast<int>(manifolds_.size()); ++mi) {
    const ContactManifold& m = manifolds_[mi];
    if (m.articulated_side < 0) continue;
    const ContactPoint& p0 = points_[m.first];
    keyed.emplace_back(articulation.blockOf(m.articulated_side == 0 ? p0.a : p0.b), mi);
  }
  std::sort(keyed.begin(), keyed.end());
  for (std::size_t i = 0; i < keyed.size(); ++i) {
    if (i == 0 || keyed[i].first != keyed[i - 1].first)
      articulated_groups_.emplace_back(static_cast<int>(i), 0);
    ++articulated_groups_.back().second;
    articulated_order_.push_back(keyed[i].second);
  }
}

// The rows of a manifold between a block link and a rigid body: the same sweeps as the rigid
// rows in solveVelocity, with the link's velocity changed through its block response; the
// manifold's net impulse on the link then reaches the rest of its mechanism once.
double ContactSolver::solveArticulated(ContactManifold& m, std::vector<SolverBody>& bodies,
                                       std::vector<double>& rotor_speed, bool reverse) {
  const int side = m.articulated_side;
  const int link_index = side == 0 ? points_[m.first].a : points_[m.first].b;
  SolverBody& a = bodies[points_[m.first].a];
  SolverBody& b = bodies[points_[m.first].b];
  SolverBody& link = side == 0 ? a : b;
  const ArticulatedRows* art = &articulated_[m.articulated_first];
  Vec6 wrench = Vec6::Zero();
  double largest = 0.0;
  auto push = [&](const ContactRow& row, const Vec6& dx, double d) {
    if (side == 1) {
      a.v -= (a.inv_mass * d) * row.dir;
      a.w -= d * row.dw_a;
      wrench.head<3>() += d * row.dir;
      wrench.tail<3>() += d * row.ang_b;
    } else {
      b.v += (b.inv_mass * d) * row.dir;
      b.w += d * row.dw_b;
      wrench.head<3>() -= d * row.dir;
      wrench.tail<3>() -= d * row.ang_a;
    }
    link.v += d * dx.head<3>();
    link.w += d * dx.tail<3>();
  };
  for (int kk = 0; kk < m.count; ++kk) {
    const int i = reverse ? m.count - 1 - kk : kk;
    ContactPoint& p = points_[m.first + i];
    const double bound = p.friction * p.normal_impulse;
    double fresh[2];
    for (int t = 0; t < 2; ++t)
      fresh[t] = p.tangent_impulse[t] - rowVelocity(p.tangent[t], a, b) * p.tangent[t].mass;
    projectOntoDisc(fresh, bound);
    for (int t = 0; t < 2; ++t) {
      const double d = fresh[t] - p.tangent_impulse[t];
      p.tangent_impulse[t] = fresh[t];
      if (d == 0.0) continue;
      push(p.tangent[t], art[i].tangent[t], d);
      largest = std::max(largest, std::abs(d));
    }
  }
  {
    double speed[4], lambda[4], start[4], mass[4];
    for (int i = 0; i < m.count; ++i) {
      const ContactPoint& p = points_[m.first + i];
      speed[i] = rowVelocity(p.normal, a, b) - p.target;
      start[i] = lambda[i] = p.normal_impulse;
      mass[i] = p.normal.mass;
    }
    largest = std::max(largest, localNormalSweeps(m.count, m.k, mass, speed, lambda, reverse));
    for (int i = 0; i < m.count; ++i) {
      ContactRow& row = points_[m.first + i].normal;
      const double d = lambda[i] - start[i];
      points_[m.first + i].normal_impulse = lambda[i];
      if (d != 0.0) push(row, art[i].normal, d);
    }
  }
  if (m.torsion_radius > 0.0) {
    const double d = solveTorsion(m, a, b);
    if (d != 0.0) {
      push(m.torsion, art[0].torsion, d);
      largest = std::max(largest, std::abs(d));
    }
  }
  if (!wrench.isZero(0.0)) articulation_->propagate(link_index, wrench, bodies, rotor_speed);
  return largest;
}

double ContactSolver::solvePosition(const ContactSettings& cfg, std::vector<Vec3>& positions,
                                    std::vector<Quat>& orientations,
                                    const std::vector<SolverBody>& bodies) {
  double largest = 0.0;
  if (!batched_ || !articulated_groups_.empty() || batches_.threads() == 1) {
    for (const ContactManifold& m : manifolds_)
      largest = std::max(largest, positionPass(cfg, m, positions, orientations, bodies));
    return std::max(largest, 0.0);
  }
  // Level by level (ContactBatches: every manifold is in one when none is articulated): the
  // order of any two that share a moving body is the manifolds' order, as above.
  sweepLevels(false, [&](int t, int level) {
    double& mine = thread_slots_[t].largest;
    for (const int* mi = batches_.manifoldsBegin(level, t); mi != batches_.manifoldsEnd(level, t);
         ++mi)
      mine = std::max(mine, positionPass(cfg, manifolds_[static_cast<std::size_t>(*mi)], positions,
                                         orientations, bodies));
  });
  for (int t = 0; t < batches_.threads(); ++t)
    largest = std::max(largest, thread_slots_[t].largest);
  return std::max(largest, 0.0);
}

double ContactSolver::positionPass(const ContactSettings& cfg, const ContactManifold& m,
                                   std::vector<Vec3>& positions, std::vector<Quat>& orientations,
                                   const std::vector<SolverBody>& bodies) const {
  const double beta = cfg.position_correction;
  double largest = 0.0;
  // Linearised at the poses as they are now: local alternating sweeps over the points, each push
  // removing the fraction beta of that point's remaining penetration beyond the slop (a single
  // sweep over a face's points would tilt the body). The pushes run on the manifold's coupling
  // numbers and each body moves once, instead of every push re-reading and re-rotating both
  // bodies.
  if (m.compliance != 0.0) return 0.0;  // a soft contact's overlap is its spring's
  const int first = m.first, count = m.count;
  const int ia = points_[first].a, ib = points_[first].b;
  const SolverBody& a = bodies[ia];
  const SolverBody& b = bodies[ib];
  const Vec3& n = points_[first].normal.dir;
  Vec3 dw_a[4], dw_b[4], ang_a[4], ang_b[4], mid[4];
  double depth[4], push[4] = {0.0, 0.0, 0.0, 0.0};  // separation + slop (m); push-out (kg m)
  bool any = false;
  measureManifold(&points_[first], count, positions[ia], orientations[ia], positions[ib],
                  orientations[ib], n, cfg.slop_m, depth, mid);
  for (int i = 0; i < count; ++i) {
    largest = std::max(largest, -depth[i]);
    any = any || depth[i] < 0.0;
  }
  if (!any) return largest;  // the common case once a pile rests: nothing beyond the slop
  for (int i = 0; i < count; ++i) {
    ang_a[i] = (mid[i] - positions[ia]).cross(n);
    ang_b[i] = (mid[i] - positions[ib]).cross(n);
    dw_a[i] = a.inv_inertia * ang_a[i];
    dw_b[i] = b.inv_inertia * ang_b[i];
  }
  double k[4][4];
  for (int r = 0; r < count; ++r)
    for (int c = 0; c < count; ++c)
      k[r][c] = a.inv_mass + b.inv_mass + ang_a[r].dot(dw_a[c]) + ang_b[r].dot(dw_b[c]);
  const int inner = count > 1 ? kManifoldSweeps : 1;
  for (int pass = 0; pass < inner; ++pass) {
    for (int kk = 0; kk < count; ++kk) {
      const int i = pass % 2 == 1 ? count - 1 - kk : kk;
      if (depth[i] >= 0.0 || !(k[i][i] > 0.0)) continue;
      const double d = std::min(-beta * depth[i], cfg.max_position_correction_m) / k[i][i];
      push[i] += d;
      for (int j = 0; j < count; ++j) depth[j] += k[j][i] * d;
    }
  }
  double sum = 0.0;
  Vec3 turn_a = Vec3::Zero(), turn_b = Vec3::Zero();
  for (int i = 0; i < count; ++i) {
    sum += push[i];
    turn_a += push[i] * dw_a[i];
    turn_b += push[i] * dw_b[i];
  }
  if (a.inv_mass > 0.0) {
    positions[ia] -= (a.inv_mass * sum) * n;
    orientations[ia] = rotateBy(orientations[ia], -turn_a);
  }
  if (b.inv_mass > 0.0) {
    positions[ib] += (b.inv_mass * sum) * n;
    orientations[ib] = rotateBy(orientations[ib], turn_b);
  }
  return largest;
}

void ContactSolver::storeManifold(int manifold_index) {
  const ContactManifold& m = manifolds_[static_cast<std::size_t>(manifold_index)];
  // The directions from the first point: the others' may be pending (ensureRows).
  const ContactPoint& p0 = points_[m.first];
  for (int k = m.first; k < m.first + m.count; ++k) {
    const ContactPoint& p = points_[k];
    ContactState& c = fresh_[static_cast<std::size_t>(k)];
    c.shape_a = static_cast<std::uint32_t>(m.shape_a);
    c.shape_b = static_cast<std::uint32_t>(m.shape_b);
    c.feature = p.feature;
    c.point_m = p.point;
    c.normal = p0.normal.dir;
    c.separation_m = p.separation;
    c.normal_impulse = p.normal_impulse;
    c.friction_impulse =
        p.tangent_impulse[0] * p0.tangent[0].dir + p.tangent_impulse[1] * p0.tangent[1].dir;
    c.torsion_impulse = k == m.first ? m.torsion_impulse : 0.0;
    if (anchors_on_) {
      ContactAnchor& anchor = fresh_anchors_[static_cast<std::size_t>(k)];
      anchor = manifold_anchors_[static_cast<std::size_t>(manifold_index)];
      anchor.on_a_local_m = p.local_a;
      anchor.on_b_local_m = p.local_b;
    }
  }
}

void ContactSolver::store(State& s) {
  unbatch();
  // The manifolds' points are consecutive, in manifold order: point k is record k.
  fresh_.resize(static_cast<std::size_t>(point_count_));
  fresh_anchors_.resize(anchors_on_ ? fresh_.size() : 0);
  const int manifold_count = static_cast<int>(manifolds_.size());
  const int store_threads = threadsFor(manifold_count);
  runPerThread(store_threads, [&](int t) {
    for (int mi = 0; mi < manifold_count; ++mi)
      if (store_threads == 1 || manifoldThread(mi) == t) storeManifold(mi);
  });
  // The manifolds come in the broad phase's sorted pair order, so only each pair's run of points
  // needs ordering by feature: an insertion sort per run (a few points, or a mesh pair's
  // triangles) instead of a full sort that moved these large records around (6 % of the awake
  // pile's instructions). A full std::sort remains as the fallback should the order ever differ;
  // both are deterministic for a fixed input order (keys are unique within a step). The carried
  // contacts are sorted already.
  if (anchors_on_)
    sortPairRuns<true>(fresh_, fresh_anchors_);
  else
    sortPairRuns<false>(fresh_, fresh_anchors_);
  if (!std::is_sorted(fresh_.begin(), fresh_.end(), keyLess)) {
    if (anchors_on_) {  // the anchors follow their contacts
      order_.resize(fresh_.size());
      for (std::size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<int>(i);
      std::sort(order_.begin(), order_.end(),
                [&](int x, int y) { return keyLess(fresh_[x], fresh_[y]); });
      merged_.clear();
      merged_anchors_.clear();
      for (const int i : order_) {
        merged_.push_back(fresh_[i]);
        merged_anchors_.push_back(fresh_anchors_[i]);
      }
      fresh_.swap(merged_);
      fresh_anchors_.swap(merged_anchors_);
    } else {
      std::sort(fresh_.begin(), fresh_.end(), keyLess);
    }
  }
  // Anchors are kept one per contact while reuse is on, and not at all otherwise; carried
  // contacts that have none (reuse just turned on) get an invalid one.
  const bool stored_anchors = s.contact_anchors.size() == s.contacts.size();
  if (!anchors_on_)
    s.contact_anchors.clear();
  else if (!stored_anchors)
    s.contact_anchors.assign(s.contacts.size(), ContactAnchor{});
  if (fresh_.empty() && (all_carried_ || carried_.size() == s.contacts.size())) return;  // in place
  if (all_carried_) {  // not expected (nothing awake finds nothing fresh), but kept correct
    carried_.resize(s.contacts.size());
    for (std::size_t at = 0; at < carried_.size(); ++at) carried_[at] = static_cast<int>(at);
  }
  if (carried_.empty()) {  // nothing asleep: the fresh list is the whole list
    s.contacts.swap(fresh_);
    if (anchors_on_) s.contact_anchors.swap(fresh_anchors_);
    return;
  }
  merged_.clear();
  merged_anchors_.clear();
  // Merged run by run, each run copied at once: the fresh contacts that come before the next
  // carried one, then the carried ones stored consecutively that come before the next fresh one
  // (a site's sleeping contacts are long runs; one record at a time was 6 % of its step).
  const auto from = [](std::size_t i) { return static_cast<std::ptrdiff_t>(i); };
  std::size_t f = 0;
  for (std::size_t k = 0; k < carried_.size();) {
    const auto at = static_cast<std::size_t>(carried_[k]);
    std::size_t f_end = f;
    while (f_end < fresh_.size() && keyLess(fresh_[f_end], s.contacts[at])) ++f_end;
    merged_.insert(merged_.end(), fresh_.begin() + from(f), fresh_.begin() + from(f_end));
    if (anchors_on_)
      merged_anchors_.insert(merged_anchors_.end(), fresh_anchors_.begin() + from(f),
                             fresh_anchors_.begin() + from(f_end));
    f = f_end;
    std::size_t run = 1;
    while (k + run < carried_.size() && static_cast<std::size_t>(carried_[k + run]) == at + run &&
           (f == fresh_.size() || !keyLess(fresh_[f], s.contacts[at + run])))
      ++run;
    merged_.insert(merged_.end(), s.contacts.begin() + from(at),
                   s.contacts.begin() + from(at + run));
    if (anchors_on_)
      merged_anchors_.insert(merged_anchors_.end(), s.contact_anchors.begin() + from(at),
                             s.contact_anchors.begin() + from(at + run));
    k += run;
  }
  merged_.insert(merged_.end(), fresh_.begin() + static_cast<std::ptrdiff_t>(f), fresh_.end());
  s.contacts.swap(merged_);
  if (anchors_on_) {
    merged_anchors_.insert(merged_anchors_.end(),
                           fresh_anchors_.begin() + static_cast<std::ptrdiff_t>(f),
                           fresh_anchors_.end());
    s.contact_anchors.swap(merged_anchors_);
  }
}

}  // namespace sim::dynamics::detail
