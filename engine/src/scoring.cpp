#include <engine/scenario.h>
#include <engine/scoring.h>
#include <engine/session.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace sim::engine {

namespace {

constexpr double kTimeEps = 1e-9;  // s: sample times are sums of steps
// A contact or limit that lets go and touches again within this time is the same event (contacts
// chatter for a few steps as bodies settle).
constexpr double kRearmS = 0.2;
// The impulse of an impact is summed over this long from the first step of contact: the solver
// resolves a rigid impact in one or two steps; a body that keeps pushing adds force x window.
constexpr double kImpactWindowS = 0.02;
// A load no longer touching its carriers and slower than this for kRestS has been set down.
constexpr double kRestSpeedMps = 0.05;
constexpr double kRestS = 0.5;

using dynamics::Vec3;
using Kind = PenaltyRule::Kind;

bool contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::string pointsText(double points) {
  return points > 0.0 ? fmt::format("-{:g} ", points) : std::string();
}

}  // namespace

const char* penaltyKindName(PenaltyRule::Kind kind) {
  switch (kind) {
    case Kind::Collision: return "collision";
    case Kind::MotorOverload: return "motor_overload";
    case Kind::JointLimit: return "joint_limit";
    case Kind::LoadDropped: return "load_dropped";
    case Kind::Swing: return "swing";
    case Kind::Time: break;
  }
  return "time";
}

std::vector<std::string> LiveScore::lines() const {
  std::vector<std::string> out;
  if (!scored) return out;
  out.push_back(fmt::format("score {:g}/100 (pass {:g}){}", std::round(score * 10.0) / 10.0,
                            pass_mark, critical ? " FAILED: critical" : ""));
  for (const ScoreEvent& e : recent) out.push_back(e.text);
  return out;
}

// A body pair of a collision rule: touching or not, and the impact being measured.
struct Scorer::ImpactState {
  bool touching = false;
  double last_touch_t = -1e300;
  bool open = false;
  double onset_t = 0.0;
  std::uint64_t onset_step = 0;
  double impulse = 0.0, speed = 0.0;
};

struct Scorer::Impl {
  // Statistics.
  std::vector<double> peak_torque, peak_time;
  int load = -1;
  bool have_load_position = false;
  Vec3 load_position = Vec3::Zero();
  double load_path = 0.0;
  int max_velocity_iterations = 0;
  std::uint64_t steps_at_cap = 0;
  std::string fault;

  // Tasks.
  std::unique_ptr<ExpectationChecker> checker;
  std::vector<char> task_announced;
  std::vector<const TaskDef*> task_of;  // per expectation, or null

  // Penalty rules.
  struct Episode {  // an overload, a limit contact or a swing, per motor / joint
    bool on = false;
    bool fired = false;
    double start_t = 0.0, last_t = -1e300, peak = 0.0;
  };
  struct Rule {
    double given = 0.0;  // points so far (against max_points)
    std::map<std::pair<int, int>, ImpactState> pairs;
    std::vector<Episode> items;
    bool armed = false, fired = false;
    double rest_t = 0.0;
    dynamics::Quat upright_from =
        dynamics::Quat::Identity();  // Swing: the load's initial orientation, inverted
    bool upright_known = false;
    bool jerk_fired = false;             // Swing: the jerk limit's own hysteresis
    std::vector<Vec3> velocity_history;  // Swing by jerk: the load's last 2n + 1 velocities, a ring
    std::size_t velocities_seen = 0;
    bool time_announced = false;
    double time_excess = 0.0, time_points = 0.0;
    std::vector<char> in_a, in_b;  // Collision: whether a body is on side_a, side_b (by index)
  };
  std::vector<Rule> rules;
  std::vector<int> candidates;  // scratch: a Collision rule's contacts, by index
  std::vector<Penalty> penalties;
  std::vector<dynamics::BodyState> previous_bodies;
  std::vector<double> previous_joint_speed;
  bool needs_contacts = false;
  bool complete = false;
};

Scorer::Scorer(const Scene& scene) : scene_(&scene) {
  reset();
}

Scorer::Scorer(const Scenario& scenario) : scene_(&scenario.scene), scenario_(&scenario) {
  reset();
}

Scorer::~Scorer() = default;

