// Sleeping islands (sleep.h).
#include "sleep.h"

#include <algorithm>

#include "contacts.h"
#include "joints.h"

namespace sim::dynamics::detail {

void Sleep::init(int bodies) {
  groups_.reset(bodies);
  flags_.assign(static_cast<std::size_t>(bodies), 0);
}

void Sleep::update(StepContext& ctx) {
  State& s = ctx.state;
  const ContactSettings& cfg = ctx.model.contact;
  const int nb = ctx.bodies.world;
  if (!cfg.sleep_enabled) {
    for (BodyState& b : s.bodies) {
      b.asleep = false;
      b.slow_time_s = 0.0;
    }
    return;
  }
  const std::vector<double>& inv_mass = ctx.bodies.inv_mass;
  // Everything asleep: no group has an awake body to wake it, and sleepers stay asleep.
  bool any_awake = false;
  for (int i = 0; i < nb && !any_awake; ++i)
    any_awake = inv_mass[static_cast<std::size_t>(i)] > 0.0 &&
                !s.bodies[static_cast<std::size_t>(i)].asleep;
  if (!any_awake) return;
  const double dt = ctx.model.solver.time_step_s;
  // Each awake body's time below the sleep speeds.
  const auto time = [&](BodyState& b) {
    const bool slow = b.linear_velocity_mps.norm() < cfg.sleep_linear_speed_mps &&
                      b.angular_velocity_radps.norm() < cfg.sleep_angular_speed_radps;
    b.slow_time_s = slow ? b.slow_time_s + dt : 0.0;
  };
  // No contact and nobody asleep: no group rests on anything and none has a sleeper to wake, so
  // only the times move (a chain hanging on its joints, bodies in the air).
  if (s.contacts.empty() && std::none_of(s.bodies.begin(), s.bodies.begin() + nb,
                                         [](const BodyState& b) { return b.asleep; })) {
    for (int i = 0; i < nb; ++i)
      if (inv_mass[static_cast<std::size_t>(i)] > 0.0) time(s.bodies[static_cast<std::size_t>(i)]);
    return;
  }
  groups_.reset(nb);
  auto find = [this](int x) { return groups_.find(x); };
  auto dynamic = [&](int b) {
    return b >= 0 && b < nb && inv_mass[static_cast<std::size_t>(b)] > 0.0;
  };
  auto link = [&](int a, int b) {
    if (dynamic(a) && dynamic(b)) groups_.join(a, b);
  };
  // Per group: 1 = has an awake body, 2 = has a sleeping body, 4 = someone not slow long
  // enough, 8 = motorised, 16 = rests on something (a contact). Bodies touching something are
  // marked 32 while linking, and the mark moves to their group's root as 16 below.
  std::vector<int>& flags = flags_;
  std::fill(flags.begin(), flags.end(), 0);
  for (const JointDef& j : ctx.model.joints) link(j.body_a, j.body_b);
  for (std::size_t at = 0; at < s.contacts.size(); ++at) {
    const ContactState& c = s.contacts[at];
    // A pair's points are consecutive (sorted) and link the same two bodies: once is enough.
    if (at > 0 && c.shape_a == s.contacts[at - 1].shape_a &&
        c.shape_b == s.contacts[at - 1].shape_b)
      continue;
    const int a = ctx.contacts.shapeOwner(static_cast<int>(c.shape_a));
    const int b = ctx.contacts.shapeOwner(static_cast<int>(c.shape_b));
    link(a, b);
    if (dynamic(a)) flags[static_cast<std::size_t>(a)] |= 32;
    if (dynamic(b)) flags[static_cast<std::size_t>(b)] |= 32;
  }
  for (int i = 0; i < nb; ++i) {
    if (flags[static_cast<std::size_t>(i)] & 32) flags[static_cast<std::size_t>(find(i))] |= 16;
  }
  for (std::size_t j = 0; j < ctx.model.joints.size(); ++j) {
    if (!ctx.joints.in_block[j]) continue;
    const JointDef& def = ctx.model.joints[j];
    const int body = dynamic(def.body_b) ? def.body_b : def.body_a;
    if (dynamic(body)) flags[static_cast<std::size_t>(find(body))] |= 8;
  }
  for (int i = 0; i < nb; ++i) {
    if (!dynamic(i)) continue;
    BodyState& b = s.bodies[static_cast<std::size_t>(i)];
    if (!b.asleep) time(b);
    int& f = flags[static_cast<std::size_t>(find(i))];
    f |= b.asleep ? 2 : 1;
    if (!b.asleep && b.slow_time_s < cfg.sleep_time_s) f |= 4;
  }
  for (int i = 0; i < nb; ++i) {
    if (!dynamic(i)) continue;
    BodyState& b = s.bodies[static_cast<std::size_t>(i)];
    const int f = flags[static_cast<std::size_t>(find(i))];
    if ((f & 3) == 3) {  // mixed: wake the group
      b.asleep = false;
      b.slow_time_s = 0.0;
    } else if ((f & 16) && !(f & 2) && !(f & 4) && !(f & 8)) {  // resting, slow long enough
      b.asleep = true;
      b.linear_velocity_mps.setZero();
      b.angular_velocity_radps.setZero();
    }
  }
}

}  // namespace sim::dynamics::detail
