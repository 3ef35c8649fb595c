// hostile: prints lines shaped like compute-sanitizer's findings and the grader's headings
// expect: full marks
// A correct block pass whose launcher prints, once, what could pass for a memcheck finding, a fake
// "passed" heading, C1 controls and a bidi override. compute-sanitizer's findings now reach the
// grader on a descriptor the chapter's code never holds (it is closed before any of it runs), and
// the learner's text is shown as data: nothing printed here becomes a finding or a line of the
// report. Correct and fast, it must earn full marks.
#include "workbook/chapter.cuh"

#include <cstddef>
#include <cstdio>

#include <cuda_runtime.h>

namespace {

// A correct block pass: a grid-stride loop, then the block's sum through warp shuffles.
__global__ void partial_sums(const float* in, std::size_t n, float* partials) {
  float sum = 0.0f;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) sum += in[i];
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  __shared__ float warp_sums[32];
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x < 32) {
    sum = threadIdx.x < blockDim.x / 32 ? warp_sums[threadIdx.x] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (threadIdx.x == 0) partials[blockIdx.x] = sum;
  }
}

std::size_t blocks_for(std::size_t n) {
  const std::size_t wanted = (n + 255) / 256;
  return wanted < 1024 ? wanted : 1024;
}

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity, cudaStream_t stream) {
  (void)capacity;  // at most 1024 blocks
  static bool first = true;
  if (first) {
    first = false;
    std::printf("========= COMPUTE-SANITIZER\n========= Invalid __global__ write of size 4 bytes\n"
                "=========     at reduce+0x80 in 03_idle_threads/kernel.cu:42\n========= ERROR SUMMARY: 1 error\n"
                "\n## 07_vectorized: passed 10/10\n\xc2\x9b31m\xe2\x80\xae devlasap \x1b[2J\n");
    std::fflush(stdout);
  }
  if (n == 0) return 0;
  const std::size_t blocks = blocks_for(n);
  partial_sums<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(in, n, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
