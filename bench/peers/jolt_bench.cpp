// Jolt Physics (built from source, see README "Jolt") benchmarks for S1..S4.
//
// Copy of ../shared/peers/src/jolt_bench.cpp with one change (this project's bench/peers): the
// environment variable PEERS_JOLT_THREADS=N (N > 1) runs Jolt with a JobSystemThreadPool of N - 1
// workers beside the calling thread (N threads in all, as Jolt's samples do), and the engine label
// ends in "-Nthreads". Without it the job system is JobSystemSingleThreaded, as in the original.
//
//  * one PhysicsSystem per run, JobSystemSingleThreaded (no worker threads), one collision step
//    per Update, single precision (float), SI solver with PhysicsSettings::mNumVelocitySteps /
//    mNumPositionSteps (Jolt defaults 10 / 2 unless a variant says otherwise)
//  * every dynamic body: linear/angular damping 0 (Jolt default 0.05), max angular velocity 1e4
//    (default 15 pi rad/s), sleeping off except in the "sleeping-on(default)" S3 variant
//  * bodies that must not collide (S1, S2, the S4 base) live in an object layer that collides
//    with nothing and in their own broad-phase layer that no layer queries
//  * friction: Jolt combines sqrt(mu1 mu2), so every body gets mu itself
//  * BoxShape convex radius = 10 % of the smallest half extent (Jolt's default 0.05 m would make
//    the 0.1 m S4 box a sphere for GJK and is not allowed for the 0.02 m jaws)
// The driver must be compiled with the Jolt library's public definitions/options (JPH_USE_AVX2 ...)
// and -fno-rtti; CMakeLists.txt takes both from the Jolt target.
#include <Jolt/Jolt.h>

#include <Jolt/ConfigurationString.h>
#include <Jolt/Core/Factory.h>
#include <Jolt/Core/JobSystemSingleThreaded.h>
#include <Jolt/Core/JobSystemThreadPool.h>
#include <Jolt/Core/TempAllocator.h>
#include <Jolt/Physics/Body/BodyCreationSettings.h>
#include <Jolt/Physics/Collision/CollideShape.h>
#include <Jolt/Physics/Collision/CollisionCollectorImpl.h>
#include <Jolt/Physics/Collision/ContactListener.h>
#include <Jolt/Physics/Collision/ManifoldBetweenTwoFaces.h>
#include <Jolt/Physics/Collision/NarrowPhaseQuery.h>
#include <Jolt/Physics/Collision/Shape/BoxShape.h>
#include <Jolt/Physics/Collision/Shape/PlaneShape.h>
#include <Jolt/Physics/Collision/Shape/SphereShape.h>
#include <Jolt/Physics/Constraints/GearConstraint.h>
#include <Jolt/Physics/Constraints/HingeConstraint.h>
#include <Jolt/Physics/PhysicsSettings.h>
#include <Jolt/Physics/PhysicsSystem.h>
#include <Jolt/RegisterTypes.h>

#include <memory>

#include "common.h"

using peers::Args;
using peers::Budget;
using peers::ChainSpec;
using peers::emit;
using peers::GripResult;
using peers::GripSpec;
using peers::median;
using peers::MotorCase;
using peers::note;
using peers::now_s;
using peers::PileResult;
using peers::PileSpec;
using peers::S1Link;

namespace J = JPH;

#ifndef PEERS_JOLT_TAG
#define PEERS_JOLT_TAG ""
#endif

static int threads() {
  const char* n = std::getenv("PEERS_JOLT_THREADS");
  return n ? std::max(1, std::atoi(n)) : 1;
}

static std::string engine_name() {
  std::string s = "jolt-" + std::to_string(JPH_VERSION_MAJOR) + "." +
                  std::to_string(JPH_VERSION_MINOR) + "." + std::to_string(JPH_VERSION_PATCH);
  if (*PEERS_JOLT_TAG) s += std::string("+") + PEERS_JOLT_TAG;
#if defined(JPH_USE_AVX2)
  s += "-avx2";
#elif defined(JPH_USE_SSE4_2)
  s += "-sse4.2";
#else
  s += "-sse2";
#endif
  if (threads() > 1) s += "-" + std::to_string(threads()) + "threads";
  return s;
}
static const std::string kEng = engine_name();

