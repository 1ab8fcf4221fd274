// Simulator: the step, as the list of its stages, and the dispatch of each stage to the
// constraint kinds (SPEC §2).
//
// A step advances State by SolverSettings::time_step_s in `substeps` substeps of h each:
//   integrate forces     gravity, the bodies' loads, the gyroscopic torque (bodies.cpp)
//   prepare              each constraint kind's rows and effective masses at the substep's start
//                        poses; contacts are found; the motor blocks are built and factored
//   warm start           last substep's impulses, kept in the State, applied again
//   solve velocity       sequential-impulse sweeps until no row changes its impulse by more than
//                        velocity_tolerance in a sweep (or, if set, no velocity changes by
//                        more than velocity_change_tolerance over two sweeps), or
//                        velocity_iterations sweeps (the real-time cap): axis rows (joint
//                        friction, viscous, limits), contacts,
//                        motor blocks, then the joints' hard rows (they win)
//   integrate positions  semi-implicit Euler, rotors too
//   solve position       split-impulse passes on the position errors (contacts, joints, limits,
//                        couplings) until below position_tolerance_m or position_iterations
//                        passes; pseudo-impulses move poses and are forgotten
//   store impulses       joint coordinates, drive currents, friction states, contacts
// and once per step: the bodies, rotors and joint speeds stored, sleeping, the fault check.
// Restitution is no stage of its own: a contact's bounce is its velocity target, set in prepare.
// docs/dynamics.md describes the stages and the constraint kinds; joints.h their verbs.
#include <dynamics/simulator.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string_view>
#include <utility>

#include "check.h"
#include "contacts.h"
#include "joint_geometry.h"
#include "joints.h"
#include "motor_block.h"
#include "motors.h"
#include "simulator_testing.h"
#include "sleep.h"
#include "step_context.h"

