// Chapter 12: a grid-wide barrier from cooperative groups, in one launch.
// Differs from chapter 11: no ticket counter; every block writes its partial, the whole grid
// waits at cg::this_grid().sync(), and then block 0 sums the partials and writes *out.
// grid.sync() only works if every block of the grid is running at the same time: a block that
// waits at the barrier holds its SM, and a block still waiting for an SM would never arrive, so
// the grid would deadlock. cudaLaunchCooperativeKernel guarantees co-residency and refuses a
// grid larger than the occupancy API's blocks per SM x the SM count; devices without
// cudaDevAttrCooperativeLaunch cannot launch it at all. Since CUDA 11, grid.sync() needs no
// separate compilation (-rdc=true). The result is deterministic: fixed grid, fixed order.
#include "workbook/chapter.cuh"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace {

namespace cg = cooperative_groups;

// Policy: the block pass of chapter 07, tuned there by measuring read bandwidth.
constexpr unsigned threads_per_block = 256;
constexpr unsigned loads_in_flight = 4;  // float4 loads issued per thread before the adds
static_assert(loads_in_flight >= 1, "every thread keeps at least one load in flight");

constexpr unsigned warp_size = 32;
constexpr unsigned full_warp = 0xffffffffu;
constexpr unsigned warps_per_block = threads_per_block / warp_size;
constexpr std::size_t floats_per_vector = 4;  // a float4
// One block's worth of input for one round of loads: a grid needs no more blocks than this
// divides into n.
constexpr std::size_t floats_per_block_round =
    std::size_t{threads_per_block} * loads_in_flight * floats_per_vector;

__device__ float warp_reduce_sum(float v) {
#pragma unroll
  for (unsigned offset = warp_size / 2; offset > 0; offset >>= 1) {
    v += __shfl_down_sync(full_warp, v, offset);
  }
  return v;
}

// Two-level shuffle reduction, as in chapter 06; thread 0 gets the block's sum.
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

// Launched cooperatively (all blocks resident at once). Phase 1, the block pass of chapter 07:
// block b writes partials[b]. in[0, head) and in[tail_begin, n) are scalars;
// body[0, body_vectors) is in[head, tail_begin) seen as float4. Then the whole grid waits at
// grid.sync(), and phase 2: block 0 sums the partials in a fixed order and writes *out.
__global__ void __launch_bounds__(threads_per_block)
    reduce_grid_sync(const float* in, std::size_t n, std::size_t head, const float4* body,
                     std::size_t body_vectors, std::size_t tail_begin, float* partials,
                     float* out) {
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

  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * threads_per_block;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * threads_per_block + tid;

  // Whole rounds: all loads_in_flight loads in range, all issued before the first add.
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
  // The last, partial round: the loads that are in range are all issued at once too.
  if (i < body_vectors) {
    float4 r[loads_in_flight];
#pragma unroll
    for (unsigned k = 0; k < loads_in_flight; ++k) {
      const std::size_t j = i + k * stride;
      r[k] = (j < body_vectors) ? __ldg(&body[j]) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
#pragma unroll
    for (unsigned k = 0; k < loads_in_flight; ++k) {
      v += sum4(r[k]);
    }
  }

  v = block_reduce_sum(v);
  if (tid == 0) {
    partials[blockIdx.x] = v;
  }

  cg::this_grid().sync();  // every block's partial is written and visible device-wide before
                           // block 0 reads them below; as a barrier of every thread it also
                           // orders warp 0's reads of warp_sums before the next block reduce
  if (blockIdx.x != 0) {
    return;
  }

  // Phase 2, block 0 only. Thread t adds partials[t], partials[t + threads_per_block], ... in
  // that order: the total depends only on the partials. __ldcg reads through L2, where the
  // other SMs' partials are, never from this SM's L1.
  const std::size_t count = gridDim.x;
  float s = 0.0f;
  for (std::size_t j = tid; j < count; j += std::size_t{loads_in_flight} * threads_per_block) {
    float r[loads_in_flight];
#pragma unroll
    for (unsigned k = 0; k < loads_in_flight; ++k) {
      const std::size_t p = j + std::size_t{k} * threads_per_block;
      r[k] = (p < count) ? __ldcg(&partials[p]) : 0.0f;
    }
#pragma unroll
    for (unsigned k = 0; k < loads_in_flight; ++k) {
      s += r[k];
    }
  }
  s = block_reduce_sum(s);
  if (tid == 0) {
    *out = s;
  }
}

// The grid: at most the blocks that can be resident at once (or grid.sync() would deadlock, and
// the cooperative launch refuses it), no more than one round of loads per thread needs, and 0
// if the device cannot launch cooperatively. It depends on n alone (not on the alignment of
// `in`), so workspace_bytes(n) knows it. Host-side lookups: nothing waits on the GPU.
std::size_t grid_blocks(std::size_t n) {
  int device = 0;
  int cooperative = 0;
  int sm_count = 0;
  int blocks_per_sm = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device);
  if (!cooperative) {
    return 0;
  }
  cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, reduce_grid_sync,
                                                static_cast<int>(threads_per_block), 0);
  const std::size_t resident_blocks =
      static_cast<std::size_t>(std::max(sm_count, 0)) * std::max(blocks_per_sm, 0);
  const std::size_t useful_blocks = (n + floats_per_block_round - 1) / floats_per_block_round;
  return std::min(resident_blocks, std::max<std::size_t>(1, useful_blocks));
}

// Workspace: the partials, one float per block.
std::size_t workspace_bytes(std::size_t n) {
  return n == 0 ? 0 : grid_blocks(n) * sizeof(float);
}

void reduce(const float* in, std::size_t n, float* out, void* workspace, cudaStream_t stream) {
  if (n == 0) {
    cudaMemsetAsync(out, 0, sizeof(float), stream);  // 0.0f is all zero bits
    return;
  }
  const std::size_t blocks = grid_blocks(n);
  if (blocks == 0) {
    return;  // no cooperative launch on this device (or no block fits): *out is left unwritten
  }

  // Split [0, n) at the first 16-byte boundary, as in chapter 07.
  const auto address = reinterpret_cast<std::uintptr_t>(in);
  const std::size_t head_bytes = (16 - address % 16) % 16;
  std::size_t head = std::min<std::size_t>(head_bytes / sizeof(float), n);
  std::size_t body_vectors = (n - head) / floats_per_vector;
  std::size_t tail_begin = head + body_vectors * floats_per_vector;  // n - tail_begin < 4
  const auto* body = reinterpret_cast<const float4*>(in + head);
  auto* partials = static_cast<float*>(workspace);

  // A cooperative launch takes the kernel's arguments as an array of pointers to them, each
  // pointing at a variable of exactly the parameter's type.
  void* args[] = {&in, &n, &head, &body, &body_vectors, &tail_begin, &partials, &out};
  cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(reduce_grid_sync),
                              dim3(static_cast<unsigned>(blocks)), dim3(threads_per_block), args,
                              0, stream);
}

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
