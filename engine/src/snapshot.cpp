#include <dynamics/shapes.h>
#include <engine/snapshot.h>

#include "shape_mesh.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <numbers>

namespace sim::engine {

namespace {

using dynamics::Vec3;
using render::MeshPart;

// Accumulates flat-shaded triangles (each with its own three vertices and normal).
class FlatMesh {
 public:
  void triangle(const Vec3& a, const Vec3& b, const Vec3& c) {
    const Vec3 n = (b - a).cross(c - a);
    if (!(n.norm() > 0.0)) return;
    const Vec3 unit = n.normalized();
    for (const Vec3* v : {&a, &b, &c}) {
      part_.indices.push_back(static_cast<std::uint32_t>(part_.vertices_m.size()));
      part_.vertices_m.push_back(
          {static_cast<float>(v->x()), static_cast<float>(v->y()), static_cast<float>(v->z())});
      part_.normals.push_back({static_cast<float>(unit.x()), static_cast<float>(unit.y()),
                               static_cast<float>(unit.z())});
    }
  }
  // A smooth triangle: vertices with their own normals.
  void smooth(const std::array<Vec3, 3>& p, const std::array<Vec3, 3>& n) {
    for (int k = 0; k < 3; ++k) {
      part_.indices.push_back(static_cast<std::uint32_t>(part_.vertices_m.size()));
      part_.vertices_m.push_back({static_cast<float>(p[k].x()), static_cast<float>(p[k].y()),
                                  static_cast<float>(p[k].z())});
      part_.normals.push_back({static_cast<float>(n[k].x()), static_cast<float>(n[k].y()),
                               static_cast<float>(n[k].z())});
    }
  }
  MeshPart take() { return std::move(part_); }

