// The tests of a chapter that promises the same result bits for every launch (chapter 15): its
// launcher takes the grid as a parameter (contract.hpp, Launch; registered with
// WORKBOOK_TUNED_REDUCE), and its result is the correctly rounded sum.
//
// - Reproducible: the same bits for at least five (blocks, threads) chosen here, repeated calls,
//   two streams at once, a misaligned input; and the same bits as the host's exact sum
//   (judge/exact_sum.hpp), so "the same on every GPU" is checked against a CPU.
// - Accuracy: on adversarial inputs (cancellation, the whole exponent range, subnormals, partial
//   sums beyond FLT_MAX, overflowing totals, exact ties, NaN and infinities, signed zeros) the
//   result is the correctly rounded sum, bit for bit: the bound is "no error beyond the one
//   final rounding".
//
// These tests exist only in a test process whose implementation registered a tuned launcher
// (register_reproducible_tests, called by main), so the other chapters' test lists are unchanged.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "chapter_env.hpp"
#include "judge/device.hpp"
#include "judge/exact_sum.hpp"
#include "judge/inputs.hpp"
#include "trial.hpp"

namespace workbook::judge {
namespace {

float from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

std::string show(float f) { return fmt::format("{:.9g} (bits {:08x})", f, bits_of(f)); }

std::string launch_name(Launch l) {
  if (l.blocks == 0 && l.threads == 0) return "the chapter's own grid";
  return fmt::format("{} blocks of {} threads", l.blocks ? fmt::format("{}", l.blocks) : "default",
                     l.threads ? fmt::format("{}", l.threads) : "default");
}

//! The grids every input is summed with: the chapter's own and tuned ones across the contract's
//! ranges (one block, a few, a prime count, the most; the fewest threads to the most).
const std::vector<Launch> kLaunches = {{0, 0},     {1, 64},     {7, 128},     {64, 256},
                                       {333, 320}, {1000, 512}, {4096, 1024}, {2, 1024}};

std::string where(const std::string& what, std::size_t n, std::size_t offset, Launch l) {
  return fmt::format("[{}] {}, n = {}{}, {}, seed {}", subject_name(), what, n,
                     offset ? fmt::format(", input offset by {} floats", offset) : "", launch_name(l), seed());
}

//! NaN is compared as NaN (any payload); everything else bit for bit, signed zeros included.
bool same_sum(float got, float expected) {
  return std::isnan(expected) ? std::isnan(got) : bits_of(got) == bits_of(expected);
}

//! The calls of one input with every launch in one batch (batch_on_one_workspace): true when every
//! one passed every check the test makes; otherwise the test makes its calls one at a time.
bool correctly_rounded_in_batch(const GuardedInput& input, const std::vector<Launch>& launches, float expected) {
  const auto results = batch_on_one_workspace(input, {launches.begin(), launches.end()}, "grids'");
  if (!results) return false;
  for (const TrialResult& c : *results)
    if (!c.problems.empty() || !same_sum(c.total, expected)) return false;
  return true;
}

//! Sums `host` with every launch in kLaunches (twice with the chapter's own grid) and expects
//! the bits of exact_sum_rounded every time.
void expect_correctly_rounded(const std::string& what, const std::vector<float>& host, std::size_t offset = 0) {
  const std::size_t n = host.size();
  const float expected = exact_sum_rounded(host.data(), n);
  GuardedInput input(n, offset);
  input.upload(host, stream());
  std::vector<Launch> launches = kLaunches;
  launches.push_back(Launch{});  // a repeated call on the same workspace
  if (correctly_rounded_in_batch(input, launches, expected)) return;
  Trial trial(n);
  for (const Launch l : launches) {
    const TrialResult c = trial.run(input, l);
    if (!c.problems.empty()) {
      ADD_FAILURE() << where(what, n, offset, l) << ":\n" << c.problems;
      return;
    }
    if (!same_sum(c.total, expected)) {
      ADD_FAILURE() << where(what, n, offset, l) << ": the sum is " << show(c.total)
                    << "; the correctly rounded sum (the exact sum rounded once, to nearest, ties to "
                       "even; computed on the host) is "
                    << show(expected);
      return;
    }
  }
}

std::mt19937_64 rng_for(std::uint64_t salt) { return std::mt19937_64(seed() ^ (salt * 0x9e3779b97f4a7c15ull)); }

float random_finite(std::mt19937_64& rng, unsigned lowest_exponent, unsigned highest_exponent) {
  const std::uint32_t sign = static_cast<std::uint32_t>(rng() & 1u) << 31;
  const std::uint32_t e =
      lowest_exponent + static_cast<std::uint32_t>(rng() % (highest_exponent - lowest_exponent + 1));
  return from_bits(sign | (e << 23) | static_cast<std::uint32_t>(rng() & 0x7fffffu));
}

constexpr float kFltMax = std::numeric_limits<float>::max();
constexpr std::size_t kMany = (1u << 16) + 5;  // several blocks of every grid

//! The adversarial inputs, by name; each is built from the run's seed.
std::vector<std::pair<std::string, std::function<std::vector<float>()>>> adversarial_cases() {
  return {
      {"cancellation: x and -x shuffled, plus a few 2^-149",
       [] {
         auto rng = rng_for(1);
         std::vector<float> x;
         for (std::size_t i = 0; i < kMany / 2; ++i) {
           const float v = random_finite(rng, 1, 254);
           x.push_back(v);
           x.push_back(-v);
         }
         for (int k = 0; k < 3; ++k) x.push_back(from_bits(1u));
         std::shuffle(x.begin(), x.end(), rng);
         return x;
       }},
      {"cancellation: 1e30, many small values, -1e30",
       [] {
         auto rng = rng_for(2);
         std::vector<float> x(kMany);
         for (float& v : x) v = random_finite(rng, 100, 130);
         x.front() = 1e30f;
         x.back() = -1e30f;
         return x;
       }},
      {"every exponent from 2^-149 to 2^127, random signs and significands",
       [] {
         auto rng = rng_for(3);
         std::vector<float> x(kMany);
         for (float& v : x) v = random_finite(rng, 0, 254);
         return x;
       }},
      {"each power of two 2^-149 .. 2^127 once, then -2^127",
       [] {
         std::vector<float> x;
         for (int k = -149; k <= 127; ++k) x.push_back(std::ldexp(1.0f, k));
         x.push_back(-std::ldexp(1.0f, 127));
         return x;
       }},
      {"subnormals only",
       [] {
         auto rng = rng_for(4);
         std::vector<float> x(kMany);
         for (float& v : x) v = random_finite(rng, 0, 0);
         return x;
       }},
      {"near FLT_MAX: partial sums overflow float, the total does not",
       [] {
         std::vector<float> x;
         for (int k = 0; k < 5000; ++k) x.push_back(kFltMax);
         for (int k = 0; k < 5000; ++k) x.push_back(-kFltMax);
         x.push_back(1.5f);
         return x;
       }},
      {"a total beyond FLT_MAX: +inf", [] { return std::vector<float>(kMany, kFltMax / 3); }},
      {"FLT_MAX plus exactly half an ulp of FLT_MAX, in small pieces: a tie that rounds to inf",
       [] {
         std::vector<float> x(1u << 16, std::ldexp(1.0f, 103 - 16));  // 2^16 * 2^87 = 2^103
         x.insert(x.begin() + 12345, kFltMax);
         return x;
       }},
      {"1 plus half an ulp of 1 in 2^16 pieces: a tie that rounds to even (1.0)",
       [] {
         std::vector<float> x(1u << 16, std::ldexp(1.0f, -40));  // 2^16 * 2^-40 = 2^-24
         x.insert(x.begin() + 777, 1.0f);
         return x;
       }},
      {"the same tie and one 2^-149 more: rounds up",
       [] {
         std::vector<float> x(1u << 16, std::ldexp(1.0f, -40));
         x.insert(x.begin() + 777, 1.0f);
         x.push_back(from_bits(1u));
         return x;
       }},
      {"random floats and one +inf",
       [] {
         auto rng = rng_for(5);
         std::vector<float> x(kMany);
         for (float& v : x) v = random_finite(rng, 100, 140);
         x[kMany / 3] = std::numeric_limits<float>::infinity();
         return x;
       }},
      {"+inf and -inf: NaN",
       [] {
         std::vector<float> x(kMany, 1.0f);
         x[5] = std::numeric_limits<float>::infinity();
         x[kMany - 2] = -std::numeric_limits<float>::infinity();
         return x;
       }},
      {"one NaN among finite values",
       [] {
         std::vector<float> x(kMany, -2.5f);
         x[kMany / 2] = std::numeric_limits<float>::quiet_NaN();
         return x;
       }},
      {"only -0.0: -0.0", [] { return std::vector<float>(kMany, -0.0f); }},
      {"-0.0 and one +0.0: +0.0",
       [] {
         std::vector<float> x(kMany, -0.0f);
         x[kMany - 1] = 0.0f;
         return x;
       }},
      {"x, -x and -0.0: an exact zero from nonzero terms is +0.0",
       [] {
         std::vector<float> x(kMany, -0.0f);
         x[10] = 3.25f;
         x[kMany - 10] = -3.25f;
         return x;
       }},
      {"one element", [] { return std::vector<float>{from_bits(0x00000001u)}; }},
  };
}

// The fixture of every test here: a chapter that needs a device feature this GPU lacks skips
// (as ChapterTest in chapter_test.cpp).
class TunedTest : public ::testing::Test {
 public:
  explicit TunedTest(std::function<void()> body) : body_(std::move(body)) {}
  void SetUp() override {
    if (const Unmet unmet = unmet_here(); !unmet.met()) GTEST_SKIP() << skip_reason(unmet);
  }
  void TestBody() override { body_(); }

