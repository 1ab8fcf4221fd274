// Cost of the seed 000 drive unit and of LuGre joint friction inside the solver: one step of a
// six-link motorised arm (samples::chain(6) at dt = 1/240 s, a motor on every hinge, voltages
// reversing every 0.5 s) with rigid gear motors, with drive units (static output friction, then
// eq. 22), with LuGre joint friction, and with drives plus LuGre joints. Prints mean wall time per
// step and the ratio to the rigid arm, all in one run.
//   build/bin/bench_drive [steps]
#include <dynamics/samples.h>
#include <dynamics/simulator.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace sim::dynamics;

namespace {

Model arm(bool drive, bool lugre, bool eq22) {
  Model m = samples::chain(6, 1.0 / 240.0, 20, 2);
  for (std::size_t j = 0; j < m.joints.size(); ++j) {
    MotorDef mo;
    mo.name = "m" + std::to_string(j);
    mo.joint = static_cast<int>(j);
    mo.stall_torque_Nm = 0.075;  // k_M U / R of the seed 000 circuit at 12 V
    mo.no_load_speed_radps = 265.0;
    mo.rotor_inertia_kgm2 = 9.49e-7;
    mo.gear_ratio = 28.0;
    if (drive) {
      DriveDef d;
      d.backlash = 0.002;
      if (eq22) d.friction = DriveFriction::LuGre;
      mo.drive = d;
    }
    m.motors.push_back(mo);
    if (lugre) {
      JointFriction& f = m.joints[j].friction;
      f.model = JointFrictionModel::LuGre;
      f.sigma0 = 100.0;
      f.sigma1 = 1.0;
      f.coulomb = 0.01;
      f.breakaway = 0.015;
      f.stribeck_speed = 0.1;
      f.zero_speed = 1e-4;
    }
  }
  return m;
}

double perStepSeconds(const Model& model, int steps) {
  Simulator sim(model);
  State s = sim.initialState();
  const auto t0 = std::chrono::steady_clock::now();
  for (int n = 0; n < steps; ++n) {
    const double u = (n / 120) % 2 == 0 ? 0.5 : -0.5;
    for (MotorState& ms : s.motors) ms.voltage = u;
    const StepReport r = sim.step(s);
    if (r.fault.kind != Fault::Kind::None) {
      std::fprintf(stderr, "fault: %s\n", r.fault.describe().c_str());
      std::exit(1);
    }
  }
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(t1 - t0).count() / steps;
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 4800;
  struct Case {
    const char* name;
    bool drive, lugre, eq22;
  };
  const Case cases[] = {{"rigid motors", false, false, false},
                        {"drive units", true, false, false},
                        {"drive, eq. 22", true, false, true},
                        {"LuGre joints", false, true, false},
                        {"drive + LuGre", true, true, false}};
  double base = 0.0;
  std::printf("6-link motorised arm, dt = 1/240 s, %d steps per case\n", steps);
  for (const Case& c : cases) {
    perStepSeconds(arm(c.drive, c.lugre, c.eq22), steps / 10);  // warm up
    const double t = perStepSeconds(arm(c.drive, c.lugre, c.eq22), steps);
    if (base == 0.0) base = t;
    std::printf("%-14s %8.2f us/step  ratio %.2f\n", c.name, t * 1e6, t / base);
  }
  return 0;
}
