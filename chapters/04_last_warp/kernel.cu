// Chapter 04 (V4): unrolling the last warp.
// Differs from V3: once s <= 32 only warp 0 works, so the last six levels run in that warp with
// __syncwarp() instead of the loop and its __syncthreads().
// Write reduce_unroll_last_warp: V3's load, the block-wide tree while s > 32, then warp 0 folds
// smem[0, 64) to one value. The launcher is complete.
// Check it: `grader/grade --chapter 04_last_warp`
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

namespace {

// One block of 256 threads reduces 512 elements. The tree needs a power of two >= 64.
constexpr unsigned threads_per_block = 256;
constexpr unsigned elements_per_block = 2 * threads_per_block;

//! [warp_todo]
// TODO: write `__device__ float warp_reduce_last(float* smem, unsigned tid)`, called by the 32
//       threads of warp 0, returning the sum of smem[0, 64) in lane 0. Keep the running sum in
//       a register v: v = smem[tid] + smem[tid + 32]; then for each s of 16, 8, 4, 2, 1: write v
//       to smem[tid], __syncwarp(), v += smem[tid + s], and, before the next level's write,
//       __syncwarp() again. The sum of the last level (s = 1) stays in v: lane 0 returns it
//       without writing it back, so no __syncwarp() is needed after that read.
//       Do not use the well-known shortcut `vsmem[tid] += vsmem[tid + 16]; ...` through a
//       volatile pointer with no __syncwarp(): it assumes the 32 lanes run in lockstep, which
//       Volta and later GPUs (independent thread scheduling) do not promise, so a lane may read
//       its partner's slot before the partner has written it. That is a data race.
//! [warp_todo]

//! [kernel_todo]
__global__ void reduce_unroll_last_warp(const float* in, std::size_t n, float* partials) {
  // TODO: V3's load: two elements per thread (std::size_t indices, 0.0f when out of range),
  //       their sum in `extern __shared__ float smem[]`, then __syncthreads().
  // TODO: the block-wide levels while s > 32: if (tid < s) smem[tid] += smem[tid + s];
  //       __syncthreads() after each level.
  // TODO: if (tid < 32), call warp_reduce_last; thread 0 writes the result to
  //       partials[blockIdx.x].
}
//! [kernel_todo]

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity,
                   cudaStream_t stream) {
  (void)capacity;  // ceil(n / 512) blocks never exceed it
  if (n == 0) {
    return 0;
  }
  const std::size_t blocks = (n + elements_per_block - 1) / elements_per_block;
  reduce_unroll_last_warp<<<static_cast<unsigned>(blocks), threads_per_block,
                            threads_per_block * sizeof(float), stream>>>(in, n, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
