#include <dynamics/flexure.h>

#include <algorithm>
#include <cmath>

namespace sim::dynamics {

namespace {

/// Index i of the table segment [q_i, q_i+1] used at q (the end segments extend outwards).
std::size_t segment(const std::vector<double>& x, double q) {
  const auto it = std::upper_bound(x.begin(), x.end(), q);
  const std::size_t i = it == x.begin() ? 0 : static_cast<std::size_t>(it - x.begin()) - 1;
  return std::min(i, x.size() - 2);
}

}  // namespace

double StiffnessCurve::loadAt(double q) const {
  if (!isTable()) return stiffness * q;
  const std::size_t i = segment(deformation, q);
  const double t = (q - deformation[i]) / (deformation[i + 1] - deformation[i]);
  return load[i] + t * (load[i + 1] - load[i]);
}

double StiffnessCurve::tangent(double q) const {
  if (!isTable()) return stiffness;
  const std::size_t i = segment(deformation, q);
  return (load[i + 1] - load[i]) / (deformation[i + 1] - deformation[i]);
}

double StiffnessCurve::secant(double q) const {
  if (!isTable()) return stiffness;
  // Near zero the secant tends to the slope there; the cut-off is far below any table step.
  const double span = deformation.back() - deformation.front();
  if (std::abs(q) <= 1e-9 * span) return tangent(q);
  return loadAt(q) / q;
}

Vec3 flexureWrench(const FlexureDef& def, const Vec3& q) {
  const double x = q.x(), y = q.y(), th = q.z();
  const double torque = def.k_z.loadAt(th);
  if (def.model == FlexureModel::TorsionSpring) return {0.0, 0.0, torque};
  const double kx = def.k_x.secant(x), ky = def.k_y.secant(y);
  const double c = std::cos(th), s = std::sin(th);
  const double mean = 0.5 * (kx + ky);
  return {kx * x * c + mean * y * s, ky * y * c - mean * x * s,
          0.5 * (x * c + y * s) * (y * c - x * s) * (ky - kx) + torque};
}

Mat3 flexureTangent(const FlexureDef& def, const Vec3& q) {
  Mat3 t;
  for (int k = 0; k < 3; ++k) {
    // Steps relative to the deformation's own scale keep the differences well conditioned for
    // both metres (flexures deflect by ~1e-4..1e-2 m) and radians.
    const double step = 1e-7 * std::max(1.0, std::abs(q[k])) * (k < 2 ? 1e-2 : 1.0);
    Vec3 hi = q, lo = q;
    hi[k] += step;
    lo[k] -= step;
    t.col(k) = (flexureWrench(def, hi) - flexureWrench(def, lo)) / (2.0 * step);
  }
  return t;
}

bool flexureDeflection(const FlexureDef& def, const Vec3& load, Vec3& q) {
  q.setZero();
  if (def.model == FlexureModel::TorsionSpring) {
    // Scalar Newton on T(θ) = load.z with bisection-free damping (T is monotone by validation).
    for (int it = 0; it < 100; ++it) {
      const double r = def.k_z.loadAt(q.z()) - load.z();
      if (std::abs(r) <= 1e-12 * std::max(1.0, std::abs(load.z()))) return true;
      q.z() -= r / def.k_z.tangent(q.z());
    }
    return false;
  }
  const double scale = std::max(1.0, load.norm());
  for (int it = 0; it < 200; ++it) {
    const Vec3 r = flexureWrench(def, q) - load;
    if (r.norm() <= 1e-12 * scale) return true;
    const Vec3 dq = flexureTangent(def, q).partialPivLu().solve(r);
    // Damped: never turn by more than 0.2 rad in one update.
    const double damp = std::min(1.0, 0.2 / std::max(1e-300, std::abs(dq.z())));
    q -= damp * dq;
  }
  return false;
}

std::vector<std::string> validateFlexure(const FlexureDef& def) {
  std::vector<std::string> out;
  auto checkCurve = [&out](const StiffnessCurve& c, const std::string& name) {
    if (!c.isTable()) {
      if (!(c.stiffness > 0.0) || !std::isfinite(c.stiffness))
        out.push_back(name + ": stiffness must be a positive finite number");
      return;
    }
    if (c.deformation.size() < 2 || c.deformation.size() != c.load.size()) {
      out.push_back(name + ".table: needs at least two (deformation, load) points");
      return;
    }
    for (std::size_t i = 0; i < c.deformation.size(); ++i) {
      if (!std::isfinite(c.deformation[i]) || !std::isfinite(c.load[i])) {
        out.push_back(name + ".table: non-finite value at point " + std::to_string(i));
        return;
      }
      if (i > 0 && !(c.deformation[i] > c.deformation[i - 1])) {
        out.push_back(name + ".table: deformation must increase strictly (point " +
                      std::to_string(i) + ")");
        return;
      }
    }
    // A spring pushes back: positive secant stiffness everywhere, positive slope at zero.
    for (std::size_t i = 0; i < c.deformation.size(); ++i) {
      if (c.deformation[i] != 0.0 && !(c.load[i] / c.deformation[i] > 0.0)) {
        out.push_back(name + ".table: load must have the sign of the deformation (point " +
                      std::to_string(i) + ")");
        return;
      }
    }
    if (!(c.tangent(0.0) > 0.0)) out.push_back(name + ".table: slope at zero must be > 0");
  };
  if (def.model == FlexureModel::PlanarSpring) {
    checkCurve(def.k_x, "k_x");
    checkCurve(def.k_y, "k_y");
  }
  checkCurve(def.k_z, "k_z");
  if (!(def.damping_linear >= 0.0) || !std::isfinite(def.damping_linear))
    out.push_back("damping_linear: must be >= 0");
  if (!(def.damping_angular >= 0.0) || !std::isfinite(def.damping_angular))
    out.push_back("damping_angular: must be >= 0");
  return out;
}

}  // namespace sim::dynamics
