#!/usr/bin/env bash
# Every test: install dependencies, check the C++ format (.clang-format), build with warnings as
# errors, run CTest, then the dynamics tests with the solver's heavy validation
# (scripts/validate.sh), then the whole suite again built with AddressSanitizer +
# UndefinedBehaviorSanitizer (scripts/test-sanitizers.sh). Exits non-zero on any failure.
# CI runs exactly this (.ci/run). ThreadSanitizer (scripts/test-threads.sh, the threaded tests)
# runs before every submission that touches threaded code: with it, a cold CI would not stay well
# inside its 90 minutes (README, "Reliability").
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS

bash scripts/install-deps.sh
bash scripts/check-format.sh
cmake -S . -B build -G Ninja -DSIMTRAINER_WERROR=ON
cmake --build build -j2
echo "== build done ($((SECONDS - start)) s)"
ctest --test-dir build --output-on-failure -j2
echo "== tests done ($((SECONDS - start)) s)"
bash scripts/validate.sh
echo "== validation done ($((SECONDS - start)) s)"
bash scripts/test-sanitizers.sh
echo "== sanitizers done ($((SECONDS - start)) s)"
