// Chapter 03 (V3): giving the idle threads work by adding during the load.
// Differs from V2: each block covers 2 * blockDim.x elements and each thread adds its two
// elements while loading, so only half as many blocks are needed.
// Write reduce_add_during_load (the load changes; the tree is V2's), then halve the grid in the
// launcher.
// Check it: `grader/grade --chapter 03_idle_threads`
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

namespace {

// One block of 256 threads reduces 512 elements. The tree needs a power of two.
constexpr unsigned threads_per_block = 256;

//! [kernel]
__global__ void reduce_add_during_load(const float* in, std::size_t n, float* partials) {
  // TODO: the block's slice starts at blockIdx.x * 2 * blockDim.x (as std::size_t). Thread tid
  //       loads i = start + tid and j = i + blockDim.x (both halves stay coalesced), each as
  //       0.0f when out of range, and stores their sum in `extern __shared__ float smem[]`.
  //       __syncthreads() before the tree.
  // TODO: the tree of V2: for s = blockDim.x / 2 down to 1, if (tid < s) smem[tid] +=
  //       smem[tid + s]; __syncthreads() after each level.
  // TODO: thread 0 writes smem[0] to partials[blockIdx.x].
}
//! [kernel]

//! [launcher]
std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity,
                   cudaStream_t stream) {
  (void)capacity;  // the number of blocks never exceeds it
  if (n == 0) {
    return 0;
  }
  // TODO: each block now covers 2 * threads_per_block elements: launch ceil(n / 512) blocks.
  const std::size_t blocks = (n + threads_per_block - 1) / threads_per_block;
  reduce_add_during_load<<<static_cast<unsigned>(blocks), threads_per_block,
                           threads_per_block * sizeof(float), stream>>>(in, n, partials);
  return blocks;
}
//! [launcher]

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
