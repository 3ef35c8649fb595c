// The tests of a block-pass chapter (V0-V7): the chapter's launcher writes one
// partial sum per block; the harness checks every partial and finishes the sum
// itself, in double precision.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
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
#define WORKBOOK_FAIL_ON(explanation, context)                  \
  do {                                                          \
    const std::string why_ = (explanation);                     \
    if (!why_.empty()) {                                        \
      ADD_FAILURE() << (context) << ":\n" << why_;             \
      return;                                                   \
    }                                                           \
  } while (0)

namespace workbook::test {
namespace {

constexpr std::size_t kTimedSize = std::size_t(1) << 27;  // 512 MB: 8x the H200's L2

//! Room the harness gives for partials: enough for blocks of 32 elements.
std::size_t capacity_for(std::size_t n) { return std::max<std::size_t>((n + 31) / 32, 65536); }

//! One block pass of `entry` over `input`, with everything the harness can see
//! go wrong collected in `problems`.
struct Pass {
  std::vector<float> partials;
  std::string problems;
};

Pass run_block_pass(const Entry& entry, const GuardedInput& input) {
  const std::size_t n = input.size();
  GuardedOutput out(capacity_for(n));
  out.poison(stream());
  const std::uint64_t before = input.fingerprint(stream());
  const std::size_t count = entry.block_pass(input.data(), n, out.data(), out.capacity(), stream());
  Pass pass;
  if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) {
    pass.problems += fmt::format("the launch failed: {} ({})\n", cudaGetErrorString(err),
                                 cudaGetErrorName(err));
  }
  if (const cudaError_t err = cudaStreamSynchronize(stream()); err != cudaSuccess) {
    pass.problems += fmt::format("the kernel failed while running: {} ({})\n",
                                 cudaGetErrorString(err), cudaGetErrorName(err));
    return pass;  // a sticky error: the context guard ends the process after this test
  }
  if (count > out.capacity()) {
    pass.problems += fmt::format("the launcher returned {} partials; the harness provides room "
                                 "for {} (capacity)\n",
                                 count, out.capacity());
    return pass;
  }
  if (n > 0 && count == 0) pass.problems += fmt::format("the launcher returned 0 partials for n = {}\n", n);
  if (n == 0 && count != 0) pass.problems += fmt::format("for n = 0 the launcher must return 0, not {}\n", count);
  pass.partials = out.download(count, stream());
  pass.problems += out.explain_stray_writes(count, stream());
  if (input.fingerprint(stream()) != before) {
    pass.problems += "the input (or the memory around it) was modified: the input is const\n";
  }
  return pass;
}

std::string where(std::size_t n, std::size_t offset = 0) {
  return fmt::format("[{}] n = {}{}, seed {}", subject_name(), n,
                     offset ? fmt::format(", input offset by {} floats from a 16-byte boundary", offset) : "",
                     seed());
}

//! Checks a block pass over the exact input for n elements at `offset`.
void expect_exact(std::size_t n, std::size_t offset) {
  const ExactPlan plan = make_exact_plan(n, seed());
  GuardedInput input(n, offset);
  std::vector<std::pair<std::size_t, float>> marks;
  for (std::size_t k = 0; k < plan.positions.size(); ++k) marks.emplace_back(plan.positions[k], plan.value(k));
  input.upload_sparse(marks, stream());
  const Pass pass = run_block_pass(subject(), input);
  WORKBOOK_FAIL_ON(pass.problems, where(n, offset));
  WORKBOOK_FAIL_ON(explain_exact_partials(plan, pass.partials),
                   fmt::format("{}, {} partials", where(n, offset), pass.partials.size()));
}

//! Random inputs are shared between tests of one size (generating 2^27 floats takes a moment).
struct RandomCase {
  GuardedInput input;
  SumCheck check;
};

const RandomCase& random_case(std::size_t n) {
  static std::map<std::size_t, std::unique_ptr<RandomCase>> cache;
  auto& slot = cache[n];
  if (!slot) {
    const std::vector<float> host = random_input(n, seed() + n);
    slot.reset(new RandomCase{GuardedInput(n, 0), reference_sum(host.data(), n)});
    slot->input.upload(host, stream());
  }
  return *slot;
}

//! Checks a pass over random data: finite partials, sum within tolerance.
void expect_random_sum_ok(const RandomCase& rc, const Pass& pass) {
  const std::size_t n = rc.input.size();
  WORKBOOK_FAIL_ON(pass.problems, where(n));
  WORKBOOK_FAIL_ON(explain_non_finite(pass.partials), where(n));
  const double got = sum_in_double(pass.partials);
  EXPECT_TRUE(rc.check.passes(got)) << where(n) << ": the partials sum to " << rc.check.describe(got)
                                    << "\n(tolerance: worst-case float rounding bound; the exact "
                                       "test of this size names missing elements)";
}

std::string size_name(const ::testing::TestParamInfo<std::size_t>& info) {
  return fmt::format("n_{}", info.param);
}

const std::vector<std::size_t> kSizes = {1,    2,    31,   32,          33,          255,
                                         256,  257,  511,  512,         513,         1000,
                                         4099, (1u << 20) - 1, 1u << 20, (1u << 20) + 1, kTimedSize};

}  // namespace

