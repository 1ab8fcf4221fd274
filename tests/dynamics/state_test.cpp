// Pins dynamics/src/state.cpp (serialize, deserialize, hash) and the determinism, fault and
// validation contracts of dynamics/src/simulator.cpp and model.cpp (STYLE §4).
#include <dynamics/model.h>
#include <dynamics/samples.h>
#include <dynamics/simulator.h>
#include <dynamics/state.h>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "contact_batches.h"
#include "fixture.h"

namespace sim::dynamics {
namespace {

struct NamedModel {
  std::string name;
  std::function<Model()> make;
};

// The samples, plus variants that exercise the limit active set and substeps.
std::vector<NamedModel> models() {
  return {
      {"twoLinkArm", [] { return samples::twoLinkArm(0.01); }},
      {"gripper", [] { return samples::gripper(0.005); }},
      {"gripperWithLimits",
       [] {
         Model m = samples::gripper(0.005);
         m.motors[0].initial_voltage = 1.0;
         for (JointDef& j : m.joints) {
           j.limit_enabled = true;
           j.lower_limit = -0.2;
           j.upper_limit = 0.2;
         }
         return m;
       }},
      {"chain20", [] { return samples::chain(20); }},
      {"wg7152", [] { return samples::wg7152(0.5, 0.01); }},
      {"wg7152Substeps",
       [] {
         Model m = samples::wg7152GravityLoaded(0.5, 0.01, 0.3);
         m.solver.substeps = 4;
         return m;
       }},
  };
}

class StateDeterminism : public ::testing::TestWithParam<NamedModel> {};

// Joint coordinates of a state, for step-by-step traces.
std::vector<double> jointPositions(const State& s) {
  std::vector<double> q;
  for (const JointState& j : s.joints) q.push_back(j.position);
  return q;
}

// (a) Two simulators on the same model, stepped side by side, stay bit-identical.
TEST_P(StateDeterminism, TwoSimulatorsStaySideBySideBitIdentical) {
  Simulator first(GetParam().make());
  Simulator second(GetParam().make());
  State a = first.initialState();
  State b = second.initialState();
  ASSERT_EQ(a, b);
  for (int n = 1; n <= 500; ++n) {
    const StepReport ra = first.step(a);
    const StepReport rb = second.step(b);
    ASSERT_EQ(ra.fault.kind, Fault::Kind::None) << ra.fault.describe();
    ASSERT_EQ(a, b) << "step " << n;
    ASSERT_EQ(a.hash(), b.hash()) << "step " << n;
    ASSERT_EQ(ra.velocity_iterations, rb.velocity_iterations) << "step " << n;
  }
  EXPECT_EQ(a.step, 500u);
}

// (b) Save at 250, restore into a fresh simulator, run to 500: the same states and trace.
TEST_P(StateDeterminism, SaveRestoreReplaysBitIdentically) {
  Simulator sim(GetParam().make());
  State s = sim.initialState();
  checkedSteps(sim, s, 250);
  const std::vector<std::uint8_t> saved = s.serialize();
  std::vector<std::vector<double>> trace;
  std::vector<std::uint64_t> hashes;
  for (int n = 0; n < 250; ++n) {
    checkedStep(sim, s);
    trace.push_back(jointPositions(s));
    hashes.push_back(s.hash());
  }

  Simulator fresh(GetParam().make());
  State r = State::deserialize(saved);
  EXPECT_EQ(r.step, 250u);
  for (int n = 0; n < 250; ++n) {
    const StepReport rep = fresh.step(r);
    ASSERT_EQ(rep.fault.kind, Fault::Kind::None) << rep.fault.describe();
    ASSERT_EQ(jointPositions(r), trace[static_cast<std::size_t>(n)]) << "step " << 251 + n;
    ASSERT_EQ(r.hash(), hashes[static_cast<std::size_t>(n)]) << "step " << 251 + n;
  }
  EXPECT_EQ(r, s);
  EXPECT_EQ(r.hash(), s.hash());
}

// (c) serialize -> deserialize is the identity, also mid-run with warm-start impulses set.
TEST_P(StateDeterminism, SerializeRoundTripIsExact) {
  Simulator sim(GetParam().make());
  State s = sim.initialState();
  checkedSteps(sim, s, 37);
  const State back = State::deserialize(s.serialize());
  EXPECT_EQ(back, s);
  EXPECT_EQ(back.hash(), s.hash());
  EXPECT_EQ(back.serialize(), s.serialize());
}

INSTANTIATE_TEST_SUITE_P(Samples, StateDeterminism, ::testing::ValuesIn(models()),
                         [](const ::testing::TestParamInfo<NamedModel>& p) {
                           return p.param.name;
                         });

/// Expects deserialize(bytes) to throw std::runtime_error whose message contains `needle`.
void expectRejected(const std::vector<std::uint8_t>& bytes, const std::string& needle) {
  try {
    (void)State::deserialize(bytes);
    ADD_FAILURE() << "accepted a bad image; expected an error mentioning '" << needle << "'";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

State steppedGripper() {
  Simulator sim(samples::gripper(0.005));
  State s = sim.initialState();
  checkedSteps(sim, s, 20);
  return s;
}

// (c) Bad images are refused with a message naming the problem.
TEST(StateSerialization, RejectsTruncatedImages) {
  const std::vector<std::uint8_t> bytes = steppedGripper().serialize();
  expectRejected({}, "truncated at byte 0");
  for (std::size_t keep :
       {std::size_t{3}, std::size_t{8}, std::size_t{20}, bytes.size() / 2, bytes.size() - 1}) {
    std::vector<std::uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(keep));
    expectRejected(cut, "truncated");
  }
}

TEST(StateSerialization, RejectsWrongMagicVersionAndTrailingBytes) {
  const std::vector<std::uint8_t> bytes = steppedGripper().serialize();
  std::vector<std::uint8_t> magic = bytes;
  magic[0] ^= 0xff;
  expectRejected(magic, "not a simtrainer state image");
  std::vector<std::uint8_t> version = bytes;
  version[4] += 1;  // the version follows the 4-byte magic
  expectRejected(version, "version 7, expected 6");
  std::vector<std::uint8_t> trailing = bytes;
  trailing.push_back(0);
  expectRejected(trailing, "trailing bytes");
  std::vector<std::uint8_t> counts = bytes;
  counts[8 + 7] = 0x7f;  // body count (first uint64 after magic and version): absurdly large
  expectRejected(counts, "implausible item counts");
}

// (d) The hash sees every bit: one ulp of one velocity changes it (and operator==).
TEST(StateHash, ChangesWithASingleVelocityBit) {
  const State s = steppedGripper();
  State t = s;
  double& v = t.bodies[1].angular_velocity_radps.z();
  v = std::nextafter(v, std::numeric_limits<double>::infinity());
  EXPECT_NE(t, s);
  EXPECT_NE(t.hash(), s.hash());
  State u = s;
  u.motors[0].coupling_impulse =
      std::nextafter(u.motors[0].coupling_impulse, -std::numeric_limits<double>::infinity());
  EXPECT_NE(u.hash(), s.hash());
  EXPECT_EQ(State(s).hash(), s.hash());
}

// operator== is bit-for-bit, like hash(): +0.0 and -0.0 differ, equal NaN bits compare equal.
TEST(StateHash, EqualityAndHashAgreeOnSignedZeroAndNaN) {
  State plus = steppedGripper();
  plus.bodies[1].linear_velocity_mps.x() = 0.0;
  State minus = plus;
  minus.bodies[1].linear_velocity_mps.x() = -0.0;
  EXPECT_NE(plus, minus);
  EXPECT_NE(plus.hash(), minus.hash());
  State nan = plus;
  nan.bodies[1].linear_velocity_mps.x() = std::numeric_limits<double>::quiet_NaN();
  const State nan_copy = nan;
  EXPECT_EQ(nan, nan_copy);
  EXPECT_EQ(nan.hash(), nan_copy.hash());
}

// (e) A NaN is reported as NonFinite naming the body, once as new; stepping on does not crash.
TEST(FaultDetection, NonFiniteAngularVelocityIsReportedOnce) {
  Simulator sim(samples::twoLinkArm(0.01));
  State s = sim.initialState();
  for (int n = 0; n < 10; ++n) ASSERT_EQ(sim.step(s).fault.kind, Fault::Kind::None);
  s.bodies[0].angular_velocity_radps.y() = std::numeric_limits<double>::quiet_NaN();
  const StepReport first = sim.step(s);
  EXPECT_EQ(first.fault.kind, Fault::Kind::NonFinite);
  EXPECT_EQ(first.fault.item, "body upper");
  EXPECT_EQ(first.fault.step, s.step);
  EXPECT_TRUE(first.fault_is_new);
  EXPECT_NE(first.fault.describe().find("non-finite value in body upper"), std::string::npos)
      << first.fault.describe();
  for (int n = 0; n < 3; ++n) {
    const StepReport again = sim.step(s);
    EXPECT_EQ(again.fault.kind, Fault::Kind::NonFinite);
    EXPECT_FALSE(again.fault_is_new);
  }
}

// A second body in a chain: the fault names the first body (in model order) that went bad, and
// a NaN placed in the last link reaches the others only through the joints.
TEST(FaultDetection, NonFiniteInChainNamesABody) {
  Simulator sim(samples::chain(5));
  State s = sim.initialState();
  s.bodies[4].angular_velocity_radps.x() = std::numeric_limits<double>::quiet_NaN();
  const StepReport rep = sim.step(s);
  EXPECT_EQ(rep.fault.kind, Fault::Kind::NonFinite);
  EXPECT_EQ(rep.fault.item.rfind("body link", 0), 0u) << rep.fault.item;
  EXPECT_TRUE(rep.fault_is_new);
}

// The shared fixture (fixture.h): stepping through it, a fault report fails the test (once per
// faulty step, naming the fault), and healthy steps do not.
TEST(Fixture, CheckedStepsFailTheTestOnAFaultReport) {
  Simulator sim(samples::twoLinkArm(0.01));
  State s = sim.initialState();
  auto failuresOf = [&](int steps) {
    ::testing::TestPartResultArray failures;
    {
      ::testing::ScopedFakeTestPartResultReporter intercept(
          ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
      if (steps == 1)
        checkedStep(sim, s);
      else
        checkedSteps(sim, s, steps);
    }
    std::vector<std::string> messages;
    for (int i = 0; i < failures.size(); ++i)
      messages.emplace_back(failures.GetTestPartResult(i).message());
    return messages;
  };
  EXPECT_TRUE(failuresOf(10).empty());
  s.bodies[0].angular_velocity_radps.y() = std::numeric_limits<double>::quiet_NaN();
  const std::vector<std::string> one = failuresOf(1);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_NE(one[0].find("non-finite value in body upper"), std::string::npos) << one[0];
  // checkedSteps stops at the first faulty step: one failure, not one per step.
  EXPECT_EQ(failuresOf(5).size(), 1u);
}

// A free body (no joints to absorb it) faster than max_linear_speed_mps is a runaway.
TEST(FaultDetection, LinearSpeedAboveTheCapIsRunaway) {
  Model m;
  m.gravity_mps2 = Vec3::Zero();
  BodyDef probe;
  probe.name = "probe";
  m.bodies.push_back(probe);
  Simulator sim(m);
  State s = sim.initialState();
  s.bodies[0].linear_velocity_mps = Vec3(0, 1.01 * m.solver.max_linear_speed_mps, 0);
  const StepReport rep = sim.step(s);
  EXPECT_EQ(rep.fault.kind, Fault::Kind::Runaway);
  EXPECT_EQ(rep.fault.item, "body probe");
  EXPECT_EQ(rep.fault.field, "linear_velocity");
  EXPECT_GT(rep.fault.value, m.solver.max_linear_speed_mps);
  EXPECT_TRUE(rep.fault_is_new);

  // Just below the cap is healthy.
  Simulator fresh(m);
  State ok = fresh.initialState();
  ok.bodies[0].linear_velocity_mps = Vec3(0, 0.99 * m.solver.max_linear_speed_mps, 0);
  EXPECT_EQ(fresh.step(ok).fault.kind, Fault::Kind::None);
}

// Every field of a body is checked (the check's cheap first pass must let each through): a NaN
// or an infinity in any coordinate of the position, the orientation or either velocity is
// reported as NonFinite naming that field, and an angular speed just above its cap as a runaway,
// just below it as healthy. The probe is static, so that the step carries each value through
// untouched and does not spread it (a free body's NaN velocity makes its position NaN too).
TEST(FaultDetection, EachFieldOfABodyIsCheckedForNonFiniteValues) {
  Model m;
  m.gravity_mps2 = Vec3::Zero();
  BodyDef probe;
  probe.name = "probe";
  probe.is_static = true;
  m.bodies.push_back(probe);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    const char* field;
    std::function<double&(BodyState&, int)> at;
    int coordinates;
  };
  const Case cases[] = {
      {"position", [](BodyState& b, int k) -> double& { return b.position_m[k]; }, 3},
      {"orientation", [](BodyState& b, int k) -> double& { return b.orientation.coeffs()[k]; }, 4},
      {"linear_velocity", [](BodyState& b, int k) -> double& { return b.linear_velocity_mps[k]; },
       3},
      {"angular_velocity",
       [](BodyState& b, int k) -> double& { return b.angular_velocity_radps[k]; }, 3},
  };
  int reported = 0;
  for (const Case& c : cases)
    for (int k = 0; k < c.coordinates; ++k)
      for (double bad : {nan, inf, -inf}) {
        Simulator sim(m);
        State s = sim.initialState();
        c.at(s.bodies[0], k) = bad;
        const StepReport rep = sim.step(s);
        EXPECT_EQ(rep.fault.kind, Fault::Kind::NonFinite) << c.field << "[" << k << "] = " << bad;
        EXPECT_EQ(rep.fault.field, c.field) << c.field << "[" << k << "] = " << bad;
        reported += rep.fault.kind == Fault::Kind::NonFinite ? 1 : 0;
      }
  EXPECT_EQ(reported, 3 * 13);
  for (double factor : {1.001, 0.999}) {
    Simulator sim(m);
    State s = sim.initialState();
    s.bodies[0].angular_velocity_radps = Vec3(0, 0, factor * m.solver.max_angular_speed_radps);
    const StepReport rep = sim.step(s);
    EXPECT_EQ(rep.fault.kind, factor > 1.0 ? Fault::Kind::Runaway : Fault::Kind::None) << factor;
    if (factor > 1.0) {
      EXPECT_EQ(rep.fault.field, "angular_velocity");
    }
  }
}

// The same on a jointed sample: a body of the chain driven far above the cap along the joint's
// free direction (z for a hinge about y) is reported as a runaway of some link.
TEST(FaultDetection, RunawayInAJointedSample) {
  Simulator sim(samples::chain(20));
  State s = sim.initialState();
  for (BodyState& b : s.bodies) b.linear_velocity_mps = Vec3(0, 0, 1e4);
  const StepReport rep = sim.step(s);
  EXPECT_EQ(rep.fault.kind, Fault::Kind::Runaway) << rep.fault.describe();
  EXPECT_EQ(rep.fault.item.rfind("body link", 0), 0u) << rep.fault.item;
}

// (f) validate(): each defect is reported with a field naming the item, and the simulator refuses
// the model with all of them.
bool hasField(const std::vector<ModelError>& errors, const std::string& field) {
  for (const ModelError& e : errors) {
    if (e.field == field && !e.message.empty()) return true;
  }
  return false;
}

struct Defect {
  std::string field;
  std::function<void(Model&)> apply;
};

std::vector<Defect> defects() {
  return {
      {"bodies[left].mass", [](Model& m) { m.bodies[1].mass_kg = -0.2; }},
      {"bodies[right].inertia",
       [](Model& m) { m.bodies[2].inertia_kgm2 = Vec3(1e-3, 1e-3, -1e-4).asDiagonal(); }},
      {"joints[right].child", [](Model& m) { m.joints[1].body_b = 7; }},
      {"joints[left].parent", [](Model& m) { m.joints[0].body_a = -5; }},
      {"motors[jaws].w_xx", [](Model& m) { m.motors[0].no_load_speed_radps = 0.0; }},
      {"repeaters[mirror].k", [](Model& m) { m.repeaters[0].ratio = 0.0; }},
  };
}

TEST(Validation, SamplesAreValid) {
  for (const NamedModel& nm : models()) EXPECT_TRUE(validate(nm.make()).empty()) << nm.name;
}

TEST(Validation, EachDefectIsNamedByItsField) {
  for (const Defect& d : defects()) {
    Model m = samples::gripper(0.005);
    d.apply(m);
    const std::vector<ModelError> errors = validate(m);
    ASSERT_EQ(errors.size(), 1u) << d.field << (errors.empty() ? "" : ": " + errors[0].field);
    EXPECT_EQ(errors[0].field, d.field);
    EXPECT_FALSE(errors[0].message.empty());
  }
  // w_xx < 0 as well as == 0.
  Model m = samples::gripper(0.005);
  m.motors[0].no_load_speed_radps = -1.0;
  EXPECT_TRUE(hasField(validate(m), "motors[jaws].w_xx"));
}

TEST(Validation, SimulatorThrowsModelInvalidListingEveryDefect) {
  Model m = samples::gripper(0.005);
  for (const Defect& d : defects()) d.apply(m);
  try {
    Simulator sim(m);
    FAIL() << "an invalid model was accepted";
  } catch (const ModelInvalid& e) {
    for (const Defect& d : defects()) {
      EXPECT_TRUE(hasField(e.errors(), d.field)) << d.field;
      EXPECT_NE(std::string(e.what()).find(d.field), std::string::npos) << e.what();
    }
    EXPECT_EQ(e.errors().size(), defects().size());
  }
}

// (g) Committed determinism constant (cf. Box2D test/test_determinism.c): the hash of
// samples::chain(20) after 200 steps with IEEE doubles, -ffp-contract=off (SimtrainerOptions) and
// the default x86-64 target (SSE2, no FMA); other targets may need their own value. It may
// legitimately change
// only with a deliberate change to the solver's arithmetic (stage order, row order, formulas,
// iteration counts, sample definitions, State layout or hash); update it in that commit and say
// so. Any other change to it means the step stopped being deterministic or changed by accident.
// Changed deliberately in session 9: the point-rotation block's K is built from its turn matrices
// (A^-1 by cofactors of its upper triangle)
// and its sweep update is written on scalars (other rounding); a free hinge's position pass
// measures its error from two rotation matrices.
constexpr std::uint64_t kChain20Hash200 = 0xd55844ecd327234f;

TEST(DeterminismConstant, Chain20After200Steps) {
  Simulator sim(samples::chain(20));
  State s = sim.initialState();
  checkedSteps(sim, s, 200);
  std::printf("chain(20) hash after 200 steps: 0x%016llx\n",
              static_cast<unsigned long long>(s.hash()));
  EXPECT_EQ(s.hash(), kChain20Hash200);
}

// More committed constants, one per part of the solver the chain does not reach, under the same
// rules as kChain20Hash200: each may change only with a deliberate change to the arithmetic of
// the part it names (say so in that commit). Each run must be fault-free, so that a hash cannot
// be pinned on a broken run.
std::uint64_t hashAfter(Model model, int steps, const std::function<void(int, State&)>& drive) {
  Simulator sim(std::move(model));
  State s = sim.initialState();
  for (int n = 0; n < steps; ++n) {
    drive(n, s);
    const StepReport r = sim.step(s);
    EXPECT_EQ(r.fault.kind, Fault::Kind::None) << r.fault.describe();
  }
  return s.hash();
}

void expectPinned(const char* name, std::uint64_t hash, std::uint64_t pinned) {
  std::printf("%s: 0x%016llx\n", name, static_cast<unsigned long long>(hash));
  EXPECT_EQ(hash, pinned) << name;
}

// Contacts: a 3 x 3 pile of columns six high falling, settling and falling asleep (batched and
// scalar manifolds, warm starts by feature, position passes, sleeping).
TEST(DeterminismConstant, BoxPile) {
  Model m = samples::boxPile(3, 3, 6, 1.0 / 240.0);
  m.solver.velocity_iterations = 10;
  expectPinned("box pile, 600 steps", hashAfter(m, 600, [](int, State&) {}), 0xc04418a740e1da65);
}

// The batched sweep's forms this processor runs (AVX-512: a batch's eight lanes at once; AVX2
// and the baseline: in halves of four) give the same pinned bits.
TEST(DeterminismConstant, BoxPileWithEveryFormOfTheBatchedSweep) {
  Model m = samples::boxPile(3, 3, 6, 1.0 / 240.0);
  m.solver.velocity_iterations = 10;
  for (int isa = 0; isa <= detail::batchSweepWidest(); ++isa) {
    detail::forceBatchSweep(isa);
    expectPinned(("box pile, 600 steps, sweep form " + std::to_string(isa)).c_str(),
                 hashAfter(m, 600, [](int, State&) {}), 0xc04418a740e1da65);
  }
  detail::forceBatchSweep(-1);
}

// A motor block: the grasp (articulated jaw contacts, the mechanism in its rotors' coordinates,
// limits, the repeater): open onto the stops, close, squeeze and lift.
TEST(DeterminismConstant, Grasp) {
  const Model m = samples::graspScene(1.0 / 240.0);
  const int jaws = m.findMotor("jaws"), lift = m.findMotor("lift");
  expectPinned("grasp, 600 steps",
               hashAfter(m, 600,
                         [&](int n, State& s) {
                           s.motors[jaws].voltage = n < 120 ? -1.0 : 1.0;
                           s.motors[lift].voltage = n < 300 ? 0.0 : 1.0;
                         }),
               0xec1078ed6a5d4645);
}

// A block in full coordinates: the gripper's jaws on a seed 000 drive with backlash and eq. 22
// output friction (drive rows, backlash flanks, the drive's friction), each jaw with a limit.
TEST(DeterminismConstant, DriveGripper) {
  Model m = samples::gripper(1.0 / 240.0);
  DriveDef d;
  d.backlash = 0.002;
  d.friction = DriveFriction::LuGre;
  m.motors[0].drive = d;
  for (JointDef& j : m.joints) {
    j.limit_enabled = true;
    j.lower_limit = -0.3;
    j.upper_limit = 0.3;
  }
  expectPinned(
      "drive gripper, 480 steps",
      hashAfter(m, 480, [](int n, State& s) { s.motors[0].voltage = n < 240 ? 1.0 : -0.5; }),
      0x902e8b5af8108236);
}

// Tracks: belt rows reaching the motors' rotors through contact friction. Changed 2026-11-27:
// a belt point's friction is solved in its two rows' own metric (solveFrictionDisc).
TEST(DeterminismConstant, TrackedChassis) {
  const Model m = samples::trackedChassis(1.0 / 240.0);
  const int left = m.findMotor("left"), right = m.findMotor("right");
  expectPinned("tracked chassis, 480 steps",
               hashAfter(m, 480,
                         [&](int n, State& s) {
                           s.motors[left].voltage = 1.0;
                           s.motors[right].voltage = n < 240 ? 1.0 : -1.0;
                         }),
               0x5b33767f6c7ae790);
}

// The undriven joint kinds and their axis rows: a ball pendulum, a welded pair, a slider with a
// limit and Stribeck friction, a hinge with LuGre friction and viscous damping, all under gravity.
TEST(DeterminismConstant, JointKinds) {
  Model m;
  m.solver.time_step_s = 1.0 / 240.0;
  m.solver.velocity_iterations = 20;
  m.gravity_mps2 = Vec3(0.0, 0.0, -9.81);
  auto body = [&m](const char* name, const Vec3& at) {
    BodyDef b;
    b.name = name;
    b.mass_kg = 0.5;
    b.inertia_kgm2 = samples::boxInertia(0.5, Vec3(0.2, 0.05, 0.05));
    b.position_m = at;
    m.bodies.push_back(b);
    return static_cast<int>(m.bodies.size()) - 1;
  };
  auto joint = [&m](const char* name, JointType type, int a, int b, const Vec3& anchor_a,
                    const Vec3& anchor_b, const Quat& axes) {
    JointDef j;
    j.name = name;
    j.type = type;
    j.body_a = a;
    j.body_b = b;
    j.frame_a.position = anchor_a;
    j.frame_a.rotation = axes;
    j.frame_b.position = anchor_b;
    j.frame_b.rotation = axes;
    m.joints.push_back(j);
    return static_cast<int>(m.joints.size()) - 1;
  };
  const Quat about_y(Eigen::AngleAxisd(0.5 * M_PI, Vec3::UnitZ()));
  const int bob = body("bob", Vec3(0.3, 0.0, 0.0));
  joint("ball", JointType::Ball, kWorld, bob, Vec3::Zero(), Vec3(-0.3, 0.0, 0.0), Quat::Identity());
  const int welded = body("welded", Vec3(0.6, 0.0, 0.0));
  joint("weld", JointType::Fixed, bob, welded, Vec3(0.15, 0.0, 0.0), Vec3(-0.15, 0.0, 0.0),
        Quat::Identity());
  const int slider = body("slider", Vec3(0.0, 1.0, 0.0));
  const int s = joint("slide", JointType::Prismatic, kWorld, slider, Vec3(0.0, 1.0, 0.0),
                      Vec3::Zero(), Quat(Eigen::AngleAxisd(0.3, Vec3::UnitY())));
  m.joints[s].limit_enabled = true;
  m.joints[s].lower_limit = -0.2;
  m.joints[s].upper_limit = 0.2;
  m.joints[s].friction.breakaway = 0.8;
  m.joints[s].friction.coulomb = 0.5;
  m.joints[s].friction.stribeck_speed = 0.05;
  m.joints[s].friction.curve = JointFrictionCurve::Tustin;
  const int arm = body("arm", Vec3(0.1, 2.0, 0.0));
  const int h = joint("hinge", JointType::Hinge, kWorld, arm, Vec3(0.0, 2.0, 0.0),
                      Vec3(-0.1, 0.0, 0.0), about_y);
  m.joints[h].friction.model = JointFrictionModel::LuGre;
  m.joints[h].friction.coulomb = 0.05;
  m.joints[h].friction.breakaway = 0.08;
  m.joints[h].friction.stribeck_speed = 0.01;
  m.joints[h].friction.viscous = 0.01;
  expectPinned("joint kinds, 480 steps", hashAfter(m, 480, [](int, State&) {}), 0xfcf27ec176592026);
}

// A flexure from rest (its coordinate 0 in the initial state either way): the planar spring of
// eq. 2 with unequal stiffnesses, and the torsion spring, under gravity and a constant load.
TEST(DeterminismConstant, Flexure) {
  Model m;
  m.solver.time_step_s = 1.0 / 240.0;
  m.solver.velocity_iterations = 20;
  m.gravity_mps2 = Vec3(0.0, -9.81, 0.0);
  BodyDef link;
  link.name = "link";
  link.mass_kg = 0.02;
  link.inertia_kgm2 = Vec3(1e-7, 2.4e-5, 2.4e-5).asDiagonal();
  link.position_m = Vec3(0.06, 0.0, 0.0);
  m.bodies.push_back(link);
  JointDef j;
  j.name = "flex";
  j.type = JointType::Flexure;
  j.body_b = 0;
  const Quat axes = Quat(Eigen::AngleAxisd(-M_PI / 2, Vec3::UnitY())) *
                    Quat(Eigen::AngleAxisd(-M_PI / 2, Vec3::UnitX()));
  j.frame_a.rotation = axes;
  j.frame_b.position = Vec3(-0.06, 0.0, 0.0);
  j.frame_b.rotation = axes;
  j.flexure.k_x.stiffness = 2.4e6;
  j.flexure.k_y.stiffness = 944.0;
  j.flexure.k_z.stiffness = 0.4;
  j.flexure.damping_linear = 5.0;
  j.flexure.damping_angular = 1e-3;
  m.joints.push_back(j);
  Model prb = m;
  prb.joints[0].flexure.model = FlexureModel::TorsionSpring;
  std::uint64_t hashes[2];
  for (int k = 0; k < 2; ++k) {
    Simulator sim(k == 0 ? m : prb);
    sim.setBodyLoad(0, Vec3(0.0, 0.05, 0.0), Vec3(0.0, 0.0, 0.002));
    State st = sim.initialState();
    for (int n = 0; n < 480; ++n) {
      const StepReport r = sim.step(st);
      EXPECT_EQ(r.fault.kind, Fault::Kind::None) << r.fault.describe();
    }
    hashes[k] = st.hash();
  }
  expectPinned("flexure (planar spring), 480 steps", hashes[0], 0xddb938196e895b7c);
  expectPinned("flexure (torsion spring), 480 steps", hashes[1], 0x1149991aa3c1fa39);
}

}  // namespace
}  // namespace sim::dynamics
