#include "formats.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "report_document.hpp"
#include "text.hpp"
#include "workbook/names.hpp"

using nlohmann::json;

namespace grader {
namespace {

constexpr std::size_t kTestOutputBytes = 16 * 1024;  // one Gradescope or PrairieLearn test's output
constexpr std::size_t kRunOutputBytes = 64 * 1024;   // the output about the whole submission
constexpr std::size_t kMessageBytes = 4 * 1024;      // one failed test's message on the student's page
constexpr std::size_t kFailedShown = 3;              // failed tests shown per chapter on that page
constexpr std::size_t kNotGradedListed = 20;         // submissions the class summary names

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// What a chapter's status means for a format, from the one table (workbook/names.hpp,
// outcome_of): passed; failed (the learner's code is wrong); an error (the run of the code went
// wrong); or not graded (skipped for a missing GPU feature, no GPU, or never reached).
enum class Kind { passed, failed, error, not_graded };

Kind kind_of(const std::string& status) {
  using workbook::names::status::Outcome;
  switch (workbook::names::status::outcome_of(status)) {
    case Outcome::passed: return Kind::passed;
    case Outcome::failed: return Kind::failed;
    case Outcome::error: return Kind::error;
    case Outcome::skipped:
    case Outcome::untested:
    case Outcome::unknown: return Kind::not_graded;
  }
  return Kind::failed;
}

// One chapter of a report as the formats see it: the report's fields (report_document.hpp, read
// with their fallbacks) and what its status means.
struct Chapter : ChapterReport {
  Kind kind = Kind::not_graded;

