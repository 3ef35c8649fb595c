#include "trial.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include <cuda_runtime.h>

#include <fmt/format.h>

#include "judge/verify.hpp"
#include "runner/cuda_check.hpp"

namespace workbook::judge {
namespace {

std::size_t workspace_for(std::size_t n) {
  if (!is_full()) return 0;
  std::string why;
  const std::optional<std::size_t> bytes = subject().workspace_bytes(n, &why);
  if (!bytes) throw std::runtime_error("workspace_bytes(" + std::to_string(n) + ") could not be asked: " + why);
  if (*bytes > max_workspace_bytes(n)) {
    throw std::runtime_error(
        fmt::format("workspace_bytes({}) asks for {} bytes; the harness gives at most {} "
                    "(workbook/contract.hpp, max_workspace_bytes)",
                    n, *bytes, max_workspace_bytes(n)));
  }
  return *bytes;
}

using Clock = std::chrono::steady_clock;
double seconds(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

TrialCosts& costs() {
  static TrialCosts c;
  return c;
}

}  // namespace

double TrialResult::sum() const { return partials.empty() ? total : sum_in_double(partials); }

Trial::Trial(std::size_t n) : out_(is_full() ? 1 : partials_capacity(n)), workspace_(workspace_for(n), stream()) {}

Call Trial::call(const GuardedInput& input, int stream, std::optional<Launch> launch) const {
  Call c;
  c.kind = !is_full() ? remote::CallKind::block_pass : launch ? remote::CallKind::tuned : remote::CallKind::reduce;
  c.in = input.data();
  c.n = input.size();
  c.out = out_.data();
  c.capacity = out_.capacity();
  c.workspace = workspace();
  c.stream = stream;
  if (launch) c.launch = *launch;
  return c;
}

void Trial::prepare(const GuardedInput& input) {
  out_.poison(stream());
  before_ = std::make_unique<Scans>(stream());
  before_slot_ = input.fingerprint(*before_);
  before_->fetch();
}

TrialResult Trial::check(const GuardedInput& input, const remote::CallResult* result, const Outcome& outcome) {
  begin_check(input, result, outcome);
  return end_check();
}

void Trial::begin_check(const GuardedInput& input, const remote::CallResult* result, const Outcome& outcome) {
  pending_ = Pending{};
  TrialResult& t = pending_.result;
  if (result && !result->launch_error.empty()) t.problems += "the launch failed: " + result->launch_error + "\n";
  if (!outcome.error.empty()) {
    t.problems += outcome.error + "\n";
    if (outcome.fatal) return;  // nothing more can be asked of the subject
  }
  if (!result) return;
  const std::size_t n = input.size();
  // Every scan of the guards and the input is enqueued first, then read with the output in one
  // wait: beside other processes each wait for the GPU costs a time slice.
  pending_.scans = std::make_unique<Scans>(stream());
  Scans& scans = *pending_.scans;
  pending_.workspace_slot = is_full() ? workspace_.scan_guards(scans) : -1;
  pending_.input_slot = input.fingerprint(scans);
  std::size_t written = 1;
  if (!is_full()) {
    written = result->count;
    if (written > out_.capacity()) {
      t.problems += fmt::format("the launcher returned {} partials; the harness provides room for {}\n", written,
                                out_.capacity());
      return;
    }
    if (n > 0 && written == 0) t.problems += fmt::format("the launcher returned 0 partials for n = {}\n", n);
    if (n == 0 && written != 0) t.problems += fmt::format("for n = 0 the launcher must return 0, not {}\n", written);
  }
  pending_.output_slot = out_.scan_stray_writes(scans, written);
  scans.fetch();
  pending_.written = written;
  pending_.finished = false;
}

TrialResult Trial::end_check(const float* outputs) {
  TrialResult t = std::move(pending_.result);
  if (pending_.finished) {
    pending_ = Pending{};
    return t;
  }
  Scans& scans = *pending_.scans;
  const std::size_t written = pending_.written;
  const auto read = [&](std::size_t count) {
    // Without a copy made already, the download waits for the stream: the scans' results too.
    return outputs ? std::vector<float>(outputs, outputs + count) : out_.download(count, stream());
  };
  if (is_full()) {
    t.total = read(1)[0];
    t.problems += workspace_.explain_overrun(scans, pending_.workspace_slot);
  } else {
    t.partials = read(written);
  }
  t.problems += out_.explain_stray_writes(scans, pending_.output_slot, written);
  if (!before_) throw std::logic_error("Trial::check without prepare");
  if (scans.value(pending_.input_slot) != before_->value(before_slot_)) {  // no wait: the stream's work is done
    t.problems += "the input (or the memory around it) was modified: the input is const\n";
  }
  pending_ = Pending{};
  return t;
}

TrialResult Trial::run(const GuardedInput& input, std::optional<Launch> launch) {
  const auto started = Clock::now();
  prepare(input);
  const auto prepared = Clock::now();
  const Outcome o = run_calls_after_stream({call(input, 0, launch)});
  const auto called = Clock::now();
  TrialResult t = check(input, o.results.empty() ? nullptr : &o.results[0], o);
  TrialCosts& c = costs();
  ++c.runs;
  c.prepare_s += seconds(started, prepared);
  c.call_s += seconds(prepared, called);
  c.check_s += seconds(called, Clock::now());
  return t;
}

const TrialCosts& trial_costs() { return costs(); }

namespace {

//! Pinned host memory for a batch's outputs, kept for the process's life and grown only between
//! batches (when nothing is being copied into it).
float* pinned_floats(std::size_t count) {
  static float* room = nullptr;
  static std::size_t size = 0;
  if (count > size) {
    if (room) WORKBOOK_CUDA_CHECK(cudaFreeHost(room));
    room = nullptr;
    size = 0;
    WORKBOOK_CUDA_CHECK(cudaMallocHost(&room, count * sizeof(float)));
    size = count;
  }
  return room;
}

}  // namespace

BatchResult run_batch(const std::vector<BatchCall>& calls) {
  const auto started = Clock::now();
  BatchResult b;
  std::vector<Call> list;
  for (const BatchCall& c : calls) {
    c.trial->prepare(*c.input);
    list.push_back(c.trial->call(*c.input, 0, c.launch));
    if (c.workspace_from) list.back().workspace = c.workspace_from->workspace();
  }
  b.outcome = run_batch_after_stream(list);
  if (b.outcome.error.empty()) {
    std::size_t total = 0;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      calls[i].trial->begin_check(*calls[i].input, &b.outcome.results[i], b.outcome);
      total += calls[i].trial->outputs_to_read();
    }
    // Every output copied after its scans, then one wait for all of it.
    float* outputs = pinned_floats(std::max<std::size_t>(total, 1));
    std::vector<const float*> at(calls.size());
    std::size_t used = 0;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      const std::size_t count = calls[i].trial->outputs_to_read();
      at[i] = outputs + used;
      if (count) {
        WORKBOOK_CUDA_CHECK(cudaMemcpyAsync(outputs + used, calls[i].trial->output().data(), count * sizeof(float),
                                            cudaMemcpyDeviceToHost, stream()));
      }
      used += count;
    }
    WORKBOOK_CUDA_CHECK(cudaStreamSynchronize(stream()));
    for (std::size_t i = 0; i < calls.size(); ++i) b.results.push_back(calls[i].trial->end_check(at[i]));
  }
  count_batch(calls.size(), seconds(started, Clock::now()));
  return b;
}

