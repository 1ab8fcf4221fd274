#include "collision.h"
#include "collision_util.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sim::dynamics::detail {

namespace {

// ---- sphere-like pairs: a core point or segment with a radius ------------------------------

Vec3 capsuleEnd(const WorldShape& c, double sign) {
  return c.center + sign * c.half_length * c.axes.col(2);
}

bool sphereSphere(const WorldShape& a, const WorldShape& b, double margin, Manifold& m) {
  return roundedPair(a.center, a.radius, b.center, b.radius, margin, Vec3::UnitZ(), 0, m);
}

bool sphereCapsule(const WorldShape& a, const WorldShape& b, double margin, Manifold& m) {
  const Vec3 p = capsuleEnd(b, -1.0), d = 2.0 * b.half_length * b.axes.col(2);
  const double t =
      d.squaredNorm() > 0.0 ? std::clamp((a.center - p).dot(d) / d.squaredNorm(), 0.0, 1.0) : 0.0;
  return roundedPair(a.center, a.radius, p + t * d, b.radius, margin, Vec3::UnitZ(), 0, m);
}

bool capsuleCapsule(const WorldShape& a, const WorldShape& b, double margin, Manifold& m) {
  const Vec3 pa = capsuleEnd(a, -1.0), da = 2.0 * a.half_length * a.axes.col(2);
  const Vec3 pb = capsuleEnd(b, -1.0), db = 2.0 * b.half_length * b.axes.col(2);
  Vec3 ca, cb;
  closestSegmentPoints(pa, da, pb, db, ca, cb);
  if (!roundedPair(ca, a.radius, cb, b.radius, margin, Vec3::UnitZ(), 0, m)) return false;
  // Nearly parallel capsules lying side by side: two points (the overlap's ends) so they rest.
  const double la = da.norm(), lb = db.norm();
  if (la > 0.0 && lb > 0.0 && std::abs(da.dot(db)) > 0.995 * la * lb) {
    const Vec3 u = da / la;
    const double lo = std::max(0.0, std::min((pb - pa).dot(u), (pb + db - pa).dot(u)));
    const double hi = std::min(la, std::max((pb - pa).dot(u), (pb + db - pa).dot(u)));
    if (hi - lo > 1e-9) {
      Manifold two;
      two.normal = m.normal;
      for (int k = 0; k < 2; ++k) {
        const Vec3 on_core_a = pa + (k == 0 ? lo : hi) * u;
        const double tb = std::clamp((on_core_a - pb).dot(db) / (lb * lb), 0.0, 1.0);
        const Vec3 on_core_b = pb + tb * db;
        addPoint(two, on_core_a + a.radius * two.normal, on_core_b - b.radius * two.normal,
                 static_cast<std::uint32_t>(k + 1));
      }
      m = two;
    }
  }
  return true;
}

// ---- planes --------------------------------------------------------------------------------

bool spherePlane(const WorldShape& s, const WorldShape& p, double margin, Manifold& m) {
  return pointsOnPlane(&s.center, &s.radius, 1, p, margin, m);
}

bool capsulePlane(const WorldShape& c, const WorldShape& p, double margin, Manifold& m) {
  const Vec3 ends[2] = {capsuleEnd(c, -1.0), capsuleEnd(c, 1.0)};
  const double radii[2] = {c.radius, c.radius};
  return pointsOnPlane(ends, radii, c.half_length > 0.0 ? 2 : 1, p, margin, m);
}

Vec3 boxVertex(const WorldShape& b, int i) {
  return b.center + b.axes * Vec3((i & 1 ? 1 : -1) * b.half_extents.x(),
                                  (i & 2 ? 1 : -1) * b.half_extents.y(),
                                  (i & 4 ? 1 : -1) * b.half_extents.z());
}

bool boxPlane(const WorldShape& b, const WorldShape& p, double margin, Manifold& m) {
  Vec3 v[8];
  const double zero[8] = {};
  for (int i = 0; i < 8; ++i) v[i] = boxVertex(b, i);
  return pointsOnPlane(v, zero, 8, p, margin, m);
}

// ---- boxes ---------------------------------------------------------------------------------

bool sphereBox(const WorldShape& s, const WorldShape& b, double margin, Manifold& m) {
  const Vec3 local = b.axes.transpose() * (s.center - b.center);
  const Vec3 clamped = local.cwiseMax(-b.half_extents).cwiseMin(b.half_extents);
  if (clamped != local) {  // centre outside the box
    const Vec3 closest = b.center + b.axes * clamped;
    return roundedPair(s.center, s.radius, closest, 0.0, margin, Vec3::UnitZ(), 0, m);
  }
  // Centre inside: push out through the nearest face.
  int axis = 0;
  double depth = kInf, sign = 1.0;
  for (int k = 0; k < 3; ++k) {
    for (double sg : {1.0, -1.0}) {
      const double d = b.half_extents[k] - sg * local[k];
      if (d < depth) {
        depth = d;
        axis = k;
        sign = sg;
      }
    }
  }
  const Vec3 out = sign * b.axes.col(axis);  // outward normal of the face
  m.normal = -out;
  m.count = 0;
  addPoint(m, s.center - s.radius * out, s.center + depth * out, 1);
  return true;
}

/// Support edge of box b in direction n among the edges parallel to axis i: centre and half
/// direction.
void supportEdge(const WorldShape& b, int i, const Vec3& n, Vec3& center, Vec3& half) {
  center = b.center;
  for (int k = 0; k < 3; ++k) {
    if (k == i) continue;
    const double sg = n.dot(b.axes.col(k)) >= 0.0 ? 1.0 : -1.0;
    center += sg * b.half_extents[k] * b.axes.col(k);
  }
  half = b.half_extents[i] * b.axes.col(i);
}

struct ClipVertex {
  Vec3 p;
  std::uint32_t id;
};

/// Face contact: reference box `ref` with outward face normal n (axis `ref_axis`, sign), the
/// incident box `inc`. Points are written with the normal from ref to inc.
void faceContact(const WorldShape& ref, int ref_axis, double ref_sign, const WorldShape& inc,
                 double margin, std::uint32_t feature_base, Manifold& m) {
  const Vec3 n = ref_sign * ref.axes.col(ref_axis);
  // Incident face: the face of inc most anti-parallel to n.
  int inc_axis = 0;
  double most = kInf, inc_sign = 1.0;
  for (int k = 0; k < 3; ++k) {
    const double d = n.dot(inc.axes.col(k));
    if (d < most) {
      most = d;
      inc_axis = k;
      inc_sign = 1.0;
    }
    if (-d < most) {
      most = -d;
      inc_axis = k;
      inc_sign = -1.0;
    }
  }
  const int u = (inc_axis + 1) % 3, v = (inc_axis + 2) % 3;
  const Vec3 fc = inc.center + inc_sign * inc.half_extents[inc_axis] * inc.axes.col(inc_axis);
  const Vec3 eu = inc.half_extents[u] * inc.axes.col(u), ev = inc.half_extents[v] * inc.axes.col(v);
  ClipVertex buffers[2][16];  // the polygon and its clipped version, swapped per plane
  ClipVertex* poly = buffers[0];
  ClipVertex* next = buffers[1];
  constexpr double kClipTolerance = 1e-4;  // m; also in collision_convex.cpp
  int count = 4;
  poly[0] = {fc + eu + ev, 0};
  poly[1] = {fc - eu + ev, 1};
  poly[2] = {fc - eu - ev, 2};
  poly[3] = {fc + eu - ev, 3};
  // Clip against the four side planes of the reference face.
  const int ru = (ref_axis + 1) % 3, rv = (ref_axis + 2) % 3;
  int plane = 0;
  for (int axis : {ru, rv}) {
    for (double sg : {1.0, -1.0}) {
      const Vec3 pn = sg * ref.axes.col(axis);
      // Tolerance: equal-sized boxes stacked flush have incident vertices exactly on the side
      // planes, and swaying by microns would flip them between kept and clipped (new feature
      // ids, lost warm starts: a tall stack then never settles). Points up to kClipTolerance
      // outside are kept, and snapped onto the planes below, so the face is still exact.
      const double offset = pn.dot(ref.center) + ref.half_extents[axis] + kClipTolerance;
      int out = 0;
      for (int i = 0; i < count; ++i) {
        const ClipVertex& p0 = poly[i];
        const ClipVertex& p1 = poly[i + 1 < count ? i + 1 : 0];
        const double d0 = pn.dot(p0.p) - offset, d1 = pn.dot(p1.p) - offset;
        if (d0 <= 0.0) next[out++] = p0;
        if ((d0 < 0.0 && d1 > 0.0) || (d0 > 0.0 && d1 < 0.0)) {
          const double t = d0 / (d0 - d1);
          // The new vertex is where incident edge (p0 -> p1) crosses side plane `plane`.
          next[out++] = {p0.p + t * (p1.p - p0.p),
                         4u + ((p0.id & 0xffu) << 4) + static_cast<std::uint32_t>(plane)};
        }
      }
      count = out;
      std::swap(poly, next);
      ++plane;
      if (count == 0) return;
    }
  }
  for (int axis : {ru, rv}) {
    for (double sg : {1.0, -1.0}) {
      const Vec3 pn = sg * ref.axes.col(axis);
      const double exact = pn.dot(ref.center) + ref.half_extents[axis];
      for (int i = 0; i < count; ++i) {
        const double beyond = pn.dot(poly[i].p) - exact;
        if (beyond > 0.0) poly[i].p -= beyond * pn;
      }
    }
  }
  const double face_offset = n.dot(ref.center) + ref.half_extents[ref_axis];
  ManifoldPoint cand[16];
  int c = 0;
  for (int i = 0; i < count; ++i) {
    const double sep = n.dot(poly[i].p) - face_offset;
    if (sep > margin) continue;
    cand[c++] = {poly[i].p - sep * n, poly[i].p, sep,
                 feature_base |
                     (static_cast<std::uint32_t>(inc_axis * 2 + (inc_sign > 0 ? 0 : 1)) << 12) |
                     poly[i].id};
  }
  c = reduceToFour(cand, c, n);
  m.normal = n;
  m.count = 0;
  for (int i = 0; i < c; ++i) m.points[m.count++] = cand[i];
}

bool boxBox(const WorldShape& a, const WorldShape& b, double margin, Manifold& m,
            bool screen_edge_axes = true) {
  const Vec3 d = b.center - a.center;
  const Mat3 c = a.axes.transpose() * b.axes;  // c(i, j) = a_i . b_j
  const Mat3 abs_c = c.cwiseAbs().array() + 1e-12;
  // Face axes of a.
  double face_a = -kInf, face_b = -kInf;
  int axis_a = 0, axis_b = 0;
  for (int i = 0; i < 3; ++i) {
    const double s =
        std::abs(d.dot(a.axes.col(i))) - a.half_extents[i] - abs_c.row(i).dot(b.half_extents);
    if (s > margin) return false;
    if (s > face_a) {
      face_a = s;
      axis_a = i;
    }
  }
  for (int j = 0; j < 3; ++j) {
    const double s =
        std::abs(d.dot(b.axes.col(j))) - b.half_extents[j] - abs_c.col(j).dot(a.half_extents);
    if (s > margin) return false;
    if (s > face_b) {
      face_b = s;
      axis_b = j;
    }
  }
  // Prefer face contacts (stable resting manifolds); an edge axis must be clearly better.
  constexpr double kRelTol = 0.95, kAbsTol = 0.5e-3;
  const bool use_b = face_b > kRelTol * face_a + kAbsTol;
  const double face = use_b ? face_b : face_a;
  // An edge axis matters only if it separates (s > margin) or beats the face by the tolerance,
  // both thresholds >= 0 here when `screen`. The unnormalised test along a_i x b_j (in a's frame,
  // from c; no root or division) shows most axes overlap clearly (s < 0 by far more than any
  // rounding), and those are skipped: the result is the same as testing them.
  const bool screen = screen_edge_axes && margin >= 0.0 && kRelTol * face + kAbsTol >= 0.0;
  const double t[3] = {d.dot(a.axes.col(0)), d.dot(a.axes.col(1)), d.dot(a.axes.col(2))};
  const Vec3& size_a = a.half_extents;
  const Vec3& size_b = b.half_extents;
  double edge = -kInf;
  int edge_i = 0, edge_j = 0;
  Vec3 edge_n = Vec3::Zero();
  for (int i = 0; i < 3; ++i) {
    const int i1 = (i + 1) % 3, i2 = (i + 2) % 3;
    for (int j = 0; j < 3; ++j) {
      if (screen) {
        const int j1 = (j + 1) % 3, j2 = (j + 2) % 3;
        // (a_i x b_j).d, sum_k ha_k |(a_i x b_j).a_k| and sum_k hb_k |(a_i x b_j).b_k|.
        const double along = t[i2] * c(i1, j) - t[i1] * c(i2, j);
        const double reach_a = size_a[i1] * std::abs(c(i2, j)) + size_a[i2] * std::abs(c(i1, j));
        const double reach_b = size_b[j1] * std::abs(c(i, j2)) + size_b[j2] * std::abs(c(i, j1));
        const double gap = std::abs(along) - reach_a - reach_b;
        if (gap < -1e-9 * (std::abs(along) + reach_a + reach_b)) continue;
      }
      Vec3 n = a.axes.col(i).cross(b.axes.col(j));
      const double len = n.norm();
      if (len < 1e-6) continue;  // parallel edges: the face axes cover them
      n /= len;
      double ra = 0.0, rb = 0.0;
      for (int k = 0; k < 3; ++k) {
        ra += a.half_extents[k] * std::abs(n.dot(a.axes.col(k)));
        rb += b.half_extents[k] * std::abs(n.dot(b.axes.col(k)));
      }
      const double s = std::abs(d.dot(n)) - ra - rb;
      if (s > margin) return false;
      if (s > edge) {
        edge = s;
        edge_i = i;
        edge_j = j;
        edge_n = d.dot(n) >= 0.0 ? n : Vec3(-n);
      }
    }
  }
  if (edge > kRelTol * face + kAbsTol) {
    Vec3 ca, ha, cb, hb;
    supportEdge(a, edge_i, edge_n, ca, ha);
    supportEdge(b, edge_j, -edge_n, cb, hb);
    Vec3 pa, pb;
    closestSegmentPoints(ca - ha, 2.0 * ha, cb - hb, 2.0 * hb, pa, pb);
    m.normal = edge_n;
    m.count = 0;
    addPoint(m, pa, pb, kEdgeContact | static_cast<std::uint32_t>(edge_i * 3 + edge_j));
    return true;
  }
  if (!use_b) {
    const double sg = d.dot(a.axes.col(axis_a)) >= 0.0 ? 1.0 : -1.0;
    faceContact(a, axis_a, sg, b, margin,
                kFaceContact | (static_cast<std::uint32_t>(axis_a * 2 + (sg > 0 ? 0 : 1)) << 16),
                m);
  } else {
    const double sg = -d.dot(b.axes.col(axis_b)) >= 0.0 ? 1.0 : -1.0;  // b's face toward a
    faceContact(b, axis_b, sg, a, margin,
                kFaceContact | (1u << 20) |
                    (static_cast<std::uint32_t>(axis_b * 2 + (sg > 0 ? 0 : 1)) << 16),
                m);
    flip(m);
  }
  return m.count > 0;
}

/// Capsule against box: the capsule's core segment is clipped against the box face it lies on
/// (two points when it lies flat), or the closest points of the segment and the box's nearest
/// edge. Separating axes: the box faces and the segment crossed with the box edges.
bool capsuleBox(const WorldShape& c, const WorldShape& b, double margin, Manifold& m) {
  const Vec3 p0 = capsuleEnd(c, -1.0), p1 = capsuleEnd(c, 1.0);
  const Vec3 seg = p1 - p0;
  const Vec3 mid = 0.5 * (p0 + p1) - b.center;
  double best = -kInf;
  Vec3 best_n = Vec3::UnitZ();
  int best_face = -1;
  auto test = [&](Vec3 n, int face) {
    const double len = n.norm();
    if (len < 1e-6) return true;
    n /= len;
    if (n.dot(mid) < 0.0) n = -n;  // from the box toward the capsule
    double rb = 0.0;
    for (int k = 0; k < 3; ++k) rb += b.half_extents[k] * std::abs(n.dot(b.axes.col(k)));
    const double s = n.dot(mid) - 0.5 * std::abs(n.dot(seg)) - rb - c.radius;
    if (s > margin) return false;
    if (s > best + (face >= 0 ? 0.0 : 0.5e-3)) {
      best = s;
      best_n = n;
      best_face = face;
    }
    return true;
  };
  for (int k = 0; k < 3; ++k)
    if (!test(b.axes.col(k), k)) return false;
  for (int k = 0; k < 3; ++k)
    if (!test(seg.cross(b.axes.col(k)), -1)) return false;
  m.count = 0;
  if (best_face >= 0) {
    // Clip the segment to the face's rectangle and keep the ends within the margin.
    const Vec3 n = best_n;
    double t0 = 0.0, t1 = 1.0;
    for (int k = 0; k < 3; ++k) {
      if (k == best_face) continue;
      const Vec3 ax = b.axes.col(k);
      const double e0 = ax.dot(p0 - b.center), de = ax.dot(seg), h = b.half_extents[k];
      if (std::abs(de) < 1e-12) {
        if (std::abs(e0) > h) t1 = -1.0;
        continue;
      }
      double ta = (-h - e0) / de, tb = (h - e0) / de;
      if (ta > tb) std::swap(ta, tb);
      t0 = std::max(t0, ta);
      t1 = std::min(t1, tb);
    }
    if (t0 <= t1) {
      const double face_offset = n.dot(b.center) + b.half_extents[best_face];
      // Normal from capsule (a) to box (b) is -n.
      m.normal = -n;
      for (int k = 0; k < (t1 - t0 > 1e-9 ? 2 : 1); ++k) {
        const Vec3 core = p0 + (k == 0 ? t0 : t1) * seg;
        const double h = n.dot(core) - face_offset - c.radius;
        if (h > margin) continue;
        const Vec3 on_cap = core - c.radius * n;
        m.points[m.count++] = {on_cap, on_cap - h * n, h, static_cast<std::uint32_t>(k)};
      }
      if (m.count > 0) return true;
    }
  }
  // Edge or corner region: closest point of the box to the segment by alternating projection.
  Vec3 q = 0.5 * (p0 + p1);
  Vec3 on_box = q;
  for (int it = 0; it < 8; ++it) {
    const Vec3 local = b.axes.transpose() * (q - b.center);
    on_box = b.center + b.axes * local.cwiseMax(-b.half_extents).cwiseMin(b.half_extents);
    const double t = seg.squaredNorm() > 0.0
                         ? std::clamp((on_box - p0).dot(seg) / seg.squaredNorm(), 0.0, 1.0)
                         : 0.0;
    q = p0 + t * seg;
  }
  if (!roundedPair(q, c.radius, on_box, 0.0, margin, -best_n, 8, m)) return false;
  return true;
}

}  // namespace