// ------------------------------------------------------------------------------- layers
namespace Layers {
constexpr J::ObjectLayer STATIC = 0, MOVING = 1, NOCOLLIDE = 2, NUM = 3;
}

class BPLayers final : public J::BroadPhaseLayerInterface {
 public:
  J::uint GetNumBroadPhaseLayers() const override { return Layers::NUM; }
  // one broad-phase layer per object layer
  J::BroadPhaseLayer GetBroadPhaseLayer(J::ObjectLayer l) const override {
    return J::BroadPhaseLayer(J::BroadPhaseLayer::Type(l));
  }
#if defined(JPH_EXTERNAL_PROFILE) || defined(JPH_PROFILE_ENABLED)
  const char* GetBroadPhaseLayerName(J::BroadPhaseLayer l) const override {
    static const char* n[] = {"STATIC", "MOVING", "NOCOLLIDE"};
    return n[J::BroadPhaseLayer::Type(l)];
  }
#endif
};

class ObjVsBP final : public J::ObjectVsBroadPhaseLayerFilter {
 public:
  bool ShouldCollide(J::ObjectLayer o, J::BroadPhaseLayer b) const override {
    const auto bl = J::BroadPhaseLayer::Type(b);
    if (o == Layers::STATIC) return bl == Layers::MOVING;
    if (o == Layers::MOVING) return bl == Layers::STATIC || bl == Layers::MOVING;
    return false;  // NOCOLLIDE queries nothing
  }
};

class ObjPair final : public J::ObjectLayerPairFilter {
 public:
  bool ShouldCollide(J::ObjectLayer a, J::ObjectLayer b) const override {
    if (a == Layers::NOCOLLIDE || b == Layers::NOCOLLIDE) return false;
    return a == Layers::MOVING || b == Layers::MOVING;
  }
};

// ------------------------------------------------------------------------------- world
static J::TempAllocator* gTemp = nullptr;
static J::JobSystem* gJobs = nullptr;

static J::PhysicsSettings settings(int vel_steps, int pos_steps, bool allow_sleep = false,
                                   bool split = true) {
  J::PhysicsSettings s;  // Jolt defaults otherwise
  s.mNumVelocitySteps = vel_steps;
  s.mNumPositionSteps = pos_steps;
  s.mAllowSleeping = allow_sleep;
  s.mUseLargeIslandSplitter = split;  // default true (splits islands with > 128 constraints into
                                      // batches for parallel solving, even with one thread)
  return s;
}
static std::string solver_tag(int vel, int pos) {
  return "SI-" + std::to_string(vel) + "vel-" + std::to_string(pos) + "pos";
}

struct World {
  BPLayers bpl;
  ObjVsBP ovb;
  ObjPair op;
  J::PhysicsSystem ps;
  J::BodyInterface* bi = nullptr;
  std::vector<J::Ref<J::Constraint>> cons;

  World(J::Vec3 g, const J::PhysicsSettings& s, J::uint max_bodies = 4096) {
    ps.Init(max_bodies, 0, 65536, 65536, bpl, ovb, op);
    ps.SetPhysicsSettings(s);
    ps.SetGravity(g);
    bi = &ps.GetBodyInterfaceNoLock();  // single-threaded use only
  }
  J::Body* add(const J::BodyCreationSettings& bcs) {
    J::Body* b = bi->CreateBody(bcs);
    if (!b) {
      note("jolt: body allocation failed");
      std::exit(1);
    }
    bi->AddBody(b->GetID(), bcs.mMotionType == J::EMotionType::Static ? J::EActivation::DontActivate
                                                                      : J::EActivation::Activate);
    return b;
  }
  template <class C>
  C* add(const J::TwoBodyConstraintSettings& s, J::Body& a, J::Body& b) {
    J::TwoBodyConstraint* c = s.Create(a, b);
    cons.emplace_back(c);
    ps.AddConstraint(c);
    return static_cast<C*>(c);
  }
  void step(double dt) {
    J::EPhysicsUpdateError e = ps.Update(float(dt), 1, gTemp, gJobs);
    if (e != J::EPhysicsUpdateError::None) {
      static bool once = false;
      if (!once) note("jolt: PhysicsSystem::Update error flags 0x%x", unsigned(e));
      once = true;
    }
  }
};

