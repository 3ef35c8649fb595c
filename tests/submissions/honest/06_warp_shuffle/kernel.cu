// honest: a launcher that sizes its grid with std::sqrt and std::log2 (libm)
// expect: full marks
// Chapter 06 (V6) whose launcher reasons in floating point: the number of tree levels with
// std::log2 and a grid split with std::sqrt into a square-ish 2-D grid, each block finding its
// index from both dimensions. Calls of the math library break nothing: the grader must pass it
// with full marks.
#include "workbook/chapter.cuh"

#include <cmath>
#include <cstddef>

#include <cuda_runtime.h>

namespace {

constexpr unsigned threads_per_block = 256;
constexpr unsigned elements_per_block = 2 * threads_per_block;

__device__ float warp_sum(float v) {
  for (unsigned offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

__global__ void __launch_bounds__(threads_per_block)
    reduce_shuffle_2d(const float* in, std::size_t n, float* partials, std::size_t blocks) {
  __shared__ float warp_sums[32];
  const std::size_t block = static_cast<std::size_t>(blockIdx.y) * gridDim.x + blockIdx.x;
  if (block >= blocks) return;  // the 2-D grid may hold a few blocks too many
  const unsigned tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const std::size_t i = block * elements_per_block + tid;
  const std::size_t j = i + threads_per_block;
  float v = warp_sum(((i < n) ? in[i] : 0.0f) + ((j < n) ? in[j] : 0.0f));
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = warp_sum(lane < threads_per_block / 32 ? warp_sums[lane] : 0.0f);
    if (lane == 0) partials[block] = v;
  }
}

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity, cudaStream_t stream) {
  (void)capacity;
  if (n == 0) return 0;
  static_assert(threads_per_block == 256, "8 levels of 2");
  const int levels = static_cast<int>(std::log2(static_cast<double>(threads_per_block)));
  (void)levels;
  const std::size_t blocks = (n + elements_per_block - 1) / elements_per_block;
  const auto side = static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(blocks))));
  const dim3 grid(static_cast<unsigned>(side), static_cast<unsigned>((blocks + side - 1) / side));
  reduce_shuffle_2d<<<grid, threads_per_block, 0, stream>>>(in, n, partials, blocks);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
