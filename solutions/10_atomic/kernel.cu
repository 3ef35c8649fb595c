// Chapter 10: blocks add their sums straight into *out with atomicAdd.
// Differs from chapter 09: one kernel instead of two; thread 0 of each block adds the block's
// sum into *out with atomicAdd, so no partials and no workspace. *out is zeroed first with
// cudaMemsetAsync on the same stream, before the launch: a block zeroing it inside the kernel
// would race with the atomicAdds of blocks that finished earlier. With about a thousand blocks
// the atomics barely contend; with a block per few elements they would serialize in L2.
// Float addition is not associative and the blocks' order varies, so two runs on the same input
// can differ in the last bits: this sum is not bitwise reproducible.
#include "workbook/chapter.cuh"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

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

// The block pass of chapter 07, then thread 0 adds the block's sum into *out. in[0, head) and
// in[tail_begin, n) are scalars; body[0, body_vectors) is in[head, tail_begin) seen as float4.
// *out must be 0 before the launch: zeroing it here would race with other blocks' atomicAdd.
__global__ void __launch_bounds__(threads_per_block)
    reduce_atomic(const float* in, std::size_t n, std::size_t head, const float4* body,
                  std::size_t body_vectors, std::size_t tail_begin, float* out) {
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
    // One read-modify-write per block, done in L2. Blocks finish in no fixed order, so the
    // additions into *out happen in a different order from run to run.
    atomicAdd(out, v);
  }
}

// As many blocks as fit on the device at once, but no more than one round of loads per thread
// needs. Host-side lookups of cached device properties: nothing waits on the GPU.
std::size_t grid_blocks(std::size_t n) {
  int device = 0;
  int sm_count = 0;
  int blocks_per_sm = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, reduce_atomic,
                                                static_cast<int>(threads_per_block), 0);
  const std::size_t resident_blocks =
      static_cast<std::size_t>(std::max(sm_count, 1)) * std::max(blocks_per_sm, 1);
  const std::size_t useful_blocks = (n + floats_per_block_round - 1) / floats_per_block_round;
  return std::max<std::size_t>(1, std::min(resident_blocks, useful_blocks));
}

// No workspace: the only state is *out itself.
std::size_t workspace_bytes(std::size_t /*n*/) { return 0; }

void reduce(const float* in, std::size_t n, float* out, void* /*workspace*/, cudaStream_t stream) {
  // Zero the sum before any block adds to it; for n == 0 that is the answer.
  cudaMemsetAsync(out, 0, sizeof(float), stream);  // 0.0f is all zero bits
  if (n == 0) {
    return;
  }

  // Split [0, n) at the first 16-byte boundary, as in chapter 07.
  const auto address = reinterpret_cast<std::uintptr_t>(in);
  const std::size_t head_bytes = (16 - address % 16) % 16;
  const std::size_t head = std::min<std::size_t>(head_bytes / sizeof(float), n);
  const std::size_t body_vectors = (n - head) / floats_per_vector;
  const std::size_t tail_begin = head + body_vectors * floats_per_vector;  // n - tail_begin < 4
  const auto* body = reinterpret_cast<const float4*>(in + head);

  const std::size_t blocks = grid_blocks(n);
  reduce_atomic<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(
      in, n, head, body, body_vectors, tail_begin, out);
}

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
