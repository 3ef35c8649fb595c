// Chapter 07 (V7): 16-byte loads in a grid-stride loop, sized to fill the GPU.
// Differs from V6: instead of one block per 512 elements, a grid just large enough to fill every
// SM walks the input with a grid-stride loop. Each thread issues loads_in_flight independent
// float4 (16-byte) loads before adding any of them, so enough bytes are in flight to cover the
// memory latency, with a quarter of the load instructions of scalar code. The float4 body must be
// 16-byte aligned, but `in` is only 4-byte aligned: 0-3 scalar head elements run up to the first
// 16-byte boundary, and 0-3 scalar tail elements follow the last whole float4.
// The pieces (the per-thread loop, the block reduction, the split and the grid) live in
// ../common/vectorized_pass.cuh, because chapters 08-12 reuse this block pass unchanged.
#include "workbook/chapter.cuh"

#include <algorithm>
#include <cstddef>

#include <cuda_runtime.h>

#include "../common/vectorized_pass.cuh"

namespace {

using namespace vectorized_pass;

// Block b writes partials[b]. Every block writes its partial, even one whose threads found
// nothing to load.
__global__ void __launch_bounds__(threads_per_block)
    reduce_vectorized(const float* in, std::size_t n, std::size_t head, const float4* body,
                      std::size_t body_vectors, std::size_t tail_begin, float* partials) {
  const float v =
      block_reduce_sum(thread_sum_of_input(in, n, head, body, body_vectors, tail_begin));
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
  }
}

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity,
                   cudaStream_t stream) {
  if (n == 0) {
    return 0;
  }
  const Split s = split_at_16_bytes(in, n);
  // As many blocks as can be resident at once, so the grid-stride loop keeps every SM full with
  // no second wave; fewer for small n; never more than the launcher may write.
  const std::size_t blocks =
      std::min(grid_blocks(n, resident_blocks<reduce_vectorized>()), capacity);
  reduce_vectorized<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(
      in, n, s.head, s.body, s.body_vectors, s.tail_begin, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
