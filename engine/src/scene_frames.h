// Internal header, not API: poses given relative to another body's frame (`frame:` on bodies and
// joints, docs/scenes.md "Frames"), composed at load into the world poses the dynamics uses, and
// the check that a joint's anchor lies near its bodies.
#pragma once

#include <dynamics/model.h>

#include <yaml-cpp/yaml.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace sim::engine::detail {

using dynamics::Quat;
using dynamics::Vec3;

// A number as its decimal text gave it: mantissa × 10^exponent, exactly.
struct Decimal {
  std::int64_t mantissa = 0;
  int exponent = 0;
};
using DecimalVec3 = std::array<Decimal, 3>;

// The plain decimal forms ("-2.2", "0.275", "1e-3"); nothing for other spellings or more digits
// than an int64 holds.
std::optional<Decimal> parseDecimal(std::string_view text);
// The exact sum, or nothing when it does not fit an int64 mantissa.
std::optional<Decimal> addDecimal(const Decimal& a, const Decimal& b);
// The double nearest the exact value: what parsing its decimal text gives.
double toDouble(const Decimal& d);
// A YAML list of three plain decimals, or nothing.
std::optional<DecimalVec3> readDecimalVec3(const YAML::Node& node);

// Where a file's coordinates sit in the scene: p_scene = rotation · p_file + translation.
struct Placement {
  Quat rotation = Quat::Identity();
  Vec3 translation = Vec3::Zero();
  Vec3 point(const Vec3& p) const { return rotation * p + translation; }
  Placement then(const Placement& inner) const {
    return {(rotation * inner.rotation).normalized(), rotation * inner.translation + translation};
  }
};

// A frame that positions are given in: its pose in the scene and, when every step from the
// world to it was an unrotated shift written in decimal, its origin as the exact decimal sum.
// Composing through such frames adds decimals exactly and rounds once, so a relative file gives
// the very doubles its world twin (the sums written out) gives.
struct PoseFrame {
  Placement pose;
  std::optional<DecimalVec3> exact_origin;

  // The point `p` (its decimal text `text`, when known) given in this frame, in the scene;
  // `exact` receives its exact decimal form when it has one.
  Vec3 point(const Vec3& p, const std::optional<DecimalVec3>& text,
             std::optional<DecimalVec3>* exact = nullptr) const;
};

// Distance (m) from a point (the body's centre-of-mass frame) to the nearest of the body's
// shapes, measured to each shape's bounding box in the shape's own axes (exact for boxes, a lower
// bound for the rest; a plane or mesh counts as touching). A body without shapes is measured to
// its drawn box `box_size_m` centred at the centre of mass (all zero: no geometry, nothing).
std::optional<double> distanceToBody(const dynamics::BodyDef& body,
                                     const std::array<double, 3>& box_size_m, const Vec3& point);

// A joint anchor farther than this from the geometry of both of its bodies is reported: a pin
// passes through (or touches) at least one of the links it joins, and collision shapes are
// simplified by at most a few centimetres (docs/scenes.md "Frames").
constexpr double kAnchorTolerance_m = 0.05;

}  // namespace sim::engine::detail