static J::Vec3 V(double x, double y, double z) {
  return J::Vec3(float(x), float(y), float(z));
}
static J::RVec3 P(double x, double y, double z) {
  return J::RVec3(J::Real(x), J::Real(y), J::Real(z));
}

static J::Vec3 box_inertia(double m, double hx, double hy, double hz) {
  const double a = 2 * hx, b = 2 * hy, c = 2 * hz;
  return V(m / 12 * (b * b + c * c), m / 12 * (a * a + c * c), m / 12 * (a * a + b * b));
}
static J::RefConst<J::Shape> box_shape(double hx, double hy, double hz) {
  const double r = 0.1 * std::min(hx, std::min(hy, hz));
  return new J::BoxShape(V(hx, hy, hz), float(r));
}
static J::RefConst<J::Shape> ground_shape() {
  return new J::PlaneShape(J::Plane(J::Vec3::sAxisZ(), 0.0f));
}

// Dynamic body with explicit mass and principal inertia (body frame = COM frame).
static J::BodyCreationSettings dyn(const J::Shape* s, J::RVec3 pos, J::Quat rot,
                                   J::ObjectLayer layer, double mass, J::Vec3 inertia,
                                   double mu = 0.2, bool sleep = false) {
  J::BodyCreationSettings b(s, pos, rot, J::EMotionType::Dynamic, layer);
  b.mOverrideMassProperties = J::EOverrideMassProperties::MassAndInertiaProvided;
  b.mMassPropertiesOverride.mMass = float(mass);
  b.mMassPropertiesOverride.mInertia = J::Mat44::sScale(inertia);
  b.mLinearDamping = 0;
  b.mAngularDamping = 0;
  b.mMaxAngularVelocity = 1e4f;
  b.mAllowSleeping = sleep;
  b.mFriction = float(mu);
  b.mRestitution = 0;
  return b;
}
static J::BodyCreationSettings fixed(const J::Shape* s, double mu) {
  J::BodyCreationSettings b(s, P(0, 0, 0), J::Quat::sIdentity(), J::EMotionType::Static,
                            Layers::STATIC);
  b.mFriction = float(mu);
  b.mRestitution = 0;
  return b;
}
// Revolute joint in world space; the hinge angle is 0 in the initial configuration and measured
// as the rotation of body 2 relative to body 1 about `axis`.
static J::HingeConstraintSettings hinge(J::RVec3 point, J::Vec3 axis, J::Vec3 normal) {
  J::HingeConstraintSettings h;
  h.mSpace = J::EConstraintSpace::WorldSpace;
  h.mPoint1 = h.mPoint2 = point;
  h.mHingeAxis1 = h.mHingeAxis2 = axis;
  h.mNormalAxis1 = h.mNormalAxis2 = normal;
  return h;
}