 private:
  std::function<void()> body_;
};

void add(const std::string& suite, const std::string& name, std::function<void()> body) {
  ::testing::RegisterTest(suite.c_str(), name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                          [body]() -> ::testing::Test* { return new TunedTest(body); });
}

void two_streams_at_once() {
  const std::size_t n = (1u << 22) + 3;
  const std::vector<float> host = random_input(n, seed() + 15);
  const float expected = exact_sum_rounded(host.data(), n);
  GuardedInput input(n, 1);
  input.upload(host, stream());
  Trial ta(n), tb(n);
  const Launch la{}, lb{1000, 128};
  const auto [a, b] = run_together(ta, input, la, tb, input, lb);
  ASSERT_TRUE(a.problems.empty() && b.problems.empty()) << where("two streams", n, 1, lb) << ":\n"
                                                        << a.problems << b.problems;
  EXPECT_EQ(bits_of(a.total), bits_of(expected))
      << where("first of two streams", n, 1, la) << ": the sum is " << show(a.total)
      << "; the correctly rounded sum is " << show(expected);
  EXPECT_EQ(bits_of(b.total), bits_of(expected))
      << where("second of two streams", n, 1, lb) << ": the sum is " << show(b.total)
      << "; the correctly rounded sum is " << show(expected);
}

}  // namespace

void register_reproducible_tests() {
  // Reproducible: full-precision random floats, whose float sums differ with the grid.
  for (const std::size_t n : {std::size_t(1000), std::size_t(1u << 20) + 1, std::size_t(1u << 22) + 3}) {
    add("Reproducible", fmt::format("SameBitsEveryGrid_n_{}", n),
        [n] { expect_correctly_rounded("random floats", random_input(n, seed() + n)); });
  }
  add("Reproducible", "SameBitsEveryGrid_misaligned_n_1048579", [] {
    const std::size_t n = (1u << 20) + 3;
    expect_correctly_rounded("random floats", random_input(n, seed() + n), 3);
  });
  add("Reproducible", "SameBitsEveryGrid_wide_magnitudes_n_1048577", [] {
    const std::size_t n = (1u << 20) + 1;
    auto rng = rng_for(6);
    std::vector<float> x(n);
    for (float& v : x) v = random_finite(rng, 60, 190);  // 2^-67 .. 2^63: many windows, both paths
    expect_correctly_rounded("random floats of every magnitude", x);
  });
  add("Reproducible", "TwoStreamsAtOnce", two_streams_at_once);
  // Accuracy: every adversarial input, correctly rounded, with every grid.
  const auto cases = adversarial_cases();
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const std::string what = cases[k].first;
    const auto make = cases[k].second;
    add("Accuracy", fmt::format("CorrectlyRounded_case_{}", k),
        [what, make] { expect_correctly_rounded(what, make()); });
  }
}

}  // namespace workbook::judge
