// Narrow phase against static triangle meshes (collision.h: collideMesh): the triangles under
// the other shape's bounds, each one a polyhedron of two faces (separating axes,
// collision_convex.h) or, for round shapes, closest points; internal edges (TriangleMeshData's
// active flags) keep the face normal, so a body sliding over a flat mesh sees a plane. Point ids
// carry the triangle index (modulo 65536) in their upper 16 bits.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include <dynamics/shapes.h>

#include "collision.h"
#include "collision_convex.h"
#include "collision_util.h"

namespace sim::dynamics::detail {

namespace {

// ---- triangle meshes ----------------------------------------------------------------------

// Closest point of triangle t to p and the feature it lies on: 0 the face, 1..3 edge k-1
// (vertex k-1 -> k), 4..6 vertex k-4 (Ericson 5.1.5).
Vec3 closestOnTriangle(const std::array<Vec3, 3>& t, const Vec3& p, int& feature) {
  const Vec3 ab = t[1] - t[0], ac = t[2] - t[0], ap = p - t[0];
  const double d1 = ab.dot(ap), d2 = ac.dot(ap);
  if (d1 <= 0.0 && d2 <= 0.0) {
    feature = 4;
    return t[0];
  }
  const Vec3 bp = p - t[1];
  const double d3 = ab.dot(bp), d4 = ac.dot(bp);
  if (d3 >= 0.0 && d4 <= d3) {
    feature = 5;
    return t[1];
  }
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
    feature = 1;
    return t[0] + d1 / (d1 - d3) * ab;
  }
  const Vec3 cp = p - t[2];
  const double d5 = ab.dot(cp), d6 = ac.dot(cp);
  if (d6 >= 0.0 && d5 <= d6) {
    feature = 6;
    return t[2];
  }
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
    feature = 3;
    return t[0] + d2 / (d2 - d6) * ac;
  }
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0) {
    feature = 2;
    return t[1] + (d4 - d3) / ((d4 - d3) + (d5 - d6)) * (t[2] - t[1]);
  }
  feature = 0;
  const double den = 1.0 / (va + vb + vc);
  return t[0] + ab * (vb * den) + ac * (vc * den);
}

bool featureActive(std::uint8_t active, int feature) {
  if (feature == 0) return false;
  if (feature <= 3) return active >> (feature - 1) & 1u;
  return active >> (3 + feature - 4) & 1u;
}

// The triangle's plane normal on the side of point p.
Vec3 facing(const std::array<Vec3, 3>& t, const Vec3& normal, const Vec3& p) {
  return normal.dot(p - t[0]) >= 0.0 ? normal : Vec3(-normal);
}

// Triangle (a) against sphere (b). On an inactive edge or vertex the face normal is used, so a
// sphere rolls across the joins of a flat mesh as over a plane.
bool triangleSphere(const std::array<Vec3, 3>& t, const Vec3& normal, std::uint8_t active,
                    const WorldShape& s, double margin, int triangle, Manifold& m) {
  int feature = 0;
  const Vec3 q = closestOnTriangle(t, s.center, feature);
  const Vec3 up = facing(t, normal, s.center);
  const std::uint32_t id = pack(PointId{}, triangle);
  if ((s.center - q).norm() - s.radius > margin) return false;
  if (feature != 0 && !featureActive(active, feature)) {
    const double height = up.dot(s.center - t[0]);
    if (height - s.radius > margin) return false;
    m.normal = up;
    m.count = 0;
    addPoint(m, s.center - height * up, s.center - s.radius * up, id);
    return true;
  }
  return roundedPair(q, 0.0, s.center, s.radius, margin, up, id, m);
}

// Which feature of triangle t a point on it lies on (0 face, 1..3 edge k-1, 4..6 vertex k-4),
// from its barycentric weights; within 1e-6 of the triangle's size counts as on the boundary.
int featureAt(const std::array<Vec3, 3>& t, const Vec3& q) {
  constexpr double kOnBoundary = 1e-6;
  const Vec3 n = (t[1] - t[0]).cross(t[2] - t[0]);
  int small = 0, count = 0;
  for (int k = 0; k < 3; ++k) {
    const double w = (t[(k + 1) % 3] - q).cross(t[(k + 2) % 3] - q).dot(n) / n.squaredNorm();
    if (w < kOnBoundary) {
      small |= 1 << k;
      ++count;
    }
  }
  if (count == 0) return 0;
  if (count == 1) {
    const int opposite = small == 1 ? 0 : (small == 2 ? 1 : 2);
    return 1 + (opposite + 1) % 3;  // the edge (opposite + 1) -> (opposite + 2)
  }
  for (int k = 0; k < 3; ++k)
    if (!(small >> k & 1)) return 4 + k;
  return 4;
}