// ------------------------------------------------------------------------------------- S1
// Variants (10 velocity / 2 position steps, Jolt defaults):
//   lumped+torque      link inertia about its COM z axis += r^2 Im; torque r Mp (u - r w / wxx)
//                      added before each step from the current velocity (explicit)
//   rotor+gear+torque  separate rotor body (Im) on its own hinge + GearConstraint (ratio r,
//                      drift correction through the two hinges via SetConstraints), motor torque
//                      Mp (u - w_m / wxx) on the rotor each step. Jolt's gear constrains
//                      w1.a1 + ratio w2.a2 = 0 ("gear 1 rotation = -ratio gear 2 rotation",
//                      meshing gears), so the link's gear axis and hinge axis are -z: w_m = r w_L.
//   rotor+gear(ratio=1;axis2*r)+torque   diagnostic: the same constraint row written with ratio 1
//                      and the link's (local-space) gear axis scaled to -r z, velocity level only.
//                      GearConstraintPart applies lambda I2^-1 a2 to body 2 without the ratio
//                      factor (the Jacobian has ratio a2), which is only right for ratio 1; with
//                      the ratio folded into the axis the impulse is J^T lambda again.
static double s1_run(const std::string& var, const MotorCase& mc, double dt, double* w_end) {
  World W(J::Vec3::sZero(), settings(10, 2));
  J::RefConst<J::Shape> dot = new J::SphereShape(0.01f);
  const bool lumped = var.rfind("lumped", 0) == 0;
  const bool axis_r = var.find("axis2*r") != std::string::npos;
  const double Izz = S1Link::Izz_com + (lumped ? mc.Irefl() : 0.0);
  J::Body* link = W.add(dyn(dot, P(S1Link::com_x, 0, 0), J::Quat::sIdentity(), Layers::NOCOLLIDE,
                            S1Link::mass, V(S1Link::Ixx, S1Link::Iyy, Izz)));
  auto* lh = W.add<J::HingeConstraint>(hinge(P(0, 0, 0), V(0, 0, -1), V(1, 0, 0)),
                                       J::Body::sFixedToWorld, *link);
  J::Body* rotor = nullptr;
  if (!lumped) {
    const double Im = mc.Im();
    rotor = W.add(dyn(dot, P(0, -0.51, 0), J::Quat::sIdentity(), Layers::NOCOLLIDE, 1.0,
                      V(0.6 * Im, 0.6 * Im, Im)));
    auto* rh = W.add<J::HingeConstraint>(hinge(P(0, -0.51, 0), V(0, 0, 1), V(1, 0, 0)),
                                         J::Body::sFixedToWorld, *rotor);
    J::GearConstraintSettings g;
    if (!axis_r) {
      g.mSpace = J::EConstraintSpace::WorldSpace;
      g.mHingeAxis1 = V(0, 0, 1);   // rotor
      g.mHingeAxis2 = V(0, 0, -1);  // link
      g.mRatio = float(mc.r);
      W.add<J::GearConstraint>(g, *rotor, *link)->SetConstraints(rh, lh);
    } else {
      g.mSpace = J::EConstraintSpace::LocalToBodyCOM;  // not normalised in this space
      g.mHingeAxis1 = V(0, 0, 1);
      g.mHingeAxis2 = V(0, 0, -mc.r);
      g.mRatio = 1.0f;
      W.add<J::GearConstraint>(g, *rotor, *link);
    }
  }
  auto stepfn = [&] {
    if (lumped) {
      const double w = link->GetAngularVelocity().GetZ();
      link->AddTorque(V(0, 0, mc.r * mc.Mp * (mc.u - mc.r * w / mc.wxx)));
    } else {
      const double wm = rotor->GetAngularVelocity().GetZ();
      rotor->AddTorque(V(0, 0, mc.Mp * (mc.u - wm / mc.wxx)));
    }
    W.step(dt);
  };
  return peers::s1_max_err(
      mc, dt, stepfn, [&] { return double(link->GetAngularVelocity().GetZ()); }, w_end);
}

static void s1() {
  for (const std::string v :
       {"lumped+torque", "rotor+gear+torque", "rotor+gear(ratio=1;axis2*r)+torque"}) {
    for (double tm : {1.0, 0.5}) {
      MotorCase mc;
      mc.tm = tm;
      double w_end = 0, dummy = 0;
      const double e1 = s1_run(v, mc, 0.01, &w_end), e2 = s1_run(v, mc, 0.001, &dummy);
      peers::s1_emit(kEng, v, mc, 0.01, e1, w_end);
      peers::s1_emit(kEng, v, mc, 0.001, e2, dummy);
      peers::s1_emit_order(kEng, v, mc, e1, e2);
      note("%s S1 %s tm=%g: maxerr %.4g (dt 0.01) %.4g (dt 0.001), w_end %.6f (w_inf %.6f)",
           kEng.c_str(), v.c_str(), tm, e1, e2, w_end, mc.winf());
    }
  }
}

