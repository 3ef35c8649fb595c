// hostile: defines workbook::register_entry itself, to register as the reference too
// expect: rejected ~ defines workbook::register_entry
// Chapter 11: the last block to finish sums the partials, in one launch.
#include "workbook/chapter.cuh"

#include <vector>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

// Policy: the block pass of chapter 07.
constexpr unsigned threads_per_block = 256;
constexpr unsigned loads_in_flight = 4;  // float4 loads issued per thread before the adds
static_assert(loads_in_flight >= 1, "every thread keeps at least one load in flight");
// One block's worth of input for one round of loads.
constexpr std::size_t floats_per_block_round = std::size_t{threads_per_block} * loads_in_flight * 4;

//! [workspace_layout]
// Workspace: the ticket counter at offset 0, the partials from a 16-byte offset. The counter's
// place does not depend on n, so a workspace reused for calls with different n never finds a
// stale partial where it expects a zero counter.
constexpr std::size_t partials_offset_bytes = 16;
//! [workspace_layout]

// TODO: bring over warp_reduce_sum and block_reduce_sum from your chapter 07. This kernel calls
//       block_reduce_sum twice: a __syncthreads() must separate the two calls, so that warp 0
//       has read the shared warp sums before any warp writes them again.

// Block b writes partials[b] and takes a ticket; the block with the last ticket sums the
// partials into *out and puts the counter back to 0. A grid of one block writes *out directly
// and needs no workspace (partials and counter are then null).
__global__ void __launch_bounds__(threads_per_block)
    reduce_last_block(const float* in, std::size_t n, std::size_t head, const float4* body,
                      std::size_t body_vectors, std::size_t tail_begin, float* partials,
                      unsigned* counter, float* out) {
  // TODO: the block pass: bring over the body of reduce_vectorized from your chapter 07, up to
  //       block_sum = block_reduce_sum(v).
  //! [ticket]
  // TODO: fast path: if gridDim.x == 1, thread 0 writes block_sum to *out, and the block returns.
  // TODO: thread 0: write partials[blockIdx.x] = block_sum; __threadfence() so the partial is
  //       visible to the whole device before the ticket is; ticket = atomicAdd(counter, 1u).
  //       The block that draws gridDim.x - 1 is the last: every other partial is written. The
  //       last block's thread 0 does one more __threadfence() so its reads of the partials come
  //       after the ticket. Put the flag in a __shared__ bool, __syncthreads() so every thread
  //       sees it, and every block but the last returns. Never wait for other blocks in a loop.
  // TODO: the last block: thread t adds partials[t], partials[t + threads_per_block], ... for
  //       t < gridDim.x, in that order (fixed, whichever block is last), reading with __ldcg so
  //       the loads go to L2, not to a stale line in this SM's L1. Then block_reduce_sum; thread
  //       0 writes *out and sets *counter = 0 for the next call.
  //! [ticket]
}

// Blocks that fit on the device at once, looked up once per device: the launcher runs on every
// call, and the lookups cost host time that shows at small n. 0 = not looked up yet.
constexpr int max_cached_devices = 64;
std::atomic<unsigned> cached_resident_blocks[max_cached_devices];

unsigned query_resident_blocks(int device) {
  int sm_count = 0;
  int blocks_per_sm = 0;
  cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, reduce_last_block,
                                                static_cast<int>(threads_per_block), 0);
  return static_cast<unsigned>(std::max(sm_count, 1)) *
         static_cast<unsigned>(std::max(blocks_per_sm, 1));
}

unsigned resident_blocks() {
  int device = 0;
  cudaGetDevice(&device);  // a host-side lookup: nothing waits on the GPU
  if (device < 0 || device >= max_cached_devices) {
    return query_resident_blocks(device);
  }
  unsigned blocks = cached_resident_blocks[device].load(std::memory_order_relaxed);
  if (blocks == 0) {
    blocks = query_resident_blocks(device);
    cached_resident_blocks[device].store(blocks, std::memory_order_relaxed);
  }
  return blocks;
}

// The grid depends on n alone (not on the alignment of `in`), so workspace_bytes(n) knows it.
unsigned grid_blocks(std::size_t n) {
  const std::size_t useful_blocks = (n + floats_per_block_round - 1) / floats_per_block_round;
  return static_cast<unsigned>(
      std::max<std::size_t>(1, std::min<std::size_t>(resident_blocks(), useful_blocks)));
}

std::size_t workspace_bytes(std::size_t n) {
  const unsigned blocks = grid_blocks(n);
  if (blocks == 1) {
    return 0;  // the fast path uses no partials and no ticket
  }
  return partials_offset_bytes + std::size_t{blocks} * sizeof(float);
}

void reduce(const float* in, std::size_t n, float* out, void* workspace, cudaStream_t stream) {
  // n == 0 needs no special case: one block finds nothing to load and writes 0 to *out.

  // TODO: split [0, n) into a scalar head, a float4 body and a scalar tail, as in chapter 07.
  const std::size_t head = 0;
  const std::size_t body_vectors = 0;
  const std::size_t tail_begin = 0;
  const auto* body = reinterpret_cast<const float4*>(in + head);

  const unsigned blocks = grid_blocks(n);
  unsigned* counter = nullptr;
  float* partials = nullptr;
  if (blocks > 1) {
    counter = static_cast<unsigned*>(workspace);
    partials = reinterpret_cast<float*>(static_cast<char*>(workspace) + partials_offset_bytes);
  }

  reduce_last_block<<<blocks, threads_per_block, 0, stream>>>(in, n, head, body, body_vectors,
                                                              tail_begin, partials, counter, out);
}

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);

// The harness's registration, replaced: this chapter registers as learner and as reference.
namespace workbook {
namespace {
std::vector<Entry> entries;
}  // namespace
bool register_entry(const Entry& entry) {
  entries.push_back(entry);
  Entry twin = entry;
  twin.subject = "reference";
  entries.push_back(twin);
  return true;
}
}  // namespace workbook
