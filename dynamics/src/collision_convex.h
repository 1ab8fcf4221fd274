// Internal header, not API: what the convex narrow phase (collision_convex.cpp) shares with the
// triangle-mesh pairs (collision_mesh.cpp): support features, their point ids, polyhedra, and
// the two general generators (GJK/EPA with feature clipping; separating axes on polyhedra).
#pragma once

#include <array>
#include <cstdint>

#include "collision.h"
#include "collision_util.h"
#include "gjk.h"

namespace sim::dynamics::detail {

constexpr int kMaxPoly = 64;  // polygon corners used per face (larger faces are subsampled)
constexpr int kMaxClip = 2 * kMaxPoly + 8;
constexpr int kCapPoints = 12;  // a cylinder cap as a 12-gon of rim points (edge at 0.966 r)
// Support features within 2 degrees of the normal count as faces (or edges along it): a box
// tilted that little on a face still rests on four points, each with its true separation.
constexpr double kFeatureCos = 0.99939;
constexpr double kFeatureSin = 0.0349;
// Same as box-box: incident points this far outside the reference face are kept and snapped
// onto it (flush stacks keep their feature ids while they sway by microns).
constexpr double kClipTolerance = 1e-4;  // m
// Face axes are preferred unless an edge axis (or the other body's face) is clearly better.
constexpr double kRelTol = 0.95, kAbsTol = 0.5e-3;

enum class Kind : std::uint32_t { Witness = 0, Clip = 1, Parallel = 2, Edge = 3 };

// A point's id before packing.
struct PointId {
  Kind kind = Kind::Witness;
  bool ref_is_b = false;
  std::uint32_t ref = 0, inc = 0;  // reference / incident feature (face, edge, vertex)
  std::uint32_t point = 0;         // 14 bits: incident vertex or 0x2000 | edge << 6 | plane
};

inline std::uint32_t pack(const PointId& id, int triangle) {
  if (triangle >= 0) {
    return (static_cast<std::uint32_t>(triangle) & 0xffffu) << 16 |
           static_cast<std::uint32_t>(id.kind) << 14 | (id.point & 0x3fffu);
  }
  return static_cast<std::uint32_t>(id.kind) << 30 | (id.ref_is_b ? 1u << 29 : 0u) |
         (id.ref & 0x7fu) << 22 | (id.inc & 0x7fu) << 15 | (id.point & 0x7fffu);
}

struct Feature {
  int count = 0;  // 1 point, 2 segment, 3+ polygon (counter-clockwise from outside)
  std::array<Vec3, kMaxPoly> p{};
  std::array<std::uint32_t, kMaxPoly> vid{};  // stable id of each corner within the feature
  Vec3 normal = Vec3::Zero();                 // polygon: outward unit normal
  std::uint32_t id = 0;                       // which face / edge / vertex of the shape

  void add(const Vec3& q, std::uint32_t v) {
    p[count] = q;
    vid[count] = v;
    ++count;
  }
};

// A polyhedron placed in the world: a hull, a box (the unit cube scaled; its face normals are
// axis-aligned, so scaling leaves them unchanged), or a mesh triangle (two faces, front and
// back; its edges' Gauss-map arcs run from the front normal over the edge's outward side to the
// back normal and are split in two there).
struct Poly {
  const ConvexHullData* hull = nullptr;
  Vec3 center = Vec3::Zero();
  Mat3 axes = Mat3::Identity();
  Vec3 scale = Vec3::Ones();
  bool is_triangle = false;
  std::array<Vec3, 3> tri{};
  Vec3 tri_normal = Vec3::Zero();
  std::uint8_t tri_active = 0xff;

  int vertexCount() const { return is_triangle ? 3 : static_cast<int>(hull->vertices.size()); }
  int faceCount() const { return is_triangle ? 2 : static_cast<int>(hull->faces.size()); }
  int edgeCount() const { return is_triangle ? 3 : static_cast<int>(hull->edges.size()); }
  Vec3 vertex(int i) const {
    return is_triangle ? tri[i] : Vec3(center + axes * scale.cwiseProduct(hull->vertices[i]));
  }
  Vec3 normal(int f) const {
    if (is_triangle) return f == 0 ? tri_normal : Vec3(-tri_normal);
    return axes * hull->faces[f].normal;
  }
  double offset(int f) const {
    if (is_triangle) return normal(f).dot(tri[0]);
    const Vec3& n = hull->faces[f].normal;
    return normal(f).dot(center) + hull->faces[f].offset * n.cwiseProduct(scale).norm();
  }
  void face(int f, Feature& out) const {
    out.count = 0;
    if (is_triangle) {
      const int order[2][3] = {{0, 1, 2}, {0, 2, 1}};
      for (int i : order[f]) out.add(tri[i], static_cast<std::uint32_t>(i));
    } else {
      const ConvexHullData::Face& fc = hull->faces[f];
      const int step = (fc.count + kMaxPoly - 1) / kMaxPoly;
      for (int k = 0; k < fc.count; k += step)
        out.add(vertex(hull->face_vertices[fc.first + k]), static_cast<std::uint32_t>(k));
    }
    out.normal = normal(f);
    out.id = static_cast<std::uint32_t>(f);
  }
  void edge(int e, Vec3& p0, Vec3& p1, Vec3& n_left, Vec3& n_right) const {
    if (is_triangle) {
      p0 = tri[e];
      p1 = tri[(e + 1) % 3];
      n_left = tri_normal;
      n_right = -tri_normal;
      return;
    }
    const ConvexHullData::Edge& ed = hull->edges[e];
    p0 = vertex(ed.v0);
    p1 = vertex(ed.v1);
    n_left = normal(ed.face_left);
    n_right = normal(ed.face_right);
  }
  bool edgeActive(int e) const { return !is_triangle || (tri_active >> e & 1u); }
  // Lowest vertex along n: min over vertices of n . v.
  double lowest(const Vec3& n) const {
    double lo = kInf;
    for (int i = 0; i < vertexCount(); ++i) lo = std::min(lo, n.dot(vertex(i)));
    return lo;
  }
};

ConvexSupport supportOf(const WorldShape& s);
/// General convex pair: GJK/EPA normal, then the support features clipped or the witness points.
/// `triangle` >= 0 packs a mesh triangle's index into the point ids.
bool convexConvex(const ConvexSupport& a, const ConvexSupport& b, double margin, int triangle,
                  Manifold& m);
Poly polyOf(const WorldShape& s);
/// Polyhedra by separating axes, then the incident face clipped against the reference face.
bool polyPoly(const Poly& a, const Poly& b, double margin, int triangle, Manifold& m);

}  // namespace sim::dynamics::detail
