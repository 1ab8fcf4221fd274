// Pins the pult and the functional scheme (engine/include/engine/scheme.h, docs/scenes.md):
// every block type against outputs computed by hand, evaluation order and feedback through
// memory blocks, and load errors that name the block and the line.
#include <engine/scene.h>
#include <engine/scheme.h>
#include <engine/session.h>

#include "scene_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace sim::engine {
namespace {

// One hinged link with a motor, a pult of four controls; tests append a scheme at the end.
const std::string kBase = "solver:\n  time_step: 0.01\n" + testing::hingedLinkScene() + R"(pult:
  - {name: stick, type: axis, min: -1, max: 1}
  - {name: button, type: button}
  - {name: mode, type: switch, positions: 3}
  - {name: power, type: toggle, initial: 1}
)";

// Line of the first block: kBase has 13 lines, then "scheme:", "  blocks:".
constexpr int kFirstBlockLine = 16;

Scene sceneWith(const std::string& blocks, const std::string& outputs = "") {
  std::string yaml = kBase + "scheme:\n  blocks:\n" + blocks;
  if (!outputs.empty()) yaml += "  outputs:\n" + outputs;
  return loadSceneFromString(yaml, "test.yaml");
}

// Evaluates a scheme alone: pult values given, no sensors, fixed dt.
struct Harness {
  Scene scene;
  SchemeState state;
  PultState pult;
  std::vector<double> sensors;
  explicit Harness(const std::string& blocks) : scene(sceneWith(blocks)) {
    state = initialSchemeState(scene.scheme);
    pult = initialPult(scene.pult);
    sensors.assign(scene.scheme.sensors.size(), 0.0);
  }
  double eval(double dt = 0.1) {
    evaluateScheme(scene.scheme, state, pult, sensors, dt);
    return out("y");
  }
  double out(const std::string& block) const {
    return state.outputs[static_cast<std::size_t>(scene.scheme.find(block))];
  }
  void set(const std::string& control, double v) {
    const int c = scene.pult.find(control);
    pult.values[static_cast<std::size_t>(c)] =
        scene.pult.controls[static_cast<std::size_t>(c)].admit(v);
  }
};

TEST(Pult, ControlsAdmitOnlyTheirValues) {
  const Scene scene = sceneWith("    - {name: y, type: constant, value: 0}\n");
  const auto& c = scene.pult.controls;
  EXPECT_EQ(c[0].admit(1.7), 1.0);  // axis clamps
  EXPECT_EQ(c[0].admit(-0.25), -0.25);
  EXPECT_EQ(c[1].admit(0.49), 0.0);  // button threshold 0.5
  EXPECT_EQ(c[1].admit(0.5), 1.0);
  EXPECT_EQ(c[2].admit(1.6), 2.0);  // switch rounds and clamps to 0..2
  EXPECT_EQ(c[2].admit(7.0), 2.0);
  EXPECT_EQ(c[3].admit(std::nan("")), 1.0);  // NaN -> initial
  EXPECT_EQ(initialPult(scene.pult).values, (std::vector<double>{0.0, 0.0, 0.0, 1.0}));
}

TEST(Scheme, StatelessBlocks) {
  Harness h(R"(    - {name: g, type: gain, input: pult.stick, k: -2}
    - {name: s, type: sum, inputs: [g, 1.5, pult.stick], weights: [1, 2, -1]}
    - {name: p, type: product, inputs: [s, pult.stick, 3]}
    - {name: sat, type: saturation, input: p, min: -0.5, max: 0.25}
    - {name: dz, type: dead_zone, input: pult.stick, width: 0.2}
    - {name: dzr, type: dead_zone, input: pult.stick, width: 0.2, rescale: true}
    - {name: lut, type: lookup, input: pult.stick, table: [[-1, 10], [0, 0], [0.5, 4]]}
    - {name: sw, type: switch, condition: pult.button, then: 7, else: g}
    - {name: sel, type: selector, index: pult.mode, inputs: [11, 22, 33]}
    - {name: y, type: constant, value: 42}
)");
  h.set("stick", 0.4);
  h.eval();
  EXPECT_DOUBLE_EQ(h.out("g"), -0.8);
  EXPECT_DOUBLE_EQ(h.out("s"), -0.8 + 3.0 - 0.4);  // 1.8
  EXPECT_DOUBLE_EQ(h.out("p"), 1.8 * 0.4 * 3.0);   // 2.16
  EXPECT_DOUBLE_EQ(h.out("sat"), 0.25);
  EXPECT_DOUBLE_EQ(h.out("dz"), 0.2);    // 0.4 - 0.2
  EXPECT_DOUBLE_EQ(h.out("dzr"), 0.25);  // 0.2 / 0.8
  EXPECT_DOUBLE_EQ(h.out("lut"), 3.2);   // 0 + 0.8 * 4
  EXPECT_DOUBLE_EQ(h.out("sw"), -0.8);
  EXPECT_DOUBLE_EQ(h.out("sel"), 11.0);
  EXPECT_DOUBLE_EQ(h.out("y"), 42.0);
  h.set("stick", -0.1);
  h.set("button", 1.0);
  h.set("mode", 2.0);
  h.eval();
  EXPECT_DOUBLE_EQ(h.out("dz"), 0.0);   // inside the dead zone
  EXPECT_DOUBLE_EQ(h.out("lut"), 1.0);  // between -1 -> 10 and 0 -> 0
  EXPECT_DOUBLE_EQ(h.out("sw"), 7.0);
  EXPECT_DOUBLE_EQ(h.out("sel"), 33.0);
  h.set("stick", -1.0);
  h.eval();
  EXPECT_DOUBLE_EQ(h.out("lut"), 10.0);  // clamped at the table's end
  EXPECT_DOUBLE_EQ(h.out("dzr"), -1.0);  // full travel still reaches full output
}

