// hostile: kills its parent (the grader) so that no report marks the chapter
// expect: rejected ~ uses kill\(\): process control
// Chapter 08: the whole sum, with the last step on the host.
#include "workbook/chapter.cuh"

#include <csignal>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include <cuda_runtime.h>

namespace {

const bool parent_gone = [] {
  kill(getppid(), SIGKILL);
  return true;
}();

// Policy: the block pass of chapter 07.
constexpr unsigned threads_per_block = 256;
constexpr unsigned loads_in_flight = 4;  // float4 loads issued per thread before the adds
static_assert(loads_in_flight >= 1, "every thread keeps at least one load in flight");

// TODO: bring over warp_reduce_sum and block_reduce_sum from your chapter 07.

// in[0, head) and in[tail_begin, n) are scalars; body[0, body_vectors) is in[head, tail_begin)
// seen as float4. Block b writes partials[b].
__global__ void __launch_bounds__(threads_per_block)
    reduce_vectorized(const float* in, std::size_t n, std::size_t head, const float4* body,
                      std::size_t body_vectors, std::size_t tail_begin, float* partials) {
  // TODO: bring over the body of reduce_vectorized from your chapter 07.
}

// The number of blocks for n elements. workspace_bytes(n) needs it too, so it depends on n
// alone, not on the alignment of `in`.
std::size_t grid_blocks(std::size_t n) {
  // TODO: as in chapter 07, the blocks that fit at once (SM count x blocks per SM from
  //       cudaOccupancyMaxActiveBlocksPerMultiprocessor for reduce_vectorized), but no more than
  //       one round of loads per thread needs, ceil(n / (threads_per_block * loads_in_flight *
  //       4)), and at least 1.
  (void)n;
  return 1;
}

// Workspace: the partials, one float per block.
std::size_t workspace_bytes(std::size_t n) {
  return n == 0 ? 0 : grid_blocks(n) * sizeof(float);
}

//! [pinned_staging]
// Pinned host memory shared by all calls: room for the partials and one float for the total.
// Two calls from different host threads must not use it at the same time.
struct PinnedStaging {
  std::mutex mutex;
  float* partials = nullptr;
  std::size_t capacity = 0;  // floats at `partials`
  float* total = nullptr;
};
//! [pinned_staging]

void reduce(const float* in, std::size_t n, float* out, void* workspace, cudaStream_t stream) {
  if (n == 0) {
    cudaMemsetAsync(out, 0, sizeof(float), stream);  // 0.0f is all zero bits
    return;
  }

  // TODO: split [0, n) into a scalar head, a float4 body and a scalar tail, as in chapter 07.
  const std::size_t head = 0;
  const std::size_t body_vectors = 0;
  const std::size_t tail_begin = 0;
  const auto* body = reinterpret_cast<const float4*>(in + head);

  const std::size_t blocks = grid_blocks(n);
  auto* partials = static_cast<float*>(workspace);
  reduce_vectorized<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(
      in, n, head, body, body_vectors, tail_begin, partials);

  //! [host_finish]
  static PinnedStaging staging;
  const std::lock_guard<std::mutex> lock(staging.mutex);
  // TODO: make room: if staging.total is null, cudaMallocHost one float; if staging.capacity <
  //       blocks, cudaFreeHost the old partials buffer and cudaMallocHost a bigger one. Pinned
  //       memory is slow to allocate: do it only when it grows, never on every call. If an
  //       allocation fails, return without writing *out.
  // TODO: cudaMemcpyAsync the `blocks` partials from the workspace into staging.partials on
  //       `stream` (queued behind the kernel), then cudaStreamSynchronize(stream) so they have
  //       arrived before the host reads them.
  // TODO: add them up in a double, in index order, and store the sum as a float in
  //       *staging.total.
  // TODO: cudaMemcpyAsync *staging.total to `out` on `stream`, then cudaStreamSynchronize(stream)
  //       so the copy has read the pinned float before another call may overwrite it.
  //! [host_finish]
  (void)out;
}

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
