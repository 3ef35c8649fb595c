#include "trial.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "judge/verify.hpp"

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

}  // namespace

double TrialResult::sum() const { return partials.empty() ? total : sum_in_double(partials); }

Trial::Trial(std::size_t n) : out_(is_full() ? 1 : partials_capacity(n)), workspace_(workspace_for(n)) {}

Call Trial::call(const GuardedInput& input, int stream, std::optional<Launch> launch) const {
  Call c;
  c.kind = !is_full() ? remote::CallKind::block_pass : launch ? remote::CallKind::tuned : remote::CallKind::reduce;
  c.in = input.data();
  c.n = input.size();
  c.out = out_.data();
  c.capacity = out_.capacity();
  c.workspace = workspace_.bytes() ? workspace_.data() : nullptr;
  c.stream = stream;
  if (launch) c.launch = *launch;
  return c;
}

void Trial::prepare(const GuardedInput& input) {
  out_.poison(stream());
  fingerprint_ = input.fingerprint(stream());  // waits for the judge's stream
}

TrialResult Trial::check(const GuardedInput& input, const remote::CallResult* result, const Outcome& outcome) {
  TrialResult t;
  if (result && !result->launch_error.empty()) t.problems += "the launch failed: " + result->launch_error + "\n";
  if (!outcome.error.empty()) {
    t.problems += outcome.error + "\n";
    if (outcome.fatal) return t;  // nothing more can be asked of the subject
  }
  if (!result) return t;
  const std::size_t n = input.size();
  // Every scan of the guards and the input is enqueued first, then read with the output in one
  // wait: beside other processes each wait for the GPU costs a time slice.
  Scans scans(stream());
  const int workspace_slot = is_full() ? workspace_.scan_guards(scans) : -1;
  const int input_slot = input.fingerprint(scans);
  std::size_t written = 1;
  if (!is_full()) {
    written = result->count;
    if (written > out_.capacity()) {
      t.problems += fmt::format("the launcher returned {} partials; the harness provides room for {}\n", written,
                                out_.capacity());
      return t;
    }
    if (n > 0 && written == 0) t.problems += fmt::format("the launcher returned 0 partials for n = {}\n", n);
    if (n == 0 && written != 0) t.problems += fmt::format("for n = 0 the launcher must return 0, not {}\n", written);
  }
  const int output_slot = out_.scan_stray_writes(scans, written);
  scans.fetch();
  if (is_full()) {
    t.total = out_.download(1, stream())[0];  // waits for the stream: the scans' results too
    t.problems += workspace_.explain_overrun(scans, workspace_slot);
  } else {
    t.partials = out_.download(written, stream());
  }
  t.problems += out_.explain_stray_writes(scans, output_slot, written);
  if (scans.value(input_slot) != fingerprint_) {
    t.problems += "the input (or the memory around it) was modified: the input is const\n";
  }
  return t;
}

TrialResult Trial::run(const GuardedInput& input, std::optional<Launch> launch) {
  prepare(input);
  const Outcome o = run_calls({call(input, 0, launch)});
  return check(input, o.results.empty() ? nullptr : &o.results[0], o);
}

std::pair<TrialResult, TrialResult> run_together(Trial& a, const GuardedInput& input_a, std::optional<Launch> launch_a,
                                                 Trial& b, const GuardedInput& input_b,
                                                 std::optional<Launch> launch_b) {
  a.prepare(input_a);
  b.prepare(input_b);
  const Outcome o = run_calls({a.call(input_a, 0, launch_a), b.call(input_b, 1, launch_b)});
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
