// Pins grading (engine/scoring.h, docs/scenarios.md "Scoring"): each penalty kind on a small scene
// against a figure found without the grader (momentum, the gear motor's analytic speed, the
// pendulum's energy), tasks and the score's arithmetic, load errors, and the shipped exercises:
// the MF-4 and grasp runs score 100, the clumsy MF-4 run what its penalties and lost tasks add up
// to.
#include <engine/scenario.h>
#include <engine/session.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "scratch_dir.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <numeric>
#include <string>

namespace sim::engine {
namespace {

const std::string kSourceDir = SIMTRAINER_SOURCE_DIR;

class ScoringTest : public testing::ScratchDirTest {
 protected:
  ScoringTest() : ScratchDirTest("simtrainer_scoring_") {}
};

std::vector<Penalty> named(const ScoreSheet& sheet, const std::string& name) {
  std::vector<Penalty> out;
  for (const Penalty& p : sheet.penalties)
    if (p.name == name) out.push_back(p);
  return out;
}

// Zero gravity, no friction: a 2 kg box at 1.5 m/s hits a wall with restitution 0.5. Momentum:
// the wall's impulse on it is m (1 + e) v = 4.5 N s, and it approaches at exactly 1.5 m/s.
constexpr const char* kWallScene = R"(name: wall
solver: {time_step: 0.005, substeps: 1, velocity_iterations: 50, position_iterations: 2}
gravity: [0, 0, 0]
materials:
  - {name: bouncy, friction: 0.0, restitution: 0.5}
bodies:
  - {name: wall, static: true, position: [1.0, 0, 0], shapes: [{type: box, size: [0.1, 2, 2], material: bouncy}]}
  - name: box
    mass: 2.0
    box: [0.2, 0.2, 0.2]
    linear_velocity: [1.5, 0, 0]
    shapes: [{type: box, size: [0.2, 0.2, 0.2], material: bouncy}]
)";

TEST_F(ScoringTest, CollisionOfABoxWithAWallHasItsMomentumImpulse) {
  write("wall.yaml", kWallScene);
  const Scenario s = loadScenario(write("wall.scenario.yaml", R"(scene: wall.yaml
duration: 1.5
scoring:
  pass_mark: 50
  penalties:
    - {kind: collision, name: hit, between: [box, wall], min_impulse: 4.4, points: 10}
    - {kind: collision, name: harder, between: [wall, box], min_impulse: 4.6, points: 10}
    - {kind: collision, name: faster, between: [box, wall], min_speed: 1.6, points: 10}
)"));
  const ScenarioResult r = playScenario(s);
  const auto hits = named(r.score, "hit");
  ASSERT_EQ(hits.size(), 1u);  // it bounces back at 0.75 m/s and never returns
  EXPECT_NEAR(hits[0].value, 2.0 * 1.5 * 1.5, 1e-9);
  EXPECT_NEAR(hits[0].speed, 1.5, 1e-12);
  EXPECT_EQ(hits[0].bodies, (std::vector<std::string>{"box", "wall"}));
  // The faces meet after 0.85 m / 1.5 m/s: the first step after that.
  EXPECT_GE(hits[0].time_s, 0.85 / 1.5);
  EXPECT_LT(hits[0].time_s, 0.85 / 1.5 + 0.005 + 1e-9);
  EXPECT_TRUE(named(r.score, "harder").empty());
  EXPECT_TRUE(named(r.score, "faster").empty());
  EXPECT_DOUBLE_EQ(r.score.score, 90.0);
  EXPECT_TRUE(r.score.passed);
}

// WG-7152 (scenes/wg7152.yaml) with a limit at 0.2 rad: at u = 1 the link speed is
// w(t) = w_max (1 - exp(-t/T)) and the angle w_max (t - T (1 - exp(-t/T))) (the scene's comment;
// the solver matches it to 1e-16), so it strikes the limit at the t* where that is 0.2 rad, at
// w(t*). Then the motor is held stalled: exactly its passport torque, 1.0 of stall.
TEST_F(ScoringTest, JointLimitStrikeAndStalledMotor) {
  std::ifstream in(kSourceDir + "/scenes/wg7152.yaml");
  std::string scene((std::istreambuf_iterator<char>(in)), {});
  const std::string axis = "    axis: [0, 0, 1]         # world: vertical\n";
  ASSERT_NE(scene.find(axis), std::string::npos);
  scene.replace(scene.find(axis), axis.size(), axis + "    limits: [-1, 0.2]\n");
  write("wg.yaml", scene);
  const Scenario s = loadScenario(write("wg.scenario.yaml", R"(scene: wg.yaml
duration: 5.5
scoring:
  pass_mark: 50
  penalties:
    - {kind: joint_limit, name: strike, joints: [hinge], min_speed: 0.05, points: 3}
    - {kind: joint_limit, name: hard strike, joints: [hinge], min_speed: 0.2, points: 3}
    - {kind: motor_overload, name: stalled, motors: [drive], fraction: 0.99, for: 0.5, points: 4}
    - {kind: motor_overload, name: stalled long, motors: [drive], fraction: 0.99, for: 9, points: 4}
)"));
  const double w_max = 5.131268 / 50.0, T = 1.3164;
  double t = 3.0;  // Newton on the angle
  for (int i = 0; i < 50; ++i) {
    const double angle = w_max * (t - T * (1.0 - std::exp(-t / T))) - 0.2;
    t -= angle / (w_max * (1.0 - std::exp(-t / T)));
  }
  const double strike_speed = w_max * (1.0 - std::exp(-t / T));
  const ScenarioResult r = playScenario(s);
  const auto strikes = named(r.score, "strike");
  ASSERT_EQ(strikes.size(), 1u);
  EXPECT_EQ(strikes[0].item, "hinge");
  EXPECT_EQ(strikes[0].unit, "rad/s");
  // The speed of the step before the limit row pushes: within two steps' change of w (0.01 s at
  // dw/dt = 0.008 rad/s^2 there: 2e-4 of 0.092).
  EXPECT_NEAR(strikes[0].value, strike_speed, 2e-3 * strike_speed) << "t* = " << t;
  EXPECT_NEAR(strikes[0].time_s, t, 0.02);
  EXPECT_TRUE(named(r.score, "hard strike").empty());
  const auto stalls = named(r.score, "stalled");
  ASSERT_EQ(stalls.size(), 1u);
  EXPECT_EQ(stalls[0].item, "drive");
  EXPECT_NEAR(stalls[0].value, 1.0, 1e-6);
  EXPECT_NEAR(stalls[0].time_s, t + 0.5, 0.02);
  EXPECT_TRUE(named(r.score, "stalled long").empty());
  EXPECT_DOUBLE_EQ(r.score.score, 100.0 - 3.0 - 4.0);
  // The statistics see the same stall.
  ASSERT_EQ(r.stats.motors.size(), 1u);
  EXPECT_NEAR(r.stats.motors[0].peak_fraction, 1.0, 1e-6);
}

// The grasp scene: grip, lift 0.125 m, open the jaws at 2 s: the box falls back to the ground.
std::string graspDrop(bool open, const std::string& extra_rule) {
  return std::string("scene: ") + kSourceDir + R"(/scenes/grasp.yaml
duration: 3.0
timeline:
  - {at: 0.1, control: grip, pulse: 1, for: 0.1}
  - {at: 0.9, control: lift, hold: 1, for: 1.0}
)" + (open ? "  - {at: 2.0, control: grip, pulse: 1, for: 0.1}\n" : "") +
         R"(scoring:
  pass_mark: 50
  load: {body: box, held_by: [left_jaw, right_jaw]}
  penalties:
    - {kind: load_dropped, name: dropped, below: 0.1, points: 40, critical: true}
)" + extra_rule;
}

TEST_F(ScoringTest, ADroppedBoxIsPenalisedOnceAndOnlyWhileItShouldBeHeld) {
  const ScenarioResult dropped = playScenario(loadScenario(write(
      "drop.scenario.yaml",
      graspDrop(
          true,
          "    - {kind: load_dropped, name: early, below: 0.1, during: [0, 1.9], points: 5}\n"))));
  const auto drops = named(dropped.score, "dropped");
  ASSERT_EQ(drops.size(), 1u);
  // Let go at 2.0 s from about 0.17 m: below 0.1 m after the jaws open, before 0.2 s of free fall.
  EXPECT_GT(drops[0].time_s, 2.0);
  EXPECT_LT(drops[0].time_s, 2.0 + 0.1 + std::sqrt(2.0 * 0.1 / 9.81) + 0.05);
  EXPECT_LT(drops[0].value, 0.1);
  EXPECT_EQ(drops[0].bodies, (std::vector<std::string>{"box"}));
  EXPECT_TRUE(named(dropped.score, "early").empty());
  EXPECT_TRUE(dropped.score.critical_failure);
  EXPECT_DOUBLE_EQ(dropped.score.score, 60.0);
  EXPECT_FALSE(dropped.score.passed);  // critical, though above the pass mark
  // The box at 0.05 m before it is gripped is not "dropped", nor is a box that stays held.
  const ScenarioResult held =
      playScenario(loadScenario(write("held.scenario.yaml", graspDrop(false, ""))));
  EXPECT_TRUE(held.score.penalties.empty());
  EXPECT_TRUE(held.score.passed);
}

// A pendulum: a 1 kg bob (5 cm cube) 0.5 m below a hinge about x, started hanging with the angular
// speed `w_radps` (so its centre moves at 0.5 w along y); a step of 1/240 s.
std::string pendulumScene(double w_radps) {
  return fmt::format(R"(name: pendulum
solver: {{time_step: 0.0041666666666666666, substeps: 1, velocity_iterations: 30, position_iterations: 4}}
bodies:
  - name: bob
    mass: 1.0
    box: [0.05, 0.05, 0.05]
    position: [0, 0, 0.5]
    angular_velocity: [{}, 0, 0]
    linear_velocity: [0, {}, 0]
joints:
  - {{name: pivot, type: hinge, parent: world, child: bob, anchor: [0, 0, 1.0], axis: [1, 0, 0]}}
)",
                     w_radps, 0.5 * w_radps);
}

