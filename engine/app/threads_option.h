// The `--threads N` option of the commands that step a session (run, play, serve).
#pragma once

#include <CLI/CLI.hpp>

#include <algorithm>
#include <thread>

namespace simtrainer_app {

/// The machine's cores (at least 1): the default thread count of a step.
inline int machineCores() {
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

/// Adds --threads to a subcommand; `threads` starts at the machine's cores. The step's result does
/// not depend on the count (dynamics::Simulator::setThreads), only its speed does.
inline void addThreadsOption(CLI::App* command, int& threads) {
  threads = machineCores();
  command
      ->add_option("--threads", threads,
                   "Threads each simulation step may use (default: the machine's cores; the "
                   "results are the same for any count)")
      ->option_text("N")
      ->check(CLI::Range(1, 256));
}

}  // namespace simtrainer_app