void Scorer::reset() {
  impl_ = std::make_unique<Impl>();
  Impl& im = *impl_;
  const std::size_t motors = scene_->model.motors.size();
  im.peak_torque.assign(motors, 0.0);
  im.peak_time.assign(motors, 0.0);
  live_ = LiveScore{};
  events_.clear();
  finished_ = false;
  last_t_ = 0.0;
  last_step_ = 0;
  if (!scenario_) return;
  const ScoringDef& def = scenario_->scoring;
  im.load = def.load;
  im.checker = std::make_unique<ExpectationChecker>(*scenario_);
  im.task_announced.assign(scenario_->expectations.size(), 0);
  im.task_of.assign(scenario_->expectations.size(), nullptr);
  for (const TaskDef& t : def.tasks) im.task_of[static_cast<std::size_t>(t.expectation)] = &t;
  im.rules.resize(def.penalties.size());
  for (std::size_t r = 0; r < def.penalties.size(); ++r) {
    const PenaltyRule& rule = def.penalties[r];
    im.rules[r].items.resize(std::max(rule.motors.size(), rule.joints.size()));
    // A flag per body: a site's every contact is tested against both sides each step.
    const auto flags = [&](const std::vector<int>& side) {
      std::vector<char> in(scene_->model.bodies.size(), 0);
      for (const int b : side) in.at(static_cast<std::size_t>(b)) = 1;
      return in;
    };
    im.rules[r].in_a = flags(rule.side_a);
    im.rules[r].in_b = flags(rule.side_b);
    im.needs_contacts = im.needs_contacts || rule.kind == Kind::Collision || !rule.held_by.empty();
  }
  live_.scored = def.enabled;
  live_.pass_mark = def.pass_mark;
}

void Scorer::addEvent(double t, double points, const std::string& text) {
  events_.push_back(ScoreEvent{t, points, text});
  live_.recent.push_back(events_.back());
  ++live_.event_count;
}

