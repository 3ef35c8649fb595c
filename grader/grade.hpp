// A grading run: one submission (a chapters/ tree) or a class (a folder of
// submissions), built once, compiled on the CPU while the GPUs test.
#pragma once

#include "exit_status.hpp"
#include "options.hpp"
#include "workbook/manifest.hpp"

namespace grader {

//! Grades opt.chapters_dir, or every submission of opt.submissions_dir; returns
//! the exit status (exit_status.hpp; interrupted_code(signal) when interrupted).
int grade(const Options& opt, const workbook::Manifest& manifest);

}  // namespace grader
