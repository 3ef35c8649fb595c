// Chapter 15's given code: the exact sum, all but the four functions the chapter writes.
//
// chapters/15_reproducible/kernel.cu includes this file and defines the four functions declared
// under "What the chapter writes" below: the fast path (in_window, add_float4), the slow path
// (add_exactly) and the merge of a block's sum into the grid's totals (add_to_totals). Everything
// else is here: the accumulator and the workspace (Accumulator, Totals, add_to_limb), the window
// (warp_window, window_bounds), the round loop (add_round, add_misses, add_scalar), the flushes of
// the doubles into integers (take_lanes, flush_thread, flush_warp), the carries and the rounding
// (propagate_carries, round_to_float_bits), the sign of a zero (all_minus_zero, finish), the
// kernel with its ticket (reduce_exact) and the launcher (reduce_tuned, workspace_bytes). The
// reference (solutions/15_reproducible/kernel.cu) includes the same file, so what the stub gives
// is what the reference uses. chapters/15_reproducible/lesson.md explains every part.
//
// This file is part of one chapter's translation unit, not a library: its names live in that
// file's anonymous namespace, where the chapter's own definitions complete them. The grader lets
// only chapter 15 include it (its "given" in grader/manifest.json).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "workbook/block_pass.cuh"
#include "workbook/contract.hpp"

