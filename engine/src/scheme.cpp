// Evaluation of the pult and the functional scheme. Blocks arrive sorted so that every input is
// computed before it is read (integrator and delay outputs come from their memory, so they may
// close loops); one pass in order evaluates the whole diagram.
#include <engine/scheme.h>

#include <algorithm>
#include <cmath>

namespace sim::engine {

double ControlDef::admit(double value) const {
  if (std::isnan(value)) return initial;
  switch (kind) {
    case ControlKind::Axis: return std::clamp(value, min, max);
    case ControlKind::Button:
    case ControlKind::Toggle: return value >= 0.5 ? 1.0 : 0.0;
    case ControlKind::Switch:
      return std::clamp(std::round(value), 0.0, static_cast<double>(positions - 1));
  }
  return initial;
}

int PultDef::find(const std::string& name) const {
  for (std::size_t i = 0; i < controls.size(); ++i)
    if (controls[i].name == name) return static_cast<int>(i);
  return -1;
}

PultState initialPult(const PultDef& pult) {
  PultState state;
  for (const ControlDef& c : pult.controls) state.values.push_back(c.admit(c.initial));
  return state;
}

int SchemeDef::find(const std::string& block) const {
  for (std::size_t i = 0; i < blocks.size(); ++i)
    if (blocks[i].name == block) return static_cast<int>(i);
  return -1;
}

SchemeState initialSchemeState(const SchemeDef& scheme) {
  SchemeState state;
  state.outputs.assign(scheme.blocks.size(), 0.0);
  state.memory.assign(2 * scheme.blocks.size(), 0.0);
  for (std::size_t i = 0; i < scheme.blocks.size(); ++i) {
    const BlockDef& b = scheme.blocks[i];
    switch (b.type) {
      case BlockType::Integrator:
      case BlockType::Latch:
        state.memory[2 * i] = b.initial;
        state.outputs[i] = b.initial;
        break;
      case BlockType::Constant: state.outputs[i] = b.value; break;
      default: break;
    }
  }
  return state;
}

double signalValue(const SignalRef& ref, const SchemeState& state, const PultState& pult,
                   const std::vector<double>& sensors) {
  switch (ref.source) {
    case SignalRef::Source::Constant: return ref.constant;
    case SignalRef::Source::Pult: return pult.values[ref.index];
    case SignalRef::Source::Block: return state.outputs[ref.index];
    case SignalRef::Source::Sensor: return sensors[ref.index];
  }
  return 0.0;
}

namespace {

double lookup(const BlockDef& b, double x) {
  const auto& xs = b.table_x;
  if (x <= xs.front()) return b.table_y.front();
  if (x >= xs.back()) return b.table_y.back();
  const auto hi = static_cast<std::size_t>(std::upper_bound(xs.begin(), xs.end(), x) - xs.begin());
  const std::size_t lo = hi - 1;
  const double t = (x - xs[lo]) / (xs[hi] - xs[lo]);
  return b.table_y[lo] + t * (b.table_y[hi] - b.table_y[lo]);
}

double deadZone(const BlockDef& b, double u) {
  if (std::abs(u) <= b.width) return 0.0;
  const double shifted = u - std::copysign(b.width, u);
  // Rescaled so that +-1 still reaches +-1 (a stick's full travel stays full speed).
  return b.rescale && b.width < 1.0 ? shifted / (1.0 - b.width) : shifted;
}

void evaluateOrdered(const SchemeDef& scheme, SchemeState& state, const PultState& pult,
                     const std::vector<double>& sensors, double dt_s);

}  // namespace

bool outputsFromMemory(BlockType type) {
  return type == BlockType::Integrator || type == BlockType::Delay;
}

// Integrators and delays output their memory, which is what lets them close feedback loops:
// their outputs are set first, every other block follows in dependency order, and their memory
// is updated last from this evaluation's inputs (forward Euler for the integrator).
void evaluateScheme(const SchemeDef& scheme, SchemeState& state, const PultState& pult,
                    const std::vector<double>& sensors, double dt_s) {
  const std::size_t n = scheme.blocks.size();
  for (std::size_t i = 0; i < n; ++i) {
    const BlockDef& b = scheme.blocks[i];
    if (!outputsFromMemory(b.type)) continue;
    if (b.type == BlockType::Integrator && b.inputs.size() > 1 &&
        signalValue(b.inputs[1], state, pult, sensors) > 0.5) {
      state.memory[2 * i] = b.initial;  // reset
    }
    state.outputs[i] = state.memory[2 * i];
  }
  evaluateOrdered(scheme, state, pult, sensors, dt_s);
  for (std::size_t i = 0; i < n; ++i) {
    const BlockDef& b = scheme.blocks[i];
    if (!outputsFromMemory(b.type)) continue;
    const double u = signalValue(b.inputs[0], state, pult, sensors);
    double& m = state.memory[2 * i];
    m = b.type == BlockType::Delay ? u : std::clamp(m + b.k * u * dt_s, b.lo, b.hi);
  }
}

namespace {

void evaluateOrdered(const SchemeDef& scheme, SchemeState& state, const PultState& pult,
                     const std::vector<double>& sensors, double dt_s) {
  for (std::size_t i = 0; i < scheme.blocks.size(); ++i) {
    const BlockDef& b = scheme.blocks[i];
    auto in = [&](std::size_t k) { return signalValue(b.inputs[k], state, pult, sensors); };
    double& m0 = state.memory[2 * i];
    double& m1 = state.memory[2 * i + 1];
    double y = 0.0;
    switch (b.type) {
      case BlockType::Constant: y = b.value; break;
      case BlockType::Gain: y = b.k * in(0); break;
      case BlockType::Sum:
        for (std::size_t k = 0; k < b.inputs.size(); ++k) y += b.weights[k] * in(k);
        break;
      case BlockType::Product:
        y = 1.0;
        for (std::size_t k = 0; k < b.inputs.size(); ++k) y *= in(k);
        break;
      case BlockType::Saturation: y = std::clamp(in(0), b.lo, b.hi); break;
      case BlockType::DeadZone: y = deadZone(b, in(0)); break;
      case BlockType::Abs: y = std::abs(in(0)); break;
      case BlockType::Sqrt: y = std::sqrt(std::max(0.0, in(0))); break;
      case BlockType::Min:
      case BlockType::Max:
        y = in(0);
        for (std::size_t k = 1; k < b.inputs.size(); ++k)
          y = b.type == BlockType::Min ? std::min(y, in(k)) : std::max(y, in(k));
        break;
      case BlockType::Norm:
        for (std::size_t k = 0; k < b.inputs.size(); ++k) y += in(k)*in(k);
        y = std::sqrt(y);
        break;
      case BlockType::Deadband: {
        const double x = in(0);
        y = std::abs(x) <= b.width ? 0.0 : x;
        break;
      }
      case BlockType::RateLimiter: {
        // m0: last output, m1: 1 once started (the first evaluation takes the input as is).
        const double step = b.rate * dt_s;
        y = m1 == 0.0 ? in(0) : std::clamp(in(0), m0 - step, m0 + step);
        m0 = y;
        m1 = 1.0;
        break;
      }
      case BlockType::Integrator:
      case BlockType::Delay:
        y = state.outputs[i];  // set from memory before the pass
        break;
      case BlockType::Pid: {
        // m0: integral of the error, m1: previous measurement (derivative on measurement, so a
        // setpoint step gives no kick).
        const double error = in(0) - in(1);
        const double derivative = dt_s > 0.0 ? -(in(1) - m1) / dt_s : 0.0;
        const double unclamped = b.kp * error + b.ki * m0 + b.kd * derivative;
        y = std::clamp(unclamped, b.lo, b.hi);
        // Anti-windup: integrate only while the output is not pushed further into saturation.
        const bool winding = (unclamped > b.hi && error > 0.0) || (unclamped < b.lo && error < 0.0);
        if (!winding) m0 += error * dt_s;
        m1 = in(1);
        break;
      }
      case BlockType::Lag: {
        // Exact for an input held over dt: y -> u with time constant tau.
        const double a = b.tau > 0.0 ? -std::expm1(-dt_s / b.tau) : 1.0;
        y = state.outputs[i] + a * (in(0) - state.outputs[i]);
        break;
      }
      case BlockType::Lookup: y = lookup(b, in(0)); break;
      case BlockType::Comparator: {
        const double a = in(0), ref = in(1), h = 0.5 * b.hysteresis;
        y = a > ref + h ? 1.0 : (a < ref - h ? 0.0 : state.outputs[i]);
        break;
      }
      case BlockType::Switch: y = in(0) > 0.5 ? in(1) : in(2); break;
      case BlockType::Selector: {
        const double choices = static_cast<double>(b.inputs.size() - 1);
        const double k = std::clamp(std::round(in(0)), 0.0, choices - 1.0);
        y = in(1 + static_cast<std::size_t>(k));
        break;
      }
      case BlockType::Latch: {
        // m0: latched value, m1: previous input level.
        const bool high = in(0) > 0.5;
        if (high && m1 == 0.0) m0 = m0 > 0.5 ? 0.0 : 1.0;
        m1 = high ? 1.0 : 0.0;
        if (b.inputs.size() > 1 && in(1) > 0.5) m0 = b.initial;
        y = m0;
        break;
      }
      case BlockType::Timer:
        m0 = in(0) > 0.5 ? m0 + dt_s : 0.0;
        y = m0;
        break;
    }
    state.outputs[i] = y;
  }
}

}  // namespace

}  // namespace sim::engine
