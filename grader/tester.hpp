// One GPU's share of the grading: the references measured on it, and each built chapter's
// tests, several processes at once, with every timed run alone on the GPU (timing_gate.hpp).
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpu.hpp"
#include "judge/ceiling_shape.hpp"
#include "pool.hpp"
#include "result.hpp"
#include "run.hpp"
#include "session.hpp"
#include "timing_gate.hpp"

namespace grader {

//! The tests a chapter's one judge must report before its tools' runs: the shared ones, and the timed
//! ones (`alone`) once it began them: it was granted the GPU alone, or reported one of them (a timed
//! test that fails before its timing, e.g. for want of device memory, never asks for the GPU).
std::vector<std::string> tests_to_report(const std::vector<std::string>& shared, const std::vector<std::string>& alone,
                                         bool granted_alone, const TestRun& so_far);

//! Whether a chapter's first run is no verdict, and it is tested again with the GPU alone: a test
//! starved of device memory another process held, out of time while others shared the GPU, or the
//! judge's own CUDA context broken (never the chapter's code, which runs in a process of its own).
bool test_again_alone(const ChapterResult& r);
//! What the report adds to the detail of a chapter tested again alone (`again`) after `first`.
std::string retest_note(const ChapterResult& first, const ChapterResult& again);

class GpuTester {
 public:
  //! `timed`: how the timed runs are batched (timing_gate.hpp).
  GpuTester(Session& session, Gpu gpu, TimingGate::Policy timed)
      : session_(session), gpu_(std::move(gpu)), gate_(timed) {}

  //! Measures each chosen chapter's reference, alone on the GPU; false if interrupted.
  bool measure_references(const std::string& log_dir);

  //! Tests a built chapter (its runner, session.slot_runner) and scores it. Several
  //! chapters may be tested at once from different threads. `place`, held when called, is given
  //! back once the chapter's tests are done and only its tools' runs are left (taken again for a
  //! retest), so that the next chapter's tests begin beside those runs.
  void test_chapter(const std::string& submission, const std::string& runner, const std::string& log_dir,
                    const std::string& slot_dir, ChapterResult& r, Place& place);

  const Gpu& gpu() const { return gpu_; }

 private:
  //! One run of a chapter's processes: whose, where its files are, and how it holds the GPU.
  struct Run {
    const std::string& submission;
    const std::string& runner;
    const std::string& log_dir;
    const std::string& slot_dir;
    Place& place;             //!< its place among the chapters in their tests
    bool alone_only = false;  //!< every process of it alone on the GPU: a retest (test_again_alone)
  };
  //! With --separate-judges, a judge for the tests that may share the GPU (alone: false), or for
  //! those that need it alone (true).
  void run_part(const Run& run, ChapterResult& r, bool alone);
  //! Every part in one judge (the default; --separate-judges runs run_part and sanitize): the shared tests beside
  //! others, then, once the judge asks and every other test process on the GPU has finished, the timed tests alone,
  //! then (if sanitizing) each tool's run beside others, each granted only while nothing has failed.
  void run_in_one_judge(const Run& run, ChapterResult& r);
  void sanitize(const Run& run, ChapterResult& r);
  bool judge_sanitizer_run(const TestRun& t, const std::string& log, const std::string& slot_dir, ChapterResult& r);
  //! The judge's command line for `spec`'s tests in `filter`, the chapter's code in `runner`
  //! (`subject`: learner or reference), started by `wrap` (a tool) if given.
  std::vector<std::string> judge_command(const workbook::ChapterSpec& spec, const std::string& subject,
                                         const std::string& runner, const std::string& filter,
                                         const std::vector<std::string>& wrap = {}) const;
  std::map<std::string, std::string> env(const workbook::ChapterSpec& spec) const;
  workbook::Unmet unmet(const workbook::ChapterSpec& spec) const;

  Session& session_;
  Gpu gpu_;
  TimingGate gate_;
  //! What a chapter's reference measured on this GPU (measure_references), by slug.
  struct ReferenceBandwidth {
    std::optional<double> gbps, ceiling_gbps;
    workbook::CeilingShape ceiling_shape;  // passed on to the learner's judge (names::kCeilingShapeFlag)
  };
  std::map<std::string, ReferenceBandwidth> reference_;
};

}  // namespace grader
