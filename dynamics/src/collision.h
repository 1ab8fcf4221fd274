// Internal header, not API: collision detection for the contact rows.
//
// Detection is stateless: every substep the manifolds are recomputed from the poses, and each
// point carries a feature id that is stable while the same features touch (which box vertex,
// which clipped edge), so the solver can match it to last substep's point and warm-start it.
// Everything is double precision and visits shapes and pairs in index order (deterministic).
#pragma once

#include <dynamics/model.h>
#include <dynamics/shapes.h>

#include <array>
#include <cstdint>
#include <vector>

namespace sim::dynamics::detail {

/// A shape placed in the world for one substep.
struct WorldShape {
  ShapeType type = ShapeType::Box;
  int body = 0;  ///< Body index (never the world: static bodies own world geometry).
  Vec3 center = Vec3::Zero();
  Mat3 axes = Mat3::Identity();  ///< Columns: the shape's local x, y, z in world axes.
  Vec3 half_extents = Vec3::Zero();
  double radius = 0.0;
  double half_length = 0.0;
  const ConvexHullData* hull = nullptr;    ///< ConvexHull (owned by the model's ShapeDef).
  const TriangleMeshData* mesh = nullptr;  ///< TriangleMesh (likewise).
  Vec3 aabb_min = Vec3::Zero(), aabb_max = Vec3::Zero();  ///< Grown by the contact margin.
};

struct ManifoldPoint {
  Vec3 on_a = Vec3::Zero();  ///< Witness point on shape a's surface (world).
  Vec3 on_b = Vec3::Zero();  ///< Witness point on shape b's surface (world).
  double separation = 0.0;   ///< normal . (on_b - on_a); negative when penetrating (m).
  std::uint32_t feature = 0;
};

/// Up to four contact points between two shapes sharing one normal (from a to b).
struct Manifold {
  Vec3 normal = Vec3::UnitZ();
  int count = 0;
  std::array<ManifoldPoint, 4> points;
};

/// Places a body's shape in the world (centre-of-mass pose x, q) and computes its grown AABB.
WorldShape placeShape(const ShapeDef& def, int body, const Vec3& x, const Quat& q, double margin);

/// Contact manifold of shapes a and b if they are closer than `margin`. Returns false when they
/// are farther apart or the pair of types is not supported (plane against plane), and for
/// triangle meshes, which need collideAll().
bool collide(const WorldShape& a, const WorldShape& b, double margin, Manifold& out);

/// Two boxes as collide() does them, but testing every edge axis in full (collide() skips the
/// ones a cheaper unnormalised test shows clearly overlapping); for the test that both agree.
bool collideBoxesUnscreened(const WorldShape& a, const WorldShape& b, double margin, Manifold& out);

/// Every manifold of shapes a and b (cleared first): collide()'s one for convex pairs, one per
/// touched triangle (in triangle order) when one shape is a triangle mesh. The feature ids of a
/// mesh's manifolds carry the triangle index, so they are unique within the pair.
void collideAll(const WorldShape& a, const WorldShape& b, double margin,
                std::vector<Manifold>& out);
/// collideAll() appending to `out` (the narrow phase's per-thread lists).
void collideAppend(const WorldShape& a, const WorldShape& b, double margin,
                   std::vector<Manifold>& out);

/// The pairs with a cylinder or a convex hull (collision_convex.cpp); a.type <= b.type, neither
/// a mesh.
bool collideConvexPair(const WorldShape& a, const WorldShape& b, double margin, Manifold& out);

/// Two polyhedra (boxes or hulls, at least one hull) by separating axes, in the given order.
bool collidePolyhedra(const WorldShape& a, const WorldShape& b, double margin, Manifold& out);

/// A triangle mesh against a convex shape: one manifold per touched triangle, normals from the
/// mesh toward `other` (collision_convex.cpp). Appends to `out`.
void collideMesh(const WorldShape& mesh, const WorldShape& other, double margin,
                 std::vector<Manifold>& out);

/// Whether collide() handles this pair of shape types.
bool pairSupported(ShapeType a, ShapeType b);

/// Sort-and-sweep broad phase over AABBs, in bands along y. Planes are unbounded and tested
/// against every shape; triangle meshes (static and usually large) likewise, against every AABB
/// overlapping theirs. The x order persists between calls (insertion sort on nearly sorted data),
/// ties broken by index, and the output is sorted by (a, b) with a < b: deterministic.
///
/// Why bands: a single sweep along x tests every pair whose x ranges overlap, and a pile stands
/// in rows, so each box met a whole row of boxes (about 50 candidates in the 1000-box pile).
/// Each shape is listed, in x order, in every y band its AABB touches, and each band is swept on
/// its own; a pair is reported only by the band holding the lower edge of the pair's y overlap,
/// so exactly once. Shapes spanning more than kMaxBandsPerShape bands (long walls, big slabs) are
/// tested against every shape instead of being listed in many bands.
///
/// Moving and frozen shapes are banded apart: the moving ones swept among themselves each call,
/// and each moving shape looked up in the frozen shapes' bands (binary search on x, back by the
/// band's widest box). A site of sleeping containers or a sleeping pile is not re-sorted and
/// re-banded every step (Jolt keeps its sleeping bodies out of its broad-phase updates alike).
class BroadPhase {
 public:
  /// Overlapping pairs (i < j, sorted). `frozen[i]` marks a shape whose body does not move
  /// (static or asleep): pairs of two frozen shapes are not reported. The frozen shapes are
  /// sorted into bands once and kept while they stay frozen where they are, so each call costs
  /// what the moving shapes cost (nothing when none moves): `frozen_boxes_changed` says that a
  /// frozen shape's box changed since the last call (a change of the flags themselves is seen
  /// here).
  void findPairs(const std::vector<WorldShape>& shapes, const std::vector<char>& frozen,
                 bool frozen_boxes_changed, std::vector<std::pair<int, int>>& pairs);

  static constexpr int kMaxBandsPerShape = 4;
  static constexpr int kMaxBands = 4096;

 private:
  /// A shape's box as the sweeps read it (consecutive memory instead of one WorldShape, several
  /// cache lines, per candidate).
  struct SweptBox {
    double min_x, max_x, min_y, max_y, min_z, max_z;
    int shape;  // index into shapes
  };
  /// Shapes (given in x order) listed in the y bands their boxes touch, each band in x order.
  struct Bands {
    double low = 0.0, per_metre = 0.0;
    int count = 1;
    std::vector<int> start;  // band b is [start[b], start[b+1]) of boxes
    std::vector<SweptBox> boxes;
    std::vector<double> widest;  // per band: the largest x extent of its boxes
    std::vector<int> wide;       // shapes spanning too many bands, in x order
    int band(double y) const;
    void build(const std::vector<WorldShape>& shapes, const std::vector<int>& order,
               std::vector<int>& next_fill);
  };

  std::vector<int> planes_;        // planes and meshes
  std::vector<int> moving_;        // moving bounded shapes, by aabb_min.x (persists: nearly sorted)
  std::vector<int> frozen_order_;  // frozen bounded shapes, by aabb_min.x
  std::vector<char> sorted_for_;   // the frozen flags moving_ and frozen_order_ were made for
  bool lists_made_ = false;
  Bands moving_bands_, frozen_bands_;
  std::vector<char> is_wide_;       // per shape: a wide shape of moving_bands_
  std::vector<int> next_fill_;      // scratch of Bands::build
  std::vector<int> became_frozen_;  // scratch
};

}  // namespace sim::dynamics::detail
