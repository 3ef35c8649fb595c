#include "workbook/inputs.hpp"

#include <algorithm>

namespace workbook {
namespace {

constexpr std::size_t kMaxPositions = 24;  // 2^0 .. 2^23: every subset sum < 2^24 is exact

}  // namespace

float random_value(std::uint64_t seed, std::uint64_t i) {
  const std::uint64_t bits = splitmix64(splitmix64(seed) ^ i) >> 40;  // 24 random bits
  return static_cast<float>(bits) * (1.5f / 16777216.0f) - 0.5f;
}

std::vector<float> random_input(std::size_t n, std::uint64_t seed) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = random_value(seed, i);
  return x;
}

std::vector<float> ExactPlan::dense() const {
  std::vector<float> x(n, 0.0f);
  for (std::size_t k = 0; k < positions.size(); ++k) x[positions[k]] = value(k);
  return x;
}

ExactPlan make_exact_plan(std::size_t n, std::uint64_t seed) {
  ExactPlan plan;
  plan.n = n;
  auto add = [&](std::size_t p) {
    if (p < n && plan.positions.size() < kMaxPositions &&
        std::find(plan.positions.begin(), plan.positions.end(), p) == plan.positions.end()) {
      plan.positions.push_back(p);
    }
  };
  if (n <= kMaxPositions) {
    for (std::size_t p = 0; p < n; ++p) add(p);
    return plan;
  }
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
  std::uint64_t state = splitmix64(seed ^ n);
  while (plan.positions.size() < kMaxPositions) {
    state = splitmix64(state);
    add(static_cast<std::size_t>(state % n));
  }
  return plan;
}

}  // namespace workbook
