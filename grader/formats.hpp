// The per-submission JSON report (schema 4) in the formats course tools read:
// a Markdown page for the student, Gradescope's and PrairieLearn's
// results.json, JUnit XML for CI test reporters, a gradebook CSV and a class
// summary for the terminal. Pure functions of reports: no files, no clock.
// A report may lack any optional field (an older schema, a run cut short);
// every function then writes what it has and never throws on it. All text
// they return is valid UTF-8.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace grader {

//! A Markdown page for the student: the submission, the date, the device, the
//! total; a table of the chapters; then, for each chapter that did not pass,
//! why (its detail, its first failed tests, its hints). A report that was not
//! graded says so at the top and shows no points lost.
std::string feedback_markdown(const nlohmann::json& report);

//! How Gradescope shows the results.
struct GradescopeOptions {
  std::string visibility = "visible";  //!< visible, hidden, after_due_date or after_published
  bool leaderboard = true;             //!< one leaderboard entry per measured chapter (GB/s)
};

//! Whether `v` is one of Gradescope's visibility settings.
bool valid_gradescope_visibility(const std::string& v);

//! Gradescope's autograder results.json: two tests per chapter (correctness
//! and performance), the total, the run time and the leaderboard.
//! Throws std::invalid_argument when `o.visibility` is not valid (a wrong
//! setting must never show hidden tests).
std::string gradescope_results(const nlohmann::json& report, const GradescopeOptions& o = {});

//! PrairieLearn's external grader results.json: `gradable` (false only when
//! the grader could not grade), `score` in [0, 1], one test per chapter.
std::string prairielearn_results(const nlohmann::json& report);

//! JUnit XML for GitLab's, GitHub's and Jenkins' test reporters: one
//! <testsuite> per submission and chapter ("<id>/<slug>"), one <testcase> per
//! test the chapter reported, plus "performance"; a chapter with no tests (it
//! did not compile, crashed, was not graded...) is one testcase "<slug>".
std::string junit_xml(const std::vector<nlohmann::json>& reports);

//! The gradebook, RFC 4180 CSV: "student,<slugs...>,total,max_points,status",
//! one row per report sorted by student. The student is ids[submission id]
//! when the mapping has it, else the submission id. A chapter that was not
//! graded (or is absent) is an empty cell, never a 0.
std::string gradebook_csv(const std::vector<nlohmann::json>& reports, const std::vector<std::string>& slugs,
                          const std::map<std::string, std::string>& ids);

//! Parses a mapping file "submission,student" (that header first; quoted
//! fields allowed). On a malformed line or a submission listed twice: an
//! empty map and, in *error, why and on which line. *error is "" on success.
std::map<std::string, std::string> read_id_mapping(const std::string& csv_text, std::string* error);

//! Plain text for the terminal: per chapter how many submissions passed,
//! failed or could not be graded; the submissions not graded and why (20 at
//! most); how many reports are incomplete.
std::string class_summary(const std::vector<nlohmann::json>& reports, const std::vector<std::string>& slugs);

}  // namespace grader
