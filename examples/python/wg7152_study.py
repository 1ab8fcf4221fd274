#!/usr/bin/env python3
"""Parameter study: the WG-7152 gear motor's link speed for several electromechanical time
constants t_m, each run against the analytic solution of SPEC eq. 8.

With b = 0 and u = 1, eq. 8, (I_L + r^2 I_m) dw_L/dt = r Mp (u - r w_L / w_xx), gives
    w_L(t) = (w_xx / r) (1 - exp(-t / T)),   T = (I_L + r^2 I_m) w_xx / (r^2 Mp),
with I_m = Mp t_m / w_xx. Every curve must agree to 1e-6 rad/s (the SPEC's goal); the exit code
is 1 if one does not. With matplotlib installed it also plots the curves and their errors.

Run from the repository root (README, "Python"):
    PYTHONPATH=build/python python3 examples/python/wg7152_study.py [--out wg7152_study.png] [--no-plot]
"""
import argparse
import pathlib
import sys

import numpy as np
import simtrainer

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCENE = ROOT / "scenes" / "wg7152.yaml"
TIME_CONSTANTS_S = [0.25, 0.5, 1.0, 2.0]
TOLERANCE_RADPS = 1e-6


def eq8(scene, t):
    """The analytic link speed at times t, and T, from the scene's own passport data."""
    info = scene.describe()
    motor = info["motors"][0]
    i_l = info["bodies"][0]["inertia_kgm2"][2][2]  # about the vertical hinge axis through the centre of mass
    r, w_xx, mp = motor["gear_ratio"], motor["no_load_speed_radps"], motor["stall_torque_Nm"]
    T = (i_l + r * r * motor["rotor_inertia_kgm2"]) * w_xx / (r * r * mp)
    return (w_xx / r) * (1.0 - np.exp(-t / T)), T


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=10.0, help="simulated time per run, s (default 10)")
    parser.add_argument("--out", default="wg7152_study.png", help="the plot (PNG), when matplotlib is installed")
    parser.add_argument("--no-plot", action="store_true", help="print the table only")
    args = parser.parse_args()

    curves = []
    print(f"{'t_m (s)':>8} {'T (s)':>8} {'w_L(end) (rad/s)':>17} {'max |w_L - eq. 8| (rad/s)':>26}")
    for t_m in TIME_CONSTANTS_S:
        scene = simtrainer.Scene.load(str(SCENE), set={"motors.drive.t_m": t_m})
        session = simtrainer.Session(scene)
        trace = simtrainer.trace(session, every=1)
        session.run(args.duration)
        t, w = trace["time"], trace["joint.hinge.speed"]
        analytic, T = eq8(scene, t)
        error = np.abs(w - analytic)
        curves.append((t_m, t, w, error))
        print(f"{t_m:8.2f} {T:8.4f} {w[-1]:17.8f} {error.max():26.2e}")
    worst = max(c[3].max() for c in curves)
    print(f"largest error {worst:.2e} rad/s: {'within' if worst <= TOLERANCE_RADPS else 'OUTSIDE'} "
          f"the {TOLERANCE_RADPS:g} rad/s goal")

    if not args.no_plot:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib is not installed: no plot (the table above has the figures)")
        else:
            fig, (speed, err) = plt.subplots(2, 1, sharex=True, figsize=(7, 6))
            for t_m, t, w, error in curves:
                speed.plot(t, w, label=f"t_m = {t_m:g} s")
                err.semilogy(t[1:], np.maximum(error[1:], 1e-18), label=f"t_m = {t_m:g} s")
            speed.set_ylabel("link speed w_L (rad/s)")
            speed.set_title("WG-7152: simulated link speed (eq. 8 agrees within the line width)")
            speed.legend()
            err.set_ylabel("|w_L - eq. 8| (rad/s)")
            err.set_xlabel("time (s)")
            fig.tight_layout()
            fig.savefig(args.out, dpi=120)
            print(f"wrote {args.out}")
    return 0 if worst <= TOLERANCE_RADPS else 1


if __name__ == "__main__":
    sys.exit(main())
