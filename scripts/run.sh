#!/usr/bin/env bash
# The main job: install dependencies, build, and play the MF-4 scenario (a tracked robot drives
# up to a container, grips it by its handle, lifts it and sets it on a shelf). With a display it
# opens the 3D window in real time; without one it runs headless and prints the summary and the
# scenario's checks. Extra arguments go to `simtrainer play` (e.g. --headless, --screenshot F.png).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake -S . -B build -G Ninja
cmake --build build -j2
build/bin/simtrainer play scenes/scenarios/mf4_grip_lift.scenario.yaml "$@"
