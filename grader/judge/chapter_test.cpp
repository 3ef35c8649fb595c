// The tests of one chapter, block pass (V0-V7) or full reduction (08 on), run by the judge.
//
// A block pass writes one partial per block; the judge checks every partial and finishes the sum
// itself in double precision. A full reduction writes the final float; the judge checks it, its
// workspace's guard bands, repeated calls and concurrent calls. Either way the input must stay
// unchanged and nothing may be written outside the outputs.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "batched_tests.hpp"
#include "chapter_env.hpp"
#include "judge/device.hpp"
#include "judge/inputs.hpp"
#include "judge/timing.hpp"
#include "judge/verify.hpp"
#include "trial.hpp"

//! Fails the current test with `context` and the judge's explanation, and returns from the
//! enclosing void function, when there is anything to explain.
#define WORKBOOK_FAIL_ON(explanation, context)     \
  do {                                             \
    const std::string why_ = (explanation);        \
    if (!why_.empty()) {                           \
      ADD_FAILURE() << (context) << ":\n" << why_; \
      return;                                      \
    }                                              \
  } while (0)

namespace workbook::judge {
namespace {

//! The exact input of n elements at `offset`.
struct ExactCase {
  ExactPlan plan;
  GuardedInput input;
  ExactCase(std::size_t n, std::size_t offset, std::uint64_t salt = 0)
      : plan(make_exact_plan(n, seed() + salt)), input(n, offset) {
    input.upload_sparse(plan.marks(), stream());
  }
};

std::string explain_exact(const ExactPlan& plan, const TrialResult& t) {
  return is_full() ? explain_exact_total(plan, t.total) : explain_exact_partials(plan, t.partials);
}

//! The exact input a test's second call on the same buffer sees: other elements set.
ExactPlan moved_plan(std::size_t n) { return make_exact_plan(n, seed() + 0x5eedu + n); }

void expect_exact(std::size_t n, std::size_t offset) {
  ExactCase ec(n, offset);
  Trial trial(n);
  const TrialResult t = trial.run(ec.input);
  WORKBOOK_FAIL_ON(t.problems, where(n, offset));
  WORKBOOK_FAIL_ON(explain_exact(ec.plan, t),
                   is_full() ? where(n, offset) : fmt::format("{}, {} partials", where(n, offset), t.partials.size()));
  if (n == 0) return;
  // The same buffer at once again, other elements set: a chapter that remembers what it found in a
  // buffer, and replays it when called on that buffer again, gives the old sum.
  const ExactPlan moved = moved_plan(n);
  ec.input.upload_sparse(moved.marks(), stream());
  const TrialResult again = trial.run(ec.input);
  const std::string twice = where(n, offset) + ", called again on the same buffer with other elements set";
  WORKBOOK_FAIL_ON(again.problems, twice);
  WORKBOOK_FAIL_ON(explain_exact(moved, again),
                   is_full() ? twice : fmt::format("{}, {} partials", twice, again.partials.size()));
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
  if (!slot && n <= kLargestRoundedInput) {
    const std::vector<float> host = random_input(n, seed() + n);
    slot.reset(new RandomCase{GuardedInput(n, 0), reference_sum(host.data(), n)});
    slot->input.upload(host, stream());
  } else if (!slot) {  // drawn and added on the GPU: on the host, 2^24 elements take a third of a second
    slot.reset(new RandomCase{GuardedInput(n, 0), {}});
    slot->input.fill_random(seed() + n, stream());
    slot->check = reference_sum_on_device(slot->input.data(), n, stream());
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

//! Why a result on a random input is wrong, "" if it is right.
std::string random_sum_problem(const RandomCase& rc, const TrialResult& t) {
  const std::size_t n = rc.input.size();
  if (!t.problems.empty()) return where(n) + ":\n" + t.problems;
  const std::string non_finite = explain_non_finite(is_full() ? std::vector<float>{t.total} : t.partials);
  if (!non_finite.empty()) return where(n) + ":\n" + non_finite;
  if (rc.check.passes(t.sum())) return "";
  return fmt::format("{}: the sum is {}{}", where(n), rc.check.describe(t.sum()),
                     rc.check.exact ? ""
                                    : "\n(tolerance: the worst-case float rounding bound of any summation order; the "
                                      "exact test of this size names missing elements)");
}

void expect_random_sum_ok(const RandomCase& rc, const TrialResult& t) {
  if (const std::string why = random_sum_problem(rc, t); !why.empty()) ADD_FAILURE() << why;
}

std::string size_label(std::size_t n) { return fmt::format("n_{}", n); }
std::string size_name(const ::testing::TestParamInfo<std::size_t>& info) { return size_label(info.param); }
std::string offset_label(std::size_t offset, std::size_t n) { return fmt::format("offset_{}_n_{}", offset, n); }

const std::vector<std::size_t> kSizes = {1,
                                         2,
                                         31,
                                         32,
                                         33,
                                         255,
                                         256,
                                         257,
                                         511,
                                         512,
                                         513,
                                         1000,
                                         4099,
                                         (1u << 20) - 1,
                                         1u << 20,
                                         (1u << 20) + 1,
                                         kTimedElements};
const std::vector<std::size_t> kOffsets = {1, 2, 3};
const std::vector<std::size_t> kMisalignedSizes = {3, 5, 1003, (1u << 20) + 3};

// The tests' calls together (batched_tests.hpp). ExactSums, RandomSums and MisalignedInput are
// some forty tests of one or two calls each, all but two on inputs of 2^20 + 3 elements or fewer,
// each call a few round trips between the judge's stream, the chapter's process and the judge's
// checks; beside the other test processes of a class each round trip waits for the GPU's time
// slice (21 ms a test in a class against 0.7 ms alone, book/results/grading.md). So their calls go
// in two requests: the first calls, then the exact tests' second calls on the same buffers with
// other elements set. A batch that breaks the chapter's process costs a new one
// (restart_after_batch). The sanitized tests never go into a batch: they run first, alone, and the
// runs under the tools see the very same calls (chapter_main.cpp).
struct BatchedTest {
  std::size_t n = 0, offset = 0;
  bool exact = false;  // ExactSums and MisalignedInput: two calls on one buffer; RandomSums: one
};

std::vector<std::pair<std::string, BatchedTest>> batchable_tests() {
  std::vector<std::pair<std::string, BatchedTest>> out;
  for (const std::size_t n : kSizes) {
    out.push_back({"Sizes/ExactSums.EveryElementCountedOnce/" + size_label(n), {n, 0, true}});
    out.push_back({"Sizes/RandomSums.MatchDoubleReference/" + size_label(n), {n, 0, false}});
  }
  for (const std::size_t offset : kOffsets)
    for (const std::size_t n : kMisalignedSizes)
      out.push_back({"Offsets/MisalignedInput.ExactSums/" + offset_label(offset, n), {n, offset, true}});
  return out;
}

struct BatchItem {
  explicit BatchItem(const BatchedTest& t) : test(t) {}
  BatchedTest test;
  std::unique_ptr<ExactCase> exact;    // exact tests
  const RandomCase* random = nullptr;  // RandomSums
  std::unique_ptr<Trial> trial;
};

//! One call of the batch and what its result must be: the exact input's plan, or a random case.
struct Expected {
  const ExactPlan* plan = nullptr;
  const RandomCase* random = nullptr;
  bool met(const TrialResult& t) const {
    return t.problems.empty() && (plan ? explain_exact(*plan, t).empty() : random_sum_problem(*random, t).empty());
  }
};

//! Whether every call of a batch ran and passed every check.
bool all_passed(const BatchResult& r, const std::vector<Expected>& expected, const char* which) {
  if (!batch_ran(r, which)) return false;
  std::size_t passed = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) passed += expected[i].met(r.results[i]);
  if (passed == expected.size()) return true;
  fmt::print("[batch] {} of the {} {} calls passed every check; every test makes its calls alone\n", passed,
             expected.size(), which);
  return false;
}

//! The selected tests' calls in two requests: true when all of them passed.
bool run_small_tests_together(const std::vector<BatchedTest>& tests) {
  std::vector<BatchItem> items;
  for (const BatchedTest& t : tests) items.emplace_back(t);
  std::vector<BatchCall> calls;
  std::vector<Expected> expected;
  for (BatchItem& item : items) {
    const std::size_t n = item.test.n;
    if (item.test.exact)
      item.exact = std::make_unique<ExactCase>(n, item.test.offset);
    else
      item.random = &random_case(n);
    item.trial = std::make_unique<Trial>(n);
    calls.push_back({item.trial.get(), item.exact ? &item.exact->input : &item.random->input});
    expected.push_back({item.exact ? &item.exact->plan : nullptr, item.random});
  }
  if (!all_passed(run_batch(calls), expected, "first")) return false;
  // The exact tests' second calls: the same buffers at once again, other elements set (expect_exact).
  calls.clear();
  expected.clear();
  std::vector<ExactPlan> moved;
  moved.reserve(items.size());  // `expected` points into it
  for (BatchItem& item : items) {
    if (!item.exact) continue;
    moved.push_back(moved_plan(item.test.n));
    item.exact->input.upload_sparse(moved.back().marks(), stream());
    calls.push_back({item.trial.get(), &item.exact->input});
    expected.push_back({&moved.back(), nullptr});
  }
  return calls.empty() || all_passed(run_batch(calls), expected, "second");
}

BatchedTests& small_tests() {
  static BatchedTests group = [] {
    std::vector<std::string> names;
    std::vector<BatchedTest> tests;
    for (const auto& [name, test] : batchable_tests()) {
      names.push_back(name);
      tests.push_back(test);
    }
    return BatchedTests("ExactSums, RandomSums and MisalignedInput", names,
                        [tests](const std::vector<std::size_t>& selected) {
                          std::vector<BatchedTest> chosen;
                          for (std::size_t i : selected) chosen.push_back(tests[i]);
                          return run_small_tests_together(chosen);
                        });
  }();
  return group;
}

//! Whether the running test passed in the batch (run_small_tests_together): then it has nothing
//! left to do.
bool passed_in_batch() { return small_tests().passed(); }

// Runs before every test: a chapter that needs a device feature this GPU lacks skips.
class ChapterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const Unmet unmet = unmet_here(); !unmet.met()) GTEST_SKIP() << skip_reason(unmet);
  }
};

