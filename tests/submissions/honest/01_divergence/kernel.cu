// honest: device printf and host printf, each behind a flag that is off
// expect: full marks
// Chapter 01 (V1) with the tracing a learner leaves in while debugging: a kernel that can print a
// block's sum and a launcher that can print its grid, both switched off. Printing breaks nothing:
// the grader must pass it with full marks.
#include "workbook/chapter.cuh"

#include <cstddef>
#include <cstdio>

#include <cuda_runtime.h>

namespace {

constexpr unsigned threads_per_block = 256;
__device__ bool trace_blocks = false;  // set to true to see block 0's sum
bool trace_launches = false;

__global__ void reduce_strided(const float* in, std::size_t n, float* partials) {
  extern __shared__ float smem[];
  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + tid;
  smem[tid] = (i < n) ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    const unsigned index = 2 * s * tid;
    if (index < blockDim.x) smem[index] += smem[index + s];
    __syncthreads();
  }
  if (tid == 0) {
    partials[blockIdx.x] = smem[0];
    if (trace_blocks && blockIdx.x == 0) printf("block 0: %f\n", smem[0]);
  }
}

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity, cudaStream_t stream) {
  (void)capacity;
  if (n == 0) return 0;
  const std::size_t blocks = (n + threads_per_block - 1) / threads_per_block;
  if (trace_launches) std::printf("n = %zu: %zu blocks of %u threads\n", n, blocks, threads_per_block);
  reduce_strided<<<static_cast<unsigned>(blocks), threads_per_block, threads_per_block * sizeof(float), stream>>>(
      in, n, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
