// One trial of the implementation under test: guarded buffers for inputs of up to n elements,
// a call on an input, and everything the judge can see go wrong afterwards.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "chapter_env.hpp"
#include "judge/device.hpp"

namespace workbook::judge {

//! What one call produced, and every problem the judge saw.
struct TrialResult {
  std::vector<float> partials;  // block pass: what the launcher wrote
  float total = 0;              // full reduction: *out
  std::string problems;
  //! The sum the judge sees: the partials added in double, or *out.
  double sum() const;
};

class Trial {
 public:
  //! Buffers for inputs of up to `n` elements: room for partials (block pass) or *out and the
  //! workspace the chapter asks for (full).
  explicit Trial(std::size_t n);

  //! The call on `input`, on the subject's stream `stream`; with `launch`, the tuned launcher.
  Call call(const GuardedInput& input, int stream = 0, std::optional<Launch> launch = std::nullopt) const;
  //! Before the call is handed over: poisons the outputs, fingerprints the input (enqueued on the
  //! judge's stream, read with check's wait; the call is ordered after them by
  //! run_calls_after_stream).
  void prepare(const GuardedInput& input);
  //! After it ran: what it wrote, and what went wrong (`result` null when it never ran). One wait
  //! for the judge's stream: begin_check, then end_check.
  TrialResult check(const GuardedInput& input, const remote::CallResult* result, const Outcome& outcome);
  //! check's first half: enqueues the scans of the guards, the input and the output's unwritten
  //! room, and their copy to the host; waits for nothing.
  void begin_check(const GuardedInput& input, const remote::CallResult* result, const Outcome& outcome);
  //! How many outputs end_check reads: a copy of them made after begin_check saves it a wait.
  std::size_t outputs_to_read() const { return pending_.finished ? 0 : pending_.written; }
  //! check's second half, once the stream's work is done or with a wait for it: `outputs` holds
  //! outputs_to_read() floats copied after begin_check (null: they are read here, with the wait).
  TrialResult end_check(const float* outputs = nullptr);
  //! prepare, run alone, check.
  TrialResult run(const GuardedInput& input, std::optional<Launch> launch = std::nullopt);

  GuardedOutput& output() { return out_; }
  //! Its workspace, as a call names it (null for none).
  void* workspace() const { return workspace_.bytes() ? workspace_.data() : nullptr; }
  //! Enqueues, on the judge's stream, the sum the judge makes of the last call's output into *dst.
  void capture_sum(std::size_t count, double* dst) const;

 private:
  GuardedOutput out_;
  GuardedWorkspace workspace_;
  std::unique_ptr<Scans> before_;  // the input's fingerprint before the call
  int before_slot_ = -1;
  struct Pending {  // between begin_check and end_check
    TrialResult result;
    bool finished = true;  // nothing left to read: the call never ran, or what it returned is wrong
    std::unique_ptr<Scans> scans;
    int workspace_slot = -1, input_slot = -1, output_slot = -1;
    std::size_t written = 0;
  } pending_;
};

//! Where Trial::run's time went, summed over every run in this process, for the judge's [timing]
//! lines: the judge's work before the call, the call (handed over and answered), the checks after;
//! and the batches' (run_batch): how many, their calls, their time from the first prepare to the
//! last check.
struct TrialCosts {
  int runs = 0;
  double prepare_s = 0, call_s = 0, check_s = 0;
  int batches = 0, batched_calls = 0;
  double batch_s = 0;
};
const TrialCosts& trial_costs();
//! Counts a batch of `calls` calls, `seconds` from its preparing to its checks, in trial_costs()
//! (run_batch does for its own).
void count_batch(std::size_t calls, double seconds);

//! One call of a batch: a trial's call on an input; with `workspace_from`, on that trial's
//! workspace instead of its own (calls that share one workspace, as one trial's calls do).
struct BatchCall {
  Trial* trial;
  const GuardedInput* input;
  const Trial* workspace_from = nullptr;
  std::optional<Launch> launch = std::nullopt;  // the tuned launcher, with this grid
};
//! What a batch gave: a result per call when its calls all ran (each what Trial::run would have
//! given), and the outcome of the request (an error where they did not all run: then no results).
struct BatchResult {
  std::vector<TrialResult> results;
  Outcome outcome;
};
//! Several tests' calls in one request to the chapter's process, on its first stream one after
//! another, prepared before it and checked after it with one wait: beside other processes each wait
//! for the GPU is a time slice, and a small test is little else. The request breaks nothing
//! (run_batch_after_stream): the caller decides what a failed batch means.
BatchResult run_batch(const std::vector<BatchCall>& calls);
//! Whether a batch's calls all ran; if not, it says so in the log, and where the batch broke the
//! chapter's process, a new one takes its place (restart_after_batch). `which` names the batch.
bool batch_ran(const BatchResult& r, const std::string& which);
//! A call on `input` for each of `launches` in one batch (run_batch), on one workspace as one
//! trial's calls are, each with an output of its own (a launch given: the tuned launcher with that
//! grid): their results, where batches_allowed() and the batch ran. Otherwise none, the log saying
//! why: the test then makes its calls one at a time, as without the batch, and a failure reads as
//! it always did.
std::optional<std::vector<TrialResult>> batch_on_one_workspace(const GuardedInput& input,
                                                               const std::vector<std::optional<Launch>>& launches,
                                                               const std::string& which);

//! Two trials' calls handed over together, on streams 0 and 1 (so they may run at the same time),
//! each checked: what a chapter's two concurrent calls did.
std::pair<TrialResult, TrialResult> run_together(Trial& a, const GuardedInput& input_a, std::optional<Launch> launch_a,
                                                 Trial& b, const GuardedInput& input_b, std::optional<Launch> launch_b);

//! Where a failure happened: "[learner] n = 1000, input offset by 1 floats ..., seed 42".
std::string where(std::size_t n, std::size_t offset = 0);

//! A float's bits, for comparing results bit for bit.
inline std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

}  // namespace workbook::judge
