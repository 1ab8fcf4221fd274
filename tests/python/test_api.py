"""The module's API against the engine as the CLI drives it: scene information, arrays, the pult,
faults and parameter changes as a scenario injects them, scenario results and scores, recordings
and replays."""
import json

import numpy as np
import pytest
import simtrainer

from conftest import cli, same_bits, scene_path, scenario_path


def test_scene_information():
    scene = simtrainer.Scene.load(scene_path("grasp.yaml"))
    assert scene.name == "grasp" and scene.file == scene_path("grasp.yaml")
    assert scene.bodies == ["ground", "box", "palm", "left_jaw", "right_jaw"]
    assert scene.joints == ["lift", "left", "right"]
    assert scene.motors == ["jaws", "lift"]
    assert scene.controls == ["grip", "lift"]
    assert scene.time_step == 1 / 240 and scene.steps_per_frame == 4 and scene.frame_rate == 60
    info = scene.describe()
    assert info["controls"][0] == {"name": "grip", "kind": "button", "min": -1.0, "max": 1.0, "initial": 0.0,
                                   "positions": 2}
    assert info["motors"][1]["stall_torque_Nm"] == 0.05 and info["motors"][1]["gear_ratio"] == 2000
    assert info["joints"][1]["parent"] == "palm" and info["joints"][0]["type"] == "prismatic"
    assert "squeeze" in scene.signals and "contact.box.force" in scene.signals
    assert simtrainer.Scene.load(scene_path("wg7152.yaml"), set={"motors.drive.t_m": 0.5}).overrides == {
        "motors.drive.t_m": "0.5"}


@pytest.mark.parametrize("name", ["grasp.yaml", "mf4.yaml", "hexapod.yaml"])
def test_every_listed_signal_reads(name):
    session = simtrainer.Session(simtrainer.Scene.load(scene_path(name)))
    session.step(8)
    values = session.signals(session.scene.signals)
    assert values.shape == (len(session.scene.signals),) and np.all(np.isfinite(values))


def test_arrays_are_the_trace_row_and_the_signals():
    session = simtrainer.Session(simtrainer.Scene.load(scene_path("grasp.yaml")))
    session.set_pult({"grip": 1, "lift": 0.5})
    session.run(1.0)
    tr = simtrainer.trace(session)  # its one row: the current state
    row = dict(zip(tr.columns, tr.array()[0]))
    scene = session.scene
    for k, body in enumerate(scene.bodies):
        assert same_bits(session.body_positions[k], [row[f"body.{body}.{a}"] for a in "xyz"])
        assert same_bits(session.body_orientations[k], [row[f"body.{body}.q{a}"] for a in "wxyz"])
        assert same_bits(session.body_velocities[k], session.signals([f"body.{body}.v{a}" for a in "xyz"]))
    for k, joint in enumerate(scene.joints):
        assert session.joint_positions[k] == row[f"joint.{joint}.angle"] == session.signal(f"joint.{joint}.position")
        assert session.joint_speeds[k] == row[f"joint.{joint}.speed"]
    for k, motor in enumerate(scene.motors):
        assert session.motor_speeds[k] == row[f"motor.{motor}.speed"]
        assert session.motor_voltages[k] == row[f"motor.{motor}.voltage"]
        assert session.motor_torques[k] == row[f"motor.{motor}.torque"]
        assert session.motor_angles[k] == row[f"motor.{motor}.angle"]
    assert session.body_positions.shape == (5, 3) and session.joint_speeds.shape == (3,)
    with pytest.raises(ValueError):
        session.joint_speeds[0] = 1.0  # a read-only copy


def test_pult_is_admitted_and_run_steps_as_the_cli():
    session = simtrainer.Session(simtrainer.Scene.load(scene_path("grasp.yaml")))
    session.set_pult("lift", 3.0)   # an axis clamps to its range
    session.set_pult("grip", 0.7)   # a button is 0 or 1
    assert session.pult() == {"grip": 1.0, "lift": 1.0}
    session.neutral_pult()
    assert session.pult() == {"grip": 0.0, "lift": 0.0}
    session.run(0.5)
    assert session.step_index == 120
    session.run(1 / 240 * 0.5)  # part of a step: one step
    assert session.step_index == 121


def write_scenario(tmp_path, body):
    path = tmp_path / "py.scenario.yaml"
    path.write_text(f"name: py\nscene: {scene_path('grasp.yaml')}\n" + body)
    return str(path)


