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

With --instructions it counts instructions instead (valgrind's callgrind, which a loaded machine
does not disturb): each of the three for 1 s and 3 s of simulated time, the difference over the
480 steps between them (start-up and loading cancel out).
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
    parser.add_argument("--instructions", action="store_true", help="instructions per step under callgrind")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "SECONDS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.scene, args.child[0], float(args.child[1]))
    if args.instructions:
        return instructions(args)

    def cli():
        out = subprocess.run([args.exe, "run", args.scene, "--headless", "--duration", str(args.duration)],
                             capture_output=True, text=True, check=True).stdout
        m = re.search(r"steps (\d+)\s+sim time \S+ s\s+wall time (\S+) s", out)
        joints = re.findall(r"^joint (\S+)\s+angle ([-+0-9.e]+)", out, re.M)
        return int(m.group(1)), float(m.group(2)), joints

    def python(per_step):
        session = simtrainer.Session(simtrainer.Scene.load(args.scene))
        n = steps_for(args.duration, session.scene.time_step)
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


def steps_for(seconds, time_step):
    n = seconds / time_step  # as run(D) and the CLI's --duration: rounded up
    return math.ceil(n - 1e-9 * n)


def child(scene, mode, seconds):
    """One Python run for --instructions: Session.run, or one step() call per step."""
    session = simtrainer.Session(simtrainer.Scene.load(scene))
    if mode == "run":
        session.run(seconds)
    else:
        step = session.step
        for _ in range(steps_for(seconds, session.scene.time_step)):
            step()
    return 0


def instructions(args):
    """Instructions per step of the CLI, run() and step() by callgrind: (count at 3 s - count at 1 s)
    over the steps between. Callgrind also reports programs the process starts; the last count is its own."""
    def count(command):
        err = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command],
                             capture_output=True, text=True, check=True).stderr
        return int(re.findall(r"Collected : (\d+)", err)[-1])

    me = [sys.executable, str(pathlib.Path(__file__).resolve()), "--scene", args.scene, "--child"]
    commands = {"cli": lambda d: [args.exe, "run", args.scene, "--headless", "--duration", str(d)],
                "run": lambda d: me + ["run", str(d)],
                "step": lambda d: me + ["step", str(d)]}
    dt = simtrainer.Scene.load(args.scene).time_step
    steps = steps_for(3.0, dt) - steps_for(1.0, dt)
    per_step = {k: (count(c(3.0)) - count(c(1.0))) / steps for k, c in commands.items()}
    print(f"MF-4 ({args.scene}), instructions per step over {steps} steps (callgrind):")
    for kind, n in per_step.items():
        print(f"{kind:>5} {n:12.0f}  ({n / per_step['cli']:.4f} of the CLI)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
