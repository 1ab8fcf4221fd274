// Static triangle meshes: validation, face normals, internal-edge flags and an AABB tree.
#include <dynamics/shapes.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <utility>

namespace sim::dynamics {

namespace {

constexpr int kLeafSize = 4;

struct Builder {
  const std::vector<Vec3>& v;
  const std::vector<std::array<int, 3>>& tris;
  TriangleMeshData& mesh;

  Vec3 centroid(int t) const { return (v[tris[t][0]] + v[tris[t][1]] + v[tris[t][2]]) / 3.0; }

  // Builds the node over order[first, first + count) and returns its index. Splits at the
  // median centroid along the longest axis of the centroids' bounds.
  int build(int first, int count) {
    const int index = static_cast<int>(mesh.nodes.size());
    mesh.nodes.emplace_back();
    Vec3 lo = Vec3::Constant(std::numeric_limits<double>::infinity()), hi = -lo;
    Vec3 clo = lo, chi = hi;
    for (int i = first; i < first + count; ++i) {
      const int t = mesh.order[i];
      for (int k = 0; k < 3; ++k) {
        lo = lo.cwiseMin(v[tris[t][k]]);
        hi = hi.cwiseMax(v[tris[t][k]]);
      }
      clo = clo.cwiseMin(centroid(t));
      chi = chi.cwiseMax(centroid(t));
    }
    mesh.nodes[index].min = lo;
    mesh.nodes[index].max = hi;
    if (count <= kLeafSize) {
      mesh.nodes[index].first = first;
      mesh.nodes[index].count = count;
      return index;
    }
    int axis = 0;
    (chi - clo).maxCoeff(&axis);
    const int half = count / 2;
    auto begin = mesh.order.begin() + first;
    // Ties broken by index: the tree does not depend on the library's nth_element.
    std::nth_element(begin, begin + half, begin + count, [&](int a, int b) {
      const double ca = centroid(a)[axis], cb = centroid(b)[axis];
      return ca < cb || (ca == cb && a < b);
    });
    const int left = build(first, half);
    const int right = build(first + half, count - half);
    mesh.nodes[index].left = left;
    mesh.nodes[index].right = right;
    return index;
  }
};

// Active-edge flags (see TriangleMeshData::active): an edge shared by exactly two consistently
// wound triangles is inactive when flat or concave, or convex by less than the crease angle.
void markActiveEdges(TriangleMeshData& mesh, double crease_angle_rad) {
  const auto& tris = mesh.triangles;
  std::map<std::pair<int, int>, std::vector<std::pair<int, int>>> users;  // edge -> (tri, k)
  for (int t = 0; t < static_cast<int>(tris.size()); ++t)
    for (int k = 0; k < 3; ++k) {
      const auto key = std::minmax(tris[t][k], tris[t][(k + 1) % 3]);
      users[{key.first, key.second}].emplace_back(t, k);
    }
  const double cos_crease = std::cos(crease_angle_rad);
  mesh.active.assign(tris.size(), 0);
  for (const auto& [edge, list] : users) {
    for (const auto& [t, k] : list) {
      bool active = true;
      if (list.size() == 2) {
        const auto& [o, ok] = list[0].first == t ? list[1] : list[0];
        const bool consistent = tris[o][ok] == tris[t][(k + 1) % 3];
        const int opposite = tris[o][(ok + 2) % 3];
        const double above =
            mesh.normals[t].dot(mesh.vertices[opposite] - mesh.vertices[tris[t][k]]);
        const bool convex_crease = above < 0.0 && mesh.normals[t].dot(mesh.normals[o]) < cos_crease;
        active = !consistent || convex_crease;
      }
      if (active) {
        mesh.active[t] |= static_cast<std::uint8_t>(1u << k);
        mesh.active[t] |= static_cast<std::uint8_t>((1u << (3 + k)) | (1u << (3 + (k + 1) % 3)));
      }
    }
  }
  // A vertex is active when any of its edges is, also in the other triangles around it.
  std::vector<bool> vertex_active(mesh.vertices.size(), false);
  for (int t = 0; t < static_cast<int>(tris.size()); ++t)
    for (int k = 0; k < 3; ++k)
      if (mesh.active[t] & (1u << (3 + k))) vertex_active[tris[t][k]] = true;
  for (int t = 0; t < static_cast<int>(tris.size()); ++t)
    for (int k = 0; k < 3; ++k)
      if (vertex_active[tris[t][k]]) mesh.active[t] |= static_cast<std::uint8_t>(1u << (3 + k));
}

}  // namespace

std::shared_ptr<const TriangleMeshData> makeTriangleMesh(
    const std::vector<Vec3>& vertices, const std::vector<std::array<int, 3>>& triangles,
    std::string* error, double crease_angle_rad) {
  auto fail = [error](const std::string& message) {
    if (error) *error = message;
    return std::shared_ptr<const TriangleMeshData>();
  };
  if (triangles.empty()) return fail("a triangle mesh needs at least one triangle");
  for (std::size_t i = 0; i < vertices.size(); ++i)
    if (!vertices[i].allFinite()) return fail("vertex " + std::to_string(i) + " is not finite");
  const int nv = static_cast<int>(vertices.size());
  for (std::size_t t = 0; t < triangles.size(); ++t)
    for (int k = 0; k < 3; ++k)
      if (triangles[t][k] < 0 || triangles[t][k] >= nv)
        return fail("triangle " + std::to_string(t) + " index " + std::to_string(triangles[t][k]) +
                    " is out of range (" + std::to_string(nv) + " vertices)");
  auto mesh = std::make_shared<TriangleMeshData>();
  mesh->vertices = vertices;
  mesh->triangles = triangles;
  mesh->aabb_min = mesh->aabb_max = vertices[triangles[0][0]];
  for (const auto& t : triangles)
    for (int k = 0; k < 3; ++k) {
      mesh->aabb_min = mesh->aabb_min.cwiseMin(vertices[t[k]]);
      mesh->aabb_max = mesh->aabb_max.cwiseMax(vertices[t[k]]);
    }
  // Zero-area triangles (relative to the mesh's size) get a zero normal and stay out of the tree.
  const double tiny = 1e-24 * (mesh->aabb_max - mesh->aabb_min).squaredNorm();
  for (int t = 0; t < static_cast<int>(triangles.size()); ++t) {
    const auto& tri = triangles[t];
    const Vec3 n = (vertices[tri[1]] - vertices[tri[0]]).cross(vertices[tri[2]] - vertices[tri[0]]);
    const bool ok = n.squaredNorm() > tiny;
    mesh->normals.push_back(ok ? Vec3(n.normalized()) : Vec3::Zero());
    if (ok) mesh->order.push_back(t);
  }
  if (mesh->order.empty()) return fail("every triangle has zero area");
  markActiveEdges(*mesh, crease_angle_rad);
  Builder{mesh->vertices, mesh->triangles, *mesh}.build(0, static_cast<int>(mesh->order.size()));
  return mesh;
}

}  // namespace sim::dynamics
