// Chapter 11: the last block finishes the sum, in one launch.
// Differs from chapter 10: instead of atomically adding floats, each block stores its partial
// and takes a ticket from an atomic counter; the block that draws the last ticket knows every
// other partial is already written, so it sums all of them in a fixed order and writes *out.
// One kernel launch, no memset, no host round trip, and the result is bitwise repeatable.
// The catch is memory ordering: a partial must be visible device-wide before its block's ticket
// is taken (__threadfence), and the last block must read the partials from L2, not from a stale
// L1 line (__ldcg). The counter lives in the workspace and is reset to 0 by the last block.
#include "workbook/chapter.cuh"

#include <algorithm>
#include <atomic>
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

// Workspace: the ticket counter at offset 0, the partials from a 16-byte offset. The counter's
// place does not depend on n, so a workspace reused for calls with different n never finds a
// stale partial where it expects a zero counter.
constexpr std::size_t partials_offset_bytes = 16;
static_assert(partials_offset_bytes >= sizeof(unsigned) && partials_offset_bytes % 16 == 0,
              "the counter fits before the partials, which stay 16-byte aligned");

__device__ float warp_reduce_sum(float v) {
#pragma unroll
  for (unsigned offset = warp_size / 2; offset > 0; offset >>= 1) {
    v += __shfl_down_sync(full_warp, v, offset);
  }
  return v;
}

// Two-level shuffle reduction, as in chapter 06; thread 0 gets the block's sum. Calling it
// twice in one kernel needs a __syncthreads() in between: warp 0 must have read warp_sums
// before any warp writes it again.
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

// This thread's share of in[0, n): the block pass of chapter 07. in[0, head) and
// in[tail_begin, n) are scalars; body[0, body_vectors) is in[head, tail_begin) seen as float4.
__device__ float thread_sum_of_input(const float* in, std::size_t n, std::size_t head,
                                     const float4* body, std::size_t body_vectors,
                                     std::size_t tail_begin) {
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
  // The last, partial round: the loads that are in range are still all issued at once (chapter
  // 07 issues them one after another), which matters when each thread has only one round.
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
  return v;
}

// Thread t adds partials[t], partials[t + threads_per_block], ... in that order, so the total
// does not depend on which block runs this. __ldcg reads through L2, where the other blocks'
// partials are, and never from this SM's L1, which is not coherent with other SMs' writes.
__device__ float thread_sum_of_partials(const float* partials, std::size_t count) {
  float v = 0.0f;
  for (std::size_t j = threadIdx.x; j < count;
       j += std::size_t{loads_in_flight} * threads_per_block) {
    float r[loads_in_flight];
#pragma unroll
    for (unsigned k = 0; k < loads_in_flight; ++k) {
      const std::size_t p = j + std::size_t{k} * threads_per_block;
      r[k] = (p < count) ? __ldcg(&partials[p]) : 0.0f;
    }
#pragma unroll
    for (unsigned k = 0; k < loads_in_flight; ++k) {
      v += r[k];
    }
  }
  return v;
}

// Block b writes partials[b] and takes a ticket; the block with the last ticket sums the
// partials into *out and puts the counter back to 0. A grid of one block writes *out directly
// and needs no workspace (partials and counter are then null).
__global__ void __launch_bounds__(threads_per_block)
    reduce_last_block(const float* in, std::size_t n, std::size_t head, const float4* body,
                      std::size_t body_vectors, std::size_t tail_begin, float* partials,
                      unsigned* counter, float* out) {
  const unsigned tid = threadIdx.x;
  const float block_sum =
      block_reduce_sum(thread_sum_of_input(in, n, head, body, body_vectors, tail_begin));

  // Fast path: a single block's sum is the total; no partial, no ticket.
  if (gridDim.x == 1) {
    if (tid == 0) {
      *out = block_sum;
    }
    return;
  }

  __shared__ bool is_last_block;
  if (tid == 0) {
    partials[blockIdx.x] = block_sum;
    __threadfence();  // release: this partial is visible to the whole device before the ticket
                      // below is, so a block that sees our ticket also sees our partial
    const unsigned ticket = atomicAdd(counter, 1u);
    const bool last = (ticket == gridDim.x - 1);
    if (last) {
      __threadfence();  // acquire: the partial loads after the barrier below are ordered after
                        // the ticket, which came after every other block's partial
    }
    is_last_block = last;
  }
  __syncthreads();  // is_last_block is written before any thread reads it; also warp 0's reads
                    // of warp_sums in the first block_reduce_sum are done before the second
                    // one writes it
  if (!is_last_block) {
    return;
  }

  // The last block: every partial is written. Sum them in a fixed order.
  const float total = block_reduce_sum(thread_sum_of_partials(partials, gridDim.x));
  if (tid == 0) {
    *out = total;
    // Every block has taken its ticket, so nothing else touches the counter in this launch;
    // the next launch sees the 0 (kernel boundaries order it on the same stream).
    *counter = 0;
  }
}

