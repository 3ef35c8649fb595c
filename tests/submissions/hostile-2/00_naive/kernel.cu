// hostile: includes a device that never ends, to hang or exhaust the grader's preprocessor
// expect: rejected ~ preprocessing did not finish
// Chapter 00 (V0): the naive tree reduction.
#include "workbook/chapter.cuh"

#include "/dev/zero"

#include <cstddef>

#include <cuda_runtime.h>

namespace {

// One block of 256 threads reduces 256 elements. The tree needs a power of two.
constexpr unsigned threads_per_block = 256;

__global__ void reduce_naive(const float* in, std::size_t n, float* partials) {
  extern __shared__ float smem[];  // blockDim.x floats, sized at launch

  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + tid;

  // Slots past the end of the input hold 0, the identity of +, so the tree needs no bounds checks.
  smem[tid] = (i < n) ? in[i] : 0.0f;
  __syncthreads();  // every slot is loaded before any thread reads a neighbour's slot

  // Interleaved addressing: at level s, thread tid (a multiple of 2*s) absorbs slot tid + s.
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    if (tid % (2 * s) == 0) {
      smem[tid] += smem[tid + s];
    }
    __syncthreads();  // this level's sums are written before the next level reads them
  }

  if (tid == 0) {
    partials[blockIdx.x] = smem[0];
  }
}

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

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
