// One grading run: prepare the build once, then build, check and test each
// chapter in turn, each in processes of its own.
#pragma once

#include "options.hpp"
#include "workbook/manifest.hpp"

namespace grader {

//! Grades opt.chapters_dir; returns the exit status (0 all graded chapters
//! passed or no GPU, 1 some failed, 2 grading could not start or a report
//! could not be written, 128 + signal when interrupted).
int grade(const Options& opt, const workbook::Manifest& manifest);

}  // namespace grader