template <class Param>
class ChapterParamTest : public ChapterTest, public ::testing::WithParamInterface<Param> {};

}  // namespace

using Empty = ChapterTest;
TEST_F(Empty, NothingToAdd) {
  GuardedInput input(0, 0);
  input.upload({}, stream());
  Trial trial(0);
  const TrialResult t = trial.run(input);
  WORKBOOK_FAIL_ON(t.problems, where(0));
  if (is_full()) {
    EXPECT_EQ(t.total, 0.0f) << where(0) << ": the sum of nothing is 0";
  }
}

using ExactSums = ChapterParamTest<std::size_t>;
TEST_P(ExactSums, EveryElementCountedOnce) {
  if (passed_in_batch()) return;
  expect_exact(GetParam(), 0);
}
INSTANTIATE_TEST_SUITE_P(Sizes, ExactSums, ::testing::ValuesIn(kSizes), size_name);

using RandomSums = ChapterParamTest<std::size_t>;
TEST_P(RandomSums, MatchDoubleReference) {
  if (passed_in_batch()) return;
  const RandomCase& rc = random_case(GetParam());
  Trial trial(GetParam());
  expect_random_sum_ok(rc, trial.run(rc.input));
}
INSTANTIATE_TEST_SUITE_P(Sizes, RandomSums, ::testing::ValuesIn(kSizes), size_name);

