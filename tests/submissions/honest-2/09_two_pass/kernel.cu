// honest: looks the GPU's resident block count up once, behind std::call_once and a std::once_flag
// expect: full marks
// std::call_once is ordinary C++: its symbols (__once_proxy, std::__once_callable, pthread_once,
// the _GLOBAL_OFFSET_TABLE_ its thread-local access goes through) are the C++ library's, run in
// the runner's sandbox like any other library code, and do none of the chapter's work.
// Chapter 09: the block pass writes one partial per block; a second kernel of one block adds
// them on the GPU and writes *out. The host only queues the two launches.
#include "workbook/chapter.cuh"

#include <algorithm>
#include <cstddef>
#include <mutex>

#include <cuda_runtime.h>

#include "workbook/block_pass.cuh"

namespace {

using namespace workbook::block_pass;

__global__ void __launch_bounds__(threads_per_block)
    first_pass(const float* in, std::size_t n, std::size_t head, const float4* body,
               std::size_t body_vectors, std::size_t tail_begin, float* partials) {
  const float sum = block_reduce_sum(thread_sum_of_input(in, n, head, body, body_vectors, tail_begin));
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

// One block: thread t adds partials t, t + 256, ... in that order, so the sum is the same on
// every run; then the block's tree.
__global__ void __launch_bounds__(threads_per_block)
    second_pass(const float* partials, std::size_t count, float* out) {
  float sum = 0.0f;
  for (std::size_t i = threadIdx.x; i < count; i += threads_per_block) sum += partials[i];
  sum = block_reduce_sum(sum);
  if (threadIdx.x == 0) *out = sum;
}

// The blocks of first_pass that fit on the GPU at once, asked once per process.
std::size_t resident() {
  static std::once_flag asked;
  static std::size_t blocks = 0;
  std::call_once(asked, [] { blocks = resident_blocks<first_pass>(); });
  return blocks;
}

std::size_t first_pass_blocks(std::size_t n) { return grid_blocks(n, resident()); }

std::size_t workspace_bytes(std::size_t n) {
  const std::size_t blocks = n == 0 ? 0 : first_pass_blocks(n);
  return blocks > 1 ? blocks * sizeof(float) : 0;
}

void reduce(const float* in, std::size_t n, float* out, void* workspace, cudaStream_t stream) {
  if (n == 0) {
    cudaMemsetAsync(out, 0, sizeof(float), stream);
    return;
  }
  const Split split = split_at_16_bytes(in, n);
  const std::size_t blocks = first_pass_blocks(n);
  float* partials = blocks == 1 ? out : static_cast<float*>(workspace);  // one block: its sum is *out
  first_pass<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(
      in, n, split.head, split.body, split.body_vectors, split.tail_begin, partials);
  if (blocks > 1) second_pass<<<1, threads_per_block, 0, stream>>>(partials, blocks, out);
}

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
