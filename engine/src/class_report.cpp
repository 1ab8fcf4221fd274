// The class summary (engine/report.h): many trainees' result files of one exercise in one page.
#include <engine/report.h>

#include "report_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

namespace sim::engine {

using detail::html;

namespace {

// Ten bins of ten points (the last one includes 100), bars with their counts, the pass mark.
std::string histogram(const std::vector<double>& scores, std::optional<double> pass_mark) {
  const double W = 600, H = 220, left = 40, right = 10, top = 14, bottom = 34;
  int counts[10] = {};
  for (double s : scores) ++counts[std::clamp(static_cast<int>(std::floor(s / 10.0)), 0, 9)];
  const int most = std::max(1, *std::max_element(std::begin(counts), std::end(counts)));
  const double bw = (W - left - right) / 10.0;
  auto y = [&](double c) { return top + (H - top - bottom) * (1.0 - c / most); };
  std::string svg = fmt::format(
      "<svg id=\"histogram\" class=\"plot-svg\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" "
      "height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" role=\"img\" aria-label=\"histogram of scores\">\n"
      "<rect x=\"{2}\" y=\"{3}\" width=\"{4}\" height=\"{5}\" fill=\"#fbfbfd\" "
      "stroke=\"#c9ced8\"/>\n",
      W, H, left, top, W - left - right, H - top - bottom);
  for (int c = 0; c <= most; c += std::max(1, most / 5)) {
    svg += fmt::format(
        "<text x=\"{}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"end\" "
        "fill=\"#555e6e\">{}</text>\n",
        left - 4, y(c) + 4, c);
  }
  for (int b = 0; b < 10; ++b) {
    const double x = left + b * bw;
    svg += fmt::format(
        "<rect class=\"bar\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
        "fill=\"#1f77b4\">"
        "<title>{}–{}: {}</title></rect>\n",
        x + 3, y(counts[b]), bw - 6, H - bottom - y(counts[b]), 10 * b, 10 * b + 10, counts[b]);
    svg += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"middle\" "
        "fill=\"#555e6e\">{}</text>\n",
        x + bw / 2, H - bottom + 14, 10 * b);
  }
  svg += fmt::format(
      "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\" "
      "fill=\"#555e6e\">score</text>\n",
      W - right, H - 4);
  if (pass_mark) {
    const double x = left + (W - left - right) * *pass_mark / 100.0;
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#b3261e\" "
        "stroke-width=\"2\" "
        "stroke-dasharray=\"5 3\"><title>pass mark {3:g}</title></line>\n",
        x, top, H - bottom, *pass_mark);
  }
  return svg + "</svg>\n";
}