namespace {

using workbook::block_pass::full_warp;
using workbook::block_pass::loads_in_flight;
using workbook::block_pass::Split;
using workbook::block_pass::split_at_16_bytes;
using workbook::block_pass::warp_size;

constexpr int kLimbs = 10;          // 320 bits, 2^-149 to 2^171: exact for any 2^42 floats
constexpr unsigned kWindow = 16;    // exponents on the fast path
constexpr unsigned kLowest = 1;     // the window's first exponent lies in [kLowest, kHighest]
constexpr unsigned kHighest = 255 - kWindow;  // 239: the window ends at 254, below inf/NaN
// A window element is below 2^39 units of 2^(low - 150), and each of a thread's four doubles
// takes loads_in_flight elements a round: after 2^11 rounds a double is below 2^(11 + 2 + 39) =
// 2^52 units, still exact; the thread then moves its doubles to the block's limbs.
constexpr unsigned kFlushRounds = 1u << 11;
static_assert(kFlushRounds * 4 * 2 <= (1u << 14), "a double's sum stays below 2^53 units");
constexpr unsigned kDefaultThreads = workbook::block_pass::threads_per_block;  // 256
constexpr unsigned kMaxThreads = workbook::kMaxTunedThreads;              // 1024
constexpr unsigned kMaxBlocks = workbook::kMaxTunedBlocks;                // 4096

// Special values seen, OR-ed together.
constexpr unsigned kPlusInf = 1, kMinusInf = 2, kNan = 4;

// The exact sum of a block: value = sum over i of limbs[i] * 2^(32 i) * 2^-149. Each limb is a
// signed 64-bit integer kept in an unsigned one (atomicAdd wraps modulo 2^64, which is
// two's-complement addition).
struct Accumulator {
  unsigned long long limbs[kLimbs];
  unsigned flags;
};

// The workspace: the grid's exact total so far, in the same limbs (each block adds its own with
// integer atomics), the flags, and the ticket counter. All zero between launches: the last block
// takes the totals and leaves zeros.
struct Totals {
  unsigned long long limbs[kLimbs];
  unsigned flags;
  unsigned counter;
};

__device__ __forceinline__ void add_to_limb(Accumulator& acc, unsigned limb, long long value) {
  atomicAdd(&acc.limbs[limb], static_cast<unsigned long long>(value));
}

// The fast path. An element x whose biased exponent lies in the window [low, low + 16), that is
// 2^(low - 127) <= |x| < 2^(low - 111), is a multiple of 2^(low - 150) below 2^39 of those units;
// so is 0. Such elements are added in double precision, one double per float4 lane: a double
// holds every integer up to 2^53 exactly, so up to 2^14 of them add with no rounding at all, and
// the given loop moves a thread's doubles to integers long before that (kFlushRounds,
// take_lanes). Any other element (tiny, subnormal, too large, inf, NaN) is a miss: the given
// add_misses and add_scalar hand it to add_exactly. Both paths are exact, so the result never
// depends on which one an element takes; only the time does.
struct Bounds {
  float lo, hi;  // 2^(low - 127) and 2^(low - 111) (inf for the highest window)
};

// The window's bounds as floats: a biased exponent shifted into place, with a zero significand.
__device__ __forceinline__ Bounds window_bounds(unsigned low) {
  return {__uint_as_float(low << 23), __uint_as_float((low + kWindow) << 23)};
}

// ---- What the chapter writes (chapters/15_reproducible/kernel.cu defines these four) ----

// A block's exact sum added to the grid's totals: its limbs with the carries propagated (digits
// below 2^32, limb 9 signed), so 4096 blocks add up without overflow. Integer atomicAdd wraps
// modulo 2^64, two's-complement addition: the totals are the same whatever order the blocks come
// in. One thread calls it.
__device__ __forceinline__ void add_to_totals(Totals& totals, const long long (&digits)[kLimbs],
                                              unsigned flags);

// The slow path: one element added exactly to the block's limbs, or its flag set.
__device__ __noinline__ void add_exactly(Accumulator& acc, unsigned u);

// Whether x takes the fast path: b.lo <= |x| < b.hi, or x is +0 or -0. Every caller gets the same
// answer for the same x: add_float4 adds exactly these elements, add_misses exactly the others.
__device__ __forceinline__ bool in_window(float x, Bounds b);

// Adds r's in-window elements to the lanes' doubles; false if any element missed.
__device__ __forceinline__ bool add_float4(float4 r, Bounds b, double (&lanes)[4]);

// ---- The rest is given ----

// The elements of r that add_float4 left out, added exactly to the block's limbs. Rare.
__device__ inline __noinline__ void add_misses(float4 r, Bounds b, Accumulator& acc) {
  if (!in_window(r.x, b)) add_exactly(acc, __float_as_uint(r.x));
  if (!in_window(r.y, b)) add_exactly(acc, __float_as_uint(r.y));
  if (!in_window(r.z, b)) add_exactly(acc, __float_as_uint(r.z));
  if (!in_window(r.w, b)) add_exactly(acc, __float_as_uint(r.w));
}

// One scalar element (the 0-3 head and tail elements).
__device__ __forceinline__ void add_scalar(float x, Bounds b, double (&lanes)[4], Accumulator& acc) {
  if (in_window(x, b)) {
    lanes[0] += static_cast<double>(x);
  } else {
    add_exactly(acc, __float_as_uint(x));
  }
}

// The lanes' doubles as one integer in units of 2^(low - 150): each double is such a multiple
// below 2^53 units, so scaling by a power of two and converting are exact. The lanes are reset.
__device__ __forceinline__ unsigned long long take_lanes(double (&lanes)[4], unsigned low) {
  const double units = __longlong_as_double(static_cast<long long>(1023 + 150 - low) << 52);  // 2^(150 - low)
  long long total = 0;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    total += __double2ll_rn(lanes[k] * units);
    lanes[k] = 0.0;
  }
  return static_cast<unsigned long long>(total);
}

// A window's value is window * 2^(low - 1) units of 2^-149 (an element in it is m * 2^(e - 1)
// units, stored as m << (e - low)). Split that signed 96-bit number into two 32-bit digits and a
// signed top at limbs L, L + 1, L + 2 for L = (low - 1) / 32 (at most 7).
struct Digits {
  long long d0, d1, d2;
  unsigned limb;
};

__device__ __forceinline__ Digits window_digits(unsigned long long window, unsigned low) {
  const unsigned q = low - 1;
  const unsigned offset = q % 32;
  const long long signed_window = static_cast<long long>(window);
  const unsigned long long bottom = window << offset;  // bits [0, 64) of window * 2^offset
  const long long top = offset != 0 ? (signed_window >> (64 - offset)) : (signed_window >> 63);
  return {static_cast<long long>(bottom & 0xffffffffu), static_cast<long long>(bottom >> 32), top,
          q / 32};
}

// One thread's window into the block's limbs (the rare flush inside the loop).
__device__ __forceinline__ void flush_thread(Accumulator& acc, unsigned long long window, unsigned low) {
  const Digits d = window_digits(window, low);
  add_to_limb(acc, d.limb, d.d0);
  add_to_limb(acc, d.limb + 1, d.d1);
  add_to_limb(acc, d.limb + 2, d.d2);
}

