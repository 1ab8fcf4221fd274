// Collision detection (dynamics/src/collision.cpp): the narrow phase against hand-computed
// geometry (box-box manifolds and feature ids, edge-edge points, sphere, capsule and plane
// distances) and the broad phase against brute force.
#include <dynamics/samples.h>
#include <dynamics/simulator.h>

#include <cmath>
#include <numbers>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "collision.h"
#include "fixture.h"

namespace sim::dynamics {
namespace {

constexpr double kPi = std::numbers::pi;

// ---- narrow phase against hand-computed geometry ----------------------------------------------

TEST(Collision, BoxOnBoxFaceContactHasFourPointsAtTheOverlap) {
  ShapeDef box;
  box.type = ShapeType::Box;
  box.half_extents_m = Vec3(0.5, 0.5, 0.5);
  // b rests on a, 2 mm into it, shifted by 0.3 in x: the overlap square is x in [-0.2, 0.5].
  const auto a = detail::placeShape(box, 0, Vec3::Zero(), Quat::Identity(), 0.01);
  const auto b = detail::placeShape(box, 1, Vec3(0.3, 0, 0.998), Quat::Identity(), 0.01);
  detail::Manifold m;
  ASSERT_TRUE(detail::collide(a, b, 0.01, m));
  EXPECT_NEAR((m.normal - Vec3::UnitZ()).norm(), 0.0, 1e-12);
  ASSERT_EQ(m.count, 4);
  double min_x = 1e9, max_x = -1e9;
  for (int i = 0; i < m.count; ++i) {
    EXPECT_NEAR(m.points[i].separation, -0.002, 1e-12);
    min_x = std::min(min_x, m.points[i].on_b.x());
    max_x = std::max(max_x, m.points[i].on_b.x());
  }
  // The clipping keeps points up to 0.1 mm outside the reference face but snaps them onto its
  // sides, so the overlap is exact.
  EXPECT_NEAR(min_x, -0.2, 1e-12);
  EXPECT_NEAR(max_x, 0.5, 1e-12);
  // Swapping the shapes flips the normal and keeps the depth.
  detail::Manifold r;
  ASSERT_TRUE(detail::collide(b, a, 0.01, r));
  EXPECT_NEAR((r.normal + Vec3::UnitZ()).norm(), 0.0, 1e-12);
  EXPECT_NEAR(r.points[0].separation, -0.002, 1e-12);
}

// Equal boxes stacked flush and swaying by microns: the incident corners cross the reference
// face's sides back and forth. They must keep their feature ids (warm starts follow the ids)
// and stay on the face. Before the tolerance was 0.1 mm, a shift of 5e-5 m turned each corner
// outside into two edge crossings with new ids.
TEST(Collision, FlushBoxesKeepTheirFeatureIdsWhileSwayingByMicrons) {
  ShapeDef box;
  box.type = ShapeType::Box;
  box.half_extents_m = Vec3(0.1, 0.1, 0.1);
  const auto a = detail::placeShape(box, 0, Vec3::Zero(), Quat::Identity(), 0.01);
  std::vector<std::uint32_t> reference;
  for (const Vec3& shift :
       {Vec3(0, 0, 0), Vec3(5e-5, 0, 0), Vec3(-5e-5, 3e-5, 0), Vec3(2e-5, -5e-5, 0)}) {
    SCOPED_TRACE(testing::Message() << "shift " << shift.transpose());
    const auto b = detail::placeShape(box, 1, Vec3(0, 0, 0.1999) + shift,
                                      Quat(Eigen::AngleAxisd(1e-5, Vec3::UnitY())), 0.01);
    detail::Manifold m;
    ASSERT_TRUE(detail::collide(a, b, 0.01, m));
    ASSERT_EQ(m.count, 4);
    std::vector<std::uint32_t> ids;
    for (int i = 0; i < m.count; ++i) {
      ids.push_back(m.points[i].feature);
      EXPECT_LE(m.points[i].on_a.head<2>().cwiseAbs().maxCoeff(), 0.1 + 1e-15) << "off the face";
    }
    std::sort(ids.begin(), ids.end());
    if (reference.empty()) reference = ids;
    EXPECT_EQ(ids, reference);
  }
}

// The broad phase against all pairs by brute force: 300 random boxes in a 3 m cube, a random
// third of them frozen (static or asleep), every 25th a 2 m rod (spanning many of the sweep's y
// bands when it lies along y); every overlapping pair with a moving shape is found, pairs of two
// frozen shapes are not, across frames as the boxes move and turn: frames where the frozen
// shapes move too, frames where they stay (the broad phase keeps their bands), and frames where
// some wake and others freeze.
TEST(Collision, BroadPhaseFindsEveryPairWithAMovingShapeAndNoFrozenPair) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> place(0.0, 3.0), size(0.02, 0.3), unit(-1.0, 1.0);
  const int n = 300;
  std::vector<ShapeDef> defs(n);
  std::vector<Vec3> at(n);
  std::vector<Quat> turn(n);
  std::vector<char> frozen(n);
  for (int i = 0; i < n; ++i) {
    defs[i].type = ShapeType::Box;
    defs[i].half_extents_m = Vec3(size(rng), size(rng), size(rng));
    if (i % 25 == 0) defs[i].half_extents_m = Vec3(1.0, 0.05, 0.05);
    at[i] = Vec3(place(rng), place(rng), place(rng));
    frozen[i] = (rng() % 3) == 0;
  }
  detail::BroadPhase broad;
  std::vector<detail::WorldShape> shapes(n);
  std::vector<std::pair<int, int>> pairs;
  int frozen_moved_frames = 0, flag_frames = 0;
  for (int frame = 0; frame < 12; ++frame) {
    const bool frozen_move = frame % 4 == 0;  // frame 0 places every shape
    if (frame % 4 == 2) {                     // some wake, some freeze
      for (int i = 0; i < n; ++i)
        if (rng() % 5 == 0) frozen[i] = !frozen[i];
      ++flag_frames;
    }
    for (int i = 0; i < n; ++i) {
      if (frozen[i] && !frozen_move) continue;
      if (!frozen[i]) at[i] += 0.05 * Vec3(unit(rng), unit(rng), unit(rng));
      turn[i] = Quat(Eigen::AngleAxisd(2.0 * unit(rng), Vec3::UnitZ()));
      shapes[i] = detail::placeShape(defs[i], i, at[i], turn[i], 0.01);
    }
    frozen_moved_frames += frozen_move ? 1 : 0;
    broad.findPairs(shapes, frozen, frozen_move, pairs);
    std::vector<std::pair<int, int>> expected;
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j) {
        const bool overlap = (shapes[i].aabb_min.array() <= shapes[j].aabb_max.array()).all() &&
                             (shapes[j].aabb_min.array() <= shapes[i].aabb_max.array()).all();
        if (overlap && !(frozen[i] && frozen[j])) expected.emplace_back(i, j);
      }
    EXPECT_EQ(pairs, expected) << "frame " << frame;
    EXPECT_GT(expected.size(), 20u);
  }
  EXPECT_EQ(frozen_moved_frames, 3);
  EXPECT_EQ(flag_frames, 3);
  // Nothing moving: no pair.
  std::fill(frozen.begin(), frozen.end(), 1);
  broad.findPairs(shapes, frozen, false, pairs);
  EXPECT_TRUE(pairs.empty());
}

