// Chapter 09: a second kernel reduces the partials, with no host round trip.
// Differs from chapter 08: the partials stay on the GPU; a second launch on the same stream sums
// them with one block and writes *out, so the host never waits.
// Bring over your chapter 07 block pass, write reduce_partials, and the pass loop in `reduce`.
// Check it: `grader/grade --chapter 09_two_pass`
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
// A later pass gives each block up to this many partials (16 per thread): one block covers the
// first pass's whole grid on any current GPU.
constexpr std::size_t partials_per_block = std::size_t{threads_per_block} * 16;

// TODO: bring over warp_reduce_sum and block_reduce_sum from your chapter 07.

// First pass. in[0, head) and in[tail_begin, n) are scalars; body[0, body_vectors) is
// in[head, tail_begin) seen as float4. Block b writes partials[b].
__global__ void __launch_bounds__(threads_per_block)
    reduce_vectorized(const float* in, std::size_t n, std::size_t head, const float4* body,
                      std::size_t body_vectors, std::size_t tail_begin, float* partials) {
  // TODO: bring over the body of reduce_vectorized from your chapter 07.
}

//! [reduce_partials]
// Later passes: block b writes dst[b], the sum of the src[j] it visits.
__global__ void __launch_bounds__(threads_per_block)
    reduce_partials(const float* src, std::size_t count, float* dst) {
  // TODO: a grid-stride loop over src[0, count): j starts at blockIdx.x * threads_per_block +
  //       threadIdx.x (std::size_t) and steps by gridDim.x * threads_per_block; add src[j] into
  //       v (src was written by the previous kernel, so __ldg is safe). Every thread always adds
  //       the same values in the same order: that is what makes the sum repeatable.
  // TODO: v = block_reduce_sum(v), reached by every thread; thread 0 writes dst[blockIdx.x].
}
//! [reduce_partials]

// The first pass's grid. workspace_bytes(n) needs it too, so it depends on n alone, not on the
// alignment of `in`.
std::size_t first_pass_blocks(std::size_t n) {
  // TODO: as in chapter 07, the blocks that fit at once (SM count x blocks per SM from
  //       cudaOccupancyMaxActiveBlocksPerMultiprocessor for reduce_vectorized), but no more than
  //       one round of loads per thread needs, ceil(n / (threads_per_block * loads_in_flight *
  //       4)), and at least 1.
  (void)n;
  return 1;
}

// The grid of a later pass over `count` values (one value per block it writes).
std::size_t next_pass_blocks(std::size_t count) {
  return (count + partials_per_block - 1) / partials_per_block;
}

// Workspace: two regions that the passes ping-pong between: pass 0 writes region 0, pass 1
// region 1, pass 2 region 0, ..., and the pass with a single block writes *out instead. Counts
// only shrink, so region 0 holds the first pass's partials and region 1 the second pass's.
struct Layout {
  std::size_t region0_floats = 0;
  std::size_t region1_floats = 0;
};

Layout layout(std::size_t n) {
  Layout l;
  if (n == 0) {
    return l;
  }
  const std::size_t first = first_pass_blocks(n);
  if (first > 1) {
    l.region0_floats = first;
    const std::size_t second = next_pass_blocks(first);
    if (second > 1) {
      l.region1_floats = second;
    }
  }
  return l;
}

std::size_t workspace_bytes(std::size_t n) {
  const Layout l = layout(n);
  return (l.region0_floats + l.region1_floats) * sizeof(float);
}

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

  const Layout l = layout(n);
  float* const regions[2] = {static_cast<float*>(workspace),
                             static_cast<float*>(workspace) + l.region0_floats};

  //! [pass_loop]
  // Pass 0: the block pass. With a single block its partial is already the sum.
  std::size_t count = first_pass_blocks(n);
  float* dst = (count == 1) ? out : regions[0];
  reduce_vectorized<<<static_cast<unsigned>(count), threads_per_block, 0, stream>>>(
      in, n, head, body, body_vectors, tail_begin, dst);

  // TODO: while count > 1, launch one more pass on `stream`: blocks = next_pass_blocks(count),
  //       reduce_partials<<<blocks, threads_per_block, 0, stream>>>(src, count, dst), where src
  //       is the previous pass's output and dst is *out when blocks == 1, otherwise the region
  //       the previous pass did not write (regions[pass % 2]). Then count = blocks. No host
  //       synchronization: the stream runs the passes in order.
  //! [pass_loop]
  (void)regions;          // TODO: remove once the loop uses them
  (void)reduce_partials;  // TODO: remove once the loop launches it
}

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
