// hostile: none; a correct neighbour of the chapters beside it in this tree
// expect: full marks
// A correct block pass, tested beside a chapter that takes most of the GPU's memory (00) and one that
// pins host memory (08): it must be graded as it deserves, whatever they do.
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

namespace {

// A correct block pass: a grid-stride loop, then the block's sum through warp shuffles.
__global__ void partial_sums(const float* in, std::size_t n, float* partials) {
  float sum = 0.0f;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) sum += in[i];
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  __shared__ float warp_sums[32];
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x < 32) {
    sum = threadIdx.x < blockDim.x / 32 ? warp_sums[threadIdx.x] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (threadIdx.x == 0) partials[blockIdx.x] = sum;
  }
}

std::size_t blocks_for(std::size_t n) {
  const std::size_t wanted = (n + 255) / 256;
  return wanted < 1024 ? wanted : 1024;
}

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity, cudaStream_t stream) {
  (void)capacity;  // at most 1024 blocks
  if (n == 0) return 0;
  const std::size_t blocks = blocks_for(n);
  partial_sums<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(in, n, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
