// The tests of one chapter, block pass (V0-V7) or full reduction (08-12).
//
// A block pass writes one partial per block; the harness checks every partial
// and finishes the sum itself in double precision. A full reduction writes the
// final float; the harness checks it, its workspace's guard bands, repeated
// calls and concurrent calls. Either way the input must stay unchanged and
// nothing may be written outside the outputs.
#include <cstdint>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "chapter_env.hpp"
#include "workbook/device.hpp"
#include "workbook/inputs.hpp"
#include "workbook/timing.hpp"
#include "workbook/verify.hpp"

//! Fails the current test with `context` and the harness's explanation, and
//! returns from the enclosing void function, when there is anything to explain.
#define WORKBOOK_FAIL_ON(explanation, context)      \
  do {                                              \
    const std::string why_ = (explanation);         \
    if (!why_.empty()) {                            \
      ADD_FAILURE() << (context) << ":\n" << why_;  \
      return;                                       \
    }                                               \
  } while (0)

namespace workbook::test {
namespace {



bool is_full() { return subject().kind == ChapterKind::full; }

std::string error_text(cudaError_t err) {
  return fmt::format("{} ({})", cudaGetErrorString(err), cudaGetErrorName(err));
}

//! What one call of a chapter produced, and everything the harness saw go wrong.
struct Outcome {
  std::vector<float> partials;  // block pass: what the launcher wrote
  float total = 0;              // full reduction: *out
  std::string problems;
  //! The sum the harness sees: the partials added in double, or *out.
  double sum() const { return partials.empty() ? total : sum_in_double(partials); }
};

//! The buffers one implementation needs for inputs of up to n elements: room
//! for partials (block pass) or *out and a workspace (full), all guarded.
class Runner {
 public:
  Runner(const Entry& entry, std::size_t n)
      : entry_(entry),
        out_(entry.kind == ChapterKind::full ? 1 : partials_capacity(n)),
        workspace_(entry.kind == ChapterKind::full ? entry.workspace_bytes(n) : 0) {}

  //! Enqueues one call on `s`; for timing.
  void enqueue(const float* in, std::size_t n, cudaStream_t s) {
    if (entry_.kind == ChapterKind::full) {
      entry_.reduce(in, n, out_.data(), workspace_.data(), s);
    } else {
      count_ = entry_.block_pass(in, n, out_.data(), out_.capacity(), s);
    }
  }

  void poison_outputs(cudaStream_t s) { out_.poison(s); }

  //! Enqueues a copy of what the last call produced, as the harness sums it, into *dst:
  //! the partials added in double, or *out.
  void capture_sum(double* dst, cudaStream_t s) {
    if (entry_.kind == ChapterKind::full) {
      sum_partials_into(out_.data(), 1, dst, s);
    } else {
      sum_partials_into(out_.data(), std::min(count_, out_.capacity()), dst, s);
    }
  }

  //! Poisons the outputs, then enqueues one call (no waiting).
  void start(const GuardedInput& input, cudaStream_t s) {
    out_.poison(s);
    fingerprint_ = input.fingerprint(s);
    enqueue(input.data(), input.size(), s);
    launch_error_ = cudaGetLastError();
  }

  //! Waits for the call and checks everything the harness can see.
  Outcome finish(const GuardedInput& input, cudaStream_t s) {
    Outcome o;
    if (launch_error_ != cudaSuccess) o.problems += "the launch failed: " + error_text(launch_error_) + "\n";
    if (const cudaError_t err = cudaStreamSynchronize(s); err != cudaSuccess) {
      o.problems += "the kernel failed while running: " + error_text(err) + "\n";
      return o;  // a sticky error: the context guard ends the process after this test
    }
    const std::size_t n = input.size();
    std::size_t written = 1;
    if (entry_.kind == ChapterKind::full) {
      o.total = out_.download(1, s)[0];
      o.problems += workspace_.explain_overrun(s);
    } else {
      if (count_ > out_.capacity()) {
        o.problems += fmt::format("the launcher returned {} partials; the harness provides room for {}\n",
                                  count_, out_.capacity());
        return o;
      }
      if (n > 0 && count_ == 0) o.problems += fmt::format("the launcher returned 0 partials for n = {}\n", n);
      if (n == 0 && count_ != 0) o.problems += fmt::format("for n = 0 the launcher must return 0, not {}\n", count_);
      o.partials = out_.download(count_, s);
      written = count_;
    }
    o.problems += out_.explain_stray_writes(written, s);
    if (input.fingerprint(s) != fingerprint_) {
      o.problems += "the input (or the memory around it) was modified: the input is const\n";
    }
    return o;
  }

