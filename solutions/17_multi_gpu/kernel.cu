// Chapter 17: several GPUs. Each GPU reduces its own shard with chapter 11's last-block kernel
// (one launch, one float), and NCCL adds the GPUs' floats: ncclAllReduce of a single value, after
// which every GPU holds the same total. The shard reduction moves the shard's bytes and is bound by
// that GPU's memory bandwidth; the all-reduce moves 4 bytes and is bound by latency (microseconds),
// so with K GPUs the whole takes about 1/K of one GPU's time on the same elements, plus that.
// The same bits on every rank: NCCL reduces each element once and hands every rank that value.
#include "workbook/chapter.cuh"

#include <algorithm>
#include <cstddef>

#include <cuda_runtime.h>
#include <nccl.h>

#include "workbook/block_pass.cuh"

namespace {

using namespace workbook::block_pass;

// A single block's share of partials[0, count), written by other blocks of this grid: thread t
// adds partials[t], partials[t + threads_per_block], ... in that order, so the total depends only
// on the partials, never on which block runs this. __ldcg reads through L2, where the other
// blocks' partials are, and never from this SM's L1, which is not coherent with other SMs'
// writes.
static __device__ __forceinline__ float thread_sum_of_partials(const float* partials,
                                                               std::size_t count) {
  float v = 0.0f;
  for (std::size_t j = threadIdx.x; j < count;
       j += std::size_t{loads_in_flight} * threads_per_block) {
    float r[loads_in_flight];
#pragma unroll
    for (unsigned k = 0; k < loads_in_flight; ++k) {
      const std::size_t p = j + std::size_t{k} * threads_per_block;
      r[k] = (p < count) ? __ldcg(&partials[p]) : 0.0f;
    }
#pragma unroll
    for (unsigned k = 0; k < loads_in_flight; ++k) {
      v += r[k];
    }
  }
  return v;
}

// Workspace: the ticket counter at offset 0, the partials from a 16-byte offset. The counter's
// place does not depend on n, so a workspace reused for calls with different n never finds a
// stale partial where it expects a zero counter.
constexpr std::size_t partials_offset_bytes = 16;
static_assert(partials_offset_bytes >= sizeof(unsigned) && partials_offset_bytes % 16 == 0,
              "the counter fits before the partials, which stay 16-byte aligned");

// Block b writes partials[b] and takes a ticket; the block with the last ticket sums the
// partials into *out and puts the counter back to 0. A grid of one block writes *out directly
// and needs no workspace (partials and counter are then null).
__global__ void __launch_bounds__(threads_per_block)
    reduce_last_block(const float* in, std::size_t n, std::size_t head, const float4* body,
                      std::size_t body_vectors, std::size_t tail_begin, float* partials,
                      unsigned* counter, float* out) {
  const unsigned tid = threadIdx.x;
  const float block_sum =
      block_reduce_sum(thread_sum_of_input(in, n, head, body, body_vectors, tail_begin));

  // Fast path: a single block's sum is the total; no partial, no ticket.
  if (gridDim.x == 1) {
    if (tid == 0) {
      *out = block_sum;
    }
    return;
  }

  __shared__ bool is_last_block;
  if (tid == 0) {
    partials[blockIdx.x] = block_sum;
    __threadfence();  // release: this partial is visible to the whole device before the ticket
                      // below is, so a block that sees our ticket also sees our partial
    const unsigned ticket = atomicAdd(counter, 1u);
    const bool last = (ticket == gridDim.x - 1);
    if (last) {
      __threadfence();  // acquire: the partial loads after the barrier below are ordered after
                        // the ticket, which came after every other block's partial
    }
    is_last_block = last;
  }
  __syncthreads();  // is_last_block is written before any thread reads it; also warp 0's reads
                    // of warp_sums in the first block_reduce_sum are done before the second
                    // one writes it
  if (!is_last_block) {
    return;
  }

  // The last block: every partial is written. Sum them in a fixed order.
  const float total = block_reduce_sum(thread_sum_of_partials(partials, gridDim.x));
  if (tid == 0) {
    *out = total;
    // Every block has taken its ticket, so nothing else touches the counter in this launch;
    // the next launch sees the 0 (kernel boundaries order it on the same stream).
    *counter = 0;
  }
}

// The grid, as in chapter 07. It depends on n alone (not on the alignment of `in`), so
// workspace_bytes(n) knows it.
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

// One rank's part: this GPU's shard to one float in *out (chapter 11's one launch), then the
// all-reduce of that float across every rank, in place, on the same stream. Stream order makes
// NCCL's kernel wait for the reduction that writes *out; nothing here waits for NCCL, so the harness
// can call every rank of this process inside one ncclGroupStart/ncclGroupEnd.
void reduce_rank(const float* in, std::size_t n, float* out, void* workspace, cudaStream_t stream,
                 ncclComm_t comm) {
  // n == 0 needs no special case: one block finds nothing to load and writes 0 to *out, and 0
  // is what this rank adds to the others.
  const Split s = split_at_16_bytes(in, n);  // as in chapter 07
  const unsigned blocks = ticket_grid_blocks(n);
  unsigned* counter = nullptr;
  float* partials = nullptr;
  if (blocks > 1) {
    counter = static_cast<unsigned*>(workspace);
    partials = reinterpret_cast<float*>(static_cast<char*>(workspace) + partials_offset_bytes);
  }
  reduce_last_block<<<blocks, threads_per_block, 0, stream>>>(
      in, n, s.head, s.body, s.body_vectors, s.tail_begin, partials, counter, out);

  // Every rank's one float, summed; every rank gets the one result. NCCL computes each element of
  // an all-reduce once (a ring or a tree) and hands that same value to every rank, so the ranks
  // agree bit for bit; a failed call leaves *out as this rank's own sum, which the checks see.
  ncclAllReduce(out, out, 1, ncclFloat, ncclSum, comm, stream);
}

}  // namespace

WORKBOOK_RANK_REDUCE(reduce_rank, workspace_bytes);
