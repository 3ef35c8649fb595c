// Chapter 17: several GPUs: each GPU reduces its own shard, and NCCL adds the GPUs' sums.
// Differs from chapter 11: the function below is one rank's part of a reduction whose input is
// spread over several GPUs. The harness calls it once for each GPU, with that GPU current, its
// shard, its stream and that rank's own NCCL communicator (one process drives every GPU, and calls
// every rank inside one NCCL group). Reduce this GPU's shard to one float in *out (chapter 11's ticket, in one launch),
// then have NCCL add every rank's float, so that every GPU ends with the same total.
// The block pass of chapter 07 is given (workbook/block_pass.cuh). Needs NCCL and two GPUs.
// Check it: `grader/grade --chapter 17_multi_gpu` (skipped on one GPU; the lesson says how to try
// it there).
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>
#include <nccl.h>

#include "workbook/block_pass.cuh"  // given: chapter 07's block pass

namespace {

using namespace workbook::block_pass;

// Workspace: the ticket counter at offset 0, the partials from a 16-byte offset (chapter 11's).
constexpr std::size_t partials_offset_bytes = 16;

//! [shard_sum]
// This GPU's shard to one float in *out, in one launch. A grid of one block writes *out directly
// (partials and counter are then null).
__global__ void __launch_bounds__(threads_per_block)
    reduce_shard(const float* in, std::size_t n, std::size_t head, const float4* body,
                 std::size_t body_vectors, std::size_t tail_begin, float* partials,
                 unsigned* counter, float* out) {
  // The block pass of chapter 07 (given): thread 0 has the block's sum.
  const float block_sum =
      block_reduce_sum(thread_sum_of_input(in, n, head, body, body_vectors, tail_begin));
  // TODO: chapter 11's finish. One block: thread 0 writes block_sum to *out. Otherwise thread 0
  //       writes partials[blockIdx.x], __threadfence(), takes a ticket with atomicAdd(counter,
  //       1u); the block that draws gridDim.x - 1 is last (one more __threadfence()). In the last
  //       block, thread t adds __ldcg(&partials[t]), __ldcg(&partials[t + threads_per_block]),
  //       ... in that order, block_reduce_sum again (after a __syncthreads()), and thread 0 writes
  //       *out and sets *counter = 0.
  (void)block_sum;  // TODO: remove once the finish uses it
  (void)partials;
  (void)counter;
  (void)out;
}
//! [shard_sum]

// The grid, as in chapter 07, from n alone (not the alignment of `in`), so workspace_bytes(n)
// knows it.
unsigned shard_grid_blocks(std::size_t n) {
  return static_cast<unsigned>(grid_blocks(n, resident_blocks<reduce_shard>()));
}

std::size_t workspace_bytes(std::size_t n) {
  const unsigned blocks = shard_grid_blocks(n);
  return blocks > 1 ? partials_offset_bytes + std::size_t{blocks} * sizeof(float) : 0;
}

// One rank's part: called for every GPU with that GPU current. `comm` is an ncclComm_t.
void reduce_rank(const float* in, std::size_t n, float* out, void* workspace, cudaStream_t stream,
                 ncclComm_t comm) {
  // n == 0 needs no special case: one block finds nothing to load and writes 0 to *out.
  const Split s = split_at_16_bytes(in, n);  // given: chapter 07's head/body/tail split
  const unsigned blocks = shard_grid_blocks(n);
  unsigned* counter = nullptr;
  float* partials = nullptr;
  if (blocks > 1) {
    counter = static_cast<unsigned*>(workspace);
    partials = reinterpret_cast<float*>(static_cast<char*>(workspace) + partials_offset_bytes);
  }
  reduce_shard<<<blocks, threads_per_block, 0, stream>>>(in, n, s.head, s.body, s.body_vectors,
                                                         s.tail_begin, partials, counter, out);
  //! [all_reduce]
  // TODO: one NCCL collective that adds every rank's *out and leaves the total in every rank's
  //       *out (the lesson's "The idea", step 2; NCCL's documentation lists its collectives and
  //       their arguments). Queue it on this rank's stream, so that it runs after the kernel
  //       above, and do not wait for it here: the harness calls every rank inside one NCCL group,
  //       so the collective is only enqueued when the group ends, after this call.
  (void)comm;  // TODO: remove once the all-reduce uses it
  //! [all_reduce]
}

}  // namespace

WORKBOOK_RANK_REDUCE(reduce_rank, workspace_bytes);
