// The student's side of the grader: where am I (status), what is there (list),
// a hint at a time (hint), a fresh stub (reset), grading on every save
// (watch), and one test under a debugger or compute-sanitizer (debug).
#pragma once

#include <string>

#include "judge/manifest.hpp"
#include "options.hpp"

namespace grader {

int show_status(const Options& opt, const workbook::Manifest& manifest);
int show_list(const workbook::Manifest& manifest);
int show_hint(const Options& opt, const workbook::Manifest& manifest, const std::string& slug, bool all);
int reset_chapter(const Options& opt, const workbook::Manifest& manifest, const std::string& slug, bool yes);

//! Grades the chapter (or the first one not passed), then again whenever its
//! kernel.cu is saved, until Ctrl-C.
int watch(Options opt, const workbook::Manifest& manifest, const std::string& slug);

struct DebugOptions {
  std::string test;               // a test name or GoogleTest filter; "" the chapter's first failing test
  std::string tool = "memcheck";  // memcheck, racecheck, synccheck, initcheck or cuda-gdb
  bool device_debug = false;      // -G (no optimization) instead of -lineinfo
};

//! Builds the chapter with device line information and runs one test under
//! compute-sanitizer or cuda-gdb, so that findings name kernel.cu:LINE.
int debug_chapter(const Options& opt, const workbook::Manifest& manifest, const std::string& slug,
                  const DebugOptions& debug);

//! The first chapter of the manifest whose last result is not "passed".
std::string next_chapter(const std::string& chapters_dir, const workbook::Manifest& manifest);

}  // namespace grader
