#!/usr/bin/env bash
# Every test: install dependencies, build with warnings as errors, run CTest. Exits non-zero on
# any failure. CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DSIMTRAINER_WERROR=ON
cmake --build build -j2
ctest --test-dir build --output-on-failure -j2
