#!/usr/bin/env bash
# Ours against Jolt 5.5.1 in one run: ../shared/peers/interleave.sh's rounds (our pile, grasp and
# chains, each followed by Jolt's same scenario, pinned to one core), plus our pile with manifold
# reuse at Jolt's body-pair-cache tolerances (1 mm, 2 degrees; Jolt has its cache on by default)
# and our pile with the AVX2 form of the batched sweep (Jolt is built for AVX2; ours uses AVX-512
# where the processor has it).
# Compare the minimum of each over the rounds: the machine's speed drifts by up to 2x over minutes.
#
#   bash ../shared/peers/setup-jolt.sh        # once: builds Jolt and jolt_bench (~3 min)
#   bash bench/vs_jolt.sh [ROUNDS] [OUT]      # default 3 rounds, bench/results/vs_jolt.txt
#   python3 bench/vs_jolt_table.py [OUT]      # the minima as a Markdown table
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
out=${2:-bench/results/vs_jolt.txt}
jolt=${PEERS_BUILD:-$HOME/.cache/peers-build}/jolt_bench
[ -x "$jolt" ] || { echo "vs_jolt: no $jolt (run ../shared/peers/setup-jolt.sh)" >&2; exit 1; }
pin="taskset -c 1"
b=build/bin
{
  echo "# $(date -u '+%F %T') commit $(git rev-parse --short HEAD)$(git diff --quiet -- . ':!bench/results' || echo '+changes') load $(cut -d' ' -f1-3 /proc/loadavg)"
  for r in $(seq 1 "$rounds"); do
    echo "## round $r $(date -u +%T)"
    $pin $b/bench_pile --no-grasp --iterations 10 --columns 10 --csv /tmp/vs_jolt_pile.csv | sed 's/^/ours-pile /'
    $pin $b/bench_pile --no-grasp --iterations 10 --columns 10 --manifold-reuse 1e-3 0.0349 \
      --csv /tmp/vs_jolt_pile.csv | sed 's/^/ours-pile-reuse /'
    $pin $b/bench_pile --no-grasp --iterations 10 --columns 10 --batch-sweep 1 \
      --csv /tmp/vs_jolt_pile.csv | sed 's/^/ours-pile-avx2 /'
    $pin "$jolt" S3 2>&1 | grep '^CSV,' | grep -E 'us_per_step|max_pen_end' | sed 's/^/jolt /'
    $pin $b/bench_pile --grasp-only --grasp-repeats 1 --grasp-engine-only | sed 's/^/ours-grasp /'
    $pin "$jolt" S4 2>&1 | grep '^CSV,' | grep -E 'us_per_step|slip_mm' | sed 's/^/jolt /'
    $pin $b/bench_chain --repeats 1 --iterations 10 --csv /tmp/vs_jolt_chain.csv | sed 's/^/ours-chain /'
    $pin "$jolt" S2 2>&1 | grep '^CSV,' | grep -E 'us_per_step' | sed 's/^/jolt /'
  done
} >"$out"
echo "wrote $out"
