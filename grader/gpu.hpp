// One GPU's share of the grading: the references measured on it, and each
// built chapter's tests, several processes at once, with every timed run alone
// on the GPU.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "result.hpp"
#include "session.hpp"

namespace grader {

//! Many test processes may share a GPU; a timed run has it to itself. Timed runs
//! are served in batches: each batch must first wait for the shared processes to
//! drain, which takes seconds, so the gate lets shared work go on until `batch`
//! timed runs wait (or the first of them has waited `patience_s`, or nothing shared
//! runs), then stops new shared work and runs every waiting timed run, one after
//! the other, before shared work resumes.
class TimingGate {
 public:
  explicit TimingGate(int batch = 1, double patience_s = 20) : batch_(batch), patience_s_(patience_s) {}
  void lock_shared();
  void unlock_shared();
  void lock();
  void unlock();

 private:
  bool draining() const;  // with m_ held: timed runs go next
  std::mutex m_;
  std::condition_variable cv_;
  const int batch_;
  const double patience_s_;
  int shared_ = 0, waiting_ = 0;
  bool exclusive_ = false, serving_ = false;  // serving_: a batch is being run
  std::chrono::steady_clock::time_point first_wait_{};
};

struct Gpu {
  int index = -1;            // as the grader's CUDA runtime numbers the visible GPUs
  std::string visible;       // CUDA_VISIBLE_DEVICES for its test processes
  DeviceSummary summary;
  //! The compute capability that decides which chapters it skips for their `requires`: its
  //! own, or lower with WORKBOOK_COMPUTE_CAPABILITY=80 (the maintainers' check of that path on
  //! a newer GPU). The build is always for its real architecture.
  int requirement_cc = 0;
};

//! The GPUs to test on, as the grader's runtime sees them (`wanted`: indices,
//! empty for all), each pinned for its test processes; empty, with `why`, when
//! there is none.
std::vector<Gpu> find_gpus(const std::vector<int>& wanted, std::string* why);

//! The CUDA architectures to build for (CMake's list): the GPUs' own, else
//! the grader's build's.
std::string architectures(const std::vector<Gpu>& gpus);

class GpuTester {
 public:
  //! `jobs`: the test processes that run at once on this GPU; timed runs wait for half of them.
  GpuTester(Session& session, Gpu gpu, int jobs = 1)
      : session_(session), gpu_(std::move(gpu)), gate_(std::max(1, jobs / 2)) {}

  //! Measures each chosen chapter's reference, alone on the GPU; false if interrupted.
  bool measure_references(const std::string& log_dir);

  //! Tests a built chapter (its runner, session.slot_runner) and scores it. Several
  //! chapters may be tested at once from different threads.
  void test_chapter(const std::string& submission, const std::string& runner, const std::string& log_dir,
                    const std::string& slot_dir, ChapterResult& r);

  const Gpu& gpu() const { return gpu_; }

 private:
  //! The tests that may share the GPU, then (if they pass) those that need it alone.
  void run_shared(const std::string& submission, const std::string& runner, const std::string& log_dir,
                  ChapterResult& r);
  void run_alone(const std::string& submission, const std::string& runner, const std::string& log_dir,
                 ChapterResult& r);
  void sanitize(const std::string& submission, const std::string& runner, const std::string& log_dir,
                const std::string& slot_dir, ChapterResult& r);
  //! The judge's command line for `spec`'s tests in `filter`, the chapter's code in `runner`
  //! (`subject`: learner or reference), started by `wrap` (a tool) if given.
  std::vector<std::string> judge_command(const workbook::ChapterSpec& spec, const std::string& subject,
                                         const std::string& runner, const std::string& filter,
                                         const std::vector<std::string>& wrap = {}) const;
  std::map<std::string, std::string> env() const;
  std::string unmet(const workbook::ChapterSpec& spec) const;

  Session& session_;
  Gpu gpu_;
  TimingGate gate_;
  std::map<std::string, std::pair<std::optional<double>, std::optional<double>>> reference_;
};

//! Orders the failures, decides the chapter's status and points from its
//! tests and bandwidth.
void score(ChapterResult& r);

}  // namespace grader
