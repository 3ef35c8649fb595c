#include "judge/exact_sum.hpp"

#include <array>
#include <cstring>

namespace workbook {
namespace {

// A non-negative integer of kDigits 32-bit digits, least significant first: 416 bits, far more
// than any sum of up to 2^64 floats needs (the largest float is below 2^128 = 2^277 units of
// 2^-149; 2^64 of them stay below 2^341).
constexpr int kDigits = 13;
using Magnitude = std::array<std::uint32_t, kDigits>;

// a += value * 2^shift, for value < 2^32.
void add_shifted(Magnitude& a, std::uint64_t value, int shift) {
  const int digit = shift / 32;
  std::uint64_t carry = value << (shift % 32);  // < 2^63
  for (int i = digit; i < kDigits && carry != 0; ++i) {
    const std::uint64_t s = std::uint64_t{a[i]} + (carry & 0xffffffffu);
    a[i] = static_cast<std::uint32_t>(s);
    carry = (carry >> 32) + (s >> 32);
  }
}

bool less(const Magnitude& a, const Magnitude& b) {
  for (int i = kDigits - 1; i >= 0; --i) {
    if (a[i] != b[i]) return a[i] < b[i];
  }
  return false;
}

// a - b, for a >= b.
Magnitude minus(const Magnitude& a, const Magnitude& b) {
  Magnitude d{};
  std::int64_t borrow = 0;
  for (int i = 0; i < kDigits; ++i) {
    std::int64_t t = std::int64_t{a[i]} - b[i] - borrow;
    borrow = t < 0;
    d[i] = static_cast<std::uint32_t>(t + (borrow ? (std::int64_t{1} << 32) : 0));
  }
  return d;
}

bool bit(const Magnitude& a, int i) { return i >= 0 && ((a[i / 32] >> (i % 32)) & 1u); }

// Whether any bit below position i is set.
bool any_below(const Magnitude& a, int i) {
  for (int j = 0; j < i; ++j) {
    if (bit(a, j)) return true;
  }
  return false;
}

int bit_length(const Magnitude& a) {
  for (int i = kDigits * 32 - 1; i >= 0; --i) {
    if (bit(a, i)) return i + 1;
  }
  return 0;
}

float from_bits(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// The float bits of the magnitude N * 2^-149, rounded to nearest, ties to even; +inf if it
// rounds beyond FLT_MAX.
std::uint32_t round_to_float_bits(const Magnitude& m) {
  const int length = bit_length(m);
  if (length <= 24) {
    // Exact. Below 2^23 units it is a subnormal whose bits are N itself; in [2^23, 2^24) it is
    // a normal float of biased exponent 1, whose bits are again N.
    return m[0];
  }
  // Keep the top 24 bits; the bits below decide the rounding.
  const int drop = length - 24;  // bits rounded away
  std::uint32_t keep = 0;
  for (int i = 0; i < 24; ++i) keep |= std::uint32_t{bit(m, drop + i)} << i;
  const bool half = bit(m, drop - 1);
  const bool rest = any_below(m, drop - 1);
  if (half && (rest || (keep & 1u))) ++keep;  // above half, or a tie and keep is odd
  // keep in [2^23, 2^24] is 1.f * 2^23; the value is keep * 2^(drop - 149), so the biased
  // exponent is drop + 1 and the bits are ((drop + 1) << 23) + keep - 2^23; a keep rounded up
  // to 2^24 carries into the exponent, which is what the sum below does.
  const std::uint64_t bits = (std::uint64_t(drop) << 23) + keep;
  return bits >= 0x7f800000u ? 0x7f800000u : static_cast<std::uint32_t>(bits);
}

}  // namespace

float exact_sum_rounded(const float* x, std::size_t n) {
  Magnitude positive{}, negative{};
  bool nan = false, plus_inf = false, minus_inf = false, all_minus_zero = n > 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t u;
    std::memcpy(&u, &x[i], sizeof u);
    const bool sign = u >> 31;
    const std::uint32_t biased = (u >> 23) & 0xffu;
    const std::uint32_t fraction = u & 0x7fffffu;
    if (u != 0x80000000u) all_minus_zero = false;
    if (biased == 0xffu) {
      if (fraction != 0)
        nan = true;
      else
        (sign ? minus_inf : plus_inf) = true;
      continue;
    }
    // x = +-significand * 2^(scale - 149): subnormals (biased 0) have no implicit bit and the
    // scale of biased exponent 1.
    const std::uint32_t significand = biased == 0 ? fraction : (fraction | 0x800000u);
    const int scale = biased == 0 ? 0 : int(biased) - 1;
    add_shifted(sign ? negative : positive, significand, scale);
  }
  if (nan || (plus_inf && minus_inf)) return from_bits(kCanonicalNanBits);
  if (plus_inf) return from_bits(0x7f800000u);
  if (minus_inf) return from_bits(0xff800000u);
  if (positive == negative) return from_bits(all_minus_zero ? 0x80000000u : 0u);
  const bool result_negative = less(positive, negative);
  const Magnitude m = result_negative ? minus(negative, positive) : minus(positive, negative);
  return from_bits(round_to_float_bits(m) | (result_negative ? 0x80000000u : 0u));
}

}  // namespace workbook
