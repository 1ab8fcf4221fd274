#include <engine/run.h>
#include <engine/session.h>
#include <input/input_system.h>

#include "session_outputs.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>

namespace sim::engine {

std::uint64_t stepCount(double duration_s, double time_step_s) {
  if (!(duration_s > 0.0)) return 0;
  // A duration that is a whole number of steps up to rounding gives exactly that many steps.
  const double steps = duration_s / time_step_s;
  return static_cast<std::uint64_t>(std::ceil(steps - 1e-9 * steps));
}

RunResult runHeadless(const Scene& scene, const RunOptions& options) {
  if (options.trace_every < 1) throw std::invalid_argument("trace_every must be at least 1");
  Session session(scene);
  session.setThreads(options.threads);

  detail::SessionOutputs outputs(session, options.trace_path, options.trace_every,
                                 options.record_path, options.record_header);
  outputs.setStepObserver(options.after_step);
  RunResult result;
  result.threads = session.threads();
  const std::uint64_t steps = std::isinf(options.duration_s)
                                  ? std::numeric_limits<std::uint64_t>::max()
                                  : stepCount(options.duration_s, scene.model.solver.time_step_s);
  const SessionState initial = session.state();
  const auto steps_per_frame = static_cast<std::uint64_t>(scene.stepsPerFrame());
  const double frame_dt = static_cast<double>(steps_per_frame) * scene.model.solver.time_step_s;
  FramePacer pacer(frame_dt, options.realtime);
  // A reset would make the recording jump: refused while recording.
  detail::OperatorFrame operator_frame(options.operator_events, options.input, options.control,
                                       options.on_operator_key, options.record_path.empty());
  RunControl& control = operator_frame.control();
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const std::vector<std::string> no_notes;
  try {
    bool healthy = true;
    while (result.steps < steps && healthy) {
      if (options.interrupt && options.interrupt->load()) {
        result.interrupted = true;
        break;
      }
      // One frame: a whole number of fixed steps.
      const auto frame_start = Clock::now();
      pacer.beginFrame();
      if (options.before_frame) options.before_frame(result.frames);
      operator_frame.takeEvents();
      operator_frame.sampleInto(session, frame_dt);
      if (options.before_steps) options.before_steps(session);
      if (control.reset) {
        control.reset = false;
        if (options.record_path.empty()) {
          session.restore(initial);
        } else {
          control.reset_refused = true;
        }
      }
      const std::uint64_t frame_steps = operator_frame.runsSteps() ? steps_per_frame : 0;
      double physics_s = 0.0;
      for (std::uint64_t k = 0; k < frame_steps && result.steps < steps && healthy; ++k) {
        const auto t0 = Clock::now();
        healthy = outputs.step(session, result);
        physics_s += std::chrono::duration<double>(Clock::now() - t0).count();
      }
      ++result.frames;
      result.physics_time.add(physics_s);
      result.scheme_time.add(session.takeSchemeSeconds());
      result.paused = control.paused;
      result.reset_refused = control.reset_refused;
      if (options.after_frame &&
          !detail::observeFrame(options.after_frame, session, result, pacer, start, no_notes)) {
        healthy = false;
      }
      result.frame_time.add(std::chrono::duration<double>(Clock::now() - frame_start).count());
      pacer.endFrame();
      if (frame_steps == 0) {
        result.paused_wall_s += std::chrono::duration<double>(Clock::now() - frame_start).count();
      }
    }
    result.overruns = pacer.overruns();
    result.resyncs = pacer.resyncs();
    result.lost_s = pacer.lostSeconds();
  } catch (...) {
    outputs.finish(session, result);
    throw;
  }
  result.wall_time_s = std::chrono::duration<double>(Clock::now() - start).count();
  outputs.finish(session, result);
  result.sim_time_s = session.time();
  result.final_state = session.dynamics();
  return result;
}

void SolveStats::add(dynamics::SolveEnd end, double residual_at_end, dynamics::RowKind kind) {
  switch (end) {
    case dynamics::SolveEnd::NoWork: ++no_work; break;
    case dynamics::SolveEnd::Tolerance: ++tolerance; break;
    case dynamics::SolveEnd::IterationCap:
      ++cap;
      ++cap_by_kind[static_cast<std::size_t>(kind)];
      break;
  }
  residual.add(residual_at_end);
}

void RunResult::record(const dynamics::StepReport& report) {
  max_velocity_iterations = std::max(max_velocity_iterations, report.velocity_iterations);
  if (report.velocity_end == dynamics::SolveEnd::IterationCap) ++steps_at_iteration_cap;
  max_position_error = std::max(max_position_error, report.position_error);
  velocity_solve.add(report.velocity_end, report.velocity_residual, report.velocity_residual_kind);
  position_solve.add(report.position_end, report.position_error, dynamics::RowKind::None);
}

std::string formatSolveSummary(const dynamics::SolverSettings& solver, const RunResult& result,
                               const std::string& indent) {
  std::string text;
  auto out = std::back_inserter(text);
  auto solve = [&](const char* name, const SolveStats& s, double tolerance, int cap,
                   const char* unit, const std::string& also) {
    fmt::format_to(out,
                   "{}{} solve: steps ended by tolerance {}, cap {}, no work {} (tolerance {:g} "
                   "{}{}, cap {}); residual at the end p50 {:.3g}  p99 {:.3g}  max {:.3g} {}\n",
                   indent, name, s.tolerance, s.cap, s.no_work, tolerance, unit, also, cap,
                   s.residual.quantile(0.5), s.residual.p99(), s.residual.max(), unit);
  };
  const std::string velocity_change =
      solver.velocity_change_tolerance > 0.0
          ? fmt::format(" or velocities within {:g} over two sweeps",
                        solver.velocity_change_tolerance)
          : std::string();
  solve("velocity", result.velocity_solve, solver.velocity_tolerance, solver.velocity_iterations,
        "N s", velocity_change);
  if (result.velocity_solve.cap > 0) {
    fmt::format_to(
        out, "{}  steps at the cap by the row kind that changed most in the last sweep:", indent);
    for (std::size_t k = 0; k < result.velocity_solve.cap_by_kind.size(); ++k) {
      if (result.velocity_solve.cap_by_kind[k] == 0) continue;
      fmt::format_to(out, " {} {}", dynamics::rowKindName(static_cast<dynamics::RowKind>(k)),
                     result.velocity_solve.cap_by_kind[k]);
    }
    text += '\n';
  }
  solve("position", result.position_solve, solver.position_tolerance_m, solver.position_iterations,
        "m", "");
  return text;
}

std::string formatSummary(const Scene& scene, const RunResult& result) {
  const auto& model = scene.model;
  const auto& state = result.final_state;
  std::string text;
  auto out = std::back_inserter(text);
  fmt::format_to(out, "scene {} ({})\n", scene.name, scene.file);
  fmt::format_to(
      out, "steps {}  sim time {:.6g} s  wall time {:.6g} s  real-time factor {:.4g}  threads {}\n",
      result.steps, result.sim_time_s, result.wall_time_s, result.realTimeFactor(), result.threads);
  for (std::size_t j = 0; j < model.joints.size() && j < state.joints.size(); ++j) {
    fmt::format_to(out, "joint {:<16} angle {:+.9g}  speed {:+.9g}\n", model.joints[j].name,
                   state.joints[j].position, state.joints[j].speed);
  }
  for (std::size_t m = 0; m < model.motors.size() && m < state.motors.size(); ++m) {
    fmt::format_to(out,
                   "motor {:<16} angle {:+.9g}  speed {:+.9g}  voltage {:+.4g}  torque {:+.6g}\n",
                   model.motors[m].name, state.motors[m].angle_rad, state.motors[m].speed_radps,
                   state.motors[m].voltage, state.motors[m].torque_Nm);
  }
  fmt::format_to(out,
                 "solver: max velocity iterations {} (cap {}), steps at cap {}, "
                 "max position error {:.3g}\n",
                 result.max_velocity_iterations, model.solver.velocity_iterations,
                 result.steps_at_iteration_cap, result.max_position_error);
  text += formatSolveSummary(model.solver, result, "  ");
  if (result.frames > 0) {
    auto ms = [](const TimingStats& t) {
      return fmt::format("mean {:.3f}  p99 {:.3f}  max {:.3f} ms", 1e3 * t.mean(), 1e3 * t.p99(),
                         1e3 * t.max());
    };
    fmt::format_to(
        out, "frames {} at {:g} Hz, overruns {} (frames whose work overran), resyncs {}{}\n",
        result.frames, scene.frame_rate_hz, result.overruns, result.resyncs,
        result.resyncs > 0 ? fmt::format(" ({:.3g} s lost)", result.lost_s) : std::string());
    fmt::format_to(out, "frame time  physics {}\n", ms(result.physics_time));
    fmt::format_to(out, "            scheme  {}\n", ms(result.scheme_time));
    if (result.render_time.count() > 0) {
      fmt::format_to(out, "            view    {}\n", ms(result.render_time));
    }
    fmt::format_to(out, "            total   {}\n", ms(result.frame_time));
  }
  if (result.drawn_frames > 0) {
    fmt::format_to(
        out,
        "drawn frames {} ({:.3g} per second), draw time mean {:.3f}  p99 {:.3f}  max {:.3f} ms\n",
        result.drawn_frames,
        result.draw_wall_s > 0.0 ? static_cast<double>(result.drawn_frames) / result.draw_wall_s
                                 : 0.0,
        1e3 * result.draw_time.mean(), 1e3 * result.draw_time.p99(), 1e3 * result.draw_time.max());
  }
  if (result.trace_rows > 0) fmt::format_to(out, "trace: {} rows\n", result.trace_rows);
  if (result.fault) fmt::format_to(out, "FAULT: {}\n", result.fault->describe());
  return text;
}

}  // namespace sim::engine