WorldShape placeShape(const ShapeDef& def, int body, const Vec3& x, const Quat& q, double margin) {
  WorldShape s;
  s.type = def.type;
  s.body = body;
  s.center = x + q * def.pose.position;
  s.axes = (q * def.pose.rotation).toRotationMatrix();
  s.half_extents = def.half_extents_m;
  s.radius = def.radius_m;
  s.half_length = def.half_length_m;
  Vec3 extent = Vec3::Zero();
  switch (def.type) {
    case ShapeType::Sphere: extent = Vec3::Constant(s.radius); break;
    case ShapeType::Box: extent = s.axes.cwiseAbs() * s.half_extents; break;
    case ShapeType::Capsule:
      extent = (s.half_length * s.axes.col(2)).cwiseAbs() + Vec3::Constant(s.radius);
      break;
    case ShapeType::Plane: extent = Vec3::Constant(kInf); break;
    case ShapeType::Cylinder:
      // Per world axis: the axis' reach plus the cap disc's (radius times the sine to the axis).
      for (int k = 0; k < 3; ++k) {
        const double along = s.axes(k, 2);
        extent[k] = s.half_length * std::abs(along) +
                    s.radius * std::sqrt(std::max(0.0, 1.0 - along * along));
      }
      break;
    case ShapeType::ConvexHull:
    case ShapeType::TriangleMesh: {
      // The local bounds, turned: their centre may sit off the shape's origin.
      s.hull = def.hull.get();
      s.mesh = def.mesh.get();
      Vec3 lo = Vec3::Zero(), hi = Vec3::Zero();
      if (s.hull) {
        lo = s.hull->aabb_min;
        hi = s.hull->aabb_max;
      }
      if (s.mesh) {
        lo = s.mesh->aabb_min;
        hi = s.mesh->aabb_max;
      }
      const Vec3 mid = s.center + s.axes * (0.5 * (lo + hi));
      extent = s.axes.cwiseAbs() * (0.5 * (hi - lo));
      s.aabb_min = mid - extent - Vec3::Constant(margin);
      s.aabb_max = mid + extent + Vec3::Constant(margin);
      return s;
    }
  }
  s.aabb_min = s.center - extent - Vec3::Constant(margin);
  s.aabb_max = s.center + extent + Vec3::Constant(margin);
  return s;
}