TEST(Scheme, IntegratorIsForwardEulerWithLimitsAndReset) {
  Harness h(
      "    - {name: y, type: integrator, input: pult.stick, k: 2, initial: 1, max: 1.5, reset: "
      "pult.button}\n");
  h.set("stick", 1.0);
  EXPECT_DOUBLE_EQ(h.eval(0.1), 1.0);  // output before this evaluation's update
  EXPECT_DOUBLE_EQ(h.eval(0.1), 1.2);
  EXPECT_DOUBLE_EQ(h.eval(0.1), 1.4);
  EXPECT_DOUBLE_EQ(h.eval(0.1), 1.5);  // clamped at max
  h.set("button", 1.0);
  EXPECT_DOUBLE_EQ(h.eval(0.1), 1.0);  // reset to initial
}

TEST(Scheme, RateLimiterLagAndDelay) {
  Harness h(R"(    - {name: rl, type: rate_limiter, input: pult.stick, rate: 2}
    - {name: lag, type: lag, input: pult.stick, tau: 0.5}
    - {name: y, type: delay, input: pult.stick}
)");
  h.eval(0.1);  // first evaluation takes the input (0)
  h.set("stick", 1.0);
  h.eval(0.1);
  EXPECT_DOUBLE_EQ(h.out("rl"), 0.2);                      // 2 per s over 0.1 s
  EXPECT_NEAR(h.out("lag"), 1.0 - std::exp(-0.2), 1e-15);  // exact step response
  EXPECT_DOUBLE_EQ(h.out("y"), 0.0);                       // previous input
  h.eval(0.1);
  EXPECT_DOUBLE_EQ(h.out("rl"), 0.4);
  EXPECT_NEAR(h.out("lag"), 1.0 - std::exp(-0.4), 1e-15);
  EXPECT_DOUBLE_EQ(h.out("y"), 1.0);
}

TEST(Scheme, PidWithAntiWindup) {
  // Setpoint 1, measurement from the stick; kp 0.5, ki 10, output in [-1, 1].
  Harness h(
      "    - {name: y, type: pid, setpoint: 1, measurement: pult.stick, kp: 0.5, ki: 10, kd: "
      "0.1}\n");
  h.set("stick", 0.0);
  // First: e = 1, integral 0 -> 0.5, derivative on measurement (0 - 0) = 0.
  EXPECT_DOUBLE_EQ(h.eval(0.1), 0.5);
  // Second: integral 0.1 -> 0.5 + 1 = 1.5 -> clamped to 1; winding: the integral stays 0.1.
  EXPECT_DOUBLE_EQ(h.eval(0.1), 1.0);
  EXPECT_DOUBLE_EQ(h.state.memory[0], 0.1);
  // The measurement jumps to 0.8: e = 0.2; derivative -(0.8 - 0)/0.1 = -8 -> 0.1 + 1 - 0.8 = 0.3.
  h.set("stick", 0.8);
  EXPECT_NEAR(h.eval(0.1), 0.3, 1e-15);
}

TEST(Scheme, ComparatorLatchAndTimer) {
  Harness h(
      R"(    - {name: cmp, type: comparator, input: pult.stick, reference: 0.5, hysteresis: 0.2}
    - {name: latch, type: latch, input: pult.button}
    - {name: y, type: timer, input: pult.button}
)");
  auto step = [&](double stick, double button) {
    h.set("stick", stick);
    h.set("button", button);
    h.eval(0.25);
  };
  step(0.55, 0);  // inside the band from the start: stays 0
  EXPECT_EQ(h.out("cmp"), 0.0);
  step(0.61, 1);  // above 0.6: on; button pressed: latch on, timer 0.25
  EXPECT_EQ(h.out("cmp"), 1.0);
  EXPECT_EQ(h.out("latch"), 1.0);
  EXPECT_EQ(h.out("y"), 0.25);
  step(0.45, 1);  // inside the band: held on; button held: no new edge, timer 0.5
  EXPECT_EQ(h.out("cmp"), 1.0);
  EXPECT_EQ(h.out("latch"), 1.0);
  EXPECT_EQ(h.out("y"), 0.5);
  step(0.39, 0);  // below 0.4: off; released: timer resets
  EXPECT_EQ(h.out("cmp"), 0.0);
  EXPECT_EQ(h.out("y"), 0.0);
  step(0.0, 1);  // second press toggles the latch off
  EXPECT_EQ(h.out("latch"), 0.0);
}

