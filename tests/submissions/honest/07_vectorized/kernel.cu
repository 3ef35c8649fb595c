// honest: a correct kernel whose threads each keep ONE running sum over a long grid-stride loop
// expect: correct
// A small grid (one block of 128 threads per SM) gives every thread thousands of serial
// additions at n = 2^27, far more than a tree. The tests must accept every summation order a
// correct kernel may use, so this kernel must pass every correctness test (its bandwidth is
// another matter).
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

namespace {

constexpr unsigned threads_per_block = 128;

__global__ void __launch_bounds__(threads_per_block)
    reduce_long_chains(const float* in, std::size_t n, float* partials) {
  __shared__ float smem[threads_per_block];
  float v = 0.0f;  // one chain per thread: n / (grid * 128) additions in a row
  const std::size_t stride = std::size_t(gridDim.x) * threads_per_block;
  for (std::size_t i = blockIdx.x * std::size_t(threads_per_block) + threadIdx.x; i < n; i += stride) {
    v += in[i];
  }
  smem[threadIdx.x] = v;
  __syncthreads();
  for (unsigned s = threads_per_block / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) smem[threadIdx.x] += smem[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = smem[0];
}

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity,
                   cudaStream_t stream) {
  if (n == 0) return 0;
  int device = 0, sms = 1;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  std::size_t blocks = static_cast<std::size_t>(sms);
  const std::size_t needed = (n + threads_per_block - 1) / threads_per_block;
  if (blocks > needed) blocks = needed;
  if (blocks > capacity) blocks = capacity;
  reduce_long_chains<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(in, n, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
