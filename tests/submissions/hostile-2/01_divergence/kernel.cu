// hostile: keeps its kernel in a header beside kernel.cu (a file the grader never sees)
// expect: does_not_compile ~ block_tree\.cuh.*only each chapter.s kernel\.cu is graded
// Chapter 01 (V1): removing warp divergence.
#include "workbook/chapter.cuh"

#include "block_tree.cuh"

#include <cstddef>

#include <cuda_runtime.h>

namespace {

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
