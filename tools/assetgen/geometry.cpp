#include "geometry.h"

#include <cmath>
#include <numbers>

namespace sim::assetgen {
namespace {

// Inertia per unit mass of a box with edge lengths s about its centre, in its own axes.
Eigen::Matrix3d boxInertia(const Vec3& s) {
  return Eigen::Vector3d(s.y() * s.y() + s.z() * s.z(), s.x() * s.x() + s.z() * s.z(),
                         s.x() * s.x() + s.y() * s.y())
             .asDiagonal() *
         (1.0 / 12.0);
}

// Any unit vector perpendicular to the unit vector a.
Vec3 perpendicular(const Vec3& a) {
  const Vec3 helper = std::abs(a.x()) < 0.9 ? Vec3::UnitX() : Vec3::UnitY();
  return a.cross(helper).normalized();
}

}  // namespace

void Mesh::triangle(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& n) {
  const auto base = static_cast<unsigned>(vertices.size());
  for (const Vec3& p : {a, b, c}) {
    vertices.push_back(p);
    normals.push_back(n);
  }
  triangles.push_back({base, base + 1, base + 2});
}

void Mesh::quad(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d, const Vec3& n) {
  const auto base = static_cast<unsigned>(vertices.size());
  for (const Vec3& p : {a, b, c, d}) {
    vertices.push_back(p);
    normals.push_back(n);
  }
  triangles.push_back({base, base + 1, base + 2});
  triangles.push_back({base, base + 2, base + 3});
}

void Mesh::box(const Vec3& lo, const Vec3& hi) {
  Eigen::Isometry3d pose = Eigen::Isometry3d::Identity();
  pose.translation() = 0.5 * (lo + hi);
  box(pose, hi - lo);
}

void Mesh::box(const Eigen::Isometry3d& pose, const Vec3& size) {
  const Vec3 h = 0.5 * size;
  const auto corner = [&](double sx, double sy, double sz) {
    return Vec3(pose * Vec3(sx * h.x(), sy * h.y(), sz * h.z()));
  };
  const Eigen::Matrix3d r = pose.linear();
  // Six faces, each counter-clockwise seen from outside.
  quad(corner(1, -1, -1), corner(1, 1, -1), corner(1, 1, 1), corner(1, -1, 1), r.col(0));
  quad(corner(-1, 1, -1), corner(-1, -1, -1), corner(-1, -1, 1), corner(-1, 1, 1), -r.col(0));
  quad(corner(1, 1, -1), corner(-1, 1, -1), corner(-1, 1, 1), corner(1, 1, 1), r.col(1));
  quad(corner(-1, -1, -1), corner(1, -1, -1), corner(1, -1, 1), corner(-1, -1, 1), -r.col(1));
  quad(corner(-1, -1, 1), corner(1, -1, 1), corner(1, 1, 1), corner(-1, 1, 1), r.col(2));
  quad(corner(-1, 1, -1), corner(1, 1, -1), corner(1, -1, -1), corner(-1, -1, -1), -r.col(2));
  solids.push_back({size.prod(), pose.translation(), r * boxInertia(size) * r.transpose()});
}

void Mesh::cylinder(const Vec3& centre, const Vec3& axis, double radius, double length,
                    int segments) {
  const Vec3 a = axis.normalized();
  const Vec3 u = perpendicular(a);
  const Vec3 v = a.cross(u);
  const Vec3 top = centre + 0.5 * length * a;
  const Vec3 bottom = centre - 0.5 * length * a;
  const auto radial = [&](int k) {
    const double t = 2.0 * std::numbers::pi * k / segments;
    return Vec3(std::cos(t) * u + std::sin(t) * v);
  };
  // Side: smooth normals, one quad per segment (u, v, a is right-handed: outward winding).
  for (int k = 0; k < segments; ++k) {
    const Vec3 r0 = radial(k);
    const Vec3 r1 = radial(k + 1);
    const auto base = static_cast<unsigned>(vertices.size());
    vertices.insert(vertices.end(), {bottom + radius * r0, bottom + radius * r1, top + radius * r1,
                                     top + radius * r0});
    normals.insert(normals.end(), {r0, r1, r1, r0});
    triangles.push_back({base, base + 1, base + 2});
    triangles.push_back({base, base + 2, base + 3});
  }
  // Caps: flat fans.
  for (int k = 1; k + 1 < segments; ++k) {
    triangle(top + radius * radial(0), top + radius * radial(k), top + radius * radial(k + 1), a);
    triangle(bottom + radius * radial(0), bottom + radius * radial(k + 1),
             bottom + radius * radial(k), -a);
  }
  // Inertia: (3r² + L²)/12 across the axis, r²/2 along it.
  const double across = (3.0 * radius * radius + length * length) / 12.0;
  const double along = 0.5 * radius * radius;
  const Eigen::Matrix3d inertia =
      across * Eigen::Matrix3d::Identity() + (along - across) * a * a.transpose();
  solids.push_back({std::numbers::pi * radius * radius * length, centre, inertia});
}

void Mesh::wedge(double run, double height, double width) {
  const double y = 0.5 * width;
  const Vec3 a0(0, -y, 0), b0(run, -y, 0), c0(run, -y, height);
  const Vec3 a1(0, y, 0), b1(run, y, 0), c1(run, y, height);
  const Vec3 slope = Vec3(-height, 0, run).normalized();
  quad(a0, a1, b1, b0, -Vec3::UnitZ());  // bottom
  quad(b0, b1, c1, c0, Vec3::UnitX());   // high end
  quad(a0, c0, c1, a1, slope);           // driving surface
  triangle(a0, b0, c0, -Vec3::UnitY());
  triangle(a1, c1, b1, Vec3::UnitY());
}

MassProperties massProperties(const std::vector<Mesh>& meshes, double mass) {
  double volume = 0.0;
  Vec3 moment = Vec3::Zero();
  for (const Mesh& mesh : meshes) {
    for (const Solid& s : mesh.solids) {
      volume += s.volume;
      moment += s.volume * s.centroid;
    }
  }
  MassProperties out;
  if (volume <= 0.0) return out;
  const double density = mass / volume;
  out.mass = mass;
  out.com = moment / volume;
  // Parallel-axis theorem: I = Σ m_i (I_i + |d|² E − d dᵀ), d from the common centre of mass.
  for (const Mesh& mesh : meshes) {
    for (const Solid& s : mesh.solids) {
      const Vec3 d = s.centroid - out.com;
      const Eigen::Matrix3d shift =
          d.squaredNorm() * Eigen::Matrix3d::Identity() - d * d.transpose();
      out.inertia += density * s.volume * (s.inertiaPerMass + shift);
    }
  }
  return out;
}

}  // namespace sim::assetgen