// A pendulum (1 kg at 0.5 m below a hinge about x) started hanging with 1 rad/s: by energy its
// swing reaches theta_max with I_p w0^2 / 2 = m g d (1 - cos theta_max).
TEST_F(ScoringTest, SwingOfAPendulumAgainstItsEnergy) {
  write("pendulum.yaml", pendulumScene(1.0));
  const double I_p = 1.0 * (0.05 * 0.05 + 0.05 * 0.05) / 12.0 + 1.0 * 0.5 * 0.5;
  const double theta_max = std::acos(1.0 - 0.5 * I_p * 1.0 / (1.0 * 9.81 * 0.5));
  const Scenario s =
      loadScenario(write("p.scenario.yaml", fmt::format(R"(scene: pendulum.yaml
duration: 0.6
scoring:
  pass_mark: 0
  penalties:
    - {{kind: swing, name: under, body: bob, max_angle: {}, points: 1}}
    - {{kind: swing, name: over, body: bob, max_angle: {}, points: 1}}
)",
                                                        0.97 * theta_max, 1.03 * theta_max)));
  const ScenarioResult r = playScenario(s);  // 0.6 s: the first swing to one side (T/4 = 0.35 s)
  const auto under = named(r.score, "under");
  ASSERT_EQ(under.size(), 1u) << "theta_max " << theta_max;
  EXPECT_GT(under[0].value, 0.97 * theta_max);
  EXPECT_LT(under[0].value, theta_max);
  EXPECT_EQ(under[0].unit, "rad");
  EXPECT_TRUE(named(r.score, "over").empty());
}

