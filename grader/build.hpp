// Building a chapters/ tree: configuring the grader's own build of it, building
// targets, and the compiler's errors in a form a student can read.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "process.hpp"

namespace grader {

//! Where, in a build tree, CMake puts the judge's binaries (the judge, every chapter's runners and
//! the grading slots: grader/judge/CMakeLists.txt) and the sandbox helper (grader/sandbox/).
inline constexpr const char* kJudgeBinaryDir = "grader/judge";
inline constexpr const char* kSandboxBinaryDir = "grader/sandbox";

//! What the grader's own build found that a grading build must have too (CMake cache variable,
//! value): bubblewrap and libseccomp (the sandbox's parts) and NCCL, each only where found. A grading
//! build is configured with them, and configured again where it lacks one (it was configured before
//! the part was installed, and a configured build never looks again).
std::vector<std::pair<std::string, std::string>> found_by_own_build();

class Build {
 public:
  Build(std::string build_dir, double timeout_s);

  //! Configures the grading build: the harness, the references and `slots`
  //! learner builds whose sources are in `slots_dir`, for the CUDA
  //! `architectures` (CMake's list: "90-real", "80-real;90"). False with the
  //! log's tail in `why` on failure.
  bool configure(const std::string& architectures, int slots, const std::string& slots_dir, bool device_debug,
                 std::string* why);

  //! Builds `targets` in one call (they build in parallel), at a lower CPU
  //! priority than the tests; with `keep_going` past targets that fail.
  ProcessResult build(const std::vector<std::string>& targets, const std::string& log_path, bool keep_going = false);

  //! Where target `target`'s object file of kernel.cu is once built, or "".
  std::string object_of(const std::string& target) const;

  //! A value of the build's CMake cache, "" if unset.
  std::string cached(const std::string& variable) const;

  //! Whether the build's cache holds each of these values (CMake cache variable, value).
  bool caches(const std::vector<std::pair<std::string, std::string>>& values) const;

  std::string log(const std::string& name) const;
  const std::string& dir() const { return build_dir_; }

 private:
  std::string build_dir_;
  double timeout_s_;
};

//! The compiler's errors from a build log as nvcc prints them: each error's
//! `file(line): error: ...` line, the source line and the caret, for the first
//! `max_errors` errors, with `strip_prefix` (the folder the chapter folders are
//! in) cut from paths. Falls back to the log's last lines when no diagnostic is
//! recognized.
std::string compile_errors(const std::string& log_path, const std::string& strip_prefix, std::size_t max_errors = 5);

}  // namespace grader
