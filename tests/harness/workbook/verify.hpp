// Checking a reduction's output: exact inputs, random inputs, partials.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "workbook/inputs.hpp"

namespace workbook {

//! The bit pattern the harness writes into every output before a run
//! (all ones: a NaN). A partial that still holds it was never written.
constexpr std::uint32_t kPoisonBits = 0xffffffffu;

//! The longest chain of float additions an element may pass through and
//! still be within tolerance: a per-thread serial sum of up to this many
//! terms, plus a tree over the rest. A single thread summing 2^27 elements
//! one by one fails the random tests at large n.
constexpr std::size_t kMaxSerialChain = 1024;

//! How far a float sum of n terms may be from the exact sum:
//!   |got - exact| <= gamma(D) * sum|x_i|,  gamma(D) = D u / (1 - D u),
//! with u = 2^-24 (float's unit roundoff) and D = min(n, 1024) + 2 ceil(log2 n),
//! the depth of the summation tree that any order of at most kMaxSerialChain
//! serial additions followed by pairwise combining can produce. This is a
//! worst-case bound (Higham, Accuracy and Stability, ch. 4), so an honest
//! kernel never fails it by rounding; a missing block of data usually does.
double sum_tolerance(std::size_t n, double sum_abs);

//! A float sum compared with the double-precision reference.
struct SumCheck {
  double reference = 0;
  double sum_abs = 0;
  double tolerance = 0;
  bool passes(double got) const;
  std::string describe(double got) const;  // "got X, expected Y +- T (off by Z = k tolerances)"
};

//! The reference sum of x in double precision, and the tolerance.
SumCheck reference_sum(const float* x, std::size_t n);

//! Explains what is wrong with the partials of a block pass over an exact
//! input, or returns "" when every marked element is in exactly one partial
//! and every partial is a whole sum of marked elements. Names elements and
//! partials: "element 511 (value 2^7) is in no partial: it was dropped".
std::string explain_exact_partials(const ExactPlan& plan, const std::vector<float>& partials);

//! The same for a single total (a full reduction): names the missing or
//! extra elements when the difference decodes unambiguously.
std::string explain_exact_total(const ExactPlan& plan, float total);

//! Finds partials that are not finite or still poisoned, up to `limit`
//! of them; "" when all are finite.
std::string explain_non_finite(const std::vector<float>& values, std::size_t limit = 5);

//! Sum of values in double, in index order.
double sum_in_double(const std::vector<float>& values);

}  // namespace workbook
