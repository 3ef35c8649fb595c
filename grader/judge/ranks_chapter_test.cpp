// The tests of the chapter over several GPUs (WORKBOOK_RANK_REDUCE: contract.hpp, RankReduceFn): one
// rank on each GPU this judge sees, every rank's shard on its own GPU, one collective a call.
//
// - SeveralGpus.ExactSums_<case>: dense exact shards (multiples of 1/16 whose sums are exact in
//   every order, verify.hpp), of sizes that differ between ranks, some of them empty: the total on
//   every rank is the exact sum of every shard, the same bits on every rank; no shard changed;
//   nothing written past *out or outside the workspace.
// - SeveralGpus.RandomSums: full-precision random shards, the total within the any-order rounding
//   bound of their double sum, the same bits on every rank.
// - SeveralGpus.Repeatable: the same shards twice, the same bits (the chapter is deterministic).
//
// The chapter's plain reduction (one rank alone on one GPU) gets every full chapter's tests, the
// Bandwidth test among them. These exist only in the judge of that chapter (register_ranks_tests,
// called by main), and skip with fewer GPUs than the chapter's `requires` names unless the
// rehearsal variable (names.hpp, kRehearsalVariable) lets them run on the GPUs there are.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "chapter_env.hpp"
#include "judge/device.hpp"
#include "judge/inputs.hpp"
#include "judge/verify.hpp"
#include "runner/cuda_check.hpp"
#include "trial.hpp"

namespace workbook::judge {
namespace {

//! One rank's shard and what it writes to: all on its GPU, with a stream of the judge's there.
struct Shard {
  int device = 0;
  cudaStream_t stream = nullptr;
  std::unique_ptr<GuardedInput> input;
  std::unique_ptr<GuardedOutput> out;  // *out, one float, then the guard band
  std::unique_ptr<GuardedWorkspace> workspace;
  std::uint64_t fingerprint = 0;

  Shard(int d, std::size_t n, std::size_t workspace_bytes) : device(d) {
    const DeviceScope on(device);
    WORKBOOK_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    input = std::make_unique<GuardedInput>(n, 0);
    out = std::make_unique<GuardedOutput>(1);
    workspace = std::make_unique<GuardedWorkspace>(workspace_bytes);
  }
  ~Shard() {
    if (stream) {
      const DeviceScope on(device);
      cudaStreamDestroy(stream);
    }
  }
  Shard(const Shard&) = delete;
  Shard& operator=(const Shard&) = delete;
};

//! The ranks of one collective: shard r of n[r] elements on GPU r.
class Ranks {
 public:
  explicit Ranks(const std::vector<std::size_t>& sizes) : sizes_(sizes) {
    for (std::size_t r = 0; r < sizes.size(); ++r) {
      std::string why;
      const std::optional<std::size_t> bytes = subject().workspace_bytes(sizes[r], &why);
      if (!bytes) throw std::runtime_error("workspace_bytes: " + why);
      shards_.push_back(std::make_unique<Shard>(static_cast<int>(r), sizes[r], *bytes));
    }
  }

  std::size_t count() const { return shards_.size(); }
  Shard& operator[](std::size_t r) { return *shards_[r]; }

  //! "[learner] 2 ranks, shards of 1000003 and 0 elements, seed 42"
  std::string where() const {
    std::vector<std::string> n;
    for (std::size_t s : sizes_) n.push_back(std::to_string(s));
    return fmt::format("[{}] {} rank{} (one a GPU), shards of {} elements, seed {}", subject_name(), count(),
                       count() == 1 ? "" : "s", fmt::join(n, ", "), seed());
  }

  //! One collective: poisons every *out, fingerprints every shard, runs one rank call a GPU, and
  //! reads back every rank's *out. Problems found on the way are test failures.
  std::vector<float> run() {
    std::vector<Call> calls;
    for (auto& s : shards_) {
      const DeviceScope on(s->device);
      s->out->poison(s->stream);
      s->fingerprint = s->input->fingerprint(s->stream);
      WORKBOOK_CUDA_CHECK(cudaStreamSynchronize(s->stream));
      Call c;
      c.kind = remote::CallKind::rank;
      c.in = s->input->data();
      c.n = s->input->size();
      c.out = s->out->data();
      c.workspace = s->workspace->data();
      c.device = s->device;
      calls.push_back(c);
    }
    const Outcome o = run_calls(calls);
    std::vector<float> totals;
    if (!o.error.empty()) {
      ADD_FAILURE() << where() << ": " << o.error;
      return totals;
    }
    for (std::size_t r = 0; r < count(); ++r) {
      if (!o.results[r].launch_error.empty())
        ADD_FAILURE() << where() << ", rank " << r << ": " << o.results[r].launch_error;
    }
    for (auto& s : shards_) {
      const DeviceScope on(s->device);
      const std::vector<float> got = s->out->download(1, s->stream);
      totals.push_back(got.empty() ? std::nanf("") : got[0]);
      const std::string rank = fmt::format("{}, rank {} (GPU {})", where(), s->device, s->device);
      if (const std::string stray = s->out->explain_stray_writes(1, s->stream); !stray.empty()) {
        ADD_FAILURE() << rank << ": " << stray;
      }
      if (const std::string overrun = s->workspace->explain_overrun(s->stream); !overrun.empty()) {
        ADD_FAILURE() << rank << ": " << overrun;
      }
      if (s->input->fingerprint(s->stream) != s->fingerprint) ADD_FAILURE() << rank << ": its shard changed";
    }
    return totals;
  }

