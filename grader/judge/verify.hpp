// Checking a reduction's output: exact inputs, random inputs, partials.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "judge/inputs.hpp"

namespace workbook {

//! The bit pattern the harness writes into every output before a run
//! (all ones: a NaN). A partial that still holds it was never written.
constexpr std::uint32_t kPoisonBits = 0xffffffffu;

//! How far a float sum of n terms may be from the exact sum, whatever the
//! order of its additions:
//!   |got - exact| <= gamma(n - 1) * sum|x_i|,  gamma(k) = k u / (1 - k u),
//! with u = 2^-24 (float's unit roundoff). This is Higham's worst-case bound
//! for any summation tree (Accuracy and Stability, ch. 4): a grid-stride loop
//! with one running sum per thread, a block tree, a single thread adding all n
//! in turn. It is only useful while (n - 1) u is small, so the random tests
//! use rounded (full-precision) inputs only up to kLargestRoundedInput
//! elements and dense exact inputs (inputs.hpp) above; where (n - 1) u >= 1/2
//! there is no bound and this returns infinity.
double sum_tolerance(std::size_t n, double sum_abs);

//! The random tests draw full-precision floats up to this size; above it,
//! dense exact inputs whose sum is the same in every order.
constexpr std::size_t kLargestRoundedInput = 65536;

//! A float sum compared with the reference: the double-precision sum of a
//! rounded input under the any-order bound, or the exact sum of a dense
//! exact input (tolerance 0).
struct SumCheck {
  double reference = 0;
  double sum_abs = 0;
  double tolerance = 0;
  bool exact = false;
  bool passes(double got) const;
  std::string describe(double got) const;  // "got X, expected Y +- T (off by Z = k tolerances)"
};

//! The reference sum of x in double precision, and the tolerance.
SumCheck reference_sum(const float* x, std::size_t n);

//! The check of a dense exact input whose elements add up to `sixteenths` / 16.
SumCheck exact_sum(std::int64_t sixteenths);

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
