// Narrow phase for cylinders and convex hulls (and, through collision_convex.h, the triangles of
// the meshes in collision_mesh.cpp).
//
// Three generators, all stateless and double precision:
//  - Direct formulas where they are short and exact: cylinder-plane (rim points), hull-plane
//    (vertices), sphere-cylinder and sphere-hull (closest point), sphere-triangle
//    (collision_mesh.cpp).
//  - Polyhedra (hull, box, mesh triangle) against polyhedra: separating axes over the face
//    normals and the edge pairs that form faces of the Minkowski difference (Gauss-map test),
//    faces preferred with box-box's tolerances, then the incident face clipped against the
//    reference face's side planes. A box seen as a hull gives box-box's manifold.
//  - Everything else (cylinders, capsules against hulls and triangles): GJK distance between the
//    cores, EPA when they overlap, for the normal; then the "support features" of both shapes
//    along it (a face polygon, a cylinder cap as a 12-gon of rim points, an edge or a cylinder's
//    side line as a segment, or a point) are clipped like faces, or the witness points are used.
//
// Feature ids pack the generator, which side is the reference, the features involved and the
// point's origin in the clip (incident vertex, or incident edge crossed with a side plane), so
// they stay fixed while the same features touch. For meshes the upper 16 bits carry the triangle
// index (modulo 65536) and the lower 16 the point within the triangle's manifold.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <numbers>
#include <vector>

#include "collision.h"
#include "collision_convex.h"
#include "collision_util.h"
#include "gjk.h"