const char* kSortScript = R"(<script>
// Click a header to sort by its column (numbers by their data-value), again to reverse; a link
// ending in #sort=N opens the page sorted by column N (0 = trainee, 1 = score, ...), highest first.
(function () {
  var table = document.getElementById('class-table');
  var heads = table.querySelectorAll('th.sortable');
  function sortBy(column) {
    var th = heads[column];
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var down = th.dataset.order !== 'down';
    heads.forEach(function (h) { delete h.dataset.order; });
    th.dataset.order = down ? 'down' : 'up';
    var numeric = th.classList.contains('num');
    rows.sort(function (a, b) {
      var x = a.cells[column].dataset.value, y = b.cells[column].dataset.value;
      var c = numeric ? (parseFloat(x) - parseFloat(y)) : x.localeCompare(y);
      return down ? -c : c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  heads.forEach(function (th, column) { th.addEventListener('click', function () { sortBy(column); }); });
  var m = /^#sort=(\d+)$/.exec(window.location.hash);
  if (m && +m[1] < heads.length) sortBy(+m[1]);
})();
</script>
)";

}  // namespace

std::string writeClassReport(const std::string& results_dir, const std::string& out_dir,
                             std::vector<std::string>* skipped) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(results_dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json")
      files.push_back(entry.path().string());
  }
  if (ec)
    throw ResultError(fmt::format("{}: cannot read the directory: {}", results_dir, ec.message()));
  std::sort(files.begin(), files.end());
  std::vector<std::pair<std::string, ResultFile>> results;
  std::vector<std::string> left_out;
  for (const std::string& f : files) {
    try {
      results.emplace_back(f, readResultFile(f));
    } catch (const ResultError& e) {
      left_out.push_back(e.what());
    }
  }
  if (skipped) *skipped = left_out;
  if (results.empty())
    throw ResultError(fmt::format("{}: no simtrainer result files (*.json) in it", results_dir));

  std::set<std::string> exercises;
  std::set<double> pass_marks;
  std::vector<double> scores;
  std::size_t passed = 0;
  for (const auto& [file, r] : results) {
    exercises.insert(r.scenario ? fmt::format("{} ({:016x})", r.scenario->name, r.scenario->hash)
                                : r.scene.name + " (scene)");
    if (r.score.scored) {
      scores.push_back(r.score.score);
      pass_marks.insert(r.score.pass_mark);
      passed += r.score.passed ? 1 : 0;
    }
  }
  const std::string exercise = results.front().second.scenario
                                   ? results.front().second.scenario->name
                                   : results.front().second.scene.name;
  std::string page = detail::pageHead("Class summary: " + exercise);
  page += fmt::format(
      "<h1>Class summary: {}</h1>\n<p class=\"meta\">{} results from <code>{}</code></p>\n",
      html(exercise), results.size(), html(results_dir));
  if (exercises.size() > 1) {
    std::string list;
    for (const std::string& e : exercises) list += (list.empty() ? "" : ", ") + e;
    page += "<p class=\"warn\">These results are of different exercises (or versions of one): " +
            html(list) + ".</p>\n";
  }
  for (const std::string& s : left_out) page += "<p class=\"warn\">Left out: " + html(s) + "</p>\n";
  if (!scores.empty()) {
    std::vector<double> sorted = scores;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    const double median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    double mean = 0.0;
    for (double s : scores) mean += s / static_cast<double>(n);
    page += fmt::format(
        "<p>{} graded · {} passed · mean score {:.1f} · median {:.1f} · lowest {:g} · highest "
        "{:g}</p>\n",
        n, passed, mean, median, sorted.front(), sorted.back());
    page += "<h2>Scores</h2>\n<figure>" +
            histogram(scores, pass_marks.size() == 1 ? std::optional<double>(*pass_marks.begin())
                                                     : std::nullopt) +
            "<figcaption>trainees per 10 points; dashed: the pass mark</figcaption></figure>\n";
  }
  page +=
      "<h2>Trainees</h2>\n<p class=\"meta\">Click a column's header to sort by it.</p>\n"
      "<table id=\"class-table\"><thead><tr><th class=\"sortable\">trainee</th><th "
      "class=\"sortable num\">score</th>"
      "<th class=\"sortable\">result</th><th class=\"sortable num\">time (s)</th><th "
      "class=\"sortable num\">penalties</th>"
      "<th class=\"sortable num\">penalty points</th><th class=\"sortable num\">tasks done</th><th "
      "class=\"sortable\">started</th>"
      "<th class=\"sortable\">file</th></tr></thead>\n<tbody>\n";
  std::map<std::string, std::pair<std::set<std::string>, int>>
      rules;  // penalty -> trainees, events
  for (const auto& [file, r] : results) {
    const std::string who =
        r.trainee.empty() ? std::filesystem::path(file).stem().string() : r.trainee;
    const ScoreSheet& s = r.score;
    std::size_t done = 0;
    for (const TaskResult& t : s.tasks) done += t.done ? 1 : 0;
    for (const Penalty& p : s.penalties) {
      rules[p.name].first.insert(who);
      ++rules[p.name].second;
    }
    const std::string verdict = !r.complete ? "incomplete (" + r.outcome + ")"
                                : !s.scored ? "not graded"
                                : s.passed  ? "passed"
                                            : "not passed";
    page += fmt::format(
        "<tr><td data-value=\"{0}\">{0}</td><td class=\"num\" data-value=\"{1}\">{2}</td><td "
        "data-value=\"{3}\">{3}</td>"
        "<td class=\"num\" data-value=\"{4}\">{4:.1f}</td><td class=\"num\" "
        "data-value=\"{5}\">{5}</td>"
        "<td class=\"num\" data-value=\"{6}\">{6:g}</td><td class=\"num\" data-value=\"{7}\">{7} / "
        "{8}</td>"
        "<td data-value=\"{9}\">{9}</td><td data-value=\"{10}\">{10}</td></tr>\n",
        html(who), s.scored ? s.score : -1.0,
        s.scored ? fmt::format("{:g}", std::round(s.score * 10.0) / 10.0) : "—", html(verdict),
        s.scored ? s.exercise_time_s : r.duration_s, s.penalties.size(), s.penalty_points, done,
        s.tasks.size(), html(r.started), html(std::filesystem::path(file).filename().string()));
  }
  page += "</tbody></table>\n";
  if (!rules.empty()) {
    page +=
        "<h2>Penalties across the class</h2>\n<table id=\"class-penalties\"><tr><th>penalty</th>"
        "<th class=\"num\">trainees</th><th class=\"num\">events</th></tr>\n";
    for (const auto& [name, value] : rules) {
      page +=
          fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
                      html(name), value.first.size(), value.second);
    }
    page += "</table>\n";
  }
  page += kSortScript;
  page += detail::pageTail("Made by simtrainer report --class.");
  std::filesystem::create_directories(out_dir, ec);
  const std::string path = (std::filesystem::path(out_dir) / "index.html").string();
  std::ofstream out(path, std::ios::binary);
  out << page;
  out.flush();
  if (!out) throw ResultError(path + ": cannot write");
  return path;
}

}  // namespace sim::engine
