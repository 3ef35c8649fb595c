// A grading run: one submission (a chapters/ tree) or a class (a folder of
// submissions), built once, compiled on the CPU while the GPUs test.
#pragma once

#include <map>
#include <string>

#include "exit_status.hpp"
#include "judge/manifest.hpp"
#include "options.hpp"
#include "status.hpp"

namespace grader {

//! Grades opt.chapters_dir, or every submission of opt.submissions_dir; returns
//! the exit status (exit_status.hpp; interrupted_code(signal) when interrupted).
//! `statuses`, if given, gets each chapter's status (status.hpp) of a single
//! submission by its slug: what watch mode shows after a save.
int grade(const Options& opt, const workbook::Manifest& manifest, std::map<std::string, Status>* statuses = nullptr);

}  // namespace grader
