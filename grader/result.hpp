// What grading found: per chapter, and for the whole run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "judge/channel.hpp"
#include "judge/manifest.hpp"
#include "judge/names.hpp"
#include "static_checks.hpp"
#include "status.hpp"

namespace grader {

struct FailedTest {
  std::string name, message;
};

struct TestOutcome {
  std::string name;
  workbook::channel::Result result = workbook::channel::Result::failed;
};

struct ChapterResult {
  const workbook::ChapterSpec* spec = nullptr;
  Status status;
  std::string detail;  // one paragraph: why
  std::vector<Refusal> refusals;
  std::vector<IdeaNote> idea;
  int tests_passed = 0, tests_total = 0;
  std::vector<TestOutcome> tests;  // every test that reported, the sanitizer runs included
  std::vector<FailedTest> failed;
  std::vector<std::string> failed_groups;
  //! The learner's and the reference's GB/s at 2^27, each with the streaming-read
  //! ceiling measured in its own process.
  std::optional<double> learner_gbps, learner_ceiling_gbps, reference_gbps, reference_ceiling_gbps;
  //! (learner / its ceiling) / (reference / its ceiling): clock drift between the two
  //! processes cancels.
  std::optional<double> bandwidth_ratio;
  bool bandwidth_passed = false;
  double points = 0;
  double seconds = 0;  // testing it on the GPU
  //! Where its code ran, as the judge says ("in a process of its own, sandboxed (...)"), and
  //! whether the sandbox contained it.
  std::string isolation;
  bool sandboxed = false;
  //! What its process printed, and how much of that the log kept (a test process's log is capped).
  std::size_t output_bytes = 0, output_kept = 0;
  //! A test failed for want of device memory another process held (the judge says so), ran out
  //! of time while other test processes shared the GPU (crowded), or the judge's own CUDA context
  //! broke (judge_broke: the chapter's code runs in a process of its own and cannot reach it); the
  //! chapter is then tested again alone on the GPU (tested_alone), and graded by that run.
  bool starved = false, crowded = false, judge_broke = false, tested_alone = false;
  bool correct() const { return tests_total > 0 && tests_passed == tests_total; }
  //! A chapter skipped for a feature the GPU lacks counts for nothing, either way.
  int max_points() const {
    return status.code() == Status::skipped ? 0 : spec->correctness_points + spec->performance_points;
  }
};

struct DeviceSummary {
  std::string name;
  int multiprocessors = 0;
  std::string driver_cuda, runtime_cuda;
  int compute_capability = 0;  // 90 for sm_90
};

struct GradingRun {
  std::string id, source, fingerprint;  // the submission (id: its folder-safe name)
  std::string name;                     // its name as given, for what people read
  std::string chapters_dir, date;
  std::uint64_t seed = 0;
  std::optional<DeviceSummary> device;
  bool graded = false;            // a GPU was there to run tests on
  std::string not_graded_reason;  // why not, when not
  bool interrupted = false;       // SIGINT or SIGTERM ended it early
  bool sanitized = true;          // the compute-sanitizer runs were part of it
  double seconds = 0;
  std::vector<ChapterResult> chapters;
  //! Every chapter asked for has its final status: a rerun may keep this report.
  bool complete() const;
  //! Where the chapters' code ran, once for the run: the sandbox's summary, "not sandboxed: ..."
  //! naming a chapter that was not, or "" when nothing ran.
  std::string isolation() const;
  double points() const;
  int max_points() const;
};

}  // namespace grader
