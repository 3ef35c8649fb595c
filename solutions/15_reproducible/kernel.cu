// Chapter 15: a reproducible sum, the same bits on every GPU and every launch.
// Differs from chapter 11: the blocks add the input EXACTLY, in integers, and the last block
// rounds the exact total to float once. Integer addition is associative, so neither the grid,
// nor the block size, nor the order in which blocks finish can change a bit of the result, and
// that result is the correctly rounded sum (round to nearest, ties to even): the float nearest
// to the true sum, which is unique, so a CPU computing it exactly gets the same bits
// (judge/exact_sum.hpp).
//
// Every float is +-m * 2^(p - 149) with m < 2^24 and p = max(e, 1) - 1 (e its biased exponent),
// an integer in units of 2^-149. Fast path: each warp picks a window of 16 exponents
// [low, low + 16) from its first round of loads; an element inside it (or a zero) is a multiple
// of 2^(low - 150) below 2^39 of those units, and is added in double precision, one double per
// float4 lane. A double holds every integer up to 2^53, so these adds never round (a thread
// moves its doubles to integers every 2^11 rounds, long before 2^53). That is a compare, a
// conversion and a DADD per element, no branch. Slow path: any other element (outside the
// window, subnormal, inf or NaN) is added exactly to the block's accumulator in shared memory:
// 10 limbs of 32-bit digits held in 64-bit integers (carry-save), with integer atomicAdd. Both
// paths are exact, so which one an element takes never changes the result.
// (An integer fast path, (+-m) << (e - low) into an int64, issues about 16 instructions and
// two branches per element and reached 1773 GB/s, 40% of the streaming-read ceiling; this one,
// with the merge below, 4216-4222 GB/s at 2^27, 97%: NVIDIA H200, CUDA 13.0, 2026-12-01.)
// Then, as in chapter 11, the last block finishes, but what the blocks hand over is exact: each
// block adds its limbs to the grid's totals in the workspace with 64-bit integer atomicAdd (the
// same total in any order, unlike chapter 10's float atomics), takes a ticket, and the last block
// takes the totals, propagates the carries and rounds.
//
// Policy, and the launch the tests choose (contract.hpp, Launch): any blocks in [1, 4096] and
// threads a multiple of 64 in [64, 1024]; the plain call uses chapter 07's grid (the blocks
// resident at once, no more than the data needs) of 256 threads.
#include "workbook/chapter.cuh"

#include <cuda_runtime.h>

#include "workbook/reproducible.cuh"

namespace {

// A block's exact sum added to the grid's totals: its limbs with the carries propagated (digits
// below 2^32, limb 9 signed), so 4096 blocks add up without overflow. Integer atomicAdd wraps
// modulo 2^64, two's-complement addition: the totals are the same whatever order the blocks come
// in. One thread calls it.
__device__ __forceinline__ void add_to_totals(Totals& totals, const long long (&digits)[kLimbs],
                                              unsigned flags) {
  for (int k = 0; k < kLimbs; ++k) {
    if (digits[k] != 0) {
      atomicAdd(&totals.limbs[k], static_cast<unsigned long long>(digits[k]));
    }
  }
  if (flags != 0) {
    atomicOr(&totals.flags, flags);
  }
}

// The slow path: one element added exactly to the block's limbs, or its flag set.
__device__ __noinline__ void add_exactly(Accumulator& acc, unsigned u) {
  const unsigned biased = (u >> 23) & 0xffu;
  const unsigned fraction = u & 0x7fffffu;
  if (biased == 0xffu) {
    atomicOr(&acc.flags, fraction != 0 ? kNan : ((u >> 31) ? kMinusInf : kPlusInf));
    return;
  }
  if ((u << 1) == 0) {
    return;  // +-0 adds nothing; the sign of an exact zero total is decided at the end
  }
  const unsigned significand = biased != 0 ? (fraction | 0x800000u) : fraction;
  const unsigned scale = biased != 0 ? biased - 1 : 0;  // x = +-significand * 2^(scale - 149)
  const unsigned long long shifted = static_cast<unsigned long long>(significand) << (scale % 32);
  long long low_digit = static_cast<long long>(shifted & 0xffffffffu);  // < 2^55 in two digits
  long long high_digit = static_cast<long long>(shifted >> 32);
  if (u >> 31) {
    low_digit = -low_digit;
    high_digit = -high_digit;
  }
  add_to_limb(acc, scale / 32, low_digit);
  if (high_digit != 0) {
    add_to_limb(acc, scale / 32 + 1, high_digit);
  }
}

// Whether x takes the fast path: the same float comparisons for every caller.
__device__ __forceinline__ bool in_window(float x, Bounds b) {
  const float a = fabsf(x);  // NaN fails every comparison: a miss
  return (a >= b.lo && a < b.hi) || a == 0.0f;
}

// Adds r's in-window elements to the lanes' doubles; false if any element missed.
__device__ __forceinline__ bool add_float4(float4 r, Bounds b, double (&lanes)[4]) {
  const bool x = in_window(r.x, b), y = in_window(r.y, b), z = in_window(r.z, b), w = in_window(r.w, b);
  lanes[0] += x ? static_cast<double>(r.x) : 0.0;
  lanes[1] += y ? static_cast<double>(r.y) : 0.0;
  lanes[2] += z ? static_cast<double>(r.z) : 0.0;
  lanes[3] += w ? static_cast<double>(r.w) : 0.0;
  return x && y && z && w;
}

}  // namespace

WORKBOOK_TUNED_REDUCE(reduce_tuned, workspace_bytes);