// Every lane's window into the block's limbs: the lanes of a warp share `low`, so their digits
// add up lane by lane (32 digits below 2^32 stay far below 2^63), and lane 0 does the atomics.
// Every lane of the warp must call it.
__device__ __forceinline__ void flush_warp(Accumulator& acc, unsigned long long window, unsigned low) {
  Digits d = window_digits(window, low);
#pragma unroll
  for (unsigned offset = warp_size / 2; offset > 0; offset >>= 1) {
    d.d0 += __shfl_down_sync(full_warp, d.d0, offset);
    d.d1 += __shfl_down_sync(full_warp, d.d1, offset);
    d.d2 += __shfl_down_sync(full_warp, d.d2, offset);
  }
  if (threadIdx.x % warp_size == 0 && (d.d0 | d.d1 | d.d2) != 0) {
    add_to_limb(acc, d.limb, d.d0);
    add_to_limb(acc, d.limb + 1, d.d1);
    add_to_limb(acc, d.limb + 2, d.d2);
  }
}

// The window of a warp: its 16 exponents end one above the largest exponent among the lanes'
// first round of loads, so data of similar magnitude takes the fast path. Any choice is exact.
// Every lane of the warp calls it (lanes past the data hold zeros).
__device__ __forceinline__ unsigned warp_window(const float4 (&r)[loads_in_flight]) {
  const auto e = [](float x) { return (__float_as_uint(x) >> 23) & 0xffu; };
  unsigned top = 0;
#pragma unroll
  for (unsigned k = 0; k < loads_in_flight; ++k) {
    top = max(top, max(max(e(r[k].x), e(r[k].y)), max(e(r[k].z), e(r[k].w))));
  }
#pragma unroll
  for (unsigned offset = warp_size / 2; offset > 0; offset >>= 1) {
    top = max(top, __shfl_xor_sync(full_warp, top, offset));
  }
  const int low = static_cast<int>(top) - static_cast<int>(kWindow) + 2;
  return static_cast<unsigned>(min(max(low, static_cast<int>(kLowest)), static_cast<int>(kHighest)));
}

// One round: the in-window elements into the lanes' doubles, the rest exactly into the limbs.
__device__ __forceinline__ void add_round(const float4 (&r)[loads_in_flight], Bounds b, double (&lanes)[4],
                                          Accumulator& acc) {
  bool all_in = true;
#pragma unroll
  for (unsigned k = 0; k < loads_in_flight; ++k) {
    all_in &= add_float4(r[k], b, lanes);
  }
  if (!all_in) {
#pragma unroll
    for (unsigned k = 0; k < loads_in_flight; ++k) {
      add_misses(r[k], b, acc);
    }
  }
}

// The carries propagated: limbs 0-8 become digits in [0, 2^32) and limb 9 holds the rest,
// signed (an arithmetic shift is a floor division by 2^32, so negative limbs carry correctly).
__device__ __forceinline__ void propagate_carries(long long limbs[kLimbs]) {
  for (int i = 0; i + 1 < kLimbs; ++i) {
    const long long carry = limbs[i] >> 32;
    limbs[i] -= carry * (1ll << 32);
    limbs[i + 1] += carry;
  }
}