// The same pendulum with a small swing (w_m = 0.2 rad/s at the bottom, amplitude 0.045 rad): the
// bob's centre at d = 0.5 m has, passing the bottom (theta = 0, theta'' = 0), the jerk
// d (w0^2 w_m + w_m^3) exactly (theta''' = -w0^2 cos(theta) theta', w0^2 = m g d / I_p, and the
// centripetal part's derivative -d theta'^3), first reached at T/2 (the start's peak comes before
// the window has filled). The scorer's jerk is the second difference of the velocity over a
// window w, which for a sinusoid of frequency w0 reads (2 sin(w0 w / 2) / (w0 w))^2 of the peak.
TEST_F(ScoringTest, SwingJerkOfAPendulumAgainstItsClosedForm) {
  write("pendulum.yaml", pendulumScene(0.2));
  const double d = 0.5, w_m = 0.2, window = 0.1;
  const double I_p = 1.0 * (0.05 * 0.05 + 0.05 * 0.05) / 12.0 + 1.0 * d * d;
  const double w0 = std::sqrt(1.0 * 9.81 * d / I_p);
  const double x = 0.5 * w0 * window;
  const double peak = d * (w0 * w0 * w_m + w_m * w_m * w_m) * std::pow(std::sin(x) / x, 2);
  // Within 0.5 % of the peak (measured here: within 0.05 %): the window factor is exact only for
  // a sinusoid (the centripetal term's third harmonic is filtered more: < 0.05 %), and the step
  // (1/240 s) samples the peak within w0 h / 2 = 0.009 rad of phase (1 - cos = 4e-5). Leaving
  // out the centripetal term (1 %) or the window factor (1.6 %) moves the value out of the band.
  const Scenario s = loadScenario(
      write("p.scenario.yaml", fmt::format(R"(scene: pendulum.yaml
duration: 1.0
scoring:
  pass_mark: 0
  penalties:
    - {{kind: swing, name: under, body: bob, max_jerk: {}, jerk_window: {}, points: 1}}
    - {{kind: swing, name: over, body: bob, max_jerk: {}, jerk_window: {}, points: 1}}
)",
                                           0.995 * peak, window, 1.005 * peak, window)));
  const ScenarioResult r = playScenario(s);
  const auto under = named(r.score, "under");
  ASSERT_EQ(under.size(), 1u) << "peak " << peak;
  EXPECT_EQ(under[0].unit, "m/s^3");
  EXPECT_GT(under[0].value, 0.995 * peak);
  EXPECT_LT(under[0].value, 1.005 * peak);
  // The second difference at t is centred on t - w: the bottom passage at T/2 shows at T/2 + w.
  EXPECT_NEAR(under[0].time_s, std::numbers::pi / w0 + window, 0.02);
  EXPECT_TRUE(named(r.score, "over").empty());
}

