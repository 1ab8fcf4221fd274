#include "gjk.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sim::dynamics::detail {

namespace {

constexpr int kMaxGjkIterations = 64;
// GJK stops when the next support point can shorten |v|^2 by less than this fraction: distances
// are then exact to ~1e-12 relative (double precision leaves ~1e-16).
constexpr double kGjkRelTol = 1e-12;
// Cores closer than this (m) count as touching: EPA takes over.
constexpr double kTouch = 1e-12;
constexpr int kMaxEpaIterations = 96;
constexpr int kMaxEpaVertices = 128;
constexpr int kMaxEpaFaces = 256;
// EPA stops when the support point lies within this (m) of the nearest face: penetration depths
// are exact to about a nanometre (curved sides converge geometrically towards it).
constexpr double kEpaTol = 1e-10;

struct Simplex {
  int n = 0;
  std::array<Vec3, 4> w, a, b;
  std::array<double, 4> lambda{};

  Simplex() {
    w.fill(Vec3::Zero());
    a.fill(Vec3::Zero());
    b.fill(Vec3::Zero());
  }
  // Keeps the listed vertices (index, weight) in that order.
  void keep(std::initializer_list<std::pair<int, double>> items) {
    std::array<Vec3, 4> tw = w, ta = a, tb = b;
    n = 0;
    for (const auto& [i, l] : items) {
      w[n] = tw[i];
      a[n] = ta[i];
      b[n] = tb[i];
      lambda[n] = l;
      ++n;
    }
  }
};

// Closest point of a triangle to the origin (Ericson, Real-Time Collision Detection 5.1.5), as
// vertex weights; reduces `s` (vertices i, j, k) to the supporting feature.
void closestOnTriangle(Simplex& s, int i, int j, int k) {
  const Vec3 a = s.w[i], b = s.w[j], c = s.w[k];
  const Vec3 ab = b - a, ac = c - a;
  const double d1 = ab.dot(-a), d2 = ac.dot(-a);
  if (d1 <= 0.0 && d2 <= 0.0) return s.keep({{i, 1.0}});
  const double d3 = ab.dot(-b), d4 = ac.dot(-b);
  if (d3 >= 0.0 && d4 <= d3) return s.keep({{j, 1.0}});
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
    const double t = d1 / (d1 - d3);
    return s.keep({{i, 1.0 - t}, {j, t}});
  }
  const double d5 = ab.dot(-c), d6 = ac.dot(-c);
  if (d6 >= 0.0 && d5 <= d6) return s.keep({{k, 1.0}});
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
    const double t = d2 / (d2 - d6);
    return s.keep({{i, 1.0 - t}, {k, t}});
  }
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0) {
    const double t = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    return s.keep({{j, 1.0 - t}, {k, t}});
  }
  const double denom = 1.0 / (va + vb + vc);
  const double v = vb * denom, w = vc * denom;
  s.keep({{i, 1.0 - v - w}, {j, v}, {k, w}});
}

Vec3 point(const Simplex& s) {
  Vec3 p = Vec3::Zero();
  for (int i = 0; i < s.n; ++i) p += s.lambda[i] * s.w[i];
  return p;
}

// Reduces the simplex to the feature nearest the origin; true when a tetrahedron contains it.
bool reduce(Simplex& s) {
  switch (s.n) {
    case 1: s.lambda[0] = 1.0; return false;
    case 2: {
      const Vec3 ab = s.w[1] - s.w[0];
      const double len2 = ab.squaredNorm();
      const double t = len2 > 0.0 ? -s.w[0].dot(ab) / len2 : 0.0;
      if (t <= 0.0)
        s.keep({{0, 1.0}});
      else if (t >= 1.0)
        s.keep({{1, 1.0}});
      else
        s.keep({{0, 1.0 - t}, {1, t}});
      return false;
    }
    case 3: closestOnTriangle(s, 0, 1, 2); return false;
    default: break;
  }
  // Tetrahedron: the origin is inside unless it lies beyond one of the faces.
  static constexpr int kFaces[4][4] = {{0, 1, 2, 3}, {0, 3, 1, 2}, {0, 2, 3, 1}, {1, 3, 2, 0}};
  bool inside = true;
  Simplex best;
  double best_d2 = std::numeric_limits<double>::infinity();
  for (const auto& f : kFaces) {
    const Vec3 n = (s.w[f[1]] - s.w[f[0]]).cross(s.w[f[2]] - s.w[f[0]]);
    const double side_origin = n.dot(-s.w[f[0]]);
    const double side_opposite = n.dot(s.w[f[3]] - s.w[f[0]]);
    const bool degenerate =
        std::abs(side_opposite) <= 1e-14 * n.norm() * (s.w[f[3]] - s.w[f[0]]).norm();
    if (!degenerate && side_origin * side_opposite >= 0.0) continue;  // origin on the inner side
    inside = false;
    Simplex t = s;
    closestOnTriangle(t, f[0], f[1], f[2]);
    const double d2 = point(t).squaredNorm();
    if (d2 < best_d2) {
      best_d2 = d2;
      best = t;
    }
  }
  if (inside) return true;
  s = best;
  return false;
}

