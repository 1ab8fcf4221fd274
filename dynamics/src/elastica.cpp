#include <dynamics/elastica.h>
#include <dynamics/identify.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace sim::dynamics {

namespace {

struct Shot {
  double x, y, phi, m;
};

// RK4 from the clamp with m(0) = m0.
Shot integrate(double ei, double length, double fx, double fy, double m0, int steps) {
  auto rate = [&](const Shot& s) {
    const double c = std::cos(s.phi), sn = std::sin(s.phi);
    return Shot{c, sn, s.m / ei, fx * sn - fy * c};
  };
  auto add = [](const Shot& s, const Shot& d, double h) {
    return Shot{s.x + h * d.x, s.y + h * d.y, s.phi + h * d.phi, s.m + h * d.m};
  };
  const double h = length / steps;
  Shot s{0.0, 0.0, 0.0, m0};
  for (int i = 0; i < steps; ++i) {
    const Shot k1 = rate(s);
    const Shot k2 = rate(add(s, k1, 0.5 * h));
    const Shot k3 = rate(add(s, k2, 0.5 * h));
    const Shot k4 = rate(add(s, k3, h));
    s = Shot{s.x + h / 6 * (k1.x + 2 * k2.x + 2 * k3.x + k4.x),
             s.y + h / 6 * (k1.y + 2 * k2.y + 2 * k3.y + k4.y),
             s.phi + h / 6 * (k1.phi + 2 * k2.phi + 2 * k3.phi + k4.phi),
             s.m + h / 6 * (k1.m + 2 * k2.m + 2 * k3.m + k4.m)};
  }
  return s;
}

}  // namespace

ElasticaTip solveElastica(const LeafSpring& leaf, double fx, double fy, double moment, int steps) {
  const double ei = leaf.bendingStiffness();
  const double len = leaf.length_m;
  auto tipMoment = [&](double phi) {
    return leaf.lever_m * (fy * std::cos(phi) - fx * std::sin(phi)) + moment;
  };
  auto residual = [&](double m0, Shot& out) {
    out = integrate(ei, len, fx, fy, m0, steps);
    return out.m - tipMoment(out.phi);
  };
  // Linear theory as the first guess (m(0) = M_tip + F_y L); large loads continue from half
  // the load so the secant iterations stay on the physical branch.
  double guess = tipMoment(0.0) + fy * len;
  const double alpha = std::hypot(fx, fy) * len * (len + leaf.lever_m) / ei;
  if (alpha > 1.0) {
    LeafSpring half_leaf = leaf;
    const ElasticaTip half = solveElastica(half_leaf, 0.5 * fx, 0.5 * fy, 0.5 * moment, steps);
    if (half.converged) {
      // Moment at the clamp for the half load, scaled: the answer moves smoothly with the load.
      guess = 2.0 * (half.tip_moment + 0.5 * fy * half.x - 0.5 * fx * half.y);
    }
  }
  if (fx == 0.0 && fy == 0.0 && moment == 0.0) {  // unloaded: straight
    ElasticaTip straight;
    straight.x = len;
    straight.converged = true;
    return straight;
  }
  double m_prev = guess;
  Shot shot{};
  double r_prev = residual(m_prev, shot);
  const double scale =
      std::max({std::abs(m_prev), std::abs(fy * len), std::abs(fx * len), std::abs(moment), 1e-12});
  double m = m_prev + 1e-3 * scale + 1e-9;
  ElasticaTip tip;
  for (int it = 0; it < 100; ++it) {
    const double r = residual(m, shot);
    if (std::abs(r) <= 1e-12 * scale) {
      tip.converged = true;
      break;
    }
    const double slope = (r - r_prev) / (m - m_prev);
    m_prev = m;
    r_prev = r;
    if (!(std::abs(slope) > 0.0) || !std::isfinite(slope)) break;
    // The residual is smooth in m(0); limit a step to the load's scale against overshoot.
    m -= std::clamp(r / slope, -scale, scale);
  }
  tip.x = shot.x;
  tip.y = shot.y;
  tip.angle = shot.phi;
  tip.tip_moment = tipMoment(shot.phi);
  return tip;
}

}  // namespace sim::dynamics

