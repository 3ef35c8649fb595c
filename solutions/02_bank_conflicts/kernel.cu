// Chapter 02 (V2): sequential addressing, free of bank conflicts.
// Differs from V1: the stride starts at blockDim.x / 2 and halves, and thread tid adds slot
// tid + s into slot tid. Consecutive lanes touch consecutive words, one bank each, so a warp's
// shared-memory access is a single conflict-free transaction, and the busy threads stay the
// lowest-numbered ones: warps are uniform while s >= 32, and the last five levels run in a partly
// idle warp 0 (chapter 04).
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

namespace {

// One block of 256 threads reduces 256 elements. The tree needs a power of two.
constexpr unsigned threads_per_block = 256;

__global__ void reduce_sequential(const float* in, std::size_t n, float* partials) {
  extern __shared__ float smem[];  // blockDim.x floats, sized at launch

  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + tid;

  // Slots past the end of the input hold 0, the identity of +.
  smem[tid] = (i < n) ? in[i] : 0.0f;
  __syncthreads();  // every slot is loaded before any thread reads another thread's slot

  // Fold the upper half of the live slots onto the lower half. A warp reads 32 consecutive words
  // (tid + s) and writes 32 consecutive words (tid): one word per bank, no conflicts.
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
  (void)capacity;  // ceil(n / 256) blocks never exceed it
  if (n == 0) {
    return 0;
  }
  // One element per thread: ceil(n / threads_per_block) blocks.
  const std::size_t blocks = (n + threads_per_block - 1) / threads_per_block;
  reduce_sequential<<<static_cast<unsigned>(blocks), threads_per_block,
                      threads_per_block * sizeof(float), stream>>>(in, n, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