using MisalignedInput = ChapterParamTest<std::tuple<std::size_t, std::size_t>>;
TEST_P(MisalignedInput, ExactSums) {
  if (passed_in_batch()) return;
  expect_exact(std::get<1>(GetParam()), std::get<0>(GetParam()));
}
INSTANTIATE_TEST_SUITE_P(Offsets, MisalignedInput,
                         ::testing::Combine(::testing::ValuesIn(kOffsets), ::testing::ValuesIn(kMisalignedSizes)),
                         [](const auto& info) {
                           return offset_label(std::get<0>(info.param), std::get<1>(info.param));
                         });

//! The batchable tests' names that no test has: a renamed test would silently leave its batch.
std::string unlisted_batched_tests() { return small_tests().unlisted(); }

using HugeInput = ChapterTest;
TEST_F(HugeInput, MoreThan2To31Elements) {
  // Every element random (dense exact: a kernel that drops anything gets another sum), then the
  // exact input, which names the elements that went missing, on the same memory.
  const std::size_t n = (std::size_t(1) << 31) + (std::size_t(1) << 20) + 5;
  const std::size_t need = (n + 2 * GuardedInput::kSlack) * sizeof(float) + partials_capacity(n) * sizeof(float);
  if (const std::optional<std::string> small = device_too_small(need)) GTEST_SKIP() << *small;
  if (!device_memory_free(need)) return;
  GuardedInput input(n, 0);
  Trial trial(n);
  input.fill_dense_exact(seed() + n, stream());
  const SumCheck check = exact_sum(sum_in_sixteenths(input.data(), n, stream()));
  const TrialResult dense = trial.run(input);
  WORKBOOK_FAIL_ON(dense.problems, where(n) + ", every element random");
  EXPECT_TRUE(check.passes(dense.sum())) << where(n) << ", every element random: the sum is "
                                         << check.describe(dense.sum());
  const ExactPlan plan = make_exact_plan(n, seed());
  input.upload_sparse(plan.marks(), stream());
  const TrialResult exact = trial.run(input);
  WORKBOOK_FAIL_ON(exact.problems, where(n));
  WORKBOOK_FAIL_ON(explain_exact(plan, exact), where(n));
}