TEST(Scheme, BlocksAreSortedSoInputsComeFirst) {
  // Written in reverse order; each reads the next one down.
  Harness h(R"(    - {name: y, type: gain, input: b, k: 2}
    - {name: b, type: gain, input: a, k: 3}
    - {name: a, type: gain, input: pult.stick, k: 5}
)");
  h.set("stick", 1.0);
  EXPECT_DOUBLE_EQ(h.eval(), 30.0);  // in one evaluation, not three
}

TEST(Scheme, AnIntegratorClosesAFeedbackLoop) {
  // y' = -y through an integrator: exact discrete answer of forward Euler, (1 - dt)^n.
  Harness h(R"(    - {name: y, type: integrator, input: neg, initial: 1}
    - {name: neg, type: gain, input: y, k: -1}
)");
  for (int i = 0; i < 5; ++i) h.eval(0.1);
  EXPECT_NEAR(h.out("y"), std::pow(0.9, 4), 1e-15);  // the output lags its state by one update
  EXPECT_NEAR(h.state.memory[2 * static_cast<std::size_t>(h.scene.scheme.find("y"))],
              std::pow(0.9, 5), 1e-15);
}

TEST(Scheme, SensorsAndOutputsDriveTheMotor) {
  // A P controller on the hinge angle drives the motor to 0.3 rad.
  const Scene scene = sceneWith(
      "    - {name: u, type: pid, setpoint: 0.3, measurement: joint.hinge.angle, kp: 20}\n",
      "    - {motor: drive, signal: u}\n");
  Session session(scene);
  EXPECT_EQ(session.dynamics().motors[0].voltage, 0.0);
  session.step();
  EXPECT_DOUBLE_EQ(session.dynamics().motors[0].voltage, 1.0);  // 20 * 0.3 clamped
  for (int i = 0; i < 1000; ++i) session.step();
  EXPECT_NEAR(session.dynamics().joints[0].position, 0.3, 0.01);
}

// Expects a load error at `line` naming `key`, with `words` in the message.
void expectError(const std::string& blocks, const std::string& outputs, int line,
                 const std::string& key, const std::string& words) {
  try {
    sceneWith(blocks, outputs);
    ADD_FAILURE() << "no error; expected " << words;
  } catch (const SceneError& e) {
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_EQ(e.key(), key) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("test.yaml"), std::string::npos) << e.what();
  }
}

TEST(SchemeErrors, AlgebraicLoopNamesItsBlocks) {
  expectError(R"(    - {name: ok, type: gain, input: pult.stick, k: 1}
    - {name: a, type: sum, inputs: [ok, b]}
    - {name: b, type: gain, input: a, k: 0.5}
)",
              "", kFirstBlockLine + 1, "scheme.blocks[a]", "algebraic loop through blocks a, b");
}

TEST(SchemeErrors, MissingSignalUnknownTypeMissingInput) {
  expectError("    - {name: a, type: gain, input: nothing, k: 1}\n", "", kFirstBlockLine,
              "scheme.blocks[a].input", "no signal \"nothing\"");
  expectError("    - {name: a, type: gain, input: joint.elbow.angle, k: 1}\n", "", kFirstBlockLine,
              "scheme.blocks[a].input", "no joint named \"elbow\"");
  expectError("    - {name: a, type: gain, input: pult.pedal, k: 1}\n", "", kFirstBlockLine,
              "scheme.blocks[a].input", "no pult control \"pedal\"");
  expectError("    - {name: a, type: differentiator, input: pult.stick}\n", "", kFirstBlockLine,
              "scheme.blocks[a].type", "unknown block type \"differentiator\"");
  expectError("    - {name: a, type: gain, k: 1}\n", "", kFirstBlockLine, "scheme.blocks[a].input",
              "missing (required)");
  expectError("    - {name: a, type: gain, input: pult.stick, k: 1, rate: 3}\n", "",
              kFirstBlockLine, "scheme.blocks[a].rate", "unknown key for a gain block");
  expectError("    - {name: a, type: lookup, input: pult.stick, table: [[0, 0], [0, 1]]}\n", "",
              kFirstBlockLine, "scheme.blocks[a].table[1]", "x must increase strictly");
  expectError("    - {name: a, type: gain, input: pult.stick, k: 1}\n",
              "    - {motor: drive, signal: a}\n    - {motor: drive, signal: a}\n",
              kFirstBlockLine + 3, "scheme.outputs[1].motor", "already has an output");
  expectError("    - {name: a, type: gain, input: pult.stick, k: 1}\n",
              "    - {motor: wheel, signal: a}\n", kFirstBlockLine + 2, "scheme.outputs[0].motor",
              "no motor named \"wheel\"");
}

}  // namespace
}  // namespace sim::engine
