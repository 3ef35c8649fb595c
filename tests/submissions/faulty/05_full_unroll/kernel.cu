// A deliberately faulty submission, for testing the grader: a __syncthreads() that only warp 0
// reaches, while the other warps wait for warp 0: a deadlock. (The classic mistake of a
// __syncthreads() inside `if (tid < s)` computes right answers on an H200 and is not flagged by
// compute-sanitizer synccheck there; it only runs slowly.)
#include "workbook/chapter.cuh"

#include <cstddef>

namespace {

__global__ void reduce(const float* in, std::size_t n, float* partials) {
  __shared__ float smem[256];
  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + tid;
  smem[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) smem[tid] += smem[tid + s];
    __syncthreads();
  }
  __shared__ volatile int done;
  if (tid == 0) done = 0;
  __syncthreads();
  if (tid < 32) {
    __syncthreads();  // only warp 0 arrives here ...
    if (tid == 0) done = 1;
  } else {
    while (done == 0) {  // ... while the other warps wait for it
    }
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
