// Frame time of the 3D view: the MF-4 scene drawn (offscreen pixel buffer or a window) while
// its grip scenario plays, at a given size. Prints mean, p99 and max of the draw time per frame
// and the frames per second it allows. Needs an X server: run under xvfb-run on a machine without
// one, e.g.
//
//   xvfb-run -a -s "-screen 0 1920x1080x24" build/bin/bench_render --frames 300 --size 1280x720
//
// Options: --window (a window instead of a pixel buffer), --no-hud, --shadows on|off|auto (on),
// --shadow-map TEXELS (per side), --no-insets,
// --camera NAME, --compare (also draws every frame in a second view with shadows and insets off,
// alternating, and prints the ratio of the two: the cost of shadows and insets in one run),
// --compare-hud (the second view is the same without its HUD: the HUD's cost in one run).
#include <engine/frame_clock.h>
#include <engine/scenario.h>
#include <engine/session.h>
#include <engine/session_view.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>

int main(int argc, char** argv) {
  int frames = 300;
  int width = 1280, height = 720;
  bool window = false, hud = true, insets = true, compare = false, compare_hud = false;
  std::string shadows = "on";
  int shadow_map = sim::engine::ViewSetup{}.shadow_map_size;
  std::string camera = "follow";
  std::string scenario_path =
      std::string(SIMTRAINER_SOURCE_DIR) + "/scenes/scenarios/mf4_grip_lift.scenario.yaml";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--frames" && i + 1 < argc) {
      frames = std::atoi(argv[++i]);
    } else if (arg == "--size" && i + 1 < argc) {
      if (std::sscanf(argv[++i], "%dx%d", &width, &height) != 2) return 2;
    } else if (arg == "--window") {
      window = true;
    } else if (arg == "--no-hud") {
      hud = false;
    } else if (arg == "--shadows" && i + 1 < argc) {
      shadows = argv[++i];
    } else if (arg == "--shadow-map" && i + 1 < argc) {
      shadow_map = std::atoi(argv[++i]);
    } else if (arg == "--no-insets") {
      insets = false;
    } else if (arg == "--compare") {
      compare = true;
    } else if (arg == "--compare-hud") {
      compare_hud = true;
    } else if (arg == "--camera" && i + 1 < argc) {
      camera = argv[++i];
    } else {
      std::fprintf(
          stderr,
          "usage: bench_render [--frames N] [--size WxH] [--window] [--no-hud] "
          "[--shadows on|off|auto] [--shadow-map TEXELS] [--no-insets] [--camera NAME] [--compare] "
          "[--compare-hud]\n");
      return 2;
    }
  }
  using namespace sim::engine;
  const Scenario scenario = loadScenario(scenario_path);
  ViewSetup setup;
  setup.width = width;
  setup.height = height;
  setup.offscreen = !window;
  setup.camera = camera;
  setup.shadows = shadows == "off"  ? sim::render::Shadows::Off
                  : shadows == "on" ? sim::render::Shadows::On
                                    : sim::render::Shadows::Auto;
  setup.shadow_map_size = shadow_map;
  setup.insets = insets;
  SessionView view(scenario.scene, setup);
  if (!hud) view.view().setHud({});
  std::unique_ptr<SessionView> plain;
  if (compare || compare_hud) {
    ViewSetup plain_setup = setup;
    plain_setup.offscreen = true;
    if (compare) {
      plain_setup.shadows = sim::render::Shadows::Off;
      plain_setup.insets = false;
    }
    plain = std::make_unique<SessionView>(scenario.scene, plain_setup);
    if (!hud || compare_hud) plain->view().setHud({});
  }

  PlayOptions options;
  TimingStats draw, draw_plain, cpu, cpu_plain;
  int drawn = 0;
  // The drawing thread's CPU time as well as the wall time: with LP_NUM_THREADS=0 llvmpipe
  // rasterises on this thread, so the CPU time is the frame's work whatever else the machine does.
  const auto threadCpu = [] {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
  };
  const auto timed = [&](SessionView& v, TimingStats& wall, TimingStats& cpu_time,
                         const Session& session, const RunResult& so_far,
                         const std::vector<std::string>& notes) {
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = threadCpu();
    v.show(session, so_far, notes);
    cpu_time.add(threadCpu() - cpu_start);
    wall.add(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  };
  options.after_frame = [&](const Session& session, const RunResult& so_far,
                            const std::vector<std::string>& notes) {
    timed(view, draw, cpu, session, so_far, notes);
    if (plain) timed(*plain, draw_plain, cpu_plain, session, so_far, notes);
    return ++drawn < frames;
  };
  playScenario(scenario, options);
  std::printf(
      "bench_render: %d frames of %s at %dx%d (%s, HUD %s, shadows %s, %zu insets, "
      "camera %s)\n",
      drawn, scenario.scene.name.c_str(), width, height, window ? "window" : "pixel buffer",
      hud ? "on" : "off", view.view().shadowsOn() ? "on" : "off", view.view().insetCount(),
      camera.c_str());
  std::printf("OpenGL renderer: %s\n", view.view().glRenderer().c_str());
  std::printf("draw time per frame: mean %.2f ms  p99 %.2f ms  max %.2f ms  -> %.1f frames/s\n",
              1e3 * draw.mean(), 1e3 * draw.p99(), 1e3 * draw.max(), 1.0 / draw.mean());
  std::printf(
      "drawing thread's CPU time per frame: mean %.2f ms (all of the frame's work only "
      "with LP_NUM_THREADS=0)\n",
      1e3 * cpu.mean());
  if (plain) {
    std::printf("same frames without %s: mean %.2f ms  p99 %.2f ms  max %.2f ms\n",
                compare_hud ? "the HUD" : "shadows and insets", 1e3 * draw_plain.mean(),
                1e3 * draw_plain.p99(), 1e3 * draw_plain.max());
    std::printf(
        "ratio (as configured / plain): mean %.2f  p99 %.2f  CPU time %.2f (%.2f / %.2f ms)\n",
        draw.mean() / draw_plain.mean(), draw.p99() / draw_plain.p99(),
        cpu.mean() / cpu_plain.mean(), 1e3 * cpu.mean(), 1e3 * cpu_plain.mean());
  }
  return 0;
}
