// Chapter 10: blocks add their sums straight into *out with atomicAdd.
// Differs from chapter 09: one kernel, no partials, no workspace; *out is zeroed on the stream
// before the launch, and each block atomically adds its sum into it.
// Bring over your chapter 07 block pass, then write the atomicAdd and the zeroing.
// Check it: `grader/grade --chapter 10_atomic`
#include "workbook/chapter.cuh"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

// Policy: the block pass of chapter 07.
constexpr unsigned threads_per_block = 256;
constexpr unsigned loads_in_flight = 4;  // float4 loads issued per thread before the adds
static_assert(loads_in_flight >= 1, "every thread keeps at least one load in flight");

// TODO: bring over warp_reduce_sum and block_reduce_sum from your chapter 07.

// in[0, head) and in[tail_begin, n) are scalars; body[0, body_vectors) is in[head, tail_begin)
// seen as float4. Each block adds its sum into *out, which is 0 before the launch.
__global__ void __launch_bounds__(threads_per_block)
    reduce_atomic(const float* in, std::size_t n, std::size_t head, const float4* body,
                  std::size_t body_vectors, std::size_t tail_begin, float* out) {
  // TODO: bring over the body of reduce_vectorized from your chapter 07, up to
  //       v = block_reduce_sum(v).
  //! [atomic_add]
  // TODO: instead of writing partials[blockIdx.x], thread 0 does atomicAdd(out, v). Do not
  //       zero *out here: blocks that finished first have already added into it.
  //! [atomic_add]
}

// The number of blocks for n elements.
std::size_t grid_blocks(std::size_t n) {
  // TODO: as in chapter 07, the blocks that fit at once (SM count x blocks per SM from
  //       cudaOccupancyMaxActiveBlocksPerMultiprocessor for reduce_atomic), but no more than
  //       one round of loads per thread needs, ceil(n / (threads_per_block * loads_in_flight *
  //       4)), and at least 1.
  (void)n;
  return 1;
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

  // TODO: split [0, n) into a scalar head, a float4 body and a scalar tail, as in chapter 07.
  const std::size_t head = 0;
  const std::size_t body_vectors = 0;
  const std::size_t tail_begin = 0;
  const auto* body = reinterpret_cast<const float4*>(in + head);

  const std::size_t blocks = grid_blocks(n);
  reduce_atomic<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(
      in, n, head, body, body_vectors, tail_begin, out);
}

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
