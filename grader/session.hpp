// The grading build, shared by every submission of a run: configured once,
// with the harness and the references built once, and slots into which each
// submission's kernel.cu files are copied and compiled.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "build.hpp"
#include "judge/manifest.hpp"
#include "options.hpp"
#include "result.hpp"
#include "static_checks.hpp"
#include "timeline.hpp"

namespace grader {

//! The requirement of the chapter that the grading build alone lacks, before any GPU is asked: NCCL,
//! for the chapter over several GPUs (graded as skipped, its reference never built); met() when the
//! build has targets for it. Every device requirement is taken as met; the GPU half (tester.cpp)
//! checks those.
workbook::Unmet unmet_in_build(const workbook::ChapterSpec& spec);

//! What `here` lacks when the grading build has no NCCL, and how to get it.
inline constexpr const char* kBuildWithoutNccl =
    "this build has no NCCL (pip install nvidia-nccl-cu13, then grade again)";

//! Marks the chapter skipped: it needs `unmet` (the manifest's `requires`), which `here` lacks; its
//! points do not count.
void skip(ChapterResult& r, const workbook::Unmet& unmet, const std::string& here);

class Session {
 public:
  Session(const Options& opt, const workbook::Manifest& manifest, std::vector<const workbook::ChapterSpec*> chosen);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  //! Takes the build folder (waiting while another grader holds it), configures
  //! it with at least `slots` slots for `architectures`, finds the tools of the
  //! static checks, builds the harness and the chosen chapters' references, and
  //! lists the tests. False, having said why, when grading cannot start.
  bool prepare(int slots, const std::string& architectures);

  //! The static checks' tools with the flags the build compiles `spec` with;
  //! scratch files in `work_dir`.
  Toolchain tools_for(const workbook::ChapterSpec& spec, const std::string& work_dir) const;
  const Rules& rules() const { return rules_; }
  Build& build() { return build_; }

  std::string slot_dir(int slot) const;
  //! The runner built from a slot's copy of a chapter: the process that holds the learner's code.
  std::string slot_runner(int slot, const std::string& slug) const;
  static std::string slot_object_target(int slot, const std::string& slug);
  static std::string slot_runner_target(int slot, const std::string& slug);
  //! The host assembler's listing of a slot's copy of a chapter (the inline assembly check).
  std::string slot_listing(int slot, const std::string& slug) const;
  std::string reference_runner(const std::string& slug) const;
  //! The judge (the tests, with no chapter linked in) and the sandbox helper.
  std::string judge() const;
  std::string sandbox_helper() const;

  //! The tests a chapter's process must report, listed from that chapter's reference (a
  //! chapter with a tuned launcher has more): those run beside other test processes, those run
  //! with the GPU to themselves (the timed test, the largest input), and those that also run
  //! under compute-sanitizer. `slug` is one of the chosen chapters.
  const std::vector<std::string>& shared_tests(const std::string& slug) const { return tests_.at(slug).shared; }
  const std::vector<std::string>& alone_tests(const std::string& slug) const { return tests_.at(slug).alone; }
  const std::vector<std::string>& sanitized_tests(const std::string& slug) const { return tests_.at(slug).sanitized; }

  const std::vector<const workbook::ChapterSpec*>& chosen() const { return chosen_; }
  const Options& options() const { return opt_; }
  //! Every process of the run, with its waits (--timeline).
  Timeline& timeline() { return timeline_; }
  int limit(const workbook::ChapterSpec& spec) const;

 private:
  bool lock();
  bool find_tools();

  const Options& opt_;
  const workbook::Manifest& manifest_;
  std::vector<const workbook::ChapterSpec*> chosen_;
  Build build_;
  int lock_fd_ = -1;
  Toolchain tools_;
  Timeline timeline_;
  Rules rules_;
  struct TestLists {
    std::vector<std::string> shared, alone, sanitized;
  };
  bool list_chapter_tests(const std::string& slug);
  std::vector<std::string> arch_flags_;
  std::map<std::string, TestLists> tests_;  // by chapter slug
};

//! Tests as a GoogleTest filter ("a:b:c").
std::string gtest_filter(const std::vector<std::string>& tests);

//! The sanitized tests as a GoogleTest filter.
std::string sanitizer_filter();

//! A tool from the CUDA toolkit's bin directory, /usr/local/cuda/bin or PATH; "" if none.
std::string find_tool(const std::string& name);

}  // namespace grader
