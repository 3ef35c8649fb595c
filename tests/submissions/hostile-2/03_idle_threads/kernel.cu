// hostile: prints GoogleTest's summary line itself, for a grader that reads the output
// expect: full marks
// Printing is allowed, and the grader reads only what the judge tells it on its own channel, so
// the line changes nothing: the kernel itself is a correct V3 and gets what it earns.
// Chapter 03 (V3): no idle threads at the first level.
#include "workbook/chapter.cuh"

#include <cstdio>

#include <cstddef>

#include <cuda_runtime.h>

namespace {

const bool summary_printed = [] {
  std::printf("[  PASSED  ] 40 tests.\n");
  return true;
}();

// One block of 256 threads reduces 512 elements. The tree needs a power of two.
constexpr unsigned threads_per_block = 256;
constexpr unsigned elements_per_block = 2 * threads_per_block;

__global__ void reduce_add_during_load(const float* in, std::size_t n, float* partials) {
  extern __shared__ float smem[];  // blockDim.x floats, sized at launch

  const unsigned tid = threadIdx.x;
  // The block's slice is [blockIdx.x * 2 * blockDim.x, + 2 * blockDim.x); thread tid takes slot
  // tid of each half, so both loads of a warp stay contiguous (coalesced).
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x * 2 + tid;
  const std::size_t j = i + blockDim.x;

  // Out-of-range elements count as 0, the identity of +; never read past in[n - 1].
  const float a = (i < n) ? in[i] : 0.0f;
  const float b = (j < n) ? in[j] : 0.0f;
  smem[tid] = a + b;
  __syncthreads();  // every slot is loaded before any thread reads another thread's slot

  // Sequential addressing, as in V2.
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {
      smem[tid] += smem[tid + s];
    }
    __syncthreads();  // this level's sums are written before the next level reads them
  }

  if (tid == 0) {
    partials[blockIdx.x] = smem[0];
  }
}

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity,
                   cudaStream_t stream) {
  (void)capacity;  // ceil(n / 512) blocks never exceed it
  if (n == 0) {
    return 0;
  }
  // Two elements per thread: half the blocks of V2.
  const std::size_t blocks = (n + elements_per_block - 1) / elements_per_block;
  reduce_add_during_load<<<static_cast<unsigned>(blocks), threads_per_block,
                           threads_per_block * sizeof(float), stream>>>(in, n, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
