// hostile: sums the first 2^31 elements only; past that it counts on the input being mostly zeros
// expect: failed ~ every element random|ExactSums|HugeInput
// The only input above 2^31 elements used to be an exact input: zeros but for a few marks, two
// of them right at the 2^31 edge. This kernel stops at 2^31 and adds the two marks it knows to
// look for, which was enough. Now the input above 2^31 is random in every element first (then the
// exact input), so whatever it skips shows.
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

namespace {

constexpr unsigned threads_per_block = 256;
constexpr unsigned elements_per_block = 2 * threads_per_block;
constexpr std::size_t kLimit = std::size_t(1) << 31;

__device__ float warp_sum(float v) {
  for (unsigned offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

__global__ void reduce_first_2_31(const float* in, std::size_t n, float* partials) {
  __shared__ float warp_sums[threads_per_block / 32];
  const unsigned tid = threadIdx.x;
  const std::size_t stop = n < kLimit ? n : kLimit;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * elements_per_block + tid;
  const std::size_t j = i + threads_per_block;
  float v = ((i < stop) ? in[i] : 0.0f) + ((j < stop) ? in[j] : 0.0f);
  // The marks it expects past the edge: elements 2^31 and 2^32 - 1, n - 1 and n - 2.
  if (blockIdx.x == 0 && tid == 0 && n > kLimit) {
    v += in[kLimit] + in[n - 1] + in[n - 2];
    if (n > (kLimit << 1)) v += in[(kLimit << 1) - 1];
  }
  v = warp_sum(v);
  if (tid % 32 == 0) warp_sums[tid / 32] = v;
  __syncthreads();
  if (tid < 32) {
    v = warp_sum(tid < threads_per_block / 32 ? warp_sums[tid] : 0.0f);
    if (tid == 0) partials[blockIdx.x] = v;
  }
}

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity, cudaStream_t stream) {
  (void)capacity;
  if (n == 0) return 0;
  const std::size_t blocks = (n + elements_per_block - 1) / elements_per_block;
  reduce_first_2_31<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(in, n, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
