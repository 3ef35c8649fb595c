// Chapter 08: the whole sum, with the last step on the host.
// Differs from chapter 07: the partials are copied to pinned host memory, added there, and the
// total is copied back to *out: a round trip through the host, while the GPU waits.
// The block pass of chapter 07 is given (workbook/block_pass.cuh); write the host finish at the
// end of `reduce`.
// Check it: `grader/grade --chapter 08_host_finish`
#include "workbook/chapter.cuh"

#include <algorithm>
#include <cstddef>
#include <mutex>

#include <cuda_runtime.h>

#include "workbook/block_pass.cuh"  // given: chapter 07's block pass

namespace {

using namespace workbook::block_pass;

// The block pass of chapter 07 (given): block b writes partials[b].
__global__ void __launch_bounds__(threads_per_block)
    reduce_vectorized(const float* in, std::size_t n, std::size_t head, const float4* body,
                      std::size_t body_vectors, std::size_t tail_begin, float* partials) {
  const float v =
      block_reduce_sum(thread_sum_of_input(in, n, head, body, body_vectors, tail_begin));
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
  }
}

// The number of blocks, and so of partials, for n elements (chapter 07's grid, from n alone).
std::size_t partial_count(std::size_t n) {
  return grid_blocks(n, resident_blocks<reduce_vectorized>());
}

// Workspace: the partials, one float per block.
std::size_t workspace_bytes(std::size_t n) {
  return n == 0 ? 0 : partial_count(n) * sizeof(float);
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

  const Split s = split_at_16_bytes(in, n);
  const std::size_t blocks = partial_count(n);
  auto* partials = static_cast<float*>(workspace);
  reduce_vectorized<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(
      in, n, s.head, s.body, s.body_vectors, s.tail_begin, partials);

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