void Scorer::sample(const Session& session, const dynamics::StepReport* report) {
  if (finished_) return;
  Impl& im = *impl_;
  if (report && report->fault.kind != dynamics::Fault::Kind::None) {
    // The state is not to be trusted: graded up to the step before.
    if (im.fault.empty()) im.fault = report->fault.describe();
    return;
  }
  const dynamics::State& state = session.dynamics();
  const dynamics::Model& model = session.scene().model;
  const double t = session.time();
  last_t_ = t;
  last_step_ = session.stepIndex();
  if (report) {
    im.max_velocity_iterations = std::max(im.max_velocity_iterations, report->velocity_iterations);
    if (report->velocity_end == dynamics::SolveEnd::IterationCap) ++im.steps_at_cap;
  }
  for (std::size_t m = 0; m < state.motors.size() && m < im.peak_torque.size(); ++m) {
    const double torque = std::abs(state.motors[m].torque_Nm);
    if (torque > im.peak_torque[m]) {
      im.peak_torque[m] = torque;
      im.peak_time[m] = t;
    }
  }
  if (im.load >= 0) {
    const Vec3& p = state.bodies[static_cast<std::size_t>(im.load)].position_m;
    if (im.have_load_position) im.load_path += (p - im.load_position).norm();
    im.load_position = p;
    im.have_load_position = true;
  }
  if (!scenario_) return;

  im.checker->sample(session);
  announceTasks();
  const ScoringDef& def = scenario_->scoring;
  const std::vector<ExpectationResult>& results = im.checker->results();

  if (!def.enabled) return;
  static const std::vector<dynamics::ContactReport> kNoContacts;
  const std::vector<dynamics::ContactReport>& contacts =
      im.needs_contacts ? session.contacts() : kNoContacts;
  const double h = model.solver.time_step_s;
  auto bodyName = [&](int b) { return model.bodies[static_cast<std::size_t>(b)].name; };
  // A penalty of rule r now, about `bodies` / `item`, measuring `value` in `unit`.
  auto fire = [&](std::size_t r, std::vector<std::string> bodies, std::string item, double value,
                  const char* unit) {
    Penalty pen;
    pen.bodies = std::move(bodies);
    pen.item = std::move(item);
    pen.time_s = t;
    pen.step = session.stepIndex();
    pen.value = value;
    pen.unit = unit;
    firePenalty(r, std::move(pen), def.penalties[r].points);
  };
  auto touching = [&](int body, const std::vector<int>& others) {
    for (const int k : session.contactsOf(body)) {
      const dynamics::ContactReport& c = contacts[static_cast<std::size_t>(k)];
      if (!(c.normal_force_N > 0.0)) continue;
      if ((c.body_a == body && contains(others, c.body_b)) ||
          (c.body_b == body && contains(others, c.body_a)))
        return true;
    }
    return false;
  };

  for (std::size_t r = 0; r < def.penalties.size(); ++r) {
    const PenaltyRule& rule = def.penalties[r];
    Impl::Rule& rs = im.rules[r];
    const bool active = t + kTimeEps >= rule.from_s && t - kTimeEps <= rule.to_s;
    switch (rule.kind) {
      case Kind::Collision: {
        // This step's impulse and approach speed per pair (side a body, side b body).
        std::map<std::pair<int, int>, std::pair<double, double>> now;
        const auto on = [](const std::vector<char>& side, int b) {
          return b >= 0 && static_cast<std::size_t>(b) < side.size() &&
                 side[static_cast<std::size_t>(b)] != 0;
        };
        // Only contacts of the smaller side's bodies can count, taken in contact order (the
        // order of the sums below) rather than scanning a site's every resting contact.
        const std::vector<int>& side =
            rule.side_a.size() <= rule.side_b.size() ? rule.side_a : rule.side_b;
        im.candidates.clear();
        for (const int b : side) {
          const std::span<const int> of = session.contactsOf(b);
          im.candidates.insert(im.candidates.end(), of.begin(), of.end());
        }
        std::sort(im.candidates.begin(), im.candidates.end());
        im.candidates.erase(std::unique(im.candidates.begin(), im.candidates.end()),
                            im.candidates.end());
        for (const int k : im.candidates) {
          const dynamics::ContactReport& c = contacts[static_cast<std::size_t>(k)];
          if (!(c.normal_force_N > 0.0)) continue;
          std::pair<int, int> key;
          if (on(rs.in_a, c.body_a) && on(rs.in_b, c.body_b))
            key = {c.body_a, c.body_b};
          else if (on(rs.in_a, c.body_b) && on(rs.in_b, c.body_a))
            key = {c.body_b, c.body_a};
          else
            continue;
          // Approach speed along the normal from the velocities before this step.
          double speed = 0.0;
          if (im.previous_bodies.size() == state.bodies.size()) {
            auto velocity = [&](int b) {
              const dynamics::BodyState& s = im.previous_bodies[static_cast<std::size_t>(b)];
              return Vec3(s.linear_velocity_mps +
                          s.angular_velocity_radps.cross(c.point_m - s.position_m));
            };
            speed = -c.normal.dot(velocity(c.body_b) - velocity(c.body_a));
          }
          auto& [impulse, approach] = now[key];
          impulse += c.normal_force_N * h;
          approach = std::max(approach, speed);
        }
        for (const auto& [key, values] : now) {
          ImpactState& p = rs.pairs[key];
          if (!p.touching && !p.open && t - p.last_touch_t > kRearmS + kTimeEps) {
            p.open = true;
            p.onset_t = t;
            p.onset_step = session.stepIndex();
            p.impulse = 0.0;
            p.speed = values.second;
          }
          if (p.open) p.impulse += values.first;
        }
        for (auto& [key, p] : rs.pairs) {
          const bool now_touching = now.count(key) != 0;
          if (p.open && (!now_touching || t + kTimeEps >= p.onset_t + kImpactWindowS))
            closeImpact(r, key, p);
          p.touching = now_touching;
          if (now_touching) p.last_touch_t = t;
        }
        break;
      }
      case Kind::MotorOverload:
        for (std::size_t k = 0; k < rule.motors.size(); ++k) {
          const auto m = static_cast<std::size_t>(rule.motors[k]);
          const double stall = model.motors[m].stall_torque_Nm;
          const double fraction = stall > 0.0 ? std::abs(state.motors[m].torque_Nm) / stall : 0.0;
          Impl::Episode& e = rs.items[k];
          if (!active || !(fraction > rule.fraction)) {
            e = Impl::Episode{};
            continue;
          }
          if (!e.on) {
            e.on = true;
            e.start_t = t;
            e.peak = 0.0;
          }
          e.peak = std::max(e.peak, fraction);
          if (!e.fired && t - e.start_t + kTimeEps >= rule.for_s) {
            e.fired = true;
            fire(r, {}, model.motors[m].name, e.peak, "x stall");
          }
        }
        break;
      case Kind::JointLimit:
        for (std::size_t k = 0; k < rule.joints.size(); ++k) {
          const auto j = static_cast<std::size_t>(rule.joints[k]);
          const bool at_limit = state.joints[j].impulses.limit != 0.0;
          Impl::Episode& e = rs.items[k];
          if (at_limit && !e.on && t - e.last_t > kRearmS + kTimeEps && active) {
            const double speed =
                j < im.previous_joint_speed.size() ? std::abs(im.previous_joint_speed[j]) : 0.0;
            if (speed >= rule.min_joint_speed) {
              const dynamics::JointDef& joint = model.joints[j];
              fire(r,
                   {joint.body_a >= 0 ? bodyName(joint.body_a) : "world", bodyName(joint.body_b)},
                   joint.name, speed,
                   joint.type == dynamics::JointType::Prismatic ? "m/s" : "rad/s");
            }
          }
          e.on = at_limit;
          if (at_limit) e.last_t = t;
        }
        break;
      case Kind::LoadDropped: {
        const auto b = static_cast<std::size_t>(rule.body);
        const double z = state.bodies[b].position_m.z();
        if (rule.held_by.empty()) {
          rs.armed = active;  // `during` alone says when it should be held
        } else {
          const bool held = touching(rule.body, rule.held_by);
          if (!rs.armed && held && z > rule.below_m) rs.armed = true;
          // Let go of and at rest: set down, no longer carried.
          if (rs.armed && !held && state.bodies[b].linear_velocity_mps.norm() < kRestSpeedMps) {
            rs.rest_t += h;
            if (rs.rest_t + kTimeEps >= kRestS) rs.armed = false;
          } else {
            rs.rest_t = 0.0;
          }
        }
        if (rs.armed && active && z < rule.below_m && !(rule.held_by.empty() && rs.fired)) {
          fire(r, {bodyName(rule.body)}, "", z, "m");
          rs.armed = false;
          rs.fired = true;
        }
        break;
      }
      case Kind::Swing: {
        const dynamics::BodyState& body = state.bodies[static_cast<std::size_t>(rule.body)];
        if (!rs.upright_known) {
          rs.upright_from = body.orientation.conjugate();
          rs.upright_known = true;
        }
        // Tilt: how far the load's upright axis (world z at the start) has turned from vertical.
        const Vec3 up = (body.orientation * rs.upright_from) * Vec3::UnitZ();
        const double tilt = std::acos(std::clamp(up.z(), -1.0, 1.0));
        const bool carried = rule.held_by.empty() || touching(rule.body, rule.held_by);
        if (rule.max_angle_rad > 0.0) {
          if (rs.fired && tilt < 0.5 * rule.max_angle_rad) rs.fired = false;  // hysteresis
          if (carried && active && !rs.fired && tilt > rule.max_angle_rad) {
            rs.fired = true;
            fire(r, {bodyName(rule.body)}, "", tilt, "rad");
          }
        }
        if (rule.max_jerk_mps3 > 0.0 && report) {
          // Jerk as the change of the window-mean acceleration over one window w = n h:
          // (v(t) - 2 v(t - w) + v(t - 2w)) / w^2. A per-step difference would be dominated by
          // contact impulses, which change the velocity within one step.
          const auto n =
              static_cast<std::size_t>(std::max(1.0, std::round(rule.jerk_window_s / h)));
          std::vector<Vec3>& v = rs.velocity_history;
          const std::size_t size = 2 * n + 1;
          v.resize(size);
          const std::size_t now = rs.velocities_seen++ % size;
          v[now] = body.linear_velocity_mps;
          if (rs.velocities_seen >= size) {
            const double w = static_cast<double>(n) * h;
            const Vec3& oldest = v[(now + 1) % size];      // 2n steps ago
            const Vec3& middle = v[(now + n + 1) % size];  // n steps ago
            const double jerk = (v[now] - 2.0 * middle + oldest).norm() / (w * w);
            if (rs.jerk_fired && jerk < 0.5 * rule.max_jerk_mps3) rs.jerk_fired = false;
            if (carried && active && !rs.jerk_fired && jerk > rule.max_jerk_mps3) {
              rs.jerk_fired = true;
              fire(r, {bodyName(rule.body)}, "", jerk, "m/s^3");
            }
          }
        }
        break;
      }
      case Kind::Time: {
        double end = t;
        if (rule.until_task >= 0) {
          const ExpectationResult& done = results[static_cast<std::size_t>(rule.until_task)];
          if (done.decided && done.passed) end = done.time_s;
        }
        const double excess = std::max(0.0, end - rule.target_s);
        rs.time_excess = excess;
        rs.time_points = std::min(rule.points * excess, rule.max_points);
        if (excess > 0.0 && !rs.time_announced) {
          rs.time_announced = true;
          addEvent(t, 0.0,
                   fmt::format("-{:g}/s {} (past {:g} s)", rule.points, rule.name, rule.target_s));
        }
        break;
      }
    }
  }
  im.previous_bodies = state.bodies;
  im.previous_joint_speed.resize(state.joints.size());
  for (std::size_t j = 0; j < state.joints.size(); ++j)
    im.previous_joint_speed[j] = state.joints[j].speed;
  updateLive(t);
}