// Blocks that fit on the device at once, looked up once per device: the launcher runs on
// every call, and the lookups cost host time that shows at small n. 0 = not looked up yet.
constexpr int max_cached_devices = 64;
std::atomic<unsigned> cached_resident_blocks[max_cached_devices];

unsigned query_resident_blocks(int device) {
  int sm_count = 0;
  int blocks_per_sm = 0;
  cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, reduce_last_block,
                                                static_cast<int>(threads_per_block), 0);
  return static_cast<unsigned>(std::max(sm_count, 1)) *
         static_cast<unsigned>(std::max(blocks_per_sm, 1));
}

unsigned resident_blocks() {
  int device = 0;
  cudaGetDevice(&device);  // a host-side lookup: nothing waits on the GPU
  if (device < 0 || device >= max_cached_devices) {
    return query_resident_blocks(device);
  }
  unsigned blocks = cached_resident_blocks[device].load(std::memory_order_relaxed);
  if (blocks == 0) {
    blocks = query_resident_blocks(device);
    cached_resident_blocks[device].store(blocks, std::memory_order_relaxed);
  }
  return blocks;
}

// The grid depends on n alone (not on the alignment of `in`), so workspace_bytes(n) knows it:
// every SM full, but no more blocks than one round of loads per thread needs.
unsigned grid_blocks(std::size_t n) {
  const std::size_t useful_blocks = (n + floats_per_block_round - 1) / floats_per_block_round;
  return static_cast<unsigned>(
      std::max<std::size_t>(1, std::min<std::size_t>(resident_blocks(), useful_blocks)));
}

std::size_t workspace_bytes(std::size_t n) {
  const unsigned blocks = grid_blocks(n);
  if (blocks == 1) {
    return 0;  // the fast path uses no partials and no ticket
  }
  return partials_offset_bytes + std::size_t{blocks} * sizeof(float);
}

void reduce(const float* in, std::size_t n, float* out, void* workspace, cudaStream_t stream) {
  // n == 0 needs no special case: one block finds nothing to load and writes 0 to *out.

  // Split [0, n) at the first 16-byte boundary, as in chapter 07.
  const auto address = reinterpret_cast<std::uintptr_t>(in);
  const std::size_t head_bytes = (16 - address % 16) % 16;
  const std::size_t head = std::min<std::size_t>(head_bytes / sizeof(float), n);
  const std::size_t body_vectors = (n - head) / floats_per_vector;
  const std::size_t tail_begin = head + body_vectors * floats_per_vector;  // n - tail_begin < 4
  const auto* body = reinterpret_cast<const float4*>(in + head);

  const unsigned blocks = grid_blocks(n);
  unsigned* counter = nullptr;
  float* partials = nullptr;
  if (blocks > 1) {
    counter = static_cast<unsigned*>(workspace);
    partials = reinterpret_cast<float*>(static_cast<char*>(workspace) + partials_offset_bytes);
  }

  reduce_last_block<<<blocks, threads_per_block, 0, stream>>>(in, n, head, body, body_vectors,
                                                              tail_begin, partials, counter, out);
}

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