namespace sim::dynamics::detail {

namespace {
// ---- support features ---------------------------------------------------------------------

void boxFeature(const ConvexSupport& s, const Vec3& dir, Feature& f) {
  int axis = 0;
  for (int k = 1; k < 3; ++k)
    if (std::abs(s.axes.col(k).dot(dir)) > std::abs(s.axes.col(axis).dot(dir))) axis = k;
  const double along = s.axes.col(axis).dot(dir);
  if (std::abs(along) >= kFeatureCos) {
    const double sg = along > 0.0 ? 1.0 : -1.0;
    const int u = (axis + 1) % 3, v = (axis + 2) % 3;
    const Vec3 fc = s.center + sg * s.half_extents[axis] * s.axes.col(axis);
    const Vec3 eu = s.half_extents[u] * s.axes.col(u), ev = s.half_extents[v] * s.axes.col(v);
    const Vec3 corners[4] = {fc + eu + ev, fc - eu + ev, fc - eu - ev, fc + eu - ev};
    for (int k = 0; k < 4; ++k) {
      const int i = sg > 0.0 ? k : 3 - k;  // counter-clockwise seen from outside
      f.add(corners[i], static_cast<std::uint32_t>(i));
    }
    f.normal = sg * s.axes.col(axis);
    f.id = static_cast<std::uint32_t>(axis * 2 + (sg > 0.0 ? 0 : 1));
    return;
  }
  // An edge nearly perpendicular to the direction, else the corner.
  for (int k = 0; k < 3; ++k) {
    if (std::abs(s.axes.col(k).dot(dir)) > kFeatureSin) continue;
    Vec3 c = s.center;
    for (int j = 0; j < 3; ++j)
      if (j != k)
        c += (s.axes.col(j).dot(dir) >= 0.0 ? 1.0 : -1.0) * s.half_extents[j] * s.axes.col(j);
    f.add(c - s.half_extents[k] * s.axes.col(k), 0);
    f.add(c + s.half_extents[k] * s.axes.col(k), 1);
    f.id = static_cast<std::uint32_t>(6 + k);
    return;
  }
  f.add(s.support(dir), 0);
  f.id = 9;
}

void cylinderFeature(const ConvexSupport& s, const Vec3& dir, Feature& f) {
  const Vec3 u = s.axes.col(2);
  const double along = u.dot(dir);
  if (std::abs(along) >= kFeatureCos) {
    const double sg = along > 0.0 ? 1.0 : -1.0;
    const Vec3 cap = s.center + sg * s.half_length * u;
    for (int k = 0; k < kCapPoints; ++k) {
      const int i = sg > 0.0 ? k : kCapPoints - 1 - k;  // counter-clockwise seen from outside
      const double angle = 2.0 * std::numbers::pi * i / kCapPoints;
      f.add(cap + s.cylinder_radius *
                      (std::cos(angle) * s.axes.col(0) + std::sin(angle) * s.axes.col(1)),
            static_cast<std::uint32_t>(i));
    }
    f.normal = sg * u;
    f.id = sg > 0.0 ? 0u : 1u;
    return;
  }
  if (std::abs(along) <= kFeatureSin) {
    const Vec3 radial = (dir - along * u).normalized();
    const Vec3 line = s.center + s.cylinder_radius * radial;
    f.add(line - s.half_length * u, 0);
    f.add(line + s.half_length * u, 1);
    f.id = 2;
    return;
  }
  f.add(s.support(dir), 0);
  f.id = along > 0.0 ? 3u : 4u;
}

void hullFeature(const ConvexSupport& s, const Vec3& dir, Feature& f) {
  const ConvexHullData& h = *s.hull;
  const Vec3 local = s.axes.transpose() * dir;
  int best = 0;
  for (int i = 1; i < static_cast<int>(h.faces.size()); ++i)
    if (h.faces[i].normal.dot(local) > h.faces[best].normal.dot(local)) best = i;
  const ConvexHullData::Face& face = h.faces[best];
  if (face.normal.dot(local) >= kFeatureCos) {
    const int step = (face.count + kMaxPoly - 1) / kMaxPoly;
    for (int k = 0; k < face.count; k += step)
      f.add(s.center + s.axes * h.vertices[h.face_vertices[face.first + k]],
            static_cast<std::uint32_t>(k));
    f.normal = s.axes * face.normal;
    f.id = static_cast<std::uint32_t>(best);
    return;
  }
  // The support vertex, or an edge from it nearly perpendicular to the direction.
  int v = 0;
  for (int i = 1; i < static_cast<int>(h.vertices.size()); ++i)
    if (h.vertices[i].dot(local) > h.vertices[v].dot(local)) v = i;
  int edge = -1;
  double flattest = kFeatureSin;
  for (int e = 0; e < static_cast<int>(h.edges.size()); ++e) {
    const auto& ed = h.edges[e];
    if (ed.v0 != v && ed.v1 != v) continue;
    const Vec3 d = h.vertices[ed.v1] - h.vertices[ed.v0];
    const double tilt = std::abs(d.dot(local)) / d.norm();
    if (tilt <= flattest) {
      flattest = tilt;
      edge = e;
    }
  }
  if (edge >= 0) {
    f.add(s.center + s.axes * h.vertices[h.edges[edge].v0], 0);
    f.add(s.center + s.axes * h.vertices[h.edges[edge].v1], 1);
    f.id = static_cast<std::uint32_t>(h.faces.size() + edge);
    return;
  }
  f.add(s.center + s.axes * h.vertices[v], 0);
  f.id = static_cast<std::uint32_t>(h.faces.size() + h.edges.size() + v);
}

void triangleFeature(const ConvexSupport& s, const Vec3& dir, Feature& f) {
  const auto& t = s.triangle;
  const Vec3 n = (t[1] - t[0]).cross(t[2] - t[0]).normalized();
  const double along = n.dot(dir);
  if (std::abs(along) >= kFeatureCos) {
    const int order[2][3] = {{0, 1, 2}, {0, 2, 1}};
    for (int i : order[along > 0.0 ? 0 : 1]) f.add(t[i], static_cast<std::uint32_t>(i));
    f.normal = along > 0.0 ? n : Vec3(-n);
    f.id = along > 0.0 ? 0u : 1u;
    return;
  }
  int v = 0;
  for (int i = 1; i < 3; ++i)
    if (t[i].dot(dir) > t[v].dot(dir)) v = i;
  int edge = -1;
  double flattest = kFeatureSin;
  for (int e : {v, (v + 2) % 3}) {  // the two edges at v: v -> v+1 and v-1 -> v
    const Vec3 d = t[(e + 1) % 3] - t[e];
    const double tilt = std::abs(d.dot(dir)) / d.norm();
    if (tilt <= flattest) {
      flattest = tilt;
      edge = e;
    }
  }
  if (edge >= 0) {
    f.add(t[edge], static_cast<std::uint32_t>(edge));
    f.add(t[(edge + 1) % 3], static_cast<std::uint32_t>((edge + 1) % 3));
    f.id = static_cast<std::uint32_t>(2 + edge);
    return;
  }
  f.add(t[v], static_cast<std::uint32_t>(v));
  f.id = static_cast<std::uint32_t>(5 + v);
}

// The feature of s farthest along the unit direction `dir`; cores for round shapes.
void supportFeature(const ConvexSupport& s, const Vec3& dir, Feature& f) {
  f.count = 0;
  f.id = 0;
  using K = ConvexSupport::Kind;
  switch (s.kind) {
    case K::Point: f.add(s.center, 0); break;
    case K::Segment: {
      const Vec3 u = s.axes.col(2);
      const double along = u.dot(dir);
      if (std::abs(along) <= kFeatureSin && s.half_length > 0.0) {
        f.add(s.center - s.half_length * u, 0);
        f.add(s.center + s.half_length * u, 1);
      } else {
        f.add(s.support(dir), 0);
        f.id = along >= 0.0 ? 1u : 2u;
      }
      break;
    }
    case K::Box: boxFeature(s, dir, f); break;
    case K::Cylinder: cylinderFeature(s, dir, f); break;
    case K::Hull: hullFeature(s, dir, f); break;
    case K::Triangle: triangleFeature(s, dir, f); break;
  }
}

// ---- clipping -----------------------------------------------------------------------------

struct ClipPoint {
  Vec3 p;
  std::uint32_t id;  // corner id, or 0x2000 | edge << 6 | plane for a crossing
  int edge;          // the edge that starts here: an incident edge, or 64 + side plane
};

// Clips the polygon (or segment, n == 2) `poly` against the side planes of the reference
// polygon `ref` with outward normal `normal`; returns the number of points left in `poly`.
int clipAgainstSides(const Feature& ref, const Vec3& normal, ClipPoint* poly, int n) {
  ClipPoint next[kMaxClip];
  for (int k = 0; k < ref.count && n > 0; ++k) {
    const Vec3 edge = ref.p[(k + 1) % ref.count] - ref.p[k];
    const Vec3 side = edge.cross(normal).normalized();
    const double offset = side.dot(ref.p[k]) + kClipTolerance;
    const std::uint32_t plane = static_cast<std::uint32_t>(k & 63);
    if (n == 2) {  // a segment: clip its parameter range
      const double d0 = side.dot(poly[0].p) - offset, d1 = side.dot(poly[1].p) - offset;
      if (d0 > 0.0 && d1 > 0.0) return 0;
      if (d0 > 0.0 || d1 > 0.0) {
        const Vec3 x = poly[0].p + d0 / (d0 - d1) * (poly[1].p - poly[0].p);
        ClipPoint& moved = d0 > 0.0 ? poly[0] : poly[1];
        moved = {x, 0x2000u | (d0 > 0.0 ? 0u : 1u) << 6 | plane, moved.edge};
      }
      continue;
    }
    int out = 0;
    for (int i = 0; i < n; ++i) {
      const ClipPoint& p0 = poly[i];
      const ClipPoint& p1 = poly[(i + 1) % n];
      const double d0 = side.dot(p0.p) - offset, d1 = side.dot(p1.p) - offset;
      if (d0 <= 0.0) next[out++] = p0;
      if ((d0 < 0.0 && d1 > 0.0) || (d0 > 0.0 && d1 < 0.0)) {
        const std::uint32_t id =
            0x2000u | (static_cast<std::uint32_t>(p0.edge) & 0x7fu) << 6 | plane;
        next[out++] = {p0.p + d0 / (d0 - d1) * (p1.p - p0.p), id, d0 < 0.0 ? 64 + k : p0.edge};
      }
    }
    n = out;
    std::copy(next, next + n, poly);
  }
  // Points kept within the tolerance go onto the face's sides (after all the cuts, so the
  // result does not depend on the order of the sides).
  for (int k = 0; k < ref.count && n > 0; ++k) {
    const Vec3 side = (ref.p[(k + 1) % ref.count] - ref.p[k]).cross(normal).normalized();
    const double exact = side.dot(ref.p[k]);
    for (int i = 0; i < n; ++i) {
      const double beyond = side.dot(poly[i].p) - exact;
      if (beyond > 0.0) poly[i].p -= beyond * side;
    }
  }
  return n;
}

// Face-style manifold: the incident feature clipped to the reference polygon. `ref_is_a` says
// which shape the reference belongs to; radii round the cores. Returns false if nothing is left.
bool clipManifold(const Feature& ref, const Feature& inc, bool ref_is_a, double r_ref, double r_inc,
                  double margin, int triangle, Manifold& m) {
  const Vec3 n = ref.normal;  // from the reference toward the incident shape
  ClipPoint poly[kMaxClip];
  for (int i = 0; i < inc.count; ++i) poly[i] = {inc.p[i], inc.vid[i], i};
  const int count = clipAgainstSides(ref, n, poly, inc.count);
  double offset = -kInf;
  for (int i = 0; i < ref.count; ++i) offset = std::max(offset, n.dot(ref.p[i]));
  ManifoldPoint cand[kMaxClip];
  int c = 0;
  PointId id{Kind::Clip, !ref_is_a, ref.id, inc.id, 0};
  for (int i = 0; i < count; ++i) {
    const double height = n.dot(poly[i].p) - offset;
    const double sep = height - r_inc - r_ref;
    if (sep > margin) continue;
    const Vec3 on_inc = poly[i].p - r_inc * n;
    const Vec3 on_ref = poly[i].p - (height - r_ref) * n;
    id.point = poly[i].id;
    const std::uint32_t feature = pack(id, triangle);
    cand[c++] = ref_is_a ? ManifoldPoint{on_ref, on_inc, sep, feature}
                         : ManifoldPoint{on_inc, on_ref, sep, feature};
  }
  if (c == 0) return false;
  m.normal = ref_is_a ? n : Vec3(-n);
  c = reduceToFour(cand, c, m.normal);
  m.count = 0;
  for (int i = 0; i < c; ++i) m.points[m.count++] = cand[i];
  return true;
}

// Two nearly parallel segments (cylinder sides, capsule cores): the ends of their overlap.
bool parallelManifold(const Feature& fa, const Feature& fb, const Vec3& n, double ra, double rb,
                      double margin, int triangle, Manifold& m) {
  const Vec3 da = fa.p[1] - fa.p[0], db = fb.p[1] - fb.p[0];
  const double la = da.norm(), lb = db.norm();
  if (la <= 0.0 || lb <= 0.0 || da.cross(db).norm() > kFeatureSin * la * lb) return false;
  const Vec3 u = da / la;
  const double s0 = (fb.p[0] - fa.p[0]).dot(u), s1 = (fb.p[1] - fa.p[0]).dot(u);
  const double lo = std::max(0.0, std::min(s0, s1)), hi = std::min(la, std::max(s0, s1));
  if (hi - lo <= 1e-9) return false;
  m.normal = n;
  m.count = 0;
  for (int k = 0; k < 2; ++k) {
    const Vec3 core_a = fa.p[0] + (k == 0 ? lo : hi) * u;
    const double t = std::clamp((core_a - fb.p[0]).dot(db) / (lb * lb), 0.0, 1.0);
    const Vec3 core_b = fb.p[0] + t * db;
    const Vec3 on_a = core_a + ra * n, on_b = core_b - rb * n;
    const double sep = n.dot(on_b - on_a);
    if (sep > margin) continue;
    const PointId id{Kind::Parallel, false, fa.id, fb.id, static_cast<std::uint32_t>(k)};
    m.points[m.count++] = {on_a, on_b, sep, pack(id, triangle)};
  }
  return m.count > 0;
}

}  // namespace

// ---- GJK/EPA pairs ------------------------------------------------------------------------

ConvexSupport supportOf(const WorldShape& s) {
  ConvexSupport c;
  c.center = s.center;
  c.axes = s.axes;
  using K = ConvexSupport::Kind;
  switch (s.type) {
    case ShapeType::Sphere:
      c.kind = K::Point;
      c.radius = s.radius;
      break;
    case ShapeType::Capsule:
      c.kind = K::Segment;
      c.half_length = s.half_length;
      c.radius = s.radius;
      break;
    case ShapeType::Box:
      c.kind = K::Box;
      c.half_extents = s.half_extents;
      break;
    case ShapeType::Cylinder:
      c.kind = K::Cylinder;
      c.half_length = s.half_length;
      c.cylinder_radius = s.radius;
      break;
    case ShapeType::ConvexHull:
      c.kind = K::Hull;
      c.hull = s.hull;
      break;
    case ShapeType::Plane:
    case ShapeType::TriangleMesh: break;  // not convex sets; never passed here
  }
  return c;
}

/// General convex pair: GJK/EPA normal, then the support features clipped or the witness points.
bool convexConvex(const ConvexSupport& a, const ConvexSupport& b, double margin, int triangle,
                  Manifold& m) {
  const GjkResult g = gjkDistance(a, b);
  Vec3 n, on_a, on_b;
  double sep = 0.0;
  if (!g.overlap) {
    sep = g.distance - a.radius - b.radius;
    if (sep > margin) return false;
    n = g.normal;
    on_a = g.on_a + a.radius * n;
    on_b = g.on_b - b.radius * n;
  } else {
    double depth = 0.0;
    if (!epaPenetration(a, b, g, n, depth, on_a, on_b)) return false;
    sep = -depth;
  }
  Feature fa, fb;
  supportFeature(a, n, fa);
  supportFeature(b, -n, fb);
  m.count = 0;
  // A polygon on either side is the reference (a's when both are); the other feature is clipped.
  if (fa.count >= 3 && fb.count >= 2 &&
      clipManifold(fa, fb, true, a.radius, b.radius, margin, triangle, m))
    return true;
  if (fb.count >= 3 && fa.count >= 2 &&
      clipManifold(fb, fa, false, b.radius, a.radius, margin, triangle, m))
    return true;
  if (fa.count == 2 && fb.count == 2 &&
      parallelManifold(fa, fb, n, a.radius, b.radius, margin, triangle, m))
    return true;
  // A single point: the witnesses.
  m.normal = n;
  m.count = 0;
  const PointId id{Kind::Witness, false, fa.id, fb.id, 0};
  m.points[m.count++] = {on_a, on_b, sep, pack(id, triangle)};
  return true;
}

namespace {

// ---- polyhedra: separating axes ----------------------------------------------------------

// The unit cube [-1, 1]^3 as a hull; a box is this, scaled by its half extents.
const ConvexHullData& unitCube() {
  static const std::shared_ptr<const ConvexHullData> cube = [] {
    std::vector<Vec3> corners;
    for (int i = 0; i < 8; ++i)
      corners.emplace_back(i & 1 ? 1 : -1, i & 2 ? 1 : -1, i & 4 ? 1 : -1);
    return makeConvexHull(corners);
  }();
  return *cube;
}

}  // namespace

Poly polyOf(const WorldShape& s) {
  Poly p;
  p.center = s.center;
  p.axes = s.axes;
  if (s.type == ShapeType::Box) {
    p.hull = &unitCube();
    p.scale = s.half_extents;
  } else {
    p.hull = s.hull;
  }
  return p;
}

// Whether great arcs a-b and c-d on the unit sphere cross (Gregorius, "The separating axis test
// between convex polyhedra", GDC 2013): then the edges' cross product is a face normal of the
// Minkowski difference. Arcs must be shorter than half a circle.
namespace {

bool arcsCross(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
  const Vec3 bxa = b.cross(a), dxc = d.cross(c);
  const double cba = c.dot(bxa), dba = d.dot(bxa), adc = a.dot(dxc), bdc = b.dot(dxc);
  return cba * dba < 0.0 && adc * bdc < 0.0 && cba * bdc > 0.0;
}

// The Gauss-map arcs of an edge (one, or two for a triangle's edge, split at the outward side).
int edgeArcs(const Vec3& p0, const Vec3& p1, const Vec3& nl, const Vec3& nr, bool flat,
             std::array<std::pair<Vec3, Vec3>, 2>& arcs) {
  if (!flat) {
    arcs[0] = {nl, nr};
    return 1;
  }
  const Vec3 out = (p1 - p0).cross(nl).normalized();  // nl is the front normal, edge ccw
  arcs[0] = {nl, out};
  arcs[1] = {out, nr};
  return 2;
}

/// Polyhedron pair by separating axes; manifold normal from a to b. Triangle edges marked
/// inactive are not tried as axes, so an internal edge of a flat mesh never tilts the normal.
}  // namespace

bool polyPoly(const Poly& a, const Poly& b, double margin, int triangle, Manifold& m) {
  double face_a = -kInf, face_b = -kInf;
  int best_a = 0, best_b = 0;
  for (int f = 0; f < a.faceCount(); ++f) {
    const Vec3 n = a.normal(f);
    const double s = b.lowest(n) - a.offset(f);
    if (s > margin) return false;
    if (s > face_a) {
      face_a = s;
      best_a = f;
    }
  }
  for (int f = 0; f < b.faceCount(); ++f) {
    const Vec3 n = b.normal(f);
    const double s = a.lowest(n) - b.offset(f);
    if (s > margin) return false;
    if (s > face_b) {
      face_b = s;
      best_b = f;
    }
  }
  double edge = -kInf;
  int edge_a = -1, edge_b = -1;
  Vec3 edge_n = Vec3::Zero();
  for (int i = 0; i < a.edgeCount(); ++i) {
    if (!a.edgeActive(i)) continue;
    Vec3 pa0, pa1, al, ar;
    a.edge(i, pa0, pa1, al, ar);
    std::array<std::pair<Vec3, Vec3>, 2> arcs_a;
    const int na = edgeArcs(pa0, pa1, al, ar, a.is_triangle, arcs_a);
    for (int j = 0; j < b.edgeCount(); ++j) {
      if (!b.edgeActive(j)) continue;
      Vec3 pb0, pb1, bl, br;
      b.edge(j, pb0, pb1, bl, br);
      std::array<std::pair<Vec3, Vec3>, 2> arcs_b;
      const int nb = edgeArcs(pb0, pb1, bl, br, b.is_triangle, arcs_b);
      bool crossing = false;
      Vec3 toward = Vec3::Zero();  // a's outward side at the crossing
      for (int x = 0; x < na && !crossing; ++x)
        for (int y = 0; y < nb && !crossing; ++y)
          if (arcsCross(arcs_a[x].first, arcs_a[x].second, -arcs_b[y].first, -arcs_b[y].second)) {
            crossing = true;
            toward = arcs_a[x].first + arcs_a[x].second;
          }
      if (!crossing) continue;
      const Vec3 da = (pa1 - pa0).normalized(), db = (pb1 - pb0).normalized();
      Vec3 n = da.cross(db);
      const double len = n.norm();
      if (len < 1e-6) continue;  // parallel edges: the face axes cover them
      n /= len;
      if (n.dot(toward) < 0.0) n = -n;
      const double s = n.dot(pb0 - pa0);
      if (s > margin) return false;
      if (s > edge) {
        edge = s;
        edge_a = i;
        edge_b = j;
        edge_n = n;
      }
    }
  }
  const bool use_b = face_b > kRelTol * face_a + kAbsTol;
  const double face = use_b ? face_b : face_a;
  m.count = 0;
  if (edge_a >= 0 && edge > kRelTol * face + kAbsTol) {
    Vec3 pa0, pa1, pb0, pb1, unused0, unused1;
    a.edge(edge_a, pa0, pa1, unused0, unused1);
    b.edge(edge_b, pb0, pb1, unused0, unused1);
    Vec3 ca, cb;
    closestSegmentPoints(pa0, pa1 - pa0, pb0, pb1 - pb0, ca, cb);
    m.normal = edge_n;
    const PointId id{Kind::Edge, false, static_cast<std::uint32_t>(edge_a),
                     static_cast<std::uint32_t>(edge_b), 0};
    addPoint(m, ca, cb, pack(id, triangle));
    return true;
  }
  // Face contact: the incident face is the other body's face most anti-parallel to the normal.
  const Poly& ref = use_b ? b : a;
  const Poly& inc = use_b ? a : b;
  Feature ref_face, inc_face;
  ref.face(use_b ? best_b : best_a, ref_face);
  const Vec3 n = ref_face.normal;
  int inc_best = 0;
  for (int f = 1; f < inc.faceCount(); ++f)
    if (inc.normal(f).dot(n) < inc.normal(inc_best).dot(n)) inc_best = f;
  inc.face(inc_best, inc_face);
  return clipManifold(ref_face, inc_face, !use_b, 0.0, 0.0, margin, triangle, m);
}

namespace {

// ---- direct pairs -------------------------------------------------------------------------

// Cylinder on a plane: four rim points of each cap (fixed in the body, so resting contacts keep
// their ids); the cap's exact lowest rim point replaces the nearest of them when it lies deeper
// by more than a micrometre (tilted: the edge it stands on; lying: the ends of the contact line).
bool cylinderPlane(const WorldShape& c, const WorldShape& plane, double margin, Manifold& m) {
  constexpr double kRimTolerance = 1e-6;
  const Vec3 up = plane.axes.col(2), u = c.axes.col(2);
  const Vec3 rim[4] = {c.axes.col(0), c.axes.col(1), -c.axes.col(0), -c.axes.col(1)};
  Vec3 pts[8];
  const double zero[8] = {};
  const Vec3 down = -(up - up.dot(u) * u);  // steepest descent within the cap planes
  const double down_len = down.norm();
  for (int cap = 0; cap < 2; ++cap) {
    const Vec3 cc = c.center + (cap == 0 ? -c.half_length : c.half_length) * u;
    double lowest_fixed = kInf;
    int nearest = 0;
    for (int k = 0; k < 4; ++k) {
      pts[cap * 4 + k] = cc + c.radius * rim[k];
      lowest_fixed = std::min(lowest_fixed, up.dot(pts[cap * 4 + k]));
      if (rim[k].dot(down) > rim[nearest].dot(down)) nearest = k;
    }
    if (down_len > 1e-12) {
      const Vec3 low = cc + (c.radius / down_len) * down;
      if (up.dot(low) < lowest_fixed - kRimTolerance) pts[cap * 4 + nearest] = low;
    }
  }
  return pointsOnPlane(pts, zero, 8, plane, margin, m);
}

// Hull on a plane: the corners of the face turned most toward the plane, plus the deepest
// vertex; each point's id is its vertex index.
bool hullPlane(const WorldShape& h, const WorldShape& plane, double margin, Manifold& m) {
  const ConvexHullData& hull = *h.hull;
  const Vec3 up = plane.axes.col(2);
  const Vec3 local_down = h.axes.transpose() * -up;
  int face = 0;
  for (int f = 1; f < static_cast<int>(hull.faces.size()); ++f)
    if (hull.faces[f].normal.dot(local_down) > hull.faces[face].normal.dot(local_down)) face = f;
  int deepest = 0;
  for (int i = 1; i < static_cast<int>(hull.vertices.size()); ++i)
    if (hull.vertices[i].dot(local_down) > hull.vertices[deepest].dot(local_down)) deepest = i;
  ManifoldPoint cand[kMaxPoly + 1];
  int c = 0;
  auto consider = [&](int v) {
    const Vec3 p = h.center + h.axes * hull.vertices[v];
    const double height = up.dot(p - plane.center);
    if (height <= margin) cand[c++] = {p, p - height * up, height, static_cast<std::uint32_t>(v)};
  };
  const ConvexHullData::Face& fc = hull.faces[face];
  const int step = (fc.count + kMaxPoly - 1) / kMaxPoly;
  bool has_deepest = false;
  for (int k = 0; k < fc.count; k += step) {
    const int v = hull.face_vertices[fc.first + k];
    has_deepest = has_deepest || v == deepest;
    consider(v);
  }
  if (!has_deepest) consider(deepest);
  m.normal = -up;  // from the hull (a) into the plane (b)
  c = reduceToFour(cand, c, m.normal);
  m.count = 0;
  for (int i = 0; i < c; ++i) m.points[m.count++] = cand[i];
  return m.count > 0;
}

// Sphere (a) against cylinder (b): the closest point of the solid cylinder, or, with the centre
// inside, out through the nearest of side, top and bottom.
bool sphereCylinder(const WorldShape& s, const WorldShape& c, double margin, Manifold& m) {
  const Vec3 local = c.axes.transpose() * (s.center - c.center);
  const double rho = local.head<2>().norm();
  if (rho <= c.radius && std::abs(local.z()) <= c.half_length) {
    const double side = c.radius - rho, top = c.half_length - local.z(),
                 bottom = c.half_length + local.z();
    Vec3 out;
    double depth;
    if (side < top && side < bottom) {
      out = rho > 1e-12 ? Vec3(c.axes * Vec3(local.x() / rho, local.y() / rho, 0.0))
                        : Vec3(c.axes.col(0));
      depth = side;
    } else {
      out = top <= bottom ? Vec3(c.axes.col(2)) : Vec3(-c.axes.col(2));
      depth = std::min(top, bottom);
    }
    m.normal = -out;
    m.count = 0;
    addPoint(m, s.center - s.radius * out, s.center + depth * out, 1);
    return true;
  }
  Vec3 q(0.0, 0.0, std::clamp(local.z(), -c.half_length, c.half_length));
  if (rho > 0.0) q.head<2>() = local.head<2>() * (std::min(rho, c.radius) / rho);
  return roundedPair(s.center, s.radius, c.center + c.axes * q, 0.0, margin, Vec3::UnitZ(), 0, m);
}

// Sphere (a) against hull (b): GJK's closest point, or out through the least-deep face.
bool sphereHull(const WorldShape& s, const WorldShape& h, double margin, Manifold& m) {
  const ConvexHullData& hull = *h.hull;
  const Vec3 local = h.axes.transpose() * (s.center - h.center);
  int face = 0;
  double most = -kInf;
  for (int f = 0; f < static_cast<int>(hull.faces.size()); ++f) {
    const double d = hull.faces[f].normal.dot(local) - hull.faces[f].offset;
    if (d > most) {
      most = d;
      face = f;
    }
  }
  if (most <= 0.0) {
    const Vec3 out = h.axes * hull.faces[face].normal;
    m.normal = -out;
    m.count = 0;
    addPoint(m, s.center - s.radius * out, s.center - most * out, 1);
    return true;
  }
  ConvexSupport point, body = supportOf(h);
  point.center = s.center;
  const GjkResult g = gjkDistance(point, body);
  if (g.overlap) return false;  // unreachable: the centre is outside a face plane
  return roundedPair(s.center, s.radius, g.on_b, 0.0, margin, Vec3::UnitZ(), 0, m);
}

}  // namespace

bool collideConvexPair(const WorldShape& a, const WorldShape& b, double margin, Manifold& m) {
  m.count = 0;
  if (b.type == ShapeType::Cylinder) {
    switch (a.type) {
      case ShapeType::Sphere: return sphereCylinder(a, b, margin, m);
      case ShapeType::Plane:
        if (!cylinderPlane(b, a, margin, m)) return false;
        flip(m);
        return true;
      default: return convexConvex(supportOf(a), supportOf(b), margin, -1, m);
    }
  }
  if (b.type == ShapeType::ConvexHull) {
    if (a.type == ShapeType::Sphere) return sphereHull(a, b, margin, m);
    if (a.type == ShapeType::Plane) {
      if (!hullPlane(b, a, margin, m)) return false;
      flip(m);
      return true;
    }
    return convexConvex(supportOf(a), supportOf(b), margin, -1, m);
  }
  return false;
}

bool collidePolyhedra(const WorldShape& a, const WorldShape& b, double margin, Manifold& m) {
  m.count = 0;
  return polyPoly(polyOf(a), polyOf(b), margin, -1, m);
}

}  // namespace sim::dynamics::detail