bool pairSupported(ShapeType a, ShapeType b) {
  // Planes and meshes are static and unbounded or large: never against each other.
  auto world = [](ShapeType t) { return t == ShapeType::Plane || t == ShapeType::TriangleMesh; };
  return !(world(a) && world(b));
}

bool collideBoxesUnscreened(const WorldShape& a, const WorldShape& b, double margin,
                            Manifold& out) {
  return boxBox(a, b, margin, out, false);
}

bool collide(const WorldShape& a, const WorldShape& b, double margin, Manifold& out) {
  // Hull against box or hull keeps the given order, as box-box does (the first shape's faces are
  // preferred as reference), so a box-shaped hull gives box-box's manifold either way round.
  const auto polyhedron = [](ShapeType t) {
    return t == ShapeType::Box || t == ShapeType::ConvexHull;
  };
  if (polyhedron(a.type) && polyhedron(b.type) &&
      (a.type == ShapeType::ConvexHull || b.type == ShapeType::ConvexHull))
    return collidePolyhedra(a, b, margin, out);
  // Dispatch on the ordered pair of types (lower enum first), flipping the result back.
  if (static_cast<int>(a.type) > static_cast<int>(b.type)) {
    if (!collide(b, a, margin, out)) return false;
    flip(out);
    return true;
  }
  out.count = 0;
  if (a.type == ShapeType::TriangleMesh || b.type == ShapeType::TriangleMesh) return false;
  if (b.type == ShapeType::Cylinder || b.type == ShapeType::ConvexHull)
    return collideConvexPair(a, b, margin, out);
  switch (a.type) {
    case ShapeType::Sphere:
      switch (b.type) {
        case ShapeType::Sphere: return sphereSphere(a, b, margin, out);
        case ShapeType::Box: return sphereBox(a, b, margin, out);
        case ShapeType::Capsule: return sphereCapsule(a, b, margin, out);
        case ShapeType::Plane: return spherePlane(a, b, margin, out);
        default: break;
      }
      break;
    case ShapeType::Box:
      switch (b.type) {
        case ShapeType::Box: return boxBox(a, b, margin, out);
        case ShapeType::Capsule:
          if (!capsuleBox(b, a, margin, out)) return false;
          flip(out);
          return true;
        case ShapeType::Plane: return boxPlane(a, b, margin, out);
        default: break;
      }
      break;
    case ShapeType::Capsule:
      if (b.type == ShapeType::Capsule) return capsuleCapsule(a, b, margin, out);
      if (b.type == ShapeType::Plane) return capsulePlane(a, b, margin, out);
      break;
    default: break;
  }
  return false;
}