namespace sim::dynamics {

namespace {

/// Static solve of R(q) = W(q) - Q(q) = 0 by Newton with a numerical Jacobian.
template <class Residual>
bool solveStatic(Residual residual, Vec3& q) {
  for (int it = 0; it < 100; ++it) {
    const Vec3 r = residual(q);
    Mat3 j;
    for (int k = 0; k < 3; ++k) {
      const double h = 1e-7 * std::max(1e-3, std::abs(q[k]));
      Vec3 hi = q, lo = q;
      hi[k] += h;
      lo[k] -= h;
      j.col(k) = (residual(hi) - residual(lo)) / (2 * h);
    }
    const Vec3 dq = j.fullPivLu().solve(r);
    if (!dq.allFinite()) return false;
    q -= dq;
    if (dq.norm() <= 1e-13 * (1.0 + q.norm())) return true;
  }
  return false;
}

/// T(θ) = k1 θ + k3 θ³ as a table over ±span (161 points: interpolation error ~1e-5 relative).
StiffnessCurve cubicTable(double k1, double k3, double span) {
  StiffnessCurve c;
  for (int i = -80; i <= 80; ++i) {
    const double th = span * i / 80.0;
    c.deformation.push_back(th);
    c.load.push_back(k1 * th + k3 * th * th * th);
  }
  return c;
}

/// Planar spring of fitFlexure from its parameters p = (a, k_x/K, k_y/K, k1/T, k3/T), scaled by
/// the leaf's linear stiffnesses K = 12 EI/L³ and T = EI/L so that they are all of order one
/// (the least-squares Jacobian is then well conditioned).
FlexureDef planarOf(const Eigen::VectorXd& p, double span, double K, double T) {
  FlexureDef d;
  d.model = FlexureModel::PlanarSpring;
  d.k_x.stiffness = p(1) * K;
  d.k_y.stiffness = p(2) * K;
  d.k_z = cubicTable(p(3) * T, p(4) * T, span);
  return d;
}

/// The leaf's tip pose the planar spring (centre a L) predicts under force F across the lever end.
ElasticaTip planarTip(const FlexureDef& def, double a, const LeafSpring& leaf, double force) {
  const double len = leaf.length_m, b = 1.0 - a;
  const double arm = b * len + leaf.lever_m;
  Vec3 q = Vec3::Zero();
  ElasticaTip tip;
  // Load continuation in quarters: each Newton solve starts near its answer.
  for (int step = 1; step <= 4; ++step) {
    const double f = force * step / 4.0;
    tip.converged = solveStatic(
        [&](const Vec3& v) {
          return Vec3(flexureWrench(def, v) - Vec3(0.0, f, f * arm * std::cos(v.z())));
        },
        q);
  }
  tip.x = a * len + q.x() + b * len * std::cos(q.z());
  tip.y = q.y() + b * len * std::sin(q.z());
  tip.angle = q.z();
  return tip;
}

/// A point `beyond` past the tip along its tangent (the lever's end), and the tip angle.
Vec3 pastTip(const ElasticaTip& t, double beyond) {
  return Vec3(t.x + beyond * std::cos(t.angle), t.y + beyond * std::sin(t.angle), t.angle);
}

}  // namespace

FlexureFit fitFlexure(const LeafSpring& leaf, double max_angle_rad, int samples) {
  FlexureFit fit;
  const double len = leaf.length_m, lever = leaf.lever_m;
  const double ei = leaf.bendingStiffness();
  // Force for the largest angle: bisection on the monotone tip angle.
  double lo = 0.0, hi = 4.0 * ei / (len * (len + lever));
  while (solveElastica(leaf, 0.0, hi, 0.0).angle < max_angle_rad) hi *= 2.0;
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    (solveElastica(leaf, 0.0, mid, 0.0).angle < max_angle_rad ? lo : hi) = mid;
  }
  const double f_max = 0.5 * (lo + hi);
  const int half = std::max(2, samples / 2);
  for (int i = -half; i <= half; ++i) {
    if (i == 0) continue;  // the unloaded leaf carries no information
    const double f = f_max * i / half;
    fit.samples.push_back({f, solveElastica(leaf, 0.0, f, 0.0)});
  }

