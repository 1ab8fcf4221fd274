// Pins the constraint parts of dynamics/src/joint_parts.h and motor_block.h and the joint
// coordinates of dynamics/src/joint_geometry.h: every Jacobian against central finite differences
// of its position function at random poses, and the block effective mass K = J M^-1 J^T of RowBlock
// against a dense product.
#include "joint_geometry.h"
#include "joint_parts.h"
#include "motor_block.h"

#include <dynamics/math.h>

#include <gtest/gtest.h>
#include <Eigen/Dense>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <vector>

namespace sim::dynamics {
namespace {

using detail::AxisRow;
using detail::HingeRotationPart;
using detail::JointFrames;
using detail::LineRows;
using detail::PointPart;
using detail::RotationPart;
using detail::RowBlock;
using detail::SolverBody;

// Tolerances can be scaled for exotic platforms (like MuJoCo's MJTOL_SCALE).
double tol(double t) {
  const char* s = std::getenv("SIMTRAINER_TOL_SCALE");
  return s ? t * std::atof(s) : t;
}

// Soak runs: SIMTRAINER_FUZZ_SEED and SIMTRAINER_FUZZ_SAMPLES (like MJ_FUZZ_SEED).
std::uint32_t fuzzSeed() {
  const char* s = std::getenv("SIMTRAINER_FUZZ_SEED");
  return s ? static_cast<std::uint32_t>(std::strtoul(s, nullptr, 10)) : 20240611u;
}
int fuzzSamples() {
  const char* s = std::getenv("SIMTRAINER_FUZZ_SAMPLES");
  return s ? std::atoi(s) : 200;
}

// Step of the central differences. Their error is eps^2 |C'''| / 6 (< 1e-10 here: |v|, |w| <= 2,
// lengths <= 2, so |C'''| <= ~1e2 even for the hinge angle with c^2 + s^2 >= 0.05) plus rounding
// of C (values <= ~5, a few ulps ~ 1e-15) divided by 2 eps (~1e-9). kFdTol is 100x that sum,
// while a wrong Jacobian term (sign, arm, axis) shows up as an O(0.1..1) error.
constexpr double kEps = 1e-6;
constexpr double kFdTol = 1e-7;

/// One random moving body: pose, velocities and inverse mass properties (world frame).
struct Body {
  Vec3 x, v, w;
  Quat q;
  double inv_mass = 0.0;
  Mat3 inv_inertia_local = Mat3::Zero();

  /// Pose at time t: x + v t and the exact exponential of the world rotation vector w t.
  Body at(double t) const {
    Body b = *this;
    b.x = x + v * t;
    const double angle = w.norm() * t;
    b.q = angle == 0.0 ? q : (Quat(Eigen::AngleAxisd(angle, w.normalized())) * q).normalized();
    return b;
  }
  SolverBody solver() const {
    SolverBody s;
    s.v = v;
    s.w = w;
    s.inv_mass = inv_mass;
    const Mat3 r = q.toRotationMatrix();
    s.inv_inertia = r * inv_inertia_local * r.transpose();
    return s;
  }
};

class Random {
 public:
  explicit Random(std::uint32_t seed) : gen_(seed) {}
  double uniform(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(gen_);
  }
  Vec3 vec(double half) {
    return Vec3(uniform(-half, half), uniform(-half, half), uniform(-half, half));
  }
  Quat quat() {
    // Normalised 4D Gaussian: uniform on the unit sphere of rotations.
    std::normal_distribution<double> n(0.0, 1.0);
    Quat q(n(gen_), n(gen_), n(gen_), n(gen_));
    return q.normalized();
  }
  /// Random SPD inertia: random principal moments in [0.1, 2] in random principal axes.
  Mat3 inertia() {
    const Mat3 r = quat().toRotationMatrix();
    const Vec3 d(uniform(0.1, 2.0), uniform(0.1, 2.0), uniform(0.1, 2.0));
    return r * d.asDiagonal() * r.transpose();
  }
  Body body() {
    Body b;
    b.x = vec(1.0);
    b.q = quat();
    b.v = vec(1.0);
    b.w = vec(1.0);
    b.inv_mass = 1.0 / uniform(0.5, 5.0);
    b.inv_inertia_local = inertia().inverse();
    return b;
  }
  Frame frame() {
    Frame f;
    f.position = vec(0.5);
    f.rotation = quat();
    return f;
  }
  std::mt19937& gen() { return gen_; }

