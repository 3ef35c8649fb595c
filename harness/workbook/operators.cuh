// The operators of a generic reduction (issue: one reduction for every operator and type), in the
// idiom of CUB: an operator object combines two accumulators, has an identity, and an element of
// the input enters through widen(). Host and device: the judge's references use the same rules.
//
// The rules every operator keeps, so that any tree of combines (any grid, any block size) gives
// the same answer, bit for bit except where a rule says otherwise:
// - Sum: floating point sums depend on the order (only the tolerance is promised); integer sums
//   are exact and wrap modulo 2^64 (an int input is widened to long long first, so it wraps only
//   beyond 2^32 elements of magnitude 2^31).
// - Max and Min: a NaN wins (it propagates, as numpy's max and torch.max do, unlike fmaxf); of two
//   equal zeros Max keeps +0 and Min keeps -0, so the sign of a zero does not depend on the order.
//   With two NaNs the result is a NaN, its payload not promised.
// - ArgMax and ArgMin: the index of the winner under the same rules; of equal values (+0 and -0
//   are equal) the first index wins, and of several NaNs the first NaN. An empty input gives
//   index -1.
// - Moments (mean and variance): each accumulator holds (count, mean, M2 = sum of squared
//   deviations from the mean), and two are merged with Chan's update, which never subtracts two
//   large sums of squares (the naive E[x^2] - E[x]^2 loses every digit when the mean is large).
//   Not associative bit for bit: the promise is a relative error bound, as for Sum.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "workbook/host_device.hpp"