// After a general triangle-shape manifold: if its normal is not the face normal and no point
// lies on an active edge or vertex, turn it to the face normal and measure the separations along
// it. `radius` rounds the other shape's core (its deepest point moves with the normal).
void preferFaceNormal(const std::array<Vec3, 3>& t, const Vec3& normal, std::uint8_t active,
                      double radius, Manifold& m) {
  if (m.count == 0) return;
  const Vec3 up = m.normal.dot(normal) >= 0.0 ? normal : Vec3(-normal);
  if (m.normal.dot(up) >= 1.0 - 1e-9) return;
  for (int i = 0; i < m.count; ++i)
    if (featureActive(active, featureAt(t, m.points[i].on_a))) return;
  const Vec3 old = m.normal;
  m.normal = up;
  for (int i = 0; i < m.count; ++i) {
    ManifoldPoint& p = m.points[i];
    p.on_b = p.on_b + radius * old - radius * up;
    p.separation = up.dot(p.on_b - t[0]);
    p.on_a = p.on_b - p.separation * up;
  }
}

template <class Visit>
void forEachTriangle(const TriangleMeshData& mesh, const Vec3& lo, const Vec3& hi, Visit&& visit) {
  int stack[64];
  int top = 0;
  stack[top++] = 0;
  while (top > 0) {
    const TriangleMeshData::Node& node = mesh.nodes[stack[--top]];
    if ((node.min.array() > hi.array()).any() || (node.max.array() < lo.array()).any()) continue;
    if (node.left < 0) {
      for (int i = node.first; i < node.first + node.count; ++i) visit(mesh.order[i]);
    } else if (top + 2 <= 64) {
      stack[top++] = node.right;
      stack[top++] = node.left;
    }
  }
}

}  // namespace

void collideMesh(const WorldShape& mesh_shape, const WorldShape& other, double margin,
                 std::vector<Manifold>& out) {
  const TriangleMeshData& mesh = *mesh_shape.mesh;
  if (mesh.nodes.empty()) return;
  // The other shape's (margin-grown) box in mesh coordinates.
  const Vec3 c = 0.5 * (other.aabb_min + other.aabb_max),
             e = 0.5 * (other.aabb_max - other.aabb_min);
  const Vec3 lc = mesh_shape.axes.transpose() * (c - mesh_shape.center);
  const Vec3 le = mesh_shape.axes.transpose().cwiseAbs() * e;
  thread_local std::vector<int> hits;  // scratch, reused: no allocation once warm
  hits.clear();
  forEachTriangle(mesh, lc - le, lc + le, [](int t) { hits.push_back(t); });
  std::sort(hits.begin(), hits.end());
  const ConvexSupport convex = supportOf(other);
  const bool polyhedron = other.type == ShapeType::Box || other.type == ShapeType::ConvexHull;
  for (int t : hits) {
    std::array<Vec3, 3> tri;
    for (int k = 0; k < 3; ++k)
      tri[k] = mesh_shape.center + mesh_shape.axes * mesh.vertices[mesh.triangles[t][k]];
    const Vec3 normal = mesh_shape.axes * mesh.normals[t];
    const std::uint8_t active = mesh.active[t];
    Manifold m;
    bool hit = false;
    if (other.type == ShapeType::Sphere) {
      hit = triangleSphere(tri, normal, active, other, margin, t, m);
    } else if (polyhedron) {
      Poly p;
      p.is_triangle = true;
      p.tri = tri;
      p.tri_normal = normal;
      p.tri_active = active;
      p.center = (tri[0] + tri[1] + tri[2]) / 3.0;
      hit = polyPoly(p, polyOf(other), margin, t, m);
      if (hit) preferFaceNormal(tri, normal, active, 0.0, m);
    } else {
      ConvexSupport ts;
      ts.kind = ConvexSupport::Kind::Triangle;
      ts.triangle = tri;
      ts.center = (tri[0] + tri[1] + tri[2]) / 3.0;
      hit = convexConvex(ts, convex, margin, t, m);
      if (hit) preferFaceNormal(tri, normal, active, convex.radius, m);
    }
    // Keep only points within the margin (the face-normal turn can move them).
    int kept = 0;
    for (int i = 0; i < m.count; ++i)
      if (m.points[i].separation <= margin) m.points[kept++] = m.points[i];
    m.count = kept;
    if (hit && m.count > 0) out.push_back(m);
  }
}

}  // namespace sim::dynamics::detail
