#!/usr/bin/env bash
# The solver's heavy validation (dynamics/src/check.h: SIM_VALIDATE; CMake option
# SIMTRAINER_VALIDATE): builds only the dynamics tests with it in build-validate/ (-O2, -Werror, no
# sanitizers) and runs them: the quick check while working on the solver. CI has it on in the
# sanitizer build of the whole suite (scripts/test-sanitizers.sh). Exits non-zero on any failure (a
# failed validation aborts the test program with the condition, file and line).
set -euo pipefail
cd "$(dirname "$0")/.."

cmake -S . -B build-validate -G Ninja -DSIMTRAINER_WERROR=ON -DSIMTRAINER_VALIDATE=ON \
  -DSIMTRAINER_BUILD_BENCH=OFF -DSIMTRAINER_NET=OFF
mapfile -t targets < <(ninja -C build-validate -t targets all | grep -oE '^dynamics_[a-z_]+_test' | sort -u)
cmake --build build-validate -j2 --target "${targets[@]}"
status=0
for t in "${targets[@]}"; do
  build-validate/tests/"$t" --gtest_brief=1 || status=1
done
exit $status
