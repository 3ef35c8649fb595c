// Chapter 12: a grid-wide barrier from cooperative groups, in one launch.
// Differs from chapter 11: no ticket counter; every block writes its partial, the whole grid
// waits at cg::this_grid().sync(), and then block 0 sums the partials and writes *out.
// grid.sync() only works if every block of the grid is running at the same time: a block that
// waits at the barrier holds its SM, and a block still waiting for an SM would never arrive, so
// the grid would deadlock. cudaLaunchCooperativeKernel guarantees co-residency and refuses a
// grid larger than the occupancy API's blocks per SM x the SM count; devices without
// cudaDevAttrCooperativeLaunch cannot launch it at all. Since CUDA 11, grid.sync() needs no
// separate compilation (-rdc=true). The result is deterministic: fixed grid, fixed order.
#include "workbook/chapter.cuh"

#include <algorithm>
#include <cstddef>

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include "workbook/block_pass.cuh"

namespace {

namespace cg = cooperative_groups;

using namespace workbook::block_pass;

// A single block's share of partials[0, count), written by other blocks of this grid: thread t
// adds partials[t], partials[t + threads_per_block], ... in that order, so the total depends only
// on the partials, never on which block runs this. __ldcg reads through L2, where the other
// blocks' partials are, and never from this SM's L1, which is not coherent with other SMs'
// writes.
static __device__ __forceinline__ float thread_sum_of_partials(const float* partials,
                                                               std::size_t count) {
  float v = 0.0f;
  for (std::size_t j = threadIdx.x; j < count;
       j += std::size_t{loads_in_flight} * threads_per_block) {
    float r[loads_in_flight];
#pragma unroll
    for (unsigned k = 0; k < loads_in_flight; ++k) {
      const std::size_t p = j + std::size_t{k} * threads_per_block;
      r[k] = (p < count) ? __ldcg(&partials[p]) : 0.0f;
    }
#pragma unroll
    for (unsigned k = 0; k < loads_in_flight; ++k) {
      v += r[k];
    }
  }
  return v;
}

// Launched cooperatively (all blocks resident at once). Phase 1, the block pass of chapter 07:
// block b writes partials[b]. Then the whole grid waits at grid.sync(), and phase 2: block 0
// sums the partials in a fixed order and writes *out.
__global__ void __launch_bounds__(threads_per_block)
    reduce_grid_sync(const float* in, std::size_t n, std::size_t head, const float4* body,
                     std::size_t body_vectors, std::size_t tail_begin, float* partials,
                     float* out) {
  const float block_sum =
      block_reduce_sum(thread_sum_of_input(in, n, head, body, body_vectors, tail_begin));
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = block_sum;
  }

  cg::this_grid().sync();  // every block's partial is written and visible device-wide before
                           // block 0 reads them below; as a barrier of every thread it also
                           // orders warp 0's reads of warp_sums before the next block reduce
  if (blockIdx.x != 0) {
    return;
  }

  // Phase 2, block 0 only, in a fixed order: the total depends only on the partials.
  const float total = block_reduce_sum(thread_sum_of_partials(partials, gridDim.x));
  if (threadIdx.x == 0) {
    *out = total;
  }
}

// The grid: at most the blocks that can be resident at once (or grid.sync() would deadlock, and
// the cooperative launch refuses it), otherwise as in chapter 07; 0 if the device cannot launch
// cooperatively. It depends on n alone (not on the alignment of `in`), so workspace_bytes(n)
// knows it. Host-side lookups: nothing waits on the GPU.
std::size_t cooperative_grid_blocks(std::size_t n) {
  int device = 0;
  int cooperative = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device);
  const std::size_t resident = resident_blocks<reduce_grid_sync>();
  if (!cooperative || resident == 0) {
    return 0;
  }
  return grid_blocks(n, resident);  // never more than `resident`
}

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
    return;  // no cooperative launch on this device (or no block fits): *out is left unwritten
  }

  // The split of chapter 07, in variables of exactly the kernel's parameter types: a cooperative
  // launch takes the kernel's arguments as an array of pointers to them.
  const Split s = split_at_16_bytes(in, n);
  std::size_t head = s.head;
  const float4* body = s.body;
  std::size_t body_vectors = s.body_vectors;
  std::size_t tail_begin = s.tail_begin;
  auto* partials = static_cast<float*>(workspace);

  void* args[] = {&in, &n, &head, &body, &body_vectors, &tail_begin, &partials, &out};
  cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(reduce_grid_sync),
                              dim3(static_cast<unsigned>(blocks)), dim3(threads_per_block), args,
                              0, stream);
}

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
