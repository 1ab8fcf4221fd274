// The `simtrainer` Python module (docs/python.md): scenes, sessions, signals, traces, scenarios,
// recordings and replays from Python, over the engine's public API. Stepping, loading and
// scenario runs release the interpreter's lock, so threads run sessions side by side.
#include "session_core.h"

#include <dynamics/simulator.h>
#include <engine/recording.h>
#include <engine/report.h>
#include <engine/result_file.h>
#include <engine/run.h>
#include <engine/scenario.h>
#include <engine/scene.h>
#include <engine/scoring.h>
#include <engine/trace.h>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace py = pybind11;
using namespace pybind11::literals;

namespace sim::python {
namespace {

// ---- exceptions ------------------------------------------------------------------------------

// The module's exception types (created at import, alive as long as the interpreter).
PyObject* g_error = nullptr;
PyObject* g_scene_error = nullptr;
PyObject* g_recording_error = nullptr;
PyObject* g_replay_divergence = nullptr;
PyObject* g_numerical_fault = nullptr;
PyObject* g_session_busy = nullptr;

PyObject* newException(py::module_& m, const char* name, const char* doc, py::tuple bases) {
  const std::string qualified = std::string("simtrainer.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
  if (!type) throw py::error_already_set();
  m.add_object(name, py::handle(type));  // add_object takes its own reference
  return type;
}

// Raises `type` with `message` and attributes set on the instance.
void raise(PyObject* type, const std::string& message, const py::dict& attributes = {}) {
  py::object exc =
      py::reinterpret_steal<py::object>(PyObject_CallFunction(type, "s", message.c_str()));
  if (!exc) return;  // the call set its own error
  for (auto item : attributes) exc.attr(item.first) = item.second;
  PyErr_SetObject(type, exc.ptr());
}

py::tuple errorTuple(const engine::SceneError& e) {
  return py::make_tuple(e.file(), e.line(), e.key(), e.message());
}

void raiseSceneErrors(const std::string& message, const std::vector<engine::SceneError>& errors) {
  py::list list;
  for (const engine::SceneError& e : errors) list.append(errorTuple(e));
  py::dict attributes;
  const bool any = !errors.empty();
  attributes["file"] = any ? py::object(py::str(errors.front().file())) : py::object(py::none());
  attributes["line"] = any ? errors.front().line() : 0;
  attributes["key"] = any ? errors.front().key() : std::string();
  attributes["errors"] = list;
  raise(g_scene_error, message, attributes);
}

void translate(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const engine::SceneError& e) {
    raiseSceneErrors(e.what(), {e});
  } catch (const engine::SceneInvalid& e) {
    raiseSceneErrors(e.what(), e.errors());
  } catch (const dynamics::ModelInvalid& e) {
    // As the CLI prints them: one "field: message" per problem.
    std::string text;
    for (const auto& error : e.errors())
      text += (text.empty() ? "" : "\n") + error.field + ": " + error.message;
    raiseSceneErrors(text, {});
  } catch (const engine::ReplayDiverged& e) {
    raise(g_replay_divergence, e.what(), py::dict("step"_a = py::none(), "body"_a = py::none()));
  } catch (const engine::RecordingError& e) {
    raise(g_recording_error, e.what());
  } catch (const NumericalFaultError& e) {
    const dynamics::Fault& f = e.fault();
    raise(g_numerical_fault, e.what(),
          py::dict("step"_a = f.step, "item"_a = f.item, "field"_a = f.field, "value"_a = f.value));
  } catch (const SessionBusyError& e) {
    raise(g_session_busy, e.what());
  } catch (const engine::TraceError& e) {
    raise(g_error, e.what());
  } catch (const engine::ResultError& e) {
    raise(g_error, e.what());
  }
}

// ---- helpers ---------------------------------------------------------------------------------

// Python's main thread: only there can Ctrl-C be seen (PyErr_CheckSignals).
unsigned long g_main_thread = 0;

// Called with the interpreter's lock released, from a stepping loop: true when Ctrl-C (or
// another signal whose handler raised) is pending. The exception stays set for the caller.
bool signalPending() {
  if (PyThread_get_thread_ident() != g_main_thread) return false;
  py::gil_scoped_acquire gil;
  return PyErr_CheckSignals() != 0;
}

void throwIfPythonError() {
  if (PyErr_Occurred()) throw py::error_already_set();
}

std::unique_lock<std::mutex> lock(SessionCore& core) {
  std::unique_lock<std::mutex> guard(core.mutex, std::try_to_lock);
  if (!guard) {
    throw SessionBusyError(
        "the session is in use by another thread (one thread at a time steps or reads a session)");
  }
  return guard;
}

// The text of a --set value: Python's shortest round-trip repr for floats (reads back as the
// same double), true/false for booleans.
std::string valueText(py::handle value) {
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>() ? "true" : "false";
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::isinstance<py::int_>(value)) return py::str(value);
  return py::repr(py::float_(py::reinterpret_borrow<py::object>(value)));
}

engine::Override overrideOf(const std::string& key, py::handle value) {
  return engine::parseOverride(key + "=" + valueText(value));
}

// `set`: a mapping {key: value} or an iterable of "KEY=VALUE" strings, as --set.
std::vector<engine::Override> overridesOf(const py::object& set) {
  std::vector<engine::Override> out;
  if (set.is_none()) return out;
  if (py::isinstance<py::dict>(set)) {
    for (auto item : py::reinterpret_borrow<py::dict>(set)) {
      out.push_back(overrideOf(py::str(item.first), item.second));
    }
    return out;
  }
  if (py::isinstance<py::str>(set))
    throw py::type_error("set: expected a dict {key: value} or a list of \"KEY=VALUE\"");
  for (auto item : set) out.push_back(engine::parseOverride(py::str(item)));
  return out;
}

py::dict overridesDict(const std::vector<engine::Override>& overrides) {
  py::dict d;
  for (const engine::Override& o : overrides) d[py::str(o.path)] = py::str(o.value);
  return d;
}

void readOnly(py::array& a) {
  a.attr("setflags")("write"_a = false);
}

// A fresh read-only float64 array of `rows` x `cols` (cols 0: one dimension), filled in C++.
template <typename Fill>
py::array_t<double> makeArray(std::size_t rows, std::size_t cols, Fill fill) {
  py::array_t<double> a =
      cols == 0
          ? py::array_t<double>(static_cast<py::ssize_t>(rows))
          : py::array_t<double>({static_cast<py::ssize_t>(rows), static_cast<py::ssize_t>(cols)});
  fill(a.mutable_data());
  readOnly(a);
  return a;
}

const char* jointTypeName(dynamics::JointType t) {
  switch (t) {
    case dynamics::JointType::Fixed: return "fixed";
    case dynamics::JointType::Ball: return "ball";
    case dynamics::JointType::Hinge: return "hinge";
    case dynamics::JointType::Prismatic: return "prismatic";
    case dynamics::JointType::Flexure: return "flexure";
  }
  return "?";
}

const char* controlKindName(engine::ControlKind k) {
  switch (k) {
    case engine::ControlKind::Axis: return "axis";
    case engine::ControlKind::Button: return "button";
    case engine::ControlKind::Toggle: return "toggle";
    case engine::ControlKind::Switch: return "switch";
  }
  return "?";
}

template <typename Items>
std::vector<std::string> names(const Items& items) {
  std::vector<std::string> out;
  for (const auto& item : items) out.push_back(item.name);
  return out;
}

// Every signal name a session can read (engine/scheme.h resolveSignal), in model order.
std::vector<std::string> signalNames(const engine::Scene& scene) {
  std::vector<std::string> out{"time"};
  for (const auto& c : scene.pult.controls) out.push_back("pult." + c.name);
  for (const auto& b : scene.model.bodies) {
    for (const char* f : {"x", "y", "z", "vx", "vy", "vz", "speed"})
      out.push_back("body." + b.name + "." + f);
  }
  for (const auto& j : scene.model.joints) {
    for (const char* f : {"position", "speed"}) out.push_back("joint." + j.name + "." + f);
  }
  for (const auto& m : scene.model.motors) {
    for (const char* f : {"speed", "angle", "voltage", "torque"})
      out.push_back("motor." + m.name + "." + f);
  }
  for (const auto& b : scene.model.bodies) out.push_back("contact." + b.name + ".force");
  for (const auto& b : scene.scheme.blocks) out.push_back(b.name);
  return out;
}

py::list matrixList(const dynamics::Mat3& m) {
  py::list rows;
  for (int r = 0; r < 3; ++r) rows.append(py::make_tuple(m(r, 0), m(r, 1), m(r, 2)));
  return rows;
}

py::dict describe(const engine::Scene& scene) {
  const dynamics::Model& model = scene.model;
  auto bodyName = [&](int b) {
    return b == dynamics::kWorld ? std::string("world")
                                 : model.bodies[static_cast<std::size_t>(b)].name;
  };
  py::list bodies, joints, motors, controls, cameras;
  for (const auto& b : model.bodies) {
    bodies.append(py::dict(
        "name"_a = b.name, "mass_kg"_a = b.mass_kg, "static"_a = b.is_static,
        "inertia_kgm2"_a = matrixList(b.inertia_kgm2),
        "position_m"_a = py::make_tuple(b.position_m.x(), b.position_m.y(), b.position_m.z()),
        "shapes"_a = b.shapes.size()));
  }
  for (const auto& j : model.joints) {
    joints.append(py::dict("name"_a = j.name, "type"_a = jointTypeName(j.type),
                           "parent"_a = bodyName(j.body_a), "child"_a = bodyName(j.body_b),
                           "limit_enabled"_a = j.limit_enabled, "lower_limit"_a = j.lower_limit,
                           "upper_limit"_a = j.upper_limit));
  }
  for (const auto& m : model.motors) {
    motors.append(py::dict(
        "name"_a = m.name, "joint"_a = model.joints[static_cast<std::size_t>(m.joint)].name,
        "stall_torque_Nm"_a = m.stall_torque_Nm, "no_load_speed_radps"_a = m.no_load_speed_radps,
        "time_constant_s"_a = m.time_constant_s, "rotor_inertia_kgm2"_a = m.rotorInertia(),
        "gear_ratio"_a = m.gear_ratio, "bearing_friction"_a = m.bearing_friction,
        "initial_voltage"_a = m.initial_voltage, "drive_unit"_a = m.drive.has_value(),
        "brake_torque"_a = m.brake_torque));
  }
  for (const auto& c : scene.pult.controls) {
    controls.append(py::dict("name"_a = c.name, "kind"_a = controlKindName(c.kind), "min"_a = c.min,
                             "max"_a = c.max, "initial"_a = c.initial,
                             "positions"_a = c.positions));
  }
  for (const auto& c : scene.cameras) cameras.append(c.name);
  return py::dict(
      "name"_a = scene.name, "file"_a = scene.file, "time_step_s"_a = model.solver.time_step_s,
      "frame_rate_hz"_a = scene.frame_rate_hz, "steps_per_frame"_a = scene.stepsPerFrame(),
      "gravity_mps2"_a =
          py::make_tuple(model.gravity_mps2.x(), model.gravity_mps2.y(), model.gravity_mps2.z()),
      "bodies"_a = bodies, "joints"_a = joints, "motors"_a = motors, "controls"_a = controls,
      "scheme_blocks"_a = names(scene.scheme.blocks), "cameras"_a = cameras,
      "overrides"_a = overridesDict(scene.overrides));
}

py::object jsonLoads(const std::string& text) {
  return py::module_::import("json").attr("loads")(text);
}

// ---- wrapped objects -------------------------------------------------------------------------

struct PyScene {
  std::shared_ptr<const engine::Scene> scene;
};

struct PyTrace {
  std::shared_ptr<SessionCore> core;
  std::shared_ptr<TraceBuffer> buffer;