TEST_F(ScoringTest, TasksTimeAndTheScoreAddUp) {
  const auto path =
      write("t.scenario.yaml", std::string("scene: ") + kSourceDir + R"(/scenes/grasp.yaml
duration: 4.0
timeline:
  - {at: 0.1, control: grip, pulse: 1, for: 0.1}
  - {at: 0.9, control: lift, hold: 1, for: 2.3}
expect:
  - {name: box lifted, signal: body.box.z, min: 0.3, by: 3.5}
  - {name: impossible, signal: body.box.z, min: 5, by: 3.0}
  - {name: free, signal: time, min: 0}
scoring:
  pass_mark: 70
  penalties:
    - {kind: time, name: slow, target: 2.0, per_second: 4, until: box lifted}
    - {kind: time, name: slow capped, target: 2.0, per_second: 4, until: box lifted, max_points: 1.5}
  tasks:
    - {expect: box lifted, points: 30}
    - {expect: impossible, points: 7}
)");
  std::vector<std::string> last_notes;
  PlayOptions options;
  options.after_frame = [&](const Session&, const RunResult& so_far,
                            const std::vector<std::string>&) {
    last_notes = so_far.score.lines();  // what the HUD's score panel shows
    return true;
  };
  const ScenarioResult r = playScenario(loadScenario(path), options);
  ASSERT_EQ(r.score.tasks.size(), 3u);
  const TaskResult& lifted = r.score.tasks[0];
  EXPECT_TRUE(lifted.done);
  EXPECT_GT(lifted.time_s, 2.0);
  EXPECT_FALSE(r.score.tasks[1].done);
  EXPECT_DOUBLE_EQ(r.score.tasks[1].points_lost, 7.0);
  EXPECT_DOUBLE_EQ(r.score.tasks[2].points, 0.0);  // not a task: worth nothing
  const auto slow = named(r.score, "slow");
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_DOUBLE_EQ(slow[0].value, lifted.time_s - 2.0);
  EXPECT_DOUBLE_EQ(slow[0].points, 4.0 * (lifted.time_s - 2.0));
  EXPECT_DOUBLE_EQ(named(r.score, "slow capped")[0].points, 1.5);
  EXPECT_DOUBLE_EQ(r.score.exercise_time_s, lifted.time_s);
  EXPECT_NEAR(r.score.score, 100.0 - 7.0 - 4.0 * (lifted.time_s - 2.0) - 1.5, 1e-12);
  EXPECT_TRUE(r.score.passed);
  // The frame observer (the HUD's score panel) gets the running score and the latest events.
  ASSERT_FALSE(last_notes.empty());
  bool score_line = false, failed_line = false;
  for (const std::string& n : last_notes) {
    score_line = score_line || n.rfind("score ", 0) == 0;
    failed_line = failed_line || n.find("task FAILED: impossible") != std::string::npos;
  }
  EXPECT_TRUE(score_line);
  EXPECT_TRUE(failed_line);  // decided at 3.0 s, within the last 4 s
  EXPECT_EQ(r.run.score.score, r.score.score);
}