namespace workbook::ops {

// ---- widening: an input element as its accumulator's type (exact for every input type) ----

WORKBOOK_HOST_DEVICE inline float widen(float x) { return x; }
WORKBOOK_HOST_DEVICE inline double widen(double x) { return x; }
WORKBOOK_HOST_DEVICE inline float widen(__half x) { return __half2float(x); }
WORKBOOK_HOST_DEVICE inline float widen(__nv_bfloat16 x) { return __bfloat162float(x); }
WORKBOOK_HOST_DEVICE inline long long widen(int x) { return x; }
WORKBOOK_HOST_DEVICE inline long long widen(long long x) { return x; }

//! The accumulator of an input type T: float for float, __half and __nv_bfloat16; double for
//! double; long long for int and long long.
template <class T>
using Widened = decltype(widen(T{}));

//! A value as an input element of type T, rounded to the nearest (what an input is made from).
template <class T>
WORKBOOK_HOST_DEVICE T narrow(double x) {
  if constexpr (std::is_same_v<T, __half>) return __double2half(x);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __double2bfloat16(x);
  else return static_cast<T>(x);
}

namespace detail {

WORKBOOK_HOST_DEVICE inline bool is_nan(float x) { return x != x; }
WORKBOOK_HOST_DEVICE inline bool is_nan(double x) { return x != x; }
WORKBOOK_HOST_DEVICE inline bool is_nan(long long) { return false; }
// The sign bit, of a zero too, read from the bits; never asked of a NaN.
WORKBOOK_HOST_DEVICE inline bool sign_bit(float x) {
  std::uint32_t bits;
  memcpy(&bits, &x, sizeof bits);
  return bits >> 31;
}
WORKBOOK_HOST_DEVICE inline bool sign_bit(double x) {
  std::uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  return bits >> 63;
}
WORKBOOK_HOST_DEVICE inline bool sign_bit(long long x) { return x < 0; }

// The lowest and highest value of an accumulator type, infinities for floating point.
template <class A>
WORKBOOK_HOST_DEVICE constexpr A lowest();
template <>
WORKBOOK_HOST_DEVICE constexpr float lowest<float>() { return -__builtin_huge_valf(); }
template <>
WORKBOOK_HOST_DEVICE constexpr double lowest<double>() { return -__builtin_huge_val(); }
template <>
WORKBOOK_HOST_DEVICE constexpr long long lowest<long long>() { return -0x7fffffffffffffffLL - 1; }
template <class A>
WORKBOOK_HOST_DEVICE constexpr A highest();
template <>
WORKBOOK_HOST_DEVICE constexpr float highest<float>() { return __builtin_huge_valf(); }
template <>
WORKBOOK_HOST_DEVICE constexpr double highest<double>() { return __builtin_huge_val(); }
template <>
WORKBOOK_HOST_DEVICE constexpr long long highest<long long>() { return 0x7fffffffffffffffLL; }

// a wins over b for Max (greater = true) or Min: NaN first, then the value, then (zero_signs) +0
// over -0 for Max and -0 over +0 for Min; false on a tie (equal values, or two NaNs).
template <bool greater, bool zero_signs, class A>
WORKBOOK_HOST_DEVICE bool wins(A a, A b) {
  if (is_nan(a) || is_nan(b)) return is_nan(a) && !is_nan(b);
  if (a != b) return greater ? a > b : a < b;
  return zero_signs && sign_bit(a) != sign_bit(b) && (greater ? !sign_bit(a) : sign_bit(a));
}

}  // namespace detail

// ---- the operators ----

struct Sum {
  template <class A>
  WORKBOOK_HOST_DEVICE static constexpr A identity() {
    return A(0);
  }
  WORKBOOK_HOST_DEVICE float operator()(float a, float b) const { return a + b; }
  WORKBOOK_HOST_DEVICE double operator()(double a, double b) const { return a + b; }
  //! Modulo 2^64: the sum of the unsigned bits (a signed overflow would be undefined in C++).
  WORKBOOK_HOST_DEVICE long long operator()(long long a, long long b) const {
    return static_cast<long long>(static_cast<unsigned long long>(a) + static_cast<unsigned long long>(b));
  }
};

//! Max (greater) and Min.
template <bool greater>
struct Extreme {
  template <class A>
  WORKBOOK_HOST_DEVICE static constexpr A identity() {
    return greater ? detail::lowest<A>() : detail::highest<A>();
  }
  template <class A>
  WORKBOOK_HOST_DEVICE A operator()(A a, A b) const {
    return detail::wins<greater, true>(b, a) ? b : a;
  }
};
using Max = Extreme<true>;
using Min = Extreme<false>;

//! A value and where it was found: ArgMax's and ArgMin's accumulator. index -1: nothing yet.
template <class A>
struct Located {
  A value;
  long long index;
};

template <bool greater>
struct ArgExtreme {
  template <class L>
  WORKBOOK_HOST_DEVICE static constexpr L identity() {
    return {Extreme<greater>::template identity<decltype(L{}.value)>(), -1};
  }
  template <class A>
  WORKBOOK_HOST_DEVICE Located<A> operator()(Located<A> a, Located<A> b) const {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    if (detail::wins<greater, false>(a.value, b.value)) return a;
    if (detail::wins<greater, false>(b.value, a.value)) return b;
    return a.index < b.index ? a : b;  // equal (+0 and -0 too), or both NaN: the first index
  }
  //! Whether value a beats value b outright: false on a tie (equal values, +0 and -0 too, or two
  //! NaNs), where the first index decides.
  template <class A>
  WORKBOOK_HOST_DEVICE bool wins(A a, A b) const {
    return detail::wins<greater, false>(a, b);
  }
};
using ArgMax = ArgExtreme<true>;
using ArgMin = ArgExtreme<false>;

//! Mean and variance: count, mean and M2 (the sum of squared deviations from the mean), in double.
struct Moments {
  double count;
  double mean;
  double m2;
  WORKBOOK_HOST_DEVICE double variance() const { return count > 0 ? m2 / count : 0.0; }           // population
  WORKBOOK_HOST_DEVICE double sample_variance() const { return count > 1 ? m2 / (count - 1) : 0.0; }
};

//! One element as Moments.
WORKBOOK_HOST_DEVICE inline Moments moments_of(double x) { return {1.0, x, 0.0}; }

struct MeanVariance {
  template <class M>
  WORKBOOK_HOST_DEVICE static constexpr M identity() {
    return {0.0, 0.0, 0.0};
  }
  //! Chan, Golub and LeVeque's merge of two partial results.
  WORKBOOK_HOST_DEVICE Moments operator()(const Moments& a, const Moments& b) const {
    if (a.count == 0) return b;
    if (b.count == 0) return a;
    const double count = a.count + b.count;
    const double delta = b.mean - a.mean;
    return {count, a.mean + delta * (b.count / count), a.m2 + b.m2 + delta * delta * (a.count * b.count / count)};
  }
};

}  // namespace workbook::ops