Vec3 minkowski(const ConvexSupport& a, const ConvexSupport& b, const Vec3& d, bool rounded,
               Vec3& sa, Vec3& sb) {
  sa = rounded ? a.supportRounded(d) : a.support(d);
  sb = rounded ? b.supportRounded(-d) : b.support(-d);
  return sa - sb;
}

}  // namespace

Vec3 ConvexSupport::support(const Vec3& d) const {
  switch (kind) {
    case Kind::Point: return center;
    case Kind::Segment:
      return center + (d.dot(axes.col(2)) >= 0.0 ? half_length : -half_length) * axes.col(2);
    case Kind::Box: {
      Vec3 p = center;
      for (int k = 0; k < 3; ++k)
        p += (d.dot(axes.col(k)) >= 0.0 ? half_extents[k] : -half_extents[k]) * axes.col(k);
      return p;
    }
    case Kind::Cylinder: {
      const Vec3 u = axes.col(2);
      const double along = d.dot(u);
      Vec3 p = center + (along >= 0.0 ? half_length : -half_length) * u;
      const Vec3 radial = d - along * u;
      const double len = radial.norm();
      if (len > 1e-12 * d.norm()) p += (cylinder_radius / len) * radial;
      return p;
    }
    case Kind::Hull: {
      const Vec3 local = axes.transpose() * d;
      int best = 0;
      double most = -std::numeric_limits<double>::infinity();
      for (int i = 0; i < static_cast<int>(hull->vertices.size()); ++i) {
        const double s = local.dot(hull->vertices[i]);
        if (s > most) {
          most = s;
          best = i;
        }
      }
      return center + axes * hull->vertices[best];
    }
    case Kind::Triangle: {
      int best = 0;
      for (int i = 1; i < 3; ++i)
        if (d.dot(triangle[i]) > d.dot(triangle[best])) best = i;
      return triangle[best];
    }
  }
  return center;
}

Vec3 ConvexSupport::supportRounded(const Vec3& d) const {
  const double len = d.norm();
  return radius > 0.0 && len > 0.0 ? Vec3(support(d) + (radius / len) * d) : support(d);
}

GjkResult gjkDistance(const ConvexSupport& a, const ConvexSupport& b) {
  GjkResult r;
  Simplex s;
  Vec3 d = b.center - a.center;
  if (d.squaredNorm() < 1e-24) d = Vec3::UnitX();
  s.n = 1;
  s.w[0] = minkowski(a, b, -d, false, s.a[0], s.b[0]);
  s.lambda[0] = 1.0;
  Vec3 v = s.w[0];
  double last = std::numeric_limits<double>::infinity();
  for (int it = 0; it < kMaxGjkIterations; ++it) {
    const double v2 = v.squaredNorm();
    if (v2 <= kTouch * kTouch) {
      r.overlap = true;
      break;
    }
    Vec3 sa, sb;
    const Vec3 w = minkowski(a, b, -v, false, sa, sb);
    if (v2 - v.dot(w) <= kGjkRelTol * v2) break;  // no support point gets meaningfully closer
    bool repeated = false;
    for (int i = 0; i < s.n; ++i) repeated = repeated || s.w[i] == w;
    if (repeated) break;
    s.w[s.n] = w;
    s.a[s.n] = sa;
    s.b[s.n] = sb;
    ++s.n;
    if (reduce(s)) {
      r.overlap = true;
      break;
    }
    v = point(s);
    if (v.squaredNorm() >= last) break;  // rounding: no more progress
    last = v.squaredNorm();
  }
  r.simplex_size = s.n;
  r.w = s.w;
  r.wa = s.a;
  r.wb = s.b;
  if (r.overlap) return r;
  r.on_a = r.on_b = Vec3::Zero();
  for (int i = 0; i < s.n; ++i) {
    r.on_a += s.lambda[i] * s.a[i];
    r.on_b += s.lambda[i] * s.b[i];
  }
  r.distance = v.norm();
  r.normal = -v / r.distance;
  return r;
}

