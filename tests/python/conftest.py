"""Shared by the Python module's tests (tests/python, run by CTest through pytest).

CTest sets SIMTRAINER_SOURCE_DIR, SIMTRAINER_EXE (the CLI the module is compared with) and
PYTHONPATH (build/python); run by hand:
    PYTHONPATH=build/python /usr/bin/python3 -m pytest tests/python
"""
import os
import pathlib
import subprocess

import numpy as np
import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("SIMTRAINER_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
SIMTRAINER_EXE = os.environ.get("SIMTRAINER_EXE", str(SOURCE_DIR / "build" / "bin" / "simtrainer"))


def scene_path(name):
    return str(SOURCE_DIR / "scenes" / name)


def scenario_path(name):
    return str(SOURCE_DIR / "scenes" / "scenarios" / name)


def cli(*args, check=True):
    """Runs the simtrainer program; returns the CompletedProcess (text)."""
    done = subprocess.run([SIMTRAINER_EXE, *map(str, args)], capture_output=True, text=True)
    if check and done.returncode != 0:
        raise AssertionError(f"simtrainer {' '.join(map(str, args))} exited {done.returncode}:\n{done.stderr}")
    return done


def cli_error_lines(done):
    """The CLI's error messages without their "simtrainer: error: " prefix."""
    prefix = "simtrainer: error: "
    return [line[len(prefix):] for line in done.stderr.splitlines() if line.startswith(prefix)]


def read_trace_csv(path):
    """A trace CSV as (columns, rows x columns float64 array); the 17 digits read back exactly."""
    with open(path) as f:
        columns = f.readline().strip().split(",")
        rows = [[float(v) for v in line.split(",")] for line in f if line.strip()]
    return columns, np.array(rows, dtype=np.float64)


def same_bits(a, b):
    """Equal shapes and every double equal bit for bit (so 0.0 != -0.0, NaN == same NaN)."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    b = np.ascontiguousarray(b, dtype=np.float64)
    return a.shape == b.shape and np.array_equal(a.view(np.uint64), b.view(np.uint64))


@pytest.fixture
def steps_to():
    """Steps from t = 0 to the first step at or after t (as engine::stepCount)."""
    import math

    def f(t, dt):
        n = t / dt
        return math.ceil(n - 1e-9 * n) if t > 0 else 0

    return f
