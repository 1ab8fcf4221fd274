#!/usr/bin/python3
"""Result files and reports through the simtrainer program, as a user runs them
(docs/result-format.md, docs/scenarios.md "After-action report"):

- every result file written (a graded play, a plain run, a load error, an interrupted session, a
  replay) validates against docs/schemas/result-v1.schema.json with python3-jsonschema;
- a failed load and an interrupted session still leave their file, complete: false;
- `replay --result` and `report` of a recording write a result identical, byte for byte, to the
  live session's;
- a report of a recording whose scene changed is refused (exit 2) unless --force;
- `report --class` tabulates a directory of results and leaves out what is not one.

Usage: result_cli_test.py SIMTRAINER SOURCE_DIR WORK_DIR
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import jsonschema

exe, source, work = sys.argv[1], sys.argv[2], sys.argv[3]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
schema = json.load(open(os.path.join(source, "docs/schemas/result-v1.schema.json")))
validator = jsonschema.Draft202012Validator(schema)
jsonschema.Draft202012Validator.check_schema(schema)
failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def run(*args, env=None):
    p = subprocess.run([exe, *args], capture_output=True, text=True, cwd=work, env=env)
    return p.returncode, p.stdout, p.stderr


def result(name):
    path = os.path.join(work, name)
    doc = json.load(open(path))
    errors = sorted(validator.iter_errors(doc), key=str)
    check(not errors, f"{name} validates against the schema" + (f": {errors[0].message}" if errors else ""))
    return doc


def write(name, text):
    with open(os.path.join(work, name), "w") as f:
        f.write(text)
    return os.path.join(work, name)


no_display = dict(os.environ)
no_display.pop("DISPLAY", None)

# A graded exercise done right.
code, out, err = run("play", f"{source}/scenes/scenarios/grasp_lift.scenario.yaml", "--headless",
                     "--result", "grasp.json", "--trainee", "Ann")
check(code == 0, f"play grasp_lift exits 0 (got {code})")
doc = result("grasp.json")
check(doc["complete"] and doc["outcome"] == "ok" and doc["trainee"] == "Ann", "grasp.json: complete, ok, Ann")
check(doc["score"]["total"] == 100 and doc["score"]["passed"], "grasp.json: 100, passed")
check([t["done"] for t in doc["tasks"]] == [True] * 4, "grasp.json: every task done")

# A plain scene: statistics, not graded.
code, out, err = run("run", f"{source}/scenes/wg7152.yaml", "--headless", "--duration", "1", "--result", "wg.json")
check(code == 0, f"run wg7152 exits 0 (got {code})")
doc = result("wg.json")
check(doc["score"] is None and doc["scenario"] is None and doc["complete"], "wg.json: not graded, complete")
check(doc["statistics"]["motors"][0]["name"] == "drive" and doc["steps"] == 100, "wg.json: the drive's peak, 100 steps")

# A scenario that does not load: exit 2 naming file, line and key; the result file says so.
bad = write("bad.scenario.yaml", f"""scene: {source}/scenes/grasp.yaml
duration: 1
scoring:
  pass_mark: 50
  penalties:
    - {{kind: collision, name: x, between: [box, palm], points: -5}}