TEST(Empty, ReturnsNoPartials) {
  GuardedInput input(0, 0);
  input.upload({}, stream());
  WORKBOOK_FAIL_ON(run_block_pass(subject(), input).problems, where(0));
}

class ExactSums : public ::testing::TestWithParam<std::size_t> {};
TEST_P(ExactSums, EveryElementInExactlyOnePartial) { expect_exact(GetParam(), 0); }
INSTANTIATE_TEST_SUITE_P(Sizes, ExactSums, ::testing::ValuesIn(kSizes), size_name);

class RandomSums : public ::testing::TestWithParam<std::size_t> {};
TEST_P(RandomSums, MatchDoubleReference) {
  const RandomCase& rc = random_case(GetParam());
  expect_random_sum_ok(rc, run_block_pass(subject(), rc.input));
}
INSTANTIATE_TEST_SUITE_P(Sizes, RandomSums, ::testing::ValuesIn(kSizes), size_name);

class MisalignedInput : public ::testing::TestWithParam<std::tuple<std::size_t, std::size_t>> {};
TEST_P(MisalignedInput, ExactSums) {
  expect_exact(std::get<1>(GetParam()), std::get<0>(GetParam()));
}
INSTANTIATE_TEST_SUITE_P(Offsets, MisalignedInput,
                         ::testing::Combine(::testing::Values(1, 2, 3),
                                            ::testing::Values(3, 5, 1003, (1u << 20) + 3)),
                         [](const auto& info) {
                           return fmt::format("offset_{}_n_{}", std::get<0>(info.param),
                                              std::get<1>(info.param));
                         });

TEST(HugeInput, MoreThan2To31Elements) {
  const std::size_t n = (std::size_t(1) << 31) + (std::size_t(1) << 20) + 5;
  const std::size_t need = (n + 2 * GuardedInput::kSlack) * sizeof(float) +
                           (capacity_for(n) + GuardedOutput::kGuard) * sizeof(float);
  const DeviceInfo info = device_info();
  if (info.free_bytes < need + (std::size_t(1) << 30)) {
    GTEST_SKIP() << fmt::format("needs {:.1f} GiB of free device memory, {:.1f} GiB is free",
                                need / 1073741824.0, info.free_bytes / 1073741824.0);
  }
  expect_exact(n, 0);
}

TEST(Repeatable, SameInputSamePartials) {
  const RandomCase& rc = random_case((1u << 20) + 1);
  const Pass first = run_block_pass(subject(), rc.input);
  const Pass second = run_block_pass(subject(), rc.input);
  const std::size_t n = rc.input.size();
  WORKBOOK_FAIL_ON(first.problems + second.problems, where(n));
  WORKBOOK_FAIL_ON(explain_non_finite(first.partials), where(n));
  ASSERT_EQ(first.partials.size(), second.partials.size()) << where(n);
  for (std::size_t j = 0; j < first.partials.size(); ++j) {
    ASSERT_EQ(first.partials[j], second.partials[j])
        << where(n) << ": partial " << j << " differs between two runs on the same input";
  }
}

TEST(Bandwidth, KeepsUpWithReference) {
  const RandomCase& rc = random_case(kTimedSize);
  expect_random_sum_ok(rc, run_block_pass(subject(), rc.input));
  if (HasFailure()) {
    ADD_FAILURE() << "not timed: the result at n = 2^27 must be right first";
    return;
  }
  const std::size_t n = rc.input.size();
  GuardedOutput mine(capacity_for(n)), theirs(capacity_for(n));
  const auto [t_subject, t_reference] = time_interleaved(
      [&] { subject().block_pass(rc.input.data(), n, mine.data(), mine.capacity(), stream()); },
      [&] { reference().block_pass(rc.input.data(), n, theirs.data(), theirs.capacity(), stream()); },
      stream());
  const std::size_t bytes = n * sizeof(float);
  const double ceiling = streaming_read_gbps(rc.input.data(), n, stream());
  const double gbps = t_subject.gbps(bytes), ref = t_reference.gbps(bytes);
  const double ratio = gbps / ref, required = spec().bandwidth_fraction;
  RecordProperty("subject_gbps", fmt::format("{:.1f}", gbps));
  RecordProperty("reference_gbps", fmt::format("{:.1f}", ref));
  RecordProperty("ceiling_gbps", fmt::format("{:.1f}", ceiling));
  RecordProperty("required_fraction", fmt::format("{:.2f}", required));
  fmt::print("[bandwidth] n = 2^27: {} {:.0f} GB/s ({:.1f}% of the {:.0f} GB/s streaming-read "
             "ceiling), reference {:.0f} GB/s ({:.1f}%); ratio {:.2f}, required {:.2f}\n",
             subject_name(), gbps, 100 * gbps / ceiling, ceiling, ref, 100 * ref / ceiling, ratio,
             required);
  EXPECT_GE(ratio, required) << fmt::format(
      "{} reaches {:.0f} GB/s, {:.0f}% of the reference's {:.0f} GB/s timed beside it; this "
      "chapter asks for {:.0f}%",
      subject_name(), gbps, 100 * ratio, ref, 100 * required);
}

}  // namespace workbook::test
