// Helpers shared by the contact test suites.
#pragma once

#include <dynamics/model.h>
#include <dynamics/simulator.h>
#include <dynamics/state.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "fixture.h"

namespace sim::dynamics::contact_testing {

/// A cylinder shape (local z axis) centred on its body.
inline ShapeDef cylinder(double radius, double half_length) {
  ShapeDef s;
  s.type = ShapeType::Cylinder;
  s.radius_m = radius;
  s.half_length_m = half_length;
  return s;
}

/// Deepest penetration among the state's contacts (m, >= 0).
inline double maxPenetration(const State& s) {
  double p = 0.0;
  for (const ContactState& c : s.contacts) p = std::max(p, -c.separation_m);
  return p;
}

/// Steps `seconds`; fails the test on a fault. Returns the largest penetration seen.
inline double run(Simulator& sim, State& s, double seconds) {
  const int steps = static_cast<int>(std::lround(seconds / sim.model().solver.time_step_s));
  double worst = 0.0;
  for (int i = 0; i < steps; ++i) {
    if (checkedStep(sim, s).fault.kind != Fault::Kind::None) break;
    worst = std::max(worst, maxPenetration(s));
  }
  return worst;
}

}  // namespace sim::dynamics::contact_testing
