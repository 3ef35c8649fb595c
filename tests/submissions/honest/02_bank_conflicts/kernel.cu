// honest: sets a kernel attribute (cudaFuncSetAttribute) and reads one (cudaFuncGetAttributes)
// expect: full marks
// Chapter 02 (V2) whose launcher asks for the largest shared-memory carveout once and checks the
// kernel's register count once, as a learner tuning occupancy would. These calls change nothing
// but this process's own kernel: the grader must pass it with full marks.
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

namespace {

constexpr unsigned threads_per_block = 256;

__global__ void reduce_sequential(const float* in, std::size_t n, float* partials) {
  extern __shared__ float smem[];
  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + tid;
  smem[tid] = (i < n) ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) smem[tid] += smem[tid + s];
    __syncthreads();
  }
  if (tid == 0) partials[blockIdx.x] = smem[0];
}

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity, cudaStream_t stream) {
  (void)capacity;
  if (n == 0) return 0;
  static const bool tuned = [] {
    cudaFuncSetAttribute(reduce_sequential, cudaFuncAttributePreferredSharedMemoryCarveout,
                         cudaSharedmemCarveoutMaxShared);
    cudaFuncAttributes attributes{};
    cudaFuncGetAttributes(&attributes, reduce_sequential);
    return attributes.numRegs > 0;
  }();
  (void)tuned;
  const std::size_t blocks = (n + threads_per_block - 1) / threads_per_block;
  reduce_sequential<<<static_cast<unsigned>(blocks), threads_per_block, threads_per_block * sizeof(float), stream>>>(
      in, n, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