  Outcome run(const GuardedInput& input, cudaStream_t s = stream()) {
    start(input, s);
    return finish(input, s);
  }

 private:
  const Entry& entry_;
  GuardedOutput out_;
  GuardedWorkspace workspace_;
  std::size_t count_ = 0;
  std::uint64_t fingerprint_ = 0;
  cudaError_t launch_error_ = cudaSuccess;
};

std::string where(std::size_t n, std::size_t offset = 0) {
  return fmt::format("[{}] n = {}{}, seed {}", subject_name(), n,
                     offset ? fmt::format(", input offset by {} floats from a 16-byte boundary", offset) : "",
                     seed());
}

//! The exact input of n elements at `offset`.
struct ExactCase {
  ExactPlan plan;
  GuardedInput input;
  ExactCase(std::size_t n, std::size_t offset, std::uint64_t salt = 0)
      : plan(make_exact_plan(n, seed() + salt)), input(n, offset) {
    std::vector<std::pair<std::size_t, float>> marks;
    for (std::size_t k = 0; k < plan.positions.size(); ++k) marks.emplace_back(plan.positions[k], plan.value(k));
    input.upload_sparse(marks, stream());
  }
};

std::string explain_exact(const ExactPlan& plan, const Outcome& o) {
  return is_full() ? explain_exact_total(plan, o.total) : explain_exact_partials(plan, o.partials);
}

void expect_exact(std::size_t n, std::size_t offset) {
  const ExactCase ec(n, offset);
  Runner runner(subject(), n);
  const Outcome o = runner.run(ec.input);
  WORKBOOK_FAIL_ON(o.problems, where(n, offset));
  WORKBOOK_FAIL_ON(explain_exact(ec.plan, o),
                   is_full() ? where(n, offset)
                             : fmt::format("{}, {} partials", where(n, offset), o.partials.size()));
}

//! Random inputs are shared between tests of one size (drawing 2^27 floats takes a moment).
//! Up to kLargestRoundedInput elements they are full-precision floats checked against a double
//! sum under the any-order rounding bound; above it, dense exact inputs drawn on the device,
//! whose sum is exact in every order (verify.hpp says why).
struct RandomCase {
  GuardedInput input;
  SumCheck check;
};

const RandomCase& rounded_case(std::size_t n) {
  static std::map<std::size_t, std::unique_ptr<RandomCase>> cache;
  auto& slot = cache[n];
  if (!slot) {
    const std::vector<float> host = random_input(n, seed() + n);
    slot.reset(new RandomCase{GuardedInput(n, 0), reference_sum(host.data(), n)});
    slot->input.upload(host, stream());
  }
  return *slot;
}

const RandomCase& dense_exact_case(std::size_t n, std::uint64_t salt = 0) {
  static std::map<std::pair<std::size_t, std::uint64_t>, std::unique_ptr<RandomCase>> cache;
  auto& slot = cache[{n, salt}];
  if (!slot) {
    slot.reset(new RandomCase{GuardedInput(n, 0), {}});
    slot->input.fill_dense_exact(seed() + n + salt, stream());
    slot->check = exact_sum(sum_in_sixteenths(slot->input.data(), n, stream()));
  }
  return *slot;
}

const RandomCase& random_case(std::size_t n) {
  return n <= kLargestRoundedInput ? rounded_case(n) : dense_exact_case(n);
}

void expect_random_sum_ok(const RandomCase& rc, const Outcome& o) {
  const std::size_t n = rc.input.size();
  WORKBOOK_FAIL_ON(o.problems, where(n));
  WORKBOOK_FAIL_ON(explain_non_finite(is_full() ? std::vector<float>{o.total} : o.partials), where(n));
  EXPECT_TRUE(rc.check.passes(o.sum()))
      << where(n) << ": the sum is " << rc.check.describe(o.sum())
      << (rc.check.exact ? "" : "\n(tolerance: the worst-case float rounding bound of any summation "
                               "order; the exact test of this size names missing elements)");
}

std::string size_name(const ::testing::TestParamInfo<std::size_t>& info) {
  return fmt::format("n_{}", info.param);
}

const std::vector<std::size_t> kSizes = {1,    2,    31,   32,   33,   255,  256,
                                         257,  511,  512,  513,  1000, 4099, (1u << 20) - 1,
                                         1u << 20, (1u << 20) + 1, kTimedElements};

// Runs before every test: a chapter that needs a device feature this GPU lacks skips.
class ChapterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const DeviceInfo& d = device_info();
    const std::string unmet = unmet_requirement(spec(), d.compute_major * 10 + d.compute_minor, d.cooperative_launch);
    if (unmet == "cooperative_launch") {
      GTEST_SKIP() << "this device cannot launch cooperative kernels (cudaDevAttrCooperativeLaunch is 0)";
    } else if (!unmet.empty()) {
      GTEST_SKIP() << "needs " << unmet << "; this device is sm_" << d.compute_major << d.compute_minor;
    }
  }
};

