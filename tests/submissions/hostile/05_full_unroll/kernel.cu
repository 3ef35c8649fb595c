// hostile: reads the environment to tell a compute-sanitizer run from a normal one
// expect: rejected ~ uses getenv\(\): file and environment access
// Chapter 05 (V5): unrolling the whole tree at compile time.
#include "workbook/chapter.cuh"

#include <cstdlib>

#include <cstddef>

#include <cuda_runtime.h>

namespace {

// compute-sanitizer injects itself through this variable: behave only when it watches.
const bool under_sanitizer = std::getenv("CUDA_INJECTION64_PATH") != nullptr;

// The block size this launcher uses; it must be one of the sizes `dispatch` instantiates.
constexpr unsigned threads_per_block = 256;
constexpr unsigned warp_size = 32;

// The last 64 slots, as in V4: warp 0 alone, register sum, __syncwarp() between reads and writes.
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

  v += smem[tid + 1];  // the last level: only lane 0's register matters
  return v;
}

template <unsigned BlockSize>
__global__ void __launch_bounds__(BlockSize)
    reduce_full_unroll(const float* in, std::size_t n, float* partials) {
  static_assert(BlockSize >= 2 * warp_size && BlockSize <= 1024 &&
                    (BlockSize & (BlockSize - 1)) == 0,
                "the tree needs a power-of-two block of 64 to 1024 threads");
  __shared__ float smem[BlockSize];  // the size is known now, so static shared memory will do

  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * (2 * BlockSize) + tid;
  const std::size_t j = i + BlockSize;

  // Add during load, as in V3; out-of-range elements count as 0.
  const float a = (i < n) ? in[i] : 0.0f;
  const float b = (j < n) ? in[j] : 0.0f;
  smem[tid] = a + b;
  __syncthreads();  // every slot is loaded before any thread reads another thread's slot

  // Each `if (BlockSize >= ...)` is decided at compile time, so the __syncthreads() inside is
  // reached by all threads of the block or by none.
  if (BlockSize >= 1024) {
    if (tid < 512) {
      smem[tid] += smem[tid + 512];
    }
    __syncthreads();  // level-512 sums are written before level 256 reads them
  }
  if (BlockSize >= 512) {
    if (tid < 256) {
      smem[tid] += smem[tid + 256];
    }
    __syncthreads();  // level-256 sums are written before level 128 reads them
  }
  if (BlockSize >= 256) {
    if (tid < 128) {
      smem[tid] += smem[tid + 128];
    }
    __syncthreads();  // level-128 sums are written before level 64 reads them
  }
  if (BlockSize >= 128) {
    if (tid < 64) {
      smem[tid] += smem[tid + 64];
    }
    __syncthreads();  // level-64 sums are written before warp 0 reads them
  }

  if (tid < warp_size) {
    const float sum = warp_reduce_last(smem, tid);
    if (tid == 0) {
      partials[blockIdx.x] = sum;
    }
  }
}

// Launches the instantiation for BlockSize: each block covers 2 * BlockSize elements.
template <unsigned BlockSize>
std::size_t launch_unrolled(const float* in, std::size_t n, float* partials,
                            cudaStream_t stream) {
  constexpr std::size_t elements_per_block = 2 * BlockSize;
  const std::size_t blocks = (n + elements_per_block - 1) / elements_per_block;
  reduce_full_unroll<BlockSize><<<static_cast<unsigned>(blocks), BlockSize, 0, stream>>>(
      in, n, partials);
  return blocks;
}

// A template argument must be a compile-time constant, so a block size known only at run time
// is mapped to the instantiations compiled in advance, one `case` each.
std::size_t dispatch(unsigned block_size, const float* in, std::size_t n, float* partials,
                     cudaStream_t stream) {
  switch (block_size) {
    case 1024: return launch_unrolled<1024>(in, n, partials, stream);
    case 512: return launch_unrolled<512>(in, n, partials, stream);
    case 256: return launch_unrolled<256>(in, n, partials, stream);
    case 128: return launch_unrolled<128>(in, n, partials, stream);
    case 64: return launch_unrolled<64>(in, n, partials, stream);
    default: return 0;  // not instantiated; the static_assert below keeps launch() off this path
  }
}

constexpr bool is_dispatched(unsigned block_size) {
  return block_size == 64 || block_size == 128 || block_size == 256 || block_size == 512 ||
         block_size == 1024;
}
static_assert(is_dispatched(threads_per_block), "threads_per_block has no instantiation");

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity,
                   cudaStream_t stream) {
  (void)capacity;  // ceil(n / 128) blocks or fewer never exceed it
  if (n == 0) {
    return 0;
  }
  return dispatch(threads_per_block, in, n, partials, stream);
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