constexpr int kRepeatedRuns = 10;

namespace {

//! Repeatable's calls in one batch (batch_on_one_workspace): true when every one passed every check
//! the test makes; otherwise the test makes its calls one at a time.
bool repeatable_in_batch(const RandomCase& rc) {
  const auto results = batch_on_one_workspace(rc.input, std::vector<std::optional<Launch>>(kRepeatedRuns), "repeated");
  if (!results) return false;
  const TrialResult& first = results->front();
  if (!first.problems.empty() || !random_sum_problem(rc, first).empty()) return false;
  for (const TrialResult& again : *results) {
    if (!again.problems.empty()) return false;
    const bool same = spec().deterministic
                          ? again.partials == first.partials && bits_of(again.total) == bits_of(first.total)
                          : random_sum_problem(rc, again).empty();  // atomics: any order
    if (!same) return false;
  }
  return true;
}

}  // namespace

using Repeatable = ChapterParamTest<std::size_t>;
TEST_P(Repeatable, SameInputSameResult) {
  // Ten calls on one input of full-precision floats, whose float sum depends on the order of
  // the additions. Each size gives the chapter another grid to choose.
  const RandomCase& rc = rounded_case(GetParam());
  if (repeatable_in_batch(rc)) return;
  const std::size_t n = rc.input.size();
  Trial trial(n);
  const TrialResult first = trial.run(rc.input);
  WORKBOOK_FAIL_ON(first.problems, where(n));
  expect_random_sum_ok(rc, first);
  for (int run = 2; run <= kRepeatedRuns; ++run) {
    const TrialResult again = trial.run(rc.input);
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
    ASSERT_EQ(bits_of(first.total), bits_of(again.total))
        << where(n) << ": the sum is " << first.total << " in run 1 and " << again.total << " in run " << run
        << "; this chapter's strategy is deterministic";
  }
}
INSTANTIATE_TEST_SUITE_P(Sizes, Repeatable,
                         ::testing::Values(std::size_t(4099), std::size_t(1u << 20) + 1, std::size_t(1u << 24) + 3),
                         size_name);

using Workspace = ChapterTest;
TEST_F(Workspace, ManyCallsOnOneWorkspace) {
  if (!is_full()) GTEST_SKIP() << "a block pass has no workspace";
  // One workspace sized for the largest n, reused for calls of every size:
  // state left behind by one call (a counter not reset) breaks the next.
  const std::size_t largest = (1u << 20) + 1;
  Trial trial(largest);
  std::uint64_t salt = 0;
  for (std::size_t n : {largest, std::size_t(1000), std::size_t(1), largest, std::size_t(70000)}) {
    const ExactCase ec(n, 0, ++salt);
    const TrialResult t = trial.run(ec.input);
    WORKBOOK_FAIL_ON(t.problems, fmt::format("{}, call {} on one workspace", where(n), salt));
    WORKBOOK_FAIL_ON(explain_exact_total(ec.plan, t.total),
                     fmt::format("{}, call {} on one workspace", where(n), salt));
  }
}