template <class Param>
class ChapterParamTest : public ChapterTest, public ::testing::WithParamInterface<Param> {};

}  // namespace

using Empty = ChapterTest;
TEST_F(Empty, NothingToAdd) {
  GuardedInput input(0, 0);
  input.upload({}, stream());
  Runner runner(subject(), 0);
  const Outcome o = runner.run(input);
  WORKBOOK_FAIL_ON(o.problems, where(0));
  if (is_full()) EXPECT_EQ(o.total, 0.0f) << where(0) << ": the sum of nothing is 0";
}

using ExactSums = ChapterParamTest<std::size_t>;
TEST_P(ExactSums, EveryElementCountedOnce) { expect_exact(GetParam(), 0); }
INSTANTIATE_TEST_SUITE_P(Sizes, ExactSums, ::testing::ValuesIn(kSizes), size_name);

using RandomSums = ChapterParamTest<std::size_t>;
TEST_P(RandomSums, MatchDoubleReference) {
  const RandomCase& rc = random_case(GetParam());
  Runner runner(subject(), GetParam());
  expect_random_sum_ok(rc, runner.run(rc.input));
}
INSTANTIATE_TEST_SUITE_P(Sizes, RandomSums, ::testing::ValuesIn(kSizes), size_name);

using MisalignedInput = ChapterParamTest<std::tuple<std::size_t, std::size_t>>;
TEST_P(MisalignedInput, ExactSums) { expect_exact(std::get<1>(GetParam()), std::get<0>(GetParam())); }
INSTANTIATE_TEST_SUITE_P(Offsets, MisalignedInput,
                         ::testing::Combine(::testing::Values(1, 2, 3),
                                            ::testing::Values(3, 5, 1003, (1u << 20) + 3)),
                         [](const auto& info) {
                           return fmt::format("offset_{}_n_{}", std::get<0>(info.param),
                                              std::get<1>(info.param));
                         });

using HugeInput = ChapterTest;
TEST_F(HugeInput, MoreThan2To31Elements) {
  const std::size_t n = (std::size_t(1) << 31) + (std::size_t(1) << 20) + 5;
  const std::size_t need = (n + 2 * GuardedInput::kSlack) * sizeof(float) + partials_capacity(n) * sizeof(float);
  const DeviceInfo info = device_info();
  if (info.free_bytes < need + (std::size_t(1) << 30)) {
    GTEST_SKIP() << fmt::format("needs {:.1f} GiB of free device memory, {:.1f} GiB is free",
                                need / 1073741824.0, info.free_bytes / 1073741824.0);
  }
  expect_exact(n, 0);
}