void collideAll(const WorldShape& a, const WorldShape& b, double margin,
                std::vector<Manifold>& out) {
  out.clear();
  collideAppend(a, b, margin, out);
}

void collideAppend(const WorldShape& a, const WorldShape& b, double margin,
                   std::vector<Manifold>& out) {
  if (!pairSupported(a.type, b.type)) return;
  if (b.type == ShapeType::TriangleMesh) {
    const std::size_t first = out.size();
    collideMesh(b, a, margin, out);
    for (std::size_t k = first; k < out.size(); ++k) flip(out[k]);
    return;
  }
  if (a.type == ShapeType::TriangleMesh) {
    collideMesh(a, b, margin, out);
    return;
  }
  Manifold m;
  if (collide(a, b, margin, m) && m.count > 0) out.push_back(m);
}

int BroadPhase::Bands::band(double y) const {
  const double at = (y - low) * per_metre;
  return at >= 0.0 ? (at < count - 1 ? static_cast<int>(at) : count - 1) : 0;
}

void BroadPhase::Bands::build(const std::vector<WorldShape>& shapes, const std::vector<int>& order,
                              std::vector<int>& next_fill) {
  wide.clear();
  boxes.clear();
  count = 1;
  low = 0.0;
  per_metre = 0.0;
  start.assign(2, 0);
  widest.assign(1, 0.0);
  if (order.empty()) return;
  // Bands as wide as the mean y extent: a typical shape touches one or two.
  double high = shapes[order[0]].aabb_max.y(), extent = 0.0;
  low = shapes[order[0]].aabb_min.y();
  for (int i : order) {
    low = std::min(low, shapes[i].aabb_min.y());
    high = std::max(high, shapes[i].aabb_max.y());
    extent += shapes[i].aabb_max.y() - shapes[i].aabb_min.y();
  }
  const double span = high - low;
  const double width = std::max(extent / static_cast<double>(order.size()), span / kMaxBands);
  // Written so that NaN or infinite boxes (a blow-up, reported after the step) give one band.
  const double bands = span / width;
  count = bands >= 0.0 && bands < kMaxBands ? static_cast<int>(bands) + 1
          : bands >= kMaxBands              ? kMaxBands
                                            : 1;
  per_metre = count > 1 ? 1.0 / width : 0.0;
  // Counting sort into bands, keeping the x order within each.
  start.assign(static_cast<std::size_t>(count) + 1, 0);
  widest.assign(static_cast<std::size_t>(count), 0.0);
  for (int i : order) {
    const int b0 = band(shapes[i].aabb_min.y()), b1 = band(shapes[i].aabb_max.y());
    if (b1 - b0 >= kMaxBandsPerShape) continue;
    for (int b = b0; b <= b1; ++b) ++start[static_cast<std::size_t>(b) + 1];
  }
  for (int b = 0; b < count; ++b) start[b + 1] += start[b];
  boxes.resize(static_cast<std::size_t>(start[count]));
  next_fill.assign(start.begin(), start.end() - 1);
  for (int i : order) {
    const WorldShape& s = shapes[i];
    const int b0 = band(s.aabb_min.y()), b1 = band(s.aabb_max.y());
    if (b1 - b0 >= kMaxBandsPerShape) {
      wide.push_back(i);
      continue;
    }
    const SweptBox box{s.aabb_min.x(),
                       s.aabb_max.x(),
                       s.aabb_min.y(),
                       s.aabb_max.y(),
                       s.aabb_min.z(),
                       s.aabb_max.z(),
                       i};
    for (int b = b0; b <= b1; ++b) {
      boxes[static_cast<std::size_t>(next_fill[b]++)] = box;
      widest[b] = std::max(widest[b], box.max_x - box.min_x);
    }
  }
}

