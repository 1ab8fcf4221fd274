"""Errors as Python exceptions with the CLI's messages (file:line: key: what was expected)."""
import pytest
import simtrainer

from conftest import cli, cli_error_lines, scene_path, scenario_path

BAD_SCENE = """\
name: bad
bodies:
  - name: link
    mass: 1.0
    inertia: [0.1, 0.1, 0.1]
joints:
  - {name: hinge, type: hinge, parent: world, child: link, axis: [0, 0, 1]}
motors:
  - name: drive
    joint: hinge
    Mp: fast
    w_xx: 10
"""


def test_bad_scene_raises_with_file_and_line_as_the_cli(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(BAD_SCENE)
    with pytest.raises(simtrainer.SceneError) as caught:
        simtrainer.Scene.load(str(path))
    e = caught.value
    assert e.file == str(path)
    assert e.line == 11  # Mp: fast
    assert "Mp" in e.key
    assert isinstance(e, ValueError) and isinstance(e, simtrainer.Error)
    assert e.errors and e.errors[0][:2] == (str(path), 11)
    done = cli("validate", path, check=False)
    assert done.returncode == 2
    assert cli_error_lines(done) == str(e).splitlines()
    assert str(e).startswith(f"{path}:11: ")


def test_bad_override_raises_as_the_cli():
    for key, value in [("motors.nosuch.t_m", 0.5), ("motors.drive.t_m", "fast")]:
        with pytest.raises(simtrainer.SceneError) as caught:
            simtrainer.Scene.load(scene_path("wg7152.yaml"), set={key: value})
        done = cli("validate", scene_path("wg7152.yaml"), "--set", f"{key}={value}", check=False)
        assert done.returncode == 2
        assert cli_error_lines(done) == str(caught.value).splitlines()
        assert caught.value.key.endswith(key)


def test_missing_scene_and_bad_scenario(tmp_path):
    with pytest.raises(simtrainer.SceneError, match="nosuch.yaml"):
        simtrainer.Scene.load(str(tmp_path / "nosuch.yaml"))
    scenario = tmp_path / "bad.scenario.yaml"
    scenario.write_text(f"name: bad\nscene: {scene_path('wg7152.yaml')}\nduration: 1\n"
                        "expect:\n  - {signal: joint.nosuch.speed, max: 1}\n")
    with pytest.raises(simtrainer.SceneError) as caught:
        simtrainer.run_scenario(str(scenario))
    assert caught.value.file == str(scenario) and caught.value.line == 5
    done = cli("play", scenario, "--headless", check=False)
    assert done.returncode == 2
    assert cli_error_lines(done) == str(caught.value).splitlines()


def test_bad_names_and_values_raise_value_errors():
    session = simtrainer.Session(simtrainer.Scene.load(scene_path("grasp.yaml")))
    with pytest.raises(ValueError, match="known: grip, lift"):
        session.set_pult("nosuch", 1)
    with pytest.raises(ValueError, match="nosuch"):
        session.signal("joint.nosuch.speed")
    with pytest.raises(ValueError, match="expected stuck, weak"):
        session.set_motor_fault("lift", "melted")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        session.set_motor_fault("lift", "weak", 2.0)
    with pytest.raises(ValueError, match="has no brake"):
        session.set_motor_fault("lift", "brake_released")
    with pytest.raises(ValueError, match="does not read"):
        session.set_sensor_fault("joint.lift.speed", "noise", 0.1)
    with pytest.raises(simtrainer.SceneError, match="nosuch"):
        session.set_parameter("motors.nosuch.Mp", 0.1)
    with pytest.raises(simtrainer.SceneError, match="time step"):
        session.set_parameter("solver.time_step", 0.01)
    with pytest.raises(ValueError):
        session.run(-1.0)
    assert session.step_index == 0 and session.faults() == {"motors": {}, "sensors": {}}


def test_numerical_fault_stops_the_session():
    # The link reaches 0.1 rad/s; a 0.05 rad/s bound makes that a runaway (docs/scenes.md).
    scene = simtrainer.Scene.load(scene_path("wg7152.yaml"), set={"solver.max_angular_speed": 0.05})
    session = simtrainer.Session(scene)
    saved = session.state()
    tr = simtrainer.trace(session, every=100)
    with pytest.raises(simtrainer.NumericalFault) as caught:
        session.run(10.0)
    fault = caught.value
    assert fault.step == session.step_index and 0 < fault.step < 1000
    assert "link" in fault.item and fault.value > 0.05
    assert session.fault is not None and str(fault.step) in session.fault
    assert tr["time"][-1] == session.time  # the faulted step is traced, as the CLI does
    with pytest.raises(simtrainer.NumericalFault):
        session.step()
    session.restore(saved)
    assert session.fault is None
    session.step()
