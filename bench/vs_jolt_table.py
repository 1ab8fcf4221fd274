#!/usr/bin/env python3
"""The minimum of each row over bench/vs_jolt.sh's rounds, ours against Jolt, as Markdown.

    python3 bench/vs_jolt_table.py [bench/results/vs_jolt.txt]
"""
import re
import sys
from collections import defaultdict

path = sys.argv[1] if len(sys.argv) > 1 else "bench/results/vs_jolt.txt"
best = defaultdict(lambda: float("inf"))


def keep(key, value):
    best[key] = min(best[key], float(value))


for line in open(path):
    f = line.split()
    if not f:
        continue
    if f[0] in ("ours-pile", "ours-pile-reuse", "ours-pile-avx2") and len(f) > 4 and f[1] == "1000":
        keep((f[0], "pile", f[3]), f[4])
    elif f[0] == "ours-grasp":
        m = re.search(r"([0-9.]+) us/step", line)
        if m:
            keep(("ours", "grasp"), m.group(1))
    elif f[0] == "ours-chain" and len(f) > 3 and f[1].isdigit():
        keep(("ours", "chain", f[1]), f[3])
    elif f[0] == "jolt":
        c = f[1].split(",")
        scen, variant, case, metric, value = c[1], c[3], c[4], c[5], c[6]
        if metric != "us_per_step":
            continue
        if scen == "S3" and case == "10x10x10":
            keep(("jolt", "pile", "off" if "sleeping-off" in variant else "on"), value)
        elif scen == "S4":
            keep(("jolt", "grasp", variant.split("/")[0]), value)
        elif scen == "S2":
            keep(("jolt", "chain", case.split("=")[1]), value)  # best of Jolt's variants

print("| scene | ours µs/step | Jolt µs/step | ours / Jolt |")
print("|---|---:|---:|---:|")
for sleep in ("off", "on"):
    j = best[("jolt", "pile", sleep)]
    for who, label in (("ours-pile", ""), ("ours-pile-reuse", ", manifold reuse 1 mm / 2°"),
                       ("ours-pile-avx2", ", our sweep's AVX2 form")):
        o = best[(who, "pile", sleep)]
        if o == float("inf"):
            continue
        print(f"| 1000-box pile, 10 it, sleeping {sleep}{label} | {o:.1f} | {j:.1f} | {o / j:.2f} |")
o = best[("ours", "grasp")]
for v in ("SI-10vel-2pos", "SI-50vel-2pos"):
    j = best[("jolt", "grasp", v)]
    print(f"| grasp, lift 0.3 m (Jolt {v}) | {o:.2f} | {j:.2f} | {o / j:.2f} |")
for n in ("10", "50", "200", "1000"):
    o, j = best[("ours", "chain", n)], best[("jolt", "chain", n)]
    print(f"| chain N = {n}, 10 it (Jolt: its best variant) | {o:.2f} | {j:.2f} | {o / j:.2f} |")
