#!/usr/bin/env bash
# Builds bench/peers/jolt_bench (Jolt with an optional thread pool: PEERS_JOLT_THREADS=N) against
# the Jolt that ../shared/peers/setup-jolt.sh built (run that first, ~3 min), into
# $PEERS_MT_BUILD (default ~/.cache/peers-build-mt).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
jd=${PEERS_JOLT:-$HOME/.cache/peers-jolt}
[ -f "$jd/build/JoltConfig.cmake" ] || { echo "bench/peers: no Jolt in $jd (run ../shared/peers/setup-jolt.sh)" >&2; exit 1; }
out=${PEERS_MT_BUILD:-$HOME/.cache/peers-build-mt}
cmake -S "$here" -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=Release -DJOLT_BUILD="$jd/build" -DJOLT_TAG=3b47ec3 >/dev/null
cmake --build "$out" -j2 >/dev/null
echo "built $out/jolt_bench"