TEST_F(ScoringTest, BadScoringIsAnErrorNamingFileLineAndKey) {
  const std::string head = std::string("scene: ") + kSourceDir +
                           "/scenes/grasp.yaml\nduration: 1\n" +
                           "expect:\n  - {name: e, signal: time, min: 0}\nscoring:\n";
  struct Case {
    std::string body, key, message;
    int line;
  };
  const std::vector<Case> cases = {
      {"  pass_mark: 120\n", "scoring.pass_mark", "expected a pass mark in [0, 100], got 120", 6},
      {"  pass_mark: 50\n  penalties:\n    - {kind: collision, name: x, between: [box, shelf], "
       "points: 1}\n",
       "scoring.penalties[x].between[1]", "no body or group \"shelf\"", 8},
      {"  pass_mark: 50\n  penalties:\n    - {kind: collision, name: x, between: [box, palm], "
       "points: -5}\n",
       "scoring.penalties[x].points", "expected a number >= 0, got -5", 8},
      {"  pass_mark: 50\n  tasks:\n    - {expect: nothing, points: 3}\n", "scoring.tasks[0].expect",
       "no expectation named \"nothing\"", 8},
      {"  pass_mark: 50\n  load: {body: crate}\n", "scoring.load.body", "no body \"crate\"", 7},
      {"  pass_mark: 50\n  penalties:\n    - {kind: motor_overload, motors: [winch], fraction: "
       "0.9, points: 1}\n",
       "scoring.penalties[0].motors[0]", "no motor \"winch\"", 8},
      {"  pass_mark: 50\n  penalties:\n    - {kind: swing, max_angle: 0.1, points: 1}\n",
       "scoring.penalties[0].body", "missing (give body, or scoring.load)", 8},
      {"  pass_mark: 50\n  penalties:\n    - {kind: swing, body: box, points: 1}\n",
       "scoring.penalties[0].max_angle",
       "missing (give max_angle in rad, max_jerk in m/s^3, or both)", 8},
      {"  pass_mark: 50\n  penalties:\n    - {kind: swing, body: box, max_angle: 0.1, jerk_window: "
       "0.1, points: 1}\n",
       "scoring.penalties[0].jerk_window", "only with max_jerk", 8},
      {"  pass_mark: 50\n  penalties:\n    - {kind: swing, body: box, max_jerk: 5, jerk_window: "
       "0.0001, points: 1}\n",
       "scoring.penalties[0].jerk_window", "expected a window from one time step", 8},
  };
  for (const Case& c : cases) {
    const std::string path = write("bad.scenario.yaml", head + c.body);
    try {
      loadScenario(path);
      ADD_FAILURE() << "no error for " << c.body;
    } catch (const SceneError& e) {
      EXPECT_EQ(e.file(), path);
      EXPECT_EQ(e.line(), c.line) << e.what();
      EXPECT_EQ(e.key(), c.key) << e.what();
      EXPECT_NE(e.message().find(c.message), std::string::npos) << e.what();
    }
  }
}