  explicit Chapter(const ChapterReport& c) : ChapterReport(c), kind(kind_of(c.status)) {}
  bool graded() const { return kind != Kind::not_graded; }
  std::string label() const {
    std::string s = slug;
    if (!version.empty()) s += " (" + version + ")";
    if (!title.empty()) s += " " + title;
    return s;
  }
  const ReportFailure* failure(const std::string& test) const {
    for (const ReportFailure& f : failed) {
      if (f.name == test) return &f;
    }
    return nullptr;
  }
};

// A report as the formats see it: the report itself (report_document.hpp), the device in words, and
// its chapters with their kinds.
struct Report : ReportDocument {
  std::string device_text;     // "no GPU" when graded without one
  std::vector<Chapter> views;  // chapters, each with its kind
};

Report report_of(const json& r) {
  Report rep;
  static_cast<ReportDocument&>(rep) = r.get<ReportDocument>();
  if (rep.device) {
    rep.device_text = rep.device->name;
    std::vector<std::string> parts;
    if (rep.device->multiprocessors) parts.push_back(fmt::format("{} multiprocessors", *rep.device->multiprocessors));
    if (!rep.device->driver_cuda.empty()) parts.push_back("driver CUDA " + rep.device->driver_cuda);
    if (!rep.device->runtime_cuda.empty()) parts.push_back("runtime CUDA " + rep.device->runtime_cuda);
    if (!parts.empty()) {
      rep.device_text += " (";
      for (std::size_t i = 0; i < parts.size(); ++i) rep.device_text += (i ? ", " : "") + parts[i];
      rep.device_text += ")";
    }
  } else {
    rep.device_text = "no GPU";
  }
  for (const ChapterReport& c : rep.chapters) rep.views.emplace_back(c);
  return rep;
}

std::string not_graded_line(const Report& r) {
  return r.not_graded_reason.empty() ? "Not graded." : "Not graded: " + r.not_graded_reason;
}

std::string points_text(double v) { return fmt::format("{:g}", v); }

// "95.7% of the reference (80% needed)", as far as the report has the numbers.
std::string bandwidth_text(const Chapter& c) {
  std::string s;
  if (c.learner_gbps) s = fmt::format("{:.0f} GB/s", *c.learner_gbps);
  if (c.reference_gbps) s += fmt::format("{}the reference: {:.0f} GB/s", s.empty() ? "" : "; ", *c.reference_gbps);
  if (c.bandwidth_ratio) {
    s += fmt::format("{}{:.1f}% of the reference's bandwidth (each as a share of its own ceiling)",
                     s.empty() ? "" : "; ", 100 * *c.bandwidth_ratio);
  }
  if (c.required_fraction) s += fmt::format("{}{:.0f}% needed", s.empty() ? "" : "; ", 100 * *c.required_fraction);
  return s;
}

// Why performance was not judged, or "" when it was.
std::string unmeasured_reason(const Chapter& c) {
  if (!c.graded()) return "Not measured (" + (c.status.empty() ? "no status" : c.status) + ").";
  if (c.kind == Kind::error) return "Not measured: the chapter's tests " + c.status + ".";
  if (!c.correctness_passed) return "Not measured: performance counts once every correctness test passes.";
  return "";
}

// The chapter's correctness in plain text: status, detail, failed tests, hints.
std::string correctness_report(const Chapter& c, std::size_t max_failed) {
  std::string s = c.status.empty() ? "no status" : c.status;
  s += "\n";
  if (!c.detail.empty()) s += c.detail + (c.detail.back() == '\n' ? "" : "\n");
  if (c.detail.empty() && c.tests_total > 0) {
    s += fmt::format("{} of {} correctness tests passed.\n", c.tests_passed, c.tests_total);
  }
  for (std::size_t i = 0; i < c.failed.size() && i < max_failed; ++i) {
    s += "\nx " + c.failed[i].name + "\n" + indent(c.failed[i].message, 4);
  }
  if (c.failed.size() > max_failed) s += fmt::format("... and {} more failed tests\n", c.failed.size() - max_failed);
  if (!c.hints.empty()) s += "\n";
  for (const ReportHint& h : c.hints) s += "Hint (" + h.group + "): " + h.text + "\n";
  return s;
}

std::string performance_report(const Chapter& c) {
  const std::string why = unmeasured_reason(c);
  const std::string numbers = c.graded() ? bandwidth_text(c) : "";
  std::string s = why.empty() ? (c.bandwidth_passed ? "Fast enough.\n" : "Not fast enough yet.\n") : why + "\n";
  if (!numbers.empty()) s += numbers + "\n";
  return s;
}

std::string dump(const json& doc) { return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n"; }

// ---- Markdown ----

// `s` as Markdown text that renders as itself (on one line).
std::string md_text(const std::string& s) {
  std::string out;
  for (const char ch : valid_utf8(s)) {
    if (ch == '\n' || ch == '\t') {
      out += ' ';
      continue;
    }
    if (std::string_view("\\`*_[]<>#|~!").find(ch) != std::string_view::npos) out += '\\';
    out += ch;
  }
  return out;
}

std::size_t longest_backtick_run(const std::string& s) {
  std::size_t longest = 0, run = 0;
  for (const char ch : s) {
    run = ch == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

// `body` in a fenced code block whose fence is longer than any run of
// backticks in it, so nothing in it can close the block.
std::string fenced(const std::string& raw) {
  std::string body = valid_utf8(raw);
  if (!body.empty() && body.back() != '\n') body += '\n';
  const std::string fence(std::max<std::size_t>(3, longest_backtick_run(body) + 1), '`');
  return fence + "\n" + body + fence + "\n";
}

// `s` as inline code (a table cell's '|' escaped too).
std::string md_code(const std::string& raw) {
  std::string s;
  for (const char ch : valid_utf8(raw)) s += ch == '\n' || ch == '\t' ? ' ' : ch;
  const std::string ticks(longest_backtick_run(s) + 1, '`');
  const std::string pad = !s.empty() && (s.front() == '`' || s.back() == '`') ? " " : "";
  return ticks + pad + s + pad + ticks;
}

std::string md_cell(const std::string& s) { return md_text(s); }  // md_text escapes '|' and folds lines

}  // namespace

std::string feedback_markdown(const json& report) {
  const Report r = report_of(report);
  std::string md = "# Feedback: " + md_text(r.name) + "\n\n";
  if (!r.graded) {
    md += "> **" + md_text(not_graded_line(r)) + "**\n>\n"
          "> The grader could not grade this submission, so this page is not a grade: "
          "no points were given and none were lost.\n\n";
  }
  if (!r.date.empty()) md += "- **Date:** " + md_text(r.date) + "\n";
  md += "- **Device:** " + md_text(r.device_text) + "\n";
  md += r.graded ? "- **Total:** " + points_text(r.points) + " / " + points_text(r.max_points) + " points\n"
                 : "- **Total:** not graded (" + points_text(r.max_points) + " points to earn)\n";
  if (r.graded && (r.interrupted || !r.complete)) {
    md += "\nThis run did not finish: the chapters marked *not graded* or *interrupted* below were not graded, "
          "and they cost no points.\n";
  }

  md += "\n| Chapter | Status | Correctness tests | GB/s | % of reference (needed) | Points |\n"
        "|---|---|---|---|---|---|\n";
  for (const Chapter& c : r.views) {
    const std::string correctness = c.tests_total > 0 ? fmt::format("{}/{}", c.tests_passed, c.tests_total) : "-";
    const std::string gbps = c.learner_gbps ? fmt::format("{:.0f}", *c.learner_gbps) : "-";
    std::string pct = c.bandwidth_ratio ? fmt::format("{:.1f}%", 100 * *c.bandwidth_ratio) : "-";
    if (c.required_fraction) pct += fmt::format(" ({:.0f}%)", 100 * *c.required_fraction);
    const std::string points = r.graded && c.graded()
                                   ? points_text(c.points) + " / " + points_text(c.max_points)
                                   : "not graded";
    md += "| " + md_cell(c.label()) + " | " + md_cell(c.status.empty() ? "-" : c.status) + " | " +
          correctness + " | " + gbps + " | " + md_cell(pct) + " | " + points + " |\n";
  }

  for (const Chapter& c : r.views) {
    if (c.kind == Kind::passed) continue;
    md += "\n## " + md_text(c.label()) + ": " + md_text(c.status.empty() ? "no status" : c.status) + "\n\n";
    if (!c.detail.empty()) {
      const bool block = c.detail.find('\n') != std::string::npos && c.detail.find('\n') + 1 < c.detail.size();
      if (block || c.status == workbook::names::status::kDoesNotCompile || c.status == workbook::names::status::kRejected) {
        md += fenced(bounded_text(c.detail, kTestOutputBytes)) + "\n";
      } else {
        md += md_text(c.detail) + "\n\n";
      }
    }
    if (!c.graded()) {
      md += "Not graded: no points were lost here.\n";
      continue;
    }
    if (c.detail.empty() && c.tests_total > 0) {
      md += fmt::format("{} of {} correctness tests passed.\n\n", c.tests_passed, c.tests_total);
    }
    if (!c.failed.empty()) {
      md += c.failed.size() > kFailedShown
                ? fmt::format("Failed tests (the first {} of {}):\n\n", kFailedShown, c.failed.size())
                : std::string("Failed tests:\n\n");
      for (std::size_t i = 0; i < c.failed.size() && i < kFailedShown; ++i) {
        md += "**" + md_code(c.failed[i].name) + "**\n\n";
        if (!c.failed[i].message.empty()) md += fenced(bounded_text(c.failed[i].message, kMessageBytes)) + "\n";
      }
    }
    if (c.kind == Kind::failed && c.correctness_passed && !c.bandwidth_passed) {
      md += md_text(performance_report(c)) + "\n\n";
    }
    if (!c.hints.empty()) {
      md += "Hints:\n\n";
      for (const ReportHint& h : c.hints) md += "- **" + md_text(h.group) + ":** " + md_text(h.text) + "\n";
    }
  }
  return valid_utf8(md);
}

// ---- Gradescope ----

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
    output += c.slug + ": " + (c.status.empty() ? "no status" : c.status);
    if (r.graded && c.graded()) output += ", " + points_text(c.points) + "/" + points_text(c.max_points);
    output += "\n";
  }

  json doc = {{"score", r.graded ? r.points : 0.0},
              {"output", html_escape(bounded_text(output, kTestOutputBytes))},
              {"output_format", "simple_format"},
              {"visibility", o.visibility},
              {"stdout_visibility", "hidden"},
              {"tests", tests}};
  if (r.seconds) doc["execution_time"] = static_cast<long long>(std::llround(*r.seconds));
  if (!leaderboard.empty()) doc["leaderboard"] = leaderboard;
  return dump(doc);
}

// ---- PrairieLearn ----

std::string prairielearn_results(const json& report) {
  const Report r = report_of(report);
  json tests = json::array();
  std::string output;
  for (const Chapter& c : r.views) {
    const bool scored = r.graded && c.graded();
    const std::string body = correctness_report(c, c.failed.size()) + "\nPerformance: " + performance_report(c);
    json t = {{"name", valid_utf8(c.label())},
              {"description",
               fmt::format("Chapter {}: correctness tests ({} points), then bandwidth ({} points)", c.slug,
                           points_text(c.max_correctness), points_text(c.max_performance))},
              {"message", valid_utf8(c.status.empty() ? "no status" : c.status)},
              {"output", bounded_text(body, kTestOutputBytes)}};
    if (scored) {
      t["points"] = c.points;
      t["max_points"] = c.max_points;
    }
    tests.push_back(t);
    output += c.slug + ": " + (c.status.empty() ? "no status" : c.status) +
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
  doc["output"] = bounded_text("Submission " + r.name + (r.date.empty() ? "" : ", " + r.date) + ", " + r.device_text +
                                   ".\n" + output,
                               kRunOutputBytes);
  return dump(doc);
}

// ---- JUnit XML ----

namespace {

// `raw` with what XML 1.0 does not allow dropped: control characters other
// than tab, newline and CR, and U+FFFE/U+FFFF. Invalid UTF-8 becomes U+FFFD.
std::string xml_chars(std::string_view raw) {
  std::string valid;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= raw.size(); ++i) {
    const unsigned char c = i < raw.size() ? static_cast<unsigned char>(raw[i]) : 0;
    if (i == raw.size() || (c < 0x20 && c != '\t' && c != '\n' && c != '\r')) {
      valid += valid_utf8(raw.substr(start, i - start));  // piecewise: a dropped byte joins no sequence
      start = i + 1;
    }
  }
  std::string out;
  for (std::size_t i = 0; i < valid.size(); ++i) {
    if (valid.compare(i, 2, "\xEF\xBF") == 0 && i + 2 < valid.size() &&
        (valid[i + 2] == '\xBE' || valid[i + 2] == '\xBF')) {
      i += 2;  // U+FFFE or U+FFFF
      continue;
    }
    out += valid[i];
  }
  return out;
}

// Escaped for XML text, or for an attribute value (where line ends and tabs
// are character references, so a parser keeps them).
std::string xml(std::string_view raw, bool attribute = false) {
  std::string out;
  for (const char ch : xml_chars(raw)) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\n': out += attribute ? "&#10;" : "\n"; break;
      case '\t': out += attribute ? "&#9;" : "\t"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string attr(std::string_view raw) { return xml(raw, true); }

std::string first_line(const std::string& s) {
  const std::string line = s.substr(0, s.find('\n'));
  return line.size() > 1024 ? line.substr(0, 1024) : line;
}

std::string seconds_text(double s) { return fmt::format("{:.3f}", s); }

struct Suite {
  std::string body;
  int tests = 0, failures = 0, errors = 0, skipped = 0;

  void add(const std::string& classname, const std::string& name, const std::string& inner) {
    ++tests;
    body += "    <testcase classname=\"" + attr(classname) + "\" name=\"" + attr(name) + "\"";
    body += inner.empty() ? "/>\n" : ">\n" + inner + "    </testcase>\n";
  }
  std::string failure(const std::string& type, const std::string& message, const std::string& content) {
    ++failures;
    return "      <failure type=\"" + attr(type) + "\" message=\"" + attr(first_line(message)) + "\">" +
           xml(bounded_text(xml_chars(content), kTestOutputBytes)) + "</failure>\n";
  }
  std::string error(const std::string& type, const std::string& message, const std::string& content) {
    ++errors;
    return "      <error type=\"" + attr(type) + "\" message=\"" + attr(first_line(message)) + "\">" +
           xml(bounded_text(xml_chars(content), kTestOutputBytes)) + "</error>\n";
  }
  std::string skip(const std::string& message) {
    ++skipped;
    return "      <skipped message=\"" + attr(first_line(message)) + "\"/>\n";
  }
};

}  // namespace

std::string junit_xml(const std::vector<json>& reports) {
  std::string suites;
  int tests = 0, failures = 0, errors = 0;
  double seconds = 0;
  for (const json& one : reports) {
    const Report r = report_of(one);
    for (const Chapter& c : r.views) {
      const std::string classname = r.name + "." + c.slug;
      const std::string why = c.status + (c.detail.empty() ? "" : ": " + c.detail);
      Suite s;
      for (const ReportTest& t : c.tests) {
        if (t.result == "passed") {
          s.add(classname, t.name, "");
        } else if (t.result == "skipped") {
          s.add(classname, t.name, s.skip("skipped"));
        } else {
          const ReportFailure* f = c.failure(t.name);
          const std::string message = f && !f->message.empty() ? f->message : t.result.empty() ? "failed" : t.result;
          s.add(classname, t.name, s.failure(t.result.empty() ? "failed" : t.result, message, message));
        }
      }
      // One testcase for the chapter when its tests do not tell the whole story.
      const bool reported = !c.tests.empty();
      if (c.kind == Kind::not_graded) {
        s.add(classname, c.slug, s.skip(why.empty() ? "not graded" : why));
      } else if (c.kind == Kind::error) {
        s.add(classname, c.slug, s.error(c.status, why, c.detail.empty() ? c.status : c.detail));
      } else if (c.kind == Kind::failed && (!reported || (c.status != "failed"))) {
        s.add(classname, c.slug, s.failure(c.status, why, c.detail.empty() ? c.status : c.detail));
      } else if (!reported) {
        s.add(classname, c.slug, "");
      }
      // Performance, judged only once the chapter is correct.
      if (reported && (c.kind == Kind::passed || c.kind == Kind::failed)) {
        if (!c.correctness_passed) {
          s.add(classname, "performance", s.skip(unmeasured_reason(c)));
        } else if (c.bandwidth_passed) {
          s.add(classname, "performance", "");
        } else {
          const std::string numbers = bandwidth_text(c);
          const std::string message = "not fast enough" + (numbers.empty() ? "" : ": " + numbers);
          s.add(classname, "performance", s.failure("performance", message, message));
        }
      }
      std::string head = "  <testsuite name=\"" + attr(r.name + "/" + c.slug) + "\"" +
                         fmt::format(" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\"", s.tests,
                                     s.failures, s.errors, s.skipped) +
                         " time=\"" + seconds_text(c.seconds) + "\"";
      if (!r.date.empty()) head += " timestamp=\"" + attr(r.date) + "\"";
      suites += head + ">\n" + s.body + "  </testsuite>\n";
      tests += s.tests;
      failures += s.failures;
      errors += s.errors;
      seconds += c.seconds;
    }
  }
  // <testsuites> carries the attributes the JUnit schema gives it (no "skipped": each suite has it).
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" +
         fmt::format("<testsuites name=\"workbook grader\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{}\">\n",
                     tests, failures, errors, seconds_text(seconds)) +
         suites + "</testsuites>\n";
}

// ---- CSV ----

namespace {

// One RFC 4180 field: valid UTF-8; a leading = + - @ tab or CR (a formula to
// a spreadsheet) behind an apostrophe; quoted when it holds , " CR or LF.
std::string csv_field(const std::string& raw) {
  std::string v = valid_utf8(raw);  // drops CR, so a leading CR is looked for in `raw`
  const bool formula = (!raw.empty() && raw.front() == '\r') ||
                       (!v.empty() && std::string_view("=+-@\t").find(v.front()) != std::string_view::npos);
  if (formula) v = "'" + v;
  if (v.find_first_of(",\"\r\n") == std::string::npos) return v;
  std::string quoted = "\"";
  for (const char ch : v) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return quoted + "\"";
}

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

std::string trim(const std::string& s) {
  const std::size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

}  // namespace

std::string gradebook_csv(const std::vector<json>& reports, const std::vector<std::string>& slugs,
                          const std::map<std::string, std::string>& ids) {
  std::string out = "student";
  for (const std::string& slug : slugs) out += "," + csv_field(slug);
  out += ",total,max_points,status\r\n";
  std::vector<std::pair<std::string, std::string>> rows;  // student, the rest of the row
  for (const json& one : reports) {
    const Report r = report_of(one);
    // The mapping names a submission as it was handed in, or by its folder-safe id.
    auto mapped = ids.find(r.name);
    if (mapped == ids.end()) mapped = ids.find(r.id);
    const std::string student = mapped != ids.end() ? mapped->second : r.name;
    std::string row;
    for (const std::string& slug : slugs) {
      const auto c = std::find_if(r.views.begin(), r.views.end(),
                                  [&](const Chapter& ch) { return ch.slug == slug; });
      row += ",";
      if (r.graded && c != r.views.end() && c->graded()) row += csv_field(points_text(c->points));
    }
    row += "," + (r.graded ? csv_field(points_text(r.points)) : "");
    row += "," + csv_field(points_text(r.max_points));
    const std::string status = !r.graded ? (r.not_graded_reason.empty() ? "not graded"
                                                                        : "not graded: " + r.not_graded_reason)
                               : !r.complete || r.interrupted ? "incomplete"
                                                              : "graded";
    row += "," + csv_field(status);
    rows.emplace_back(student, row);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [student, row] : rows) out += csv_field(student) + row + "\r\n";
  return out;
}

std::map<std::string, std::string> read_id_mapping(const std::string& csv_text, std::string* error) {
  using Mapping = std::map<std::string, std::string>;
  Mapping ids;
  std::map<std::string, std::size_t> listed_on;
  const auto fail = [&](std::size_t line, const std::string& why) -> Mapping {
    if (error) *error = valid_utf8(fmt::format("line {}: {}", line, why));
    return {};
  };
  std::string_view s = csv_text;
  if (starts_with(s, "\xEF\xBB\xBF")) s.remove_prefix(3);  // a byte order mark, as spreadsheets write
  std::size_t pos = 0, line = 1;
  bool header = false;
  while (pos < s.size()) {
    const std::size_t record_line = line;
    std::vector<std::string> fields;
    for (;;) {
      std::string field;
      if (pos < s.size() && s[pos] == '"') {
        for (++pos;; ++pos) {
          if (pos >= s.size()) return fail(record_line, "a quoted field is not closed");
          if (s[pos] == '"') {
            if (pos + 1 < s.size() && s[pos + 1] == '"') {
              field += '"';
              ++pos;
              continue;
            }
            ++pos;
            break;
          }
          if (s[pos] == '\n') ++line;
          field += s[pos];
        }
        if (pos < s.size() && s[pos] != ',' && s[pos] != '\r' && s[pos] != '\n') {
          return fail(line, "text after the closing quote of a field");
        }
      } else {
        for (; pos < s.size() && s[pos] != ',' && s[pos] != '\r' && s[pos] != '\n'; ++pos) {
          if (s[pos] == '"') return fail(line, "a quote inside a field that does not start with one");
          field += s[pos];
        }
        field = trim(field);
      }
      fields.push_back(field);
      if (pos < s.size() && s[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < s.size() && s[pos] == '\r') ++pos;
      if (pos < s.size() && s[pos] == '\n') ++pos;
      ++line;
      break;
    }
    if (fields.size() == 1 && fields[0].empty()) continue;  // a blank line
    if (!header) {
      if (fields.size() != 2 || lower(fields[0]) != "submission" || lower(fields[1]) != "student") {
        return fail(record_line, "the first line must be the header 'submission,student'");
      }
      header = true;
      continue;
    }
    if (fields.size() != 2) {
      return fail(record_line, fmt::format("{} fields; a line is 'submission,student'", fields.size()));
    }
    if (fields[0].empty() || fields[1].empty()) return fail(record_line, "an empty submission or student");
    const auto [it, added] = listed_on.emplace(fields[0], record_line);
    if (!added) {
      return fail(record_line, fmt::format("submission '{}' is listed twice (first on line {})", fields[0], it->second));
    }
    ids[fields[0]] = fields[1];
  }
  if (!header) return fail(1, "the file is empty; its first line must be the header 'submission,student'");
  if (error) error->clear();
  return ids;
}

// ---- Class summary ----

std::string class_summary(const std::vector<json>& reports, const std::vector<std::string>& slugs) {
  struct Counts {
    int passed = 0, failed = 0, not_graded = 0;
  };
  std::vector<Counts> counts(slugs.size());
  std::vector<std::string> not_graded;
  int graded = 0, incomplete = 0;
  for (const json& one : reports) {
    const Report r = report_of(one);
    if (!r.graded) {
      not_graded.push_back(r.name + ": " + (r.not_graded_reason.empty() ? "no reason given" : r.not_graded_reason));
    } else {
      ++graded;
      if (!r.complete || r.interrupted) ++incomplete;
    }
    for (std::size_t i = 0; i < slugs.size(); ++i) {
      const auto c = std::find_if(r.views.begin(), r.views.end(),
                                  [&](const Chapter& ch) { return ch.slug == slugs[i]; });
      if (c == r.views.end() || !r.graded || !c->graded()) {
        ++counts[i].not_graded;  // absent from the report counts as not graded
      } else if (c->kind == Kind::passed) {
        ++counts[i].passed;
      } else {
        ++counts[i].failed;
      }
    }
  }
  std::size_t width = 7;
  for (const std::string& slug : slugs) width = std::max(width, slug.size());
  std::string out = fmt::format("{} reports: {} graded, {} not graded; {} of the graded ones incomplete.\n\n",
                                reports.size(), graded, not_graded.size(), incomplete);
  out += fmt::format("{:<{}}  {:>6}  {:>6}  {:>16}\n", "chapter", width, "passed", "failed", "could not grade");
  for (std::size_t i = 0; i < slugs.size(); ++i) {
    out += fmt::format("{:<{}}  {:>6}  {:>6}  {:>16}\n", slugs[i], width, counts[i].passed, counts[i].failed,
                       counts[i].not_graded);
  }
  if (!not_graded.empty()) {
    out += fmt::format("\nNot graded ({}):\n", not_graded.size());
    for (std::size_t i = 0; i < not_graded.size() && i < kNotGradedListed; ++i) out += "  " + not_graded[i] + "\n";
    if (not_graded.size() > kNotGradedListed) {
      out += fmt::format("  ... and {} more\n", not_graded.size() - kNotGradedListed);
    }
  }
  out += fmt::format("\nIncomplete reports (graded, but the run did not finish): {}\n", incomplete);
  return valid_utf8(out);
}

}  // namespace grader
