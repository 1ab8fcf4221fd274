// friction_report: writes the data behind docs/validation/ (seed 000 Figs. 7 and 8, the seed 003
// servo) as CSV files into the given directory; scripts/validation-figures.sh plots them.
// The same rigs as tests/dynamics/friction_test.cpp, which asserts on them, and the coupled drive
// of tests/dynamics/drive_coupled_test.cpp (backlash, eq. 22 output friction).
#include <dynamics/drive_unit.h>
#include <dynamics/friction.h>
#include <dynamics/simulator.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numbers>
#include <string>
#include <vector>

namespace fr = sim::dynamics::friction;

namespace {

constexpr double kPi = std::numbers::pi;

fr::ModifiedLuGreParams seed000() {
  return sim::dynamics::drive::DriveUnitParams::seed000Friction();
}

// Fig. 7: J2 ε = a(t) sin(ωt) − M_f, a rising to 0.9 M_S over 4 periods of 1 s.
void fig7(const std::filesystem::path& file) {
  const auto p = seed000();
  const double j2 = sim::dynamics::seed000::kOutputInertia_kgm2, zone = 1e-4, omega = 2 * kPi,
               tEnd = 4.0;
  std::FILE* out = std::fopen(file.c_str(), "w");
  std::fprintf(out,
               "time_s,torque_Nm,theta_dynamic_rad,friction_dynamic_Nm,theta_static_rad,"
               "friction_static_Nm\n");
  fr::LuGreState s;
  double xd = 0, vd = 0, xs = 0, vs = 0;
  const double dt = 1e-6;  // eq. 29 bound for the static model is 1.7e-6 s
  const long steps = std::lround(tEnd / dt);
  for (long k = 0; k < steps; ++k) {
    const double t = static_cast<double>(k) * dt;
    const double m = 0.9 * p.curve.breakaway * t / tEnd * std::sin(omega * t);
    const double fd = fr::stepModifiedLuGre(p, s, vd, dt).friction;
    const double fs = fr::linearisedStribeck(p.curve, zone, vs);
    vd += dt * (m - fd) / j2;
    xd += dt * vd;
    vs += dt * (m - fs) / j2;
    xs += dt * vs;
    if (k % 1000 == 0) std::fprintf(out, "%.6f,%.9g,%.9g,%.9g,%.9g,%.9g\n", t, m, xd, fd, xs, fs);
  }
  std::fclose(out);
}

// Fig. 8: imposed Ω = 25 sin(ωt) + 30 rad/s, second cycle, slow (1 rad/s) and fast (200 rad/s).
void fig8(const std::filesystem::path& file) {
  const auto p = seed000();
  std::FILE* out = std::fopen(file.c_str(), "w");
  std::fprintf(out, "speed_radps,g_Nm,dynamic_slow_Nm,dynamic_fast_Nm,static_Nm\n");
  fr::LuGreState slow, fast;
  const int n = 20000;
  for (int k = 0; k < 2 * n; ++k) {
    const double phase = 2 * kPi * k / n;
    const double speed = 25.0 * std::sin(phase) + 30.0;
    const double fSlow = fr::stepModifiedLuGre(p, slow, speed, 2 * kPi / 1.0 / n).friction;
    const double fFast = fr::stepModifiedLuGre(p, fast, speed, 2 * kPi / 200.0 / n).friction;
    if (k < n || k % 20 != 0) continue;
    std::fprintf(out, "%.9g,%.9g,%.9g,%.9g,%.9g\n", speed,
                 fr::stribeckMagnitude(fr::StribeckCurve::Generalised, p.curve, speed), fSlow,
                 fFast, fr::linearisedStribeck(p.curve, 1e-4, speed));
  }
  std::fclose(out);
}

// Seed 003 servo tracking θd = 0.3 sin(πt), with and without friction.
void servo(const std::filesystem::path& file) {
  const fr::StickSlipLuGreParams p;
  const double J = 0.01, kv = 100, kp = 2500, dt = 1e-5, A = 0.3, w = kPi;
  std::FILE* out = std::fopen(file.c_str(), "w");
  std::fprintf(out, "time_s,theta_d,theta,error,error_no_friction,slipping,u,friction\n");
  fr::StickSlipState s;
  double th = 0, v = 0, th0 = 0, v0 = 0;
  for (long k = 0; k < 600000; ++k) {
    const double t = static_cast<double>(k) * dt;
    const double td = A * std::sin(w * t), tdd = A * w * std::cos(w * t),
                 tddd = -A * w * w * std::sin(w * t);
    const double u = J * (tddd + kv * (tdd - v) + kp * (td - th));
    const double u0 = J * (tddd + kv * (tdd - v0) + kp * (td - th0));
    const auto r = fr::stepStickSlipLuGre(p, s, u, v, J, dt);
    if (k % 200 == 0)
      std::fprintf(out, "%.5f,%.9g,%.9g,%.9g,%.9g,%d,%.9g,%.9g\n", t, td, th, td - th, td - th0,
                   r.slipping ? 1 : 0, u, r.friction);
    v += dt * r.acceleration;
    th += dt * v;
    v0 += dt * u0 / J;
    th0 += dt * v0;
  }
  std::fclose(out);
}

// Backlash of the seed 000 drive coupled to the solver (a link of J2 on a vertical hinge, the
// identified drive with θ_bn = 0.01 rad, dt = 1/240 s): u = ±0.3 reversing every 0.5 s. Transmitted
// torque M1 against twist θ = a_m / i − q: zero inside ±θ_bn, slope c outside.
sim::dynamics::Model driveLink(double backlash, double dt) {
  namespace dyn = sim::dynamics;
  dyn::Model m;
  m.solver.time_step_s = dt;
  m.solver.velocity_iterations = 30;
  dyn::BodyDef link;
  link.name = "link";
  link.mass_kg = 0.2;
  link.inertia_kgm2 = dyn::Mat3::Identity() * dyn::seed000::kOutputInertia_kgm2;
  m.bodies.push_back(link);
  dyn::JointDef j;
  j.name = "hinge";
  j.body_b = 0;
  j.frame_a.rotation = dyn::Quat::FromTwoVectors(dyn::Vec3::UnitX(), dyn::Vec3::UnitZ());
  j.frame_b.rotation = j.frame_a.rotation;
  m.joints.push_back(j);
  dyn::MotorDef mo;
  mo.name = "drive";
  mo.rotor_inertia_kgm2 = dyn::seed000::kInputInertia_kgm2;
  mo.gear_ratio = dyn::seed000::kGearRatio;
  dyn::DriveDef d;
  d.backlash = backlash;
  mo.drive = d;
  m.motors.push_back(mo);
  return m;
}

void backlash(const std::filesystem::path& file) {
  namespace dyn = sim::dynamics;
  const dyn::Model m = driveLink(0.01, 1.0 / 240.0);
  dyn::Simulator sim(m);
  dyn::State s = sim.initialState();
  std::FILE* out = std::fopen(file.c_str(), "w");
  std::fprintf(out, "time_s,input_rad,output_rad,twist_rad,M1_Nm,current_A\n");
  for (int k = 0; k < 720; ++k) {
    s.motors[0].voltage = (k / 120) % 2 == 0 ? 0.3 : -0.3;
    sim.step(s);
    const double input = s.motors[0].angle_rad / 28.0;
    std::fprintf(out, "%.6f,%.9g,%.9g,%.9g,%.9g,%.9g\n", s.time_s, input, s.joints[0].position,
                 input - s.joints[0].position, s.motors[0].coupling_impulse / m.solver.time_step_s,
                 s.motors[0].current_A);
  }
  std::fclose(out);
}

// Eq. 22 as the coupled drive's output friction. Left: pre-sliding, u = 0.015 sin(2πt) (below
// breakaway), transmitted torque M1 against the output angle over the third period, static output
// friction and eq. 22. Right: output speed under u = 0.5 sin(2πt), the solver at 1/240 and 1/960
// s against the standalone model at 1 µs (rows every 1/240 s).
void driveEq22(const std::filesystem::path& loop_file, const std::filesystem::path& speed_file) {
  namespace dyn = sim::dynamics;
  const double h = 1.0 / 240.0;
  std::FILE* out = std::fopen(loop_file.c_str(), "w");
  std::fprintf(out, "time_s,static_q_rad,static_M1_Nm,eq22_q_rad,eq22_M1_Nm\n");
  dyn::Model ms = driveLink(0.0, h), ml = driveLink(0.0, h);
  ml.motors[0].drive->friction = dyn::DriveFriction::LuGre;
  dyn::Simulator ss(ms), sl(ml);
  dyn::State a = ss.initialState(), b = sl.initialState();
  for (int n = 0; n < 3 * 240; ++n) {
    a.motors[0].voltage = b.motors[0].voltage = 0.015 * std::sin(2.0 * kPi * (n + 0.5) * h);
    ss.step(a);
    sl.step(b);
    if (n >= 2 * 240)
      std::fprintf(out, "%.6f,%.9g,%.9g,%.9g,%.9g\n", a.time_s, a.joints[0].position,
                   a.motors[0].coupling_impulse / h, b.joints[0].position,
                   b.motors[0].coupling_impulse / h);
  }
  std::fclose(out);

  auto coupled = [](double dt) {
    dyn::Model m = driveLink(0.0, dt);
    m.motors[0].drive->friction = dyn::DriveFriction::LuGre;
    dyn::Simulator sim(m);
    dyn::State s = sim.initialState();
    const int per = static_cast<int>(std::lround(1.0 / 240.0 / dt));
    std::vector<double> v;
    for (int n = 0; n < 480 * per; ++n) {
      s.motors[0].voltage = 0.5 * std::sin(2.0 * kPi * (n + 0.5) * dt);
      sim.step(s);
      if ((n + 1) % per == 0) v.push_back(s.joints[0].speed);
    }
    return v;
  };
  const std::vector<double> c240 = coupled(1.0 / 240.0), c960 = coupled(1.0 / 960.0);
  dyn::drive::DriveUnitParams p;
  dyn::drive::DriveUnitState st;
  out = std::fopen(speed_file.c_str(), "w");
  std::fprintf(out, "time_s,standalone_radps,solver_240_radps,solver_960_radps\n");
  const int per = 1000000 / 240 + 1;  // 1 µs steps between rows (4167 µs ≈ 1/240 s)
  const double dt = 1.0 / 240.0 / per;
  for (std::size_t k = 0; k < c240.size(); ++k) {
    for (int i = 0; i < per; ++i) {
      const double t = (static_cast<double>(k * per + i) + 0.5) * dt;
      dyn::drive::stepDriveUnit(p, st, 12.0 * 0.5 * std::sin(2.0 * kPi * t), 0.0, dt);
    }
    std::fprintf(out, "%.6f,%.9g,%.9g,%.9g\n", static_cast<double>(k + 1) / 240.0, st.omega2_radps,
                 c240[k], c960[k]);
  }
  std::fclose(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: friction_report OUTPUT_DIR\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  fig7(dir / "fig7_presliding.csv");
  fig8(dir / "fig8_stribeck.csv");
  servo(dir / "seed003_servo.csv");
  backlash(dir / "drive_backlash.csv");
  driveEq22(dir / "drive_eq22_loop.csv", dir / "drive_eq22_speed.csv");
  std::printf(
      "wrote %s/{fig7_presliding,fig8_stribeck,seed003_servo,drive_backlash,"
      "drive_eq22_loop,drive_eq22_speed}.csv\n",
      dir.c_str());
  return 0;
}
