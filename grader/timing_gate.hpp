// The timing gate: many test processes may share a GPU, and a timed run has it to itself.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace grader {

//! The longest a timed run waits for its batch to fill while other tests run (--timed-patience).
inline constexpr double kTimedPatienceS = 20;

//! Many test processes may share a GPU; a timed run has it to itself. Timed runs
//! are served in batches: each batch must first wait for the shared processes to
//! drain, which takes seconds, so the gate lets shared work go on until `batch`
//! timed runs wait (or the first of them has waited `patience_s`, or nothing shared
//! runs), then stops new shared work and runs every waiting timed run, one after
//! the other, before shared work resumes. The grader's default batch is 1 (each timed run
//! drains the shared work at once): a timed run waiting for its batch holds its test slot idle.
class TimingGate {
 public:
  struct Policy {
    int batch = 1;                        // timed runs served together
    double patience_s = kTimedPatienceS;  // the longest the first of them waits for the batch
  };
  TimingGate(int batch, double patience_s) : batch_(batch), patience_s_(patience_s) {}
  explicit TimingGate(Policy p) : TimingGate(p.batch, p.patience_s) {}
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

}  // namespace grader
