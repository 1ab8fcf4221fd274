#!/usr/bin/env python3
"""Stepping the MF-4 from Python against the CLI, per step (bench/README.md, "bench_python.py").

Alternates, in one run, rounds of:
  cli     `simtrainer run scenes/mf4.yaml --headless --duration D`: the wall time of its run loop
          as it prints it (loading not included), over its steps;
  run     Session.run(D) from Python: one call, the loop in C++;
  step    D's steps as `for _ in range(n): session.step()`: one Python call per step;
each on a freshly loaded scene (loading not timed), in an order rotated every round, so a drift of
the machine's speed hits all three alike. Prints every round, the fastest of each and the ratios
to the CLI taken round by round (their median and range). Also checks that the three end in the
same state (the CLI's final joint angles, printed to 9 digits, against the sessions').

    PYTHONPATH=build/python python3 bench/bench_python.py [--rounds 7] [--duration 20]
"""
import argparse
import math
import pathlib
import re
import statistics
import subprocess
import sys
import time

import simtrainer

ROOT = pathlib.Path(__file__).resolve().parents[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--duration", type=float, default=20.0, help="simulated seconds per run (default 20)")
    parser.add_argument("--exe", default=str(ROOT / "build" / "bin" / "simtrainer"))
    parser.add_argument("--scene", default=str(ROOT / "scenes" / "mf4.yaml"))
    args = parser.parse_args()

    def cli():
        out = subprocess.run([args.exe, "run", args.scene, "--headless", "--duration", str(args.duration)],
                             capture_output=True, text=True, check=True).stdout
        m = re.search(r"steps (\d+)\s+sim time \S+ s\s+wall time (\S+) s", out)
        joints = re.findall(r"^joint (\S+)\s+angle ([-+0-9.e]+)", out, re.M)
        return int(m.group(1)), float(m.group(2)), joints

    def python(per_step):
        session = simtrainer.Session(simtrainer.Scene.load(args.scene))
        n = simtrainer_steps(session)
        t0 = time.perf_counter()
        if per_step:
            step = session.step
            for _ in range(n):
                step()
        else:
            session.run(args.duration)
        wall = time.perf_counter() - t0
        joints = [(name, f"{angle:+.9g}") for name, angle in zip(session.scene.joints, session.joint_positions)]
        return session.step_index, wall, joints

    def simtrainer_steps(session):
        n = args.duration / session.scene.time_step  # as run(D) and the CLI's --duration: rounded up
        return math.ceil(n - 1e-9 * n)

    kinds = {"cli": cli, "run": lambda: python(False), "step": lambda: python(True)}
    order = list(kinds)
    us = {k: [] for k in kinds}
    finals = {}
    print(f"MF-4 ({args.scene}), {args.duration:g} s per run, {args.rounds} rounds, µs/step (wall):")
    for r in range(args.rounds):
        line = []
        for kind in order:
            steps, wall, joints = kinds[kind]()
            us[kind].append(1e6 * wall / steps)
            finals[kind] = (steps, joints)
            line.append(f"{kind} {us[kind][-1]:6.2f}")
        print(f"round {r + 1}: " + "  ".join(line))
        order = order[1:] + order[:1]
    same = finals["cli"] == finals["run"] == finals["step"]
    print("best: " + "  ".join(f"{k} {min(v):.2f}" for k, v in us.items()) + f" µs/step ({finals['cli'][0]} steps)")
    for kind in ("run", "step"):
        ratios = [p / c for p, c in zip(us[kind], us["cli"])]
        print(f"{kind}/cli per round: median {statistics.median(ratios):.3f}, range {min(ratios):.3f}-{max(ratios):.3f}; "
              f"best/best {min(us[kind]) / min(us['cli']):.3f}")
    print("final joint angles: " + ("the same in all three" if same else "DIFFER"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
