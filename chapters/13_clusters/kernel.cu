// Chapter 13: clusters: the blocks of a cluster add their sums in distributed shared memory.
// Differs from chapter 11: the grid runs in clusters of 8 blocks that the hardware schedules
// together on one GPC. Each block stores its sum into the shared memory of its cluster's rank-0
// block (cluster.map_shared_rank), the cluster synchronizes (cluster.sync()), and rank 0 alone
// carries the cluster's sum out: one partial and one ticket per cluster instead of per block.
// The block pass of chapter 07 is given (workbook/block_pass.cuh); write the cluster barrier,
// the gather in distributed shared memory and the ticket. Needs compute capability 9.0 (Hopper).
// Check it: `grader/grade --chapter 13_clusters`
#include "workbook/chapter.cuh"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <utility>

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include "workbook/block_pass.cuh"  // given: chapter 07's block pass

namespace {

namespace cg = cooperative_groups;

using namespace workbook::block_pass;

//! [cluster_size]
// Policy: blocks per cluster. 8 is the portable limit (every cluster-capable GPU accepts it);
// H100 and H200 accept 16 once the kernel opts in (the launcher below does that for sizes above
// 8). The kernel reads the size at run time (cluster.num_blocks()), so this is the only line to
// change to try 1, 2, 4 or 16. A power of two, at most max_cluster_blocks.
constexpr unsigned cluster_blocks = 8;
constexpr unsigned portable_cluster_blocks = 8;
constexpr unsigned max_cluster_blocks = 16;  // the non-portable limit of H100/H200
//! [cluster_size]
static_assert(cluster_blocks >= 1 && cluster_blocks <= max_cluster_blocks &&
                  (cluster_blocks & (cluster_blocks - 1)) == 0,
              "a power of two the hardware accepts");

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

//! [cluster_launch]
// The launch configuration for `clusters` clusters of `blocks_per_cluster` blocks. The attribute
// lives in the caller's storage: the config points at it.
cudaLaunchConfig_t cluster_launch_config(unsigned clusters, unsigned blocks_per_cluster,
                                         cudaLaunchAttribute& attribute, cudaStream_t stream) {
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = blocks_per_cluster;
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(clusters * blocks_per_cluster);
  config.blockDim = dim3(threads_per_block);
  config.dynamicSmemBytes = 0;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return config;
}
//! [cluster_launch]

//! [resident_clusters]
// How many clusters of cluster_blocks blocks of this kernel fit on the device at once
// (cudaOccupancyMaxActiveClusters: a cluster needs free room on SMs of one GPC at the same
// time). Looked up once per device: the launcher runs on every call, and the lookups cost host
// time that shows at small n. 0 = not looked up yet.
constexpr int max_cached_devices = 64;
std::atomic<unsigned> cached_resident_clusters[max_cached_devices];

unsigned query_resident_clusters() {
  if (cluster_blocks > portable_cluster_blocks) {
    // Sizes above 8 are refused (cudaErrorInvalidClusterSize) unless the kernel opts in.
    cudaFuncSetAttribute(reduce_clusters, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  }
  cudaLaunchAttribute attribute;
  const cudaLaunchConfig_t config = cluster_launch_config(1, cluster_blocks, attribute, nullptr);
  int clusters = 0;
  cudaOccupancyMaxActiveClusters(&clusters, reduce_clusters, &config);
  return static_cast<unsigned>(std::max(clusters, 0));
}
//! [resident_clusters]

unsigned resident_clusters() {
  int device = 0;
  cudaGetDevice(&device);  // a host-side lookup: nothing waits on the GPU
  if (device < 0 || device >= max_cached_devices) {
    return query_resident_clusters();
  }
  unsigned clusters = cached_resident_clusters[device].load(std::memory_order_relaxed);
  if (clusters == 0) {
    clusters = query_resident_clusters();
    cached_resident_clusters[device].store(clusters, std::memory_order_relaxed);
  }
  return clusters;
}

//! [cluster_grid]
// The grid for n elements, as clusters x blocks per cluster. Blocks: as many as one round of
// loads per thread needs (chapter 07), at least one. Fewer than cluster_blocks: one cluster of
// that many blocks rounded up to a power of two (a single block for n <= 4096). Otherwise
// clusters of cluster_blocks, no more than twice what fits at once. It depends on n alone (not on the
// alignment of `in`), so workspace_bytes(n) knows it.
struct ClusterGrid {
  unsigned clusters;
  unsigned blocks_per_cluster;
};

ClusterGrid cluster_grid(std::size_t n) {
  const std::size_t useful_blocks =
      std::max<std::size_t>(1, (n + floats_per_block_round - 1) / floats_per_block_round);
  if (useful_blocks < cluster_blocks) {
    unsigned blocks = 1;
    while (blocks < useful_blocks) {
      blocks *= 2;
    }
    return {1, blocks};
  }
  const std::size_t useful_clusters = (useful_blocks + cluster_blocks - 1) / cluster_blocks;
  // Twice the clusters that fit at once: clusters of 8 do not tile the GPCs' SMs exactly, and a
  // second wave fills what the first leaves idle (the ticket never waits, so that is safe).
  const std::size_t resident = 2 * std::size_t{std::max(1u, resident_clusters())};
  return {static_cast<unsigned>(std::min(resident, useful_clusters)), cluster_blocks};
}
//! [cluster_grid]

std::size_t workspace_bytes(std::size_t n) {
  const ClusterGrid grid = cluster_grid(n);
  if (grid.clusters == 1) {
    return 0;  // the fast path uses no partials and no ticket
  }
  return partials_offset_bytes + std::size_t{grid.clusters} * sizeof(float);
}

void reduce(const float* in, std::size_t n, float* out, void* workspace, cudaStream_t stream) {
  // n == 0 needs no special case: one block finds nothing to load and writes 0 to *out.

  const Split s = split_at_16_bytes(in, n);  // given: chapter 07's head/body/tail split
  const ClusterGrid grid = cluster_grid(n);
  if (grid.blocks_per_cluster > portable_cluster_blocks) {
    resident_clusters();  // makes sure the non-portable opt-in is set on this device
  }
  unsigned* counter = nullptr;
  float* partials = nullptr;
  if (grid.clusters > 1) {
    counter = static_cast<unsigned*>(workspace);
    partials = reinterpret_cast<float*>(static_cast<char*>(workspace) + partials_offset_bytes);
  }

  // A launch with the cluster size as an attribute: the same compiled kernel runs with any
  // size. (__cluster_dims__(8, 1, 1) on the kernel would fix it at compile time instead, and
  // then <<<...>>> works too.)
  cudaLaunchAttribute attribute;
  const cudaLaunchConfig_t config = cluster_launch_config(grid.clusters, grid.blocks_per_cluster, attribute, stream);
  cudaLaunchKernelEx(&config, reduce_clusters, in, n, s.head, s.body, s.body_vectors,
                     s.tail_begin, partials, counter, out);
}

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
