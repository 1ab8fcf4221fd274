#!/usr/bin/env bash
# Regenerates docs/validation/*.png from the friction models and the table of seed experiments in
# docs/validation/README.md: installs the dependencies (gnuplot among them), configures and builds
# friction_report and the validation tests when needed, runs friction_report and plots, then runs
# the validation tests and writes the rows they record (tests/dynamics/validation_record.h)
# between the table markers of the README.
# Usage: bash scripts/validation-figures.sh [BUILD_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
out="$root/docs/validation"
data="$(mktemp -d)"
trap 'rm -rf "$data"' EXIT
# The tests that record rows of the validation table, in the table's order.
tests=(dynamics_motor_test dynamics_identify_test dynamics_friction_test dynamics_drive_unit_test
       dynamics_drive_coupled_test dynamics_elastica_test)
if [ "${NO_BUILD:-0}" != 1 ]; then
  bash "$root/scripts/install-deps.sh"
  [ -f "$build/build.ninja" ] || cmake -S "$root" -B "$build" -G Ninja
  cmake --build "$build" --target friction_report "${tests[@]}"
fi
"$build/bin/friction_report" "$data"
mkdir -p "$out"
gnuplot <<GP
set datafile separator ','
set terminal pngcairo size 900,420 font ',10'
set grid

set output '$out/fig7_presliding.png'
set multiplot layout 1,2 title 'Seed 000 Fig. 7: friction vs micro-displacement, M = a(t) sin(2 pi t), a -> 0.9 M_S'
set xlabel 'displacement (rad)'; set ylabel 'friction torque (N m)'
set title 'both models, same scale'
plot '$data/fig7_presliding.csv' skip 1 using 3:4 with lines lc 2 title 'dynamic (modified LuGre, eq. 22)', \
     '' skip 1 using 5:6 with lines lw 2 lc 1 title 'static (eq. 21)'
set title 'static model alone (40x zoom): creep in the zone'
plot '$data/fig7_presliding.csv' skip 1 using 5:6 with lines lc 1 notitle
unset multiplot

set output '$out/fig8_stribeck.png'
set title 'Seed 000 Fig. 8: friction vs speed, Omega = 25 sin(wt) + 30 rad/s'
set xlabel 'speed (rad/s)'; set ylabel 'friction torque (N m)'
set yrange [0.02:0.09]
plot '$data/fig8_stribeck.csv' skip 1 using 1:2 with lines lw 2 lc rgb 'black' title 'g(Omega)', \
     '' skip 1 using 1:5 with points pt 7 ps 0.3 lc 1 title 'static (eq. 21), w = 200 rad/s', \
     '' skip 1 using 1:3 with points pt 7 ps 0.3 lc 2 title 'LuGre, w = 1 rad/s', \
     '' skip 1 using 1:4 with lines lc 3 title 'LuGre, w = 200 rad/s (lag loop)'
set autoscale y

set output '$out/seed003_servo.png'
set multiplot layout 1,2 title 'Seed 003: servo tracking 0.3 sin(pi t) with stick/slip LuGre'
set xlabel 'time (s)'; set ylabel 'tracking error (rad)'
set title 'tracking error'
plot '$data/seed003_servo.csv' skip 1 using 1:4 with lines lc 1 title 'friction on', \
     '' skip 1 using 1:5 with lines lc 2 title 'friction off'
set title 'position; shaded: stick'
set ylabel 'angle (rad)'
plot '$data/seed003_servo.csv' skip 1 using 1:(\$6 == 0 ? 0.35 : 1/0) with impulses lc rgb '#dddddd' notitle, \
     '' skip 1 using 1:2 with lines lc rgb 'black' title 'theta_d', \
     '' skip 1 using 1:3 with lines lc 1 title 'theta'
unset multiplot

set output '$out/drive_backlash.png'
set multiplot layout 1,2 title 'Seed 000 drive in the solver: backlash gap 0.02 rad (half gap 0.01), u = +-0.3 reversing every 0.5 s'
set title 'transmitted torque vs twist'
set xlabel 'twist a_m / i - q (rad)'; set ylabel 'M1 (N m)'
plot '$data/drive_backlash.csv' skip 1 using 4:5 with linespoints pt 7 ps 0.3 lc 1 notitle
set title 'input and output angles'
set xlabel 'time (s)'; set ylabel 'angle (rad)'
plot '$data/drive_backlash.csv' skip 1 using 1:2 with lines lc 1 title 'input a_m / i', \
     '' skip 1 using 1:3 with lines lc 2 title 'output q'
unset multiplot

set output '$out/drive_eq22.png'
set multiplot layout 1,2 title 'Seed 000 eq. 22 as the drive output friction in the solver (dt = 1/240 s unless noted)'
set title 'pre-sliding, u = 0.015 sin(2 pi t), below breakaway'
set xlabel 'output angle q (rad)'; set ylabel 'M1 (N m)'
set xtics 2e-4
plot '$data/drive_eq22_loop.csv' skip 1 using 4:5 with lines lw 2 lc 2 title 'eq. 22 (loop)', \
     '' skip 1 using 2:3 with lines lw 2 lc 1 title 'static (held: a line at q = 0)'
set title 'output speed, u = 0.5 sin(2 pi t)'
set xtics autofreq
set xlabel 'time (s)'; set ylabel 'speed (rad/s)'
plot '$data/drive_eq22_speed.csv' skip 1 using 1:2 with lines lw 3 lc rgb 'black' title 'standalone model, 1 us', \
     '' skip 1 using 1:3 with lines lc 1 title 'solver, 1/240 s', \
     '' skip 1 using 1:4 with lines lc 2 title 'solver, 1/960 s'
unset multiplot
GP
echo "wrote $out/fig7_presliding.png fig8_stribeck.png seed003_servo.png drive_backlash.png drive_eq22.png"

for t in "${tests[@]}"; do
  "$build/tests/$t" --gtest_brief=1 --gtest_output="json:$data/$t.json" > "$data/$t.log" 2>&1 || {
    echo "validation tests failed: $build/tests/$t (log below); the table is left as it was" >&2
    cat "$data/$t.log" >&2
    exit 1
  }
done
python3 - "$out/README.md" "$data" "${tests[@]}" <<'PY'
import json, re, sys
readme, data, tests = sys.argv[1], sys.argv[2], sys.argv[3:]
rows = []
for t in tests:
    for suite in json.load(open(f"{data}/{t}.json"))["testsuites"]:
        for case in suite["testsuite"]:
            keys = sorted((k for k in case if re.fullmatch(r"validation_\d+", k)), key=lambda k: int(k[11:]))
            for k in keys:
                value = case[k]
                try:  # gtest escapes each byte of UTF-8 text as its own \u00XX
                    value = value.encode("latin-1").decode("utf-8")
                except (UnicodeEncodeError, UnicodeDecodeError):
                    pass
                cells = [c.strip() for c in value.split(" | ")]
                command = f"`build/tests/{t} --gtest_filter={suite['name']}.{case['name']}`"
                rows.append(cells + [command])
table = ["| experiment | paper | ours | tolerance | reproduce |", "|---|---|---|---|---|"]
table += ["| " + " | ".join(r) + " |" for r in rows]
text = open(readme).read()
begin, end = "<!-- validation-table:begin -->", "<!-- validation-table:end -->"
if begin not in text or end not in text:
    sys.exit(f"{readme}: missing the markers {begin} ... {end}")
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
open(readme, "w").write(head + begin + "\n" + "\n".join(table) + "\n" + end + tail)
print(f"wrote {len(rows)} rows of the validation table into {readme}")
PY
