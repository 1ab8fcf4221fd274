#!/usr/bin/env python3
"""The MF-4 scenario's velocity-solve settings against a converged run (bench/README.md, "The cap
against a converged run").

Plays scenes/scenarios/mf4_grip_lift.scenario.yaml headless once per setting (a copy of the
scenario with the setting as `set:` overrides, written next to it and removed after), keeps each
trace, and prints for each run: how its velocity solves ended, the mean sweeps per step, the
scenario's verdict, and how far the container and the chassis came from the reference run (the
first setting) — over the whole scenario, before the grip (0-12 s), and at the end — and the
chassis's heading at the end. Deterministic:
counts and distances do not depend on the machine; no timing is taken here.

Usage: python3 bench/mf4_convergence.py [--build build] [--scenario FILE] [--runs 1,2,...]
(about 2 minutes for the grip scenario, 30 s for the turn, on 2026-11-27's scene)
"""
import argparse
import csv
import math
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIO = os.path.join(ROOT, "scenes", "scenarios", "mf4_grip_lift.scenario.yaml")

# name: (overrides); the first is the reference every run is compared with.
CONVERGED = {"solver.velocity_tolerance": 0, "solver.velocity_change_tolerance": 1e-7,
             "solver.velocity_iterations": 20000}
OFF = {"solver.articulated_contacts": False}  # the scene before 2026-11-27
# The scene's velocity-solve ends until 2026-11-27: 1e-4 N s or 20 sweeps, no velocity stop.
CAP20 = {"solver.velocity_change_tolerance": 0, "solver.velocity_iterations": 20}
RIGID = {"materials.track.stiffness": 0}  # rigid track belts, before 2026-11-27
RUNS = {
    "converged (1e-7 m/s over two sweeps, cap 20000)": CONVERGED,
    "the scene's settings (1e-4 N s or 1e-4 m/s over two sweeps, cap 400)": {},
    "1e-4 N s, cap 20 (the scene's until 2026-11-27)": CAP20,
    "1e-4 N s, cap 40": dict(CAP20, **{"solver.velocity_iterations": 40}),
    "1e-4 m/s over two sweeps, cap 400": {"solver.velocity_tolerance": 0,
                                          "solver.velocity_change_tolerance": 1e-4,
                                          "solver.velocity_iterations": 400},
    "1e-5 m/s over two sweeps, cap 2000": {"solver.velocity_tolerance": 0,
                                           "solver.velocity_change_tolerance": 1e-5,
                                           "solver.velocity_iterations": 2000},
    # Before: the jaws' contacts see the bare jaw (articulated contacts off).
    "articulated contacts off, 1e-4 N s, cap 20": dict(CAP20, **OFF),
    "articulated contacts off, 1e-4 N s, cap 200": dict(CAP20, **OFF,
                                                        **{"solver.velocity_iterations": 200}),
    "articulated contacts off, converged": dict(CONVERGED, **OFF),
    # Rigid track belts: the load's share among the 24 belt points is left to the solver's order.
    "rigid tracks, 1e-4 N s, cap 20": dict(CAP20, **RIGID),
    "rigid tracks, converged": dict(CONVERGED, **RIGID),
    # The time step's own error: the converged solve at half and a quarter of the step.
    "converged, time step 1/480 s": dict(CONVERGED, **{"solver.time_step": 1 / 480}),
    "converged, time step 1/960 s": dict(CONVERGED, **{"solver.time_step": 1 / 960}),
}


def play(simtrainer, name, overrides, workdir):
    """Plays the scenario with `overrides`; returns (summary text, trace rows by time)."""
    with open(SCENARIO) as f:
        text = f.read()
    if overrides:
        def yaml(v):
            return str(v).lower() if isinstance(v, bool) else repr(v)
        items = ", ".join(f"{k}: {yaml(v)}" for k, v in overrides.items())
        text = re.sub(r"^scene: (.*)$", lambda m: f"{m.group(0)}\nset: {{{items}}}", text,
                      count=1, flags=re.M)
    # Next to the original: the scene path in it is relative.
    fd, path = tempfile.mkstemp(suffix=".scenario.yaml", dir=os.path.dirname(SCENARIO))
    trace = os.path.join(workdir, re.sub(r"\W+", "_", name) + ".csv")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        out = subprocess.run([simtrainer, "play", path, "--headless", "--threads", "1",
                              "--trace", trace], capture_output=True, text=True)
    finally:
        os.unlink(path)
    summary = out.stdout + out.stderr
    if out.returncode not in (0, 1) or not os.path.exists(trace):
        sys.exit(f"{name}: simtrainer play failed (exit {out.returncode}):\n{summary}")
    rows = {round(float(r["time"]), 5): r for r in csv.DictReader(open(trace))}
    return summary, out.returncode, rows


def position(row, body):
    return [float(row[f"body.{body}.{a}"]) for a in "xyz"]


def yaw_degrees(row, body):
    w, x, y, z = (float(row[f"body.{body}.q{a}"]) for a in "wxyz")
    return math.degrees(math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z)))


def largest_distance(a, b, body, t0, t1):
    times = [t for t in a if t in b and t0 <= t <= t1]
    return max(math.dist(position(a[t], body), position(b[t], body)) for t in times)


def main():
    global SCENARIO
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--scenario", default=SCENARIO, help="another scenario of the MF-4")
    parser.add_argument("--runs", help="comma-separated numbers of the runs to make (0: the "
                        "reference, always made), default all")
    args = parser.parse_args()
    if args.runs:
        keep = {0} | {int(k) for k in args.runs.split(",")}
        for i, name in enumerate(list(RUNS)):
            if i not in keep:
                del RUNS[name]
    SCENARIO = os.path.abspath(args.scenario)
    simtrainer = os.path.join(args.build, "bin", "simtrainer")
    with tempfile.TemporaryDirectory() as workdir:
        reference = None
        print("| run | velocity solves ended by tolerance / cap | sweeps per step, mean / max "
              "| expectations | container vs converged, max over the run / at its end (mm) "
              "| chassis, max over 0-12 s / the run (mm) | chassis yaw at the end (°) |")
        print("|---|---|---|---|---|---|---|")
        for name, overrides in RUNS.items():
            summary, code, rows = play(simtrainer, name, overrides, workdir)
            ended = re.search(r"velocity solve: steps ended by tolerance (\d+), cap (\d+)", summary)
            sweeps = [int(float(r["solver.velocity.iterations"])) for r in rows.values()]
            # Expectations, not the exit code: a graded exercise exits by its score.
            failed = re.findall(r"FAIL ([^:]+):", summary)
            verdict = "fail: " + "; ".join(failed) if failed else "pass"
            if reference is None:
                reference = rows
            last = max(t for t in rows if t in reference)
            container = (largest_distance(rows, reference, "container", 0, 1e9),
                         math.dist(position(rows[last], "container"),
                                   position(reference[last], "container")))
            chassis = (largest_distance(rows, reference, "chassis", 0, 12),
                       largest_distance(rows, reference, "chassis", 0, 1e9))
            print(f"| {name} | {ended.group(1)} / {ended.group(2)} | "
                  f"{sum(sweeps) / len(sweeps):.1f} / {max(sweeps)} | {verdict} | "
                  f"{container[0] * 1e3:.2f} / {container[1] * 1e3:.2f} | "
                  f"{chassis[0] * 1e3:.3f} / {chassis[1] * 1e3:.2f} | "
                  f"{yaw_degrees(rows[last], 'chassis'):.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