const std::vector<Penalty>& Scorer::penalties() const {
  return impl_->penalties;
}

Scorer::Totals Scorer::totals() const {
  Totals t;
  if (!scenario_ || !scenario_->scoring.enabled) return t;
  const Impl& im = *impl_;
  const ScoringDef& def = scenario_->scoring;
  const std::vector<ExpectationResult>& results = im.checker->results();
  for (std::size_t i = 0; i < results.size(); ++i) {
    const TaskDef* task = im.task_of[i];
    if (!task || !results[i].decided || results[i].passed) continue;
    t.task_points_lost += task->points;
    t.critical = t.critical || task->critical;
  }
  for (const Penalty& p : im.penalties) {
    t.penalty_points += p.points;
    t.critical = t.critical || p.critical;
  }
  for (std::size_t r = 0; r < def.penalties.size(); ++r)
    t.penalty_points += im.rules[r].time_points;  // accrued
  t.score = std::max(0.0, 100.0 - t.penalty_points - t.task_points_lost);
  return t;
}

void Scorer::updateLive(double t) {
  live_.score = totals().score;
  while (!live_.recent.empty() && live_.recent.front().time_s < t - LiveScore::kRecentS) {
    live_.recent.erase(live_.recent.begin());
  }
}

void Scorer::firePenalty(std::size_t r, Penalty p, double points) {
  const PenaltyRule& rule = scenario_->scoring.penalties[r];
  Impl::Rule& rs = impl_->rules[r];
  p.kind = penaltyKindName(rule.kind);
  p.name = rule.name;
  p.points = std::max(0.0, std::min(points, rule.max_points - rs.given));
  rs.given += p.points;
  p.critical = rule.critical;
  if (rule.critical) live_.critical = true;
  if (p.text.empty()) {
    p.text = fmt::format("{}{} ({:.1f} s){}", pointsText(p.points), rule.name, p.time_s,
                         rule.critical ? ": critical" : "");
  }
  addEvent(p.time_s, p.points, p.text);
  impl_->penalties.push_back(std::move(p));
}

