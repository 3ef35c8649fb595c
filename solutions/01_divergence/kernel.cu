// Chapter 01 (V1): removing warp divergence.
// Differs from V0: thread tid works on slot index = 2*s*tid, so the busy threads are the
// lowest-numbered ones: whole warps work or rest together while s <= 4, and warp 0 runs partly
// idle after that (the if is predicated, so no warp skips the level's instructions).
// The new cost: at level s the active threads touch slots 2*s apart, so several lanes of a warp
// hit the same shared-memory bank (bank = word index % 32) and their accesses serialize.
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

namespace {

// One block of 256 threads reduces 256 elements. The tree needs a power of two.
constexpr unsigned threads_per_block = 256;

__global__ void reduce_no_divergence(const float* in, std::size_t n, float* partials) {
  extern __shared__ float smem[];  // blockDim.x floats, sized at launch

  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + tid;

  // Slots past the end of the input hold 0, the identity of +.
  smem[tid] = (i < n) ? in[i] : 0.0f;
  __syncthreads();  // every slot is loaded before any thread reads a neighbour's slot

  // Same pairs as V0, but handed to consecutive threads: thread tid owns slot 2*s*tid, so the
  // `index < blockDim.x` test is true for a contiguous run of threads, i.e. whole warps.
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    const unsigned index = 2 * s * tid;
    if (index < blockDim.x) {
      smem[index] += smem[index + s];  // stride 2*s between lanes: bank conflicts
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
  reduce_no_divergence<<<static_cast<unsigned>(blocks), threads_per_block,
                         threads_per_block * sizeof(float), stream>>>(in, n, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
