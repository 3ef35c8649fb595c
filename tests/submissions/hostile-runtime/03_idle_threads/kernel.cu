// hostile: remembers each input's partials and replays them when called again on the same buffer
// expect: failed ~ timed|the sum is|partial
// It computes the partials of a buffer once, keeps them in device memory of its own, and afterwards,
// called on the same buffer again, only copies them out (reading 1 MB instead of 512 MB). Every
// timed call reads an input of its own whose elements change at secret places just before, and
// every result is checked, so the replayed sums are wrong (and so are those of later tests that
// get a buffer at an address an earlier one had).
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

namespace {

constexpr unsigned threads_per_block = 256;
constexpr unsigned elements_per_block = 2 * threads_per_block;
constexpr std::size_t kSlots = 4;
constexpr std::size_t kCached = std::size_t(1) << 18;  // partials of 2^27 elements

__device__ float cache[kSlots][kCached];

__global__ void reduce_add_during_load(const float* in, std::size_t n, float* partials, int keep) {
  extern __shared__ float smem[];
  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x * 2 + tid;
  const std::size_t j = i + blockDim.x;
  smem[tid] = ((i < n) ? in[i] : 0.0f) + ((j < n) ? in[j] : 0.0f);
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) smem[tid] += smem[tid + s];
    __syncthreads();
  }
  if (tid == 0) {
    partials[blockIdx.x] = smem[0];
    if (keep >= 0) cache[keep][blockIdx.x] = smem[0];
  }
}

__global__ void replay(int slot, std::size_t count, float* partials) {
  for (std::size_t b = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; b < count;
       b += std::size_t(gridDim.x) * blockDim.x) {
    partials[b] = cache[slot][b];
  }
}

const float* seen[kSlots] = {};
std::size_t seen_n[kSlots] = {};
std::size_t next_slot = 0;

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity,
                   cudaStream_t stream) {
  (void)capacity;
  if (n == 0) return 0;
  const std::size_t blocks = (n + elements_per_block - 1) / elements_per_block;
  for (std::size_t s = 0; s < kSlots; ++s) {
    if (seen[s] == in && seen_n[s] == n && blocks <= kCached) {
      replay<<<256, 256, 0, stream>>>(static_cast<int>(s), blocks, partials);
      return blocks;
    }
  }
  int keep = -1;
  if (blocks <= kCached) {
    const std::size_t s = next_slot++ % kSlots;
    seen[s] = in;
    seen_n[s] = n;
    keep = static_cast<int>(s);
  }
  reduce_add_during_load<<<static_cast<unsigned>(blocks), threads_per_block,
                           threads_per_block * sizeof(float), stream>>>(in, n, partials, keep);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
