#include "report.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>

#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "judge/names.hpp"
#include "text.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {

bool GradingRun::complete() const {
  return graded && !interrupted &&
         std::none_of(chapters.begin(), chapters.end(), [](const ChapterResult& r) { return !r.status.was_tested(); });
}

std::string GradingRun::isolation() const {
  const ChapterResult* first = nullptr;
  for (const ChapterResult& r : chapters) {
    if (r.isolation.empty()) continue;
    if (!r.sandboxed) return fmt::format("{}: the chapter's code ran {}", r.spec->slug, r.isolation);
    if (!first) first = &r;
  }
  return first ? "the chapters' code ran " + first->isolation : "";
}

double GradingRun::points() const {
  double total = 0;
  for (const ChapterResult& r : chapters) total += r.points;
  return total;
}

int GradingRun::max_points() const {
  int total = 0;
  for (const ChapterResult& r : chapters) total += r.max_points();
  return total;
}

std::string write_atomically(const std::string& path, const std::string& text) {
  const fs::path target = fs::absolute(path);
  std::error_code ec;
  if (!fs::is_directory(target.parent_path(), ec)) {
    return fmt::format("cannot write {}: the directory {} does not exist", target.string(),
                       target.parent_path().string());
  }
  if (fs::is_directory(target, ec)) return fmt::format("cannot write {}: it is a directory", target.string());
  const fs::path temporary = target.parent_path() / fmt::format(".{}.{}.tmp", target.filename().string(), getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out)
      return fmt::format("cannot write {}: cannot create a file in {}", target.string(), target.parent_path().string());
    out << text;
    out.flush();
    if (!out) {
      fs::remove(temporary, ec);
      return fmt::format("cannot write {}: the write failed (disk full?)", target.string());
    }
  }
  fs::rename(temporary, target, ec);
  if (ec) {
    fs::remove(temporary, ec);
    return fmt::format("cannot write {}: {}", target.string(), ec.message());
  }
  return "";
}

json report_document(const GradingRun& run) {
  ReportDocument doc;
  for (const ChapterResult& r : run.chapters) {
    const bool correct = r.correct() && r.status != Status::rejected;
    ChapterReport c;
    c.slug = r.spec->slug;
    c.version = r.spec->version;
    c.title = r.spec->title;
    c.status = r.status;
    c.detail = bounded_text(r.detail);
    c.tests_passed = r.tests_passed;
    c.tests_total = r.tests_total;
    c.correctness_passed = correct;
    c.correctness_points = correct ? r.spec->correctness_points : 0;
    c.max_correctness = r.spec->correctness_points;
    c.bandwidth_passed = r.bandwidth_passed;
    c.performance_points = r.bandwidth_passed ? r.spec->performance_points : 0;
    c.max_performance = r.spec->performance_points;
    c.points = r.points;
    c.max_points = r.max_points();
    c.required_fraction = r.spec->bandwidth_fraction;
    c.seconds = r.seconds;
    c.learner_gbps = r.learner_gbps;
    c.learner_ceiling_gbps = r.learner_ceiling_gbps;
    c.reference_gbps = r.reference_gbps;
    c.reference_ceiling_gbps = r.reference_ceiling_gbps;
    c.bandwidth_ratio = r.bandwidth_ratio;
    c.isolation = r.isolation;
    c.sandboxed = r.sandboxed;
    c.output_bytes = r.output_bytes;
    c.output_kept = r.output_kept;
    if (r.output_bytes > r.output_kept) {
      c.output_note = fmt::format(
          "the chapter's code printed {} bytes in a test process; the log keeps the first {} "
          "of them",
          r.output_bytes, r.output_kept);
    }
    for (const Refusal& f : r.refusals) c.refusals.push_back({f.check, bounded_text(f.reason, 2048)});
    for (const IdeaNote& n : r.idea) c.idea.push_back({n.what, n.shown, bounded_text(n.evidence, 1024)});
    for (const TestOutcome& t : r.tests) c.tests.push_back({t.name, t.result});
    for (const FailedTest& f : r.failed) c.failed.push_back({f.name, bounded_text(f.message)});
    for (const std::string& group : r.failed_groups) {
      const auto hint = r.spec->hints.find(group);
      if (hint != r.spec->hints.end()) c.hints.push_back({group, hint->second});
    }
    doc.chapters.push_back(std::move(c));
  }
  if (run.device) {
    doc.device = ReportDevice{run.device->name, run.device->driver_cuda, run.device->runtime_cuda,
                              run.device->multiprocessors, run.device->compute_capability};
  }
  doc.schema = kReportSchema;
  doc.grader_version = WORKBOOK_GRADER_VERSION;
  doc.id = valid_utf8(run.id);
  doc.name = valid_utf8(run.name.empty() ? run.id : run.name);
  doc.source = valid_utf8(run.source);
  doc.chapters_dir = valid_utf8(run.chapters_dir);
  doc.fingerprint = run.fingerprint;
  doc.seed = run.seed;
  doc.date = run.date;
  doc.seconds = run.seconds;
  doc.graded = run.graded;
  doc.not_graded_reason = run.graded ? "" : run.not_graded_reason;
  doc.interrupted = run.interrupted;
  doc.sanitized = run.sanitized;
  doc.isolation = run.isolation();
  doc.complete = run.complete();
  doc.points = run.points();
  doc.max_points = run.max_points();
  return doc;
}

std::vector<std::string> write_reports(const GradingRun& run, const ReportPaths& paths,
                                       const GradescopeOptions& gradescope, bool announce) {
  std::vector<std::string> problems;
  const json doc = report_document(run);
  const auto write = [&](const char* what, const std::string& path, const std::function<std::string()>& text) {
    if (path.empty()) return;
    std::string why;
    try {
      why = write_atomically(path, text());
    } catch (const std::exception& e) {
      why = fmt::format("cannot write {}: {}", path, e.what());
    }
    if (!why.empty()) {
      problems.push_back(why);
    } else if (announce) {
      fmt::print("{}: {}\n", what, path);
    }
  };
  write("report", paths.report, [&] { return json_text(doc); });
  write("feedback", paths.feedback, [&] { return feedback_markdown(doc); });
  write("gradescope results", paths.gradescope, [&] { return gradescope_results(doc, gradescope); });
  write("prairielearn results", paths.prairielearn, [&] { return prairielearn_results(doc); });
  write("junit", paths.junit, [&] { return junit_xml({doc}); });
  return problems;
}

}  // namespace grader
