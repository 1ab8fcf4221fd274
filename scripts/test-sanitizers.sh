#!/usr/bin/env bash
# The whole suite built with AddressSanitizer + UndefinedBehaviorSanitizer and the solver's heavy
# validation (SIMTRAINER_VALIDATE, dynamics/src/check.h) in build-asan/, and run with halt on
# error and leak detection. Exits non-zero on any finding. Suppressions cover
# third-party code only (tests/sanitizers/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS

bash scripts/install-deps.sh
# Its own directory (replaces nothing the normal build needs), -O1 (the sanitizers' recommended
# level: fast enough to run, precise stacks), no benchmarks, ccache shared. No -Werror here: GCC
# 12's -O1 flow analysis under ASan gives false -Wstringop-overflow warnings inside libstdc++; the
# normal build is the warnings gate. No Python module: an ASan library in the uninstrumented
# interpreter needs the runtime preloaded, and the interpreter's own allocations would then be
# leak-checked; the module's C++ is the engine's, tested here.
cmake -S . -B build-asan -G Ninja -DSIMTRAINER_SANITIZE=address -DSIMTRAINER_VALIDATE=ON \
  -DSIMTRAINER_BUILD_BENCH=OFF \
  -DSIMTRAINER_PYTHON=OFF -DSIMTRAINER_WERROR=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1"
cmake --build build-asan -j2
echo "== build done ($((SECONDS - start)) s)"
supp="$PWD/tests/sanitizers"
ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:abort_on_error=0:strict_string_checks=1" \
LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0" \
UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
  ctest --test-dir build-asan --output-on-failure -j2 --timeout 900
echo "== done ($((SECONDS - start)) s)"
