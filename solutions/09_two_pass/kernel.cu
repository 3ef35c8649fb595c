// Chapter 09: a second kernel reduces the partials, with no host round trip.
// Differs from chapter 08: the partials never leave the GPU; a second launch on the same stream
// sums them with one block and writes *out, so the host only queues work and never waits.
// The stream orders the two kernels: the second starts after the first has finished and its
// partials are visible. Each pass reduces its input to one value per block, so in general the
// launcher repeats passes until one value is left; with the first grid capped at the blocks
// that fit on the GPU at once (about a thousand), a single second pass of one block suffices.
// Every partial is added in a fixed order, so the same input gives a bitwise identical sum.
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
// A later pass gives each block up to this many partials (16 per thread): one block covers the
// first pass's whole grid on any current GPU.
constexpr std::size_t partials_per_block = std::size_t{threads_per_block} * 16;

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

// First pass, the block pass of chapter 07. in[0, head) and in[tail_begin, n) are scalars;
// body[0, body_vectors) is in[head, tail_begin) seen as float4. Block b writes partials[b].
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
}

// Later passes: block b of the grid writes dst[b], the sum of src[j] for the j it visits in a
// grid-stride loop. Thread t of block b always adds the same partials in the same order, so the
// result depends only on `count` and the grid, never on timing. src was written by an earlier
// kernel on this stream and is read-only here, so __ldg is safe.
__global__ void __launch_bounds__(threads_per_block)
    reduce_partials(const float* src, std::size_t count, float* dst) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * threads_per_block;
  float v = 0.0f;
  for (std::size_t j = static_cast<std::size_t>(blockIdx.x) * threads_per_block + threadIdx.x;
       j < count; j += loads_in_flight * stride) {
    float r[loads_in_flight];
#pragma unroll
    for (unsigned k = 0; k < loads_in_flight; ++k) {
      const std::size_t p = j + k * stride;
      r[k] = (p < count) ? __ldg(&src[p]) : 0.0f;
    }
#pragma unroll
    for (unsigned k = 0; k < loads_in_flight; ++k) {
      v += r[k];
    }
  }

  v = block_reduce_sum(v);
  if (threadIdx.x == 0) {
    dst[blockIdx.x] = v;
  }
}

// The first pass's grid depends on n alone (not on the alignment of `in`), so
// workspace_bytes(n) knows it: as many blocks as fit on the device at once, but no more than one
// round of loads per thread needs. Host-side lookups: nothing waits on the GPU.
std::size_t first_pass_blocks(std::size_t n) {
  int device = 0;
  int sm_count = 0;
  int blocks_per_sm = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, reduce_vectorized,
                                                static_cast<int>(threads_per_block), 0);
  const std::size_t resident_blocks =
      static_cast<std::size_t>(std::max(sm_count, 1)) * std::max(blocks_per_sm, 1);
  const std::size_t useful_blocks = (n + floats_per_block_round - 1) / floats_per_block_round;
  return std::max<std::size_t>(1, std::min(resident_blocks, useful_blocks));
}

// The grid of a later pass over `count` values (one value per block it writes).
std::size_t next_pass_blocks(std::size_t count) {
  return (count + partials_per_block - 1) / partials_per_block;
}

// Workspace: two regions that the passes ping-pong between, region 0 then region 1 then region
// 0... The last pass writes *out instead. The first pass writes the most values into region 0;
// counts only shrink, so region 1 needs room for the second pass's output (none when the second
// pass is the last one, as it is with a capped first grid).
struct Layout {
  std::size_t region0_floats = 0;
  std::size_t region1_floats = 0;
};

Layout layout(std::size_t n) {
  Layout l;
  if (n == 0) {
    return l;
  }
  const std::size_t first = first_pass_blocks(n);
  if (first > 1) {
    l.region0_floats = first;
    const std::size_t second = next_pass_blocks(first);
    if (second > 1) {
      l.region1_floats = second;
    }
  }
  return l;
}

std::size_t workspace_bytes(std::size_t n) {
  const Layout l = layout(n);
  return (l.region0_floats + l.region1_floats) * sizeof(float);
}

void reduce(const float* in, std::size_t n, float* out, void* workspace, cudaStream_t stream) {
  if (n == 0) {
    cudaMemsetAsync(out, 0, sizeof(float), stream);  // 0.0f is all zero bits
    return;
  }

  // Split [0, n) at the first 16-byte boundary, as in chapter 07.
  const auto address = reinterpret_cast<std::uintptr_t>(in);
  const std::size_t head_bytes = (16 - address % 16) % 16;
  const std::size_t head = std::min<std::size_t>(head_bytes / sizeof(float), n);
  const std::size_t body_vectors = (n - head) / floats_per_vector;
  const std::size_t tail_begin = head + body_vectors * floats_per_vector;  // n - tail_begin < 4
  const auto* body = reinterpret_cast<const float4*>(in + head);

  const Layout l = layout(n);
  float* const regions[2] = {static_cast<float*>(workspace),
                             static_cast<float*>(workspace) + l.region0_floats};

  // Pass 0: the block pass. With a single block its partial is already the sum.
  std::size_t count = first_pass_blocks(n);
  float* dst = (count == 1) ? out : regions[0];
  reduce_vectorized<<<static_cast<unsigned>(count), threads_per_block, 0, stream>>>(
      in, n, head, body, body_vectors, tail_begin, dst);

  // Passes 1, 2, ...: each reads the previous pass's values and writes one per block into the
  // other region, or into *out once a single block is enough. The stream runs them in order.
  const float* src = dst;
  for (unsigned pass = 1; count > 1; ++pass) {
    const std::size_t blocks = next_pass_blocks(count);
    dst = (blocks == 1) ? out : regions[pass % 2];
    reduce_partials<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(src, count,
                                                                                     dst);
    src = dst;
    count = blocks;
  }
}

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
