// The correctly rounded sum of floats, on the host: the reference chapter 15 is checked against.
//
// Every finite float is an integer multiple of 2^-149 (the smallest subnormal), so the exact sum
// of any number of floats is an integer N times 2^-149. This file adds the inputs exactly into a
// wide integer, then rounds N * 2^-149 once to the nearest float (ties to even), as IEEE 754
// rounds a single operation. The result is unique: any exact method, on any machine, in any
// order, gives the same bits.
#pragma once

#include <cstddef>
#include <cstdint>

namespace workbook {

//! The float nearest to the exact real sum of x[0, n) (round to nearest, ties to even).
//!
//! IEEE special values: a NaN anywhere, or both +inf and -inf, gives NaN (returned as the quiet
//! NaN 0x7fc00000); otherwise an infinity gives that infinity. An exact sum at or beyond
//! FLT_MAX + half an ulp of FLT_MAX rounds to +-inf; partial sums cannot overflow. An exact
//! zero is -0.0 if every element is -0.0 (and n > 0), else +0.0.
float exact_sum_rounded(const float* x, std::size_t n);

//! The canonical NaN exact_sum_rounded returns.
inline constexpr std::uint32_t kCanonicalNanBits = 0x7fc00000u;

}  // namespace workbook
