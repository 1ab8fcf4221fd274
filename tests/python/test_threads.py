"""Sessions on threads: stepping releases the interpreter's lock, two sessions stepped on two
threads give the same results as one after the other, and one session refuses a second thread."""
import threading

import pytest
import simtrainer

from conftest import same_bits, scene_path


def drive(session, lift, chunks, out):
    """Steps in chunks (so that two threads interleave), keeping the hash and the noisy sensor's
    scheme block after each chunk. The sensor noise draws from the session's own generator: one
    shared between sessions would give other draws when two run at once."""
    session.set_pult("grip", 1)
    session.run(0.1)
    session.set_pult("grip", 0)
    session.set_pult("lift", lift)
    session.set_sensor_fault("body.box.z", "noise", 0.001)
    for _ in range(chunks):
        session.step(48)
        out.append((session.hash(), session.signal("box_above_palm")))
    out.append(session.body_positions)


def test_two_threads_equal_one_after_the_other():
    scene = simtrainer.Scene.load(scene_path("grasp.yaml"))
    sequential = [[], []]
    for k, lift in enumerate((1.0, 0.6)):
        drive(simtrainer.Session(scene), lift, 40, sequential[k])

    threaded = [[], []]
    sessions = [simtrainer.Session(scene), simtrainer.Session(scene)]
    threads = [threading.Thread(target=drive, args=(sessions[k], lift, 40, threaded[k]))
               for k, lift in enumerate((1.0, 0.6))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(2):
        assert threaded[k][:-1] == sequential[k][:-1]
        assert same_bits(threaded[k][-1], sequential[k][-1])
    assert sequential[0][-2] != sequential[1][-2]  # the two runs differ from each other


def test_stepping_releases_the_interpreter_lock():
    # While one thread is inside step(), this thread runs Python and sees the session busy. Were
    # the lock held during the step, this loop could not run until step() returned, and would
    # never see it busy.
    session = simtrainer.Session(simtrainer.Scene.load(scene_path("mf4.yaml")))
    worker = threading.Thread(target=session.run, args=(20.0,))
    seen_busy = False
    worker.start()
    while worker.is_alive() and not seen_busy:
        try:
            session.time
        except simtrainer.SessionBusy:
            seen_busy = True
    worker.join()
    assert seen_busy
    assert session.step_index == 4800


def test_second_thread_on_one_session_is_refused():
    session = simtrainer.Session(simtrainer.Scene.load(scene_path("mf4.yaml")))
    errors = []
    started = threading.Event()

    def second():
        started.wait()
        while worker.is_alive():
            try:
                session.step()
            except simtrainer.SessionBusy as e:
                errors.append(e)
                return

    worker = threading.Thread(target=lambda: (started.set(), session.run(20.0)))
    other = threading.Thread(target=second)
    other.start()
    worker.start()
    worker.join()
    other.join()
    assert errors and isinstance(errors[0], RuntimeError)
    # Its steps went nowhere: the session has exactly the run's steps (and any the second thread
    # took before the run began or after it ended).
    assert session.step_index >= 4800