  py::array_t<double> array() const {
    auto guard = lock(*core);
    const auto& v = buffer->values();
    return makeArray(buffer->rows(), buffer->columns().size(), [&](double* p) {
      if (!v.empty()) std::memcpy(p, v.data(), v.size() * sizeof(double));
    });
  }
  py::array_t<double> column(const std::string& name) const {
    auto guard = lock(*core);
    const auto& cols = buffer->columns();
    const auto it = std::find(cols.begin(), cols.end(), name);
    if (it == cols.end()) throw py::key_error("no trace column \"" + name + "\"");
    const std::size_t k = static_cast<std::size_t>(it - cols.begin()), n = cols.size(),
                      rows = buffer->rows();
    const auto& v = buffer->values();
    return makeArray(rows, 0, [&](double* p) {
      for (std::size_t r = 0; r < rows; ++r) p[r] = v[r * n + k];
    });
  }
};

struct PyRecorder {
  std::shared_ptr<SessionCore> core;
  std::string path;
};

struct PyScenarioResult {
  engine::ScenarioResult r;
  std::string result_json;  // the session's result file (docs/result-format.md)
  bool passed() const { return r.score.scored ? r.score.passed : r.passed(); }
};

struct PyReplayResult {
  std::uint64_t steps = 0;
  bool verified = false;
  std::optional<std::uint64_t> final_hash;  // not known for a graded replay
  std::string scene, scenario;
  std::optional<std::string> result_json;  // a graded replay's result file
};

// ---- module functions ------------------------------------------------------------------------

PyScenarioResult runScenario(const std::string& path, const py::object& set,
                             const std::string& record, const std::string& trace, int trace_every) {
  if (trace_every < 1) throw py::value_error("trace_every must be at least 1");
  const std::vector<engine::Override> extra = overridesOf(set);
  PyScenarioResult out;
  std::atomic<bool> interrupt{false};
  {
    py::gil_scoped_release release;
    engine::Scenario scenario = engine::loadScenario(path);
    if (!extra.empty()) {  // the scenario's own `set:` first, then these (as bench_mf4 --set)
      std::vector<engine::Override> all = scenario.scene.overrides;
      all.insert(all.end(), extra.begin(), extra.end());
      engine::Scene scene = engine::loadScene(scenario.scene.file, all);
      // Its timeline, expectations and grader are resolved to the scene's bodies and controls.
      if (const std::string why = engine::sameStructure(scenario.scene, scene); !why.empty()) {
        throw engine::SceneError("--set", 0, extra.front().path,
                                 "changes the scenario's scene: " + why);
      }
      scenario.scene = std::move(scene);
    }
    engine::Scorer scorer(scenario);
    engine::PlayOptions options;
    options.trace_path = trace;
    options.trace_every = trace_every;
    options.record_path = record;
    options.scorer = &scorer;
    options.started = engine::utcNow();
    options.interrupt = &interrupt;
    options.before_frame = [&](std::uint64_t frame) {
      if (frame % 16 == 0 && signalPending()) interrupt = true;
    };
    out.r = engine::playScenario(scenario, options);
    engine::ResultFile result =
        engine::resultHeader(scenario.scene, &scenario, "", options.started, record);
    engine::takeGrade(result, scorer);
    const std::string outcome = out.r.run.fault         ? "fault"
                                : out.r.run.interrupted ? "interrupted"
                                                        : "ok";
    engine::setOutcome(result, out.r.complete, outcome,
                       out.r.run.fault ? out.r.run.fault->describe() : "");
    out.result_json = engine::resultToJson(result);
  }
  throwIfPythonError();  // Ctrl-C: KeyboardInterrupt (trace and recording are flushed)
  return out;
}

PyReplayResult replayFile(const std::string& path, bool verify) {
  PyReplayResult out;
  py::gil_scoped_release release;
  engine::Recording recording = engine::readRecording(path);
  out.scene = recording.scene_path;
  out.scenario = recording.header.scenario_path;
  if (!recording.header.scenario_path.empty()) {
    // Graded with its scenario, as `simtrainer replay --result`: always verified (a grade of a
    // session this build does not reproduce would be of another session).
    engine::ReportOptions options;
    options.screenshots = false;
    options.collect = false;
    const engine::GradedReplay graded = engine::gradeRecording(path, options);
    out.steps = graded.result.steps;
    out.verified = graded.verified;
    out.result_json = engine::resultToJson(graded.result);
    return out;
  }
  const engine::ReplayResult r = engine::replay(recording, verify);
  if (r.diverged) {
    py::gil_scoped_acquire gil;
    raise(g_replay_divergence,
          "replay diverges at step " + std::to_string(r.diverged_step) +
              (r.diverged_body.empty() ? std::string()
                                       : ", first differing body: " + r.diverged_body),
          py::dict("step"_a = r.diverged_step,
                   "body"_a = r.diverged_body.empty() ? py::object(py::none())
                                                      : py::object(py::str(r.diverged_body))));
    throw py::error_already_set();
  }
  out.steps = r.steps;
  out.verified = verify;
  out.final_hash = r.final_hash;
  return out;
}

}  // namespace
}  // namespace sim::python