using Repeatable = ChapterParamTest<std::size_t>;
TEST_P(Repeatable, SameInputSameResult) {
  // Ten calls on one input of full-precision floats, whose float sum depends on the order of
  // the additions. Each size gives the chapter another grid to choose.
  const RandomCase& rc = rounded_case(GetParam());
  const std::size_t n = rc.input.size();
  Runner runner(subject(), n);
  const Outcome first = runner.run(rc.input);
  WORKBOOK_FAIL_ON(first.problems, where(n));
  expect_random_sum_ok(rc, first);
  for (int run = 2; run <= 10; ++run) {
    const Outcome again = runner.run(rc.input);
    WORKBOOK_FAIL_ON(again.problems, fmt::format("{}, run {}", where(n), run));
    if (!spec().deterministic) {
      expect_random_sum_ok(rc, again);  // atomics: any order, within tolerance
      continue;
    }
    ASSERT_EQ(first.partials.size(), again.partials.size()) << where(n);
    for (std::size_t j = 0; j < first.partials.size(); ++j) {
      ASSERT_EQ(first.partials[j], again.partials[j])
          << where(n) << ": partial " << j << " differs between run 1 and run " << run;
    }
    std::uint32_t a, b;
    std::memcpy(&a, &first.total, 4);
    std::memcpy(&b, &again.total, 4);
    ASSERT_EQ(a, b) << where(n) << ": the sum is " << first.total << " in run 1 and " << again.total
                    << " in run " << run << "; this chapter's strategy is deterministic";
  }
}
INSTANTIATE_TEST_SUITE_P(Sizes, Repeatable,
                         ::testing::Values(std::size_t(4099), std::size_t(1u << 20) + 1,
                                           std::size_t(1u << 24) + 3),
                         size_name);

using Workspace = ChapterTest;
TEST_F(Workspace, ManyCallsOnOneWorkspace) {
  if (!is_full()) GTEST_SKIP() << "a block pass has no workspace";
  // One workspace sized for the largest n, reused for calls of every size:
  // state left behind by one call (a counter not reset) breaks the next.
  const std::size_t largest = (1u << 20) + 1;
  Runner runner(subject(), largest);
  std::uint64_t salt = 0;
  for (std::size_t n : {largest, std::size_t(1000), std::size_t(1), largest, std::size_t(70000)}) {
    const ExactCase ec(n, 0, ++salt);
    const Outcome o = runner.run(ec.input);
    WORKBOOK_FAIL_ON(o.problems, fmt::format("{}, call {} on one workspace", where(n), salt));
    WORKBOOK_FAIL_ON(explain_exact_total(ec.plan, o.total),
                     fmt::format("{}, call {} on one workspace", where(n), salt));
  }
}

using Streams = ChapterTest;
TEST_F(Streams, TwoConcurrentCalls) {
  if (!is_full()) GTEST_SKIP() << "block passes are tested one at a time";
  cudaStream_t other;
  WORKBOOK_CUDA_CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  const std::size_t n = (1u << 22) + 3;
  const ExactCase a(n, 0, 101), b(n, 1, 202);
  Runner ra(subject(), n), rb(subject(), n);
  ra.start(a.input, stream());
  rb.start(b.input, other);
  const Outcome oa = ra.finish(a.input, stream()), ob = rb.finish(b.input, other);
  WORKBOOK_CUDA_CHECK(cudaStreamDestroy(other));
  WORKBOOK_FAIL_ON(oa.problems + ob.problems, where(n) + ", two streams");
  WORKBOOK_FAIL_ON(explain_exact_total(a.plan, oa.total), where(n) + ", first stream");
  WORKBOOK_FAIL_ON(explain_exact_total(b.plan, ob.total), where(n) + ", second stream");
}

// The bandwidth at 2^27, measured here and judged by the grader against the
// reference's, measured the same way in a process of its own. Timed calls must
// do the work: they rotate over kTimedBuffers inputs, one element of the next
// input changes before every call, and every timed call's result is checked
// exactly (dense exact inputs); no call may be faster than the memory allows.
constexpr int kTimedBuffers = 3;
constexpr int kWarmupCalls = 3;
constexpr int kTimedCalls = 30;
//! Faster than this multiple of the measured streaming-read ceiling is impossible for a call that
//! reads its whole input (the inputs are 8x L2 and rotate, so none is cached).
constexpr double kFastestPlausible = 1.25;

