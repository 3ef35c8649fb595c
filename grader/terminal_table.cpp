// What the grader prints for one submission on the terminal: the table of chapters, what failed
// and its hints, and the notes for the instructor.
#include "report.hpp"

#include <optional>
#include <string>

#include <fmt/format.h>

#include "judge/names.hpp"
#include "text.hpp"

namespace grader {

namespace {

std::string gbps(const std::optional<double>& v) { return v ? fmt::format("{:.0f}", *v) : "-"; }

// Shown dim: nothing for the learner to fix.
bool quiet_status(const Status& status) { return !status.counts_as_failure(); }

}  // namespace

void print_table(const GradingRun& run) {
  fmt::print("\n{:<18} {:<18} {:>11} {:>12} {:>14} {:>10} {:>9}\n", "chapter", "status", "correctness", "learner GB/s",
             "reference GB/s", "% ceiling", "points");
  fmt::print("{}\n", std::string(98, '-'));
  for (const ChapterResult& r : run.chapters) {
    const std::string correctness = r.tests_total ? fmt::format("{}/{}", r.tests_passed, r.tests_total) : "-";
    const std::string pct = r.learner_gbps && r.learner_ceiling_gbps && *r.learner_ceiling_gbps > 0
                                ? fmt::format("{:.1f}%", 100 * *r.learner_gbps / *r.learner_ceiling_gbps)
                                : "-";
    const char* colour = r.status == Status::passed ? "32" : quiet_status(r.status) ? "2" : "31";
    fmt::print("{:<18} {} {:>11} {:>12} {:>14} {:>10} {:>9}\n", r.spec->slug,
               paint(fmt::format("{:<18}", r.status), colour), correctness, gbps(r.learner_gbps),
               gbps(r.reference_gbps), pct,
               !r.status.was_tested() ? std::string("-") : fmt::format("{:g}/{}", r.points, r.max_points()));
  }
  fmt::print("{}\n{:<18} {:>79}\n", std::string(98, '-'), "total",
             fmt::format("{:g}/{}", run.points(), run.max_points()));
  if (const std::string where = run.isolation(); !where.empty()) fmt::print("{}\n", visible_line(where, 2048));
  for (const ChapterResult& r : run.chapters) {
    if (quiet_status(r.status)) continue;
    fmt::print("\n== {} ({}): {}\n", r.spec->slug, r.spec->version, r.status);
    // What failed quotes the learner's code: visible, and a failure's lines indented under it.
    if (!r.detail.empty()) fmt::print("{}\n", first_lines(valid_utf8(r.detail), 40));
    for (std::size_t i = 0; i < r.failed.size() && i < 4; ++i) {
      fmt::print("  x {}\n{}", visible_line(r.failed[i].name),
                 indent(first_lines(valid_utf8(r.failed[i].message), 8), 6));
    }
    if (r.failed.size() > 4) fmt::print("  ... and {} more failed tests\n", r.failed.size() - 4);
    for (const std::string& group : r.failed_groups) {
      const auto hint = r.spec->hints.find(group);
      if (hint != r.spec->hints.end()) fmt::print("  hint ({}): {}\n", group, hint->second);
    }
  }
  if (!run.graded && !run.interrupted) {
    fmt::print(
        "\nNot graded: {}. The chapters marked \"{}\" were built and checked: ready for a GPU. Run "
        "the grader where it can use one (docs/no-gpu.md: Colab's free T4 with "
        "notebooks/workbook-colab.ipynb, a course server, a cluster node).\n",
        run.not_graded_reason, Status(Status::no_gpu));
  }
  if (run.interrupted) fmt::print("\nInterrupted: the chapters above marked so were not graded.\n");
}

void print_idea_notes(const GradingRun& run) {
  std::string out;
  for (const ChapterResult& r : run.chapters) {
    for (const IdeaNote& n : r.idea) {
      if (!n.shown) out += fmt::format("  {}: {} not seen in the machine code\n", r.spec->slug, n.what);
    }
  }
  if (!out.empty()) fmt::print("\nFor the instructor (not part of the grade):\n{}", out);
}

}  // namespace grader
