#!/usr/bin/env bash
# Every test: install dependencies, build with warnings as errors, run CTest; then the same suite
# built with AddressSanitizer + UndefinedBehaviorSanitizer. Exits non-zero on any failure. CI runs
# exactly this (.ci/run). SIMTRAINER_SKIP_SANITIZERS=1 skips the second run (local iterations only).
set -euo pipefail
cd "$(dirname "$0")/.."
phase_start=$SECONDS
phase() { echo "== $1 ($((SECONDS - phase_start)) s since start)"; }

bash scripts/install-deps.sh
phase "build"
cmake -S . -B build -G Ninja -DSIMTRAINER_WERROR=ON
cmake --build build -j2
phase "tests"
ctest --test-dir build --output-on-failure -j2

if [[ "${SIMTRAINER_SKIP_SANITIZERS:-0}" == 1 ]]; then
  phase "done (sanitizer run skipped)"
  exit 0
fi

# The sanitizer build replaces nothing the normal build needs: its own directory, -O1 (the
# sanitizers' recommended level: fast enough to run, precise stacks), no benchmarks, ccache shared.
# No -Werror here: GCC 12's -O1 flow analysis under ASan gives false -Wstringop-overflow warnings
# inside libstdc++; the normal build above is the warnings gate. No Python module: loading an ASan
# library into the uninstrumented interpreter needs the runtime preloaded, and the interpreter's
# own allocations would then be leak-checked; the module's C++ is the engine's, tested here.
phase "sanitizer build (ASan + UBSan)"
cmake -S . -B build-asan -G Ninja -DSIMTRAINER_SANITIZE=address -DSIMTRAINER_BUILD_BENCH=OFF \
  -DSIMTRAINER_PYTHON=OFF -DSIMTRAINER_WERROR=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1"
cmake --build build-asan -j2
phase "sanitizer tests"
supp="$PWD/tests/sanitizers"
ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:abort_on_error=0:strict_string_checks=1" \
LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0" \
UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
  ctest --test-dir build-asan --output-on-failure -j2 --timeout 900
phase "done"
