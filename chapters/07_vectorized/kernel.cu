// Chapter 07 (V7): 16-byte loads in a grid-stride loop, with a grid sized to fill the GPU.
// Differs from V6: a grid of just enough resident blocks walks the input with float4 loads,
// several in flight per thread, instead of one block per 512 elements.
// Write reduce_vectorized, then in the launcher split `in` into an aligned float4 body with a
// scalar head and tail, and size the grid from the device.
// Check it: `grader/grade --chapter 07_vectorized`
#include "workbook/chapter.cuh"

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

//! [policy]
// Policy: block size and loads per thread trade bytes in flight against occupancy; tune both by
// measuring read bandwidth on a large input.
constexpr unsigned threads_per_block = 256;
constexpr unsigned loads_in_flight = 4;  // float4 loads issued per thread before the adds
static_assert(loads_in_flight >= 1, "every thread keeps at least one load in flight");
//! [policy]

//! [reduce_todo]
// TODO: bring the two-level shuffle reduction over from chapter 06 as
//       `__device__ float block_reduce_sum(float v)` (thread 0 gets the block's sum).
//! [reduce_todo]

//! [kernel_todo]
// in[0, head) and in[tail_begin, n) are scalars; body[0, body_vectors) is in[head, tail_begin)
// seen as float4. Block b writes partials[b].
__global__ void __launch_bounds__(threads_per_block)
    reduce_vectorized(const float* in, std::size_t n, std::size_t head, const float4* body,
                      std::size_t body_vectors, std::size_t tail_begin, float* partials) {
  // TODO: in block 0 only, thread tid < head adds in[tid] and thread tid < n - tail_begin adds
  //       in[tail_begin + tid] to its running sum v (at most 3 of each).
  // TODO: grid-stride loop over body: stride = gridDim.x * threads_per_block (std::size_t),
  //       i starts at blockIdx.x * threads_per_block + tid. While all loads_in_flight loads
  //       i, i + stride, ... are < body_vectors: load them all into a float4 array with __ldg
  //       (#pragma unroll), then add their components into v, then i += loads_in_flight * stride.
  //       The last, partial round works the same way: load r[k] = body[j] for j = i + k * stride
  //       if j < body_vectors, else zeros, all before any add, so its loads are in flight together
  //       (below about 2^22 elements each thread has only this one round).
  // TODO: v = block_reduce_sum(v), reached by every thread; thread 0 writes partials[blockIdx.x]
  //       (every block writes one, even if it loaded nothing).
}
//! [kernel_todo]

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity,
                   cudaStream_t stream) {
  if (n == 0) {
    return 0;
  }

  //! [split_todo]
  // TODO: `in` is only 4-byte aligned. Find the scalar head up to the first 16-byte boundary
  //       ((16 - address % 16) % 16 bytes, at most n elements), the whole float4 vectors after
  //       it, and the scalar tail (0-3 elements) after those; then
  //       body = reinterpret_cast<const float4*>(in + head).
  const std::size_t head = 0;
  const std::size_t body_vectors = 0;
  const std::size_t tail_begin = 0;
  const auto* body = reinterpret_cast<const float4*>(in + head);
  //! [split_todo]

  //! [grid_todo]
  // TODO: size the grid so every SM is full and no more: cudaGetDevice, then
  //       cudaDeviceGetAttribute(cudaDevAttrMultiProcessorCount) times
  //       cudaOccupancyMaxActiveBlocksPerMultiprocessor(reduce_vectorized, threads_per_block).
  //       Give small inputs fewer blocks (about one round of loads_in_flight vectors per thread),
  //       at least 1 and at most `capacity`.
  (void)capacity;
  const std::size_t blocks = 1;
  //! [grid_todo]

  reduce_vectorized<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(
      in, n, head, body, body_vectors, tail_begin, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
