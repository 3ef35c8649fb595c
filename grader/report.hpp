// What the grader writes: the table on the terminal, the JSON report,
// Gradescope's results.json and a class roster row.
#pragma once

#include <string>
#include <vector>

#include "result.hpp"
#include "workbook/manifest.hpp"

namespace grader {

//! The version of the JSON report's layout, in every report.
constexpr int kReportSchema = 2;

void print_table(const GradingRun& run);

//! Writes `text` to `path` through a temporary file in the same directory and
//! a rename, so a reader never sees half a report. "" on success, else why not.
std::string write_atomically(const std::string& path, const std::string& text);

std::string report_json(const GradingRun& run);
std::string gradescope_json(const GradingRun& run);

//! Appends the run's row to the roster CSV at `path` (header: one column per
//! manifest chapter, written when the file is new; a file with another header
//! is an error, never a misaligned row). "" on success, else why not.
std::string append_roster(const std::string& path, const GradingRun& run,
                          const workbook::Manifest& manifest);

}  // namespace grader
