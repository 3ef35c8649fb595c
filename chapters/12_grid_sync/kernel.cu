// Chapter 12: a grid-wide barrier from cooperative groups, in one launch.
// Differs from chapter 11: no ticket; all blocks write their partials and wait at
// cg::this_grid().sync(), then block 0 sums the partials. The grid must fit on the GPU at once.
// The block pass of chapter 07 is given (workbook/block_pass.cuh); write the grid barrier, block
// 0's sum, the device check and the cooperative launch.
// Check it: `grader/grade --chapter 12_grid_sync`
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include "workbook/block_pass.cuh"  // given: chapter 07's block pass

namespace {

namespace cg = cooperative_groups;

using namespace workbook::block_pass;

// Phase 1: block b writes partials[b]. Phase 2, after the whole grid has synchronized: block 0
// sums the partials and writes *out.
__global__ void __launch_bounds__(threads_per_block)
    reduce_grid_sync(const float* in, std::size_t n, std::size_t head, const float4* body,
                     std::size_t body_vectors, std::size_t tail_begin, float* partials,
                     float* out) {
  //! [grid_barrier]
  // Phase 1, the block pass of chapter 07 (given): block b writes partials[b].
  const float block_sum =
      block_reduce_sum(thread_sum_of_input(in, n, head, body, body_vectors, tail_begin));
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = block_sum;
  }
  // TODO: cg::this_grid().sync(): every block's partial is written and visible before any
  //       thread goes on. It only works in a cooperative launch (see the launcher): in a plain
  //       <<<...>>> launch the grid group is invalid and sync() traps at any grid size
  //       (cudaErrorLaunchFailure, which loses the context). Then every block but block 0 returns.
  // TODO: phase 2, block 0: thread t adds partials[t], partials[t + threads_per_block], ...
  //       for t < gridDim.x in that order (after the barrier plain loads would see them; __ldcg,
  //       through L2, is extra insurance; never __ldg), then block_reduce_sum again (the grid
  //       barrier, a barrier of every thread, separates the two calls); thread 0 writes *out.
  //! [grid_barrier]
}

//! [grid_cap]
// The grid for n elements, or 0 if this device cannot run it. workspace_bytes(n) needs it too,
// so it depends on n alone, not on the alignment of `in`.
std::size_t cooperative_grid_blocks(std::size_t n) {
  // TODO: return 0 if cudaDeviceGetAttribute(cudaDevAttrCooperativeLaunch) says the device
  //       cannot launch cooperatively (cudaGetDevice first), or if no block of this kernel fits
  //       (resident == 0).
  // Every block must be resident at once, or the blocks waiting at grid.sync() hold their SMs
  // while the rest never start. Chapter 07's grid never has more than `resident` blocks: ask
  // about this kernel, reduce_grid_sync, since a kernel with more registers fits fewer blocks.
  const std::size_t resident = resident_blocks<reduce_grid_sync>();
  return grid_blocks(n, resident);
}
//! [grid_cap]

// Workspace: the partials, one float per block.
std::size_t workspace_bytes(std::size_t n) {
  return n == 0 ? 0 : cooperative_grid_blocks(n) * sizeof(float);
}

void reduce(const float* in, std::size_t n, float* out, void* workspace, cudaStream_t stream) {
  if (n == 0) {
    cudaMemsetAsync(out, 0, sizeof(float), stream);  // 0.0f is all zero bits
    return;
  }
  const std::size_t blocks = cooperative_grid_blocks(n);
  if (blocks == 0) {
    return;  // no cooperative launch on this device: *out is left unwritten
  }

  const Split s = split_at_16_bytes(in, n);
  auto* partials = static_cast<float*>(workspace);

  //! [cooperative_launch]
  // TODO: replace this plain launch with cudaLaunchCooperativeKernel(kernel, grid, block, args,
  //       0, stream), where args is a void* array of the addresses of variables holding each
  //       argument, in order and of exactly the parameters' types (copy s.head, s.body, ... into
  //       non-const locals first). It refuses a grid that cannot be resident at once instead of
  //       deadlocking. (No -rdc needed since CUDA 11.)
  reduce_grid_sync<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(
      in, n, s.head, s.body, s.body_vectors, s.tail_begin, partials, out);
  //! [cooperative_launch]
}

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