 private:
  std::vector<std::size_t> sizes_;
  std::vector<std::unique_ptr<Shard>> shards_;
};

//! Every rank's total has the same bits as rank 0's; says which differs.
void expect_same_bits(const std::vector<float>& totals, const std::string& where) {
  for (std::size_t r = 1; r < totals.size(); ++r) {
    EXPECT_EQ(bits_of(totals[r]), bits_of(totals[0]))
        << where << ": rank " << r << " got " << fmt::format("{:.9g}", totals[r]) << ", rank 0 got "
        << fmt::format("{:.9g}", totals[0])
        << ": every rank must hold the same bits (an all-reduce gives every rank the one result)";
  }
}

//! Shard sizes for `ranks` ranks from a pattern, rank r taking pattern[r % size].
std::vector<std::size_t> sizes_from(const std::vector<std::size_t>& pattern, int ranks) {
  std::vector<std::size_t> sizes;
  for (int r = 0; r < ranks; ++r) sizes.push_back(pattern[static_cast<std::size_t>(r) % pattern.size()]);
  return sizes;
}

// The seed of rank r's shard in the test `salt`.
std::uint64_t shard_seed(std::uint64_t salt, std::size_t r) { return splitmix64(seed() + 1000 * salt + r); }

void exact_sums(const std::vector<std::size_t>& pattern, std::uint64_t salt) {
  Ranks ranks(sizes_from(pattern, visible_gpus()));
  std::int64_t sixteenths = 0;
  for (std::size_t r = 0; r < ranks.count(); ++r) {
    Shard& s = ranks[r];
    const DeviceScope on(s.device);
    s.input->fill_dense_exact(shard_seed(salt, r), s.stream);
    WORKBOOK_CUDA_CHECK(cudaStreamSynchronize(s.stream));
    for (std::size_t i = 0; i < s.input->size(); ++i) sixteenths += dense_exact_units(shard_seed(salt, r), i);
  }
  const std::vector<float> totals = ranks.run();
  if (totals.size() != ranks.count()) return;
  const SumCheck check = exact_sum(sixteenths);
  for (std::size_t r = 0; r < totals.size(); ++r) {
    EXPECT_TRUE(check.passes(totals[r])) << ranks.where() << ", rank " << r << ": the total is "
                                         << check.describe(totals[r])
                                         << " (the sum of every rank's shard; each is exact in any order)";
  }
  expect_same_bits(totals, ranks.where());
}

std::vector<float> random_sums(Ranks& ranks, std::uint64_t salt, SumCheck* check) {
  std::vector<float> all;
  for (std::size_t r = 0; r < ranks.count(); ++r) {
    Shard& s = ranks[r];
    const DeviceScope on(s.device);
    s.input->fill_random(shard_seed(salt, r), s.stream);
    WORKBOOK_CUDA_CHECK(cudaStreamSynchronize(s.stream));
    const std::vector<float> host = random_input(s.input->size(), shard_seed(salt, r));
    all.insert(all.end(), host.begin(), host.end());
  }
  *check = reference_sum(all.data(), all.size());
  // One more rounding per rank, where the ranks' sums are added: the bound of n + ranks adds.
  check->tolerance = sum_tolerance(all.size() + ranks.count(), check->sum_abs);
  return ranks.run();
}

void register_test(const std::string& name, std::function<void()> body) {
  struct RanksTest : ::testing::Test {
    explicit RanksTest(std::function<void()> b) : body(std::move(b)) {}
    void SetUp() override {
      if (const Unmet unmet = unmet_here(); !unmet.met()) GTEST_SKIP() << skip_reason(unmet);
    }
    void TestBody() override { body(); }
    std::function<void()> body;
  };
  ::testing::RegisterTest("SeveralGpus", name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                          [body]() -> ::testing::Test* { return new RanksTest(body); });
}

}  // namespace

void register_ranks_tests() {
  // Sizes that differ between ranks: odd ones, one block's worth, a rank with nothing at all.
  register_test("ExactSums_uneven", [] { exact_sums({1000003, 4099, 1, 33}, 1); });
  register_test("ExactSums_an_empty_shard", [] { exact_sums({0, 257, 1048577}, 2); });
  register_test("ExactSums_every_shard_empty", [] { exact_sums({0}, 3); });
  register_test("ExactSums_equal_shards", [] { exact_sums({(std::size_t(1) << 22) + 1}, 4); });
  register_test("RandomSums", [] {
    Ranks ranks(sizes_from({kLargestRoundedInput, 1000, 65521}, visible_gpus()));
    SumCheck check;
    const std::vector<float> totals = random_sums(ranks, 5, &check);
    if (totals.size() != ranks.count()) return;
    for (std::size_t r = 0; r < totals.size(); ++r) {
      EXPECT_TRUE(check.passes(totals[r]))
          << ranks.where() << ", rank " << r << ": the total is " << check.describe(totals[r]);
    }
    expect_same_bits(totals, ranks.where());
  });
  register_test("Repeatable", [] {
    Ranks ranks(sizes_from({(std::size_t(1) << 20) + 3, 65536}, visible_gpus()));
    SumCheck check;
    const std::vector<float> first = random_sums(ranks, 6, &check);
    const std::vector<float> second = ranks.run();
    if (first.size() != ranks.count() || second.size() != ranks.count()) return;
    for (std::size_t r = 0; r < first.size(); ++r) {
      EXPECT_EQ(bits_of(second[r]), bits_of(first[r]))
          << ranks.where() << ", rank " << r << ": the same shards gave " << fmt::format("{:.9g}", first[r])
          << ", then " << fmt::format("{:.9g}", second[r]) << " (the chapter promises the same bits every run)";
    }
  });
}

}  // namespace workbook::judge
