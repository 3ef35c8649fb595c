// Building a chapters/ tree: configuring the grader's own build of it, building
// targets, and the compiler's errors in a form a student can read.
#pragma once

#include <string>
#include <vector>

#include "process.hpp"

namespace grader {

class Build {
 public:
  Build(std::string build_dir, std::string chapters_dir, double timeout_s);

  //! Configures the build of the chapter tests for `chapters_dir`; false with
  //! the log's tail in `why` on failure.
  bool configure(std::string* why);

  //! Builds `targets` (one ninja call, so they build in parallel).
  ProcessResult build(const std::vector<std::string>& targets, const std::string& log_name);

  //! Where the learner's object file of chapter `slug` is once built, or "".
  std::string learner_object(const std::string& slug) const;

  std::string log(const std::string& name) const;
  const std::string& dir() const { return build_dir_; }

 private:
  std::string build_dir_, chapters_dir_;
  double timeout_s_;
};

//! The compiler's errors from a build log as nvcc prints them: each error's
//! `file(line): error: ...` line, the source line and the caret, for the first
//! `max_errors` errors, with the submission's path shortened. Falls back to
//! the log's last lines when no diagnostic is recognized.
std::string compile_errors(const std::string& log_path, const std::string& chapters_dir,
                           std::size_t max_errors = 5);

}  // namespace grader
