// Chapter 15: a reproducible sum, the same bits on every GPU and every launch.
// Differs from chapter 11: the blocks add the input EXACTLY and the last block rounds the exact
// total to float once: the correctly rounded sum, the float nearest to the true sum, which no
// grid, block size or finishing order can change. Fast path: each warp picks a window of 16
// exponents from its first round of loads; an element inside it (or a zero) is added in double
// precision, exactly, into one of four doubles per thread. Slow path: any other element is added
// exactly, with integer atomics, to the block's 320-bit accumulator in shared memory. Each block
// then adds its accumulator to the grid's totals in the workspace, again with integer atomics.
// The workspace, the ticket, the window choice, the flushes of the doubles into integers, the
// carries, the final rounding, the kernel and the launcher are given, in workbook/reproducible.cuh
// (harness/workbook/), which declares the four functions this file defines: the fast path
// (in_window, add_float4), the slow path (add_exactly) and the merge of a block's sum into the
// totals (add_to_totals).
// Check it: `grader/grade --chapter 15_reproducible`
#include "workbook/chapter.cuh"

#include <cuda_runtime.h>

#include "workbook/reproducible.cuh"  // given: all but the four functions below

namespace {

// A block's exact sum added to the grid's totals: its limbs with the carries propagated (digits
// below 2^32, limb 9 signed), so 4096 blocks add up without overflow. Integer atomicAdd wraps
// modulo 2^64, two's-complement addition: the totals are the same whatever order the blocks come
// in. One thread calls it.
__device__ __forceinline__ void add_to_totals(Totals& totals, const long long (&digits)[kLimbs],
                                              unsigned flags) {
  // TODO(merge): add this block's sum to the grid's totals, once, from this one thread.
  //  1. For each limb k with digits[k] != 0: atomicAdd(&totals.limbs[k], its 64 bits as
  //     unsigned long long). Integer atomics wrap modulo 2^64, which is two's-complement
  //     addition: a negative digit adds correctly, and the totals come out the same in every
  //     order the blocks arrive in (chapter 10's float atomics do not).
  //  2. If flags != 0: atomicOr(&totals.flags, flags).
  // The given code then fences, takes a ticket, and the last block takes the totals.
  (void)totals;
  (void)digits;
  (void)flags;
}

// The slow path: one element added exactly to the block's limbs, or its flag set.
__device__ __noinline__ void add_exactly(Accumulator& acc, unsigned u) {
  // TODO(slow path): add the float whose bits are u exactly to acc.
  //  1. biased = (u >> 23) & 0xff, fraction = u & 0x7fffff. biased == 0xff is inf or NaN:
  //     atomicOr(&acc.flags, ...) with kNan if fraction != 0, else kMinusInf or kPlusInf by the
  //     sign bit (u >> 31); then return.
  //  2. +-0 ((u << 1) == 0) adds nothing: return (finish() decides the sign of a zero total).
  //  3. x = +-significand * 2^(scale - 149): significand = fraction | 0x800000 and
  //     scale = biased - 1 for a normal float; significand = fraction and scale = 0 for a
  //     subnormal (biased == 0).
  //  4. shifted = (unsigned long long)significand << (scale % 32) is below 2^55: split it into
  //     its low 32 bits and the rest, negate both for a negative x, and add them with
  //     add_to_limb to limbs scale / 32 and scale / 32 + 1.
  (void)acc;
  (void)u;
}

// Whether x takes the fast path. As given it says no to everything: every element goes to the
// slow path, so once add_exactly is written the sums are already right (and slow).
__device__ __forceinline__ bool in_window(float x, Bounds b) {
  // TODO(fast path, 1): true when b.lo <= |x| < b.hi (fabsf), or when x is +0 or -0. Compare
  // floats, no integer decoding: a NaN fails every comparison, and +-inf fails `< b.hi` (b.hi is
  // at most inf), so both are misses. Every caller must get the same answer for the same x:
  // add_float4 adds exactly the elements for which this is true, add_misses exactly the others.
  (void)x;
  (void)b;
  return false;
}

// Adds r's in-window elements to the lanes' doubles; false if any element missed.
__device__ __forceinline__ bool add_float4(float4 r, Bounds b, double (&lanes)[4]) {
  // TODO(fast path, 2): for each component (x, y, z, w to lanes[0], [1], [2], [3]): in = in_window
  // of it; lanes[k] += in ? static_cast<double>(component) : 0.0. A select, not an if: no branch,
  // so a warp never splits here; the conversion (F2F.F64.F32) and the DADD are exact (the comment
  // above Bounds in workbook/reproducible.cuh says why).
  // Return whether all four were in the window: x && y && z && w of the four bools. In C++ `&&`
  // skips what it need not evaluate, but these operands are plain bools already computed, so the
  // compiler combines them with predicate logic (PLOP3 in the SASS) and no branch. The given
  // add_round calls add_misses for the whole round if any float4 returns false.
  (void)r;
  (void)b;
  (void)lanes;
  return false;
}

}  // namespace

WORKBOOK_TUNED_REDUCE(reduce_tuned, workspace_bytes);