// The float nearest to limbs * 2^-149, ties to even (+-inf beyond FLT_MAX's rounding range).
// `limbs` have their carries propagated. *zero is set when the exact value is 0.
__device__ __forceinline__ unsigned round_to_float_bits(const long long limbs[kLimbs], bool* zero) {
  // Sign and magnitude: a negative value (limb 9 < 0) is negated as a 320-bit two's complement.
  unsigned d[kLimbs];
  for (int i = 0; i < kLimbs; ++i) {
    d[i] = static_cast<unsigned>(limbs[i]);
  }
  const bool negative = limbs[kLimbs - 1] < 0;
  if (negative) {
    unsigned long long carry = 1;
    for (int i = 0; i < kLimbs; ++i) {
      const unsigned long long x = static_cast<unsigned long long>(~d[i]) + carry;
      d[i] = static_cast<unsigned>(x);
      carry = x >> 32;
    }
  }
  int top = kLimbs - 1;
  while (top >= 0 && d[top] == 0) {
    --top;
  }
  *zero = top < 0;
  if (top < 0) {
    return 0;
  }
  const int length = 32 * top + (32 - __clz(d[top]));  // bits in the magnitude
  unsigned bits;
  if (length <= 24) {
    // Exact: a subnormal (below 2^23 units) or the first binade of normals; either way the
    // float's bits are the magnitude itself.
    bits = d[0];
  } else {
    const int drop = length - 24;  // the bits rounded away
    const int j = drop / 32;
    const unsigned long long pair =
        d[j] | (j + 1 < kLimbs ? static_cast<unsigned long long>(d[j + 1]) << 32 : 0ull);
    unsigned keep = static_cast<unsigned>(pair >> (drop % 32)) & 0xffffffu;  // 1.f * 2^23
    const int h = drop - 1;  // the half bit
    const bool half = (d[h / 32] >> (h % 32)) & 1u;
    bool rest = (d[h / 32] & ((1u << (h % 32)) - 1u)) != 0;
    for (int i = 0; i < h / 32; ++i) {
      rest = rest || d[i] != 0;
    }
    if (half && (rest || (keep & 1u))) {
      ++keep;  // above half, or a tie and keep is odd: round up (2^24 carries into the exponent)
    }
    // keep * 2^(drop - 149) is the float of biased exponent drop + 1.
    const unsigned long long wide = (static_cast<unsigned long long>(drop) << 23) + keep;
    bits = wide >= 0x7f800000ull ? 0x7f800000u : static_cast<unsigned>(wide);
  }
  return bits | (negative ? 0x80000000u : 0u);
}

// Whether every element of in[0, n) is -0.0 (n > 0): the sign of an exact zero sum. Only an
// exact zero total asks, and the first element that is not -0.0 ends the scan. The whole block
// calls it.
__device__ __forceinline__ bool all_minus_zero(const float* in, std::size_t n) {
  if (n == 0) {
    return false;
  }
  for (std::size_t base = 0; base < n; base += blockDim.x) {
    const std::size_t j = base + threadIdx.x;
    const bool other = j < n && __float_as_uint(in[j]) != 0x80000000u;
    if (__syncthreads_or(other)) {
      return false;
    }
  }
  return true;
}

// The block that holds the exact total in `acc` rounds it and writes *out. The whole block
// calls it, after a barrier that follows the last change to acc.
__device__ __forceinline__ void finish(Accumulator& acc, const float* in, std::size_t n, float* out) {
  __shared__ unsigned result;
  __shared__ bool exact_zero;
  if (threadIdx.x == 0) {
    long long limbs[kLimbs];
    for (int i = 0; i < kLimbs; ++i) {
      limbs[i] = static_cast<long long>(acc.limbs[i]);
    }
    propagate_carries(limbs);
    bool zero = false;
    const unsigned rounded = round_to_float_bits(limbs, &zero);
    const unsigned flags = acc.flags;
    exact_zero = false;
    if ((flags & kNan) || ((flags & kPlusInf) && (flags & kMinusInf))) {
      result = 0x7fc00000u;  // NaN
    } else if (flags & kPlusInf) {
      result = 0x7f800000u;
    } else if (flags & kMinusInf) {
      result = 0xff800000u;
    } else {
      result = rounded;
      exact_zero = zero;
    }
  }
  __syncthreads();
  if (exact_zero) {  // -0.0 only if every element is -0.0 (IEEE: x + (-x) is +0.0)
    const bool minus = all_minus_zero(in, n);
    if (threadIdx.x == 0 && minus) {
      result = 0x80000000u;
    }
  }
  if (threadIdx.x == 0) {
    *out = __uint_as_float(result);
  }
}

