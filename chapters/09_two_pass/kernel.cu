// Chapter 09: a second kernel reduces the partials, with no host round trip.
// Differs from chapter 08: the partials stay on the GPU; a second launch on the same stream sums
// them with one block and writes *out, so the host never waits.
// The block pass of chapter 07 is given (workbook/block_pass.cuh); write reduce_partials, and the
// pass loop in `reduce`.
// Check it: `grader/grade --chapter 09_two_pass`
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

#include "workbook/block_pass.cuh"  // given: chapter 07's block pass

namespace {

using namespace workbook::block_pass;

// A later pass gives each block up to this many partials (16 per thread): one block covers the
// first pass's whole grid on any current GPU.
constexpr std::size_t partials_per_block = std::size_t{threads_per_block} * 16;

// First pass, the block pass of chapter 07 (given): block b writes partials[b].
__global__ void __launch_bounds__(threads_per_block)
    reduce_vectorized(const float* in, std::size_t n, std::size_t head, const float4* body,
                      std::size_t body_vectors, std::size_t tail_begin, float* partials) {
  const float v =
      block_reduce_sum(thread_sum_of_input(in, n, head, body, body_vectors, tail_begin));
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
  }
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

// The first pass's grid (chapter 07's, from n alone, so workspace_bytes(n) knows it).
std::size_t first_pass_blocks(std::size_t n) {
  return grid_blocks(n, resident_blocks<reduce_vectorized>());
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

//! [pass_loop]
void reduce(const float* in, std::size_t n, float* out, void* workspace, cudaStream_t stream) {
  if (n == 0) {
    cudaMemsetAsync(out, 0, sizeof(float), stream);  // 0.0f is all zero bits
    return;
  }

  const Split s = split_at_16_bytes(in, n);
  const Layout l = layout(n);
  float* const regions[2] = {static_cast<float*>(workspace),
                             static_cast<float*>(workspace) + l.region0_floats};

  // Pass 0: the block pass, into region 0.
  std::size_t count = first_pass_blocks(n);
  // TODO: the pass that runs with a single block writes *out. When count == 1 (n <= 4096) that is
  //       pass 0: its one partial is already the sum, and the workspace is empty. Launch it then
  //       too, with *out as its destination.
  if (count > 1) {
    reduce_vectorized<<<static_cast<unsigned>(count), threads_per_block, 0, stream>>>(
        in, n, s.head, s.body, s.body_vectors, s.tail_begin, regions[0]);
  }

  // TODO: while count > 1, launch one more pass on `stream`: blocks = next_pass_blocks(count),
  //       reduce_partials<<<blocks, threads_per_block, 0, stream>>>(src, count, dst), where src
  //       is the previous pass's output and dst is *out when blocks == 1, otherwise the region
  //       the previous pass did not write (regions[pass % 2]). Then count = blocks. No host
  //       synchronization: the stream runs the passes in order.
  (void)out;              // TODO: remove once a pass writes it
  (void)reduce_partials;  // TODO: remove once the loop launches it
}
//! [pass_loop]

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