 private:
  MeshPart part_;
};

constexpr int kSegments = 24;  // around spheres, capsules and cylinders

// A box of half extents h centred at the origin.
void addBox(FlatMesh& mesh, const Vec3& h) {
  auto corner = [&](int i) {
    return Vec3((i & 1) ? h.x() : -h.x(), (i & 2) ? h.y() : -h.y(), (i & 4) ? h.z() : -h.z());
  };
  // Faces as corner indices, counter-clockwise seen from outside.
  const int faces[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4},
                           {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
  for (const auto& f : faces) {
    mesh.triangle(corner(f[0]), corner(f[1]), corner(f[2]));
    mesh.triangle(corner(f[0]), corner(f[2]), corner(f[3]));
  }
}

// A surface of revolution about z: rings of (radius, z, normal radial part, normal z part).
struct Ring {
  double radius, z, nr, nz;
};
void addRevolution(FlatMesh& mesh, const std::vector<Ring>& rings) {
  for (std::size_t r = 0; r + 1 < rings.size(); ++r) {
    for (int s = 0; s < kSegments; ++s) {
      const double a0 = 2.0 * std::numbers::pi * s / kSegments;
      const double a1 = 2.0 * std::numbers::pi * (s + 1) / kSegments;
      auto point = [&](const Ring& ring, double a) {
        return Vec3(ring.radius * std::cos(a), ring.radius * std::sin(a), ring.z);
      };
      auto normal = [&](const Ring& ring, double a) {
        return Vec3(ring.nr * std::cos(a), ring.nr * std::sin(a), ring.nz).normalized();
      };
      const Ring& lo = rings[r];
      const Ring& hi = rings[r + 1];
      if (lo.radius > 0.0) {
        mesh.smooth({point(lo, a0), point(lo, a1), point(hi, a1)},
                    {normal(lo, a0), normal(lo, a1), normal(hi, a1)});
      }
      if (hi.radius > 0.0) {
        mesh.smooth({point(lo, a0), point(hi, a1), point(hi, a0)},
                    {normal(lo, a0), normal(hi, a1), normal(hi, a0)});
      }
    }
  }
}

// A hemisphere cap's rings from the equator (z0) to the pole, `sign` +1 up or -1 down.
void capRings(std::vector<Ring>& rings, double radius, double z0, int sign, bool from_pole) {
  constexpr int kRings = 8;
  std::vector<Ring> cap;
  for (int i = 0; i <= kRings; ++i) {
    const double t = 0.5 * std::numbers::pi * i / kRings;  // 0 at the equator
    cap.push_back(
        {radius * std::cos(t), z0 + sign * radius * std::sin(t), std::cos(t), sign * std::sin(t)});
  }
  if (from_pole) std::reverse(cap.begin(), cap.end());
  rings.insert(rings.end(), cap.begin(), cap.end());
}

}  // namespace

MeshPart shapeMesh(const dynamics::ShapeDef& shape) {
  using dynamics::ShapeType;
  FlatMesh mesh;
  switch (shape.type) {
    case ShapeType::Box: addBox(mesh, shape.half_extents_m); break;
    case ShapeType::Sphere: {
      std::vector<Ring> rings;
      capRings(rings, shape.radius_m, 0.0, -1, /*from_pole=*/true);
      capRings(rings, shape.radius_m, 0.0, +1, /*from_pole=*/false);
      addRevolution(mesh, rings);
      break;
    }
    case ShapeType::Capsule: {
      std::vector<Ring> rings;
      capRings(rings, shape.radius_m, -shape.half_length_m, -1, /*from_pole=*/true);
      capRings(rings, shape.radius_m, shape.half_length_m, +1, /*from_pole=*/false);
      addRevolution(mesh, rings);
      break;
    }
    case ShapeType::Cylinder: {
      const double r = shape.radius_m, h = shape.half_length_m;
      addRevolution(mesh, {{0.0, -h, 0, -1}, {r, -h, 0, -1}});
      addRevolution(mesh, {{r, -h, 1, 0}, {r, h, 1, 0}});
      addRevolution(mesh, {{r, h, 0, 1}, {0.0, h, 0, 1}});
      break;
    }
    case ShapeType::ConvexHull:
      if (shape.hull) {
        const auto& hull = *shape.hull;
        for (const auto& face : hull.faces) {
          const Vec3& a = hull.vertices[static_cast<std::size_t>(
              hull.face_vertices[static_cast<std::size_t>(face.first)])];
          for (int k = 1; k + 1 < face.count; ++k) {
            const auto at = [&](int j) -> const Vec3& {
              return hull.vertices[static_cast<std::size_t>(
                  hull.face_vertices[static_cast<std::size_t>(face.first + j)])];
            };
            mesh.triangle(a, at(k), at(k + 1));
          }
        }
      }
      break;
    case ShapeType::TriangleMesh:
      if (shape.mesh) {
        for (const auto& t : shape.mesh->triangles) {
          const auto& v = shape.mesh->vertices;
          mesh.triangle(v[static_cast<std::size_t>(t[0])], v[static_cast<std::size_t>(t[1])],
                        v[static_cast<std::size_t>(t[2])]);
        }
      }
      break;
    case ShapeType::Plane: {
      // A 200 m square of the plane's surface (its local x-y plane), seen from +z.
      constexpr double kHalf = 100.0;
      const Vec3 a(-kHalf, -kHalf, 0), b(kHalf, -kHalf, 0), c(kHalf, kHalf, 0), d(-kHalf, kHalf, 0);
      mesh.triangle(a, b, c);
      mesh.triangle(a, c, d);
      break;
    }
  }
  MeshPart part = mesh.take();
  part.pose = {{shape.pose.position.x(), shape.pose.position.y(), shape.pose.position.z()},
               {shape.pose.rotation.w(), shape.pose.rotation.x(), shape.pose.rotation.y(),
                shape.pose.rotation.z()}};
  return part;
}

namespace {

// The meshes of one imported model file, placed in the body frame.
void addVisual(const VisualDef& visual, std::vector<MeshPart>& parts) {
  if (!visual.model) return;
  // Embedded images are shared by every part that uses them (decoded once by the render).
  std::vector<std::shared_ptr<const std::string>> embedded;
  for (const auto& texture : visual.model->embedded_textures) {
    embedded.push_back(texture.bytes.empty() ? nullptr
                                             : std::make_shared<const std::string>(texture.bytes));
  }
  for (const ImportedMesh& mesh : visual.model->meshes) {
    MeshPart part;
    part.name = mesh.name;
    part.vertices_m.reserve(mesh.vertices.size());
    for (const auto& v : mesh.vertices) {
      part.vertices_m.push_back(
          {static_cast<float>(v[0]), static_cast<float>(v[1]), static_cast<float>(v[2])});
    }
    for (const auto& n : mesh.normals) {
      part.normals.push_back(
          {static_cast<float>(n[0]), static_cast<float>(n[1]), static_cast<float>(n[2])});
    }
    for (const auto& t : mesh.triangles)
      part.indices.insert(part.indices.end(), t.begin(), t.end());
    for (std::size_t k = 0; k < 4; ++k) {
      part.color_rgba[k] = static_cast<float>(mesh.material.diffuse[k]);
    }
    const std::string& texture = mesh.material.texture;
    if (!texture.empty() && mesh.uvs.size() == mesh.vertices.size()) {
      if (texture[0] != '*') {
        part.texture.file = texture;
      } else {
        // "*N": the N-th embedded texture (an out-of-range or raw one leaves the part plain).
        char* end = nullptr;
        const unsigned long n = std::strtoul(texture.c_str() + 1, &end, 10);
        if (*end == '\0' && n < embedded.size() && embedded[n]) {
          part.texture.encoded = embedded[n];
          part.texture.format = visual.model->embedded_textures[n].format;
        }
      }
      if (!part.texture.empty()) {
        part.uvs.reserve(mesh.uvs.size());
        for (const auto& uv : mesh.uvs) {
          part.uvs.push_back({static_cast<float>(uv[0]), static_cast<float>(uv[1])});
        }
      }
    }
    const auto& p = visual.pose.position;
    const auto& q = visual.pose.rotation;
    part.pose = {{p.x(), p.y(), p.z()}, {q.w(), q.x(), q.y(), q.z()}};
    parts.push_back(std::move(part));
  }
}

}  // namespace

std::vector<render::BodyVisual> bodyVisuals(const Scene& scene) {
  std::vector<render::BodyVisual> visuals;
  visuals.reserve(scene.model.bodies.size());
  for (std::size_t i = 0; i < scene.model.bodies.size(); ++i) {
    const dynamics::BodyDef& body = scene.model.bodies[i];
    render::BodyVisual visual;
    visual.name = body.name;
    if (i < scene.looks.size()) visual.box_size_m = scene.looks[i].box_size_m;
    // Static bodies (ground, fixtures) are drawn darker.
    if (body.is_static) visual.color_rgba = {0.45f, 0.46f, 0.44f, 1.0f};
    const BodyLook* look = i < scene.looks.size() ? &scene.looks[i] : nullptr;
    if (look && look->color_rgba) visual.color_rgba = *look->color_rgba;
    // A body looks like its visual models; without any, like its collision shapes; without
    // those, like its box.
    if (i < scene.looks.size()) {
      for (const VisualDef& def : scene.looks[i].visuals) addVisual(def, visual.meshes);
    }
    // The debug overlay's wireframes: every collision shape but planes, in cyan.
    for (std::size_t s = 0; s < body.shapes.size(); ++s) {
      if (body.shapes[s].type == dynamics::ShapeType::Plane) continue;
      MeshPart part = shapeMesh(body.shapes[s]);
      if (part.indices.empty()) continue;
      part.name = body.name + ".collision" + std::to_string(s);
      part.color_rgba = {0.0f, 1.0f, 1.0f, 1.0f};
      visual.collision.push_back(std::move(part));
    }
    if (i < scene.looks.size() && scene.looks[i].hidden) {
      visual.box_size_m = {0.0, 0.0, 0.0};
    } else if (visual.meshes.empty()) {
      for (std::size_t s = 0; s < body.shapes.size(); ++s) {
        MeshPart part = shapeMesh(body.shapes[s]);
        if (part.indices.empty()) continue;
        part.name = body.name + ".shape" + std::to_string(s);
        const bool own = look && s < look->shape_colors_rgba.size() && look->shape_colors_rgba[s];
        part.color_rgba =
            own ? *look->shape_colors_rgba[s]
            : body.shapes[s].type == dynamics::ShapeType::Plane && !(look && look->color_rgba)
                ? std::array<float, 4>{0.50f, 0.53f, 0.47f, 1.0f}  // ground
                : visual.color_rgba;
        visual.meshes.push_back(std::move(part));
      }
    }
    visuals.push_back(std::move(visual));
  }
  return visuals;
}

void bodyPoses(const dynamics::State& state, std::vector<render::BodyPose>& poses) {
  poses.resize(state.bodies.size());
  for (std::size_t i = 0; i < state.bodies.size(); ++i) {
    const auto& p = state.bodies[i].position_m;
    const auto& q = state.bodies[i].orientation;
    poses[i] = {{p.x(), p.y(), p.z()}, {q.w(), q.x(), q.y(), q.z()}};
  }
}

std::vector<render::BodyPose> bodyPoses(const dynamics::State& state) {
  std::vector<render::BodyPose> poses;
  bodyPoses(state, poses);
  return poses;
}

}  // namespace sim::engine
