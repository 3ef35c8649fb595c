// The JSON report of one submission as a type. report.cpp fills one from a grading run and writes
// it with to_json; the formats (formats.cpp), the class merge (merge.cpp) and the check for a
// report to keep (submissions.cpp) read it back with from_json. Reading never throws on the
// report's shape: a missing, null or mistyped field gets its fallback (a report of an older
// schema, a run cut short, a file edited by hand), and `schema` says which layout it claims.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "judge/channel.hpp"
#include "status.hpp"

namespace grader {

//! The version of the JSON report's layout, in every report.
constexpr int kReportSchema = 4;

struct ReportDevice {
  std::string name, driver_cuda, runtime_cuda;
  std::optional<int> multiprocessors;
  int compute_capability = 0;
};

struct ReportTest {
  std::string name;
  std::optional<workbook::channel::Result> result;  // none: a word this grader does not know
};
struct ReportFailure {
  std::string name, message;
};
struct ReportHint {
  std::string group, text;
};
struct ReportRefusal {
  std::string check, reason;
};
struct ReportIdea {
  std::string what;
  bool shown = false;
  std::string evidence;
};

struct ChapterReport {
  std::string slug = "(unnamed)", version, title;
  Status status;
  std::string detail;
  int tests_passed = 0, tests_total = 0;
  bool correctness_passed = false, bandwidth_passed = false;
  double points = 0, max_points = 0;
  double correctness_points = 0, max_correctness = 0, performance_points = 0, max_performance = 0;
  std::optional<double> required_fraction, learner_gbps, learner_ceiling_gbps, reference_gbps, reference_ceiling_gbps,
      bandwidth_ratio;
  double seconds = 0;
  std::string isolation;
  bool sandboxed = false;
  std::uint64_t output_bytes = 0, output_kept = 0;
  std::string output_note;  // "" when the log kept everything
  std::vector<ReportRefusal> refusals;
  std::vector<ReportIdea> idea;
  std::vector<ReportTest> tests;
  std::vector<ReportFailure> failed;
  std::vector<ReportHint> hints;
};

struct ReportDocument {
  int schema = 0;  // 0: the report did not say
  std::string grader_version;
  std::string id = "(no id)", name, source, chapters_dir, fingerprint;  // name: as given; id: folder-safe
  std::uint64_t seed = 0;
  std::string date;
  std::optional<double> seconds;
  std::optional<ReportDevice> device;  // none: graded without a GPU, or not said
  bool graded = true;                  // a report that does not say it was not graded counts as graded
  std::string not_graded_reason;
  bool interrupted = false, sanitized = false;
  std::string isolation;
  bool complete = true;
  double points = 0, max_points = 0;
  std::vector<ChapterReport> chapters;
};

void to_json(nlohmann::json& j, const ChapterReport& c);
void from_json(const nlohmann::json& j, ChapterReport& c);
void to_json(nlohmann::json& j, const ReportDocument& r);
void from_json(const nlohmann::json& j, ReportDocument& r);

//! A JSON document as the grader writes it to a file: indented, invalid UTF-8 replaced.
std::string json_text(const nlohmann::json& doc);

}  // namespace grader