using Streams = ChapterTest;
TEST_F(Streams, TwoConcurrentCalls) {
  if (!is_full()) GTEST_SKIP() << "block passes are tested one at a time";
  const std::size_t n = (1u << 22) + 3;
  const ExactCase a(n, 0, 101), b(n, 1, 202);
  Trial ta(n), tb(n);
  const auto [oa, ob] = run_together(ta, a.input, std::nullopt, tb, b.input, std::nullopt);
  WORKBOOK_FAIL_ON(oa.problems + ob.problems, where(n) + ", two streams");
  WORKBOOK_FAIL_ON(explain_exact_total(a.plan, oa.total), where(n) + ", first stream");
  WORKBOOK_FAIL_ON(explain_exact_total(b.plan, ob.total), where(n) + ", second stream");
}

// The bandwidth at 2^27, measured by this process's clock around whole batches of calls and judged
// by the grader against the reference's, measured the same way in a process of its own.
//
// A timed call cannot know its sum without reading its whole input: every call of a batch reads
// an input of its own, and just before each batch elements of every input change at positions and
// to values drawn from a secret this process never shares (not the seed). Every timed call's
// result is checked exactly, and no batch may finish faster than the memory can deliver its bytes.
constexpr int kMaxTimedInputs = 16;
constexpr int kRounds = 15;
// A measure whose middle half of batches disagree by more than this, the chapter's or the
// ceiling's ((third quartile - first) / median), was disturbed: a core busy beside this process's
// clock, which times batches of a few milliseconds, for long enough to move the median the verdict
// reads. A disturbed measure is taken again, a moment later, up to kMeasures in all, and the
// quietest counts. Until 2026-12-05 the test was the whole range ((slowest - fastest) / median)
// over 20%: in a class of 12 (204 timed tests, H100 80GB HBM3, CUDA 13.0) 103 took a second measure
// and 23 a third, and in a class of 6 (102) 56 a second, most for one or two batches a few
// milliseconds late (a chapter's batches spread 55% at the median), which the median ignores,
// each measure again holding the GPU alone from every other test process. With no re-measure at
// all, 4 of 204 correct chapters fell short of their thresholds in the class before.
constexpr double kQuietSpread = 0.1;
constexpr int kMeasures = 3;
constexpr int kChangesPerInput = 16;

namespace {

//! One timed input of n floats with its partials, in bytes.
std::size_t timed_input_bytes(std::size_t n) {
  return (n + 2 * GuardedInput::kSlack) * sizeof(float) + partials_capacity(n) * sizeof(float);
}

//! How many inputs of n floats (with their partials) the device holds beside 2 GiB: 2 to 16. A fact
//! of the device, not of what other processes hold now: the batch, and so the measure, is the same
//! beside others as alone (Bandwidth checks that they are free, and is starved if not).
int timed_inputs_that_fit(std::size_t n) {
  const std::size_t total = device_properties().global_bytes;
  const std::size_t room = total > (std::size_t(2) << 30) ? total - (std::size_t(2) << 30) : 0;
  return static_cast<int>(std::clamp<std::size_t>(room / timed_input_bytes(n), 2, kMaxTimedInputs));
}

}  // namespace