  // The seed's own figures. The centre a L's drift at a sample: the output frame sits at the
  // leaf's tip pose moved back by b L along the tip tangent; Δx, Δy are its ranges.
  auto drift = [&](const ElasticaSample& s, double a) {
    const double b = 1.0 - a;
    return Vec3(s.tip.x - a * len - b * len * std::cos(s.tip.angle),
                s.tip.y - b * len * std::sin(s.tip.angle), s.tip.angle);
  };
  double best_f2 = std::numeric_limits<double>::infinity();
  for (int k = 0; k <= 1000; ++k) {
    const double a = k / 1000.0;
    double x_lo = INFINITY, x_hi = -INFINITY, y_lo = INFINITY, y_hi = -INFINITY;
    bool positive = true;
    for (const ElasticaSample& s : fit.samples) {
      const Vec3 q = drift(s, a);
      x_lo = std::min(x_lo, q.x());
      x_hi = std::max(x_hi, q.x());
      y_lo = std::min(y_lo, q.y());
      y_hi = std::max(y_hi, q.y());
      // Eq. 2's force rows at this deformation under the load (0, F), solved for the secants
      // (the seed's A1..A7 system): k_x (x c + y s/2) + k_y y s/2 = 0,
      // -k_x x s/2 + k_y (y c - x s/2) = F.
      const double c = std::cos(q.z()), sn = std::sin(q.z());
      const double a1 = q.x() * c + 0.5 * q.y() * sn, a2 = 0.5 * q.y() * sn;
      const double a3 = -0.5 * q.x() * sn, a4 = q.y() * c - 0.5 * q.x() * sn;
      const double det = a1 * a4 - a2 * a3;
      const double kx = -s.force_N * a2 / det, ky = s.force_N * a1 / det;
      positive = positive && kx > 0.0 && ky > 0.0 && std::isfinite(kx + ky);
    }
    fit.positive_secants = fit.positive_secants || positive;
    const double f2 = (x_hi - x_lo) * (x_hi - x_lo) + (y_hi - y_lo) * (y_hi - y_lo);
    if (f2 < best_f2) {
      best_f2 = f2;
      fit.a_f2 = a;
      fit.drift_x_m = x_hi - x_lo;
      fit.drift_y_m = y_hi - y_lo;
    }
  }

  // Planar spring by Levenberg-Marquardt on (a, k_x, k_y, k1, k3): the residuals are the lever
  // end's position over L + lever and the output angle. Start: a leaf's linear theory about its
  // middle (a = 1/2, k_y = 12 EI/L³, k1 = EI/L) with k_x = -k_y/4 (eq. 2 needs it negative).
  const double span = 1.5 * max_angle_rad;
  const double scale = len + lever;
  const double k_lin = 12.0 * ei / (len * len * len), t_lin = ei / len;
  const int n = static_cast<int>(3 * fit.samples.size());
  auto residuals = [&](const Eigen::VectorXd& p, Eigen::VectorXd& r) {
    const FlexureDef def = planarOf(p, span, k_lin, t_lin);
    for (std::size_t i = 0; i < fit.samples.size(); ++i) {
      const Vec3 model = pastTip(planarTip(def, p(0), leaf, fit.samples[i].force_N), lever);
      const Vec3 ref = pastTip(fit.samples[i].tip, lever);
      const auto k = static_cast<Eigen::Index>(3 * i);
      r(k) = (model.x() - ref.x()) / scale;
      r(k + 1) = (model.y() - ref.y()) / scale;
      r(k + 2) = model.z() - ref.z();
    }
  };
  const identify::ResidualFn fn = [&](const Eigen::VectorXd& p, Eigen::VectorXd& r,
                                      Eigen::MatrixXd& jac) {
    residuals(p, r);
    for (Eigen::Index k = 0; k < p.size(); ++k) {
      const double h = 1e-7;
      Eigen::VectorXd up = p, down = p, r_up(n), r_down(n);
      up(k) += h;
      down(k) -= h;
      residuals(up, r_up);
      residuals(down, r_down);
      jac.col(k) = (r_up - r_down) / (2 * h);
    }
  };
  Eigen::VectorXd p0(5);
  p0 << 0.5, -0.25, 1.0, 1.0, 0.0;
  const identify::LeastSquaresResult planar = identify::leastSquares(fn, p0, n, 200);
  fit.a = planar.params(0);
  fit.b = 1.0 - fit.a;
  fit.planar = planarOf(planar.params, span, k_lin, t_lin);
  fit.rms_error = std::sqrt(planar.residual_sum_sq / n);
  // A fit whose residuals are 1 % of the lever's radius is no fit (the seed's leaf to ±45°: 0.09
  // %).
  fit.planar_ok = fit.rms_error < 0.01;
  for (const ElasticaSample& s : fit.samples)
    fit.planar_ok = fit.planar_ok && planarTip(fit.planar, fit.a, leaf, s.force_N).converged;