void Scorer::closeImpact(std::size_t r, const std::pair<int, int>& bodies, ImpactState& p) {
  const PenaltyRule& rule = scenario_->scoring.penalties[r];
  p.open = false;
  const bool in_window = p.onset_t + kTimeEps >= rule.from_s && p.onset_t - kTimeEps <= rule.to_s;
  if (!in_window || p.impulse < rule.min_impulse_Ns || p.speed < rule.min_speed_mps) return;
  Penalty pen;
  const auto& model_bodies = scene_->model.bodies;
  pen.bodies = {model_bodies[static_cast<std::size_t>(bodies.first)].name,
                model_bodies[static_cast<std::size_t>(bodies.second)].name};
  pen.time_s = p.onset_t;
  pen.step = p.onset_step;
  pen.value = p.impulse;
  pen.unit = "N s";
  pen.speed = p.speed;
  firePenalty(r, std::move(pen), rule.points);
}

void Scorer::announceTasks() {
  Impl& im = *impl_;
  if (!scenario_->scoring.enabled) return;
  const std::vector<ExpectationResult>& results = im.checker->results();
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (!results[i].decided || im.task_announced[i]) continue;
    im.task_announced[i] = 1;
    const TaskDef* task = im.task_of[i];
    const double points = results[i].passed || !task ? 0.0 : task->points;
    if (!results[i].passed && task && task->critical) live_.critical = true;
    addEvent(
        results[i].time_s, points,
        fmt::format("{}task {}: {} ({:.1f} s)", pointsText(points),
                    results[i].passed ? "done" : "FAILED", results[i].name, results[i].time_s));
  }
}

