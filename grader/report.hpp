// What the grader writes for one submission: the table on the terminal (terminal_table.cpp), the
// JSON report, and the formats made from it (formats.hpp) (report.cpp).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats.hpp"
#include "judge/manifest.hpp"
#include "options.hpp"
#include "report_document.hpp"
#include "result.hpp"

namespace grader {

void print_table(const GradingRun& run);

//! What the instructor may want to know and the grade leaves out: the chapter's
//! idea not seen in the machine code.
void print_idea_notes(const GradingRun& run);

//! Writes `text` to `path` through a temporary file in the same directory and
//! a rename, so a reader never sees half a report. "" on success, else why not.
std::string write_atomically(const std::string& path, const std::string& text);

//! The JSON report (schema kReportSchema, report_document.hpp): the record every other format is
//! made from.
nlohmann::json report_document(const GradingRun& run);

//! Writes each report `paths` asks for (the JSON report first); returns what
//! could not be written. With `announce`, prints where each went.
std::vector<std::string> write_reports(const GradingRun& run, const ReportPaths& paths,
                                       const GradescopeOptions& gradescope, bool announce);

}  // namespace grader
