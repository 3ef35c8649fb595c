// Chapter 06 (V6): reducing in registers with warp shuffles.
// Differs from V5: warps sum their values with __shfl_down_sync instead of a shared-memory tree;
// shared memory holds only one float per warp, behind a single __syncthreads().
// Write a warp_reduce_sum helper and reduce_warp_shuffle. The launcher is complete.
// Check it: `grader/grade --chapter 06_warp_shuffle`
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

namespace {

// One block of 256 threads (8 warps) reduces 512 elements.
constexpr unsigned threads_per_block = 256;
constexpr unsigned elements_per_block = 2 * threads_per_block;

//! [warp_todo]
// TODO: write `__device__ float warp_reduce_sum(float v)`: for offset = 16, 8, 4, 2, 1,
//       v += __shfl_down_sync(0xffffffffu, v, offset); lane 0 ends with the warp's total.
//! [warp_todo]

//! [kernel_todo]
__global__ void __launch_bounds__(threads_per_block)
    reduce_warp_shuffle(const float* in, std::size_t n, float* partials) {
  // TODO: `__shared__ float warp_sums[32];` (one slot per warp, at most 32 warps a block).
  // TODO: load two elements per thread as in V3 (std::size_t indices, 0.0f when out of range)
  //       into a register v; no shared memory for the values themselves.
  // TODO: v = warp_reduce_sum(v) in every warp (all 32 lanes, so the full mask is right);
  //       lane 0 (tid % 32 == 0) stores v in warp_sums[tid / 32].
  // TODO: __syncthreads(), reached by every thread, so warp 0 sees every warp's sum.
  // TODO: in warp 0: v = lane < blockDim.x / 32 ? warp_sums[lane] : 0.0f; warp_reduce_sum again;
  //       lane 0 writes partials[blockIdx.x].
}
//! [kernel_todo]

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity,
                   cudaStream_t stream) {
  (void)capacity;  // ceil(n / 512) blocks never exceed it
  if (n == 0) {
    return 0;
  }
  const std::size_t blocks = (n + elements_per_block - 1) / elements_per_block;
  reduce_warp_shuffle<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(
      in, n, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
