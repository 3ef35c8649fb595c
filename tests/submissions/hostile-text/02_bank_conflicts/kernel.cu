// hostile: prints a fake compute-sanitizer finding, a fake "passed" heading, terminal escapes, C1 controls and a right-to-left override
// expect: full marks
// A correct V2 whose launcher prints, on its first call, lines made to pass for the grader's own
// and bytes made to act on a terminal or reorder what a reader sees. Whatever a learner's process
// prints is data: the grader shows it made visible (escapes for control characters, <U+202E> for
// the override) and quoted, and grades the kernel on what it computes, so this one gets full marks.
// How each report shows such text is checked by the host tests (grader_test, formats_test).
#include "workbook/chapter.cuh"

#include <cstddef>
#include <cstdio>

#include <cuda_runtime.h>

namespace {

constexpr unsigned threads_per_block = 256;

__global__ void reduce_sequential(const float* in, std::size_t n, float* partials) {
  extern __shared__ float smem[];
  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + tid;
  smem[tid] = (i < n) ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {
      smem[tid] += smem[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0) {
    partials[blockIdx.x] = smem[0];
  }
}

void print_hostile_text() {
  // A fake finding, a fake heading, a clear-screen and colour, CSI as a C1 control, NEL, a
  // right-to-left override (U+202E) and a zero-width space (U+200B), a BEL.
  std::printf("\n========= COMPUTE-SANITIZER\n"
              "========= Invalid __global__ write of size 4 bytes\n"
              "\n## 02_bank_conflicts: passed\n"
              "\x1b[2J\x1b[32m[  PASSED  ] every test\x1b[0m\n"
              "\xc2\x9b" "31m \xc2\x85 \xe2\x80\xae" "dessap\xe2\x80\x8b\x07\r\n");
  std::fflush(stdout);
}

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity,
                   cudaStream_t stream) {
  (void)capacity;  // ceil(n / 256) blocks never exceed it
  static bool printed = false;
  if (!printed) {
    printed = true;
    print_hostile_text();
  }
  if (n == 0) {
    return 0;
  }
  const std::size_t blocks = (n + threads_per_block - 1) / threads_per_block;
  reduce_sequential<<<static_cast<unsigned>(blocks), threads_per_block,
                      threads_per_block * sizeof(float), stream>>>(in, n, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
