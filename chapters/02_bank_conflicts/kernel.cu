// Chapter 02 (V2): sequential addressing, to remove shared-memory bank conflicts.
// Differs from V1: the stride starts at blockDim.x / 2 and halves, and thread tid adds slot
// tid + s into slot tid, so a warp touches 32 consecutive words, one per bank.
// Write reduce_sequential with that loop: `if (tid < s) smem[tid] += smem[tid + s];`.
// The launcher is complete.
// Check it: `grader/grade --chapter 02_bank_conflicts`
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

namespace {

// One block of 256 threads reduces 256 elements. The tree needs a power of two.
constexpr unsigned threads_per_block = 256;

//! [kernel]
__global__ void reduce_sequential(const float* in, std::size_t n, float* partials) {
  // TODO: load one element per thread into `extern __shared__ float smem[]` as in V0
  //       (std::size_t index, 0.0f past the end), then __syncthreads().
  // TODO: for (unsigned s = blockDim.x / 2; s > 0; s >>= 1): if (tid < s) add smem[tid + s]
  //       into smem[tid]; __syncthreads() after the `if`, reached by every thread.
  // TODO: thread 0 writes smem[0] to partials[blockIdx.x].
}
//! [kernel]

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity,
                   cudaStream_t stream) {
  (void)capacity;  // ceil(n / 256) blocks never exceed it
  if (n == 0) {
    return 0;
  }
  // One element per thread: ceil(n / threads_per_block) blocks.
  const std::size_t blocks = (n + threads_per_block - 1) / threads_per_block;
  reduce_sequential<<<static_cast<unsigned>(blocks), threads_per_block,
                      threads_per_block * sizeof(float), stream>>>(in, n, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