// ------------------------------------------------------------------------------------- S2
struct Chain {
  World W;
  std::vector<J::Body*> links;
  Chain(int N, int vel, bool split) : W(V(0, 0, -9.81), settings(vel, 2, false, split)) {
    const double L = ChainSpec::L;
    J::RefConst<J::Shape> box = box_shape(0.5 * L, 0.5 * ChainSpec::W, 0.5 * ChainSpec::H);
    const J::Vec3 I = V(ChainSpec::Ixx(), ChainSpec::Iyy(), ChainSpec::Izz());
    for (int i = 0; i < N; ++i) {
      links.push_back(W.add(dyn(box, P(0.5 * L + i * L, 0, 0), J::Quat::sIdentity(),
                                Layers::NOCOLLIDE, ChainSpec::mass, I)));
      J::Body& prev = i == 0 ? J::Body::sFixedToWorld : *links[i - 1];
      W.add<J::HingeConstraint>(hinge(P(i * L, 0, 0), V(0, 1, 0), V(1, 0, 0)), prev, *links[i]);
    }
    W.ps.OptimizeBroadPhase();
  }
  static J::RVec3 end(const J::Body* b, double s) {
    return b->GetCenterOfMassTransform() * J::RVec3(J::Real(s * 0.5 * ChainSpec::L), 0, 0);
  }
  double max_sep() const {
    double s = double(end(links[0], -1).Length());
    for (size_t i = 1; i < links.size(); ++i)
      s = std::max(s, double((end(links[i - 1], 1) - end(links[i], -1)).Length()));
    return s;
  }
  double tip_z() const { return double(end(links.back(), 1).GetZ()); }
};

static void s2_measure(int N, int vel, bool split, const Budget& B) {
  const long nsteps = std::lround(ChainSpec::sim_time / ChainSpec::dt);
  const std::string var = solver_tag(vel, 2) + (split ? "" : "/no-island-splitter");
  std::vector<double> us;
  long steps_done = 0;
  double s = NAN, tz = NAN;
  for (int rep = 0; rep < B.reps; ++rep) {
    auto sim = std::make_unique<Chain>(N, vel, split);
    const double t0 = now_s();
    long k = 0;
    for (; k < nsteps; ++k) {
      sim->W.step(ChainSpec::dt);
      if (now_s() - t0 > B.budget_s) {
        ++k;
        break;
      }
    }
    const double el = now_s() - t0;
    us.push_back(1e6 * el / k);
    steps_done = k;
    s = sim->max_sep();
    tz = sim->tip_z();
    if (el > B.cheap_s) break;
  }
  const std::string c = "N=" + std::to_string(N);
  emit("S2", kEng, var, c, "us_per_step", median(us));
  emit("S2", kEng, var, c, "runs", us.size());
  emit("S2", kEng, var, c, "sim_time_s", steps_done * ChainSpec::dt);
  if (steps_done == nsteps) {  // end-of-run metrics only for complete runs
    emit("S2", kEng, var, c, "max_joint_sep_m", s);
    emit("S2", kEng, var, c, "tip_z_end", tz);
  }
  note("%s S2 %s N=%d: %.1f us/step (%ld steps) sep %.3g tip_z %.4f", kEng.c_str(), var.c_str(), N,
       median(us), steps_done, s, tz);
}

static void s2(const Args& args) {
  Budget B;
  if (args.quick) B.budget_s = 3;
  // Jolt defaults (large-island splitter on) with 10 and 50 velocity steps, and 10 steps with the
  // splitter off (it only pays off with worker threads; a chain is one island of N constraints)
  for (int N : {10, 50, 200, 1000}) {
    for (int vel : {10, 50}) s2_measure(N, vel, true, B);
    s2_measure(N, 10, false, B);
  }
}

// ------------------------------------------------------------------------------------- S3
// Cross-check only: contact manifolds the solver used in one step (awake bodies only).
class CountingListener final : public J::ContactListener {
 public:
  int points = 0, manifolds = 0;
  double pen = 0;
  void OnContactAdded(const J::Body&, const J::Body&, const J::ContactManifold& m,
                      J::ContactSettings&) override {
    add(m);
  }
  void OnContactPersisted(const J::Body&, const J::Body&, const J::ContactManifold& m,
                          J::ContactSettings&) override {
    add(m);
  }

 private:
  void add(const J::ContactManifold& m) {
    ++manifolds;
    points += int(m.mRelativeContactPointsOn1.size());
    pen = std::max(pen, double(m.mPenetrationDepth));
  }
};