namespace {

struct EpaFace {
  int v[3];
  Vec3 n;
  double d;
  bool alive;
};

class Epa {
 public:
  Epa(const ConvexSupport& a, const ConvexSupport& b) : a_(a), b_(b) {}

  int addVertex(const Vec3& dir) {
    w_[n_] = minkowski(a_, b_, dir, true, wa_[n_], wb_[n_]);
    return n_++;
  }
  int addPoint(const Vec3& w, const Vec3& wa, const Vec3& wb) {
    w_[n_] = w;
    wa_[n_] = wa;
    wb_[n_] = wb;
    return n_++;
  }
  // Grows GJK's simplex to a tetrahedron of positive volume.
  bool tetrahedron(const GjkResult& g);
  bool run(Vec3& normal, double& depth, Vec3& on_a, Vec3& on_b);

 private:
  bool addFace(int i, int j, int k);

  const ConvexSupport& a_;
  const ConvexSupport& b_;
  int n_ = 0;
  std::array<Vec3, kMaxEpaVertices> w_, wa_, wb_;
  std::array<EpaFace, kMaxEpaFaces> faces_;
  int nf_ = 0;
  Vec3 interior_ = Vec3::Zero();
};

bool Epa::tetrahedron(const GjkResult& g) {
  for (int i = 0; i < g.simplex_size; ++i) addPoint(g.w[i], g.wa[i], g.wb[i]);
  const Vec3 axes[3] = {Vec3::UnitX(), Vec3::UnitY(), Vec3::UnitZ()};
  // A second point: the farthest support along the axes.
  if (n_ == 1) {
    for (const Vec3& ax : axes) {
      for (double sg : {1.0, -1.0}) {
        if (n_ == 2) break;
        Vec3 sa, sb;
        const Vec3 w = minkowski(a_, b_, sg * ax, true, sa, sb);
        if ((w - w_[0]).norm() > 1e-9) addPoint(w, sa, sb);
      }
    }
  }
  // A third point off the segment: search around it.
  if (n_ == 2) {
    const Vec3 dir = (w_[1] - w_[0]).normalized();
    const Vec3 perp = std::abs(dir.x()) < 0.57735 ? Vec3(dir.cross(Vec3::UnitX()).normalized())
                                                  : Vec3(dir.cross(Vec3::UnitY()).normalized());
    for (int k = 0; k < 6 && n_ == 2; ++k) {
      const Vec3 d = Eigen::AngleAxisd(k * 1.0471975511965976, dir) * perp;
      Vec3 sa, sb;
      const Vec3 w = minkowski(a_, b_, d, true, sa, sb);
      if ((w - w_[0]).cross(dir).norm() > 1e-9) addPoint(w, sa, sb);
    }
  }
  // A fourth point off the triangle's plane.
  if (n_ == 3) {
    const Vec3 n = (w_[1] - w_[0]).cross(w_[2] - w_[0]).normalized();
    for (double sg : {1.0, -1.0}) {
      if (n_ == 4) break;
      Vec3 sa, sb;
      const Vec3 w = minkowski(a_, b_, sg * n, true, sa, sb);
      if (std::abs(n.dot(w - w_[0])) > 1e-9) addPoint(w, sa, sb);
    }
  }
  if (n_ != 4) return false;
  if (std::abs((w_[1] - w_[0]).cross(w_[2] - w_[0]).dot(w_[3] - w_[0])) < 1e-18) return false;
  interior_ = 0.25 * (w_[0] + w_[1] + w_[2] + w_[3]);
  return addFace(0, 1, 2) && addFace(0, 3, 1) && addFace(0, 2, 3) && addFace(1, 3, 2);
}

// Adds triangle (i, j, k), turned to face away from the interior point.
bool Epa::addFace(int i, int j, int k) {
  if (nf_ == kMaxEpaFaces) return false;
  Vec3 n = (w_[j] - w_[i]).cross(w_[k] - w_[i]);
  const double len = n.norm();
  if (!(len > 1e-300)) return false;
  n /= len;
  EpaFace f{{i, j, k}, n, n.dot(w_[i]), true};
  if (n.dot(w_[i] - interior_) < 0.0) {
    std::swap(f.v[1], f.v[2]);
    f.n = -n;
    f.d = -f.d;
  }
  faces_[nf_++] = f;
  return true;
}

bool Epa::run(Vec3& normal, double& depth, Vec3& on_a, Vec3& on_b) {
  int best = -1;
  for (int it = 0; it < kMaxEpaIterations; ++it) {
    best = -1;
    for (int f = 0; f < nf_; ++f)
      if (faces_[f].alive && (best < 0 || faces_[f].d < faces_[best].d)) best = f;
    if (best < 0) return false;
    const EpaFace face = faces_[best];
    if (n_ == kMaxEpaVertices) break;
    Vec3 sa, sb;
    const Vec3 w = minkowski(a_, b_, face.n, true, sa, sb);
    if (face.n.dot(w) - face.d <= kEpaTol) break;
    const int nv = addPoint(w, sa, sb);
    // Remove the faces the new point sees; their unshared edges form the horizon.
    std::array<std::pair<int, int>, kMaxEpaFaces> horizon;
    int nh = 0;
    for (int f = 0; f < nf_; ++f) {
      EpaFace& g = faces_[f];
      if (!g.alive || g.n.dot(w - w_[g.v[0]]) <= 0.0) continue;
      g.alive = false;
      for (int e = 0; e < 3; ++e) {
        const int i = g.v[e], j = g.v[(e + 1) % 3];
        int twin = -1;
        for (int h = 0; h < nh; ++h)
          if (horizon[h].first == j && horizon[h].second == i) twin = h;
        if (twin >= 0)
          horizon[twin] = horizon[--nh];
        else if (nh < kMaxEpaFaces)
          horizon[nh++] = {i, j};
      }
    }
    for (int h = 0; h < nh; ++h)
      if (!addFace(horizon[h].first, horizon[h].second, nv)) return false;
  }
  if (best < 0) return false;
  const EpaFace& f = faces_[best];
  // Barycentric weights of the origin's projection onto the face.
  const Vec3 p = f.d * f.n;
  const Vec3 a = w_[f.v[0]], b = w_[f.v[1]], c = w_[f.v[2]];
  const Vec3 v0 = b - a, v1 = c - a, v2 = p - a;
  const double d00 = v0.dot(v0), d01 = v0.dot(v1), d11 = v1.dot(v1);
  const double d20 = v2.dot(v0), d21 = v2.dot(v1);
  const double den = d00 * d11 - d01 * d01;
  double lv = den > 0.0 ? (d11 * d20 - d01 * d21) / den : 0.0;
  double lw = den > 0.0 ? (d00 * d21 - d01 * d20) / den : 0.0;
  lv = std::clamp(lv, 0.0, 1.0);
  lw = std::clamp(lw, 0.0, 1.0 - lv);
  const double lu = 1.0 - lv - lw;
  on_a = lu * wa_[f.v[0]] + lv * wa_[f.v[1]] + lw * wa_[f.v[2]];
  on_b = lu * wb_[f.v[0]] + lv * wb_[f.v[1]] + lw * wb_[f.v[2]];
  // The origin lies inside: b moves along +n by d to separate, so n points from a to b.
  normal = f.n;
  depth = f.d;
  return true;
}

}  // namespace

bool epaPenetration(const ConvexSupport& a, const ConvexSupport& b, const GjkResult& gjk,
                    Vec3& normal, double& depth, Vec3& on_a, Vec3& on_b) {
  Epa epa(a, b);
  if (!epa.tetrahedron(gjk)) return false;
  return epa.run(normal, depth, on_a, on_b);
}

}  // namespace sim::dynamics::detail
