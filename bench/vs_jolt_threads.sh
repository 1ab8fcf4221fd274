#!/usr/bin/env bash
# One and two threads, ours against Jolt 5.5.1, in one run: the 1000-box pile (sleeping off and
# on), each engine with 1 and then 2 threads, all on cores 0 and 1, ROUNDS times alternating.
# Compare the minimum of each over the rounds: the machine's speed drifts by up to 2x over
# minutes, and on this virtual machine two threads of one process sometimes run far slower than
# two processes do (both engines; bench/README.md "Two threads").
#
#   bash ../shared/peers/setup-jolt.sh     # once: builds Jolt (~3 min)
#   bash bench/peers/build.sh              # once: jolt_bench with PEERS_JOLT_THREADS (~10 s)
#   bash bench/vs_jolt_threads.sh [ROUNDS] [OUT]   # default 5, bench/results/vs_jolt_threads.txt
#   python3 bench/vs_jolt_threads_table.py [OUT]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
out=${2:-bench/results/vs_jolt_threads.txt}
jolt=${PEERS_MT_BUILD:-$HOME/.cache/peers-build-mt}/jolt_bench
[ -x "$jolt" ] || { echo "vs_jolt_threads: no $jolt (run bench/peers/build.sh)" >&2; exit 1; }
pin="taskset -c 0,1"
b=build/bin
{
  echo "# $(date -u '+%F %T') commit $(git rev-parse --short HEAD)$(git diff --quiet -- . ':!bench/results' || echo '+changes') load $(cut -d' ' -f1-3 /proc/loadavg)"
  for r in $(seq 1 "$rounds"); do
    echo "## round $r $(date -u +%T)"
    for t in 1 2; do
      $pin $b/bench_pile --no-grasp --iterations 10 --columns 10 --threads $t \
        --csv /tmp/vs_jolt_threads.csv | sed "s/^/ours-pile-t$t /"
      PEERS_JOLT_THREADS=$t $pin "$jolt" S3 2>&1 | grep '^CSV,' | grep 'us_per_step' \
        | grep 10x10x10 | sed "s/^/jolt-t$t /"
    done
  done
} >"$out"
echo "wrote $out"