using Bandwidth = ChapterTest;
TEST_F(Bandwidth, TimedCallsDoTheWork) {
  const std::size_t n = kTimedElements;
  const std::size_t bytes = n * sizeof(float);
  const int count = timed_inputs_that_fit(n);
  // Its inputs are made and checked beside the other test processes; where they hold the memory
  // these need, the test is starved and the grader tests the chapter again with the GPU alone.
  if (!device_memory_free(count * timed_input_bytes(n))) return;
  using Clock = std::chrono::steady_clock;
  const auto ms_between = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  const Clock::time_point started = Clock::now();
  std::vector<std::unique_ptr<GuardedInput>> inputs;
  std::vector<std::unique_ptr<Trial>> trials;
  std::vector<std::int64_t> sixteenths;                    // each input's exact sum, in sixteenths
  std::vector<std::map<std::size_t, int>> changed(count);  // element -> its units now
  std::vector<const float*> drawn;
  for (int b = 0; b < count; ++b) {
    inputs.push_back(std::make_unique<GuardedInput>(n, 0));
    inputs.back()->fill_dense_exact(seed() + n + 1000 + b, stream());
    drawn.push_back(inputs.back()->data());
    trials.push_back(std::make_unique<Trial>(n));
  }
  sixteenths = sums_in_sixteenths(drawn, n, stream());  // one wait for every input's exact sum
  std::random_device device;
  std::mt19937_64 secret((std::uint64_t(device()) << 32) ^ device());
  // Changes elements of input b at secret positions to secret values: every earlier result is wrong.
  auto change = [&](int b) {
    std::vector<std::pair<std::size_t, float>> values;
    for (int k = 0; k < kChangesPerInput; ++k) {
      const std::size_t at = secret() % n;
      auto it = changed[b].find(at);
      const int before = it != changed[b].end() ? it->second : dense_exact_units(seed() + n + 1000 + b, at);
      const int after = (before + 128 + 1 + static_cast<int>(secret() % 256)) % 257 - 128;  // any other value
      changed[b][at] = after;
      sixteenths[b] += after - before;
      values.emplace_back(at, static_cast<float>(after) / kDenseExactScale);
    }
    inputs[b]->set(values, stream());
  };
  DeviceBuffer<double> sums(kMaxTimedInputs);
  int checked = 0, wrong = 0;
  // One batch: `calls` calls, each on an input of its own, changed just before; its time, or a
  // negative number when it failed (the failure is reported).
  auto batch = [&](int calls) -> double {
    std::vector<Call> list;
    for (int b = 0; b < calls; ++b) {
      change(b);
      trials[b]->output().poison(stream());
      list.push_back(trials[b]->call(*inputs[b]));
    }
    // The inputs and outputs are ready before the batch is handed over and its clock starts.
    const Outcome o = run_calls_after_stream(list, Order::host_first);
    if (!o.error.empty() || o.results.size() != list.size()) {
      ADD_FAILURE() << where(n) << ", a timed batch of " << calls << " calls:\n" << o.error;
      return -1;
    }
    std::vector<double> got(calls);
    for (int b = 0; b < calls; ++b) {
      if (!o.results[b].launch_error.empty()) {
        ADD_FAILURE() << where(n) << ": the launch failed: " << o.results[b].launch_error;
        return -1;
      }
      trials[b]->capture_sum(o.results[b].count, sums.data() + b);
    }
    WORKBOOK_CUDA_CHECK(
        cudaMemcpyAsync(got.data(), sums.data(), calls * sizeof(double), cudaMemcpyDeviceToHost, stream()));
    WORKBOOK_CUDA_CHECK(cudaStreamSynchronize(stream()));
    for (int b = 0; b < calls; ++b) {
      ++checked;
      const double expected = static_cast<double>(sixteenths[b]) / kDenseExactScale;
      if (got[b] == expected) continue;
      if (++wrong <= 3) {
        ADD_FAILURE() << fmt::format(
            "{}, timed call {} of a batch of {}: the sum is {}, expected exactly {}. Every timed call must sum "
            "its input: each reads an input of its own, changed at secret places just before",
            where(n), b + 1, calls, got[b], expected);
      }
    }
    return o.seconds;
  };
  const Clock::time_point made = Clock::now();
  if (batch(count) < 0) return;  // warm-up, checked like the rest (and the runner maps the inputs)
  const Clock::time_point warmed = Clock::now();
  // Only the timed batches and the ceiling need the GPU alone.
  if (!take_gpu_alone()) GTEST_SKIP() << "not timed: the grader did not grant the GPU alone";
  const Clock::time_point alone = Clock::now();
  std::vector<const float*> data;
  for (const auto& in : inputs) data.push_back(in->data());
  BatchTimes times;
  Ceiling ceiling;
  // How disturbed a measure is (its batches' or the ceiling's middle half, the larger), and its
  // spreads as the [timing] lines say them.
  const auto noise = [](const BatchTimes& t, const Ceiling& c) { return std::max(t.middle_spread(), c.middle_spread); };
  const auto spreads = [](const BatchTimes& t, const Ceiling& c) {
    return fmt::format(
        "the middle half of its batches spread {:.0f}%, the ceiling's {:.0f}%; the whole range {:.0f}% "
        "and {:.0f}%",
        100 * t.middle_spread(), 100 * c.middle_spread, 100 * t.spread(), 100 * c.spread);
  };
  for (int measure = 1; measure <= kMeasures; ++measure) {
    BatchTimes t;
    t.calls = count;
    const Clock::time_point began = Clock::now();
    for (int r = 0; r < kRounds; ++r) {
      const double many = batch(count);
      if (many < 0) return;
      t.many.push_back(many);
    }
    const Clock::time_point batched = Clock::now();
    const Ceiling c = streaming_read_ceiling(data, n, stream(), given_ceiling_shape());
    if (measure == 1) {
      // Where the GPU held alone goes: the batches' own time, their preparing and checking, the ceiling.
      fmt::print(
          "[timing] Bandwidth: a measure's {} batches {:.0f} ms, of which timed {:.0f} ms; its ceiling {:.0f} ms\n",
          kRounds, ms_between(began, batched), 1e3 * std::accumulate(t.many.begin(), t.many.end(), 0.0),
          ms_between(batched, Clock::now()));
    }
    if (measure == 1 || noise(t, c) < noise(times, ceiling)) {
      times = t;
      ceiling = c;
    }
    if (noise(t, c) <= kQuietSpread) break;
    fmt::print("[timing] Bandwidth: measure {} of at most {} disturbed ({}){}\n", measure, kMeasures, spreads(t, c),
               measure < kMeasures ? ": measured again" : ": the quietest counts");
    if (measure < kMeasures) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  fmt::print(
      "[timing] Bandwidth: {} inputs made and summed in {:.0f} ms, the warm-up batch {:.0f} ms, the GPU alone "
      "granted after {:.0f} ms more, the timed batches and the ceiling {:.0f} ms\n",
      count, ms_between(started, made), ms_between(made, warmed), ms_between(warmed, alone),
      ms_between(alone, Clock::now()));
  fmt::print("[timing] Bandwidth: the measure counted: {}\n", spreads(times, ceiling));
  const double gbps = bytes / times.per_call_s() / 1e9;
  const double fastest = count * bytes / (*std::min_element(times.many.begin(), times.many.end()) * 1e9);
  report_bandwidth({gbps, ceiling.gbps, fastest, static_cast<int>(checked), static_cast<int>(count), ceiling.shape});
  fmt::print("[timing] the ceiling measured with {} blocks an SM, {} loads in flight a thread ({})\n",
             ceiling.shape.blocks_per_sm, ceiling.shape.loads,
             ceiling.screened ? "the fastest of a screen here" : "the reference's, given by the grader");
  fmt::print(
      "[bandwidth] n = 2^27: {} {:.0f} GB/s ({:.1f}% of the {:.0f} GB/s streaming-read ceiling measured "
      "the same way in this process, spread {:.1f}%); {} calls on {} inputs checked, {} wrong; fastest "
      "batch {:.0f} GB/s\n",
      subject_name(), gbps, 100 * gbps / ceiling.gbps, ceiling.gbps, 100 * ceiling.spread, checked, count, wrong,
      fastest);
  // A whole batch, hand-off and all, cannot beat the streaming-read kernel's fastest batch by more
  // than the ceiling's own noise.
  const double limit = ceiling.fastest_batch_gbps * (1 + std::max(0.05, 2 * ceiling.spread));
  EXPECT_LE(fastest, limit) << fmt::format(
      "{}: a timed batch read its inputs at {:.0f} GB/s, faster than the memory can deliver (the streaming-read "
      "kernel's fastest batch: {:.0f} GB/s, {:.0f} with its noise): its calls cannot have read their whole inputs",
      where(n), fastest, ceiling.fastest_batch_gbps, limit);
}

}  // namespace workbook::judge
