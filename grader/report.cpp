#include "report.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "text.hpp"
#include "workbook/names.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {
namespace st = workbook::names::status;

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

namespace {

std::string gbps(const std::optional<double>& v) { return v ? fmt::format("{:.0f}", *v) : "-"; }

std::string dump(const json& doc) {
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

bool quiet_status(const std::string& status) {
  return status == st::kPassed || status == st::kNoGpu || status == st::kNotGraded;
}

}  // namespace

void print_table(const GradingRun& run) {
  fmt::print("\n{:<18} {:<17} {:>11} {:>12} {:>14} {:>10} {:>9}\n", "chapter", "status",
             "correctness", "learner GB/s", "reference GB/s", "% ceiling", "points");
  fmt::print("{}\n", std::string(97, '-'));
  for (const ChapterResult& r : run.chapters) {
    const std::string correctness = r.tests_total ? fmt::format("{}/{}", r.tests_passed, r.tests_total) : "-";
    const std::string pct = r.learner_gbps && r.learner_ceiling_gbps && *r.learner_ceiling_gbps > 0
                                ? fmt::format("{:.1f}%", 100 * *r.learner_gbps / *r.learner_ceiling_gbps)
                                : "-";
    fmt::print("{:<18} {:<17} {:>11} {:>12} {:>14} {:>10} {:>9}\n", r.spec->slug, r.status,
               correctness, gbps(r.learner_gbps), gbps(r.reference_gbps), pct,
               fmt::format("{:g}/{}", r.points, r.max_points()));
  }
  fmt::print("{}\n{:<18} {:>78}\n", std::string(97, '-'), "total",
             fmt::format("{:g}/{}", run.points(), run.max_points()));
  for (const ChapterResult& r : run.chapters) {
    if (quiet_status(r.status)) continue;
    fmt::print("\n== {} ({}): {}\n", r.spec->slug, r.spec->version, r.status);
    if (!r.detail.empty()) fmt::print("{}\n", first_lines(r.detail, 40));
    for (std::size_t i = 0; i < r.failed.size() && i < 4; ++i) {
      fmt::print("  x {}\n{}", r.failed[i].name, indent(first_lines(r.failed[i].message, 8), 6));
    }
    if (r.failed.size() > 4) fmt::print("  ... and {} more failed tests\n", r.failed.size() - 4);
    for (const std::string& group : r.failed_groups) {
      const auto hint = r.spec->hints.find(group);
      if (hint != r.spec->hints.end()) fmt::print("  hint ({}): {}\n", group, hint->second);
    }
  }
  const bool none_ran = std::all_of(run.chapters.begin(), run.chapters.end(),
                                    [](const ChapterResult& r) { return r.status == st::kNoGpu; });
  if (!run.chapters.empty() && none_ran) {
    fmt::print("\nEvery chapter compiled. Grading needs a CUDA device: run this on a machine with a GPU.\n");
  }
  if (run.interrupted) fmt::print("\nInterrupted: the chapters above marked so were not graded.\n");
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
    if (!out) return fmt::format("cannot write {}: cannot create a file in {}", target.string(), target.parent_path().string());
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

std::string report_json(const GradingRun& run) {
  json chapters = json::array();
  for (const ChapterResult& r : run.chapters) {
    json c = {{"slug", r.spec->slug},
              {"version", r.spec->version},
              {"title", r.spec->title},
              {"status", r.status},
              {"detail", bounded_text(r.detail)},
              {"tests_passed", r.tests_passed},
              {"tests_total", r.tests_total},
              {"bandwidth_passed", r.bandwidth_passed},
              {"points", r.points},
              {"max_points", r.max_points()},
              {"required_fraction", r.spec->bandwidth_fraction}};
    auto put = [&](const char* key, const std::optional<double>& v) { c[key] = v ? json(*v) : json(nullptr); };
    put("learner_gbps", r.learner_gbps);
    put("learner_ceiling_gbps", r.learner_ceiling_gbps);
    put("reference_gbps", r.reference_gbps);
    put("reference_ceiling_gbps", r.reference_ceiling_gbps);
    put("bandwidth_ratio", r.bandwidth_ratio);
    c["refusals"] = json::array();
    for (const Refusal& f : r.refusals) c["refusals"].push_back({{"check", f.check}, {"reason", bounded_text(f.reason, 2048)}});
    c["idea"] = json::array();
    for (const IdeaNote& n : r.idea) {
      c["idea"].push_back({{"what", n.what}, {"shown", n.shown}, {"evidence", bounded_text(n.evidence, 1024)}});
    }
    c["failed_tests"] = json::array();
    for (const FailedTest& f : r.failed) {
      c["failed_tests"].push_back({{"name", f.name}, {"message", bounded_text(f.message)}});
    }
    chapters.push_back(c);
  }
  json device = nullptr;
  if (run.device) {
    device = {{"name", run.device->name},
              {"multiprocessors", run.device->multiprocessors},
              {"driver_cuda", run.device->driver_cuda},
              {"runtime_cuda", run.device->runtime_cuda}};
  }
  return dump({{"schema", kReportSchema},
               {"grader_version", WORKBOOK_GRADER_VERSION},
               {"chapters_dir", run.chapters_dir},
               {"seed", run.seed},
               {"date", run.date},
               {"device", device},
               {"graded", run.graded},
               {"interrupted", run.interrupted},
               {"points", run.points()},
               {"max_points", run.max_points()},
               {"chapters", chapters}});
}

std::string gradescope_json(const GradingRun& run) {
  json tests = json::array();
  for (const ChapterResult& r : run.chapters) {
    std::string output = r.status + (r.detail.empty() ? "" : ": " + r.detail);
    for (const FailedTest& f : r.failed) output += "\n" + f.name + "\n" + first_lines(f.message, 8);
    tests.push_back({{"name", r.spec->slug + " (" + r.spec->version + ") " + r.spec->title},
                     {"score", r.points},
                     {"max_score", r.max_points()},
                     {"status", r.status == st::kPassed ? "passed" : "failed"},
                     {"output", bounded_text(output)}});
  }
  return dump({{"score", run.points()}, {"tests", tests}});
}

std::string append_roster(const std::string& path, const GradingRun& run,
                          const workbook::Manifest& manifest) {
  std::string header = "submission,date,seed,points,max_points";
  for (const workbook::ChapterSpec& c : manifest.chapters) header += "," + c.slug;
  std::string existing;
  std::error_code ec;
  if (fs::exists(path, ec) && fs::file_size(path, ec) > 0) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream all;
    all << in.rdbuf();
    existing = all.str();
    const std::string first = existing.substr(0, existing.find('\n'));
    if (first != header) {
      return fmt::format("cannot append to {}: its columns are not this manifest's chapters "
                         "(header '{}'); start a new roster file",
                         path, first.substr(0, 200));
    }
    if (existing.back() != '\n') existing += '\n';
  } else {
    existing = header + "\n";
  }
  std::string name = fs::path(run.chapters_dir).parent_path().filename().string();
  std::replace_if(name.begin(), name.end(), [](char c) { return c == ',' || c == '"' || c == '\n'; }, '_');
  std::string row = fmt::format("{},{},{},{:g},{}", valid_utf8(name), run.date, run.seed, run.points(), run.max_points());
  for (const workbook::ChapterSpec& c : manifest.chapters) {
    const auto it = std::find_if(run.chapters.begin(), run.chapters.end(),
                                 [&](const ChapterResult& r) { return r.spec->slug == c.slug; });
    row += it == run.chapters.end() || it->status == st::kNotGraded ? "," : fmt::format(",{:g}", it->points);
  }
  return write_atomically(path, existing + row + "\n");
}

}  // namespace grader
