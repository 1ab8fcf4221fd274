#!/usr/bin/env bash
# The main job: install dependencies, build, and run the WG-7152 single-link motor scene headless,
# printing a summary. Extra arguments are passed to `simtrainer run` (e.g. --set motors.drive.t_m=0.5).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake -S . -B build -G Ninja
cmake --build build -j2
build/bin/simtrainer run scenes/wg7152.yaml --headless --duration 10 "$@"
