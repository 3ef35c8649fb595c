// hostile: uses cooperative_groups::reduce for the last warp instead of writing it
// expect: rejected ~ includes cooperative_groups/reduce\.h
// Chapter 04 (V4): unrolling the last warp.
#include "workbook/chapter.cuh"

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include <cstddef>

#include <cuda_runtime.h>

namespace {

// One block of 256 threads reduces 512 elements. The tree needs a power of two >= 64.
constexpr unsigned threads_per_block = 256;
constexpr unsigned elements_per_block = 2 * threads_per_block;
constexpr unsigned warp_size = 32;

// Reduces smem[0, 64) to one value, returned by lane 0. Called by the 32 threads of warp 0 only.
// Each level keeps the running sum in a register: read the partner's slot, __syncwarp() so every
// read is done, write the own slot, __syncwarp() so every write is seen by the next level.
__device__ float warp_reduce_last(float* smem, unsigned tid) {
  // Level 32: lane tid reads only slots tid and tid + 32, which no other lane writes here.
  float v = smem[tid] + smem[tid + 32];
  smem[tid] = v;
  __syncwarp();  // level-32 sums are visible before level 16 reads them

  v += smem[tid + 16];
  __syncwarp();  // every lane has read its partner before any lane overwrites its own slot
  smem[tid] = v;
  __syncwarp();  // level-16 sums are visible before level 8 reads them

  v += smem[tid + 8];
  __syncwarp();  // level-8 reads before level-8 writes
  smem[tid] = v;
  __syncwarp();  // level-8 writes before level-4 reads

  v += smem[tid + 4];
  __syncwarp();  // level-4 reads before level-4 writes
  smem[tid] = v;
  __syncwarp();  // level-4 writes before level-2 reads

  v += smem[tid + 2];
  __syncwarp();  // level-2 reads before level-2 writes
  smem[tid] = v;
  __syncwarp();  // level-2 writes before level-1 reads

  v += smem[tid + 1];  // the last level: only lane 0's register matters, nothing to write back
  return v;
}

__global__ void reduce_unroll_last_warp(const float* in, std::size_t n, float* partials) {
  extern __shared__ float smem[];  // blockDim.x floats, sized at launch

  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x * 2 + tid;
  const std::size_t j = i + blockDim.x;

  // Add during load, as in V3; out-of-range elements count as 0.
  const float a = (i < n) ? in[i] : 0.0f;
  const float b = (j < n) ? in[j] : 0.0f;
  smem[tid] = a + b;
  __syncthreads();  // every slot is loaded before any thread reads another thread's slot

  // Block-wide levels while more than one warp has work.
  for (unsigned s = blockDim.x / 2; s > warp_size; s >>= 1) {
    if (tid < s) {
      smem[tid] += smem[tid + s];
    }
    __syncthreads();  // this level's sums are written before the next level reads them
  }

  // The last 64 slots: warp 0 alone, so warp-level synchronization is enough.
  if (tid < warp_size) {
    const float sum = warp_reduce_last(smem, tid);
    if (tid == 0) {
      partials[blockIdx.x] = sum;
    }
  }
}

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity,
                   cudaStream_t stream) {
  (void)capacity;  // ceil(n / 512) blocks never exceed it
  if (n == 0) {
    return 0;
  }
  const std::size_t blocks = (n + elements_per_block - 1) / elements_per_block;
  reduce_unroll_last_warp<<<static_cast<unsigned>(blocks), threads_per_block,
                            threads_per_block * sizeof(float), stream>>>(in, n, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
