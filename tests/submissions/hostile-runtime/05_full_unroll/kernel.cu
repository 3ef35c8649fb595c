// hostile: recognises an exact test input from a few loads and writes the total it expects instead of reading the rest
// expect: failed ~ ExactSums|MisalignedInput
// Exact inputs used to add up to 2^24 units every time, the unit being the smallest mark. This
// kernel reads a few elements and, when the input looks sparse, writes (2^24 - 1) times the
// smaller end as the first partial and zeros after it, reading nothing else. The exact inputs now
// choose which powers of two they hold, in which order and at which scale from the seed, so the
// total it writes is wrong.
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

namespace {

constexpr unsigned threads_per_block = 256;
constexpr unsigned elements_per_block = 2 * threads_per_block;

__global__ void reduce_or_guess(const float* in, std::size_t n, float* partials) {
  __shared__ float smem[threads_per_block];
  const unsigned tid = threadIdx.x;
  const bool looks_exact = n > 64 && in[0] != 0.0f && in[1] == 0.0f && in[2] == 0.0f && in[n / 3] == 0.0f;
  if (looks_exact) {
    if (tid == 0) partials[blockIdx.x] = blockIdx.x == 0 ? 16777215.0f * fminf(in[0], in[n - 1]) : 0.0f;
    return;
  }
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * elements_per_block + tid;
  const std::size_t j = i + threads_per_block;
  smem[tid] = ((i < n) ? in[i] : 0.0f) + ((j < n) ? in[j] : 0.0f);
  __syncthreads();
  for (unsigned s = threads_per_block / 2; s > 0; s >>= 1) {
    if (tid < s) smem[tid] += smem[tid + s];
    __syncthreads();
  }
  if (tid == 0) partials[blockIdx.x] = smem[0];
}

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity, cudaStream_t stream) {
  (void)capacity;
  if (n == 0) return 0;
  const std::size_t blocks = (n + elements_per_block - 1) / elements_per_block;
  reduce_or_guess<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(in, n, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