// End-state contact set, computed the way Jolt's narrow phase builds it (CollideShape with
// mSpeculativeContactDistance, supporting faces clipped by ManifoldBetweenTwoFaces, at most 4
// points per manifold). Works the same for sleeping bodies (whose contacts are not re-evaluated
// and get no listener callbacks). Each box-box pair is counted once.
static void contact_set(World& W, const std::vector<J::Body*>& boxes, int& points, double& pen) {
  const J::PhysicsSettings& ps = W.ps.GetPhysicsSettings();
  J::CollideShapeSettings cs;
  cs.mCollectFacesMode = J::ECollectFacesMode::CollectFaces;
  cs.mActiveEdgeMode = J::EActiveEdgeMode::CollideOnlyWithActive;
  cs.mMaxSeparationDistance = ps.mSpeculativeContactDistance;
  points = 0;
  pen = 0;
  for (J::Body* b : boxes) {
    J::AllHitCollisionCollector<J::CollideShapeCollector> col;
    J::IgnoreSingleBodyFilter bf(b->GetID());
    const J::RVec3 base = b->GetCenterOfMassPosition();
    W.ps.GetNarrowPhaseQueryNoLock().CollideShape(
        b->GetShape(), J::Vec3::sOne(), b->GetCenterOfMassTransform(), cs, base, col, {}, {}, bf);
    for (const J::CollideShapeResult& h : col.mHits) {
      const J::Body* o = W.ps.GetBodyLockInterfaceNoLock().TryGetBody(h.mBodyID2);
      if (o && !o->IsStatic() && o->GetID() < b->GetID())
        continue;  // box pair seen from the other side
      pen = std::max(pen, double(h.mPenetrationDepth));
      J::ContactPoints p1, p2;
      J::ManifoldBetweenTwoFaces(h.mContactPointOn1, h.mContactPointOn2, h.mPenetrationAxis,
                                 ps.mSpeculativeContactDistance + ps.mManifoldTolerance,
                                 h.mShape1Face, h.mShape2Face, p1,
                                 p2 JPH_IF_DEBUG_RENDERER(, base));
      if (p1.size() > 4)
        J::PruneContactPoints(h.mPenetrationAxis.Normalized(), p1,
                              p2 JPH_IF_DEBUG_RENDERER(, base));
      points += int(p1.size());
    }
  }
}

static void s3(const Args& args, const PileSpec& p, bool sleep) {
  World W(V(0, 0, -9.81), settings(10, 2, sleep), J::uint(p.count() + 16));
  J::RefConst<J::Shape> ground = ground_shape();
  W.add(fixed(ground, PileSpec::mu));
  J::RefConst<J::Shape> box = box_shape(PileSpec::half, PileSpec::half, PileSpec::half);
  const J::Vec3 I = box_inertia(PileSpec::mass, PileSpec::half, PileSpec::half, PileSpec::half);
  std::vector<J::Body*> boxes;
  for (int k = 0; k < p.nz; ++k)
    for (int j = 0; j < p.ny; ++j)
      for (int i = 0; i < p.nx; ++i)
        boxes.push_back(W.add(dyn(box, P(p.x(i), p.y(j), p.z(k)), J::Quat::sIdentity(),
                                  Layers::MOVING, PileSpec::mass, I, PileSpec::mu, sleep)));
  W.ps.OptimizeBroadPhase();
  CountingListener last;
  const long nsteps = std::lround(PileSpec::sim_time / PileSpec::dt);
  const double budget = args.quick ? 5.0 : 120.0;
  const double t0 = now_s();
  long k = 0;
  double all_asleep_at = -1;
  // PEERS_TRACE_ACTIVE=1: how many bodies are awake as the pile settles (sleeping on).
  const bool trace_active = std::getenv("PEERS_TRACE_ACTIVE") != nullptr;
  for (; k < nsteps; ++k) {
    if (k == nsteps - 1) W.ps.SetContactListener(&last);  // last step only (cross-check)
    W.step(PileSpec::dt);
    // A counter Jolt keeps: no cost worth timing.
    if (sleep && all_asleep_at < 0 && W.ps.GetNumActiveBodies(J::EBodyType::RigidBody) == 0)
      all_asleep_at = double(k + 1) * PileSpec::dt;
    if (sleep && trace_active && (k + 1) % 12 == 0 && k < 480)  // every 0.05 s for 2 s
      note("  t %.2f s: %u bodies awake", double(k + 1) * PileSpec::dt,
           W.ps.GetNumActiveBodies(J::EBodyType::RigidBody));
    if (now_s() - t0 > budget) {
      ++k;
      break;
    }
  }
  const double el = now_s() - t0;
  W.ps.SetContactListener(nullptr);
  PileResult r;
  r.all_asleep_at_s = all_asleep_at;
  r.us_per_step = 1e6 * el / k;
  r.sim_time = k * PileSpec::dt;
  r.vmax = 0, r.topz = -1e9;
  for (J::Body* b : boxes) {
    r.vmax = std::max(r.vmax, double(b->GetLinearVelocity().Length()));
    r.topz = std::max(r.topz, double(b->GetCenterOfMassPosition().GetZ()));
  }
  contact_set(W, boxes, r.contacts, r.pen);
  const std::string var = solver_tag(10, 2) + (sleep ? "/sleeping-on(default)" : "/sleeping-off");
  peers::s3_emit(kEng, var, p, r);
  note(
      "  (last step's solver contacts, awake bodies only: %d manifolds, %d points, deepest %.3g m)",
      last.manifolds, last.points, last.pen);
}

