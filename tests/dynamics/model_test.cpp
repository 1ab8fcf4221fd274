// Model validation (dynamics/src/model.cpp): validate() names the bad field of a shape.
#include <dynamics/shapes.h>

#include <cmath>
#include <set>

#include <gtest/gtest.h>

#include "collision.h"
#include "shape_test_util.h"

namespace sim::dynamics {
namespace {

using namespace shape_testing;

// validate() names the bad field of the new shapes.
TEST(ShapeValidation, NewShapeFieldsAreChecked) {
  Model m;
  BodyDef b;
  b.name = "b";
  b.shapes.push_back(cylinder(0.0, 0.1));
  b.shapes.push_back(cylinder(0.1, -1.0));
  ShapeDef no_hull;
  no_hull.type = ShapeType::ConvexHull;
  b.shapes.push_back(no_hull);
  b.shapes.push_back(meshShape(grid(1, 1.0)));  // on a dynamic body
  m.bodies.push_back(b);
  std::set<std::string> fields;
  for (const ModelError& e : validate(m)) fields.insert(e.field);
  EXPECT_TRUE(fields.count("bodies[b].shapes[0].radius"));
  EXPECT_TRUE(fields.count("bodies[b].shapes[1].half_length"));
  EXPECT_TRUE(fields.count("bodies[b].shapes[2].points"));
  EXPECT_TRUE(fields.count("bodies[b].shapes[3].type"));
  EXPECT_EQ(fields.size(), 4u);
  EXPECT_FALSE(detail::pairSupported(ShapeType::TriangleMesh, ShapeType::Plane));
  EXPECT_FALSE(detail::pairSupported(ShapeType::TriangleMesh, ShapeType::TriangleMesh));
  EXPECT_TRUE(detail::pairSupported(ShapeType::TriangleMesh, ShapeType::Cylinder));
}

}  // namespace
}  // namespace sim::dynamics