def test_pult_faults_and_changes_as_a_scenario(tmp_path, steps_to):
    scenario = write_scenario(tmp_path, """\
duration: 3.0
timeline:
  - {at: 0.0, control: lift, set: 1}
  - {at: 0.1, control: grip, set: 1}
  - {at: 0.2, control: grip, set: 0}
faults:
  - {at: 0.5, signal: body.box.z, fault: noise, value: 0.001}
  - {at: 1.0, motor: lift, fault: weak, value: 0.5}
  - {at: 2.0, motor: lift, fault: none}
  - {at: 2.5, signal: body.box.z, fault: dropout}
changes:
  - {at: 1.5, set: motors.lift.Mp, value: 0.04}
expect:
  - {signal: body.box.z, min: 0.1}
""")
    expected = simtrainer.run_scenario(scenario)
    assert expected.complete and expected.steps == 720

    session = simtrainer.Session(simtrainer.Scene.load(scene_path("grasp.yaml")))
    dt = session.scene.time_step

    def until(t):
        session.step(steps_to(t, dt) - session.step_index)

    session.set_pult("lift", 1)
    until(0.1)
    session.set_pult("grip", 1)
    until(0.2)
    session.set_pult("grip", 0)
    until(0.5)
    session.set_sensor_fault("body.box.z", "noise", 0.001)
    until(1.0)
    session.set_motor_fault("lift", "weak", 0.5)
    assert session.faults()["motors"] == {"lift": ("weak", 0.5)}
    until(1.5)
    session.set_parameter("motors.lift.Mp", 0.04)
    assert session.scene.describe()["motors"][1]["stall_torque_Nm"] == 0.04
    until(2.0)
    session.set_motor_fault("lift", "none")
    until(2.5)
    session.set_sensor_fault("body.box.z", "dropout")
    until(3.0)
    assert session.hash() == expected.final_hash
    assert session.signal("body.box.z") > 0.1 and expected.passed

    # Without the weak motor the run differs: the comparison sees faults.
    other = simtrainer.Session(simtrainer.Scene.load(scene_path("grasp.yaml")))
    other.set_pult("lift", 1)
    other.run(3.0)
    assert other.hash() != expected.final_hash


def test_run_scenario_expectations_and_failures():
    ok = simtrainer.run_scenario(scenario_path("wg7152_speed.scenario.yaml"))
    assert ok.passed and ok.expectations_passed and ok.complete and ok.score is None
    assert [e["passed"] for e in ok.expectations] == [True, True, True]
    assert ok.expectations[0]["time"] == pytest.approx(1.0)
    # t_m = 0.5 s: a faster curve, out of the t_m = 1 s bounds at 1 s (0.0725 rad/s) and at 10 s
    # (0.1026249), still below the no-load speed.
    bad = simtrainer.run_scenario(scenario_path("wg7152_speed.scenario.yaml"), set={"motors.drive.t_m": 0.5})
    assert not bad.passed and bad.complete
    assert [e["passed"] for e in bad.expectations] == [False, False, True]
    assert bad.expectations[0]["detail"].startswith("joint.hinge.speed = 0.0724739 at t = 1 s")
    assert "expectation failed" in bad.failure_summary
    with pytest.raises(simtrainer.SceneError, match="changes the scenario's scene"):
        simtrainer.run_scenario(scenario_path("grasp_lift.scenario.yaml"), set={"solver.time_step": 0.001})


def test_graded_scenario_equals_the_cli_result_file(tmp_path):
    path = scenario_path("mf4_grip_lift.scenario.yaml")
    result_file = tmp_path / "cli.json"
    cli("play", path, "--headless", "--result", result_file)
    from_cli = json.loads(result_file.read_text())
    from_python = simtrainer.run_scenario(path)
    assert from_python.passed and from_python.score == from_cli["score"]["total"] == 100
    for key in ("complete", "outcome", "scenario", "scene", "steps", "score", "penalties", "tasks", "statistics"):
        assert from_python.result[key] == from_cli[key], key
    assert [t["name"] for t in from_python.result["tasks"]] == [e["name"] for e in from_python.expectations]
    clumsy = simtrainer.run_scenario(str(scenario_path("../exercises/mf4_grip_lift_clumsy.scenario.yaml")))
    assert clumsy.score == 35 and not clumsy.passed and clumsy.expectations_passed is False
    penalties = clumsy.result["penalties"]
    assert penalties and sum(p["points"] for p in penalties) == clumsy.result["score"]["penalty_points"]


def test_record_and_replay(tmp_path):
    rec = str(tmp_path / "grasp.rec")
    session = simtrainer.Session(simtrainer.Scene.load(scene_path("grasp.yaml")))
    with session.record(rec) as recorder:
        assert recorder.recording
        session.set_pult("grip", 1)
        session.run(0.1)
        session.set_pult({"grip": 0, "lift": 1})
        session.run(0.5)
        session.set_motor_fault("lift", "weak", 0.3)
        session.set_parameter("materials.grip.friction", 0.6)
        session.run(0.5)
    assert not recorder.recording
    replayed = simtrainer.replay(rec)
    assert replayed.verified and replayed.steps == session.step_index == 264
    assert replayed.final_hash == session.hash() and replayed.scenario is None
    assert "every step identical" in cli("replay", rec, "--verify").stdout

    # One pult value changed in the file: the replay diverges at that step.
    lines = open(rec).read().splitlines()
    k = next(i for i, line in enumerate(lines) if line.startswith("p 24 "))
    lines[k] = "p 24 0 0.5"
    tampered = tmp_path / "tampered.rec"
    tampered.write_text("\n".join(lines) + "\n")
    with pytest.raises(simtrainer.ReplayDivergence) as caught:
        simtrainer.replay(str(tampered))
    assert caught.value.step == 25 and "diverges at step 25" in str(caught.value)
    assert simtrainer.replay(str(tampered), verify=False).steps == 264

    with pytest.raises(simtrainer.RecordingError, match="new session"):
        session.record(str(tmp_path / "late.rec"))


def test_graded_recording_replays_with_its_score(tmp_path):
    rec = str(tmp_path / "grasp_lift.rec")
    played = simtrainer.run_scenario(scenario_path("grasp_lift.scenario.yaml"), record=rec)
    replayed = simtrainer.replay(rec)
    assert replayed.verified and replayed.scenario is not None
    assert replayed.steps == played.steps
    assert replayed.score == played.score == 100
    for key in ("score", "penalties", "tasks", "statistics"):
        assert replayed.result[key] == played.result[key], key