 private:
  std::mt19937 gen_;
};

JointFrames framesOf(const Body& a, const Frame& fa, const Body& b, const Frame& fb) {
  return detail::computeFrames(a.x, a.q, fa, b.x, b.q, fb);
}

/// Central difference of a position function C(a(t), b(t)) at t = 0.
template <class F>
auto centralDifference(const Body& a, const Body& b, F&& c) {
  using R = decltype(c(a, b));  // a plain value type: no Eigen expression may outlive this call
  const R plus = c(a.at(kEps), b.at(kEps));
  const R minus = c(a.at(-kEps), b.at(-kEps));
  return R((plus - minus) / (2.0 * kEps));
}

/// Shared sample of two bodies and two joint frames.
struct Sample {
  Body a, b;
  Frame fa, fb;
  SolverBody sa, sb;
  JointFrames f;
};

class JointJacobianTest : public ::testing::Test {
 protected:
  Sample next() {
    Sample s;
    s.a = rng_.body();
    s.b = rng_.body();
    s.fa = rng_.frame();
    s.fb = rng_.frame();
    s.sa = s.a.solver();
    s.sb = s.b.solver();
    s.f = framesOf(s.a, s.fa, s.b, s.fb);
    return s;
  }
  std::string where(int i) const {
    return "sample " + std::to_string(i) + " of seed " + std::to_string(seed_) +
           " (set SIMTRAINER_FUZZ_SEED to reproduce)";
  }
  std::uint32_t seed_ = fuzzSeed();
  int samples_ = fuzzSamples();
  Random rng_{seed_};
};

// C = anchor_b - anchor_a; Cdot = v_b + w_b x r_b - v_a - w_a x r_a.
TEST_F(JointJacobianTest, PointPartMatchesFiniteDifferences) {
  for (int i = 0; i < samples_; ++i) {
    const Sample s = next();
    PointPart part;
    part.setup(s.sa, s.sb, s.f.arm_a, s.f.arm_b);
    const Vec3 fd = centralDifference(s.a, s.b, [&](const Body& a, const Body& b) {
      const JointFrames f = framesOf(a, s.fa, b, s.fb);
      return Vec3(f.anchor_b - f.anchor_a);
    });
    ASSERT_LE((part.velocity(s.sa, s.sb) - fd).norm(), tol(kFdTol)) << where(i);
  }
}

// C = (a1.b2, a1.c2) with a1 on a, b2 and c2 on b; exact for any misalignment.
TEST_F(JointJacobianTest, HingeRotationPartMatchesFiniteDifferences) {
  for (int i = 0; i < samples_; ++i) {
    const Sample s = next();
    HingeRotationPart part;
    part.setup(s.sa, s.sb, s.f.axes_a.col(0), s.f.axes_b.col(1), s.f.axes_b.col(2));
    const Eigen::Vector2d fd = centralDifference(s.a, s.b, [&](const Body& a, const Body& b) {
      const JointFrames f = framesOf(a, s.fa, b, s.fb);
      const Vec3 a1 = f.axes_a.col(0);
      return Eigen::Vector2d(a1.dot(f.axes_b.col(1)), a1.dot(f.axes_b.col(2)));
    });
    ASSERT_LE((part.velocity(s.sa, s.sb) - fd).norm(), tol(kFdTol)) << where(i);
  }
}

// alpha = hingeAngle(frames); d(alpha)/dt = g.(w_b - w_a), g = hingeAngleGradient, for arbitrary
// (misaligned) frames. Samples whose b-axis n_b1 is nearly along n_a0 (c^2 + s^2 < 0.05) are
// redrawn: there alpha is ill-conditioned and the gradient deliberately falls back to n_a0.
TEST_F(JointJacobianTest, HingeAngleGradientMatchesFiniteDifferencesForMisalignedFrames) {
  int tested = 0, redrawn = 0;
  for (int i = 0; i < samples_; ++i) {
    Sample s = next();
    auto conditioning = [](const JointFrames& f) {
      const double c = f.axes_a.col(1).dot(f.axes_b.col(1));
      const double sn = f.axes_a.col(2).dot(f.axes_b.col(1));
      return c * c + sn * sn;
    };
    while (conditioning(s.f) < 0.05) {
      s = next();
      ++redrawn;
    }
    const Vec3 g = detail::hingeAngleGradient(s.f);
    AxisRow row;  // as prepare() sets up the hinge axis row
    row.setup(s.sa, s.sb, Vec3::Zero(), -g, g);
    // wrapAngle of the difference keeps the quotient right even next to the atan2 branch cut.
    const double fd =
        detail::wrapAngle(detail::hingeAngle(framesOf(s.a.at(kEps), s.fa, s.b.at(kEps), s.fb)) -
                          detail::hingeAngle(framesOf(s.a.at(-kEps), s.fa, s.b.at(-kEps), s.fb))) /
        (2.0 * kEps);
    ASSERT_NEAR(row.velocity(s.sa, s.sb), fd, tol(kFdTol)) << where(i);
    ASSERT_NEAR(g.dot(s.sb.w - s.sa.w), fd, tol(kFdTol)) << where(i);
    ++tested;
  }
  EXPECT_EQ(tested, samples_);
  EXPECT_LT(redrawn, samples_);  // the conditioning filter leaves most random poses alone
}

// On an assembled hinge (frames coincide up to a rotation about the axis) the gradient is n_a0
// and alpha is the rotation angle, including angles next to the +-pi branch cut.
TEST_F(JointJacobianTest, HingeAngleOnAssembledHingeIsTheRotationAboutTheAxis) {
  for (int i = 0; i < samples_; ++i) {
    const Sample s = next();
    const double alpha = rng_.uniform(-std::numbers::pi + 1e-3, std::numbers::pi - 1e-3);
    // Choose b's frame so that its world axes are a's turned by alpha about n_a0.
    const Quat world_a = s.a.q * s.fa.rotation;
    const Quat world_b = world_a * Quat(Eigen::AngleAxisd(alpha, Vec3::UnitX()));
    Frame fb = s.fb;
    fb.rotation = (s.b.q.conjugate() * world_b).normalized();
    const JointFrames f = framesOf(s.a, s.fa, s.b, fb);
    ASSERT_NEAR(detail::hingeAngle(f), alpha, 1e-12) << where(i);
    ASSERT_LE((detail::hingeAngleGradient(f) - f.axes_a.col(0)).norm(), 1e-12) << where(i);
  }
}

// wrapAngle takes an angle to (-pi, pi] by the IEEE remainder over 2 pi, and returns an angle
// already inside (-pi, pi) without computing it: the same bits either way, the sign of a zero
// included, next to the ends of the range and far from it.
TEST(JointGeometry, WrapAngleIsTheRemainderByTwoPiBitForBit) {
  constexpr double kPi = std::numbers::pi, kTwoPi = 2.0 * std::numbers::pi;
  const auto reference = [&](double a) {
    a = std::remainder(a, kTwoPi);
    return a <= -kPi ? a + kTwoPi : a;
  };
  std::vector<double> angles = {0.0,
                                1e-300,
                                0.5,
                                3.0,
                                std::nextafter(kPi, 0.0),
                                kPi,
                                std::nextafter(kPi, 4.0),
                                kTwoPi,
                                7.0,
                                1e6,
                                std::numeric_limits<double>::infinity()};
  for (std::size_t i = 0, n = angles.size(); i < n; ++i) angles.push_back(-angles[i]);
  for (const double a : angles) {
    const double wrapped = detail::wrapAngle(a);
    const double expected = reference(a);
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(wrapped)) << a;
      continue;
    }
    EXPECT_EQ(wrapped, expected) << a;
    EXPECT_EQ(std::signbit(wrapped), std::signbit(expected)) << a;
    EXPECT_GT(wrapped, -kPi) << a;
    EXPECT_LE(wrapped, kPi) << a;
  }
}