TEST(ScoringExamples, CleanRunsScore100) {
  for (const char* file : {"/scenes/scenarios/mf4_grip_lift.scenario.yaml",
                           "/scenes/scenarios/grasp_lift.scenario.yaml"}) {
    const ScenarioResult r = playScenario(loadScenario(kSourceDir + file));
    ASSERT_TRUE(r.score.scored) << file;
    EXPECT_TRUE(r.passed()) << r.failureSummary();
    EXPECT_TRUE(r.score.penalties.empty()) << file << ": " << r.score.penalties.front().text;
    EXPECT_DOUBLE_EQ(r.score.score, 100.0) << file;
    EXPECT_TRUE(r.score.passed) << file;
  }
}

TEST(ScoringExamples, ClumsyRunScoresWhatItsPenaltiesAddUpTo) {
  const ScenarioResult r = playScenario(
      loadScenario(kSourceDir + "/scenes/exercises/mf4_grip_lift_clumsy.scenario.yaml"));
  const ScoreSheet& s = r.score;
  // What the timeline does wrong shows up as the penalties it should.
  const auto shelf = named(s, "struck the shelf");
  ASSERT_EQ(shelf.size(), 1u);
  EXPECT_EQ(shelf[0].bodies[1], "shelf");
  EXPECT_GT(shelf[0].time_s, 29.5);  // the arm driven down into it
  const auto banged = named(s, "container banged onto the shelf");
  ASSERT_EQ(banged.size(), 1u);  // the container slipped out of the jaws onto the shelf
  EXPECT_NEAR(banged[0].time_s, 22.6, 0.1);
  EXPECT_GT(banged[0].speed, 0.5);
  EXPECT_FALSE(named(s, "motor overloaded").empty());  // the arm pushing against the shelf
  std::vector<std::string> lost;
  for (const TaskResult& t : s.tasks)
    if (t.points_lost > 0.0) lost.push_back(t.name);
  EXPECT_EQ(lost,
            (std::vector<std::string>{"jaws squeeze the handle", "container carried over the shelf",
                                      "container does not slip in the jaws"}));
  const double penalties =
      std::accumulate(s.penalties.begin(), s.penalties.end(), 0.0,
                      [](double sum, const Penalty& p) { return sum + p.points; });
  EXPECT_DOUBLE_EQ(s.penalty_points, penalties);
  EXPECT_DOUBLE_EQ(s.task_points_lost, 30.0);
  EXPECT_DOUBLE_EQ(s.score, 100.0 - penalties - 30.0);
  EXPECT_LT(s.score, s.pass_mark);
  EXPECT_FALSE(s.passed);
}

}  // namespace
}  // namespace sim::engine
