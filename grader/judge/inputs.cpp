#include "judge/inputs.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace workbook {
namespace {

constexpr int kWindow = 24;    // 2^0 .. 2^23 units: every subset sum < 2^24 units is exact
constexpr int kMaxScale = 40;  // units from 2^-40 to 2^40: every value a normal float

}  // namespace

std::vector<float> random_input(std::size_t n, std::uint64_t seed) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = random_value(seed, i);
  return x;
}

float ExactPlan::value(std::size_t k) const { return static_cast<float>(std::ldexp(1.0, exponents[k] + scale)); }

std::uint32_t ExactPlan::total_units() const {
  std::uint32_t total = 0;
  for (std::size_t k = 0; k < exponents.size(); ++k) total |= units(k);
  return total;
}

double ExactPlan::unit() const { return std::ldexp(1.0, scale); }

double ExactPlan::total() const { return static_cast<double>(total_units()) * unit(); }

std::vector<float> ExactPlan::dense() const {
  std::vector<float> x(n, 0.0f);
  for (const auto& [at, v] : marks()) x[at] = v;
  return x;
}

std::vector<std::pair<std::size_t, float>> ExactPlan::marks() const {
  std::vector<std::pair<std::size_t, float>> m;
  for (std::size_t k = 0; k < positions.size(); ++k) m.emplace_back(positions[k], value(k));
  return m;
}

ExactPlan make_exact_plan(std::size_t n, std::uint64_t seed) {
  ExactPlan plan;
  plan.n = n;
  auto add = [&](std::size_t p) {
    if (p < n && plan.positions.size() < kExactMarks &&
        std::find(plan.positions.begin(), plan.positions.end(), p) == plan.positions.end()) {
      plan.positions.push_back(p);
    }
  };
  std::uint64_t state = splitmix64(seed ^ n);
  const auto next = [&] { return state = splitmix64(state); };
  if (n <= kExactMarks) {
    for (std::size_t p = 0; p < n; ++p) add(p);
  } else {
    add(0);
    add(n - 1);
    add(n - 2);
    add(n - n % 4);  // first element of a scalar tail after float4s
    add(n / 2);
    // Block edges of 32..4096 elements, and 2^31, where 32-bit indices wrap.
    for (std::size_t edge : {32ull, 256ull, 512ull, 1024ull, 4096ull, 1ull << 31, 1ull << 32}) {
      add(edge - 1);
      add(edge);
    }
    while (plan.positions.size() < kExactMarks) add(static_cast<std::size_t>(next() % n));
  }
  // A random choice of exponents in a random order (a partial Fisher-Yates shuffle), and a scale.
  std::vector<int> window(kWindow);
  std::iota(window.begin(), window.end(), 0);
  for (std::size_t k = 0; k < plan.positions.size(); ++k) {
    std::swap(window[k], window[k + next() % (kWindow - k)]);
    plan.exponents.push_back(window[k]);
  }
  plan.scale = static_cast<int>(next() % (2 * kMaxScale + 1)) - kMaxScale;
  return plan;
}

}  // namespace workbook