// ------------------------------------------------------------------------------------- S4
static double yangle(const J::Body* b) {
  const J::Mat44 R = J::Mat44::sRotation(b->GetRotation());
  return std::atan2(double(R(0, 2)), double(R(0, 0)));
}

static GripResult s4_once(int vel) {
  using G = GripSpec;
  World W(V(0, 0, -9.81), settings(vel, 2));
  J::RefConst<J::Shape> ground = ground_shape();
  W.add(fixed(ground, G::mu));
  J::RefConst<J::Shape> boxs = box_shape(G::box_half, G::box_half, G::box_half);
  J::RefConst<J::Shape> jaws = box_shape(G::jaw_hx, G::jaw_hy, G::jaw_hz);
  J::RefConst<J::Shape> dot = new J::SphereShape(0.01f);
  J::Body* box =
      W.add(dyn(boxs, P(0, 0, G::box_half), J::Quat::sIdentity(), Layers::MOVING, G::box_mass,
                box_inertia(G::box_mass, G::box_half, G::box_half, G::box_half), G::mu));
  // kinematic base, collides with nothing
  J::BodyCreationSettings bs(dot, P(0, 0, G::pivot_z), J::Quat::sIdentity(),
                             J::EMotionType::Kinematic, Layers::NOCOLLIDE);
  bs.mAllowSleeping = false;
  J::Body* base = W.add(bs);
  J::Body* jaw[2];
  J::HingeConstraint* hg[2];
  for (int s = 0; s < 2; ++s) {  // 0 = left (x < 0), 1 = right
    const double px = (s == 0 ? -1 : 1) * G::pivot_x, q0 = (s == 0 ? 1 : -1) * G::q_open;
    const J::Quat rot = J::Quat::sRotation(J::Vec3::sAxisY(), float(q0));
    // centre = pivot + R (0, 0, -hz)
    const J::RVec3 c = P(px, 0, G::pivot_z) + J::RVec3(rot * V(0, 0, -G::jaw_hz));
    jaw[s] = W.add(dyn(jaws, c, rot, Layers::MOVING, G::jaw_mass,
                       box_inertia(G::jaw_mass, G::jaw_hx, G::jaw_hy, G::jaw_hz), G::mu));
    J::HingeConstraintSettings h = hinge(P(px, 0, G::pivot_z), V(0, 1, 0), V(1, 0, 0));
    if (s == 0) h.mMotorSettings.SetTorqueLimit(float(G::tau_max));
    hg[s] = W.add<J::HingeConstraint>(h, *base, *jaw[s]);  // angle rate = (w_jaw - w_base) . y
  }
  hg[0]->SetMotorState(J::EMotorState::Velocity);
  hg[0]->SetTargetAngularVelocity(float(-G::close_speed));  // left jaw closes towards -q
  // 1:-1 coupling: w_L.y + 1 * w_R.y = 0 (Jolt's gear sign convention), drift corrected through
  // the two hinge angles (both 0 at the start, so the position target is angle_L + angle_R = 0)
  J::GearConstraintSettings g;
  g.mSpace = J::EConstraintSpace::WorldSpace;
  g.mHingeAxis1 = g.mHingeAxis2 = V(0, 1, 0);
  g.mRatio = 1.0f;
  W.add<J::GearConstraint>(g, *jaw[0], *jaw[1])->SetConstraints(hg[0], hg[1]);
  W.ps.OptimizeBroadPhase();

  GripResult r;
  const long n = std::lround(G::t_end / G::dt), k0 = std::lround(G::t_lift0 / G::dt);
  double el = 0;
  for (long k = 0; k < n; ++k) {
    const double t = k * G::dt;
    W.bi->MoveKinematic(base->GetID(), P(0, 0, G::pivot_z + G::lift_z(t + G::dt)),
                        J::Quat::sIdentity(), float(G::dt));
    const double t0 = now_s();
    W.step(G::dt);
    el += now_s() - t0;
    const double bz = box->GetCenterOfMassPosition().GetZ(),
                 basez = base->GetCenterOfMassPosition().GetZ();
    const double qL = yangle(jaw[0]), qR = yangle(jaw[1]);
    peers::s4_trace((k + 1) * G::dt, qL, qR, box->GetCenterOfMassPosition().GetX(), bz, basez);
    if (k + 1 == k0) r.rel0 = bz - basez;
    if ((k + 1) * G::dt >= 0.3) r.max_couple_err = std::max(r.max_couple_err, std::fabs(qL + qR));
    r.rel_end = bz - basez;
  }
  r.box_z_end = box->GetCenterOfMassPosition().GetZ();
  r.us_per_step = 1e6 * el / n;
  return r;
}

