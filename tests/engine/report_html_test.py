#!/usr/bin/python3
"""The after-action report and the class summary opened in headless Chromium (Debian's chromium),
as an instructor would open them, with no network:

- the page's screenshot shows every plot: each SVG plot area (its fill #fbfbfd) holds the line of
  its first signal (its colour, #1f77b4; a page with the lines left out fails);
- the three screenshots of the worst moments are there (data URIs, drawn offscreen under Xvfb);
- no console errors, no resource refused by the page's Content-Security-Policy, nothing in the
  page's own error box (#js-errors); the check is shown to catch an error by a page that has one;
- the class page opens sorted by score from #sort=1 and its histogram shows bars.

Run under Xvfb (tests/render/with_xvfb.sh). Usage: report_html_test.py SIMTRAINER SOURCE_DIR WORK_DIR
"""
import html.parser
import os
import re
import shutil
import subprocess
import sys

from PIL import Image

exe, source, work = sys.argv[1], sys.argv[2], sys.argv[3]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def chromium(url, *args):
    """Runs headless Chromium on a fresh profile, no network services; returns (stdout, stderr)."""
    profile = os.path.join(work, "profile")
    shutil.rmtree(profile, ignore_errors=True)
    command = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0", "--force-device-scale-factor=1",
               "--hide-scrollbars", *args, url]
    p = subprocess.run(command, capture_output=True, text=True, timeout=120)
    return p.stdout, p.stderr


def console_problems(stderr):
    return [line for line in stderr.splitlines() if re.search(r"CONSOLE|Refused to|Uncaught", line)]


class Errors(html.parser.HTMLParser):
    """Text of #js-errors and whether it is hidden, from a dumped DOM."""

    def __init__(self):
        super().__init__()
        self.inside, self.text, self.hidden = False, "", None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id") == "js-errors":
            self.inside, self.hidden = True, "hidden" in attrs

    def handle_endtag(self, tag):
        self.inside = False

    def handle_data(self, data):
        if self.inside:
            self.text += data


def page_errors(path):
    dom, stderr = chromium("file://" + path, "--dump-dom")
    parser = Errors()
    parser.feed(dom)
    return dom, console_problems(stderr) + ([parser.text.strip()] if parser.text.strip() or not parser.hidden else [])


def plot_areas(png):
    """Bounding boxes of the plot areas (#fbfbfd) in a screenshot and the drawn pixels in each."""
    im = Image.open(png).convert("RGB")
    w, h = im.size
    px = im.load()
    background = (251, 251, 253)
    rows = [sum(1 for x in range(0, w, 2) if px[x, y] == background) for y in range(h)]
    areas, y = [], 0
    while y < h:
        if rows[y] > 100:  # a plot area spans most of the page's width
            top = y
            while y < h and rows[y] > 20:
                y += 1
            if y - top > 10:
                xs = [x for x in range(w) if px[x, (top + y) // 2] == background]
                areas.append((min(xs), top, max(xs), y))
        y += 1
    # Grid lines cross an area: parts a few pixels apart are one area.
    merged = []
    for a in areas:
        if merged and a[1] - merged[-1][3] <= 4:
            m = merged[-1]
            merged[-1] = (min(m[0], a[0]), m[1], max(m[2], a[2]), a[3])
        else:
            merged.append(a)
    result = []
    for (x0, y0, x1, y1) in merged:
        ink = 0  # pixels of the first signal's colour (#1f77b4); event markers are red, green, orange
        for yy in range(y0, y1):
            for xx in range(x0, x1):
                r, g, b = px[xx, yy]
                if abs(r - 31) < 40 and abs(g - 119) < 40 and abs(b - 180) < 40 and b > r + 60:
                    ink += 1
        result.append(((x0, y0, x1, y1), ink))
    return result


# A graded session with penalties, recorded, and its report with screenshots.
subprocess.run([exe, "play", f"{source}/scenes/exercises/mf4_grip_lift_clumsy.scenario.yaml", "--headless",
                "--record", "clumsy.rec", "--trainee", "Cleo"], cwd=work, capture_output=True, check=False)
p = subprocess.run([exe, "report", "clumsy.rec", "--out", "report"], cwd=work, capture_output=True, text=True)
check(p.returncode == 0 and "(3 screenshots)" in p.stdout, f"report with 3 screenshots: {p.stdout.strip()} {p.stderr.strip()}")
page = os.path.join(work, "report/index.html")

dom, problems = page_errors(page)
check(not problems, "the report opens without errors: " + "; ".join(problems))
plots = dom.count('class="plot-svg"')
check(plots == 5 + 0, f"5 plots in the page (the scenario's report: signals), got {plots}")
shots = re.findall(r'<img class="shot"[^>]*src="data:image/png;base64,([A-Za-z0-9+/=]{1000,})"', dom)
check(len(shots) == 3, f"three screenshots of the worst moments embedded, got {len(shots)}")

stdout, stderr = chromium("file://" + page, "--window-size=1050,6000", "--screenshot=" + os.path.join(work, "page.png"))
check(not console_problems(stderr), "no console errors while drawing: " + "; ".join(console_problems(stderr)))
areas = plot_areas(os.path.join(work, "page.png"))
check(len(areas) == plots, f"{plots} plot areas in the screenshot, found {len(areas)}: {[a for a, _ in areas]}")
for box, ink in areas:
    check(ink > 100, f"plot at {box} has its first signal drawn ({ink} pixels of its colour)")

# The checks can fail: the same page with a script error and a blocked network load.
broken = os.path.join(work, "report/broken.html")
with open(broken, "w") as f:
    f.write(open(page).read().replace("</body>", "<script>noSuchFunction();</script><img src=\"https://example.invalid/x.png\"></body>"))
_, problems = page_errors(broken)
check(len(problems) >= 1, "a page with a script error is caught: " + "; ".join(problems))

# The class summary: opened sorted by score, its histogram drawn.
os.makedirs(os.path.join(work, "class"))
shutil.copy(os.path.join(work, "report/result.json"), os.path.join(work, "class/cleo.json"))
p = subprocess.run([exe, "play", f"{source}/scenes/scenarios/mf4_grip_lift.scenario.yaml", "--headless",
                    "--result", "class/dan.json", "--trainee", "Dan"], cwd=work, capture_output=True)
p = subprocess.run([exe, "report", "--class", "class", "--out", "class-report"], cwd=work, capture_output=True, text=True)
check(p.returncode == 0, "report --class: " + p.stderr.strip())
class_page = os.path.join(work, "class-report/index.html")
dom, stderr = chromium("file://" + class_page + "#sort=1", "--dump-dom")
check(not console_problems(stderr), "the class page opens without errors")
order = re.findall(r'<tr><td data-value="([^"]+)">', dom)
check(order == ["Dan", "Cleo"], f"#sort=1 sorts by score, highest first: {order}")
check(dom.count('class="bar"') == 10, "ten histogram bars")
stdout, stderr = chromium("file://" + class_page, "--window-size=1050,1400", "--screenshot=" + os.path.join(work, "class.png"))
areas = plot_areas(os.path.join(work, "class.png"))
check(len(areas) == 1 and areas[0][1] > 1000, f"the histogram's bars are drawn: {areas}")

print(f"{len(failures)} failed" if failures else "all passed")
sys.exit(1 if failures else 0)
