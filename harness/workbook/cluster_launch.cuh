// Launching a kernel in thread block clusters: given code for chapter 13.
//
// Chapter 13's idea is inside the kernel (the gather in distributed shared memory and the cluster
// barrier); what it takes to launch a kernel in clusters is given here, so that the chapter's
// kernel.cu holds only that idea and its launcher. Lesson 13 explains each piece. In namespace
// workbook::cluster_launch:
// - portable_cluster_blocks (8, what every cluster-capable GPU accepts) and max_cluster_blocks
//   (16, H100 and H200 once the kernel opts in);
// - cluster_launch_config(clusters, blocks_per_cluster, threads_per_block, attribute, stream):
//   the cudaLaunchConfig_t for cudaLaunchKernelEx, with the cluster size as a launch attribute;
// - resident_clusters<kernel, cluster_blocks, threads_per_block>(): how many clusters of
//   `kernel` fit on the current device at once (cudaOccupancyMaxActiveClusters), looked up once
//   per device, with the non-portable opt-in made for sizes above 8;
// - cluster_grid<kernel, cluster_blocks, threads_per_block>(useful_blocks): the grid for a
//   reduction that needs useful_blocks blocks, as clusters x blocks per cluster, no more than
//   twice the clusters that fit at once.
//
// Every function here is `static`: each chapter's file gets its own copy, and none of them is an
// external definition of the harness's namespace (which the grader refuses in a chapter's object).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>

#include <cuda_runtime.h>

namespace workbook {
namespace cluster_launch {

constexpr unsigned portable_cluster_blocks = 8;
constexpr unsigned max_cluster_blocks = 16;  // the non-portable limit of H100/H200

//! [cluster_launch]
// The launch configuration for `clusters` clusters of `blocks_per_cluster` blocks. The attribute
// lives in the caller's storage: the config points at it.
static cudaLaunchConfig_t cluster_launch_config(unsigned clusters, unsigned blocks_per_cluster,
                                                unsigned threads_per_block, cudaLaunchAttribute& attribute,
                                                cudaStream_t stream) {
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
// How many clusters of ClusterBlocks blocks of `Kernel` fit on the current device at once
// (cudaOccupancyMaxActiveClusters: a cluster needs free room on SMs of one GPC at the same
// time). Looked up once per device: a launcher runs on every call, and the lookups cost host
// time that shows at small n.
template <auto Kernel, unsigned ClusterBlocks, unsigned ThreadsPerBlock>
static unsigned resident_clusters() {
  static_assert(ClusterBlocks >= 1 && ClusterBlocks <= max_cluster_blocks &&
                    (ClusterBlocks & (ClusterBlocks - 1)) == 0,
                "a power of two the hardware accepts");
  constexpr int max_cached_devices = 64;
  static std::atomic<unsigned> cached[max_cached_devices];  // 0 = not looked up yet
  const auto query = [] {
    if (ClusterBlocks > portable_cluster_blocks) {
      // Sizes above 8 are refused (cudaErrorInvalidClusterSize) unless the kernel opts in.
      cudaFuncSetAttribute(Kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    }
    cudaLaunchAttribute attribute;
    const cudaLaunchConfig_t config =
        cluster_launch_config(1, ClusterBlocks, ThreadsPerBlock, attribute, nullptr);
    int clusters = 0;
    cudaOccupancyMaxActiveClusters(&clusters, Kernel, &config);
    return static_cast<unsigned>(std::max(clusters, 0));
  };
  int device = 0;
  cudaGetDevice(&device);  // a host-side lookup: nothing waits on the GPU
  if (device < 0 || device >= max_cached_devices) {
    return query();
  }
  unsigned clusters = cached[device].load(std::memory_order_relaxed);
  if (clusters == 0) {
    clusters = query();
    cached[device].store(clusters, std::memory_order_relaxed);
  }
  return clusters;
}
//! [resident_clusters]

//! [cluster_grid]
// The grid for a reduction that needs useful_blocks blocks (one round of loads per thread), as
// clusters x blocks per cluster. Fewer than ClusterBlocks: one cluster of that many blocks
// rounded up to a power of two (a single block for one). Otherwise clusters of ClusterBlocks, no
// more than twice what fits at once. A chapter computes useful_blocks from n alone (not from the
// alignment of its input), so that its workspace size knows the grid.
struct ClusterGrid {
  unsigned clusters;
  unsigned blocks_per_cluster;
};

template <auto Kernel, unsigned ClusterBlocks, unsigned ThreadsPerBlock>
static ClusterGrid cluster_grid(std::size_t useful_blocks) {
  useful_blocks = std::max<std::size_t>(1, useful_blocks);
  if (useful_blocks < ClusterBlocks) {
    unsigned blocks = 1;
    while (blocks < useful_blocks) {
      blocks *= 2;
    }
    if (blocks > portable_cluster_blocks) {
      resident_clusters<Kernel, ClusterBlocks, ThreadsPerBlock>();  // makes the non-portable opt-in
    }
    return {1, blocks};
  }
  const std::size_t useful_clusters = (useful_blocks + ClusterBlocks - 1) / ClusterBlocks;
  // Twice the clusters that fit at once: clusters of 8 do not tile the GPCs' SMs exactly, and a
  // second wave may use what the first leaves idle (the ticket never waits, so that is safe; the
  // gain is not measured: lesson 13).
  const std::size_t resident =
      2 * std::size_t{std::max(1u, resident_clusters<Kernel, ClusterBlocks, ThreadsPerBlock>())};
  return {static_cast<unsigned>(std::min(resident, useful_clusters)), ClusterBlocks};
}
//! [cluster_grid]

}  // namespace cluster_launch
}  // namespace workbook
