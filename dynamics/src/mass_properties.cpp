// Mass properties of uniform solids. Hulls use the tetrahedron decomposition: each face is a fan
// of triangles, each triangle with an interior point spans a tetrahedron whose volume, first and
// second moments have closed forms (the canonical tetrahedron's covariance mapped linearly).
#include <dynamics/shapes.h>

#include <cmath>
#include <numbers>

namespace sim::dynamics {

namespace {

constexpr double kPi = std::numbers::pi;

// Inertia about the centre from the covariance C = integral of rho x x^T over the body.
Mat3 inertiaFromCovariance(const Mat3& c) {
  return Mat3::Identity() * c.trace() - c;
}

MassProperties hullProperties(const ConvexHullData& hull, double density) {
  // Canonical tetrahedron (0, e1, e2, e3): integral of x x^T = [[2,1,1],[1,2,1],[1,1,2]] / 120.
  Mat3 canonical;
  canonical << 2, 1, 1, 1, 2, 1, 1, 1, 2;
  canonical /= 120.0;
  const Vec3 r = hull.centroid;  // interior apex: every tetrahedron has positive volume
  double volume = 0.0;
  Vec3 moment = Vec3::Zero();
  Mat3 cov = Mat3::Zero();
  for (const ConvexHullData::Face& f : hull.faces) {
    const Vec3 a = hull.vertices[hull.face_vertices[f.first]] - r;
    for (int k = 1; k + 1 < f.count; ++k) {
      Mat3 m;
      m.col(0) = a;
      m.col(1) = hull.vertices[hull.face_vertices[f.first + k]] - r;
      m.col(2) = hull.vertices[hull.face_vertices[f.first + k + 1]] - r;
      const double det = m.determinant();
      volume += det / 6.0;
      moment += det / 24.0 * (m.col(0) + m.col(1) + m.col(2));
      cov += det * (m * canonical * m.transpose());
    }
  }
  MassProperties p;
  p.mass_kg = density * volume;
  const Vec3 c = moment / volume;  // centre relative to r
  p.center_m = r + c;
  p.inertia_kgm2 = inertiaFromCovariance(density * (cov - volume * c * c.transpose()));
  return p;
}

}  // namespace

std::optional<MassProperties> computeMassProperties(const ShapeDef& shape, double density) {
  if (!(density > 0.0) || !std::isfinite(density)) return std::nullopt;
  const double r = shape.radius_m, h = shape.half_length_m;
  MassProperties p;
  switch (shape.type) {
    case ShapeType::Sphere:
      p.mass_kg = density * 4.0 / 3.0 * kPi * r * r * r;
      p.inertia_kgm2 = Mat3::Identity() * (0.4 * p.mass_kg * r * r);
      break;
    case ShapeType::Box: {
      const Vec3 e = 2.0 * shape.half_extents_m;
      p.mass_kg = density * e.prod();
      const Vec3 sq = e.cwiseProduct(e);
      p.inertia_kgm2 =
          (p.mass_kg / 12.0 * Vec3(sq.y() + sq.z(), sq.x() + sq.z(), sq.x() + sq.y())).asDiagonal();
      break;
    }
    case ShapeType::Cylinder: {
      p.mass_kg = density * kPi * r * r * 2.0 * h;
      const double side = p.mass_kg * (3.0 * r * r + 4.0 * h * h) / 12.0;
      p.inertia_kgm2 = Vec3(side, side, 0.5 * p.mass_kg * r * r).asDiagonal();
      break;
    }
    case ShapeType::Capsule: {
      // A cylinder plus two hemispheres (each centred 3r/8 beyond the cylinder's end).
      const double mc = density * kPi * r * r * 2.0 * h;
      const double ms = density * 4.0 / 3.0 * kPi * r * r * r;
      p.mass_kg = mc + ms;
      const double side =
          mc * (3.0 * r * r + 4.0 * h * h) / 12.0 + ms * (0.4 * r * r + h * h + 0.75 * h * r);
      p.inertia_kgm2 = Vec3(side, side, 0.5 * mc * r * r + 0.4 * ms * r * r).asDiagonal();
      break;
    }
    case ShapeType::ConvexHull:
      if (!shape.hull) return std::nullopt;
      p = hullProperties(*shape.hull, density);
      break;
    case ShapeType::Plane:
    case ShapeType::TriangleMesh: return std::nullopt;
  }
  // From the shape's frame to the frame its pose refers to.
  const Mat3 rot = shape.pose.rotation.toRotationMatrix();
  p.center_m = shape.pose.position + rot * p.center_m;
  p.inertia_kgm2 = rot * p.inertia_kgm2 * rot.transpose();
  return p;
}

MassProperties combineMassProperties(const std::vector<MassProperties>& parts) {
  MassProperties total;
  for (const MassProperties& p : parts) {
    total.mass_kg += p.mass_kg;
    total.center_m += p.mass_kg * p.center_m;
  }
  if (!(total.mass_kg > 0.0)) return total;
  total.center_m /= total.mass_kg;
  for (const MassProperties& p : parts) {
    // Parallel axes: I + m (|d|^2 1 - d d^T).
    const Vec3 d = p.center_m - total.center_m;
    total.inertia_kgm2 +=
        p.inertia_kgm2 + p.mass_kg * (Mat3::Identity() * d.squaredNorm() - d * d.transpose());
  }
  return total;
}

}  // namespace sim::dynamics
