// The grader's exit statuses: one list for every command (grading, the student's commands, the
// class merge, debug), as `grader --help` and the README give them.
#pragma once

namespace grader {

enum class Exit : int {
  ok = 0,                 // every chapter passed; or the command did what it was asked
  some_failed = 1,        // some chapter failed (on a GPU), or the chapter to debug does not build
  cannot = 2,             // a usage error, or something the grader could not do (its own build, a report)
  not_graded = 3,         // no GPU: nothing tested, and every chapter built and passed the checks
  not_graded_failed = 4,  // no GPU, and some chapter does not compile, was refused or is missing
};

constexpr int code(Exit e) { return static_cast<int>(e); }

//! A run ended by signal `sig` exits as a shell reports it: 128 + sig (130 for Ctrl-C).
constexpr int interrupted_code(int sig) { return 128 + sig; }

}  // namespace grader
