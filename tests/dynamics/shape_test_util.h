// Shapes for the collision and shape tests: primitives, hulls from points, flat meshes, and
// placement in the world with the contact margin the tests use.
#pragma once

#include <dynamics/shapes.h>

#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "collision.h"
#include "contact_test_util.h"

namespace sim::dynamics::shape_testing {

using contact_testing::cylinder;

inline constexpr double kMargin = 0.01;  // m, the contact margin of placed shapes

inline ShapeDef sphere(double radius) {
  ShapeDef s;
  s.type = ShapeType::Sphere;
  s.radius_m = radius;
  return s;
}

inline ShapeDef box(const Vec3& half) {
  ShapeDef s;
  s.type = ShapeType::Box;
  s.half_extents_m = half;
  return s;
}

inline ShapeDef plane() {
  ShapeDef s;
  s.type = ShapeType::Plane;
  return s;
}

inline std::vector<Vec3> boxCorners(const Vec3& half) {
  std::vector<Vec3> c;
  for (int i = 0; i < 8; ++i)
    c.emplace_back(i & 1 ? half.x() : -half.x(), i & 2 ? half.y() : -half.y(),
                   i & 4 ? half.z() : -half.z());
  return c;
}

inline ShapeDef hull(const std::vector<Vec3>& points) {
  ShapeDef s;
  s.type = ShapeType::ConvexHull;
  std::string error;
  s.hull = makeConvexHull(points, &error);
  EXPECT_TRUE(s.hull) << error;
  return s;
}

inline detail::WorldShape place(const ShapeDef& def, const Vec3& x,
                                const Quat& q = Quat::Identity()) {
  return detail::placeShape(def, 0, x, q, kMargin);
}

inline std::vector<Vec3> randomCloud(std::mt19937& rng, int n, double radius) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<Vec3> pts;
  while (static_cast<int>(pts.size()) < n) {
    const Vec3 p(u(rng), u(rng), u(rng));
    if (p.norm() <= 1.0) pts.push_back(radius * p);
  }
  return pts;
}

// A flat grid of n x n squares (two triangles each) of edge `cell`, centred at the origin.
inline std::shared_ptr<const TriangleMeshData> grid(int n, double cell) {
  std::vector<Vec3> v;
  std::vector<std::array<int, 3>> t;
  for (int j = 0; j <= n; ++j)
    for (int i = 0; i <= n; ++i) v.emplace_back((i - 0.5 * n) * cell, (j - 0.5 * n) * cell, 0.0);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const int a = j * (n + 1) + i, b = a + 1, c = a + n + 2, d = a + n + 1;
      t.push_back({a, b, c});
      t.push_back({a, c, d});
    }
  std::string error;
  auto mesh = makeTriangleMesh(v, t, &error);
  EXPECT_TRUE(mesh) << error;
  return mesh;
}

inline ShapeDef meshShape(std::shared_ptr<const TriangleMeshData> mesh) {
  ShapeDef s;
  s.type = ShapeType::TriangleMesh;
  s.mesh = std::move(mesh);
  return s;
}
}  // namespace sim::dynamics::shape_testing
