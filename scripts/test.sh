#!/usr/bin/env bash
# Every test: install dependencies, check the C++ format (.clang-format), build with warnings as
# errors, run CTest, then the whole suite again built with AddressSanitizer +
# UndefinedBehaviorSanitizer and the solver's heavy validation (scripts/test-sanitizers.sh).
# Exits non-zero on any failure. CI runs exactly this (.ci/run), from a cold clone within its 90
# minutes (README, "Reliability"): the build here keeps line tables only (-g1: full debug info made
# the test files' compiles ~1.6x slower), and ThreadSanitizer (scripts/test-threads.sh, the threaded
# tests) runs before every submission that touches threaded code instead of here.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS

bash scripts/install-deps.sh
bash scripts/check-format.sh
cmake -S . -B build -G Ninja -DSIMTRAINER_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
cmake --build build -j2
echo "== build done ($((SECONDS - start)) s)"
ctest --test-dir build --output-on-failure -j2
echo "== tests done ($((SECONDS - start)) s)"
bash scripts/test-sanitizers.sh
echo "== sanitizers done ($((SECONDS - start)) s)"