// Prismatic: line rows C_k = d.n_k (n_k fixed on a, so it turns with a) and the axis row d.n0,
// set up exactly as prepare() does.
TEST_F(JointJacobianTest, PrismaticRowsMatchFiniteDifferences) {
  for (int i = 0; i < samples_; ++i) {
    const Sample s = next();
    const Vec3 d = s.f.anchor_b - s.f.anchor_a;
    LineRows line;
    line.setup(s.sa, s.sb, s.f.arm_a, s.f.arm_b, d, s.f.axes_a.col(1), s.f.axes_a.col(2));
    const Vec3 n = s.f.axes_a.col(0);
    AxisRow axis;
    axis.setup(s.sa, s.sb, n, -(s.f.arm_a + d).cross(n), s.f.arm_b.cross(n));
    const Vec3 fd = centralDifference(s.a, s.b, [&](const Body& a, const Body& b) {
      const JointFrames f = framesOf(a, s.fa, b, s.fb);
      const Vec3 dd = f.anchor_b - f.anchor_a;
      return Vec3(dd.dot(f.axes_a.col(0)), dd.dot(f.axes_a.col(1)), dd.dot(f.axes_a.col(2)));
    });
    ASSERT_NEAR(axis.velocity(s.sa, s.sb), fd.x(), tol(kFdTol)) << where(i);
    ASSERT_NEAR(line.row1.velocity(s.sa, s.sb), fd.y(), tol(kFdTol)) << where(i);
    ASSERT_NEAR(line.row2.velocity(s.sa, s.sb), fd.z(), tol(kFdTol)) << where(i);
    // The axis row is the prismatic coordinate's derivative.
    const double fd_s = centralDifference(s.a, s.b, [&](const Body& a, const Body& b) {
      return detail::prismaticPosition(framesOf(a, s.fa, b, s.fb));
    });
    ASSERT_NEAR(axis.velocity(s.sa, s.sb), fd_s, tol(kFdTol)) << where(i);
  }
}

