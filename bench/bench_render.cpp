// Frame time of the 3D view: the MF-4 scene drawn (offscreen pixel buffer or a window) while
// its grip scenario plays, at a given size. Prints mean, p99 and max of the draw time per frame
// and the frames per second it allows. Needs an X server: run under xvfb-run on a machine without
// one, e.g.
//
//   xvfb-run -a -s "-screen 0 1920x1080x24" build/bin/bench_render --frames 300 --size 1280x720
//
// Options: --window (a window instead of a pixel buffer), --no-hud, --camera NAME.
#include <engine/frame_clock.h>
#include <engine/scenario.h>
#include <engine/session.h>
#include <engine/session_view.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  int frames = 300;
  int width = 1280, height = 720;
  bool window = false, hud = true;
  std::string camera = "follow";
  std::string scenario_path = std::string(SIMTRAINER_SOURCE_DIR) +
                              "/scenes/scenarios/mf4_grip_lift.scenario.yaml";
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
    } else if (arg == "--camera" && i + 1 < argc) {
      camera = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: bench_render [--frames N] [--size WxH] [--window] [--no-hud] "
                   "[--camera NAME]\n");
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
  SessionView view(scenario.scene, setup);
  if (!hud) view.view().setHud({});

  PlayOptions options;
  TimingStats draw;
  int drawn = 0;
  options.after_frame = [&](const Session& session, const RunResult& so_far,
                            const std::vector<std::string>& notes) {
    const auto start = std::chrono::steady_clock::now();
    view.show(session, so_far, notes);
    draw.add(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return ++drawn < frames;
  };
  playScenario(scenario, options);
  std::printf("bench_render: %d frames of %s at %dx%d (%s, HUD %s, camera %s)\n", drawn,
              scenario.scene.name.c_str(), width, height, window ? "window" : "pixel buffer",
              hud ? "on" : "off", camera.c_str());
  std::printf("draw time per frame: mean %.2f ms  p99 %.2f ms  max %.2f ms  -> %.1f frames/s\n",
              1e3 * draw.mean(), 1e3 * draw.p99(), 1e3 * draw.max(), 1.0 / draw.mean());
  return 0;
}
