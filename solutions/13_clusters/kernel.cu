// Chapter 13: clusters: the blocks of a cluster add their sums in distributed shared memory.
// Differs from chapter 11: the grid is launched in clusters of up to 8 blocks (a launch
// attribute, so the size is chosen at run time), which the hardware runs at the same time on
// one GPC. Each block stores its sum straight into the shared memory of its cluster's first
// block (rank 0) through distributed shared memory (cluster.map_shared_rank); after the cluster
// barrier (cluster.sync()), rank 0 adds the cluster's sums in rank order, and only that one value
// leaves the cluster: rank 0 writes it as the cluster's partial and takes chapter 11's ticket.
// The cluster that draws the last ticket adds the cluster partials in index order and writes
// *out. So 8x fewer partials, fences and atomics than chapter 11, still one launch, no memset,
// and the result is bitwise repeatable. A plain cluster launch: Hopper's other cross-grid feature,
// programmatic dependent launch, is chapter 14's, and this chapter goes without it (its input is
// then read through the read-only path, __ldg, with nothing before it left running). Needs
// compute capability 9.0 (Hopper) or later.
#include "workbook/chapter.cuh"

#include <cstddef>
#include <utility>

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include "workbook/block_pass.cuh"
#include "workbook/cluster_launch.cuh"

namespace {

namespace cg = cooperative_groups;

using namespace workbook::block_pass;
using namespace workbook::cluster_launch;

// A single block's share of partials[0, count), written by other blocks of this grid: thread t
// adds partials[t], partials[t + threads_per_block], ... in that order, so the total depends only
// on the partials, never on which block runs this. __ldcg reads through L2, where the other
// blocks' partials are, and never from this SM's L1, which is not coherent with other SMs'
// writes.
// [[maybe_unused]]: the sm_80 pass of this file compiles no kernel body that calls it.
[[maybe_unused]] static __device__ __forceinline__ float thread_sum_of_partials(
    const float* partials, std::size_t count) {
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

// Policy: blocks per cluster. 8 is the largest size every cluster-capable GPU must accept (the
// portable limit); H100 and H200 accept 16 once the kernel opts in to non-portable sizes (the
// given cluster_grid does that for any size above 8). The kernel reads the size at run time, so
// this is the only line to change to try 1, 2, 4 or 16. A power of two, at most
// max_cluster_blocks.
// (Which size is fastest on the H200: not measured yet.)
constexpr unsigned cluster_blocks = 8;
static_assert(max_cluster_blocks <= warp_size, "one warp adds up a cluster's block sums");

// Workspace: the ticket counter at offset 0, one partial per cluster from a 16-byte offset, as
// in chapter 11 (the counter's place does not depend on n).
constexpr std::size_t partials_offset_bytes = 16;
static_assert(partials_offset_bytes >= sizeof(unsigned) && partials_offset_bytes % 16 == 0,
              "the counter fits before the partials, which stay 16-byte aligned");

// Launched in clusters (the launch attribute cudaLaunchAttributeClusterDimension). Every block
// reduces its share to a block sum and stores it into block_sums[rank] of its cluster's rank-0
// block; rank 0 adds them, writes partials[cluster] and takes a ticket; the last cluster's rank 0
// adds the partials and writes *out. A grid of one cluster writes *out directly and needs no
// workspace (partials and counter are then null).
__global__ void __launch_bounds__(threads_per_block)
    reduce_clusters(const float* in, std::size_t n, std::size_t head, const float4* body,
                    std::size_t body_vectors, std::size_t tail_begin, float* partials,
                    unsigned* counter, float* out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const cg::cluster_group cluster = cg::this_cluster();
  const unsigned tid = threadIdx.x;

  // Distributed shared memory may only be touched once every block of the cluster is running.
  // The cluster barrier is split in two halves: arrive now, wait after the block pass. The blocks
  // were launched together, so by then the wait should find every block arrived long ago; it
  // still proves that the rank-0 block exists before anyone stores into its shared memory.
  auto started = cluster.barrier_arrive();

  const float block_sum =
      block_reduce_sum(thread_sum_of_input(in, n, head, body, body_vectors, tail_begin));

  __shared__ float block_sums[max_cluster_blocks];  // only rank 0's copy is used
  cluster.barrier_wait(std::move(started));  // every block of the cluster has started

  const unsigned rank = cluster.block_rank();
  const unsigned blocks = cluster.num_blocks();
  if (tid == 0) {
    // A store into another block's shared memory, over the SM-to-SM network of the GPC: no L2,
    // no global memory, no fence.
    float* rank0_block_sums = cluster.map_shared_rank(block_sums, 0);
    rank0_block_sums[rank] = block_sum;
  }
  cluster.sync();  // every thread of every block of the cluster: the stores above are visible to
                   // rank 0 after it (release/acquire at cluster scope), and no block touches
                   // another's shared memory after it, so every block but rank 0 may now exit.
                   // Also orders warp 0's reads of warp_sums before the next block_reduce_sum.
  if (rank != 0) {
    return;
  }

  // Rank 0: the cluster's sum, in rank order (a fixed shuffle tree over lanes 0..blocks-1).
  float cluster_sum = 0.0f;
  if (tid < warp_size) {
    cluster_sum = warp_reduce_sum(tid < blocks ? block_sums[tid] : 0.0f);
  }

  // Fast path: a single cluster's sum is the total; no partial, no ticket.
  const auto clusters = static_cast<unsigned>(cg::this_grid().num_clusters());
  if (clusters == 1) {
    if (tid == 0) {
      *out = cluster_sum;
    }
    return;
  }

  // Chapter 11's ticket, one per cluster instead of one per block.
  __shared__ bool is_last_cluster;
  if (tid == 0) {
    partials[cg::this_grid().cluster_rank()] = cluster_sum;
    __threadfence();  // release: the partial is visible device-wide before the ticket is
    const unsigned ticket = atomicAdd(counter, 1u);
    const bool last = (ticket == clusters - 1);
    if (last) {
      __threadfence();  // acquire: the partial loads below come after the ticket
    }
    is_last_cluster = last;
  }
  __syncthreads();  // is_last_cluster is written before any thread of this block reads it
  if (!is_last_cluster) {
    return;
  }

  // The last cluster's rank-0 block: every cluster partial is written. Sum them in index order.
  const float total = block_reduce_sum(thread_sum_of_partials(partials, clusters));
  if (tid == 0) {
    *out = total;
    *counter = 0;  // every ticket is drawn: the next call on this workspace starts from 0
  }
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

std::size_t workspace_bytes(std::size_t n) {
  const ClusterGrid grid = grid_for(n);
  if (grid.clusters == 1) {
    return 0;  // the fast path uses no partials and no ticket
  }
  return partials_offset_bytes + std::size_t{grid.clusters} * sizeof(float);
}

void reduce(const float* in, std::size_t n, float* out, void* workspace, cudaStream_t stream) {
  // n == 0 needs no special case: one block finds nothing to load and writes 0 to *out.

  const Split s = split_at_16_bytes(in, n);  // as in chapter 07
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

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
