// Stepping a model: the full-coordinate sequential-impulse solver (SPEC §2).
//
// One step (time_step_s) runs these stages per substep (SolverSettings::substeps), each over every
// constraint kind (Simulator::step in src/simulator.cpp):
//   integrate forces -> prepare -> warm start -> solve velocity -> integrate positions
//   -> solve position -> store impulses,
// then once per step: store the bodies, sleep, and the fault check (numerical trouble is reported
// in StepReport, never thrown). Restitution is no stage of its own: a contact's bounce is its
// velocity target, set in prepare. docs/dynamics.md describes the stages and the constraint kinds.
// Motors are one-degree-of-freedom rotors coupled to their joints by constraint rows; their
// characteristic Mp (u - w_m / w_xx) is a soft velocity row whose damping part is integrated
// exactly for the rotor plus the load it sees (docs/dynamics.md, "Exact characteristic").
#pragma once

#include <dynamics/model.h>
#include <dynamics/state.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace sim::dynamics {

/// Why a solve (velocity or position) of a substep stopped, in rising order of concern: a step's
/// report keeps the largest over its substeps (docs/dynamics.md, "How each solve ends").
enum class SolveEnd {
  NoWork,       ///< Nothing to solve: no rows (no contacts, joints, motors or repeaters).
  Tolerance,    ///< A sweep (pass) found every row within the solve's tolerance.
  IterationCap  ///< The sweep (pass) cap ended the solve first.
};

/// "no work", "tolerance", "cap".
const char* solveEndName(SolveEnd end);

/// The kind of row that changed most in the velocity solve's last sweep.
enum class RowKind { None, JointAxis, Contact, MotorBlock, Joint };

/// "none", "joint axis", "contact", "motor block", "joint".
const char* rowKindName(RowKind kind);

/// Numerical trouble found by the per-step check.
struct Fault {
  enum class Kind { None, NonFinite, Runaway };
  Kind kind = Kind::None;
  std::uint64_t step = 0;
  std::string item;   ///< e.g. "body link3" or "motor drive".
  std::string field;  ///< e.g. "angular_velocity".
  double value = 0.0;
  std::string describe() const;
};

struct StepReport {
  int velocity_iterations = 0;   ///< Largest count used by any substep (0: no work).
  double velocity_residual = 0;  ///< Largest impulse change in the last sweep (N s / N m s).
  SolveEnd velocity_end = SolveEnd::NoWork;        ///< The largest end over the substeps.
  RowKind velocity_residual_kind = RowKind::None;  ///< Where velocity_residual was found.
  int position_iterations = 0;
  /// The position solve's residual: the largest error its last pass found (contacts' penetration
  /// beyond the slop, joints, limits, couplings; m or rad), largest over the substeps.
  double position_error = 0;
  SolveEnd position_end = SolveEnd::NoWork;  ///< The largest end over the substeps.
  /// Motor blocks solved in their rotors' coordinates (docs/dynamics.md: a tree of hinges and
  /// sliders on a static base, each coupled rigidly to a rotor), largest over the substeps.
  int reduced_blocks = 0;
  Fault fault;                ///< kind != None when the state is unhealthy after this step.
  bool fault_is_new = false;  ///< True only the first time a fault is reported.
};

/// Reaction of a joint on body_b at its anchor, averaged over the last substep (world axes).
struct JointReaction {
  Vec3 force_N = Vec3::Zero();
  Vec3 torque_Nm = Vec3::Zero();
  double axis_force = 0.0;  ///< Limit + friction + viscous + motor/repeater along the axis.
};

/// A contact point after the last step, for sensors and the HUD. Forces are on body_b (body_a
/// gets the opposite), averaged over the last substep.
struct ContactReport {
  int body_a = 0, body_b = 0;
  int shape_a = 0, shape_b = 0;  ///< Shape numbers (bodies' shape lists in order).
  Vec3 point_m = Vec3::Zero();
  Vec3 normal = Vec3::UnitZ();  ///< Unit, from body_a toward body_b.
  double separation_m = 0.0;    ///< Negative when penetrating.
  double normal_force_N = 0.0;
  Vec3 friction_force_N = Vec3::Zero();
};

namespace detail {
struct SimulatorTesting;  // dynamics/src/simulator_testing.h: reference paths for tests
}  // namespace detail

class ModelInvalid : public std::invalid_argument {
 public:
  explicit ModelInvalid(std::vector<ModelError> errors);
  const std::vector<ModelError>& errors() const { return errors_; }

 private:
  std::vector<ModelError> errors_;
};

class Simulator {
 public:
  /// Validates and compiles the model; throws ModelInvalid listing every problem.
  explicit Simulator(Model model);
  ~Simulator();
  Simulator(Simulator&&) noexcept;
  Simulator& operator=(Simulator&&) noexcept;

  const Model& model() const;
  State initialState() const;

  /// Advances `state` by model().solver.time_step_s. Never throws on numerical trouble: the
  /// report carries the fault and the caller decides to stop or reset.
  StepReport step(State& state);

  /// Joint reaction derived from the state's stored impulses.
  JointReaction jointReaction(const State& state, int joint) const;
  /// Hinge angle (rad, wrapped to (-pi, pi]) or prismatic displacement (m) computed from poses.
  double measureJointPosition(const State& state, int joint) const;
  /// A constant external force (at the centre of mass) and torque on a body, world axes, applied
  /// every substep until changed (a test load or a user push; not part of State).
  void setBodyLoad(int body, const Vec3& force_N, const Vec3& torque_Nm);
  /// Threads the step may use, the caller's included (>= 1; default 1). The parallel parts
  /// split work that shares nothing, so every count gives the same state, bit for bit.
  void setThreads(int threads);
  int threads() const;
  /// The contacts stored in `state` (those of the last substep of the last step).
  std::vector<ContactReport> contacts(const State& state) const;
  /// The same into `out` (replacing what it held), reusing its memory: for a caller that asks
  /// every step (a site's resting contacts are thousands of reports, an allocation each time).
  void contacts(const State& state, std::vector<ContactReport>& out) const;

 private:
  friend struct detail::SimulatorTesting;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sim::dynamics
