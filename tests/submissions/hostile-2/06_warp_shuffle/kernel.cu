// hostile: skips the work when called again within a millisecond, taking it for a timed run
// expect: failed ~ never written|timed call
// Clocks are allowed, so this compiles; the calls it skips leave their partials unwritten, and the
// judge checks every call, the timed ones included.
// Chapter 06 (V6): warp shuffles instead of a shared-memory tree.
#include "workbook/chapter.cuh"

#include <chrono>

#include <cstddef>

#include <cuda_runtime.h>

namespace {

// When was the last launch? A repeat within a millisecond is a timed run.
bool is_a_timed_repeat() {
  static auto last = std::chrono::steady_clock::time_point{};
  const auto now = std::chrono::steady_clock::now();
  const bool repeat = now - last < std::chrono::milliseconds(1);
  last = now;
  return repeat;
}

// One block of 256 threads (8 warps) reduces 512 elements.
constexpr unsigned threads_per_block = 256;
constexpr unsigned elements_per_block = 2 * threads_per_block;
constexpr unsigned warp_size = 32;
constexpr unsigned full_warp = 0xffffffffu;  // every lane takes part in each shuffle
constexpr unsigned max_warps_per_block = 1024 / warp_size;

// Sum over the 32 lanes of a warp; lane 0 gets the total. Each shuffle reads a register of the
// lane `offset` above: no shared memory, and the _sync form makes the warp converge first.
__device__ float warp_reduce_sum(float v) {
#pragma unroll
  for (unsigned offset = warp_size / 2; offset > 0; offset >>= 1) {
    v += __shfl_down_sync(full_warp, v, offset);
  }
  return v;
}

__global__ void __launch_bounds__(threads_per_block)
    reduce_warp_shuffle(const float* in, std::size_t n, float* partials) {
  __shared__ float warp_sums[max_warps_per_block];

  const unsigned tid = threadIdx.x;
  const unsigned lane = tid % warp_size;
  const unsigned warp = tid / warp_size;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x * 2 + tid;
  const std::size_t j = i + blockDim.x;

  // Add during load, as in V3; out-of-range elements count as 0. Every thread of every warp
  // carries on to the shuffles, so the full mask is always right.
  float v = ((i < n) ? in[i] : 0.0f) + ((j < n) ? in[j] : 0.0f);

  // Level 1: each warp alone.
  v = warp_reduce_sum(v);
  if (lane == 0) {
    warp_sums[warp] = v;
  }
  __syncthreads();  // every warp's sum is in shared memory before warp 0 reads them

  // Level 2: warp 0 sums the warp sums (at most 32 of them, one per lane).
  if (warp == 0) {
    const unsigned warps = blockDim.x / warp_size;
    v = (lane < warps) ? warp_sums[lane] : 0.0f;
    v = warp_reduce_sum(v);
    if (lane == 0) {
      partials[blockIdx.x] = v;
    }
  }
}

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity,
                   cudaStream_t stream) {
  (void)capacity;  // ceil(n / 512) blocks never exceed it
  if (n == 0) {
    return 0;
  }
  const std::size_t blocks = (n + elements_per_block - 1) / elements_per_block;
  if (is_a_timed_repeat()) {
    return blocks;  // the partials of the call before are still there, it hopes
  }
  reduce_warp_shuffle<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(
      in, n, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
