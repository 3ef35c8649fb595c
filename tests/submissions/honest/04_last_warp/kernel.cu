// honest: the last warp with cooperative groups' tiles (tiled_partition and its shfl_down)
// expect: full marks
// Chapter 04 (V4) whose last warp is a cooperative-groups tile of 32 threads: the tree in shared
// memory down to 64 values, then the tile adds them in registers. cooperative_groups is not a
// library reduction (cg::reduce is, and stays refused): the grader must pass it with full marks.
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

namespace {

constexpr unsigned threads_per_block = 256;
constexpr unsigned elements_per_block = 2 * threads_per_block;

__global__ void reduce_tile_last_warp(const float* in, std::size_t n, float* partials) {
  extern __shared__ float smem[];
  const cg::thread_block block = cg::this_thread_block();
  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x * 2 + tid;
  const std::size_t j = i + blockDim.x;
  smem[tid] = ((i < n) ? in[i] : 0.0f) + ((j < n) ? in[j] : 0.0f);
  block.sync();
  for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s) smem[tid] += smem[tid + s];
    block.sync();
  }
  if (tid < 32) {
    const cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    float v = smem[tid] + smem[tid + 32];
    for (unsigned offset = 16; offset > 0; offset >>= 1) v += warp.shfl_down(v, offset);
    if (warp.thread_rank() == 0) partials[blockIdx.x] = v;
  }
}

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity, cudaStream_t stream) {
  (void)capacity;
  if (n == 0) return 0;
  const std::size_t blocks = (n + elements_per_block - 1) / elements_per_block;
  reduce_tile_last_warp<<<static_cast<unsigned>(blocks), threads_per_block, threads_per_block * sizeof(float),
                          stream>>>(in, n, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
