// The pages of the after-action report and the class summary (engine/report.h): plain HTML with
// inline CSS, SVG and images, no external resources (a Content-Security-Policy forbids any), so
// they open anywhere without a network. A small inline script records script errors in the page
// (#js-errors) and the class table sorts by a click on its headers.
#include <engine/report.h>

#include "markup.h"
#include "report_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace sim::engine::detail {

std::string html(const std::string& text) {
  return escapeMarkup(text);
}

std::string base64(const std::string& bytes) {
  static const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::uint32_t a = static_cast<unsigned char>(bytes[i]);
    const std::uint32_t b = i + 1 < bytes.size() ? static_cast<unsigned char>(bytes[i + 1]) : 0;
    const std::uint32_t c = i + 2 < bytes.size() ? static_cast<unsigned char>(bytes[i + 2]) : 0;
    const std::uint32_t n = (a << 16) | (b << 8) | c;
    out += digits[(n >> 18) & 63];
    out += digits[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? digits[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? digits[n & 63] : '=';
  }
  return out;
}

std::string pageHead(const std::string& title) {
  return fmt::format(R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>{}</title>
<script>
// Script errors are kept in the page, where a reader (or a test) sees them.
window.addEventListener('error', function (e) {{
  var box = document.getElementById('js-errors');
  if (box) {{ box.hidden = false; box.textContent += (e.message || 'error') + '\n'; }}
}});
</script>
<style>
body {{ font: 14px/1.45 system-ui, sans-serif; color: #1d2330; margin: 0 auto; max-width: 1000px; padding: 16px 24px; background: #fff; }}
h1 {{ font-size: 22px; margin: 8px 0 2px; }} h2 {{ font-size: 17px; margin: 26px 0 8px; border-bottom: 1px solid #d5d9e0; }}
.meta {{ color: #555e6e; }} .warn {{ background: #fff4d6; border: 1px solid #e8c25a; padding: 6px 10px; margin: 8px 0; }}
table {{ border-collapse: collapse; width: 100%; }} th, td {{ text-align: left; padding: 3px 8px; border-bottom: 1px solid #e7e9ee; vertical-align: top; }}
th {{ background: #f1f3f6; }} td.num, th.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
.score {{ display: flex; gap: 24px; align-items: center; padding: 12px 16px; border-radius: 6px; margin: 12px 0; }}
.score.pass {{ background: #e3f4e6; }} .score.fail {{ background: #fbe4e2; }} .score.none {{ background: #eef0f3; }}
.score .big {{ font-size: 44px; font-weight: 700; }} .score .big small {{ font-size: 20px; color: #555e6e; }}
.verdict {{ font-size: 20px; font-weight: 600; }}
.lost {{ color: #b3261e; }} .done {{ color: #1b7a34; }}
figure {{ margin: 10px 0 18px; }} figcaption {{ color: #555e6e; font-size: 13px; }}
.legend span {{ display: inline-block; margin-right: 14px; }} .legend i {{ display: inline-block; width: 14px; height: 3px; margin: 0 4px 3px 0; vertical-align: middle; }}
img.shot {{ max-width: 100%; border: 1px solid #ccd; }}
th.sortable {{ cursor: pointer; }} th.sortable:after {{ content: ' \2195'; color: #99a; }}
#js-errors {{ white-space: pre; color: #b3261e; }}
</style>
</head>
<body>
)",
                     html(title));
}

std::string pageTail(const std::string& footer) {
  return "<footer class=\"meta\"><p>" + footer +
         "</p></footer>\n<div id=\"js-errors\" hidden></div>\n</body>\n</html>\n";
}

namespace {

const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                         "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

// Round step for about `count` ticks over [lo, hi].
double niceStep(double lo, double hi, int count) {
  const double span = hi - lo;
  if (!(span > 0.0)) return 1.0;
  const double raw = span / count;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * power) return m * power;
  return 10.0 * power;
}

std::string num(double v) {
  return fmt::format("{:.1f}", v);
}

std::string tickLabel(double v, double step) {
  if (std::abs(v) < step * 1e-6) v = 0.0;
  return fmt::format("{:g}", std::round(v / step) * step);
}

struct Marker {
  double t = 0.0;
  std::string color, label;
};

std::vector<Marker> eventMarkers(const ScoreSheet& sheet) {
  std::vector<Marker> markers;
  for (const Penalty& p : sheet.penalties) markers.push_back({p.time_s, "#b3261e", p.text});
  for (const TaskResult& t : sheet.tasks) {
    if (t.points > 0.0 || !t.done) {
      markers.push_back(
          {t.time_s, t.done ? "#1b7a34" : "#e07b00",
           fmt::format("task {}: {} ({:.1f} s)", t.done ? "done" : "failed", t.name, t.time_s)});
    }
  }
  return markers;
}

// Signals against time on one set of axes, events as vertical lines.
std::string svgPlot(const PlotData& plot, double t_end, const std::vector<Marker>& markers) {
  const double W = 940, H = 230, left = 64, right = 12, top = 12, bottom = 30;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const SignalSeries& s : plot.series) {
    for (double v : s.value) {
      if (!std::isfinite(v)) continue;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  if (!(lo <= hi)) lo = 0.0, hi = 1.0;
  if (hi - lo < 1e-12 * std::max(1.0, std::abs(hi))) {
    lo -= 0.5 * std::max(1e-3, std::abs(lo));
    hi += 0.5 * std::max(1e-3, std::abs(hi));
  }
  const double margin = 0.05 * (hi - lo);
  lo -= margin;
  hi += margin;
  if (!(t_end > 0.0)) t_end = 1.0;
  auto x = [&](double t) { return left + (W - left - right) * t / t_end; };
  auto y = [&](double v) { return top + (H - top - bottom) * (hi - v) / (hi - lo); };
  std::string svg = fmt::format(
      "<svg class=\"plot-svg\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" "
      "role=\"img\" aria-label=\"{2}\">\n<rect x=\"{3}\" y=\"{4}\" width=\"{5}\" height=\"{6}\" "
      "fill=\"#fbfbfd\" stroke=\"#c9ced8\"/>\n",
      W, H, html(plot.title), left, top, W - left - right, H - top - bottom);
  const double vstep = niceStep(lo, hi, 5);
  for (double v = std::ceil(lo / vstep) * vstep; v <= hi; v += vstep) {
    svg += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"#e4e7ec\"/><text x=\"{3}\" "
        "y=\"{4}\" "
        "font-size=\"11\" text-anchor=\"end\" fill=\"#555e6e\">{5}</text>\n",
        left, W - right, num(y(v)), left - 4, num(y(v) + 4), tickLabel(v, vstep));
  }
  const double tstep = niceStep(0.0, t_end, 10);
  for (double t = 0.0; t <= t_end + 1e-9; t += tstep) {
    svg += fmt::format(
        "<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#eef0f3\"/><text x=\"{0}\" "
        "y=\"{3}\" "
        "font-size=\"11\" text-anchor=\"middle\" fill=\"#555e6e\">{4}</text>\n",
        num(x(t)), top, H - bottom, H - bottom + 14, tickLabel(t, tstep));
  }
  svg += fmt::format(
      "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\" fill=\"#555e6e\">t "
      "(s)</text>\n",
      W - right, H - 2);
  for (const Marker& m : markers) {
    svg += fmt::format(
        "<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" stroke=\"{3}\" stroke-dasharray=\"4 3\">"
        "<title>{4}</title></line>\n",
        num(x(m.t)), top, H - bottom, m.color, html(m.label));
  }
  for (std::size_t k = 0; k < plot.series.size(); ++k) {
    const SignalSeries& s = plot.series[k];
    std::string points;
    for (std::size_t i = 0; i < s.t_s.size(); ++i) {
      if (!std::isfinite(s.value[i])) continue;
      points += fmt::format("{},{} ", num(x(s.t_s[i])), num(y(s.value[i])));
    }
    svg += fmt::format(
        "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.6\" "
        "points=\"{}\"><title>{}</title></polyline>\n",
        kColors[k % std::size(kColors)], points, html(s.name));
  }
  return svg + "</svg>\n";
}

// Penalties (red, sized by points) and tasks (green done, orange failed) along the session.
std::string svgTimeline(const ScoreSheet& sheet, double t_end) {
  const double W = 940, H = 90, left = 20, right = 20, axis = 60;
  if (!(t_end > 0.0)) t_end = 1.0;
  auto x = [&](double t) { return left + (W - left - right) * std::clamp(t / t_end, 0.0, 1.0); };
  std::string svg = fmt::format(
      "<svg class=\"timeline-svg\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" "
      "height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "role=\"img\" aria-label=\"timeline\">\n<line x1=\"{2}\" x2=\"{3}\" y1=\"{4}\" y2=\"{4}\" "
      "stroke=\"#555e6e\"/>\n",
      W, H, left, W - right, axis);
  const double tstep = niceStep(0.0, t_end, 10);
  for (double t = 0.0; t <= t_end + 1e-9; t += tstep) {
    svg += fmt::format(
        "<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#555e6e\"/><text x=\"{0}\" "
        "y=\"{3}\" "
        "font-size=\"11\" text-anchor=\"middle\" fill=\"#555e6e\">{4} s</text>\n",
        num(x(t)), axis, axis + 5, axis + 19, tickLabel(t, tstep));
  }
  for (const TaskResult& t : sheet.tasks) {
    svg += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"8\" height=\"8\" fill=\"{}\"><title>task {}: {} ({:.1f} "
        "s)</title></rect>\n",
        num(x(t.time_s) - 4), axis - 14, t.done ? "#1b7a34" : "#e07b00", t.done ? "done" : "failed",
        html(t.name), t.time_s);
  }
  for (const Penalty& p : sheet.penalties) {
    const double r = 4.0 + 2.0 * std::sqrt(std::max(0.0, p.points));
    svg += fmt::format(
        "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"#b3261e\" "
        "fill-opacity=\"0.75\"><title>{}</title></circle>\n",
        num(x(p.time_s)), axis - 32, num(r), html(p.text));
  }
  return svg + "</svg>\n";
}

std::string pointsCell(double points) {
  return points > 0.0 ? fmt::format("&minus;{:g}", points) : "0";
}

std::string penaltyDetail(const Penalty& p) {
  std::string d;
  if (!p.bodies.empty()) {
    for (const std::string& b : p.bodies) d += (d.empty() ? "" : " / ") + b;
  }
  if (!p.item.empty()) d += (d.empty() ? "" : ", ") + p.item;
  d += fmt::format("{}{:.4g} {}", d.empty() ? "" : ": ", p.value, p.unit);
  if (p.kind == "collision") d += fmt::format(" at {:.3g} m/s", p.speed);
  return d;
}

}  // namespace

}  // namespace sim::engine::detail

namespace sim::engine {

using namespace detail;

std::string reportHtml(const GradedReplay& g, const std::vector<std::string>& shots,
                       const std::string& screenshot_note) {
  const ResultFile& r = g.result;
  const ScoreSheet& s = r.score;
  const std::string exercise = r.scenario ? r.scenario->name : r.scene.name;
  std::string page =
      pageHead("After-action report: " + exercise + (r.trainee.empty() ? "" : " — " + r.trainee));
  page += fmt::format(
      "<h1>After-action report: {}</h1>\n<p class=\"meta\">Trainee <b>{}</b> · started {} · {:.1f} "
      "s "
      "simulated ({} steps) · scene {} <code>{:016x}</code>{}</p>\n",
      html(exercise), html(r.trainee.empty() ? "(not named)" : r.trainee), html(r.started),
      r.duration_s, r.steps, html(r.scene.name), r.scene.hash,
      r.scenario ? fmt::format(" · scenario <code>{}</code>", html(r.scenario->file)) : "");
  for (const std::string& w : g.warnings) page += "<p class=\"warn\">" + html(w) + "</p>\n";
  if (!r.complete) {
    page += fmt::format(
        "<p class=\"warn\">The session did not complete (outcome: {}{}): it cannot pass.</p>\n",
        html(r.outcome), r.error.empty() ? "" : ", " + html(r.error));
  }
  // The score.
  if (s.scored) {
    page += fmt::format(
        "<section id=\"score\" class=\"score {}\"><div class=\"big\">{:g}<small>/100</small></div>"
        "<div><div class=\"verdict\">{}</div><div class=\"meta\">pass mark "
        "{:g}{}{}</div></div></section>\n",
        s.passed ? "pass" : "fail", std::round(s.score * 10.0) / 10.0,
        s.passed ? "PASSED" : "NOT PASSED", s.pass_mark,
        s.critical_failure ? " · critical failure" : "",
        fmt::format(" · exercise time {:.1f} s", s.exercise_time_s));
  } else {
    page +=
        "<section id=\"score\" class=\"score none\"><div class=\"verdict\">Not graded</div><div "
        "class=\"meta\">"
        "the session has no scoring rules (a plain scene, or a scenario without "
        "<code>scoring:</code>)</div></section>\n";
  }
  // Breakdown: 100, each rule's deductions, each failed task.
  if (s.scored) {
    page +=
        "<h2>Score breakdown</h2>\n<table id=\"breakdown\"><tr><th>item</th><th "
        "class=\"num\">events</th><th class=\"num\">points</th></tr>\n"
        "<tr><td>start</td><td></td><td class=\"num\">100</td></tr>\n";
    std::vector<std::pair<std::string, std::pair<int, double>>> rules;
    for (const Penalty& p : s.penalties) {
      auto it = std::find_if(rules.begin(), rules.end(),
                             [&](const auto& e) { return e.first == p.name; });
      if (it == rules.end()) it = rules.insert(rules.end(), {p.name, {0, 0.0}});
      ++it->second.first;
      it->second.second += p.points;
    }
    for (const auto& [name, value] : rules) {
      page += fmt::format(
          "<tr><td>penalty: {}</td><td class=\"num\">{}</td><td class=\"num lost\">{}</td></tr>\n",
          html(name), value.first, pointsCell(value.second));
    }
    for (const TaskResult& t : s.tasks) {
      if (t.points_lost > 0.0) {
        page += fmt::format(
            "<tr><td>task failed: {}{}</td><td></td><td class=\"num lost\">{}</td></tr>\n",
            html(t.name), t.critical ? " (critical)" : "", pointsCell(t.points_lost));
      }
    }
    page += fmt::format("<tr><th>score</th><th></th><th class=\"num\">{:g}</th></tr>\n</table>\n",
                        std::round(s.score * 10.0) / 10.0);
  }
  // Timeline.
  page += "<h2>Timeline</h2>\n<figure>" + svgTimeline(s, r.duration_s) +
          "<figcaption>red: penalties (larger: more points) · squares: tasks (green done, orange "
          "failed)</figcaption></figure>\n";
  struct Row {
    double t;
    std::string what, detail, points;
  };
  std::vector<Row> rows;
  for (const Penalty& p : s.penalties) {
    rows.push_back({p.time_s,
                    fmt::format("<span class=\"lost\">penalty</span>: {}{}", html(p.name),
                                p.critical ? " (critical)" : ""),
                    html(penaltyDetail(p)), pointsCell(p.points)});
  }
  for (const TaskResult& t : s.tasks) {
    rows.push_back({t.time_s,
                    fmt::format("<span class=\"{}\">task {}</span>: {}", t.done ? "done" : "lost",
                                t.done ? "done" : "failed", html(t.name)),
                    html(t.detail),
                    t.points_lost > 0.0 ? pointsCell(t.points_lost)
                                        : (t.points > 0.0 ? fmt::format("{:g}", t.points) : "")});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.t < b.t; });
  page +=
      "<table id=\"events\"><tr><th class=\"num\">t (s)</th><th>event</th><th>detail</th><th "
      "class=\"num\">points</th></tr>\n";
  for (const Row& row : rows) {
    page += fmt::format(
        "<tr><td class=\"num\">{:.2f}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td></tr>\n",
        row.t, row.what, row.detail, row.points);
  }
  page += "</table>\n";
  // Plots.
  const std::vector<Marker> markers = eventMarkers(s);
  if (!g.plots.empty()) {
    page +=
        "<h2>Signals</h2>\n<p class=\"meta\">Dashed lines: penalties (red), tasks done (green) and "
        "failed (orange); "
        "hover for what happened.</p>\n";
    for (const PlotData& plot : g.plots) {
      page += "<figure class=\"plot\"><figcaption><b>" + html(plot.title) + "</b></figcaption>\n" +
              svgPlot(plot, r.duration_s, markers) + "<figcaption class=\"legend\">";
      for (std::size_t k = 0; k < plot.series.size(); ++k) {
        page += fmt::format("<span><i style=\"background:{}\"></i>{}</span>",
                            kColors[k % std::size(kColors)], html(plot.series[k].name));
      }
      page += "</figcaption></figure>\n";
    }
  }
  // The worst moments.
  page += "<h2>Worst moments</h2>\n";
  if (!screenshot_note.empty())
    page += "<p class=\"meta\" id=\"screenshot-note\">" + html(screenshot_note) + "</p>\n";
  for (std::size_t i = 0; i < shots.size() && i < g.worst.size(); ++i) {
    const Penalty& p = g.worst[i].penalty;
    page += fmt::format(
        "<figure class=\"moment\"><img class=\"shot\" alt=\"{0}\" "
        "src=\"data:image/png;base64,{1}\">"
        "<figcaption>{2}. {0} — {3}</figcaption></figure>\n",
        html(p.text), base64(shots[i]), i + 1, html(penaltyDetail(p)));
  }
  // Figures.
  const SessionStats& st = r.stats;
  page += "<h2>Session figures</h2>\n<table id=\"figures\">\n";
  if (!st.load.empty()) {
    page += fmt::format("<tr><td>path of the load ({})</td><td class=\"num\">{:.3f} m</td></tr>\n",
                        html(st.load), st.load_path_m);
  }
  page += fmt::format(
      "<tr><td>solver at its iteration cap</td><td class=\"num\">{} steps, {:.3f} s (most "
      "iterations {})</td></tr>\n",
      st.steps_at_iteration_cap, st.time_at_iteration_cap_s, st.max_velocity_iterations);
  for (const MotorPeak& m : st.motors) {
    page += fmt::format(
        "<tr><td>peak torque of motor {}</td><td class=\"num\">{:.4g} N m ({:.0f} % of stall) at "
        "{:.2f} s</td></tr>\n",
        html(m.name), m.peak_torque_Nm, 100.0 * m.peak_fraction, m.time_s);
  }
  page += "</table>\n";
  std::string footer;
  if (!g.recording.empty()) {
    footer = fmt::format(
        "Replayed from the recording <code>{}</code>{}. ", html(g.recording),
        g.verified ? ", every step's state hash equal to the recorded one" : " (not verified)");
  } else {
    footer = "From the result file alone. ";
  }
  footer += "Session run by simtrainer " + html(r.build) + ".";
  return page + pageTail(footer);
}

}  // namespace sim::engine