/// Rotation vector taking orientation qa to qb, shortest way (the fixed joint's position error,
/// as solvePosition computes it).
Vec3 rotationError(const Quat& qa, const Quat& qb) {
  Quat e = qb * qa.conjugate();
  if (e.w() < 0.0) e.coeffs() = -e.coeffs();
  return 2.0 * e.vec();
}

// Fixed joint rotation rows: Cdot = w_b - w_a is the derivative of the rotation error only at
// zero error; away from it the two differ by O(|error| |w_a + w_b|).
TEST_F(JointJacobianTest, FixedRotationRowsMatchFiniteDifferencesNearAlignment) {
  for (int i = 0; i < samples_; ++i) {
    const Sample s = next();
    const double misalignment = i % 2 == 0 ? 0.0 : 1e-4;
    const Quat world_a = s.a.q * s.fa.rotation;
    const Quat world_b =
        Quat(Eigen::AngleAxisd(misalignment, rng_.vec(1.0).normalized())) * world_a;
    Frame fb = s.fb;
    fb.rotation = (s.b.q.conjugate() * world_b).normalized();
    const Vec3 fd = centralDifference(s.a, s.b, [&](const Body& a, const Body& b) {
      return rotationError(a.q * s.fa.rotation, b.q * fb.rotation);
    });
    const Vec3 dw = s.sb.w - s.sa.w;
    // With E = q_b q_a^-1 = (cos, e/2 + O(e^3)) and world-frame rates, dE/dt = (w_b E - E w_a) / 2
    // gives de/dt = (w_b - w_a) + (w_a + w_b) x e / 2 + O(e^2): bound the extra term by twice
    // its size.
    const double allowed = kFdTol + misalignment * (s.sa.w + s.sb.w).norm();
    ASSERT_LE((dw - fd).norm(), tol(allowed)) << where(i) << " misalignment " << misalignment;
  }
}

// Motor coupling C = alpha - a_m / r: the block row is the hinge axis row plus rotor_coef = -1/r
// on the rotor speed (simulator.cpp buildBlocks).
TEST_F(JointJacobianTest, MotorCouplingRowMatchesFiniteDifferences) {
  for (int i = 0; i < samples_; ++i) {
    Sample s = next();
    // An assembled hinge with a random angle and a small random misalignment.
    const double alpha = rng_.uniform(-3.0, 3.0);
    const Quat world_a = s.a.q * s.fa.rotation;
    const Quat world_b = Quat(Eigen::AngleAxisd(0.05, rng_.vec(1.0).normalized())) * world_a *
                         Quat(Eigen::AngleAxisd(alpha, Vec3::UnitX()));
    s.fb.rotation = (s.b.q.conjugate() * world_b).normalized();
    s.f = framesOf(s.a, s.fa, s.b, s.fb);
    const double r = rng_.uniform(1.0, 100.0);
    const double rotor_speed = rng_.uniform(-100.0, 100.0);
    const double rotor_angle = rng_.uniform(-100.0, 100.0);

    std::vector<SolverBody> bodies{s.sa, s.sb};
    const Vec3 g = detail::hingeAngleGradient(s.f);
    AxisRow ax;
    ax.setup(bodies[0], bodies[1], Vec3::Zero(), -g, g);
    RowBlock block;
    detail::BlockRow& c = block.add(bodies, 0, 1, detail::Row{-ax.lin, ax.ang_a, ax.lin, ax.ang_b},
                                    detail::ImpulseSink::MotorCoupling, 0);
    c.rotor = 0;
    c.rotor_coef = -1.0 / r;
    const double cdot = c.lin_a.dot(s.sa.v) + c.ang_a.dot(s.sa.w) + c.lin_b.dot(s.sb.v) +
                        c.ang_b.dot(s.sb.w) + c.rotor_coef * rotor_speed;
    auto position = [&](double t) {
      const double q = detail::hingeAngle(framesOf(s.a.at(t), s.fa, s.b.at(t), s.fb));
      return detail::wrapAngle(q - alpha) - (rotor_angle + rotor_speed * t) / r;
    };
    const double fd = (position(kEps) - position(-kEps)) / (2.0 * kEps);
    // rotor_angle / r <= 100 adds its rounding (~1e-14) / 2 eps ~ 1e-8 to the quotient.
    ASSERT_NEAR(cdot, fd, tol(kFdTol)) << where(i);
  }
}

/// Second central difference of C(a(t), b(t)) at t = 0: with constant v and w it is exactly the
/// velocity-quadratic part of C''. Step 1e-4: rounding ~4 ulps of |C| <= 5 over eps^2 (~5e-7)
/// plus truncation eps^2 |C''''| / 12 (< 1e-7) stays well below kCurvatureTol.
constexpr double kEps2 = 1e-4;
constexpr double kCurvatureTol = 5e-6;
template <class F>
auto secondDifference(const Body& a, const Body& b, F&& c) {
  using R = decltype(c(a, b));
  const R plus = c(a.at(kEps2), b.at(kEps2));
  const R mid = c(a, b);
  const R minus = c(a.at(-kEps2), b.at(-kEps2));
  return R((plus - 2.0 * mid + minus) / (kEps2 * kEps2));
}