namespace sim::dynamics {

namespace {

std::string joinErrors(const std::vector<ModelError>& errors) {
  std::ostringstream out;
  out << "invalid model:";
  for (const ModelError& e : errors) out << " " << e.field << ": " << e.message << ";";
  return out.str();
}

}  // namespace

ModelInvalid::ModelInvalid(std::vector<ModelError> errors)
    : std::invalid_argument(joinErrors(errors)), errors_(std::move(errors)) {}

const char* solveEndName(SolveEnd end) {
  switch (end) {
    case SolveEnd::NoWork: return "no work";
    case SolveEnd::Tolerance: return "tolerance";
    case SolveEnd::IterationCap: return "cap";
  }
  return "?";
}

const char* rowKindName(RowKind kind) {
  switch (kind) {
    case RowKind::None: return "none";
    case RowKind::JointAxis: return "joint axis";
    case RowKind::Contact: return "contact";
    case RowKind::MotorBlock: return "motor block";
    case RowKind::Joint: return "joint";
  }
  return "?";
}

std::string Fault::describe() const {
  if (kind == Kind::None) return "no fault";
  std::ostringstream out;
  out << (kind == Kind::NonFinite ? "non-finite value" : "runaway value") << " in " << item << "."
      << field << " = " << value << " at step " << step;
  return out.str();
}

namespace detail {

double Joints::unwrapped(const StepContext& ctx, int j, double reference) const {
  const JointType type = (*this)[j].type;
  return unwrapCoordinate(type, jointCoordinate(type, frames(ctx, j)), reference);
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// The solver's data, compiled from the model once and sized once: a step allocates nothing.

struct Simulator::Impl {
  Model model;
  detail::Bodies bodies;
  detail::Rotors rotors;
  detail::Joints joints;
  detail::Motors motors;
  detail::MotorBlocks blocks;
  detail::ContactSolver contacts;
  detail::Sleep sleep;
  detail::SweepVelocities sweep_velocities;
  detail::WorkerPool workers;
  bool fault_reported = false;

  explicit Impl(Model m);
  detail::StepContext context(State& state) {
    const double h = model.solver.time_step_s / model.solver.substeps;
    return {model,  state,  h,        1.0 / h,          0,      bodies, rotors, joints,
            motors, blocks, contacts, sweep_velocities, workers};
  }
  Fault check(const State& s) const;
};

Simulator::Impl::Impl(Model m) : model(std::move(m)) {
  using namespace detail;
  bodies.compile(model);
  const std::size_t nj = model.joints.size();
  joints.work.assign(nj, JointWork{});
  for (std::size_t j = 0; j < nj; ++j) {
    const JointDef& def = model.joints[j];
    joints.work[j].a = def.body_a == kWorld ? bodies.world : def.body_a;
    joints.work[j].b = def.body_b;
    joints.work[j].type = def.type;
  }
  joints.motor.assign(nj, -1);
  motor::compile(model, joints, motors, rotors);
  joint_friction::compile(model, joints);
  blocks.plan(model, bodies, joints, motors);
  contacts.init(model);
  contacts.setWorkers(&workers);
  sleep.init(bodies.world);
  joints.sweep.assign(nj, -1);
  for (std::size_t j = 0; j < nj; ++j)
    if (model.joints[j].type == JointType::Hinge && !joints.in_block[j])
      hinge::compile(model, joints, static_cast<int>(j));
  for (std::size_t j = 0; j < nj; ++j) {
    if (joints.in_block[j]) continue;
    const bool hinge = joints.sweep[j] >= 0;
    std::vector<Joints::SweepRun>& runs = joints.velocity_runs;
    if (hinge && !runs.empty() && runs.back().hinges &&
        runs.back().first + runs.back().count == static_cast<int>(j))
      ++runs.back().count;
    else
      runs.push_back({static_cast<int>(j), 1, hinge});
  }
  // Repeaters hold whatever offset the initial poses give them.
  repeater::compile(model, makeInitialState(model), motors);
}

namespace {

using namespace detail;

// ---- The stages. Each visits the constraint kinds in a fixed order (joints in model order):
// the order is part of the result, bit for bit.

// ---- Heavy validation (check.h: SIMTRAINER_VALIDATE builds only). A state that comes in with a
// non-finite value is the fault check's to report (Fault), not a solver bug: the finite checks
// apply when the step started from finite values.

bool finiteInput(const StepContext& ctx) {
  const State& s = ctx.state;
  for (const BodyState& b : s.bodies)
    if (!b.position_m.allFinite() || !b.orientation.coeffs().allFinite() ||
        !b.linear_velocity_mps.allFinite() || !b.angular_velocity_radps.allFinite())
      return false;
  for (const MotorState& m : s.motors)
    if (!std::isfinite(m.angle_rad) || !std::isfinite(m.speed_radps) || !std::isfinite(m.voltage))
      return false;
  for (std::size_t i = 0; i < ctx.bodies.load_force.size(); ++i)
    if (!ctx.bodies.load_force[i].allFinite() || !ctx.bodies.load_torque[i].allFinite())
      return false;
  return true;
}

/// Every body's pose and velocity and every rotor's angle and speed finite after `stage`.
void validateFinite(const StepContext& ctx, bool finite_input, const char* stage) {
  if constexpr (kValidate) {
    if (!finite_input) return;
    const Bodies& b = ctx.bodies;
    for (std::size_t i = 0; i < b.solver.size(); ++i) {
      SIM_VALIDATE(b.solver[i].v.allFinite() && b.solver[i].w.allFinite() &&
                       b.positions[i].allFinite() && b.orientations[i].coeffs().allFinite(),
                   stage);
    }
    for (std::size_t m = 0; m < ctx.rotors.speed.size(); ++m)
      SIM_VALIDATE(std::isfinite(ctx.rotors.speed[m]) && std::isfinite(ctx.rotors.angle[m]), stage);
  }
}

/// The impulses the substep stored within their limits: contacts push, never pull, and every
/// stored impulse is finite.
void validateImpulses(const StepContext& ctx, bool finite_input) {
  if constexpr (kValidate) {
    if (!finite_input) return;
    for (const ContactState& c : ctx.state.contacts) {
      SIM_VALIDATE(std::isfinite(c.normal_impulse) && c.friction_impulse.allFinite() &&
                       std::isfinite(c.torsion_impulse),
                   "a contact impulse is not finite");
      SIM_VALIDATE(c.normal_impulse >= 0.0, "a contact's normal impulse pulls (negative)");
    }
    for (std::size_t j = 0; j < ctx.state.joints.size(); ++j) {
      const JointImpulses& imp = ctx.state.joints[j].impulses;
      SIM_VALIDATE(imp.linear.allFinite() && imp.angular.allFinite() && std::isfinite(imp.limit) &&
                       std::isfinite(imp.friction) && std::isfinite(imp.viscous),
                   "a joint impulse is not finite");
      // A limit only pushes away from its active stop, and holds nothing without one. A row
      // released to zero keeps the rounding of old - old (|lambda| 1e-16), far below 1e-12 N s.
      const int side = ctx.joints[static_cast<int>(j)].limit.side;
      SIM_VALIDATE(side != 0 ? side * imp.limit >= -1e-12 : imp.limit == 0.0,
                   "a joint limit's impulse pulls toward its stop (or a limit without an active "
                   "stop holds an impulse)");
    }
    for (const MotorState& m : ctx.state.motors)
      SIM_VALIDATE(std::isfinite(m.coupling_impulse) && std::isfinite(m.characteristic_impulse),
                   "a motor impulse is not finite");
  }
}

/// Bodies a thread takes at least in forBodies (fewer cost more to hand over than to do).
constexpr int kBodiesPerThread = 256;

/// Calls fn(first, last) over the bodies [0, world), each thread its own range (bodyThread, as
/// the contact stages share their manifolds): the thread that solves a body's contacts also
/// loads, integrates and stores it, and the body's data stays in that processor's cache.
template <class Fn>
void forBodies(StepContext& ctx, Fn&& fn) {
  const int world = ctx.bodies.world;
  const int threads = world >= kBodiesPerThread * ctx.workers.threads() ? ctx.workers.threads() : 1;
  if (threads == 1) {
    fn(0, world);
    return;
  }
  const int n = static_cast<int>(ctx.bodies.solver.size());
  ctx.workers.run(threads, [&](int t) {
    fn(std::min(firstBodyOf(t, n, threads), world),
       std::min(firstBodyOf(t + 1, n, threads), world));
  });
}

void loadStep(StepContext& ctx) {
  forBodies(ctx, [&](int first, int last) { ctx.bodies.load(ctx.state, first, last); });
  for (std::size_t m = 0; m < ctx.rotors.angle.size(); ++m) {
    ctx.rotors.angle[m] = ctx.state.motors[m].angle_rad;
    ctx.rotors.speed[m] = ctx.state.motors[m].speed_radps;
  }
}

void integrateForces(StepContext& ctx) {
  forBodies(ctx, [&](int first, int last) {
    ctx.bodies.integrateForces(ctx.model.gravity_mps2, ctx.h, first, last);
  });
}

void prepare(StepContext& ctx) {
  forBodies(ctx, [&](int first, int last) { ctx.bodies.updateInertia(first, last); });
  Joints& joints = ctx.joints;
  for (std::size_t jj = 0; jj < joints.work.size(); ++jj) {
    const int j = static_cast<int>(jj);
    const JointFrames f = joints.frames(ctx, j);
    joints[j].position = ctx.state.joints[jj].position;
    switch (joints[j].type) {
      case JointType::Ball: ball::prepare(ctx, j, f); break;
      case JointType::Fixed: fixed::prepare(ctx, j, f); break;
      case JointType::Hinge: hinge::prepare(ctx, j, f); break;
      case JointType::Flexure: flexure::prepare(ctx, j, f); break;
      case JointType::Prismatic: prismatic::prepare(ctx, j, f); break;
    }
    joint_axis::prepareResponse(ctx, j);
    limit::prepare(ctx, j);
    joint_friction::prepare(ctx, j);
  }
  // The joints whose axis rows have work this substep, in joint order: the sweeps skip the rest
  // without touching them (a long chain of bare hinges has none).
  joints.with_axis_rows.clear();
  for (std::size_t j = 0; j < joints.work.size(); ++j) {
    const JointWork& w = joints.work[j];
    if (w.type != JointType::Hinge && w.type != JointType::Prismatic) continue;
    if (!(w.response.mass > 0.0)) continue;
    if (w.friction.viscous_gamma > 0.0 ||
        ((w.friction.coulomb || w.limit.side != 0) && !joints.in_block[j]))
      joints.with_axis_rows.push_back(static_cast<int>(j));
  }
  motor::prepare(ctx);
  ctx.blocks.build(ctx);
  ctx.contacts.prepare(ctx.model, ctx.bodies.positions, ctx.bodies.orientations, ctx.bodies.solver,
                       ctx.state, ctx.h);
  if (ctx.model.solver.articulated_contacts && !ctx.blocks.blocks.empty())
    ctx.blocks.articulation.prepare(ctx);
}

void warmStart(StepContext& ctx) {
  State& s = ctx.state;
  for (std::size_t j = 0; j < ctx.joints.work.size(); ++j)
    limit::forgetStale(ctx, static_cast<int>(j));
  if (!ctx.model.solver.warm_start) {
    for (JointState& j : s.joints) j.impulses = JointImpulses{};
    for (MotorState& m : s.motors) m.characteristic_impulse = m.coupling_impulse = 0.0;
    for (RepeaterState& r : s.repeaters) r.coupling_impulse = 0.0;
    return;
  }
  ctx.contacts.warmStart(ctx.bodies.solver, ctx.rotors.speed, ctx.rotors.inv_inertia,
                         ctx.model.solver.articulated_contacts && !ctx.blocks.blocks.empty());
  for (std::size_t jj = 0; jj < ctx.joints.work.size(); ++jj) {
    const int j = static_cast<int>(jj);
    switch (ctx.joints[j].type) {
      case JointType::Flexure: flexure::warmStart(ctx, j); break;
      case JointType::Ball: ball::warmStart(ctx, j); break;
      case JointType::Fixed: fixed::warmStart(ctx, j); break;
      case JointType::Hinge:
        hinge::warmStart(ctx, j);
        joint_axis::warmStart(ctx, j);
        break;
      case JointType::Prismatic:
        prismatic::warmStart(ctx, j);
        joint_axis::warmStart(ctx, j);
        break;
    }
  }
  for (std::size_t m = 0; m < ctx.motors.motor.size(); ++m)
    motor::warmStart(ctx, static_cast<int>(m));
  for (std::size_t i = 0; i < ctx.motors.repeater.size(); ++i)
    repeater::warmStart(ctx, static_cast<int>(i));
}

/// Whether the velocity solve has rows this substep: axis rows, contacts, motor blocks (motors
/// and repeaters are in blocks) or a joint outside any block.
bool velocityWork(const StepContext& ctx) {
  const Joints& joints = ctx.joints;
  return !joints.with_axis_rows.empty() || ctx.contacts.pointCount() > 0 ||
         !ctx.blocks.blocks.empty() ||
         std::find(joints.in_block.begin(), joints.in_block.end(), 0) != joints.in_block.end();
}

/// Keeps the report's worst end over the substeps (SolveEnd's order).
void noteEnd(SolveEnd& report_end, SolveEnd end) {
  report_end = std::max(report_end, end);
}

/// Records the velocities after sweep k and says whether none changed by more than the
/// tolerance since sweep k - 2 (SolverSettings::velocity_change_tolerance).
bool velocitiesSettled(StepContext& ctx, int k) {
  SweepVelocities& sv = ctx.sweep_velocities;
  std::vector<double>& now = sv.current;
  // Written in place (sized once; per-value inserts were a library copy call each, thousands a
  // step on a site of resting containers).
  now.resize(6 * ctx.bodies.solver.size() + ctx.motors.motor.size());
  double* out = now.data();
  for (const SolverBody& b : ctx.bodies.solver) {
    out[0] = b.v.x();
    out[1] = b.v.y();
    out[2] = b.v.z();
    out[3] = b.w.x();
    out[4] = b.w.y();
    out[5] = b.w.z();
    out += 6;
  }
  for (std::size_t m = 0; m < ctx.motors.motor.size(); ++m)
    *out++ = ctx.rotors.speed[m] * ctx.motors.motor[m].coupling_ratio;
  std::vector<double>& before = sv.sweep[k % 2];  // after sweep k - 2 when k > 2
  bool settled = k > 2;
  const double tolerance = ctx.model.solver.velocity_change_tolerance;
  for (std::size_t i = 0; settled && i < now.size(); ++i)
    settled = std::abs(now[i] - before[i]) <= tolerance;
  std::swap(now, before);
  return settled;
}

void solveVelocity(StepContext& ctx, StepReport& report) {
  const SolverSettings& cfg = ctx.model.solver;
  Joints& joints = ctx.joints;
  MotorBlocks& blocks = ctx.blocks;
  SolveEnd end = SolveEnd::NoWork;
  double residual = 0.0;
  RowKind residual_kind = RowKind::None;
  blocks.articulation.articulateContacts(ctx);
  int iterations = 0;
  if (velocityWork(ctx)) {
    end = SolveEnd::IterationCap;
    for (iterations = 1; iterations <= cfg.velocity_iterations; ++iterations) {
      double largest = 0.0;
      RowKind kind = RowKind::None;
      // Each kind's largest change, then where the sweep's largest came from (the report).
      const auto note = [&](double d, RowKind k) {
        if (d > largest) {
          largest = d;
          kind = k;
        }
      };
      // Along the joints' axes: viscous (soft), Coulomb friction (bounded), limit (one-sided).
      double axis = 0.0;
      for (const int j : joints.with_axis_rows) {
        axis = std::max(axis, joint_friction::solveVelocity(ctx, j));
        axis = std::max(axis, limit::solveVelocity(ctx, j));
      }
      note(axis, RowKind::JointAxis);
      // Contacts: friction, torsion and non-penetration rows.
      note(std::abs(ctx.contacts.solveVelocity(ctx.bodies.solver, ctx.rotors.speed,
                                               ctx.rotors.inv_inertia, iterations % 2 == 0,
                                               cfg.velocity_tolerance)),
           RowKind::Contact);
      // Rows outside a block may read its impulses (a driven joint's friction bound).
      if (!blocks.all_closed) blocks.articulation.flush();
      // Driven mechanisms (SPEC eqs. 13-16 with the characteristic), each solved as one block.
      double block = 0.0;
      for (std::size_t bi = 0; bi < blocks.blocks.size(); ++bi)
        if (!blocks.closed[bi] || !blocks.articulation.blockStillHolds(ctx, static_cast<int>(bi)))
          blocks.solve(ctx, static_cast<int>(bi), block);
      note(block, RowKind::MotorBlock);
      // The other joints' hard rows last: they win.
      double joint = 0.0;
      for (const Joints::SweepRun& run : joints.velocity_runs) {
        const int j = run.first;
        double d = 0.0;
        switch (joints[j].type) {
          case JointType::Hinge: d = hinge::solveVelocityRun(ctx, j, run.count); break;
          case JointType::Flexure: d = flexure::solveVelocity(ctx, j); break;
          case JointType::Fixed: d = fixed::solveVelocity(ctx, j); break;
          case JointType::Prismatic: d = prismatic::solveVelocity(ctx, j); break;
          case JointType::Ball: d = ball::solveVelocity(ctx, j); break;
        }
        joint = std::max(joint, d);
      }
      note(joint, RowKind::Joint);
      residual = largest;
      residual_kind = kind;
      if (largest <= cfg.velocity_tolerance ||
          (cfg.velocity_change_tolerance > 0.0 && velocitiesSettled(ctx, iterations))) {
        end = SolveEnd::Tolerance;
        break;
      }
    }
    iterations = std::min(iterations, cfg.velocity_iterations);
  }
  blocks.articulation.flush();
  for (std::size_t j = 0; j < joints.work.size(); ++j)
    if (joints.work[j].type == JointType::Flexure) flexure::storeImpulses(ctx, static_cast<int>(j));

  const auto reduced = std::count_if(blocks.reduced.begin(), blocks.reduced.end(),
                                     [](const ReducedBlock& r) { return r.ready; });
  report.reduced_blocks = std::max(report.reduced_blocks, static_cast<int>(reduced));
  report.velocity_iterations = std::max(report.velocity_iterations, iterations);
  if (residual >= report.velocity_residual) {
    report.velocity_residual = residual;
    report.velocity_residual_kind = residual_kind;
  }
  noteEnd(report.velocity_end, end);
}

void integratePositions(StepContext& ctx) {
  forBodies(ctx, [&](int first, int last) { ctx.bodies.integratePositions(ctx.h, first, last); });
  for (std::size_t m = 0; m < ctx.rotors.angle.size(); ++m)
    ctx.rotors.angle[m] += ctx.rotors.speed[m] * ctx.h;
}

void solvePosition(StepContext& ctx, StepReport& report) {
  const SolverSettings& cfg = ctx.model.solver;
  const double beta = cfg.position_correction;
  double largest = 0.0;
  int iterations = 0;
  // No work: no contacts, joints, motors or repeaters (their couplings have position rows).
  SolveEnd end = ctx.contacts.pointCount() > 0 || !ctx.joints.work.empty() ||
                         !ctx.motors.motor.empty() || !ctx.motors.repeater.empty()
                     ? SolveEnd::IterationCap
                     : SolveEnd::NoWork;
  for (; end != SolveEnd::NoWork && iterations < cfg.position_iterations; ++iterations) {
    largest = ctx.contacts.solvePosition(ctx.model.contact, ctx.bodies.positions,
                                         ctx.bodies.orientations, ctx.bodies.solver);
    for (std::size_t jj = 0; jj < ctx.joints.work.size(); ++jj) {
      const int j = static_cast<int>(jj);
      double e = 0.0;
      switch (ctx.joints[j].type) {
        case JointType::Flexure: e = flexure::solvePosition(ctx, j, beta); break;
        case JointType::Hinge: e = hinge::solvePosition(ctx, j, beta); break;
        case JointType::Prismatic: e = prismatic::solvePosition(ctx, j, beta); break;
        case JointType::Fixed: e = fixed::solvePosition(ctx, j, beta); break;
        case JointType::Ball: e = ball::solvePosition(ctx, j, beta); break;
      }
      largest = std::max(largest, e);
      if (ctx.joints[j].limit.side != 0)  // a stop nearby (tested here: no call per free joint)
        largest = std::max(largest, limit::solvePosition(ctx, j, beta));
    }
    // Motor and repeater couplings: joint coordinate - ratio * rotor angle (- offset) = 0.
    for (std::size_t m = 0; m < ctx.motors.motor.size(); ++m)
      largest = std::max(largest, motor::solvePosition(ctx, static_cast<int>(m), beta));
    for (std::size_t i = 0; i < ctx.motors.repeater.size(); ++i)
      largest = std::max(largest, repeater::solvePosition(ctx, static_cast<int>(i), beta));
    if (largest <= cfg.position_tolerance_m) {
      end = SolveEnd::Tolerance;
      break;
    }
  }
  report.position_iterations = std::max(report.position_iterations, iterations);
  report.position_error = std::max(report.position_error, largest);
  noteEnd(report.position_end, end);
}

void storeImpulses(StepContext& ctx) {
  for (std::size_t j = 0; j < ctx.joints.work.size(); ++j) {
    const JointType t = ctx.joints.work[j].type;
    if (t != JointType::Hinge && t != JointType::Prismatic && t != JointType::Flexure) continue;
    double& q = ctx.state.joints[j].position;
    q = ctx.joints.unwrapped(ctx, static_cast<int>(j), q);
  }
  motor::storeSubstep(ctx);
  joint_friction::store(ctx);
  ctx.contacts.store(ctx.state);
}

void storeStep(StepContext& ctx) {
  forBodies(ctx, [&](int first, int last) { ctx.bodies.store(ctx.state, first, last); });
  motor::store(ctx);
  for (std::size_t jj = 0; jj < ctx.joints.work.size(); ++jj) {
    const int j = static_cast<int>(jj);
    const JointType t = ctx.joints[j].type;
    if (t == JointType::Hinge || t == JointType::Prismatic)
      ctx.state.joints[jj].speed = joint_axis::speed(ctx, j);
    if (t == JointType::Flexure) ctx.state.joints[jj].speed = flexure::speed(ctx, j);
  }
}

}  // namespace

Fault Simulator::Impl::check(const State& s) const {
  const SolverSettings& cfg = model.solver;
  Fault f;
  f.step = s.step;
  // The item's name is built only when something is reported: check() runs every step.
  std::string_view prefix;
  const std::string* name = nullptr;
  auto report = [&](Fault::Kind kind, const char* field, double value) {
    if (f.kind != Fault::Kind::None) return;
    f.kind = kind;
    f.item = std::string(prefix) + *name;
    f.field = field;
    f.value = value;
  };
  // A cheap pass over the bodies first, the exact one only if it finds a suspect: x * 0 is NaN
  // exactly when x is not finite, and the squared speeds, against the limits less 1 % (so that
  // rounding cannot hide a runaway), need no square root.
  const double suspect_v2 = 0.99 * cfg.max_linear_speed_mps * cfg.max_linear_speed_mps;
  const double suspect_w2 = 0.99 * cfg.max_angular_speed_radps * cfg.max_angular_speed_radps;
  bool suspect = false;
  for (const BodyState& b : s.bodies) {
    const double pose = b.position_m.sum() + b.orientation.coeffs().sum();
    suspect |= !(pose * 0.0 == 0.0) | !(b.linear_velocity_mps.squaredNorm() <= suspect_v2) |
               !(b.angular_velocity_radps.squaredNorm() <= suspect_w2);
  }
  for (std::size_t i = 0; suspect && i < s.bodies.size() && f.kind == Fault::Kind::None; ++i) {
    const BodyState& b = s.bodies[i];
    prefix = "body ";
    name = &model.bodies[i].name;
    if (!b.position_m.allFinite())
      report(Fault::Kind::NonFinite, "position", b.position_m.norm());
    else if (!b.orientation.coeffs().allFinite())
      report(Fault::Kind::NonFinite, "orientation", b.orientation.norm());
    else if (!b.linear_velocity_mps.allFinite())
      report(Fault::Kind::NonFinite, "linear_velocity", b.linear_velocity_mps.norm());
    else if (!b.angular_velocity_radps.allFinite())
      report(Fault::Kind::NonFinite, "angular_velocity", b.angular_velocity_radps.norm());
    else if (b.linear_velocity_mps.norm() > cfg.max_linear_speed_mps)
      report(Fault::Kind::Runaway, "linear_velocity", b.linear_velocity_mps.norm());
    else if (b.angular_velocity_radps.norm() > cfg.max_angular_speed_radps)
      report(Fault::Kind::Runaway, "angular_velocity", b.angular_velocity_radps.norm());
  }
  for (std::size_t m = 0; m < s.motors.size() && f.kind == Fault::Kind::None; ++m) {
    const MotorState& ms = s.motors[m];
    prefix = "motor ";
    name = &model.motors[m].name;
    if (!std::isfinite(ms.angle_rad))
      report(Fault::Kind::NonFinite, "angle", ms.angle_rad);
    else if (!std::isfinite(ms.speed_radps))
      report(Fault::Kind::NonFinite, "speed", ms.speed_radps);
    else if (std::abs(ms.speed_radps) > cfg.max_motor_speed_radps)
      report(Fault::Kind::Runaway, "speed", ms.speed_radps);
  }
  return f;
}

// ---------------------------------------------------------------------------------------------

Simulator::Simulator(Model model) {
  std::vector<ModelError> errors = validate(model);
  if (!errors.empty()) throw ModelInvalid(std::move(errors));
  impl_ = std::make_unique<Impl>(std::move(model));
}
Simulator::~Simulator() = default;
Simulator::Simulator(Simulator&&) noexcept = default;
Simulator& Simulator::operator=(Simulator&&) noexcept = default;

const Model& Simulator::model() const {
  return impl_->model;
}
State Simulator::initialState() const {
  State s = makeInitialState(impl_->model);
  // The contact store swaps this list with a list of its own each substep: room for both.
  detail::touchCapacity(s.contacts, impl_->contacts.expectedPoints());
  if (detail::reusesManifolds(impl_->model))
    detail::touchCapacity(s.contact_anchors, impl_->contacts.expectedPoints());
  return s;
}

StepReport Simulator::step(State& state) {
  Impl& im = *impl_;
  detail::StepContext ctx = im.context(state);
  StepReport report;
  // A cheap invariant, always checked: indexing below trusts the state's sizes.
  SIM_ASSERT(state.bodies.size() == im.model.bodies.size() &&
                 state.joints.size() == im.model.joints.size() &&
                 state.motors.size() == im.model.motors.size() &&
                 state.repeaters.size() == im.model.repeaters.size(),
             "Simulator::step: the State is not one of this simulator's Model (sizes differ)");
  bool finite_input = false;
  if constexpr (detail::kValidate) finite_input = finiteInput(ctx);
  loadStep(ctx);
  for (ctx.substep = 0; ctx.substep < im.model.solver.substeps; ++ctx.substep) {
    integrateForces(ctx);
    prepare(ctx);
    warmStart(ctx);
    solveVelocity(ctx, report);
    validateFinite(ctx, finite_input, "a value is not finite after the velocity solve");
    integratePositions(ctx);
    solvePosition(ctx, report);
    validateFinite(ctx, finite_input, "a value is not finite after the position solve");
    storeImpulses(ctx);
    validateImpulses(ctx, finite_input);
  }
  storeStep(ctx);
  im.sleep.update(ctx);
  state.step += 1;
  state.time_s = static_cast<double>(state.step) * im.model.solver.time_step_s;
  report.fault = im.check(state);
  // Reported once per episode: a state that recovers (e.g. the caller reset it) re-arms it.
  if (report.fault.kind == Fault::Kind::None) {
    im.fault_reported = false;
  } else if (!im.fault_reported) {
    report.fault_is_new = true;
    im.fault_reported = true;
  }
  return report;
}

JointReaction Simulator::jointReaction(const State& state, int joint) const {
  const Impl& im = *impl_;
  const double h = im.model.solver.time_step_s / im.model.solver.substeps;
  const JointImpulses& imp = state.joints.at(joint).impulses;
  JointReaction r;
  r.force_N = imp.linear / h;
  r.torque_Nm = imp.angular / h;
  double axis = imp.limit + imp.friction + imp.viscous;
  const int m = im.joints.motor[static_cast<std::size_t>(joint)];
  if (m >= 0) axis += state.motors[static_cast<std::size_t>(m)].coupling_impulse;
  for (std::size_t i = 0; i < im.motors.repeater.size(); ++i) {
    if (im.motors.repeater[i].joint == joint) axis += state.repeaters[i].coupling_impulse;
  }
  r.axis_force = axis / h;
  return r;
}

std::vector<ContactReport> Simulator::contacts(const State& state) const {
  std::vector<ContactReport> out;
  contacts(state, out);
  return out;
}

void Simulator::contacts(const State& state, std::vector<ContactReport>& out) const {
  const Impl& im = *impl_;
  const double h = im.model.solver.time_step_s / im.model.solver.substeps;
  out.clear();
  out.reserve(state.contacts.size());
  for (const ContactState& c : state.contacts) {
    ContactReport r;
    r.shape_a = static_cast<int>(c.shape_a);
    r.shape_b = static_cast<int>(c.shape_b);
    r.body_a = im.contacts.shapeOwner(r.shape_a);
    r.body_b = im.contacts.shapeOwner(r.shape_b);
    r.point_m = c.point_m;
    r.normal = c.normal;
    r.separation_m = c.separation_m;
    r.normal_force_N = c.normal_impulse / h;
    r.friction_force_N = c.friction_impulse / h;
    out.push_back(r);
  }
}

double Simulator::measureJointPosition(const State& state, int joint) const {
  const JointDef& def = impl_->model.joints.at(static_cast<std::size_t>(joint));
  return detail::jointCoordinate(def.type, detail::computeFrames(def, state.bodies));
}

void detail::SimulatorTesting::solveBlocksInFullCoordinates(Simulator& sim) {
  Simulator::Impl& im = *sim.impl_;
  for (detail::ReducedBlock& rb : im.blocks.reduced) rb.planned = false;
  std::fill(im.joints.reduced.begin(), im.joints.reduced.end(), 0);
}

void Simulator::setThreads(int threads) {
  impl_->workers.resize(threads);
}

int Simulator::threads() const {
  return impl_->workers.threads();
}

void Simulator::setBodyLoad(int body, const Vec3& force_N, const Vec3& torque_Nm) {
  impl_->bodies.load_force.at(static_cast<std::size_t>(body)) = force_N;
  impl_->bodies.load_torque.at(static_cast<std::size_t>(body)) = torque_Nm;
}

}  // namespace sim::dynamics
