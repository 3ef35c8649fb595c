// PrairieLearn's results.json, from a report (formats.hpp).
#include "formats.hpp"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "report_view.hpp"
#include "text.hpp"

using nlohmann::json;

namespace grader {
using namespace view;

std::string prairielearn_results(const json& report) {
  const Report r = report_of(report);
  json tests = json::array();
  std::string output;
  for (const Chapter& c : r.views) {
    const bool scored = r.graded && c.graded();
    const std::string body = correctness_report(c, c.failed.size()) + "\nPerformance: " + performance_report(c);
    json t = {{"name", valid_utf8(c.label())},
              {"description", fmt::format("Chapter {}: correctness tests ({} points), then bandwidth ({} points)",
                                          c.slug, points_text(c.max_correctness), points_text(c.max_performance))},
              {"message", valid_utf8(c.status.word_or("no status"))},
              {"output", bounded_text(body, kTestOutputBytes)}};
    if (scored) {
      t["points"] = c.points;
      t["max_points"] = c.max_points;
    }
    tests.push_back(t);
    output += c.slug + ": " + c.status.word_or("no status") +
              (scored ? ", " + points_text(c.points) + "/" + points_text(c.max_points) : "") + "\n";
  }
  json doc = {{"gradable", r.graded}, {"tests", tests}};
  if (r.graded) {
    const double score = r.max_points > 0 ? r.points / r.max_points : 0.0;
    doc["score"] = std::clamp(score, 0.0, 1.0);
    doc["message"] = fmt::format("{} of {} points.", points_text(r.points), points_text(r.max_points));
  } else {
    // Not gradable: PrairieLearn awards and takes no points and counts no attempt.
    doc["message"] = valid_utf8(not_graded_line(r));
    doc["format_errors"] = json::array({valid_utf8(not_graded_line(r))});
  }
  doc["output"] = bounded_text(
      "Submission " + r.name + (r.date.empty() ? "" : ", " + r.date) + ", " + r.device_text + ".\n" + output,
      kRunOutputBytes);
  return json_text(doc);
}

}  // namespace grader
