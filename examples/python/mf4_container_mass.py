#!/usr/bin/env python3
"""Batch: the MF-4 grip-and-lift exercise (scenes/scenarios/mf4_grip_lift.scenario.yaml) with
containers of other masses, to see which the scripted operator still passes with.

The container's inertia is scaled with its mass (the same box, fuller or emptier). The runs go
two at a time on threads: run_scenario releases the interpreter's lock.

Run from the repository root (README, "Python"):
    PYTHONPATH=build/python python3 examples/python/mf4_container_mass.py [MASS_KG ...]
"""
import concurrent.futures
import pathlib
import sys

import simtrainer

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenes" / "scenarios" / "mf4_grip_lift.scenario.yaml"
MASSES_KG = [5.0, 10.0, 15.0, 20.0, 30.0, 40.0]


def container_overrides(nominal, mass_kg):
    """--set overrides for a container of mass_kg: its mass and its principal inertia, scaled."""
    scale = mass_kg / nominal["mass_kg"]
    overrides = {"bodies.container.mass": mass_kg}
    for k in range(3):
        overrides[f"bodies.container.inertia.{k}"] = nominal["inertia_kgm2"][k][k] * scale
    return overrides


def main():
    masses = [float(m) for m in sys.argv[1:]] or MASSES_KG
    scene = simtrainer.Scene.load(str(ROOT / "scenes" / "mf4.yaml"))
    nominal = next(b for b in scene.describe()["bodies"] if b["name"] == "container")
    print(f"MF-4 grip and lift; the container is {nominal['mass_kg']:g} kg in scenes/mf4.yaml")

    def run(mass_kg):
        return simtrainer.run_scenario(str(SCENARIO), set=container_overrides(nominal, mass_kg))

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(run, masses))

    print(f"{'container':>10} {'result':>7} {'score':>6}  failed expectations")
    for mass_kg, result in zip(masses, results):
        failed = [e["name"] for e in result.expectations if not e["passed"]]
        if result.fault:
            failed.insert(0, "numerical fault: " + result.fault)
        verdict = "passed" if result.passed else "FAILED"
        print(f"{mass_kg:7.1f} kg {verdict:>7} {result.score:6.0f}  {', '.join(failed) or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
