// Chapter 11: the last block to finish sums the partials, in one launch.
// Differs from chapter 10: each block stores its partial and takes a ticket from a counter; the
// block with the last ticket sums all partials in a fixed order, writes *out, resets the counter.
// The block pass of chapter 07 is given (workbook/block_pass.cuh); write the ticket and the last
// block's sum.
// Check it: `grader/grade --chapter 11_last_block`
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

#include "workbook/block_pass.cuh"  // given: chapter 07's block pass

namespace {

using namespace workbook::block_pass;

//! [workspace_layout]
// Workspace: the ticket counter at offset 0, the partials from a 16-byte offset. The counter's
// place does not depend on n, so a workspace reused for calls with different n never finds a
// stale partial where it expects a zero counter.
constexpr std::size_t partials_offset_bytes = 16;
//! [workspace_layout]

// Block b writes partials[b] and takes a ticket; the block with the last ticket sums the
// partials into *out and puts the counter back to 0. A grid of one block writes *out directly
// and needs no workspace (partials and counter are then null).
__global__ void __launch_bounds__(threads_per_block)
    reduce_last_block(const float* in, std::size_t n, std::size_t head, const float4* body,
                      std::size_t body_vectors, std::size_t tail_begin, float* partials,
                      unsigned* counter, float* out) {
  //! [ticket]
  // The block pass of chapter 07 (given): thread 0 has the block's sum.
  const float block_sum =
      block_reduce_sum(thread_sum_of_input(in, n, head, body, body_vectors, tail_begin));
  // TODO: fast path: if gridDim.x == 1, thread 0 writes block_sum to *out, and the block returns.
  // TODO: thread 0: write partials[blockIdx.x] = block_sum; __threadfence() so the partial is
  //       visible to the whole device before the ticket is; ticket = atomicAdd(counter, 1u).
  //       The block that draws gridDim.x - 1 is the last: every other partial is written. The
  //       last block's thread 0 does one more __threadfence() so its reads of the partials come
  //       after the ticket. Put the flag in a __shared__ bool, __syncthreads() so every thread
  //       sees it, and every block but the last returns. Never wait for other blocks in a loop.
  // TODO: the last block: thread t adds partials[t], partials[t + threads_per_block], ... for
  //       t < gridDim.x, in that order (fixed, whichever block is last), reading with __ldcg so
  //       the loads go to L2, not to a stale line in this SM's L1. Then block_reduce_sum again
  //       (the __syncthreads() above separates the two calls, so warp 0 has read the first
  //       call's shared warp sums before any warp writes them again); thread 0 writes *out and
  //       sets *counter = 0 for the next call.
  //! [ticket]
  (void)block_sum;  // TODO: remove once the fast path and the partial use it
}

// The grid: chapter 07's, from n alone (not the alignment of `in`), so workspace_bytes(n) knows
// it.
unsigned ticket_grid_blocks(std::size_t n) {
  return static_cast<unsigned>(grid_blocks(n, resident_blocks<reduce_last_block>()));
}

std::size_t workspace_bytes(std::size_t n) {
  const unsigned blocks = ticket_grid_blocks(n);
  if (blocks == 1) {
    return 0;  // the fast path uses no partials and no ticket
  }
  return partials_offset_bytes + std::size_t{blocks} * sizeof(float);
}

void reduce(const float* in, std::size_t n, float* out, void* workspace, cudaStream_t stream) {
  // n == 0 needs no special case: one block finds nothing to load and writes 0 to *out.
  const Split s = split_at_16_bytes(in, n);
  const unsigned blocks = ticket_grid_blocks(n);
  unsigned* counter = nullptr;
  float* partials = nullptr;
  if (blocks > 1) {
    counter = static_cast<unsigned*>(workspace);
    partials = reinterpret_cast<float*>(static_cast<char*>(workspace) + partials_offset_bytes);
  }

  reduce_last_block<<<blocks, threads_per_block, 0, stream>>>(
      in, n, s.head, s.body, s.body_vectors, s.tail_begin, partials, counter, out);
}

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