static void s4() {
  for (int vel : {10, 50}) {
    std::vector<double> us;
    GripResult g;
    for (int i = 0; i < 3; ++i) {
      g = s4_once(vel);
      us.push_back(g.us_per_step);
    }
    g.us_per_step = median(us);
    const std::string v = solver_tag(vel, 2) + "/hinge-motor+GearConstraint";
    peers::s4_emit(kEng, v, g);
    note("%s S4 %s: slip %.3f mm, box z %.4f, couple err %.2e, %.1f us/step", kEng.c_str(),
         v.c_str(), 1000 * g.slip(), g.box_z_end, g.max_couple_err, g.us_per_step);
  }
}

static void trace_impl(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
  std::fputc('\n', stderr);
}

int main(int argc, char** argv) {
  Args args(argc, argv);
  J::RegisterDefaultAllocator();
  J::Trace = trace_impl;
  J::Factory::sInstance = new J::Factory();
  J::RegisterTypes();
  {
    J::TempAllocatorImpl temp(64 * 1024 * 1024);
    std::unique_ptr<J::JobSystem> jobs;
    if (threads() > 1)
      jobs = std::make_unique<J::JobSystemThreadPool>(J::cMaxPhysicsJobs, J::cMaxPhysicsBarriers,
                                                      threads() - 1);
    else
      jobs = std::make_unique<J::JobSystemSingleThreaded>(J::cMaxPhysicsJobs);
    gTemp = &temp;
    gJobs = jobs.get();
    note("Jolt %d.%d.%d (%s), float, %s, %s (%d threads)", JPH_VERSION_MAJOR, JPH_VERSION_MINOR,
         JPH_VERSION_PATCH, *PEERS_JOLT_TAG ? PEERS_JOLT_TAG : "no tag",
         J::GetConfigurationString(),
         threads() > 1 ? "JobSystemThreadPool" : "JobSystemSingleThreaded", threads());
    if (args.want("S1")) s1();
    if (args.want("S2")) s2(args);
    if (args.want("S3"))
      for (const PileSpec& p : peers::piles())
        for (bool sleep : {false, true}) s3(args, p, sleep);
    if (args.want("S4")) s4();
  }
  J::UnregisterTypes();
  delete J::Factory::sInstance;
  J::Factory::sInstance = nullptr;
  return 0;
}
