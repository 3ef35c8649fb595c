// A deliberately faulty submission, for testing the grader: the last warp unrolled on a bare
// volatile pointer with no __syncwarp(), as older articles print it: a data race since Volta.
#include "workbook/chapter.cuh"

#include <cstddef>

namespace {

__global__ void reduce(const float* in, std::size_t n, float* partials) {
  __shared__ float smem[256];
  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + tid;
  smem[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s) smem[tid] += smem[tid + s];
    __syncthreads();
  }
  if (tid < 32) {
    volatile float* v = smem;
    v[tid] += v[tid + 32];
    v[tid] += v[tid + 16];
    v[tid] += v[tid + 8];
    v[tid] += v[tid + 4];
    v[tid] += v[tid + 2];
    v[tid] += v[tid + 1];
  }
  if (tid == 0) partials[blockIdx.x] = smem[0];
}

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity,
                   cudaStream_t stream) {
  (void)capacity;
  if (n == 0) return 0;
  const std::size_t blocks = (n + 255) / 256;
  reduce<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(in, n, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