// Box-box detection skips edge axes that a cheaper unnormalised test shows clearly overlapping;
// it must give exactly what testing every axis gives. 60 000 pairs: random poses near contact,
// stacked faces tilted by up to a milliradian (the pile's case), and crossed edges; every bit
// of every manifold compared.
TEST(Collision, BoxBoxSkippingOverlappingEdgeAxesChangesNoManifold) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> unit(-1.0, 1.0), size(0.02, 0.5), gap(-2e-3, 1.5e-2);
  auto randomTurn = [&](double angle) {
    const Vec3 axis = Vec3(unit(rng), unit(rng), unit(rng)).normalized();
    return Quat(Eigen::AngleAxisd(angle * unit(rng), axis));
  };
  int touching = 0, edges = 0, faces = 0;
  for (int n = 0; n < 60000; ++n) {
    ShapeDef da, db;
    da.type = db.type = ShapeType::Box;
    da.half_extents_m = Vec3(size(rng), size(rng), size(rng));
    db.half_extents_m = Vec3(size(rng), size(rng), size(rng));
    Vec3 at_b;
    Quat qa = Quat::Identity(), qb = Quat::Identity();
    switch (n % 3) {
      case 0: {  // anywhere around a, any orientation
        qa = randomTurn(kPi);
        qb = randomTurn(kPi);
        const double reach = da.half_extents_m.norm() + db.half_extents_m.norm();
        at_b = Vec3(unit(rng), unit(rng), unit(rng)).normalized() * reach *
               (0.3 + 0.8 * std::abs(unit(rng)));
        break;
      }
      case 1:  // b resting on a's top face, slightly tilted and shifted
        qa = randomTurn(1e-3);
        qb = randomTurn(1e-3);
        at_b =
            Vec3(0.5 * unit(rng) * da.half_extents_m.x(), 0.5 * unit(rng) * da.half_extents_m.y(),
                 da.half_extents_m.z() + db.half_extents_m.z() + gap(rng));
        break;
      default:  // edges crossing: square sections turned ~45 degrees about perpendicular axes
        da.half_extents_m = Vec3(0.2, 0.3, 0.2);
        db.half_extents_m = Vec3(0.3, 0.2, 0.2);
        qa = Quat(Eigen::AngleAxisd(kPi / 4 + 0.05 * unit(rng), Vec3::UnitY()));
        qb = Quat(Eigen::AngleAxisd(kPi / 4 + 0.05 * unit(rng), Vec3::UnitX()));
        at_b = Vec3(0.01 * unit(rng), 0.01 * unit(rng), 2.0 * std::sqrt(0.5) * 0.4 + gap(rng));
        break;
    }
    const auto a = detail::placeShape(da, 0, Vec3::Zero(), qa, 0.01);
    const auto b = detail::placeShape(db, 1, at_b, qb, 0.01);
    detail::Manifold screened, full;
    const bool hit = detail::collide(a, b, 0.01, screened);
    ASSERT_EQ(hit, detail::collideBoxesUnscreened(a, b, 0.01, full)) << "pair " << n;
    if (!hit) continue;
    ++touching;
    ASSERT_EQ(screened.count, full.count) << "pair " << n;
    ASSERT_TRUE(screened.normal == full.normal) << "pair " << n;
    for (int k = 0; k < full.count; ++k) {
      const detail::ManifoldPoint &x = screened.points[k], &y = full.points[k];
      ASSERT_TRUE(x.on_a == y.on_a && x.on_b == y.on_b && x.separation == y.separation &&
                  x.feature == y.feature)
          << "pair " << n << " point " << k;
    }
    (full.count == 1 && (full.points[0].feature >> 28) == 1 ? edges : faces) += 1;
  }
  // Every kind of case was met (the counts are the generator's, not tuned).
  EXPECT_GT(touching, 20000);
  EXPECT_GT(edges, 2000);
  EXPECT_GT(faces, 10000);
}

