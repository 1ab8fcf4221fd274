"""Docstrings: every public class, function, method and property of the module says what it does
(the issue's "docstrings on every function, and help(simtrainer) readable"), and the API the issue
lists is there under its names."""
import inspect
import pydoc
import re

import pytest
import simtrainer

# The API of issue 33, by name (docs/python.md's table).
ISSUE_API = {
    "Scene": ["load", "bodies", "joints", "motors", "controls", "signals", "describe"],
    "Session": ["step", "run", "set_pult", "pult", "signal", "signals", "state", "restore", "hash",
                "set_motor_fault", "set_sensor_fault", "clear_faults", "faults", "set_parameter", "record",
                "body_positions", "body_orientations", "joint_positions", "joint_speeds", "motor_speeds",
                "motor_torques"],
    "Trace": ["columns", "array", "to_dict", "to_structured", "stop"],
}
ISSUE_FUNCTIONS = ["trace", "run_scenario", "replay"]
EXCEPTIONS = ["Error", "SceneError", "RecordingError", "ReplayDivergence", "NumericalFault", "SessionBusy"]


def own_text(name, doc):
    """A pybind11 docstring without its generated signature lines ("name(self, ...) -> T",
    "Overloaded function.", "1. name(...)"): what the author wrote."""
    lines = []
    for line in (doc or "").splitlines():
        s = line.strip()
        if s == "Overloaded function." or re.match(rf"^(\d+\. )?{re.escape(name)}\(.*\)( -> .*)?$", s):
            continue
        lines.append(s)
    return " ".join(lines).strip()


def constructible(cls):
    """pybind11 classes without py::init refuse construction with "No constructor defined"."""
    try:
        cls()
    except TypeError as e:
        return "No constructor defined" not in str(e)
    return True


def public_members():
    """(qualified name, short name, docstring) of every public item of the module."""
    for name, item in vars(simtrainer).items():
        if name.startswith("_"):
            continue
        if inspect.isclass(item):
            yield name, name, item.__doc__
            if issubclass(item, BaseException):
                continue
            for member in vars(item):
                if member.startswith("_") and not (member == "__init__" and constructible(item)):
                    continue
                # getattr, not vars: a static method's own __doc__ is staticmethod's.
                yield f"{name}.{member}", member, getattr(item, member).__doc__
        elif callable(item):
            yield name, name, item.__doc__


@pytest.mark.parametrize("qualified, name, doc", [pytest.param(*m, id=m[0]) for m in public_members()])
def test_every_public_item_has_a_docstring(qualified, name, doc):
    text = own_text(name, doc)
    assert len(text) >= 10, f"{qualified} has no docstring of its own: {doc!r}"


def test_the_issues_api_is_there():
    for cls, members in ISSUE_API.items():
        for member in members:
            assert hasattr(getattr(simtrainer, cls), member), f"{cls}.{member}"
    for name in ISSUE_FUNCTIONS + EXCEPTIONS:
        assert hasattr(simtrainer, name), name
    for name in EXCEPTIONS:
        assert issubclass(getattr(simtrainer, name), simtrainer.Error)


def test_help_is_readable():
    text = pydoc.render_doc(simtrainer, renderer=pydoc.plaintext)
    assert simtrainer.__doc__ and len(simtrainer.__doc__) > 100
    for name in ["Scene", "Session", "trace", "run_scenario", "replay", "set_motor_fault"]:
        assert name in text
    # Methods are rendered with their docstrings, not bare signatures.
    assert simtrainer.Session.run.__doc__.splitlines()[2] in text