  // PRB: seed 001's F1, Σ (|P - pivot| - R)², by golden section on λ in [0.3, 1.2], for the
  // point P `beyond` past the leaf's tip at R = λ L + beyond from the pivot ((1 - λ) L, 0): the
  // tip itself for Table 1's λ, the lever's end for the model. Then T(Θ) = k1 Θ + k3 Θ³ by
  // linear least squares on the torque about the pivot.
  auto goldenF1 = [&](double beyond) {
    auto f1 = [&](double lambda) {
      double sum = 0.0;
      for (const ElasticaSample& s : fit.samples) {
        const Vec3 p = pastTip(s.tip, beyond);
        const double r = std::hypot(p.x() - (1.0 - lambda) * len, p.y()) - (lambda * len + beyond);
        sum += r * r;
      }
      return sum;
    };
    double l0 = 0.3, l1 = 1.2;
    const double g = 0.5 * (std::sqrt(5.0) - 1.0);
    for (int i = 0; i < 100; ++i) {
      const double m1 = l1 - g * (l1 - l0), m2 = l0 + g * (l1 - l0);
      if (f1(m1) < f1(m2)) {
        l1 = m2;
      } else {
        l0 = m1;
      }
    }
    return 0.5 * (l0 + l1);
  };
  fit.lambda_tip = goldenF1(0.0);
  fit.lambda = goldenF1(lever);
  const auto m = static_cast<Eigen::Index>(fit.samples.size());
  Eigen::MatrixXd basis(m, 2);
  Eigen::VectorXd torque(m);
  const double radius = fit.lambda * len + lever;
  for (Eigen::Index i = 0; i < m; ++i) {
    const ElasticaSample& s = fit.samples[static_cast<std::size_t>(i)];
    const Vec3 p = pastTip(s.tip, lever);
    const double th = std::atan2(p.y(), p.x() - (1.0 - fit.lambda) * len);
    basis(i, 0) = th;
    basis(i, 1) = th * th * th;
    torque(i) = s.force_N * radius * std::cos(th);
  }
  const Eigen::Vector2d k = basis.colPivHouseholderQr().solve(torque);
  fit.prb.model = FlexureModel::TorsionSpring;
  fit.prb.k_z = cubicTable(k(0), k(1), span);
  return fit;
}

ElasticaTip planarModelTip(const FlexureFit& fit, const LeafSpring& leaf, double force) {
  return planarTip(fit.planar, fit.a, leaf, force);
}

ElasticaTip prbModelTip(const FlexureFit& fit, const LeafSpring& leaf, double force) {
  const double len = leaf.length_m;
  const double arm = fit.lambda * len + leaf.lever_m;
  double th = 0.0;
  ElasticaTip tip;
  for (int it = 0; it < 100 && !tip.converged; ++it) {
    const double r = fit.prb.k_z.loadAt(th) - force * arm * std::cos(th);
    const double dr = fit.prb.k_z.tangent(th) + force * arm * std::sin(th);
    th -= r / dr;
    tip.converged = std::abs(r) <= 1e-13 * (1.0 + std::abs(force * arm));
  }
  tip.x = (1.0 - fit.lambda) * len + fit.lambda * len * std::cos(th);
  tip.y = fit.lambda * len * std::sin(th);
  tip.angle = th;
  return tip;
}

}  // namespace sim::dynamics