void count_batch(std::size_t calls, double seconds) {
  TrialCosts& c = costs();
  ++c.batches;
  c.batched_calls += static_cast<int>(calls);
  c.batch_s += seconds;
}

bool batch_ran(const BatchResult& r, const std::string& which) {
  if (r.outcome.error.empty()) return true;
  fmt::print("[batch] the {} calls failed as a whole; their tests make their calls alone: {}\n", which,
             r.outcome.error);
  if (r.outcome.fatal) restart_after_batch(r.outcome);
  return false;
}

std::optional<std::vector<TrialResult>> batch_on_one_workspace(const GuardedInput& input,
                                                               const std::vector<std::optional<Launch>>& launches,
                                                               const std::string& which) {
  if (!batches_allowed()) return std::nullopt;
  try {
    std::vector<std::unique_ptr<Trial>> trials;
    std::vector<BatchCall> calls;
    for (const std::optional<Launch>& launch : launches) {
      trials.push_back(std::make_unique<Trial>(input.size()));
      calls.push_back({trials.back().get(), &input, trials.front().get(), launch});
    }
    BatchResult b = run_batch(calls);
    if (!batch_ran(b, which)) return std::nullopt;
    return std::move(b.results);
  } catch (const std::exception& e) {
    fmt::print("[batch] not made ({}); the test's calls run one at a time\n", e.what());
    return std::nullopt;
  }
}

std::pair<TrialResult, TrialResult> run_together(Trial& a, const GuardedInput& input_a, std::optional<Launch> launch_a,
                                                 Trial& b, const GuardedInput& input_b,
                                                 std::optional<Launch> launch_b) {
  a.prepare(input_a);
  b.prepare(input_b);
  const Outcome o = run_calls_after_stream({a.call(input_a, 0, launch_a), b.call(input_b, 1, launch_b)});
  const bool ran = o.results.size() == 2;
  return {a.check(input_a, ran ? &o.results[0] : nullptr, o), b.check(input_b, ran ? &o.results[1] : nullptr, o)};
}

void Trial::capture_sum(std::size_t count, double* dst) const {
  sum_partials_into(out_.data(), is_full() ? 1 : std::min(count, out_.capacity()), dst, stream());
}

std::string where(std::size_t n, std::size_t offset) {
  return fmt::format("[{}] n = {}{}, seed {}", subject_name(), n,
                     offset ? fmt::format(", input offset by {} floats from a 16-byte boundary", offset) : "", seed());
}

}  // namespace workbook::judge
