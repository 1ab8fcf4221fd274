"""The project's regression scenarios (scenes/scenarios/*.scenario.yaml) under pytest, as
`simtrainer test` runs them: each must pass; a graded one must also reach its pass mark.

Run from the repository root (README, "Python"):
    PYTHONPATH=build/python python3 -m pytest examples/python/test_regression_scenarios.py
"""
import pathlib

import pytest
import simtrainer

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "scenes" / "scenarios").glob("*.scenario.yaml"))


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.name.removesuffix(".scenario.yaml"))
def test_scenario_passes(path):
    result = simtrainer.run_scenario(str(path))
    assert result.complete, result.failure_summary
    assert result.expectations_passed, result.failure_summary
    if result.score is not None:
        sheet = result.result["score"]
        assert result.passed, f"score {result.score} below the pass mark {sheet['pass_mark']}"
