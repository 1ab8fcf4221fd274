// Triangle meshes (dynamics/src/triangle_mesh.cpp): building validates the input and marks the
// internal edges of a flat grid inactive.
#include <dynamics/shapes.h>

#include <cmath>

#include <gtest/gtest.h>

#include "collision.h"
#include "shape_test_util.h"

namespace sim::dynamics {
namespace {

using namespace shape_testing;

TEST(TriangleMesh, BuildValidatesAndMarksInternalEdges) {
  std::string error;
  EXPECT_FALSE(makeTriangleMesh({Vec3::Zero(), Vec3::UnitX(), Vec3::UnitY()}, {{0, 1, 3}}, &error));
  EXPECT_NE(error.find("out of range"), std::string::npos) << error;
  EXPECT_FALSE(makeTriangleMesh({Vec3::Zero()}, {}, &error));
  const auto mesh = grid(4, 0.5);
  ASSERT_TRUE(mesh);
  // Interior edges of a flat grid are inactive; boundary edges active. A 4 x 4 grid has
  // 16 boundary edges among its 32 triangles' 96 edge slots.
  int active_edges = 0;
  for (std::uint8_t a : mesh->active) active_edges += (a & 1) + (a >> 1 & 1) + (a >> 2 & 1);
  EXPECT_EQ(active_edges, 16);
  EXPECT_EQ(mesh->order.size(), 32u);
}

}  // namespace
}  // namespace sim::dynamics