TEST(Collision, CrossedEdgesGiveOneEdgePointAtTheRightDepth) {
  ShapeDef box;
  box.type = ShapeType::Box;
  box.half_extents_m = Vec3(0.5, 0.5, 0.5);
  // Two cubes turned 45 degrees about perpendicular horizontal axes, edges crossing: a's top edge
  // along y at height sqrt(2)/2, b's bottom edge along x.
  const Quat qa(Eigen::AngleAxisd(kPi / 4, Vec3::UnitY()));
  const Quat qb(Eigen::AngleAxisd(kPi / 4, Vec3::UnitX()));
  const double h = std::sqrt(0.5);
  const double depth = 0.003;
  const auto a = detail::placeShape(box, 0, Vec3::Zero(), qa, 0.01);
  const auto b = detail::placeShape(box, 1, Vec3(0, 0, 2 * h - depth), qb, 0.01);
  detail::Manifold m;
  ASSERT_TRUE(detail::collide(a, b, 0.01, m));
  ASSERT_EQ(m.count, 1);
  EXPECT_NEAR(m.points[0].separation, -depth, 1e-9);
  EXPECT_NEAR((m.normal - Vec3::UnitZ()).norm(), 0.0, 1e-9);
  EXPECT_NEAR(m.points[0].on_a.head<2>().norm(), 0.0, 1e-9);
}

TEST(Collision, SpheresCapsulesAndPlanesGiveExactDistances) {
  ShapeDef sphere, capsule, plane;
  sphere.type = ShapeType::Sphere;
  sphere.radius_m = 0.1;
  capsule.type = ShapeType::Capsule;
  capsule.radius_m = 0.05;
  capsule.half_length_m = 0.2;
  plane.type = ShapeType::Plane;
  const auto ground = detail::placeShape(plane, 0, Vec3::Zero(), Quat::Identity(), 0.01);
  detail::Manifold m;
  // Sphere 3 mm into the ground.
  const auto s = detail::placeShape(sphere, 1, Vec3(1, 2, 0.097), Quat::Identity(), 0.01);
  ASSERT_TRUE(detail::collide(s, ground, 0.01, m));
  ASSERT_EQ(m.count, 1);
  EXPECT_NEAR(m.points[0].separation, -0.003, 1e-12);
  // A capsule lying flat 1 mm above the ground: two speculative points.
  const Quat lying(Eigen::AngleAxisd(kPi / 2, Vec3::UnitY()));
  const auto c = detail::placeShape(capsule, 2, Vec3(0, 0, 0.051), lying, 0.01);
  ASSERT_TRUE(detail::collide(c, ground, 0.01, m));
  ASSERT_EQ(m.count, 2);
  EXPECT_NEAR(m.points[0].separation, 0.001, 1e-12);
  EXPECT_NEAR(m.points[1].separation, 0.001, 1e-12);
  // Sphere against the capsule's side: centre distance 0.14, radii 0.15.
  const auto s2 = detail::placeShape(sphere, 3, Vec3(0.1, 0, 0.051 + 0.14), Quat::Identity(), 0.01);
  ASSERT_TRUE(detail::collide(c, s2, 0.01, m));
  EXPECT_NEAR(m.points[0].separation, -0.01, 1e-12);
  EXPECT_NEAR((m.normal - Vec3::UnitZ()).norm(), 0.0, 1e-12);
  // Beyond the margin: no contact.
  const auto far = detail::placeShape(sphere, 4, Vec3(0, 0, 0.2), Quat::Identity(), 0.01);
  EXPECT_FALSE(detail::collide(far, ground, 0.01, m));
}

}  // namespace
}  // namespace sim::dynamics
