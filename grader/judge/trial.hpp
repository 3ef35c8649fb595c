// One trial of the implementation under test: guarded buffers for inputs of up to n elements,
// a call on an input, and everything the judge can see go wrong afterwards.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
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
  //! Before the call is handed over: poisons the outputs, fingerprints the input.
  void prepare(const GuardedInput& input);
  //! After it ran: what it wrote, and what went wrong (`result` null when it never ran).
  TrialResult check(const GuardedInput& input, const remote::CallResult* result, const Outcome& outcome);
  //! prepare, run alone, check.
  TrialResult run(const GuardedInput& input, std::optional<Launch> launch = std::nullopt);

  GuardedOutput& output() { return out_; }
  //! Enqueues, on the judge's stream, the sum the judge makes of the last call's output into *dst.
  void capture_sum(std::size_t count, double* dst) const;

 private:
  GuardedOutput out_;
  GuardedWorkspace workspace_;
  std::uint64_t fingerprint_ = 0;
};

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
