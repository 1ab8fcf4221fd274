#!/usr/bin/env bash
# The threaded parts under ThreadSanitizer: the server's state writer thread (LatestWriter), the
# live session (simulation thread, view and X key thread: render_live_view_test) and the training
# class over DDS (net tests: the `simtrainer` processes themselves are built with TSan too), the
# step's worker threads (dynamics_parallel_step_test), and
# the pthread_mutex_clocklock forwarder those need under GCC 12's TSan (tests/sanitizers/).
# Run before every submission that touches threaded code; exits non-zero on any race report.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS

bash scripts/install-deps.sh
cmake -S . -B build-tsan -G Ninja -DSIMTRAINER_SANITIZE=thread -DSIMTRAINER_BUILD_BENCH=OFF -DSIMTRAINER_PYTHON=OFF \
  -DSIMTRAINER_WERROR=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1"
targets=(tsan_clocklock_test latest_writer_test dynamics_parallel_step_test live_view_test simtrainer)
if grep -q "SIMTRAINER_NET:BOOL=ON" build-tsan/CMakeCache.txt; then targets+=(net_test); fi
cmake --build build-tsan -j2 --target "${targets[@]}"
echo "== build ($((SECONDS - start)) s)"

# halt_on_error: the first race fails its test. second_deadlock_stack: both stacks of a lock
# inversion. The suppressions cover libraries built without TSan (tests/sanitizers/README.md).
TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/sanitizers/tsan.supp" \
  ctest --test-dir build-tsan --output-on-failure -j2 --timeout 900 \
  -R '^(TsanClocklock|LatestWriter|ParallelStep|WorkerPool|render_live_view_test|Net)'
echo "== done ($((SECONDS - start)) s)"
