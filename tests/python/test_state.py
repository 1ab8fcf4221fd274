"""Session state save and restore: the steps after a restored state are the same bit for bit as
after the saved one, in the same session, in another session of the scene, and through pickle."""
import pickle

import pytest
import simtrainer

from conftest import same_bits, scene_path


def grasp_session():
    """The grasp scene with its scheme in play: the grip pressed (a latch), the lift up."""
    session = simtrainer.Session(simtrainer.Scene.load(scene_path("grasp.yaml")))
    session.set_pult("grip", 1)
    session.run(0.1)
    session.set_pult("grip", 0)
    session.run(0.7)
    session.set_pult("lift", 1)
    return session


def snapshot(session):
    return (session.hash(), session.body_positions, session.body_orientations, session.joint_speeds,
            session.motor_speeds, session.signal("squeeze"))


def assert_same(a, b):
    assert a[0] == b[0]
    for x, y in zip(a[1:5], b[1:5]):
        assert same_bits(x, y)
    assert same_bits(a[5], b[5])


def test_restore_round_trip_same_session():
    session = grasp_session()
    saved = session.state()
    at_save = snapshot(session)
    session.run(1.0)
    after = snapshot(session)
    assert after[0] != at_save[0]  # it moved
    assert session.state() != saved

    session.restore(saved)
    assert session.state() == saved
    assert_same(snapshot(session), at_save)
    assert session.time == saved.time and session.step_index == saved.step
    session.run(1.0)
    assert_same(snapshot(session), after)


def test_restore_into_another_session_and_through_pickle():
    first = grasp_session()
    saved = first.state()
    first.run(1.0)
    expected = snapshot(first)

    second = simtrainer.Session(simtrainer.Scene.load(scene_path("grasp.yaml")))
    second.restore(saved)
    second.run(1.0)
    assert_same(snapshot(second), expected)

    thawed = pickle.loads(pickle.dumps(saved))
    assert thawed == saved
    third = simtrainer.Session(simtrainer.Scene.load(scene_path("grasp.yaml")))
    third.restore(thawed)
    third.run(1.0)
    assert_same(snapshot(third), expected)


def test_state_of_another_scene_is_refused():
    saved = grasp_session().state()
    wg = simtrainer.Session(simtrainer.Scene.load(scene_path("wg7152.yaml")))
    with pytest.raises(ValueError, match="grasp"):
        wg.restore(saved)
    assert wg.step_index == 0


def test_restore_refused_while_recording(tmp_path):
    session = simtrainer.Session(simtrainer.Scene.load(scene_path("wg7152.yaml")))
    saved = session.state()
    with session.record(str(tmp_path / "s.rec")):
        session.step(10)
        with pytest.raises(ValueError, match="recording"):
            session.restore(saved)
    session.restore(saved)  # closed: allowed again
    assert session.step_index == 0
