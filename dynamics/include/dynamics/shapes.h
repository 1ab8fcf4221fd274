// Collision geometry that is built once per model and shared: convex hulls (from a point cloud)
// and static triangle meshes (with a bounding-volume tree), plus mass properties of shapes.
//
// Both data objects are immutable once built and are held by ShapeDef through
// std::shared_ptr<const ...>, so copying a Model copies pointers, not geometry. Fill them from
// code (a scene file, a model importer) through makeConvexHull() and makeTriangleMesh(), which
// validate the input and say what is wrong with it.
#pragma once

#include <dynamics/model.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sim::dynamics {

/// A convex polyhedron in its shape's local coordinates (m).
struct ConvexHullData {
  /// One planar face: a convex polygon, counter-clockwise seen from outside.
  struct Face {
    int first = 0;  ///< Range in face_vertices.
    int count = 0;
    Vec3 normal = Vec3::UnitZ();  ///< Unit outward normal.
    double offset = 0.0;          ///< Plane: normal . x = offset for points on the face (m).
  };
  /// An edge between two faces: face_left lies to the left of v0 -> v1 seen from outside.
  struct Edge {
    int v0 = 0, v1 = 0;
    int face_left = 0, face_right = 0;
  };
  std::vector<Vec3> vertices;      ///< The hull's corners only (interior input points dropped).
  std::vector<Face> faces;         ///< Coplanar triangles merged (a box has 6 quads).
  std::vector<int> face_vertices;  ///< Vertex indices of all faces, face after face.
  std::vector<Edge> edges;         ///< Each undirected edge once.
  Vec3 centroid = Vec3::Zero();    ///< Mean of the vertices: an interior point.
  Vec3 aabb_min = Vec3::Zero(), aabb_max = Vec3::Zero();  ///< Local bounds.
};

/// A triangle soup in its shape's local coordinates, for static bodies (terrain, fixtures).
struct TriangleMeshData {
  /// Axis-aligned bounding-box tree node: an inner node has two children, a leaf holds the
  /// triangles order[first, first + count).
  struct Node {
    Vec3 min = Vec3::Zero(), max = Vec3::Zero();
    int left = -1, right = -1;  ///< Children (inner node), or -1 for a leaf.
    int first = 0, count = 0;   ///< Leaf: range in `order`.
  };
  std::vector<Vec3> vertices;
  std::vector<std::array<int, 3>> triangles;  ///< Counter-clockwise seen from the front.
  std::vector<Vec3> normals;                  ///< Unit front normal per triangle.
  /// Per triangle: bit k (k = 0..2) set when edge k (vertex k -> k+1) is "active", i.e. a real
  /// crease or a boundary; bit 3 + k set when vertex k is active (touches an active edge). Contacts
  /// on inactive edges and vertices (flat or concave joins) use the triangle's face normal, so
  /// bodies slide over internal edges without snagging.
  std::vector<std::uint8_t> active;
  std::vector<Node> nodes;  ///< nodes[0] is the root (when there are triangles).
  std::vector<int> order;   ///< Triangle indices grouped by leaf (degenerate triangles left out).
  Vec3 aabb_min = Vec3::Zero(), aabb_max = Vec3::Zero();  ///< Local bounds.
};

/// Builds the convex hull of `points` (local coordinates, m) by quickhull. Duplicate, interior
/// and coplanar points are fine; coplanar triangles are merged into polygon faces. Returns null
/// and sets `*error` (when given) if the points are not finite or do not span a volume (fewer
/// than 4 points off one plane).
std::shared_ptr<const ConvexHullData> makeConvexHull(const std::vector<Vec3>& points,
                                                     std::string* error = nullptr);

/// Builds a triangle mesh (local coordinates, m; triangles index `vertices`, front faces
/// counter-clockwise). Returns null and sets `*error` for non-finite vertices, no triangles, or an
/// index out of range. Zero-area triangles are kept (their indices stay valid) but never touch.
/// Edges whose two triangles meet at a crease sharper than `crease_angle_rad` are active.
std::shared_ptr<const TriangleMeshData> makeTriangleMesh(
    const std::vector<Vec3>& vertices, const std::vector<std::array<int, 3>>& triangles,
    std::string* error = nullptr, double crease_angle_rad = 0.0174533 /* 1 degree */);

/// Mass properties of a solid of uniform density.
struct MassProperties {
  double mass_kg = 0.0;
  Vec3 center_m = Vec3::Zero();      ///< Centre of mass.
  Mat3 inertia_kgm2 = Mat3::Zero();  ///< About center_m, in the same axes.
};

/// Mass, centre of mass and inertia of a sphere, box, capsule, cylinder or convex hull of
/// `density_kgpm3`, expressed in the frame the shape's pose refers to (the body frame). Empty for
/// planes and meshes (no volume), a missing hull, or a non-positive density.
std::optional<MassProperties> computeMassProperties(const ShapeDef& shape, double density_kgpm3);

/// Sum of several solids: total mass, combined centre of mass, inertia about it (parallel axes).
MassProperties combineMassProperties(const std::vector<MassProperties>& parts);

}  // namespace sim::dynamics
