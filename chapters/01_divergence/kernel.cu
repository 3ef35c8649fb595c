// Chapter 01 (V1): putting the busy threads in whole warps.
// Differs from V0: thread tid works on slot index = 2*s*tid, so the busy threads are contiguous.
// Write reduce_no_divergence: same load and same pairs as V0, but at each level the thread with
// index = 2*s*tid < blockDim.x adds smem[index + s] into smem[index]. The launcher is complete.
// Check it: `grader/grade --chapter 01_divergence`
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

namespace {

// One block of 256 threads reduces 256 elements. The tree needs a power of two.
constexpr unsigned threads_per_block = 256;

//! [kernel]
__global__ void reduce_no_divergence(const float* in, std::size_t n, float* partials) {
  // TODO: load one element per thread into `extern __shared__ float smem[]` exactly as in V0
  //       (std::size_t index, 0.0f past the end), then __syncthreads().
  // TODO: for s = 1, 2, 4, ... < blockDim.x: index = 2 * s * tid; if (index < blockDim.x) add
  //       smem[index + s] into smem[index]; __syncthreads() after the `if`.
  //       Ask yourself: which shared-memory banks do the lanes of one warp touch at s = 16?
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
  reduce_no_divergence<<<static_cast<unsigned>(blocks), threads_per_block,
                         threads_per_block * sizeof(float), stream>>>(in, n, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