// Curvature targets: bias = -(h/2) * (velocity-quadratic part of C''), checked with h = 1.
TEST_F(JointJacobianTest, CurvatureTargetsMatchSecondDifferences) {
  for (int i = 0; i < samples_; ++i) {
    const Sample s = next();
    PointPart point;
    point.setup(s.sa, s.sb, s.f.arm_a, s.f.arm_b);
    point.setCurvatureTarget(s.sa, s.sb, 1.0);
    const Vec3 dd_point = secondDifference(s.a, s.b, [&](const Body& a, const Body& b) {
      const JointFrames f = framesOf(a, s.fa, b, s.fb);
      return Vec3(f.anchor_b - f.anchor_a);
    });
    ASSERT_LE((point.bias + 0.5 * dd_point).norm(), tol(kCurvatureTol)) << where(i);

    const Vec3 a1 = s.f.axes_a.col(0), b2 = s.f.axes_b.col(1), c2 = s.f.axes_b.col(2);
    HingeRotationPart hinge;
    hinge.setup(s.sa, s.sb, a1, b2, c2);
    hinge.setCurvatureTarget(s.sa, s.sb, a1, b2, c2, 1.0);
    const Eigen::Vector2d dd_hinge = secondDifference(s.a, s.b, [&](const Body& a, const Body& b) {
      const JointFrames f = framesOf(a, s.fa, b, s.fb);
      const Vec3 x = f.axes_a.col(0);
      return Eigen::Vector2d(x.dot(f.axes_b.col(1)), x.dot(f.axes_b.col(2)));
    });
    ASSERT_LE((hinge.bias + 0.5 * dd_hinge).norm(), tol(kCurvatureTol)) << where(i);
  }
}

/// Condition number of a small SPD effective-mass matrix given its inverse.
template <class M>
double conditionOf(const M& k_inv) {
  const auto sv = k_inv.jacobiSvd().singularValues();
  return sv(0) / sv(sv.size() - 1);
}

// The effective masses of the scalar parts: one solve with k_inv zeroes the part's velocity, to
// rounding (1e-13: a few ulps of the summed terms) amplified by cond(K) (badly misaligned random
// hinges make K nearly singular).
TEST_F(JointJacobianTest, PartEffectiveMassesZeroTheVelocityInOneSolve) {
  for (int i = 0; i < samples_; ++i) {
    const Sample s = next();
    {
      PointPart part;
      part.setup(s.sa, s.sb, s.f.arm_a, s.f.arm_b);
      SolverBody a = s.sa, b = s.sb;
      part.apply(a, b, -(part.k_inv * part.velocity(a, b)));
      ASSERT_LE(part.velocity(a, b).norm(),
                1e-13 * conditionOf(part.k_inv) * (1.0 + part.velocity(s.sa, s.sb).norm()))
          << where(i);
    }
    {
      HingeRotationPart part;
      part.setup(s.sa, s.sb, s.f.axes_a.col(0), s.f.axes_b.col(1), s.f.axes_b.col(2));
      SolverBody a = s.sa, b = s.sb;
      const Eigen::Vector2d lam = -(part.k_inv * part.velocity(a, b));
      HingeRotationPart::applyAngular(a, b, part.u1 * lam.x() + part.u2 * lam.y());
      ASSERT_LE(part.velocity(a, b).norm(),
                1e-13 * conditionOf(part.k_inv) * (1.0 + part.velocity(s.sa, s.sb).norm()))
          << where(i);
    }
    {
      RotationPart part;
      part.setup(s.sa, s.sb);
      SolverBody a = s.sa, b = s.sb;
      HingeRotationPart::applyAngular(a, b, -(part.k_inv * (b.w - a.w)));
      ASSERT_LE((b.w - a.w).norm(),
                1e-13 * conditionOf(part.k_inv) * (1.0 + (s.sb.w - s.sa.w).norm()))
          << where(i);
    }
    {
      LineRows line;
      const Vec3 d = s.f.anchor_b - s.f.anchor_a;
      line.setup(s.sa, s.sb, s.f.arm_a, s.f.arm_b, d, s.f.axes_a.col(1), s.f.axes_a.col(2));
      SolverBody a = s.sa, b = s.sb;
      const Eigen::Vector2d cdot(line.row1.velocity(a, b), line.row2.velocity(a, b));
      const Eigen::Vector2d lam = -(line.k_inv * cdot);
      line.row1.apply(a, b, lam.x());
      line.row2.apply(a, b, lam.y());
      const Eigen::Vector2d after(line.row1.velocity(a, b), line.row2.velocity(a, b));
      ASSERT_LE(after.norm(), 1e-13 * conditionOf(line.k_inv) * (1.0 + cdot.norm())) << where(i);
    }
  }
}

