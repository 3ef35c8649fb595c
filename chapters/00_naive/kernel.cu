// Chapter 00 (V0): the naive tree reduction, and why its warps diverge.
// Write reduce_naive: each thread loads one element into shared memory, then at each level s
// (1, 2, 4, ...) the threads with tid % (2*s) == 0 add the slot s to their right; thread 0
// writes the block's sum to partials[blockIdx.x]. The launcher is complete.
// Check it: `grader/grade --chapter 00_naive`
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

namespace {

// One block of 256 threads reduces 256 elements. The tree needs a power of two.
constexpr unsigned threads_per_block = 256;

//! [kernel]
__global__ void reduce_naive(const float* in, std::size_t n, float* partials) {
  // TODO: declare the block's shared array, `extern __shared__ float smem[];` (blockDim.x floats,
  //       sized by the launcher).
  // TODO: compute this thread's element index as a std::size_t (n may exceed 2^31):
  //       static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x.
  // TODO: load in[i] into smem[tid], or 0.0f when i >= n (never read past the end), then
  //       __syncthreads() so every slot is loaded before anyone reads a neighbour's.
  // TODO: for s = 1, 2, 4, ... < blockDim.x: if (tid % (2 * s) == 0) add smem[tid + s] into
  //       smem[tid]; then __syncthreads(), outside the `if`, so every thread reaches it.
  //       Declare tid and s `unsigned`: a signed `%` compiles to a longer instruction sequence.
  // TODO: thread 0 writes smem[0] to partials[blockIdx.x].
}
//! [kernel]

//! [launcher]
std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity,
                   cudaStream_t stream) {
  (void)capacity;  // ceil(n / 256) blocks never exceed it
  if (n == 0) {
    return 0;
  }
  // One element per thread: ceil(n / threads_per_block) blocks.
  const std::size_t blocks = (n + threads_per_block - 1) / threads_per_block;
  reduce_naive<<<static_cast<unsigned>(blocks), threads_per_block,
                 threads_per_block * sizeof(float), stream>>>(in, n, partials);
  return blocks;
}
//! [launcher]

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
