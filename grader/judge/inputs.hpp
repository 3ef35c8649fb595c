// Seeded inputs, identical on every machine for a given seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "workbook/host_device.hpp"

namespace workbook {

//! The mixing function every seeded input is drawn with (SplitMix64).
WORKBOOK_HOST_DEVICE inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

//! A dense exact input: element i is dense_exact_units(seed, i) / 16, a
//! multiple of 1/16 in [-8, 8] with mean zero. Every partial sum a reduction
//! can form stays an exact float: its magnitude grows like sqrt(count) and
//! stays far below 2^20 (2^24 sixteenths) even at n = 2^31, so every summation
//! order gives the same, exact sum, and every element counts. The fraction
//! catches an accumulator of the wrong type (an int drops it).
constexpr float kDenseExactScale = 16.0f;
WORKBOOK_HOST_DEVICE inline int dense_exact_units(std::uint64_t seed, std::uint64_t i) {
  return static_cast<int>(splitmix64(seed ^ (i * 0xd1b54a32d192ed03ull)) % 257) - 128;
}

//! Element i of the random input drawn with `seed`: uniform in [-0.5, 1.0),
//! 24 random bits scaled and shifted in float. Mixed signs make cancellation happen; the positive
//! mean keeps the sum far from zero, so a relative check has teeth. The same bits on the host and
//! the device (each float operation rounded once, to nearest, never fused): the judge draws large
//! inputs on the GPU (GuardedInput::fill_random).
WORKBOOK_HOST_DEVICE inline float random_value(std::uint64_t seed, std::uint64_t i) {
  const float bits = static_cast<float>(splitmix64(splitmix64(seed) ^ i) >> 40);  // 24 random bits
  constexpr float kStep = 1.5f / 16777216.0f;
#if defined(__CUDA_ARCH__)
  return __fadd_rn(__fmul_rn(bits, kStep), -0.5f);
#else
  const volatile float scaled = bits * kStep;  // volatile: a compiler may not fuse it into an FMA
  return scaled - 0.5f;
#endif
}

//! random_value(seed, 0 .. n-1).
std::vector<float> random_input(std::size_t n, std::uint64_t seed);

//! An exact input: zeros except `positions[k]`, which holds value(k) = 2^(exponents[k] + scale).
//! The exponents are distinct and lie in one window of 24 (a random choice of them, in a random
//! order), so every subset of the values sums exactly in float, in any order: a dropped or
//! double-counted element always changes the result, and each partial names the elements it
//! holds. The choice, the order and the scale come from the seed, so the total differs from run to
//! run: a kernel cannot recognise the input from a few loads and answer without reading it.
//! How many elements an exact input marks: fewer than the 24 exponents of the window, so which
//! exponents are used (and so the total) is random too.
inline constexpr std::size_t kExactMarks = 22;

struct ExactPlan {
  std::size_t n = 0;
  std::vector<std::size_t> positions;
  std::vector<int> exponents;  // distinct, in [0, 24): bit exponents[k] of a sum in units
  int scale = 0;               // the unit is 2^scale

  //! The value at positions[k].
  float value(std::size_t k) const;
  //! The value at positions[k] in units of 2^scale: a single bit.
  std::uint32_t units(std::size_t k) const { return 1u << exponents[k]; }
  //! The sum of all marked elements, in units and as a number.
  std::uint32_t total_units() const;
  double total() const;
  //! 2^scale: a partial divided by it is a whole number of units.
  double unit() const;
  std::vector<float> dense() const;  // the whole input, for small n
  //! The marked elements: (position, value), what a sparse upload writes over zeros.
  std::vector<std::pair<std::size_t, float>> marks() const;
};

//! Marks element 0, element n-1, the elements on both sides of every block
//! edge a kernel might use (32 .. 4096 elements, 4-element vector edges, 2^31
//! and 2^32 where int and unsigned indices wrap) and
//! the middle, then seeded random positions, up to kExactMarks distinct positions.
//! For n <= kExactMarks every element is marked.
ExactPlan make_exact_plan(std::size_t n, std::uint64_t seed);

}  // namespace workbook
