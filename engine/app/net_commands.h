// The network subcommands of `simtrainer` (serve, view --remote, instruct; docs/network.md),
// built when SIMTRAINER_NET is on. main.cpp registers them and lends its window and input code.
#pragma once

#include <engine/run.h>
#include <engine/scene.h>

#include <CLI/CLI.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <string>

namespace sim::input {
class InputSystem;
}

namespace simtrainer_app {

struct NetHooks {
  /// The window (or nothing when headless / no display) of a scene, as a frame observer.
  std::function<sim::engine::FrameObserver(const sim::engine::Scene& scene, bool headless,
                                           const std::string& camera, const std::string& size)>
      make_view;
  /// The devices of `--input` (a mapping file or "keyboard"); null when `source` is empty.
  std::function<std::unique_ptr<sim::input::InputSystem>(const sim::engine::Scene& scene,
                                                         const std::string& source)>
      open_input;
  const std::atomic<bool>* interrupt = nullptr;
};

class NetCommands {
 public:
  explicit NetCommands(CLI::App& app);
  ~NetCommands();
  /// Runs the chosen network subcommand; returns -1 when none of them was chosen.
  int run(const NetHooks& hooks);

  struct Args;  // the parsed options (net_commands.cpp)

 private:
  std::unique_ptr<Args> args_;
};

}  // namespace simtrainer_app