using Bandwidth = ChapterTest;
TEST_F(Bandwidth, TimedCallsDoTheWork) {
  const std::size_t n = kTimedElements;
  std::vector<const RandomCase*> inputs;
  std::vector<std::int64_t> sixteenths;
  for (int b = 0; b < kTimedBuffers; ++b) {
    inputs.push_back(&dense_exact_case(n, 1000 + b));
    sixteenths.push_back(std::llround(inputs.back()->check.reference * kDenseExactScale));
  }
  Runner runner(subject(), n);
  {
    const Outcome first = runner.run(inputs[0]->input);
    WORKBOOK_FAIL_ON(first.problems, where(n));
    if (!inputs[0]->check.passes(first.sum())) {
      ADD_FAILURE() << where(n) << ": not timed: the result at n = 2^27 must be right first: "
                    << inputs[0]->check.describe(first.sum());
      return;
    }
  }
  const int calls = kWarmupCalls + kTimedCalls;
  DeviceBuffer<double> results(calls);
  std::vector<double> expected(calls), ms(calls);
  std::mt19937_64 rng(seed() ^ 0x7157);
  std::map<std::pair<int, std::size_t>, int> changed;  // (input, element) -> its units now
  EventPair events;
  for (int call = 0; call < calls; ++call) {
    const int b = call % kTimedBuffers;
    GuardedInput& input = const_cast<GuardedInput&>(inputs[b]->input);
    // Change one element of this input: a result remembered from an earlier call is now wrong.
    const std::size_t at = rng() % n;
    const auto key = std::make_pair(b, at);
    const int before = changed.count(key) ? changed[key] : dense_exact_units(seed() + n + 1000 + b, at);
    const int after = (before + 128 + 1 + int(rng() % 256)) % 257 - 128;
    changed[key] = after;
    sixteenths[b] += after - before;
    input.set(at, static_cast<float>(after) / kDenseExactScale, stream());
    expected[call] = static_cast<double>(sixteenths[b]) / kDenseExactScale;
    runner.poison_outputs(stream());
    ms[call] = events.time_ms([&] { runner.enqueue(input.data(), n, stream()); }, stream());
    runner.capture_sum(results.data() + call, stream());
  }
  std::vector<double> got(calls);
  WORKBOOK_CUDA_CHECK(cudaMemcpyAsync(got.data(), results.data(), calls * sizeof(double),
                                      cudaMemcpyDeviceToHost, stream()));
  WORKBOOK_CUDA_CHECK(cudaStreamSynchronize(stream()));
  int wrong = 0;
  for (int call = 0; call < calls; ++call) {
    if (got[call] == expected[call]) continue;
    if (++wrong <= 3) {
      ADD_FAILURE() << fmt::format(
          "{}, timed call {} of {}: the sum is {}, expected exactly {}. Every timed call must "
          "sum its input: the harness rotates {} inputs and changes one element before each call",
          where(n), call + 1, calls, got[call], expected[call], kTimedBuffers);
    }
  }
  const std::size_t bytes = n * sizeof(float);
  const double ceiling = streaming_read_gbps(inputs[0]->input.data(), n, stream());
  Timing timed;
  timed.samples_ms.assign(ms.begin() + kWarmupCalls, ms.end());
  const double gbps = timed.gbps(bytes);
  const double fastest = bytes / (*std::min_element(ms.begin(), ms.end()) * 1e6);
  RecordProperty("subject_gbps", fmt::format("{:.1f}", gbps));
  RecordProperty("ceiling_gbps", fmt::format("{:.1f}", ceiling));
  RecordProperty("fastest_call_gbps", fmt::format("{:.1f}", fastest));
  RecordProperty("checked_calls", calls);
  fmt::print("[bandwidth] n = 2^27: {} {:.0f} GB/s ({:.1f}% of the {:.0f} GB/s streaming-read "
             "ceiling measured in this process), fastest call {:.0f} GB/s; {} calls checked, {} "
             "wrong\n",
             subject_name(), gbps, 100 * gbps / ceiling, ceiling, fastest, calls, wrong);
  EXPECT_LE(fastest, kFastestPlausible * ceiling) << fmt::format(
      "{}: a timed call ran at {:.0f} GB/s, faster than the memory can deliver ({:.0f} GB/s "
      "measured): it cannot have read its whole input",
      where(n), fastest, ceiling);
}

}  // namespace workbook::test