__global__ void __launch_bounds__(kMaxThreads)
    reduce_exact(const float* in, std::size_t n, std::size_t head, const float4* body,
                 std::size_t body_vectors, std::size_t tail_begin, Totals* totals, float* out) {
  __shared__ Accumulator acc;
  const unsigned tid = threadIdx.x;
  if (tid < kLimbs) {
    acc.limbs[tid] = 0;
  }
  if (tid == 0) {
    acc.flags = 0;
  }
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + tid;

  // The first round of loads, every lane (zeros past the data): it also picks the warp's window,
  // so no load waits for another before the loop starts.
  float4 r[loads_in_flight];
#pragma unroll
  for (unsigned k = 0; k < loads_in_flight; ++k) {
    const std::size_t j = i + k * stride;
    r[k] = (j < body_vectors) ? __ldg(&body[j]) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }
  const unsigned low = warp_window(r);
  const Bounds bounds = window_bounds(low);
  __syncthreads();  // the limbs are zero before any slow-path atomicAdd

  double lanes[4] = {0.0, 0.0, 0.0, 0.0};
  if (blockIdx.x == 0) {  // the 0-3 scalar head and tail elements, as in chapter 07
    if (tid < head) {
      add_scalar(in[tid], bounds, lanes, acc);
    }
    if (tid < n - tail_begin) {
      add_scalar(in[tail_begin + tid], bounds, lanes, acc);
    }
  }
  // One copy of the round's code, for the first round, the full rounds and the last, partial one.
  unsigned rounds = 0;
  while (true) {
    add_round(r, bounds, lanes, acc);
    i += loads_in_flight * stride;
    if (i >= body_vectors) {
      break;
    }
    if (++rounds == kFlushRounds) {  // before a double could round
      flush_thread(acc, take_lanes(lanes, low), low);
      rounds = 0;
    }
    if (i + (loads_in_flight - 1) * stride < body_vectors) {
#pragma unroll
      for (unsigned k = 0; k < loads_in_flight; ++k) {
        r[k] = __ldg(&body[i + k * stride]);
      }
    } else {
#pragma unroll
      for (unsigned k = 0; k < loads_in_flight; ++k) {
        const std::size_t j = i + k * stride;
        r[k] = (j < body_vectors) ? __ldg(&body[j]) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      }
    }
  }
  const unsigned long long window = take_lanes(lanes, low);
  flush_warp(acc, window, low);
  __syncthreads();  // every window and slow-path add is in acc

  if (gridDim.x == 1) {  // a single block holds the whole sum
    finish(acc, in, n, out);
    return;
  }

  __shared__ bool is_last_block;
  if (tid == 0) {
    long long limbs[kLimbs];
    for (int k = 0; k < kLimbs; ++k) {
      limbs[k] = static_cast<long long>(acc.limbs[k]);
    }
    propagate_carries(limbs);
    add_to_totals(*totals, limbs, acc.flags);
    __threadfence();  // release: this block's adds are in the totals before its ticket
    const unsigned ticket = atomicAdd(&totals->counter, 1u);
    const bool last = ticket == gridDim.x - 1;
    if (last) {
      __threadfence();  // acquire: the totals read below hold every block's adds
      for (int k = 0; k < kLimbs; ++k) {
        acc.limbs[k] = atomicExch(&totals->limbs[k], 0ull);  // taken, and zero for the next launch
      }
      acc.flags = atomicExch(&totals->flags, 0u);
      totals->counter = 0;
    }
    is_last_block = last;
  }
  __syncthreads();
  if (is_last_block) {
    finish(acc, in, n, out);
  }
}

// The plain call's grid, as in chapter 07: it depends on n alone.
unsigned default_blocks(std::size_t n) {
  const std::size_t blocks =
      workbook::block_pass::grid_blocks(n, workbook::block_pass::resident_blocks<reduce_exact>());
  return static_cast<unsigned>(std::min<std::size_t>(blocks, kMaxBlocks));
}

// The totals and the ticket, whatever n and whatever grid.
std::size_t workspace_bytes(std::size_t /*n*/) { return sizeof(Totals); }

void reduce_tuned(const float* in, std::size_t n, float* out, void* workspace, cudaStream_t stream,
                  workbook::Launch launch) {
  const unsigned blocks =
      launch.blocks != 0 ? std::min(launch.blocks, kMaxBlocks) : default_blocks(n);
  unsigned threads = launch.threads != 0 ? launch.threads : kDefaultThreads;
  threads = std::min(std::max(threads / 64 * 64, 64u), kMaxThreads);  // whole pairs of warps

  const Split s = split_at_16_bytes(in, n);
  reduce_exact<<<blocks, threads, 0, stream>>>(in, n, s.head, s.body, s.body_vectors,
                                               s.tail_begin, static_cast<Totals*>(workspace), out);
}

}  // namespace
