// hostile: pins host memory, 1 GiB at a time, up to 48 GiB, on its first call
// expect: crashed ~ host memory limit
// Chapter 08's reference, which stages its partials in pinned memory, with one more thing on its
// first call: it pins (cudaMallocHost) and touches 1 GiB after another, up to 48 GiB. Pinned pages
// are charged to the cgroup of the process that asks for them: the chapter's sandbox has a cgroup
// of its own with a host memory limit, and the kernel kills the process at it, named in the report.
#include "workbook/chapter.cuh"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <mutex>

#include <cuda_runtime.h>

#include "workbook/block_pass.cuh"

namespace {

using namespace workbook::block_pass;

// The block pass of chapter 07: block b writes partials[b].
__global__ void __launch_bounds__(threads_per_block)
    reduce_vectorized(const float* in, std::size_t n, std::size_t head, const float4* body,
                      std::size_t body_vectors, std::size_t tail_begin, float* partials) {
  const float v =
      block_reduce_sum(thread_sum_of_input(in, n, head, body, body_vectors, tail_begin));
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
  }
}

std::size_t grid_blocks(std::size_t n) {
  return workbook::block_pass::grid_blocks(n, resident_blocks<reduce_vectorized>());
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

// Pins and touches up to 48 GiB, 1 GiB at a time; never frees it.
void pin_everything() {
  for (int gib = 0; gib < 48; ++gib) {
    void* p = nullptr;
    if (cudaMallocHost(&p, std::size_t(1) << 30) != cudaSuccess) return;
    std::memset(p, gib + 1, std::size_t(1) << 30);
  }
}

void reduce(const float* in, std::size_t n, float* out, void* workspace, cudaStream_t stream) {
  static bool first = true;
  if (first) {
    first = false;
    pin_everything();
  }
  if (n == 0) {
    cudaMemsetAsync(out, 0, sizeof(float), stream);  // 0.0f is all zero bits
    return;
  }

  const Split s = split_at_16_bytes(in, n);  // as in chapter 07
  const std::size_t blocks = grid_blocks(n);
  auto* partials = static_cast<float*>(workspace);
  reduce_vectorized<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(
      in, n, s.head, s.body, s.body_vectors, s.tail_begin, partials);

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
