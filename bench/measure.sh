#!/usr/bin/env bash
# Runs, one after the other, every benchmark whose figures bench/README.md quotes, and keeps their
# output in bench/results/ (figures.txt: the console; the CSVs the benchmarks write). Run it on an
# otherwise idle machine after `cmake --build build -j2` (benchmarks on); it prints the commit and
# the load average before each benchmark, which belong next to any figure taken from it.
# About 15 minutes on this 2-core machine. `--quick` skips the one-hour soak (2 minutes), the
# windowed run (1 minute) and the Python module's instruction counts (callgrind, 3 minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
[ "${1:-}" = "--quick" ] && quick=1
bin=build/bin
out=bench/results
mkdir -p "$out"
log="$out/figures.txt"
: >"$log"
xvfb=(xvfb-run -a -s "-screen 0 1920x1080x24")

run() {
  {
    echo
    echo "== $* "
    echo "   $(date -u '+%F %H:%M:%S') commit $(git rev-parse --short HEAD)$(git diff --quiet -- . ':!bench/results' || echo '+changes') load $(cut -d' ' -f1-3 /proc/loadavg)"
  } | tee -a "$log"
  "$@" 2>&1 | tee -a "$log"
}

run "$bin/bench_chain" --repeats 5 --csv "$out/chain_cpp2core.csv"
run "$bin/bench_motor"
run "$bin/bench_pile" --grasp-repeats 3 --csv "$out/pile_cpp2core.csv"
run "$bin/bench_mf4" --duration 60
run "$bin/bench_drive"
export LP_NUM_THREADS=0
run "${xvfb[@]}" "$bin/bench_render" --frames 300 --size 1280x720
run "${xvfb[@]}" "$bin/bench_render" --frames 150 --size 1280x720 --shadows off --no-insets --compare-hud
run "$bin/bench_net" --seconds 5
if [ "$quick" = 0 ]; then
  PYTHONPATH=build/python run python3 bench/bench_python.py --instructions
  run "${xvfb[@]}" "$bin/bench_realtime" --seconds 60
  run "$bin/soak" --seconds 3600
fi
echo "bench/measure.sh: the console output is in $log"
