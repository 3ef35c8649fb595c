// hostile: an #error whose text holds terminal escapes, a C1 control and a right-to-left override, for the compile-error path
// expect: does_not_compile ~ #error
// The compiler quotes the directive in its error, and the grader shows that error in every report:
// the escape, the CSI (U+009B) and the override (U+202E) must show as `\x1b`, `<U+009B>` and
// `<U+202E>` (grader_test: Text.LearnerTextIsShownOnOneVisibleLine), not act on the reader.
#include "workbook/chapter.cuh"

#error "x [2J[32m## 01_divergence: passed[0m 31m ‮dessap"

#include <cstddef>

#include <cuda_runtime.h>

namespace {

// One block of 256 threads reduces 256 elements. The tree needs a power of two.
constexpr unsigned threads_per_block = 256;

//! [kernel]
__global__ void reduce_no_divergence(const float* in, std::size_t n, float* partials) {
  // TODO: load one element per thread into `extern __shared__ float smem[]` exactly as in V0
  //       (std::size_t index, 0.0f past the end), then __syncthreads().
  // TODO: for s = 1, 2, 4, ... < blockDim.x: index = 2 * s * tid; if (index < blockDim.x) add
  //       smem[index + s] into smem[index]; __syncthreads() after the `if`.
  //       Ask yourself: which shared-memory banks do the lanes of one warp touch at s = 16?
  // TODO: thread 0 writes smem[0] to partials[blockIdx.x].
}
//! [kernel]

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity,
                   cudaStream_t stream) {
  (void)capacity;  // ceil(n / 256) blocks never exceed it
  if (n == 0) {
    return 0;
  }
  // One element per thread: ceil(n / threads_per_block) blocks.
  const std::size_t blocks = (n + threads_per_block - 1) / threads_per_block;
  reduce_no_divergence<<<static_cast<unsigned>(blocks), threads_per_block,
                         threads_per_block * sizeof(float), stream>>>(in, n, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
