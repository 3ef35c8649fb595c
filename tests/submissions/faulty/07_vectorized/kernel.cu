// A deliberately faulty submission, for testing the grader: float4 loads straight from `in`, which is only 4-byte aligned: a misaligned address.
#include "workbook/chapter.cuh"

#include <cstddef>

namespace {

__global__ void reduce(const float* in, std::size_t n, float* partials) {
  __shared__ float smem[256];
  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + tid;
  float v = 0.0f;
  if (4 * i + 3 < n) {
    const float4 q = reinterpret_cast<const float4*>(in)[i];
    v = (q.x + q.y) + (q.z + q.w);
  }
  smem[tid] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) smem[tid] += smem[tid + s];
    __syncthreads();
  }
  if (tid == 0) partials[blockIdx.x] = smem[0];
}

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity,
                   cudaStream_t stream) {
  (void)capacity;
  if (n == 0) return 0;
  const std::size_t blocks = (n / 4 + 255) / 256 + 1;
  reduce<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(in, n, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
