// Gradescope's results.json, from a report (formats.hpp).
#include "formats.hpp"

#include <cmath>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "report_view.hpp"
#include "text.hpp"

using nlohmann::json;

namespace grader {
using namespace view;

bool valid_gradescope_visibility(const std::string& v) {
  return v == "visible" || v == "hidden" || v == "after_due_date" || v == "after_published";
}

namespace {

std::string html_escape(const std::string& raw) {
  std::string out;
  for (const char ch : valid_utf8(raw)) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += ch;
    }
  }
  return out;
}

}  // namespace

// Per Gradescope's specification, a top-level "score" is optional only when
// every test carries one. A report that was not graded has no scores to give:
// its tests carry none (no score, no max_score, no status, so none shows as
// failed), and the top level carries the score the specification then
// requires, 0, with an output that says first that this is not a grade.
std::string gradescope_results(const json& report, const GradescopeOptions& o) {
  if (!valid_gradescope_visibility(o.visibility)) {
    throw std::invalid_argument("Gradescope visibility '" + o.visibility +
                                "' is not one of visible, hidden, after_due_date, after_published");
  }
  const Report r = report_of(report);
  json tests = json::array();
  json leaderboard = json::array();
  for (std::size_t i = 0; i < r.views.size(); ++i) {
    const Chapter& c = r.views[i];
    const bool scored = r.graded && c.graded();
    json correctness = {{"name", c.label() + ": correctness"},
                        {"name_format", "text"},
                        {"number", fmt::format("{}.1", i + 1)},
                        {"output", bounded_text(correctness_report(c, c.failed.size()), kTestOutputBytes)},
                        {"output_format", "text"},
                        {"tags", json::array({c.slug, "correctness"})},
                        {"visibility", o.visibility}};
    json performance = {{"name", c.label() + ": performance"},
                        {"name_format", "text"},
                        {"number", fmt::format("{}.2", i + 1)},
                        {"output", bounded_text(performance_report(c), kTestOutputBytes)},
                        {"output_format", "text"},
                        {"tags", json::array({c.slug, "performance"})},
                        {"visibility", o.visibility}};
    if (scored) {
      correctness["score"] = c.correctness_points;
      correctness["max_score"] = c.max_correctness;
      correctness["status"] = c.correctness_passed ? "passed" : "failed";
      performance["score"] = c.performance_points;
      performance["max_score"] = c.max_performance;
      performance["status"] = c.bandwidth_passed ? "passed" : "failed";
    }
    tests.push_back(correctness);
    tests.push_back(performance);
    if (o.leaderboard && scored && c.correctness_passed && c.learner_gbps) {  // a wrong kernel ranks nowhere
      leaderboard.push_back({{"name", valid_utf8(c.slug) + " GB/s"},
                             {"value", std::round(*c.learner_gbps * 10) / 10},
                             {"order", "desc"}});
    }
  }

  std::string output;
  if (r.graded) {
    output = fmt::format("{} of {} points.\n", points_text(r.points), points_text(r.max_points));
    if (r.interrupted || !r.complete) output += "This run did not finish: chapters not graded cost no points.\n";
  } else {
    output = not_graded_line(r) +
             "\nThe grader could not grade this submission: the score of 0 is a placeholder, not a grade, "
             "and the tests below show no results. Ask the course staff to grade it again.\n";
  }
  output += "Submission " + r.name + (r.date.empty() ? "" : ", " + r.date) + ", " + r.device_text + ".\n";
  for (const Chapter& c : r.views) {
    output += c.slug + ": " + c.status.word_or("no status");
    if (r.graded && c.graded()) output += ", " + points_text(c.points) + "/" + points_text(c.max_points);
    output += "\n";
  }

  json doc = {{"score", r.graded ? r.points : 0.0}, {"output", html_escape(bounded_text(output, kTestOutputBytes))},
              {"output_format", "simple_format"},   {"visibility", o.visibility},
              {"stdout_visibility", "hidden"},      {"tests", tests}};
  if (r.seconds) doc["execution_time"] = static_cast<long long>(std::llround(*r.seconds));
  if (!leaderboard.empty()) doc["leaderboard"] = leaderboard;
  return json_text(doc);
}

}  // namespace grader