void Scorer::finish(bool complete) {
  if (finished_) return;
  Impl& im = *impl_;
  im.complete = complete;
  if (scenario_) {
    im.checker->finish(last_t_);
    announceTasks();
    const ScoringDef& def = scenario_->scoring;
    for (std::size_t r = 0; def.enabled && r < def.penalties.size(); ++r) {
      const PenaltyRule& rule = def.penalties[r];
      Impl::Rule& rs = im.rules[r];
      if (rule.kind == Kind::Collision) {
        for (auto& [key, p] : rs.pairs)
          if (p.open) closeImpact(r, key, p);
      } else if (rule.kind == Kind::Time && rs.time_points > 0.0) {
        // The time over the target as one penalty (accrued live until now).
        Penalty pen;
        pen.time_s = rule.target_s;
        pen.step = last_step_;
        pen.value = rs.time_excess;
        pen.unit = "s";
        pen.text = fmt::format("-{:g} {} ({:.1f} s over {:g} s)", rs.time_points, rule.name,
                               rs.time_excess, rule.target_s);
        const double points = rs.time_points;
        rs.time_points = 0.0;  // counted by the penalty from now on
        firePenalty(r, std::move(pen), points);
      }
    }
  }
  finished_ = true;
  updateLive(last_t_);
}

ScoreSheet Scorer::sheet() const {
  const Impl& im = *impl_;
  ScoreSheet s;
  s.exercise_time_s = last_t_;
  if (!scenario_) return s;
  const ScoringDef& def = scenario_->scoring;
  s.scored = def.enabled;
  s.pass_mark = def.pass_mark;
  const std::vector<ExpectationResult>& results = im.checker->results();
  for (std::size_t i = 0; i < results.size(); ++i) {
    TaskResult t;
    t.name = results[i].name;
    t.done = results[i].decided && results[i].passed;
    t.time_s = results[i].time_s;
    t.detail = results[i].detail;
    if (const TaskDef* task = im.task_of[i]) {
      t.points = task->points;
      t.critical = task->critical;
    }
    if (results[i].decided && !results[i].passed && def.enabled) t.points_lost = t.points;
    s.tasks.push_back(std::move(t));
  }
  if (!def.enabled) return s;
  s.penalties = im.penalties;
  std::stable_sort(s.penalties.begin(), s.penalties.end(),
                   [](const Penalty& a, const Penalty& b) { return a.time_s < b.time_s; });
  const Totals totals = this->totals();
  s.penalty_points = totals.penalty_points;
  s.task_points_lost = totals.task_points_lost;
  s.critical_failure = totals.critical;
  s.score = totals.score;
  s.passed = finished_ && im.complete && !s.critical_failure && s.score >= s.pass_mark;
  // The exercise's time: when the first time rule's `until` task was done.
  for (const PenaltyRule& rule : def.penalties) {
    if (rule.kind != Kind::Time || rule.until_task < 0) continue;
    const ExpectationResult& done = results[static_cast<std::size_t>(rule.until_task)];
    if (done.decided && done.passed) s.exercise_time_s = done.time_s;
    break;
  }
  return s;
}

SessionStats Scorer::stats() const {
  const Impl& im = *impl_;
  SessionStats s;
  const dynamics::Model& model = scene_->model;
  if (im.load >= 0) {
    s.load = model.bodies[static_cast<std::size_t>(im.load)].name;
    s.load_path_m = im.load_path;
  }
  for (std::size_t m = 0; m < im.peak_torque.size(); ++m) {
    const double stall = model.motors[m].stall_torque_Nm;
    s.motors.push_back(MotorPeak{model.motors[m].name, im.peak_torque[m],
                                 stall > 0.0 ? im.peak_torque[m] / stall : 0.0, im.peak_time[m]});
  }
  s.max_velocity_iterations = im.max_velocity_iterations;
  s.steps_at_iteration_cap = im.steps_at_cap;
  s.time_at_iteration_cap_s = static_cast<double>(im.steps_at_cap) * model.solver.time_step_s;
  s.fault = im.fault;
  return s;
}

std::vector<ExpectationResult> Scorer::expectations() const {
  if (!impl_->checker) return {};
  return impl_->checker->results();
}

}  // namespace sim::engine