void BroadPhase::findPairs(const std::vector<WorldShape>& shapes, const std::vector<char>& frozen,
                           bool frozen_boxes_changed, std::vector<std::pair<int, int>>& pairs) {
  pairs.clear();
  const int n = static_cast<int>(shapes.size());
  auto before = [&shapes](int x, int y) {
    const double ax = shapes[x].aabb_min.x(), bx = shapes[y].aabb_min.x();
    return ax < bx || (ax == bx && x < y);
  };
  // Insertion sort: nearly sorted from the last call, so close to linear; it never reads
  // outside the list whatever the boxes hold (NaN after a blow-up), which std::sort may.
  auto insertionSort = [&before](std::vector<int>& order) {
    for (std::size_t i = 1; i < order.size(); ++i) {
      const int v = order[i];
      std::size_t k = i;
      while (k > 0 && before(v, order[k - 1])) {
        order[k] = order[k - 1];
        --k;
      }
      order[k] = v;
    }
  };
  // The lists follow the frozen flags: remade (keeping each list's last order, the newcomers
  // after it) when a flag changed; the frozen bands then, or when a frozen box changed.
  const bool flags_changed = !lists_made_ || sorted_for_ != frozen;
  if (flags_changed) {
    if (!lists_made_ || static_cast<int>(sorted_for_.size()) != n) {
      planes_.clear();
      moving_.clear();
      frozen_order_.clear();
      for (int i = 0; i < n; ++i) {
        const bool unbounded =
            shapes[i].type == ShapeType::Plane || shapes[i].type == ShapeType::TriangleMesh;
        (unbounded ? planes_ : frozen[i] ? frozen_order_ : moving_).push_back(i);
      }
    } else {
      std::vector<int>& became_frozen = became_frozen_;
      became_frozen.clear();
      std::erase_if(moving_, [&](int i) {
        if (!frozen[i]) return false;
        became_frozen.push_back(i);
        return true;
      });
      const std::size_t kept = frozen_order_.size();
      for (std::size_t k = 0; k < kept; ++k) {
        const int i = frozen_order_[k];
        if (!frozen[i]) moving_.push_back(i);
      }
      std::erase_if(frozen_order_, [&](int i) { return !frozen[i]; });
      frozen_order_.insert(frozen_order_.end(), became_frozen.begin(), became_frozen.end());
    }
    sorted_for_ = frozen;
    lists_made_ = true;
  }
  if (flags_changed || frozen_boxes_changed) {
    insertionSort(frozen_order_);
    frozen_bands_.build(shapes, frozen_order_, next_fill_);
  }
  // Nothing moves (a sleeping scene): no pair can have a moving shape.
  if (moving_.empty() &&
      std::none_of(planes_.begin(), planes_.end(), [&](int p) { return frozen[p] == 0; }))
    return;
  insertionSort(moving_);
  auto emit = [&pairs](int a, int b) { pairs.emplace_back(std::min(a, b), std::max(a, b)); };
  auto overlap = [](const WorldShape& a, const WorldShape& b) {
    return (a.aabb_min.array() <= b.aabb_max.array()).all() &&
           (a.aabb_max.array() >= b.aabb_min.array()).all();
  };
  // The moving shapes among themselves: each band swept along x.
  Bands& mb = moving_bands_;
  mb.build(shapes, moving_, next_fill_);
  for (int b = 0; b < mb.count; ++b) {
    const int first = mb.start[b], last = mb.start[b + 1];
    for (int e = first; e < last; ++e) {
      const SweptBox& s = mb.boxes[static_cast<std::size_t>(e)];
      for (int k = e + 1; k < last; ++k) {
        const SweptBox& t = mb.boxes[static_cast<std::size_t>(k)];
        if (t.min_x > s.max_x) break;
        if (t.min_y > s.max_y || t.max_y < s.min_y || t.min_z > s.max_z || t.max_z < s.min_z)
          continue;
        if (mb.band(std::max(s.min_y, t.min_y)) != b) continue;  // another band reports it
        emit(s.shape, t.shape);
      }
    }
  }
  // Wide moving shapes against every other moving shape, and each pair of them once.
  is_wide_.assign(shapes.size(), 0);
  for (int w : mb.wide) is_wide_[w] = 1;
  for (std::size_t w = 0; w < mb.wide.size(); ++w) {
    const int a = mb.wide[w];
    for (int i : moving_)
      if (!is_wide_[i] && overlap(shapes[a], shapes[i])) emit(i, a);
    for (std::size_t v = w + 1; v < mb.wide.size(); ++v)
      if (overlap(shapes[a], shapes[mb.wide[v]])) emit(a, mb.wide[v]);
  }
  // Each moving shape against the frozen ones: in each frozen band its box touches, from the
  // first box that could reach it along x (the band's boxes start in x order, none longer than
  // the band's widest; twice that for a margin against rounding) to the last that starts before
  // its end; then the wide frozen shapes.
  const Bands& fb = frozen_bands_;
  for (int i : moving_) {
    const WorldShape& s = shapes[i];
    const double min_x = s.aabb_min.x(), max_x = s.aabb_max.x();
    const int b0 = fb.band(s.aabb_min.y()), b1 = fb.band(s.aabb_max.y());
    for (int b = b0; b <= b1 && !fb.boxes.empty(); ++b) {
      const auto first = fb.boxes.begin() + fb.start[b], last = fb.boxes.begin() + fb.start[b + 1];
      const double reach = min_x - 2.0 * fb.widest[b];
      for (auto t = std::partition_point(first, last,
                                         [reach](const SweptBox& x) { return x.min_x < reach; });
           t != last && t->min_x <= max_x; ++t) {
        if (t->max_x < min_x || t->min_y > s.aabb_max.y() || t->max_y < s.aabb_min.y() ||
            t->min_z > s.aabb_max.z() || t->max_z < s.aabb_min.z())
          continue;
        if (fb.band(std::max(s.aabb_min.y(), t->min_y)) != b) continue;  // another band's
        emit(i, t->shape);
      }
    }
    for (int w : fb.wide)
      if (overlap(s, shapes[w])) emit(i, w);
  }
  // Planes and meshes against every shape that moves, and every shape when they move.
  for (int p : planes_) {
    const WorldShape& plane = shapes[p];
    auto test = [&](int i) {
      const WorldShape& s = shapes[i];
      if (plane.type == ShapeType::TriangleMesh) {
        if (overlap(s, plane)) emit(p, i);
        return;
      }
      // Lowest corner of the AABB along the plane normal.
      const Vec3 up = plane.axes.col(2);
      const Vec3 low(up.x() >= 0 ? s.aabb_min.x() : s.aabb_max.x(),
                     up.y() >= 0 ? s.aabb_min.y() : s.aabb_max.y(),
                     up.z() >= 0 ? s.aabb_min.z() : s.aabb_max.z());
      if (up.dot(low - plane.center) <= 0.0) emit(p, i);
    };
    for (int i : moving_) test(i);
    if (!frozen[p])
      for (int i : frozen_order_) test(i);
  }
  std::sort(pairs.begin(), pairs.end());
}

}  // namespace sim::dynamics::detail