// RowBlock: K assembled from the rows equals a dense J M^-1 J^T (+ compliance), and one solve
// drives every row to its target: Cdot_i + compliance_i delta_i = 0.
TEST_F(JointJacobianTest, RowBlockAssemblesJMinvJtAndSolvesTheRows) {
  constexpr int kBodies = 4;  // three dynamic bodies and a static world (index 3)
  constexpr int kWorldBody = 3;
  for (int i = 0; i < samples_; ++i) {
    std::vector<Body> random;
    std::vector<SolverBody> bodies;
    for (int k = 0; k < kBodies; ++k) {
      random.push_back(rng_.body());
      bodies.push_back(random.back().solver());
    }
    bodies[kWorldBody] = SolverBody{};  // world: no velocity, infinite mass
    const double rotor_inv_inertia = 1.0 / rng_.uniform(1e-3, 1e-1);
    const double r = rng_.uniform(1.0, 100.0);
    double rotor_speed = rng_.uniform(-50.0, 50.0);

    const Frame fa = rng_.frame(), fb = rng_.frame();
    const JointFrames f = framesOf(random[0], fa, random[1], fb);  // hinge between bodies 0 and 1
    RowBlock block;
    using detail::ImpulseSink;
    const Vec3 zero = Vec3::Zero();
    // Motor characteristic: soft row on the rotor alone.
    {
      detail::BlockRow& ch =
          block.add(bodies, kWorldBody, kWorldBody, detail::Row{zero, zero, zero, zero},
                    ImpulseSink::MotorCharacteristic, 0);
      ch.rotor = 0;
      ch.rotor_coef = 1.0;
      ch.rotor_dw = rotor_inv_inertia;
      ch.compliance = 1.0 / rng_.uniform(0.01, 1.0);
    }
    // Hinge point and rotation rows between 0 and 1, as addJointRows builds them.
    for (int k = 0; k < 3; ++k) {
      const Vec3 e = Vec3::Unit(k);
      block.add(bodies, 0, 1, detail::Row{-e, -f.arm_a.cross(e), e, f.arm_b.cross(e)},
                ImpulseSink::JointLinear, 0);
    }
    HingeRotationPart hr;
    hr.setup(bodies[0], bodies[1], f.axes_a.col(0), f.axes_b.col(1), f.axes_b.col(2));
    for (const Vec3& u : {hr.u1, hr.u2})
      block.add(bodies, 0, 1, detail::Row{zero, -u, zero, u}, ImpulseSink::JointAngular, 0);
    // Motor coupling on the hinge axis.
    {
      const Vec3 g = detail::hingeAngleGradient(f);
      detail::BlockRow& c =
          block.add(bodies, 0, 1, detail::Row{zero, -g, zero, g}, ImpulseSink::MotorCoupling, 0);
      c.rotor = 0;
      c.rotor_coef = -1.0 / r;
      c.rotor_dw = -rotor_inv_inertia / r;
    }
    // A prismatic line row between 1 and 2, and a world-anchored point row on body 2.
    {
      const JointFrames p = framesOf(random[1], fa, random[2], fb);
      const Vec3 d = p.anchor_b - p.anchor_a;
      LineRows line;
      line.setup(bodies[1], bodies[2], p.arm_a, p.arm_b, d, p.axes_a.col(1), p.axes_a.col(2));
      block.add(bodies, 1, 2,
                detail::Row{-line.row1.lin, line.row1.ang_a, line.row1.lin, line.row1.ang_b},
                ImpulseSink::JointLinear, 1);
      const Vec3 arm = rng_.vec(0.5);
      block.add(bodies, kWorldBody, 2,
                detail::Row{-Vec3::UnitZ(), zero, Vec3::UnitZ(), arm.cross(Vec3::UnitZ())},
                ImpulseSink::JointLinear, 2);
    }
    block.order();
    block.assemble({rotor_inv_inertia});
    block.factor();
    const auto n = static_cast<Eigen::Index>(block.rows.size());

    // Dense J (rows x [v0 w0 v1 w1 v2 w2 v3 w3 rotor]) and M^-1.
    const Eigen::Index dofs = 6 * kBodies + 1;
    Eigen::MatrixXd J = Eigen::MatrixXd::Zero(n, dofs);
    Eigen::MatrixXd Minv = Eigen::MatrixXd::Zero(dofs, dofs);
    for (int k = 0; k < kBodies; ++k) {
      Minv.block<3, 3>(6 * k, 6 * k) = Mat3::Identity() * bodies[k].inv_mass;
      Minv.block<3, 3>(6 * k + 3, 6 * k + 3) = bodies[k].inv_inertia;
    }
    Minv(dofs - 1, dofs - 1) = rotor_inv_inertia;
    Eigen::VectorXd compliance = Eigen::VectorXd::Zero(n);
    for (Eigen::Index row = 0; row < n; ++row) {
      const detail::BlockRow& br = block.rows[row];
      J.block<1, 3>(row, 6 * br.a) += br.lin_a.transpose();
      J.block<1, 3>(row, 6 * br.a + 3) += br.ang_a.transpose();
      J.block<1, 3>(row, 6 * br.b) += br.lin_b.transpose();
      J.block<1, 3>(row, 6 * br.b + 3) += br.ang_b.transpose();
      if (br.rotor >= 0) J(row, dofs - 1) = br.rotor_coef;
      compliance[row] = br.compliance;
    }
    Eigen::MatrixXd K = J * Minv * J.transpose();
    K.diagonal() += compliance;
    // Rows with nothing to move (both sides static, no rotor) get K_ii = 1; none here.
    ASSERT_LE((block.k_full - K).cwiseAbs().maxCoeff(), 1e-12 * K.cwiseAbs().maxCoeff())
        << where(i);

    // One block solve, applied by hand as solveBlock does.
    auto rowVelocity = [&](const detail::BlockRow& br) {
      double c = br.lin_a.dot(bodies[br.a].v) + br.ang_a.dot(bodies[br.a].w) +
                 br.lin_b.dot(bodies[br.b].v) + br.ang_b.dot(bodies[br.b].w);
      if (br.rotor >= 0) c += br.rotor_coef * rotor_speed;
      return c;
    };
    double scale = 0.0;
    for (Eigen::Index row = 0; row < n; ++row) {
      block.residual[row] = -rowVelocity(block.rows[row]);
      scale = std::max(scale, std::abs(block.residual[row]));
    }
    block.ldlt.solve(block.residual, block.delta);
    for (Eigen::Index row = 0; row < n; ++row) {
      const detail::BlockRow& br = block.rows[row];
      const double d = block.delta[row];
      bodies[br.a].v += d * br.dv_a;
      bodies[br.a].w += d * br.dw_a;
      bodies[br.b].v += d * br.dv_b;
      bodies[br.b].w += d * br.dw_b;
      if (br.rotor >= 0) rotor_speed += d * br.rotor_dw;
    }
    // The world row pair (a == b == world) must not have moved the world.
    ASSERT_EQ(bodies[kWorldBody].v, Vec3::Zero());
    ASSERT_EQ(bodies[kWorldBody].w, Vec3::Zero());
    // Solve accuracy is cond(K) * 1e-16 relative; random well-separated rows keep cond(K) far
    // below 1e6, so 1e-9 of the initial velocity scale leaves a wide margin.
    for (Eigen::Index row = 0; row < n; ++row) {
      const double left = rowVelocity(block.rows[row]) + compliance[row] * block.delta[row];
      ASSERT_NEAR(left, 0.0, tol(1e-9) * (1.0 + scale)) << where(i) << " row " << row;
    }
  }
}

