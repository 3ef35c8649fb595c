// A grading run: one submission (a chapters/ tree) or a class (a folder of
// submissions), built once, compiled on the CPU while the GPUs test.
#pragma once

#include "options.hpp"
#include "workbook/manifest.hpp"

namespace grader {

//! Exit statuses of a grading run.
inline constexpr int kAllPassed = 0;
inline constexpr int kSomeFailed = 1;
inline constexpr int kCannotGrade = 2;  // a usage error, a build of the grader's own parts, a report not written
inline constexpr int kNotGraded = 3;    // no GPU: nothing was tested, and every chapter built and passed the checks
inline constexpr int kNotGradedFailed = 4;  // no GPU, and some chapter does not compile, was refused or is missing

//! Grades opt.chapters_dir, or every submission of opt.submissions_dir; returns
//! the exit status (128 + signal when interrupted).
int grade(const Options& opt, const workbook::Manifest& manifest);

}  // namespace grader
