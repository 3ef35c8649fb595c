// The student's page (Markdown), from a report (formats.hpp).
#include "formats.hpp"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "judge/names.hpp"
#include "report_view.hpp"
#include "text.hpp"

using nlohmann::json;

namespace grader {
using namespace view;

namespace {

// `s` as Markdown text that renders as itself (on one line): the grader's own lines folded into
// one. What quotes the learner's code arrives made visible (report_of).
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
    md += "> **" + md_text(not_graded_line(r)) +
          "**\n>\n"
          "> The grader could not grade this submission, so this page is not a grade: "
          "no points were given and none were lost.\n\n";
  }
  if (!r.date.empty()) md += "- **Date:** " + md_text(r.date) + "\n";
  md += "- **Device:** " + md_text(r.device_text) + "\n";
  md += r.graded ? "- **Total:** " + points_text(r.points) + " / " + points_text(r.max_points) + " points\n"
                 : "- **Total:** not graded (" + points_text(r.max_points) + " points to earn)\n";
  if (r.graded && (r.interrupted || !r.complete)) {
    md +=
        "\nThis run did not finish: the chapters marked *not graded* or *interrupted* below were not graded, "
        "and they cost no points.\n";
  }

  md +=
      "\n| Chapter | Status | Correctness tests | GB/s | % of reference (needed) | Points |\n"
      "|---|---|---|---|---|---|\n";
  for (const Chapter& c : r.views) {
    const std::string correctness = c.tests_total > 0 ? fmt::format("{}/{}", c.tests_passed, c.tests_total) : "-";
    const std::string gbps = c.learner_gbps ? fmt::format("{:.0f}", *c.learner_gbps) : "-";
    std::string pct = c.bandwidth_ratio ? fmt::format("{:.1f}%", 100 * *c.bandwidth_ratio) : "-";
    if (c.required_fraction) pct += fmt::format(" ({:.0f}%)", 100 * *c.required_fraction);
    const std::string points =
        r.graded && c.graded() ? points_text(c.points) + " / " + points_text(c.max_points) : "not graded";
    md += "| " + md_cell(c.label()) + " | " + md_cell(c.status.word_or("-")) + " | " + correctness + " | " + gbps +
          " | " + md_cell(pct) + " | " + points + " |\n";
  }

  for (const Chapter& c : r.views) {
    if (c.kind == Kind::passed) continue;
    md += "\n## " + md_text(c.label()) + ": " + md_text(c.status.word_or("no status")) + "\n\n";
    if (!c.detail.empty()) {
      const bool block = c.detail.find('\n') != std::string::npos && c.detail.find('\n') + 1 < c.detail.size();
      if (block || c.status == Status::does_not_compile || c.status == Status::rejected) {
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

}  // namespace grader
