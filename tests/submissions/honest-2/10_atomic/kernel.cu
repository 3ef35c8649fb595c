// honest: a helper at file scope, std::size_t ceil_div(std::size_t, std::size_t), sizes the grid
// expect: full marks
// A function the learner defines is the learner's own whatever its name: ceil_div begins like the
// math library's ceil, but a C++ function's symbol carries its parameters and replaces nothing.
// Only a definition of the harness's or GoogleTest's code, or a C-linkage function of a library
// the rules name, would replace code the grade depends on.
// Chapter 10: each block's sum goes straight into *out with atomicAdd, after *out is zeroed on
// the same stream.
#include "workbook/chapter.cuh"

#include <algorithm>
#include <cstddef>

#include <cuda_runtime.h>

#include "workbook/block_pass.cuh"

// Outside the anonymous namespace on purpose: a learner's helper, with external linkage.
std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

namespace {

using namespace workbook::block_pass;

__global__ void __launch_bounds__(threads_per_block)
    add_block_sums(const float* in, std::size_t n, std::size_t head, const float4* body,
                   std::size_t body_vectors, std::size_t tail_begin, float* out) {
  const float sum = block_reduce_sum(thread_sum_of_input(in, n, head, body, body_vectors, tail_begin));
  if (threadIdx.x == 0) atomicAdd(out, sum);
}

std::size_t workspace_bytes(std::size_t) { return 0; }

void reduce(const float* in, std::size_t n, float* out, void*, cudaStream_t stream) {
  cudaMemsetAsync(out, 0, sizeof(float), stream);  // before any block adds to it
  if (n == 0) return;
  const Split split = split_at_16_bytes(in, n);
  // No more blocks than fit on the GPU at once, and no more than one round of loads needs.
  const std::size_t rounds = ceil_div(n, floats_per_block_round);
  const std::size_t blocks =
      std::max<std::size_t>(1, std::min<std::size_t>(resident_blocks<add_block_sums>(), rounds));
  add_block_sums<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(
      in, n, split.head, split.body, split.body_vectors, split.tail_begin, out);
}

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
