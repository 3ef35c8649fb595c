// Chapter 13: clusters: the blocks of a cluster add their sums in distributed shared memory.
// Differs from chapter 11: the grid runs in clusters of 8 blocks that the hardware schedules
// together on one GPC. Each block stores its sum into the shared memory of its cluster's rank-0
// block (cluster.map_shared_rank), the cluster synchronizes (cluster.sync()), and rank 0 alone
// carries the cluster's sum out: one partial and one ticket per cluster instead of per block.
// The block pass of chapter 07 is given (workbook/block_pass.cuh), and so is what a cluster
// launch takes (workbook/cluster_launch.cuh); write the cluster barrier, the gather in
// distributed shared memory and the ticket. Needs compute capability 9.0 (Hopper).
// Check it: `grader/grade --chapter 13_clusters`
#include "workbook/chapter.cuh"

#include <cstddef>
#include <utility>

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include "workbook/block_pass.cuh"  // given: chapter 07's block pass
#include "workbook/cluster_launch.cuh"  // given: launching in clusters

namespace {

namespace cg = cooperative_groups;

using namespace workbook::block_pass;
using namespace workbook::cluster_launch;

//! [cluster_size]
// Policy: blocks per cluster. 8 is the portable limit (every cluster-capable GPU accepts it);
// H100 and H200 accept 16 once the kernel opts in (the given cluster_grid does that for sizes
// above 8). The kernel reads the size at run time (cluster.num_blocks()), so this is the only
// line to change to try 1, 2, 4 or 16. A power of two, at most max_cluster_blocks.
constexpr unsigned cluster_blocks = 8;
//! [cluster_size]

//! [workspace_layout]
// Workspace: the ticket counter at offset 0, one partial per cluster from a 16-byte offset, as
// in chapter 11 (the counter's place does not depend on n).
constexpr std::size_t partials_offset_bytes = 16;
//! [workspace_layout]

// Launched in clusters (see the launcher). Every block reduces its share to a block sum and
// stores it into block_sums[rank] of its cluster's rank-0 block; rank 0 adds them, writes
// partials[cluster] and takes a ticket; the last cluster's rank 0 adds the partials and writes
// *out. A grid of one cluster writes *out directly and needs no workspace (partials and counter
// are then null).
__global__ void __launch_bounds__(threads_per_block)
    reduce_clusters(const float* in, std::size_t n, std::size_t head, const float4* body,
                    std::size_t body_vectors, std::size_t tail_begin, float* partials,
                    unsigned* counter, float* out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  //! [cluster_gather]
  // TODO: const cg::cluster_group cluster = cg::this_cluster();
  // TODO: auto started = cluster.barrier_arrive(); the first half of a cluster barrier, by every
  //       thread, before the block pass. Distributed shared memory may only be touched once
  //       every block of the cluster is running; the matching cluster.barrier_wait(
  //       std::move(started)) after the block pass proves it (the blocks were launched
  //       together, so it should find them all arrived long ago).

  // The block pass of chapter 07 (given): thread 0 has the block's sum.
  const float block_sum =
      block_reduce_sum(thread_sum_of_input(in, n, head, body, body_vectors, tail_begin));

  // TODO: __shared__ float block_sums[max_cluster_blocks]; (every block has one; only rank 0's
  //       is used), then cluster.barrier_wait(std::move(started)).
  // TODO: thread 0: cluster.map_shared_rank(block_sums, 0) is rank 0's block_sums as this block
  //       sees it; store block_sum at index cluster.block_rank().
  // TODO: cluster.sync(), reached by every thread of every block (no return before it): the
  //       stores are then visible to rank 0, and no block touches another's shared memory after
  //       it, so every block but rank 0 may return.
  // TODO: rank 0: warp 0 loads block_sums[lane] for lane < cluster.num_blocks() (0.0f above) and
  //       calls warp_reduce_sum: lane 0 holds the cluster's sum, in a fixed order.
  //! [cluster_gather]
  //! [cluster_ticket]
  // TODO: clusters = cg::this_grid().num_clusters(). If it is 1, thread 0 writes the cluster's
  //       sum to *out and the block returns.
  // TODO: otherwise chapter 11's ticket, once per cluster: thread 0 writes
  //       partials[cg::this_grid().cluster_rank()], __threadfence(), ticket = atomicAdd(counter,
  //       1u); the cluster that draws clusters - 1 is last (one more __threadfence()). A
  //       __shared__ bool and a __syncthreads() tell the block; all but the last return.
  // TODO: the last cluster's rank-0 block: thread t adds __ldcg(&partials[t]),
  //       __ldcg(&partials[t + threads_per_block]), ... below clusters, in that order; then
  //       block_reduce_sum again (the barriers above separate the two calls, so warp 0 has read
  //       the first call's shared warp sums); thread 0 writes *out and sets *counter = 0.
  //! [cluster_ticket]
  (void)block_sum;  // TODO: remove once the gather uses it
#else
  __trap();  // clusters need sm_90; the manifest skips this chapter on older GPUs
#endif
}

//! [cluster_grid]
// The grid for n elements: as many blocks as one round of loads per thread needs (chapter 07),
// in clusters of cluster_blocks, at most twice the clusters that fit at once (the given
// cluster_grid). It depends on n alone, so workspace_bytes(n) knows it.
ClusterGrid grid_for(std::size_t n) {
  return cluster_grid<reduce_clusters, cluster_blocks, threads_per_block>(
      (n + floats_per_block_round - 1) / floats_per_block_round);
}
//! [cluster_grid]

//! [cluster_launcher]
std::size_t workspace_bytes(std::size_t n) {
  const ClusterGrid grid = grid_for(n);
  if (grid.clusters == 1) {
    return 0;  // the fast path uses no partials and no ticket
  }
  return partials_offset_bytes + std::size_t{grid.clusters} * sizeof(float);
}

void reduce(const float* in, std::size_t n, float* out, void* workspace, cudaStream_t stream) {
  // n == 0 needs no special case: one block finds nothing to load and writes 0 to *out.

  const Split s = split_at_16_bytes(in, n);  // given: chapter 07's head/body/tail split
  const ClusterGrid grid = grid_for(n);
  unsigned* counter = nullptr;
  float* partials = nullptr;
  if (grid.clusters > 1) {
    counter = static_cast<unsigned*>(workspace);
    partials = reinterpret_cast<float*>(static_cast<char*>(workspace) + partials_offset_bytes);
  }

  // A launch with the cluster size as an attribute (the given cluster_launch_config): the same
  // compiled kernel runs with any size. (__cluster_dims__(8, 1, 1) on the kernel would fix it at
  // compile time instead, and then <<<...>>> works too.)
  cudaLaunchAttribute attribute;
  const cudaLaunchConfig_t config =
      cluster_launch_config(grid.clusters, grid.blocks_per_cluster, threads_per_block, attribute, stream);
  cudaLaunchKernelEx(&config, reduce_clusters, in, n, s.head, s.body, s.body_vectors,
                     s.tail_begin, partials, counter, out);
}
//! [cluster_launcher]

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
