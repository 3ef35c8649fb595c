// Chapter 07 (V7): 16-byte loads in a grid-stride loop, sized to fill the GPU.
// Differs from V6: instead of one block per 512 elements, a grid just large enough to fill every
// SM walks the input with a grid-stride loop. Each thread issues loads_in_flight independent
// float4 (16-byte) loads before adding any of them, so enough bytes are in flight to cover the
// memory latency, with a quarter of the load instructions of scalar code. The float4 body must be
// 16-byte aligned, but `in` is only 4-byte aligned: 0-3 scalar head elements run up to the first
// 16-byte boundary, and 0-3 scalar tail elements follow the last whole float4.
#include "workbook/chapter.cuh"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

// Policy: block size and loads per thread trade bytes in flight against occupancy.
// 256 threads, 4 float4 in flight, grid = 8 blocks/SM (occupancy) x 132 SMs: NVIDIA H200,
// n = 2^27, 4205-4295 GB/s = 97.0-99.3% of the 4311-4336 GB/s streaming-read ceiling and
// ahead of cub::DeviceReduce::Sum (4087-4144 GB/s), CUDA 13.0, 2026-11-29 (book/results/h200.md).
constexpr unsigned threads_per_block = 256;
constexpr unsigned loads_in_flight = 4;  // float4 loads issued per thread before the adds
static_assert(loads_in_flight >= 1, "every thread keeps at least one load in flight");

constexpr unsigned warp_size = 32;
constexpr unsigned full_warp = 0xffffffffu;
constexpr unsigned warps_per_block = threads_per_block / warp_size;
constexpr std::size_t floats_per_vector = 4;  // a float4

__device__ float warp_reduce_sum(float v) {
#pragma unroll
  for (unsigned offset = warp_size / 2; offset > 0; offset >>= 1) {
    v += __shfl_down_sync(full_warp, v, offset);
  }
  return v;
}

// Two-level shuffle reduction, as in V6; thread 0 gets the block's sum.
__device__ float block_reduce_sum(float v) {
  __shared__ float warp_sums[warps_per_block];
  const unsigned lane = threadIdx.x % warp_size;
  const unsigned warp = threadIdx.x / warp_size;

  v = warp_reduce_sum(v);
  if (lane == 0) {
    warp_sums[warp] = v;
  }
  __syncthreads();  // every warp's sum is in shared memory before warp 0 reads them
  if (warp == 0) {
    v = warp_reduce_sum((lane < warps_per_block) ? warp_sums[lane] : 0.0f);
  }
  return v;
}

__device__ float sum4(float4 r) { return (r.x + r.y) + (r.z + r.w); }

// in[0, head) and in[tail_begin, n) are scalars; body[0, body_vectors) is in[head, tail_begin)
// seen as float4. Block b writes partials[b].
__global__ void __launch_bounds__(threads_per_block)
    reduce_vectorized(const float* in, std::size_t n, std::size_t head, const float4* body,
                      std::size_t body_vectors, std::size_t tail_begin, float* partials) {
  const unsigned tid = threadIdx.x;
  float v = 0.0f;

  // The 0-3 head and 0-3 tail elements: a handful of threads of block 0 pick them up.
  if (blockIdx.x == 0) {
    if (tid < head) {
      v += in[tid];
    }
    if (tid < n - tail_begin) {
      v += in[tail_begin + tid];
    }
  }

  // Grid-stride loop over the aligned body. A warp's loads at one step are 32 consecutive
  // float4 (512 contiguous bytes), so every access is fully coalesced.
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * threads_per_block;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * threads_per_block + tid;

  // Whole rounds: all loads_in_flight loads are in range. Issue them all into registers first,
  // then add: the loads are independent, so they are all outstanding at once.
  for (; i + (loads_in_flight - 1) * stride < body_vectors; i += loads_in_flight * stride) {
    float4 r[loads_in_flight];
#pragma unroll
    for (unsigned k = 0; k < loads_in_flight; ++k) {
      r[k] = __ldg(&body[i + k * stride]);
    }
#pragma unroll
    for (unsigned k = 0; k < loads_in_flight; ++k) {
      v += sum4(r[k]);
    }
  }
  // The last partial round: fewer than loads_in_flight vectors left for this thread.
  for (; i < body_vectors; i += stride) {
    v += sum4(__ldg(&body[i]));
  }

  // Every block writes its partial, even one whose threads found nothing to load.
  v = block_reduce_sum(v);
  if (tid == 0) {
    partials[blockIdx.x] = v;
  }
}

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity,
                   cudaStream_t stream) {
  if (n == 0) {
    return 0;
  }

  // Split [0, n) at the first 16-byte boundary. `in` is 4-byte aligned, so its address mod 16 is
  // 0, 4, 8 or 12, and the head is 0, 3, 2 or 1 floats (never more than n).
  const auto address = reinterpret_cast<std::uintptr_t>(in);
  const std::size_t head_bytes = (16 - address % 16) % 16;
  const std::size_t head = std::min<std::size_t>(head_bytes / sizeof(float), n);
  const std::size_t body_vectors = (n - head) / floats_per_vector;
  const std::size_t tail_begin = head + body_vectors * floats_per_vector;  // n - tail_begin < 4
  const auto* body = reinterpret_cast<const float4*>(in + head);

  // Grid: as many blocks as can be resident at once (blocks per SM x SMs), so the grid-stride
  // loop keeps every SM full with no second wave. These are host-side lookups of cached device
  // properties: nothing waits on the GPU.
  int device = 0;
  int sm_count = 0;
  int blocks_per_sm = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, reduce_vectorized,
                                                static_cast<int>(threads_per_block), 0);
  const std::size_t resident_blocks =
      static_cast<std::size_t>(std::max(sm_count, 1)) * std::max(blocks_per_sm, 1);

  // Small inputs get fewer blocks: no more than one whole round of loads per thread needs.
  constexpr std::size_t vectors_per_block_round =
      static_cast<std::size_t>(threads_per_block) * loads_in_flight;
  const std::size_t useful_blocks =
      (body_vectors + vectors_per_block_round - 1) / vectors_per_block_round;
  const std::size_t blocks =
      std::max<std::size_t>(1, std::min({resident_blocks, useful_blocks, capacity}));

  reduce_vectorized<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(
      in, n, head, body, body_vectors, tail_begin, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
