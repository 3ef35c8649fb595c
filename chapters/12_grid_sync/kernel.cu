// Chapter 12: a grid-wide barrier from cooperative groups, in one launch.
// Differs from chapter 11: no ticket; all blocks write their partials and wait at
// cg::this_grid().sync(), then block 0 sums the partials. The grid must fit on the GPU at once.
// Bring over your chapter 07 block pass, then write the grid barrier, block 0's sum, the grid
// cap and the cooperative launch.
// Check it: `grader/grade --chapter 12_grid_sync`
#include "workbook/chapter.cuh"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace {

namespace cg = cooperative_groups;

// Policy: the block pass of chapter 07.
constexpr unsigned threads_per_block = 256;
constexpr unsigned loads_in_flight = 4;  // float4 loads issued per thread before the adds
static_assert(loads_in_flight >= 1, "every thread keeps at least one load in flight");

// TODO: bring over warp_reduce_sum and block_reduce_sum from your chapter 07.

// Phase 1: block b writes partials[b]. in[0, head) and in[tail_begin, n) are scalars;
// body[0, body_vectors) is in[head, tail_begin) seen as float4. Phase 2, after the whole grid
// has synchronized: block 0 sums the partials and writes *out.
__global__ void __launch_bounds__(threads_per_block)
    reduce_grid_sync(const float* in, std::size_t n, std::size_t head, const float4* body,
                     std::size_t body_vectors, std::size_t tail_begin, float* partials,
                     float* out) {
  // TODO: phase 1: bring over the body of reduce_vectorized from your chapter 07 (thread 0
  //       writes partials[blockIdx.x]).
  //! [grid_barrier]
  // TODO: cg::this_grid().sync(): every block's partial is written and visible before any
  //       thread goes on. It only works in a cooperative launch (see the launcher): in a plain
  //       <<<...>>> launch the grid group is invalid and sync() traps at any grid size
  //       (cudaErrorLaunchFailure, which loses the context). Then every block but block 0 returns.
  // TODO: phase 2, block 0: thread t adds partials[t], partials[t + threads_per_block], ...
  //       for t < gridDim.x in that order (after the barrier plain loads would see them; __ldcg,
  //       through L2, is extra insurance; never __ldg), then
  //       block_reduce_sum; thread 0 writes *out.
  //! [grid_barrier]
}

// The grid for n elements, or 0 if this device cannot run it. workspace_bytes(n) needs it too,
// so it depends on n alone, not on the alignment of `in`.
std::size_t grid_blocks(std::size_t n) {
  //! [grid_cap]
  // TODO: return 0 if cudaDeviceGetAttribute(cudaDevAttrCooperativeLaunch) says the device
  //       cannot launch cooperatively. Otherwise: every block must be resident at once, or the
  //       blocks waiting at grid.sync() hold their SMs while the rest never start: at most SM
  //       count x blocks per SM (cudaOccupancyMaxActiveBlocksPerMultiprocessor for
  //       reduce_grid_sync), and no more than one round of loads per thread needs,
  //       ceil(n / (threads_per_block * loads_in_flight * 4)), at least 1.
  //! [grid_cap]
  (void)n;
  return 1;
}

// Workspace: the partials, one float per block.
std::size_t workspace_bytes(std::size_t n) {
  return n == 0 ? 0 : grid_blocks(n) * sizeof(float);
}

void reduce(const float* in, std::size_t n, float* out, void* workspace, cudaStream_t stream) {
  if (n == 0) {
    cudaMemsetAsync(out, 0, sizeof(float), stream);  // 0.0f is all zero bits
    return;
  }
  const std::size_t blocks = grid_blocks(n);
  if (blocks == 0) {
    return;  // no cooperative launch on this device: *out is left unwritten
  }

  // TODO: split [0, n) into a scalar head, a float4 body and a scalar tail, as in chapter 07.
  const std::size_t head = 0;
  const std::size_t body_vectors = 0;
  const std::size_t tail_begin = 0;
  const auto* body = reinterpret_cast<const float4*>(in + head);
  auto* partials = static_cast<float*>(workspace);

  //! [cooperative_launch]
  // TODO: replace this plain launch with cudaLaunchCooperativeKernel(kernel, grid, block, args,
  //       0, stream), where args is a void* array of the addresses of variables holding each
  //       argument, in order and of exactly the parameters' types. It refuses a grid that
  //       cannot be resident at once instead of deadlocking. (No -rdc needed since CUDA 11.)
  reduce_grid_sync<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(
      in, n, head, body, body_vectors, tail_begin, partials, out);
  //! [cooperative_launch]
}

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
