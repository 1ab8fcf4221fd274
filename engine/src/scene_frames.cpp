// Relative poses composed at load (scene_frames.h).
#include "scene_frames.h"

#include <dynamics/shapes.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

namespace sim::engine::detail {

std::optional<Decimal> parseDecimal(std::string_view text) {
  std::size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  std::int64_t mantissa = 0;
  int exponent = 0, digits = 0;
  bool point = false, any_digit = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.' && !point) {
      point = true;
    } else if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
      any_digit = true;
      if (mantissa == 0 && c == '0') {
        if (point) --exponent;  // leading zeros carry no digits
      } else {
        if (++digits > 18) return {};  // beyond an int64: the double is all we have
        mantissa = mantissa * 10 + (c - '0');
        if (point) --exponent;
      }
    } else {
      break;
    }
  }
  if (!any_digit) return {};
  if (i < text.size()) {
    if (text[i] != 'e' && text[i] != 'E') return {};
    int power = 0;
    const char* begin = text.data() + i + 1;
    if (begin < text.data() + text.size() && *begin == '+') ++begin;
    const auto [end, ec] = std::from_chars(begin, text.data() + text.size(), power);
    if (ec != std::errc() || end != text.data() + text.size() || std::abs(power) > 300) return {};
    exponent += power;
  }
  return Decimal{negative ? -mantissa : mantissa, exponent};
}

std::optional<Decimal> addDecimal(const Decimal& a, const Decimal& b) {
  Decimal hi = a.exponent >= b.exponent ? a : b;
  const Decimal& lo = a.exponent >= b.exponent ? b : a;
  if (hi.mantissa == 0) return lo;
  if (lo.mantissa == 0) return hi;
  for (; hi.exponent > lo.exponent; --hi.exponent) {
    if (__builtin_mul_overflow(hi.mantissa, std::int64_t{10}, &hi.mantissa)) return {};
  }
  Decimal sum{0, lo.exponent};
  if (__builtin_add_overflow(hi.mantissa, lo.mantissa, &sum.mantissa)) return {};
  return sum;
}

double toDouble(const Decimal& d) {
  // from_chars rounds correctly: the same double as the number's own decimal text.
  const std::string text = fmt::format("{}e{}", d.mantissa, d.exponent);
  double value = 0.0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

std::optional<DecimalVec3> readDecimalVec3(const YAML::Node& node) {
  if (!node.IsSequence() || node.size() != 3) return {};
  DecimalVec3 v;
  for (std::size_t i = 0; i < 3; ++i) {
    if (!node[i].IsScalar()) return {};
    const auto d = parseDecimal(node[i].Scalar());
    if (!d) return {};
    v[i] = *d;
  }
  return v;
}

Vec3 PoseFrame::point(const Vec3& p, const std::optional<DecimalVec3>& text,
                      std::optional<DecimalVec3>* exact) const {
  const bool unrotated = pose.rotation.w() == 1.0 && pose.rotation.vec().isZero(0.0);
  const bool at_origin =
      exact_origin && std::all_of(exact_origin->begin(), exact_origin->end(),
                                  [](const Decimal& d) { return d.mantissa == 0; });
  if (unrotated && at_origin && pose.translation.isZero(0.0)) {
    if (exact != nullptr) *exact = text;  // the world itself: the numbers as written
    return pose.point(p);
  }
  if (unrotated && exact_origin && text) {
    DecimalVec3 sum;
    Vec3 result;
    bool fits = true;
    for (int i = 0; i < 3 && fits; ++i) {
      const auto s = addDecimal((*exact_origin)[i], (*text)[i]);
      fits = s.has_value();
      if (fits) {
        sum[i] = *s;
        result[i] = toDouble(*s);
      }
    }
    if (fits) {
      if (exact != nullptr) *exact = sum;
      return result;
    }
  }
  if (exact != nullptr) exact->reset();
  return pose.point(p);
}

namespace {

// Half extents of a shape's bounding box in its own axes; nothing for unbounded shapes.
std::optional<std::pair<Vec3, Vec3>> shapeBounds(const dynamics::ShapeDef& shape) {
  using dynamics::ShapeType;
  switch (shape.type) {
    case ShapeType::Box: return std::pair{-shape.half_extents_m, shape.half_extents_m};
    case ShapeType::Sphere: {
      const Vec3 r = Vec3::Constant(shape.radius_m);
      return std::pair{-r, r};
    }
    case ShapeType::Capsule: {
      const Vec3 e(shape.radius_m, shape.radius_m, shape.half_length_m + shape.radius_m);
      return std::pair{-e, e};
    }
    case ShapeType::Cylinder: {
      const Vec3 e(shape.radius_m, shape.radius_m, shape.half_length_m);
      return std::pair{-e, e};
    }
    case ShapeType::ConvexHull:
      if (shape.hull) return std::pair{shape.hull->aabb_min, shape.hull->aabb_max};
      return {};
    case ShapeType::Plane:
    case ShapeType::TriangleMesh: return {};
  }
  return {};
}

double distanceToBox(const Vec3& p, const Vec3& lo, const Vec3& hi) {
  return (p - p.cwiseMax(lo).cwiseMin(hi)).norm();
}

}  // namespace

std::optional<double> distanceToBody(const dynamics::BodyDef& body,
                                     const std::array<double, 3>& box_size_m, const Vec3& point) {
  if (body.shapes.empty()) {
    const Vec3 half = 0.5 * Vec3(box_size_m[0], box_size_m[1], box_size_m[2]);
    if (half.isZero(0.0)) return {};
    return distanceToBox(point, -half, half);
  }
  double nearest = std::numeric_limits<double>::infinity();
  for (const dynamics::ShapeDef& shape : body.shapes) {
    const auto bounds = shapeBounds(shape);
    if (!bounds) return 0.0;  // a plane or a mesh: the anchor is taken to be on it
    const Vec3 local = shape.pose.rotation.conjugate() * (point - shape.pose.position);
    nearest = std::min(nearest, distanceToBox(local, bounds->first, bounds->second));
  }
  return nearest;
}

}  // namespace sim::engine::detail