PYBIND11_MODULE(simtrainer, m) {
  using namespace sim;
  using namespace sim::python;
  m.doc() = R"doc(simtrainer: the training-simulator engine from Python.

A thin layer over the engine the `simtrainer` program runs (docs/python.md): the same scene
files, sessions, scenarios, recordings and traces, bit for bit.

    import simtrainer
    scene = simtrainer.Scene.load("scenes/wg7152.yaml", set={"motors.drive.t_m": 0.5})
    session = simtrainer.Session(scene)
    tr = simtrainer.trace(session, every=10)   # the trace CSV's columns, in memory
    session.run(10.0)                          # 10 s of simulated time
    speed = tr["joint.hinge.speed"]            # a NumPy array
    result = simtrainer.run_scenario("scenes/scenarios/wg7152_speed.scenario.yaml")
    print(result.passed, result.expectations)

Units are SI (m, s, rad, N m); voltages are normalised (u in [-1, 1]). Errors raise
simtrainer.Error subclasses whose messages are the CLI's (file:line: key: what was expected).
Stepping releases the interpreter's lock: threads can run several sessions at once.
)doc";

  {
    py::object threading = py::module_::import("threading");
    g_main_thread = threading.attr("main_thread")().attr("ident").cast<unsigned long>();
  }

  g_error = newException(m, "Error", "Base class of the errors simtrainer raises.",
                         py::make_tuple(py::handle(PyExc_Exception)));
  g_scene_error = newException(
      m, "SceneError",
      "A scene or scenario file, or a --set override, is wrong.\n\n"
      "str() is the CLI's message: file:line: key: what was expected (one line per problem).\n"
      "Attributes: file, line (0: unknown), key, and errors, a list of (file, line, key, "
      "message),\n"
      "one per problem.",
      py::make_tuple(py::handle(g_error), py::handle(PyExc_ValueError)));
  g_recording_error = newException(
      m, "RecordingError",
      "A recording cannot be written, read or replayed (its scene changed, it is\nmalformed).",
      py::make_tuple(py::handle(g_error)));
  g_replay_divergence = newException(
      m, "ReplayDivergence",
      "A verified replay found a step whose state differs from the recording (the CLI's exit code "
      "3).\n\n"
      "Attributes: step (the first differing step, or None when not known), body (the first\n"
      "differing body, or None).",
      py::make_tuple(py::handle(g_error)));
  g_numerical_fault =
      newException(m, "NumericalFault",
                   "A numerical fault (non-finite or runaway state) stopped the session.\n\n"
                   "Attributes: step, item, field, value. The session keeps the faulted state; "
                   "restore() a saved\n"
                   "one to go on.",
                   py::make_tuple(py::handle(g_error)));
  g_session_busy = newException(
      m, "SessionBusy",
      "Another thread is stepping or reading this session: one thread at a time uses a session.",
      py::make_tuple(py::handle(g_error), py::handle(PyExc_RuntimeError)));
  py::register_exception_translator(&translate);

  m.attr("__version__") = SIMTRAINER_VERSION;
  m.attr("build") = engine::buildIdentity();

  // ---- Scene ----
  py::class_<PyScene>(
      m, "Scene",
      R"doc(A scene file loaded and checked (docs/scenes.md): bodies, joints, motors, pult, scheme.

Immutable. Create with Scene.load(path, set={...}); a Session runs it. Names are in model order,
the order of the rows of a Session's arrays.)doc")
      .def_static(
          "load",
          [](const std::string& path, const py::object& set) {
            const std::vector<engine::Override> overrides = overridesOf(set);
            py::gil_scoped_release release;
            return PyScene{
                std::make_shared<const engine::Scene>(engine::loadScene(path, overrides))};
          },
          "path"_a, "set"_a = py::none(),
          R"doc(Loads a scene file, with overrides as the CLI's --set KEY=VALUE.

set: a dict {key: value} (numbers, or True/False for switches), e.g.
{"motors.drive.t_m": 0.5, "solver.substeps": 2}, or a list of "KEY=VALUE" strings.
Raises SceneError naming the file, line and key of any problem.)doc")
      .def_property_readonly(
          "name", [](const PyScene& s) { return s.scene->name; },
          "The scene's `name:` (or the file's stem).")
      .def_property_readonly(
          "file", [](const PyScene& s) { return s.scene->file; }, "The path it was loaded from.")
      .def_property_readonly(
          "files", [](const PyScene& s) { return s.scene->files; },
          "Every file read: the scene, its includes, model files of collision shapes.")
      .def_property_readonly(
          "source_hash", [](const PyScene& s) { return s.scene->source_hash; },
          "FNV-1a of the files' bytes (recordings check it).")
      .def_property_readonly(
          "overrides", [](const PyScene& s) { return overridesDict(s.scene->overrides); },
          "The --set overrides it was loaded with, {key: value text}.")
      .def_property_readonly(
          "time_step", [](const PyScene& s) { return s.scene->model.solver.time_step_s; },
          "The fixed time step, s.")
      .def_property_readonly(
          "frame_rate", [](const PyScene& s) { return s.scene->frame_rate_hz; },
          "Frames per second of the run loop (the pult is sampled once per frame), Hz.")
      .def_property_readonly(
          "steps_per_frame", [](const PyScene& s) { return s.scene->stepsPerFrame(); },
          "Fixed steps per frame.")
      .def_property_readonly(
          "bodies", [](const PyScene& s) { return names(s.scene->model.bodies); },
          "Body names, in model order (the rows of Session.body_positions etc.).")
      .def_property_readonly(
          "joints", [](const PyScene& s) { return names(s.scene->model.joints); },
          "Joint names, in model order (Session.joint_positions, joint_speeds).")
      .def_property_readonly(
          "motors", [](const PyScene& s) { return names(s.scene->model.motors); },
          "Motor names, in model order (Session.motor_speeds etc.).")
      .def_property_readonly(
          "controls", [](const PyScene& s) { return names(s.scene->pult.controls); },
          "Pult control names, in order (Session.set_pult, Session.pult).")
      .def_property_readonly(
          "signals", [](const PyScene& s) { return signalNames(*s.scene); },
          R"doc(Every signal Session.signal() reads: time, pult.<control>, body.<b>.<x|y|z|vx|vy|vz|speed>,
joint.<j>.<position|speed>, motor.<m>.<speed|angle|voltage|torque>, contact.<b>.force, and the
scheme's blocks. contact.<b>.<other>.force (between two bodies) is readable too.)doc")
      .def(
          "describe", [](const PyScene& s) { return describe(*s.scene); },
          R"doc(A dict of the scene's details: time step, frame rate, gravity; per body its mass, inertia,
initial position; per joint its type, parent, child and limits; per motor its passport data (stall
torque Mp, no-load speed w_xx, t_m, rotor inertia, gear ratio); per pult control its kind and range;
scheme blocks, cameras, overrides.)doc")
      .def("__repr__", [](const PyScene& s) {
        return "<simtrainer.Scene '" + s.scene->name + "' from " + s.scene->file + ": " +
               std::to_string(s.scene->model.bodies.size()) + " bodies, " +
               std::to_string(s.scene->model.joints.size()) + " joints, " +
               std::to_string(s.scene->model.motors.size()) + " motors>";
      });

  // ---- State ----
  py::class_<SavedState>(
      m, "State", R"doc(A saved session state (Session.state()): dynamics, pult, scheme memory.

Session.restore(state) puts it back, in the same session or another of the same scene; the
steps after it are then the same bit for bit. Comparable with ==, picklable.)doc")
      .def_property_readonly(
          "time", [](const SavedState& s) { return s.state.dynamics.time_s; }, "Simulated time, s.")
      .def_property_readonly(
          "step", [](const SavedState& s) { return s.state.dynamics.step; }, "Steps taken.")
      .def("__eq__",
           [](const SavedState& a, const SavedState& b) {
             return a.layout == b.layout && sameState(a.state, b.state);
           })
      .def("__repr__",
           [](const SavedState& s) {
             return "<simtrainer.State of '" + s.scene + "' at step " +
                    std::to_string(s.state.dynamics.step) + ">";
           })
      .def(py::pickle(
          [](const SavedState& s) {
            const std::vector<std::uint8_t> dyn = s.state.dynamics.serialize();
            const StateLayout& l = s.layout;
            return py::make_tuple(
                1, py::bytes(reinterpret_cast<const char*>(dyn.data()), dyn.size()),
                s.state.pult.values, s.state.scheme.outputs, s.state.scheme.memory,
                s.state.scheme_evaluations, s.state.noise_rng,
                py::make_tuple(l.bodies, l.shapes, l.joints, l.motors, l.repeaters, l.controls,
                               l.scheme_blocks),
                s.scene);
          },
          [](const py::tuple& t) {
            if (t.size() != 9 || t[0].cast<int>() != 1)
              throw py::value_error("not a pickled simtrainer.State of this version");
            SavedState s;
            const std::string bytes = t[1].cast<std::string>();
            s.state.dynamics = dynamics::State::deserialize(std::span<const std::uint8_t>(
                reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
            s.state.pult.values = t[2].cast<std::vector<double>>();
            s.state.scheme.outputs = t[3].cast<std::vector<double>>();
            s.state.scheme.memory = t[4].cast<std::vector<double>>();
            s.state.scheme_evaluations = t[5].cast<std::uint64_t>();
            s.state.noise_rng = t[6].cast<std::uint64_t>();
            const auto l = t[7].cast<std::vector<std::size_t>>();
            if (l.size() != 7)
              throw py::value_error("not a pickled simtrainer.State of this version");
            s.layout = StateLayout{l[0], l[1], l[2], l[3], l[4], l[5], l[6]};
            s.scene = t[8].cast<std::string>();
            return s;
          }));

  // Declared before the Session, whose record() returns one (signatures name registered types).
  py::class_<PyRecorder> recorder(
      m, "Recorder", "A session's recording in progress (Session.record). A context manager.");

  // ---- Session ----
  using Core = SessionCore;
  py::class_<Core, std::shared_ptr<Core>> session(
      m, "Session",
      R"doc(A training session: a scene's dynamics driven by its pult through its functional scheme.

The same engine::Session the CLI's run, play and replay advance, one fixed step at a time.
step() and run() release the interpreter's lock; one thread at a time may use a session (another
gets SessionBusy). Arrays (body_positions, joint_speeds, ...) are fresh read-only NumPy copies
whose rows follow Scene.bodies, Scene.joints and Scene.motors.)doc");
  session
      .def(py::init([](const PyScene& scene) {
             py::gil_scoped_release release;
             return std::make_shared<Core>(*scene.scene);
           }),
           "scene"_a,
           "Starts a session at the scene's initial state (pult at its initial values, no faults).")
      .def_property_readonly(
          "scene",
          [](Core& c) {
            auto guard = lock(c);
            return PyScene{std::make_shared<const engine::Scene>(c.session().scene())};
          },
          "The scene as it runs now (with the parameter changes so far).")
      .def_property_readonly(
          "time",
          [](Core& c) {
            auto guard = lock(c);
            return c.session().time();
          },
          "Simulated time, s.")
      .def_property_readonly(
          "step_index",
          [](Core& c) {
            auto guard = lock(c);
            return c.session().stepIndex();
          },
          "Steps taken since the start.")
      .def(
          "step",
          [](Core& c, std::uint64_t n) {
            auto guard = lock(c);
            {
              py::gil_scoped_release release;
              c.step(n, signalPending);
            }
            throwIfPythonError();
          },
          "n"_a = 1,
          R"doc(Advances n fixed steps (the scheme, when due, turns the pult into voltages; then the dynamics).

Raises NumericalFault when a step faults (the state is kept at that step), KeyboardInterrupt on
Ctrl-C (after the step in progress; traces and recordings keep every step done).)doc")
      .def(
          "run",
          [](Core& c, double seconds) {
            if (!(seconds >= 0.0) || !std::isfinite(seconds))
              throw py::value_error("run: expected a finite time >= 0 s");
            auto guard = lock(c);
            const std::uint64_t n =
                engine::stepCount(seconds, c.session().scene().model.solver.time_step_s);
            {
              py::gil_scoped_release release;
              c.step(n, signalPending);
            }
            throwIfPythonError();
          },
          "seconds"_a,
          R"doc(Advances `seconds` of simulated time: as many fixed steps as cover it (rounded up), as the
CLI's `run --duration`. Raises as step().)doc")
      .def(
          "set_pult",
          [](Core& c, const std::string& name, double value) {
            auto guard = lock(c);
            c.setControl(name, value);
          },
          "name"_a, "value"_a,
          "Sets a pult control; the control admits it (an axis clamps to its range, a button is 0 "
          "or 1, a switch snaps).")
      .def(
          "set_pult",
          [](Core& c, const std::map<std::string, double>& values) {
            auto guard = lock(c);
            for (const auto& [name, value] : values) c.setControl(name, value);
          },
          "values"_a, "Sets several pult controls from a dict {name: value}.")
      .def(
          "pult",
          [](Core& c) {
            auto guard = lock(c);
            py::dict d;
            const auto& controls = c.session().scene().pult.controls;
            for (std::size_t i = 0; i < controls.size(); ++i)
              d[py::str(controls[i].name)] = c.session().state().pult.values[i];
            return d;
          },
          "The pult's values, {control: value}.")
      .def(
          "neutral_pult",
          [](Core& c) {
            auto guard = lock(c);
            c.session().neutralPult();
          },
          "Returns every control to its initial value (as when a device is lost).")
      .def(
          "signal",
          [](Core& c, const std::string& name) {
            auto guard = lock(c);
            std::vector<double> values;
            c.readSignals({name}, values);
            return values.front();
          },
          "name"_a,
          R"doc(The current value of a signal (Scene.signals; as in scenario expectations), e.g.
"joint.hinge.speed", "body.box.z", "contact.box.left_jaw.force", a scheme block's name.
Raises ValueError naming what is wrong with an unknown signal.)doc")
      .def(
          "signals",
          [](Core& c, const std::vector<std::string>& names) {
            auto guard = lock(c);
            std::vector<double> values;
            c.readSignals(names, values);
            return makeArray(values.size(), 0,
                             [&](double* p) { std::copy(values.begin(), values.end(), p); });
          },
          "names"_a, "The current values of several signals, as a NumPy array in the order given.")
      .def(
          "state",
          [](Core& c) {
            auto guard = lock(c);
            return c.save();
          },
          "Saves the session's state (a State): dynamics, pult, scheme memory. Faults are not part "
          "of it.")
      .def(
          "restore",
          [](Core& c, const SavedState& s) {
            auto guard = lock(c);
            c.restore(s);
          },
          "state"_a,
          R"doc(Puts back a saved State (of this session or another of the same scene). The faults in force
stay as they are. Clears a numerical fault. Refused (ValueError) while recording, or for a state of
a scene with other bodies, joints, motors, pult or scheme.)doc")
      .def(
          "hash",
          [](Core& c) {
            auto guard = lock(c);
            return c.session().hash();
          },
          "64-bit hash of the whole session state (dynamics, pult, scheme memory): recordings hold "
          "it after every step.")
      .def(
          "set_motor_fault",
          [](Core& c, const std::string& motor, const std::string& kind,
             std::optional<double> value) {
            auto guard = lock(c);
            c.setMotorFault(motor, kind, value);
          },
          "motor"_a, "kind"_a, "value"_a = py::none(),
          R"doc(Injects a drive fault, as a scenario's `faults:` (docs/scenarios.md), from the next step on.

kind: "stuck" (holds `value` volts whatever is commanded, default 0, in [-1, 1]), "weak" (gets
`value` x the command, default 0.5, in [0, 1]), "reversed", "brake_released" (the holding brake
lifted), or "none" (healthy again). The scheme still computes the command.)doc")
      .def(
          "set_sensor_fault",
          [](Core& c, const std::string& signal, const std::string& kind,
             std::optional<double> value) {
            auto guard = lock(c);
            c.setSensorFault(signal, kind, value);
          },
          "signal"_a, "kind"_a, "value"_a = py::none(),
          R"doc(Injects a fault of a sensor the scheme reads (e.g. "joint.shoulder.position"), as a scenario's
`faults:`. kind: "noise" (Gaussian, standard deviation `value` in the signal's unit), "dropout"
(holds the last value read) or "none". Only the scheme sees it; signal() reads the truth.)doc")
      .def(
          "clear_faults",
          [](Core& c) {
            auto guard = lock(c);
            c.clearFaults();
          },
          "Clears every motor and sensor fault.")
      .def(
          "faults",
          [](Core& c) {
            auto guard = lock(c);
            py::dict motors, sensors;
            const auto& model = c.session().scene().model;
            const auto& mf = c.session().motorFaults();
            for (std::size_t i = 0; i < mf.size(); ++i) {
              if (mf[i].kind != engine::MotorFault::Kind::None) {
                motors[py::str(model.motors[i].name)] =
                    py::make_tuple(engine::motorFaultName(mf[i].kind), mf[i].value);
              }
            }
            const auto& sf = c.session().sensorFaults();
            for (const auto& [index, name] : c.sensorFaultNames()) {
              const auto& f = sf[static_cast<std::size_t>(index)];
              sensors[py::str(name)] = py::make_tuple(engine::sensorFaultName(f.kind), f.value);
            }
            return py::dict("motors"_a = motors, "sensors"_a = sensors);
          },
          R"doc(The faults in force: {"motors": {motor: (kind, value)}, "sensors": {signal: (kind, value)}}
(a dropout's value is the reading it holds).)doc")
      .def(
          "set_parameter",
          [](Core& c, const std::string& key, const py::object& value) {
            const engine::Override change = overrideOf(key, value);
            auto guard = lock(c);
            py::gil_scoped_release release;
            c.setParameter(change);
          },
          "key"_a, "value"_a,
          R"doc(Changes a scene parameter from now on, as a scenario's `changes:` or an instructor's
set:KEY:VALUE: the scene is loaded again with its overrides and this one, and the session goes on
from its state with the new model. Raises SceneError for an unknown key, a bad value, or a change
of structure (bodies, shapes, joints, motors, time step, ...).)doc")
      .def_property_readonly(
          "fault",
          [](Core& c) -> py::object {
            auto guard = lock(c);
            if (!c.fault()) return py::none();
            return py::str(c.fault()->describe());
          },
          "The numerical fault that stopped the session (text), or None.")
      .def(
          "solver_report",
          [](Core& c) {
            auto guard = lock(c);
            const dynamics::StepReport& r = c.lastReport();
            return py::dict(
                "velocity_iterations"_a = r.velocity_iterations,
                "velocity_residual"_a = r.velocity_residual,
                "at_iteration_cap"_a = r.velocity_end == dynamics::SolveEnd::IterationCap,
                "velocity_end"_a = dynamics::solveEndName(r.velocity_end),
                "position_iterations"_a = r.position_iterations,
                "position_error"_a = r.position_error,
                "position_end"_a = dynamics::solveEndName(r.position_end));
          },
          "The solver's effort in the last step: velocity iterations and residual, whether it hit "
          "the cap, how "
          "each solve ended ('tolerance', 'cap', 'no work'), position error.")
      .def(
          "record",
          [](const std::shared_ptr<Core>& c, const std::string& path) {
            auto guard = lock(*c);
            c->startRecording(path);
            return PyRecorder{c, path};
          },
          "path"_a,
          R"doc(Records the session to `path` (the CLI's --record format: pult, faults, parameter changes and
every step's state hash) from its start; replay(path) reproduces it bit for bit. Only on a new
session (before its first step). Returns a Recorder: close it (or use `with`) to write the end
line; the file is flushed every frame, so a crash loses at most one.)doc");

  // Arrays of the current state.
  auto array = [&](const char* name, const char* doc, auto rows, std::size_t cols, auto fill) {
    session.def_property_readonly(
        name,
        [rows, cols, fill](Core& c) {
          auto guard = lock(c);
          const dynamics::State& s = c.session().dynamics();
          return makeArray(rows(s), cols, [&](double* p) { fill(s, p); });
        },
        doc);
  };
  auto nBodies = [](const dynamics::State& s) { return s.bodies.size(); };
  auto nJoints = [](const dynamics::State& s) { return s.joints.size(); };
  auto nMotors = [](const dynamics::State& s) { return s.motors.size(); };
  array("body_positions",
        "Centre-of-mass positions (world), m: shape (bodies, 3), columns x, y, z.", nBodies, 3,
        [](const dynamics::State& s, double* p) {
          for (const auto& b : s.bodies)
            for (int k = 0; k < 3; ++k) *p++ = b.position_m[k];
        });
  array("body_orientations",
        "Orientations as unit quaternions: shape (bodies, 4), columns qw, qx, qy, qz.", nBodies, 4,
        [](const dynamics::State& s, double* p) {
          for (const auto& b : s.bodies) {
            *p++ = b.orientation.w();
            *p++ = b.orientation.x();
            *p++ = b.orientation.y();
            *p++ = b.orientation.z();
          }
        });
  array("body_velocities", "Centre-of-mass velocities (world), m/s: shape (bodies, 3).", nBodies, 3,
        [](const dynamics::State& s, double* p) {
          for (const auto& b : s.bodies)
            for (int k = 0; k < 3; ++k) *p++ = b.linear_velocity_mps[k];
        });
  array("body_angular_velocities", "Angular velocities (world axes), rad/s: shape (bodies, 3).",
        nBodies, 3, [](const dynamics::State& s, double* p) {
          for (const auto& b : s.bodies)
            for (int k = 0; k < 3; ++k) *p++ = b.angular_velocity_radps[k];
        });
  array("joint_positions",
        "Joint coordinates: hinge angle (rad, unwrapped) or slide (m): shape (joints,).", nJoints,
        0, [](const dynamics::State& s, double* p) {
          for (const auto& j : s.joints) *p++ = j.position;
        });
  array("joint_speeds", "Joint speeds, rad/s or m/s: shape (joints,).", nJoints, 0,
        [](const dynamics::State& s, double* p) {
          for (const auto& j : s.joints) *p++ = j.speed;
        });
  array("motor_angles", "Rotor angles, rad (unwrapped): shape (motors,).", nMotors, 0,
        [](const dynamics::State& s, double* p) {
          for (const auto& mo : s.motors) *p++ = mo.angle_rad;
        });
  array("motor_speeds", "Rotor speeds, rad/s: shape (motors,).", nMotors, 0,
        [](const dynamics::State& s, double* p) {
          for (const auto& mo : s.motors) *p++ = mo.speed_radps;
        });
  array("motor_voltages",
        "Commanded voltages u in [-1, 1] (what the scheme or inputs set): shape (motors,).",
        nMotors, 0, [](const dynamics::State& s, double* p) {
          for (const auto& mo : s.motors) *p++ = mo.voltage;
        });
  array("motor_torques",
        "Rotor torques of the characteristic over the last step, N m: shape (motors,).", nMotors, 0,
        [](const dynamics::State& s, double* p) {
          for (const auto& mo : s.motors) *p++ = mo.torque_Nm;
        });
  array("motor_currents", "Armature currents of drive units, A (0 without one): shape (motors,).",
        nMotors, 0, [](const dynamics::State& s, double* p) {
          for (const auto& mo : s.motors) *p++ = mo.current_A;
        });
  session.def("__repr__", [](Core& c) {
    auto guard = lock(c);
    return "<simtrainer.Session of '" + c.session().scene().name +
           "' at t = " + std::to_string(c.session().time()) + " s, step " +
           std::to_string(c.session().stepIndex()) + ">";
  });

  // ---- Recorder ----
  recorder.def_readonly("path", &PyRecorder::path, "The recording file.")
      .def_property_readonly(
          "recording",
          [](PyRecorder& r) {
            auto guard = lock(*r.core);
            return r.core->recording() && r.core->recordingPath() == r.path;
          },
          "Whether it is still being written.")
      .def(
          "close",
          [](PyRecorder& r) {
            auto guard = lock(*r.core);
            if (r.core->recording() && r.core->recordingPath() == r.path) r.core->finishRecording();
          },
          "Writes the end line (outcome ok, or fault after a numerical fault) and closes the file. "
          "Safe to call twice.")
      .def(
          "__enter__", [](PyRecorder& r) -> PyRecorder& { return r; },
          py::return_value_policy::reference)
      .def("__exit__", [](PyRecorder& r, const py::args&) {
        auto guard = lock(*r.core);
        if (r.core->recording() && r.core->recordingPath() == r.path) r.core->finishRecording();
      });

  // ---- Trace ----
  py::class_<PyTrace>(
      m, "Trace",
      R"doc(A session's trace in memory (simtrainer.trace): the trace CSV's columns and rows.

Rows: the state when the trace started, then every Nth step after it (and a step that faulted), as
the CLI's --trace FILE --trace-every N; the values are the same doubles the CSV holds. Columns
(README "Trace files"): time; joint.<j>.angle, .speed; motor.<m>.angle, .speed, .voltage, .torque;
body.<b>.x, .y, .z, .qw, .qx, .qy, .qz. trace[column] is a NumPy array over the rows.)doc")
      .def_property_readonly(
          "columns", [](const PyTrace& t) { return t.buffer->columns(); },
          "Column names, in the CSV's order.")
      .def_property_readonly(
          "every", [](const PyTrace& t) { return t.buffer->every(); },
          "Every Nth step is recorded.")
      .def_property_readonly(
          "attached",
          [](const PyTrace& t) {
            auto guard = lock(*t.core);
            return t.buffer->attached;
          },
          "Whether it still records the session's steps (stop() ends that).")
      .def(
          "__len__",
          [](const PyTrace& t) {
            auto guard = lock(*t.core);
            return t.buffer->rows();
          },
          "The number of rows.")
      .def("__getitem__", &PyTrace::column, "column"_a,
           "One column over the rows, a read-only NumPy array.")
      .def("__contains__",
           [](const PyTrace& t, const std::string& column) {
             const auto& cols = t.buffer->columns();
             return std::find(cols.begin(), cols.end(), column) != cols.end();
           })
      .def("array", &PyTrace::array,
           "Every row as a read-only 2-D NumPy array, shape (rows, columns).")
      .def(
          "to_dict",
          [](const PyTrace& t) {
            py::dict d;
            for (const std::string& c : t.buffer->columns()) d[py::str(c)] = t.column(c);
            return d;
          },
          "A dict {column: NumPy array}, in the CSV's column order "
          "(pandas.DataFrame(trace.to_dict()) makes a table).")
      .def(
          "to_structured",
          [](const PyTrace& t) {
            py::list fields;
            for (const std::string& c : t.buffer->columns())
              fields.append(py::make_tuple(c, "<f8"));
            py::object dtype = py::module_::import("numpy").attr("dtype")(fields);
            py::array a = t.array();
            return a.attr("view")(dtype).attr("reshape")(a.shape(0));
          },
          "The rows as a NumPy structured array, one field per column (a[\"joint.hinge.speed\"]).")
      .def(
          "stop",
          [](PyTrace& t) {
            auto guard = lock(*t.core);
            if (t.buffer->attached) t.core->removeTrace(t.buffer);
          },
          "Stops recording rows; those taken stay.")
      .def(
          "__enter__", [](PyTrace& t) -> PyTrace& { return t; }, py::return_value_policy::reference)
      .def("__exit__",
           [](PyTrace& t, const py::args&) {
             auto guard = lock(*t.core);
             if (t.buffer->attached) t.core->removeTrace(t.buffer);
           })
      .def("__repr__", [](const PyTrace& t) {
        auto guard = lock(*t.core);
        return "<simtrainer.Trace: " + std::to_string(t.buffer->rows()) + " rows x " +
               std::to_string(t.buffer->columns().size()) + " columns, every " +
               std::to_string(t.buffer->every()) + " steps>";
      });

  m.def(
      "trace",
      [](const std::shared_ptr<Core>& c, int every) {
        if (every < 1) throw py::value_error("every must be at least 1");
        auto guard = lock(*c);
        return PyTrace{c, c->addTrace(every)};
      },
      "session"_a, "every"_a = 1,
      R"doc(Starts a trace of `session` (a Trace): its current state as the first row, then every Nth step
as it is stepped, with the trace CSV's columns. From a new session this equals the CLI's
`run --trace FILE --trace-every N` bit for bit. Several traces may run at once; stop() one, or use
it as a context manager.)doc");

  // ---- results ----
  py::class_<PyScenarioResult>(
      m, "ScenarioResult", "What run_scenario() found: expectations, the grade, the run's figures.")
      .def_property_readonly(
          "name", [](const PyScenarioResult& r) { return r.r.name; }, "The scenario's name.")
      .def_property_readonly(
          "file", [](const PyScenarioResult& r) { return r.r.file; }, "The scenario file.")
      .def_property_readonly("passed", &PyScenarioResult::passed,
                             "A graded scenario (scoring:) passes by its score and pass mark; "
                             "another by all its expectations, as `simtrainer play`'s exit code.")
      .def_property_readonly(
          "expectations_passed", [](const PyScenarioResult& r) { return r.r.passed(); },
          "Every expectation held and the run reached its end without a numerical fault "
          "(`simtrainer test`).")
      .def_property_readonly(
          "complete", [](const PyScenarioResult& r) { return r.r.complete; },
          "The run reached the scenario's duration without a fault.")
      .def_property_readonly(
          "expectations",
          [](const PyScenarioResult& r) {
            py::list out;
            for (const auto& e : r.r.expectations) {
              out.append(py::dict("name"_a = e.name, "passed"_a = e.passed, "detail"_a = e.detail,
                                  "time"_a = e.time_s));
            }
            return out;
          },
          "One dict per expectation, in file order: name, passed, detail (what was seen), time "
          "(when decided, s).")
      .def_property_readonly(
          "score",
          [](const PyScenarioResult& r) -> py::object {
            if (!r.r.score.scored) return py::none();
            return py::float_(r.r.score.score);
          },
          "The score out of 100 (engine/scoring.h ScoreSheet), or None when the scenario has no "
          "`scoring:`.")
      .def_property_readonly(
          "result", [](const PyScenarioResult& r) { return jsonLoads(r.result_json); },
          "The session's result file as a dict (docs/result-format.md): score, penalties, tasks, "
          "statistics.")
      .def_property_readonly(
          "steps", [](const PyScenarioResult& r) { return r.r.run.steps; }, "Steps run.")
      .def_property_readonly(
          "sim_time", [](const PyScenarioResult& r) { return r.r.run.sim_time_s; },
          "Simulated time reached, s.")
      .def_property_readonly(
          "wall_time", [](const PyScenarioResult& r) { return r.r.run.wall_time_s; },
          "Wall-clock time of the run, s.")
      .def_property_readonly(
          "final_hash", [](const PyScenarioResult& r) { return r.r.final_hash; },
          "Session.hash() at the end.")
      .def_property_readonly(
          "fault",
          [](const PyScenarioResult& r) -> py::object {
            if (!r.r.run.fault) return py::none();
            return py::str(r.r.run.fault->describe());
          },
          "The numerical fault that ended the run (text), or None.")
      .def_property_readonly(
          "failure_summary", [](const PyScenarioResult& r) { return r.r.failureSummary(); },
          "One line per failed expectation or fault, as `simtrainer test` prints.")
      .def("__repr__", [](const PyScenarioResult& r) {
        return "<simtrainer.ScenarioResult '" + r.r.name +
               "': " + (r.passed() ? "passed" : "FAILED") +
               (r.r.score.scored ? ", score " + std::to_string(r.r.score.score) : std::string()) +
               ">";
      });

  m.def(
      "run_scenario", &runScenario, "path"_a, "set"_a = py::none(), "record"_a = "", "trace"_a = "",
      "trace_every"_a = 1,
      R"doc(Plays a scenario file headless, as fast as possible, as `simtrainer play --headless`, and returns a
ScenarioResult (expectations, score, figures).

set: extra overrides of the scenario's scene, after its own `set:` ({key: value}); they may not
change its structure. record: also write a session recording there. trace, trace_every: also write
the trace CSV. Raises SceneError for a bad scenario or scene; a numerical fault fails the result
instead. Releases the interpreter's lock while it runs.)doc");

  py::class_<PyReplayResult>(m, "ReplayResult", "What replay() did.")
      .def_readonly("steps", &PyReplayResult::steps, "Steps replayed.")
      .def_readonly("verified", &PyReplayResult::verified,
                    "Every step's state hash was checked against the recording.")
      .def_readonly("final_hash", &PyReplayResult::final_hash,
                    "Session.hash() at the end, or None for a graded replay.")
      .def_readonly("scene", &PyReplayResult::scene, "The recorded scene file.")
      .def_property_readonly(
          "scenario",
          [](const PyReplayResult& r) -> py::object {
            if (r.scenario.empty()) return py::none();
            return py::str(r.scenario);
          },
          "The scenario the recording names (a graded session), or None.")
      .def_property_readonly(
          "result",
          [](const PyReplayResult& r) -> py::object {
            if (!r.result_json) return py::none();
            return jsonLoads(*r.result_json);
          },
          "A graded replay's result file as a dict (as `simtrainer replay --result`), or None.")
      .def_property_readonly(
          "score",
          [](const PyReplayResult& r) -> py::object {
            if (!r.result_json) return py::none();
            return jsonLoads(*r.result_json)["score"]["total"];
          },
          "A graded replay's score out of 100, or None (result has the sheet: penalties, tasks).")
      .def("__repr__", [](const PyReplayResult& r) {
        return "<simtrainer.ReplayResult: " + std::to_string(r.steps) + " steps" +
               (r.verified ? ", verified" : "") + ">";
      });

  m.def("replay", &replayFile, "path"_a, "verify"_a = true,
        R"doc(Replays a recording (Session.record, or the CLI's --record) as `simtrainer replay`.

verify: check every step's state hash against the recording and raise ReplayDivergence at the
first that differs (the CLI's exit code 3). A recording of a scenario (run_scenario(record=...),
`simtrainer play --record`) is graded with it, as `simtrainer replay --result`, and always
verified. Raises RecordingError when the recorded scene or scenario has changed since.)doc");
}
