// Chapter 08: the whole sum, finished on the host.
// Differs from chapter 07: the block pass's partials (about a thousand floats) are copied to the
// host, added there in double, and the total is copied back to *out.
// The price is a round trip through the host: the host waits (cudaStreamSynchronize) for the
// block pass and the copy, adds on the CPU while the GPU has nothing to do, then waits again for
// the copy back. A few microseconds of latency per call, more than the whole kernel at small n,
// and the stream's work can no longer run ahead of the host.
// The host buffer is pinned (cudaMallocHost). A copy to pageable (malloc'd) memory is staged
// through a pinned buffer inside the driver, costs an extra host-side memcpy, and returns only
// when the data has arrived; from pinned memory the DMA engine copies directly, asynchronously,
// and faster. Pinning is slow to allocate, so one buffer is kept and grown when too small.
#include "workbook/chapter.cuh"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <mutex>

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

// The block pass of chapter 07. in[0, head) and in[tail_begin, n) are scalars;
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

// The grid depends on n alone (not on the alignment of `in`), so workspace_bytes(n) knows it:
// as many blocks as fit on the device at once, but no more than one round of loads per thread
// needs. Host-side lookups of cached device properties: nothing waits on the GPU.
std::size_t grid_blocks(std::size_t n) {
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

// Workspace: the partials, one float per block.
std::size_t workspace_bytes(std::size_t n) {
  return n == 0 ? 0 : grid_blocks(n) * sizeof(float);
}

// Pinned host memory shared by all calls: room for the partials, and one float for the total.
// The mutex keeps two calls from different host threads out of each other's buffer. The
// buffers live until the process ends (freeing pinned memory during static destruction, after
// the CUDA runtime may be gone, would be an error).
struct PinnedStaging {
  std::mutex mutex;
  float* partials = nullptr;
  std::size_t capacity = 0;  // floats at `partials`
  float* total = nullptr;
};

// Makes room for `count` partials and the total; false if pinned memory could not be had.
bool reserve(PinnedStaging& staging, std::size_t count) {
  if (staging.total == nullptr &&
      cudaMallocHost(reinterpret_cast<void**>(&staging.total), sizeof(float)) != cudaSuccess) {
    staging.total = nullptr;
    return false;
  }
  if (staging.capacity < count) {
    if (staging.partials != nullptr) {
      cudaFreeHost(staging.partials);  // no copy is in flight: the previous call synchronized
    }
    staging.partials = nullptr;
    staging.capacity = 0;
    const std::size_t capacity = std::max<std::size_t>(count, 1024);
    if (cudaMallocHost(reinterpret_cast<void**>(&staging.partials), capacity * sizeof(float)) !=
        cudaSuccess) {
      staging.partials = nullptr;
      return false;
    }
    staging.capacity = capacity;
  }
  return true;
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

  const std::size_t blocks = grid_blocks(n);
  auto* partials = static_cast<float*>(workspace);
  reduce_vectorized<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(
      in, n, head, body, body_vectors, tail_begin, partials);

  static PinnedStaging staging;
  const std::lock_guard<std::mutex> lock(staging.mutex);
  if (!reserve(staging, blocks)) {
    return;  // no pinned memory: *out is left unwritten
  }

  // Device to host, queued behind the block pass on the same stream.
  cudaMemcpyAsync(staging.partials, partials, blocks * sizeof(float), cudaMemcpyDeviceToHost,
                  stream);
  cudaStreamSynchronize(stream);  // the host waits for the block pass and the copy: the partials
                                  // are in host memory before the loop below reads them

  // The GPU idles from here until the copy back: this loop is the host round trip.
  double total = 0.0;
  for (std::size_t b = 0; b < blocks; ++b) {
    total += staging.partials[b];
  }
  *staging.total = static_cast<float>(total);

  cudaMemcpyAsync(out, staging.total, sizeof(float), cudaMemcpyHostToDevice, stream);
  cudaStreamSynchronize(stream);  // the DMA has read staging.total before the next call (after
                                  // the lock is released) may overwrite it
}

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
