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

#include <cuda_runtime.h>

#include "workbook/block_pass.cuh"

namespace {

using namespace workbook::block_pass;

// The block pass of chapter 07, then thread 0 adds the block's sum into *out.
// *out must be 0 before the launch: zeroing it here would race with other blocks' atomicAdd.
__global__ void __launch_bounds__(threads_per_block)
    reduce_atomic(const float* in, std::size_t n, std::size_t head, const float4* body,
                  std::size_t body_vectors, std::size_t tail_begin, float* out) {
  const float v =
      block_reduce_sum(thread_sum_of_input(in, n, head, body, body_vectors, tail_begin));
  if (threadIdx.x == 0) {
    // One read-modify-write per block, done in L2. Blocks finish in no fixed order, so the
    // additions into *out happen in a different order from run to run.
    atomicAdd(out, v);
  }
}

// No workspace: the only state is *out itself.
std::size_t workspace_bytes(std::size_t /*n*/) { return 0; }

void reduce(const float* in, std::size_t n, float* out, void* /*workspace*/, cudaStream_t stream) {
  // Zero the sum before any block adds to it; for n == 0 that is the answer.
  cudaMemsetAsync(out, 0, sizeof(float), stream);  // 0.0f is all zero bits
  if (n == 0) {
    return;
  }

  const Split s = split_at_16_bytes(in, n);  // as in chapter 07
  const std::size_t blocks = grid_blocks(n, resident_blocks<reduce_atomic>());
  reduce_atomic<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(
      in, n, s.head, s.body, s.body_vectors, s.tail_begin, out);
}

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
