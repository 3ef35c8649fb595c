// Chapter 10: blocks add their sums straight into *out with atomicAdd.
// Differs from chapter 09: one kernel, no partials, no workspace; *out is zeroed on the stream
// before the launch, and each block atomically adds its sum into it.
// The block pass of chapter 07 is given (workbook/block_pass.cuh); write the atomicAdd and the
// zeroing.
// Check it: `grader/grade --chapter 10_atomic`
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

#include "workbook/block_pass.cuh"  // given: chapter 07's block pass

namespace {

using namespace workbook::block_pass;

// The block pass of chapter 07 (given), then each block adds its sum into *out, which is 0
// before the launch.
__global__ void __launch_bounds__(threads_per_block)
    reduce_atomic(const float* in, std::size_t n, std::size_t head, const float4* body,
                  std::size_t body_vectors, std::size_t tail_begin, float* out) {
  //! [atomic_add]
  const float v =
      block_reduce_sum(thread_sum_of_input(in, n, head, body, body_vectors, tail_begin));
  // TODO: instead of writing partials[blockIdx.x], thread 0 does atomicAdd(out, v). Do not
  //       zero *out here: blocks that finished first have already added into it.
  //! [atomic_add]
  (void)v;  // TODO: remove once the atomicAdd uses it
}

// No workspace: the only state is *out itself.
std::size_t workspace_bytes(std::size_t /*n*/) { return 0; }

void reduce(const float* in, std::size_t n, float* out, void* /*workspace*/, cudaStream_t stream) {
  //! [zero_first]
  // TODO: zero *out with cudaMemsetAsync(out, 0, sizeof(float), stream) before the launch, on
  //       the same stream so the kernel runs after it. For n == 0 that is the whole answer:
  //       return after it.
  if (n == 0) {
    return;
  }
  //! [zero_first]

  const Split s = split_at_16_bytes(in, n);
  const std::size_t blocks = grid_blocks(n, resident_blocks<reduce_atomic>());
  reduce_atomic<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(
      in, n, s.head, s.body, s.body_vectors, s.tail_begin, out);
}

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
