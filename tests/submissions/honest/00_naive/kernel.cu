// honest: libm in the launcher (std::ceil), a lambda, and a __constant__ table at file scope
// expect: full marks
// Chapter 00 (V0) as a learner might write it: the tree's strides come from a table in constant
// memory, and the launcher sizes its grid in floating point with a lambda. Nothing here breaks
// isolation or does the chapter's work for it, so the grader must pass it with full marks.
#include "workbook/chapter.cuh"

#include <cmath>
#include <cstddef>

#include <cuda_runtime.h>

// The strides of the tree's levels, one per level, for blocks of 256 threads.
__constant__ unsigned level_strides[8] = {1, 2, 4, 8, 16, 32, 64, 128};

namespace {

constexpr unsigned threads_per_block = 256;

__global__ void reduce_naive(const float* in, std::size_t n, float* partials) {
  extern __shared__ float smem[];
  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + tid;
  smem[tid] = (i < n) ? in[i] : 0.0f;
  __syncthreads();
  for (int level = 0; level < 8; ++level) {
    const unsigned s = level_strides[level];
    if (tid % (2 * s) == 0) smem[tid] += smem[tid + s];
    __syncthreads();
  }
  if (tid == 0) partials[blockIdx.x] = smem[0];
}

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity, cudaStream_t stream) {
  (void)capacity;
  if (n == 0) return 0;
  const auto blocks_for = [](std::size_t count) {
    return static_cast<std::size_t>(std::ceil(static_cast<double>(count) / threads_per_block));
  };
  const std::size_t blocks = blocks_for(n);
  reduce_naive<<<static_cast<unsigned>(blocks), threads_per_block, threads_per_block * sizeof(float), stream>>>(
      in, n, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
