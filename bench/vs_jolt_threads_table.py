#!/usr/bin/env python3
"""The minimum of each row over bench/vs_jolt_threads.sh's rounds, as Markdown.

    python3 bench/vs_jolt_threads_table.py [bench/results/vs_jolt_threads.txt]
"""
import sys
from collections import defaultdict

path = sys.argv[1] if len(sys.argv) > 1 else "bench/results/vs_jolt_threads.txt"
runs = defaultdict(list)
for line in open(path):
    f = line.split()
    if len(f) > 5 and f[0].startswith("ours-pile-t") and f[1] == "1000":
        runs[("ours", f[0][-1], f[3])].append(float(f[4]))
    elif f and f[0].startswith("jolt-t"):
        c = f[1].split(",")
        runs[("jolt", f[0][-1], "off" if "sleeping-off" in c[3] else "on")].append(float(c[6]))

best = {k: min(v) for k, v in runs.items()}
print("| 1000-box pile, 10 it | ours 1 thread | ours 2 threads | ours speed-up "
      "| Jolt 1 thread | Jolt 2 threads | Jolt speed-up | ours / Jolt, 2 threads |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for sleep in ("off", "on"):
    o1, o2 = best[("ours", "1", sleep)], best[("ours", "2", sleep)]
    j1, j2 = best[("jolt", "1", sleep)], best[("jolt", "2", sleep)]
    print(f"| sleeping {sleep} | {o1:.1f} | {o2:.1f} | {o1 / o2:.2f} | {j1:.1f} | {j2:.1f} "
          f"| {j1 / j2:.2f} | {o2 / j2:.2f} |")
print()
print("Every round (µs/step, in order):")
for k in sorted(runs):
    print(f"- {k[0]} {k[1]} thread(s), sleeping {k[2]}: " + ", ".join(f"{x:.0f}" for x in runs[k]))
