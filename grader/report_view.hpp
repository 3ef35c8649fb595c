// A JSON report as the course formats read it (formats.hpp): its chapters with what each status
// means for a format, and the text every format shares (a chapter's correctness and performance in
// words, its bandwidth figures). Internal to the formats' files.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "report_document.hpp"

namespace grader::view {

// How much text a format keeps.
inline constexpr std::size_t kTestOutputBytes = 16 * 1024;  // one Gradescope or PrairieLearn test's output
inline constexpr std::size_t kRunOutputBytes = 64 * 1024;   // the output about the whole submission
inline constexpr std::size_t kMessageBytes = 4 * 1024;      // one failed test's message on the student's page
inline constexpr std::size_t kFailedShown = 3;              // failed tests shown per chapter on that page
inline constexpr std::size_t kNotGradedListed = 20;         // submissions the class summary names

// What a chapter's status means for a format, from the one table (status.hpp,
// Status::outcome): passed; failed (the learner's code is wrong); an error (the run of the code went
// wrong); or not graded (skipped for a missing GPU feature, no GPU, or never reached).
enum class Kind { passed, failed, error, not_graded };

Kind kind_of(const Status& status);

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

Report report_of(const nlohmann::json& r);
bool starts_with(std::string_view s, std::string_view prefix);
std::string not_graded_line(const Report& r);
std::string points_text(double v);
//! "95.7% of the reference (80% needed)", as far as the report has the numbers.
std::string bandwidth_text(const Chapter& c);
//! Why performance was not judged, or "" when it was.
std::string unmeasured_reason(const Chapter& c);
//! The chapter's correctness in plain text: status, detail, failed tests, hints.
std::string correctness_report(const Chapter& c, std::size_t max_failed);
std::string performance_report(const Chapter& c);

}  // namespace grader::view
