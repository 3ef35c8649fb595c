// honest: a constexpr table of the tree's levels, unrolled by the compiler, and a lambda for a level
// expect: full marks
// Chapter 05 (V5) with its unrolled levels written as a constexpr table walked by a loop the
// compiler unrolls (#pragma unroll over a compile-time bound), the block size a template
// parameter as the chapter asks; the last warp with __syncwarp(). The grader must pass it with
// full marks.
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

namespace {

constexpr unsigned threads_per_block = 256;

template <unsigned BlockSize>
__global__ void __launch_bounds__(BlockSize) reduce_table(const float* in, std::size_t n, float* partials) {
  __shared__ float smem[BlockSize];
  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * (2 * BlockSize) + tid;
  const std::size_t j = i + BlockSize;
  smem[tid] = ((i < n) ? in[i] : 0.0f) + ((j < n) ? in[j] : 0.0f);
  __syncthreads();
  const auto level = [&](unsigned stride) {
    if (tid < stride) smem[tid] += smem[tid + stride];
    __syncthreads();
  };
  constexpr unsigned strides[] = {512, 256, 128, 64};  // the levels above the last warp
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    if (2 * strides[k] <= BlockSize) level(strides[k]);
  }
  if (tid < 32) {
    float v = smem[tid] + smem[tid + 32];
#pragma unroll
    for (unsigned offset = 16; offset > 0; offset >>= 1) {
      smem[tid] = v;
      __syncwarp();
      v += smem[tid + offset];
      __syncwarp();
    }
    if (tid == 0) partials[blockIdx.x] = v;
  }
}

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity, cudaStream_t stream) {
  (void)capacity;
  if (n == 0) return 0;
  constexpr std::size_t elements_per_block = 2 * threads_per_block;
  const std::size_t blocks = (n + elements_per_block - 1) / elements_per_block;
  reduce_table<threads_per_block><<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(in, n, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
