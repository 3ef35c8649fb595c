// A deliberately faulty submission, for testing the grader: chapter 09's two passes, but
// workspace_bytes(n) asks for one float less than the first pass writes, so its last partial
// lands just past the workspace the harness gave (the judge's guard band names the byte).
#include "workbook/chapter.cuh"

#include <algorithm>
#include <cstddef>

#include <cuda_runtime.h>

#include "workbook/block_pass.cuh"

namespace {

using namespace workbook::block_pass;

// A later pass gives each block up to this many partials (16 per thread): one block covers the
// first pass's whole grid on any current GPU.
constexpr std::size_t partials_per_block = std::size_t{threads_per_block} * 16;

// First pass, the block pass of chapter 07: block b writes partials[b].
__global__ void __launch_bounds__(threads_per_block)
    reduce_vectorized(const float* in, std::size_t n, std::size_t head, const float4* body,
                      std::size_t body_vectors, std::size_t tail_begin, float* partials) {
  const float v =
      block_reduce_sum(thread_sum_of_input(in, n, head, body, body_vectors, tail_begin));
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
  }
}

// Later passes: block b of the grid writes dst[b], the sum of src[j] for the j it visits in a
// grid-stride loop. Thread t of block b always adds the same partials in the same order, so the
// result depends only on `count` and the grid, never on timing. src was written by an earlier
// kernel on this stream and is read-only here, so __ldg is safe.
__global__ void __launch_bounds__(threads_per_block)
    reduce_partials(const float* src, std::size_t count, float* dst) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * threads_per_block;
  float v = 0.0f;
  for (std::size_t j = static_cast<std::size_t>(blockIdx.x) * threads_per_block + threadIdx.x;
       j < count; j += loads_in_flight * stride) {
    float r[loads_in_flight];
#pragma unroll
    for (unsigned k = 0; k < loads_in_flight; ++k) {
      const std::size_t p = j + k * stride;
      r[k] = (p < count) ? __ldg(&src[p]) : 0.0f;
    }
#pragma unroll
    for (unsigned k = 0; k < loads_in_flight; ++k) {
      v += r[k];
    }
  }

  v = block_reduce_sum(v);
  if (threadIdx.x == 0) {
    dst[blockIdx.x] = v;
  }
}

// The first pass's grid, as in chapter 07; it depends on n alone (not on the alignment of `in`),
// so workspace_bytes(n) knows it.
std::size_t first_pass_blocks(std::size_t n) {
  return grid_blocks(n, resident_blocks<reduce_vectorized>());
}

// The grid of a later pass over `count` values (one value per block it writes).
std::size_t next_pass_blocks(std::size_t count) {
  return (count + partials_per_block - 1) / partials_per_block;
}

// Workspace: two regions that the passes ping-pong between, region 0 then region 1 then region
// 0... The last pass writes *out instead. The first pass writes the most values into region 0;
// counts only shrink, so region 1 needs room for the second pass's output (none when the second
// pass is the last one, as it is with a capped first grid).
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
  const std::size_t floats = l.region0_floats + l.region1_floats;
  return floats == 0 ? 0 : (floats - 1) * sizeof(float);  // the fault: one float short
}

void reduce(const float* in, std::size_t n, float* out, void* workspace, cudaStream_t stream) {
  if (n == 0) {
    cudaMemsetAsync(out, 0, sizeof(float), stream);  // 0.0f is all zero bits
    return;
  }

  const Split s = split_at_16_bytes(in, n);  // as in chapter 07
  const Layout l = layout(n);
  float* const regions[2] = {static_cast<float*>(workspace),
                             static_cast<float*>(workspace) + l.region0_floats};

  // Pass 0: the block pass. With a single block its partial is already the sum.
  std::size_t count = first_pass_blocks(n);
  float* dst = (count == 1) ? out : regions[0];
  reduce_vectorized<<<static_cast<unsigned>(count), threads_per_block, 0, stream>>>(
      in, n, s.head, s.body, s.body_vectors, s.tail_begin, dst);

  // Passes 1, 2, ...: each reads the previous pass's values and writes one per block into the
  // other region, or into *out once a single block is enough. The stream runs them in order.
  const float* src = dst;
  for (unsigned pass = 1; count > 1; ++pass) {
    const std::size_t blocks = next_pass_blocks(count);
    dst = (blocks == 1) ? out : regions[pass % 2];
    reduce_partials<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(src, count,
                                                                                     dst);
    src = dst;
    count = blocks;
  }
}

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