""")
code, out, err = run("play", bad, "--headless", "--result", "bad.json")
check(code == 2, f"bad scoring exits 2 (got {code})")
check(f"{bad}:6: scoring.penalties[x].points: expected a number >= 0" in err, "bad scoring: file:line:key in the message: " + err.strip())
doc = result("bad.json")
check(not doc["complete"] and doc["outcome"] == "error" and "points" in (doc["error"] or ""), "bad.json: complete false, the error")

# Interrupted (SIGINT): the file is complete: false, outcome interrupted. The MF-4 exercise made
# 600 s long: headless it runs at about 60x real time, so its 30 s could end before the signal.
with open(f"{source}/scenes/scenarios/mf4_grip_lift.scenario.yaml") as f:
    long_text = f.read()
long_text = re.sub(r"^scene: .*$", f"scene: {source}/scenes/mf4.yaml", long_text, count=1, flags=re.M)
long_text = re.sub(r"^duration: .*$", "duration: 600.0", long_text, count=1, flags=re.M)
long_scenario = os.path.join(work, "long.scenario.yaml")
with open(long_scenario, "w") as f:
    f.write(long_text)
p = subprocess.Popen([exe, "play", long_scenario, "--headless",
                      "--result", "int.json"], cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(200):  # the provisional file appears when the session starts
    if os.path.exists(os.path.join(work, "int.json")):
        break
    time.sleep(0.05)
provisional = json.load(open(os.path.join(work, "int.json")))
check(provisional["outcome"] == "running" and not provisional["complete"], "int.json at the start: running")
time.sleep(0.5)
p.send_signal(signal.SIGINT)
check(p.wait() == 1, "interrupted play exits 1")
doc = result("int.json")
check(not doc["complete"] and doc["outcome"] == "interrupted" and 0 < doc["duration_s"] < 600,
      f"int.json: complete false, interrupted at {doc['duration_s']} s")

# The clumsy exercise recorded; its replay and its report grade it identically.
code, out, err = run("play", f"{source}/scenes/exercises/mf4_grip_lift_clumsy.scenario.yaml", "--headless",
                     "--record", "clumsy.rec", "--result", "clumsy.json", "--trainee", "Bob")
check(code == 1, f"clumsy play exits 1 (not passed; got {code})")
live = result("clumsy.json")
check(live["score"]["total"] < live["score"]["pass_mark"] and len(live["penalties"]) >= 3, "clumsy.json: failed with penalties")
code, out, err = run("replay", "clumsy.rec", "--result", "replayed.json")
check(code == 0, f"replay --result exits 0 (got {code}): {err.strip()}")
result("replayed.json")
same = open(os.path.join(work, "clumsy.json"), "rb").read() == open(os.path.join(work, "replayed.json"), "rb").read()
check(same, "replay --result writes the live result file, byte for byte")
code, out, err = run("report", "clumsy.rec", "--out", "rep", "--no-screenshots", env=no_display)
check(code == 0, f"report exits 0 (got {code}): {err.strip()}")
same = open(os.path.join(work, "clumsy.json"), "rb").read() == open(os.path.join(work, "rep/result.json"), "rb").read()
check(same, "the report's result.json equals the live result file, byte for byte")
page = open(os.path.join(work, "rep/index.html")).read()
check("Bob" in page and "struck the shelf" in page and page.count("<svg class=\"plot-svg\"") == 5,
      "the page names the trainee, the penalties and has 5 plots")
code, out, err = run("report", "clumsy.json", "--out", "rep2", "--no-screenshots", env=no_display)
check(code == 0 and open(os.path.join(work, "rep2/result.json"), "rb").read() == open(os.path.join(work, "clumsy.json"), "rb").read(),
      "report of the result file replays its recording to the same result")

# A recording of a scene changed since: refused, unless --force.
os.makedirs(os.path.join(work, "copy"))
shutil.copy(f"{source}/scenes/grasp.yaml", os.path.join(work, "copy/grasp.yaml"))
scenario = open(f"{source}/scenes/scenarios/grasp_lift.scenario.yaml").read().replace("scene: ../grasp.yaml", "scene: grasp.yaml")
write("copy/g.scenario.yaml", scenario)
code, out, err = run("play", "copy/g.scenario.yaml", "--headless", "--record", "g.rec")
check(code == 0, "the copied grasp exercise plays")
with open(os.path.join(work, "copy/grasp.yaml"), "a") as f:
    f.write("# edited after the session\n")
code, out, err = run("report", "g.rec", "--out", "changed", "--no-screenshots", env=no_display)
check(code == 2 and "has changed since it was recorded" in err and "--force" in err,
      f"a changed scene is refused with exit 2 (got {code}): {err.strip()}")
code, out, err = run("report", "g.rec", "--out", "forced", "--force", "--no-screenshots", env=no_display)
check(code == 0 and "has changed since it was recorded" in open(os.path.join(work, "forced/index.html")).read(),
      f"--force reports it and says so (got {code})")

# The class: three results of one exercise, one of another, and a file that is no result.
os.makedirs(os.path.join(work, "class"))
for name in ["grasp.json", "bad.json", "clumsy.json", "int.json"]:
    shutil.copy(os.path.join(work, name), os.path.join(work, "class", name))
write("class/notes.json", '{"hello": 1}')
code, out, err = run("report", "--class", "class", "--out", "class-report")
check(code == 0, f"report --class exits 0 (got {code}): {err.strip()}")
page = open(os.path.join(work, "class-report/index.html")).read()
check(page.count("<tr><td data-value=") == 4, "the class table has a row per result file")
check("notes.json" in page and "not a simtrainer result file" in page, "the file that is not a result is named as left out")
code, out, err = run("report", "--class", "rep", "--out", "empty")  # rep/ holds only index.html and result.json
check(code == 0, "a directory with one result is a class of one")
os.makedirs(os.path.join(work, "none"))
code, out, err = run("report", "--class", "none", "--out", "empty2")
check(code == 2 and "no simtrainer result files" in err, f"an empty directory is exit 2 (got {code})")

print(f"{len(failures)} failed" if failures else "all passed")
sys.exit(1 if failures else 0)