// RowBlock's ordered factor against dense Eigen on the same K: rows added in a mixed order (motors
// first, a limit between equality rows) are put in the order equalities, motors, unilateral (rows
// of different joints touch different bodies, so rows start at different columns: the envelope
// the factor and solves skip is exercised); the
// motors' constrained mobility read off the partial factor equals K_ii - K_iH K_HH^-1 K_Hi over
// the equality rows H; the finished factor solves K (inactive rows as identity, the relative
// 1e-12 regularisation) as a dense LDLT does; after an active-set change, refactoring only the
// unilateral rows gives the new K's solution.
TEST_F(JointJacobianTest, RowBlockOrderedFactorMatchesDenseSolves) {
  constexpr int kWorldBody = 3;
  using detail::ImpulseSink;
  for (int i = 0; i < samples_; ++i) {
    std::vector<SolverBody> bodies;
    for (int k = 0; k < 3; ++k) bodies.push_back(rng_.body().solver());
    bodies.push_back(SolverBody{});  // world
    const std::vector<double> rotor_inv_inertia{1.0 / rng_.uniform(1e-3, 1e-1),
                                                1.0 / rng_.uniform(1e-3, 1e-1)};
    RowBlock block;
    auto randomRow = [&](int a, int b, ImpulseSink sink) -> detail::BlockRow& {
      return block.add(bodies, a, b,
                       detail::Row{rng_.vec(1.0), rng_.vec(1.0), rng_.vec(1.0), rng_.vec(1.0)},
                       sink, 0);
    };
    auto motorRow = [&](int rotor) {
      detail::BlockRow& ch = block.add(bodies, kWorldBody, kWorldBody, detail::Row{},
                                       ImpulseSink::MotorCharacteristic, rotor);
      ch.rotor = rotor;
      ch.rotor_coef = 1.0;
      ch.rotor_dw = rotor_inv_inertia[static_cast<std::size_t>(rotor)];
    };
    auto limitRow = [&](int a, int b, bool active) {
      detail::BlockRow& l = randomRow(a, b, ImpulseSink::JointLimit);
      l.bounded = true;
      l.active = active;
    };
    motorRow(0);
    for (int k = 0; k < 4; ++k) randomRow(0, 1, ImpulseSink::JointLinear);
    limitRow(0, 1, true);
    for (int k = 0; k < 4; ++k) randomRow(1, 2, ImpulseSink::JointLinear);
    motorRow(1);
    randomRow(kWorldBody, 0, ImpulseSink::JointLinear);
    for (int rotor = 0; rotor < 2; ++rotor) {  // couplings of the two rotors
      detail::BlockRow& c = randomRow(rotor, rotor + 1, ImpulseSink::MotorCoupling);
      c.rotor = rotor;
      c.rotor_coef = -rng_.uniform(1.0, 100.0);
      c.rotor_dw = c.rotor_coef * rotor_inv_inertia[static_cast<std::size_t>(rotor)];
    }
    limitRow(1, 2, false);
    limitRow(kWorldBody, 2, true);

    block.order();
    const auto n = static_cast<Eigen::Index>(block.rows.size());
    ASSERT_EQ(block.first_motor, 11) << where(i);
    ASSERT_EQ(block.first_bounded, 13) << where(i);
    for (Eigen::Index r = 0; r < n; ++r) {
      const bool motor = block.rows[r].sink == ImpulseSink::MotorCharacteristic;
      ASSERT_EQ(motor, r >= block.first_motor && r < block.first_bounded) << where(i);
      ASSERT_EQ(block.rows[r].bounded, r >= block.first_bounded) << where(i);
    }
    block.assemble(rotor_inv_inertia);
    block.factorEqualities();
    const Eigen::Index nh = block.first_motor;
    const Eigen::MatrixXd khh = block.k_full.topLeftCorner(nh, nh);
    for (Eigen::Index m = block.first_motor; m < block.first_bounded; ++m) {
      const Eigen::VectorXd khi = block.k_full.col(m).head(nh);
      const double dense = block.k_full(m, m) - khi.dot(khh.ldlt().solve(khi));
      // Relative 1e-12 on K_HH shifts the Schur complement by ~1e-12 K_ii; cond(K_HH) of random
      // rows stays far below 1e4, so 1e-8 of K_ii leaves a wide margin.
      ASSERT_NEAR(block.constrainedMobility(m), dense, tol(1e-8) * block.k_full(m, m))
          << where(i) << " motor row " << m;
      block.addMotorCompliance(m, 1.0 / rng_.uniform(0.01, 1.0));
    }
    block.factorMotorsAndLimits();

    auto denseK = [&]() {
      Eigen::MatrixXd k = block.k_full;
      for (Eigen::Index r = 0; r < n; ++r) {
        if (block.rows[r].active) {
          k(r, r) *= 1.0 + 1e-12;
          continue;
        }
        k.row(r).setZero();
        k.col(r).setZero();
        k(r, r) = 1.0;
      }
      return k;
    };
    auto expectSolves = [&](const char* when) {
      const Eigen::MatrixXd k = denseK();
      const Eigen::VectorXd b = Eigen::VectorXd::Random(n);
      Eigen::VectorXd x;
      block.ldlt.solve(b, x);
      const Eigen::VectorXd reference = k.ldlt().solve(b);
      // Both are backward stable: they agree to ~cond(K) 1e-16 relative.
      ASSERT_LE((x - reference).norm(), tol(1e-7) * reference.norm()) << where(i) << " " << when;
      ASSERT_LE((k * x - b).norm(), tol(1e-7) * (k.norm() * x.norm() + b.norm()))
          << where(i) << " " << when;
      // The blocked solve of the link responses (6 right-hand sides at once).
      const Eigen::MatrixXd rhs = Eigen::MatrixXd::Random(n, 6);
      Eigen::Matrix<double, Eigen::Dynamic, 6, Eigen::RowMajor> many = rhs;
      block.ldlt.solveInPlace<6>(many);
      const Eigen::MatrixXd many_reference = k.ldlt().solve(rhs);
      ASSERT_LE((Eigen::MatrixXd(many) - many_reference).norm(), tol(1e-7) * many_reference.norm())
          << where(i) << " " << when;
    };
    expectSolves("after the full factor");
    for (Eigen::Index r = block.first_bounded; r < n; ++r)
      block.rows[r].active = !block.rows[r].active;
    block.factorBounded();
    expectSolves("after the active set changed");
  }
}

}  // namespace
}  // namespace sim::dynamics
