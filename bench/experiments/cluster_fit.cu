// Chapter 13's question: clusters of 8 of its reference fit 124 at once on an H200, which is 992
// blocks, while 132 SMs hold 8 such blocks each (1056). What decides how many clusters fit? This
// asks the occupancy API (cudaOccupancyMaxActiveClusters) for one kernel whose blocks/SM limit is
// set by its shared memory, for every pair of (blocks an SM holds, blocks per cluster); the rows
// say how many clusters fit and how many blocks that is against SMs x blocks/SM.
//   bench/experiments/run <out>    (writes cluster_fit.csv)
#include <cstdio>

#include "common.cuh"

namespace {

constexpr unsigned threads = 128;  // 16 blocks/SM by warps (64 warps): shared memory sets the limit

__global__ void __launch_bounds__(threads) cluster_kernel(float* out) {
  extern __shared__ float scratch[];
  scratch[threadIdx.x] = threadIdx.x;
  __syncthreads();
  if (out != nullptr) out[blockIdx.x] = scratch[threads - 1 - threadIdx.x];
}

}  // namespace

int main() {
  int device = 0, sms = 0, smem_per_sm = 0, reserved = 0;
  CHECK(cudaGetDevice(&device));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CHECK(cudaDeviceGetAttribute(&smem_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  CHECK(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device));
  CHECK(cudaFuncSetAttribute(cluster_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  CHECK(cudaFuncSetAttribute(cluster_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_per_sm - reserved));
  std::printf("blocks_per_sm,cluster_blocks,clusters_fit,blocks_fit,blocks_resident,fraction\n");
  for (int per_sm : {1, 2, 4, 8}) {
    // Shared memory per block so that exactly per_sm blocks fit on an SM.
    const int smem = (smem_per_sm / per_sm - reserved) / 1024 * 1024;
    CHECK(cudaFuncSetAttribute(cluster_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int resident = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, cluster_kernel, threads, smem));
    for (int cluster : {1, 2, 4, 8, 16}) {
      cudaLaunchAttribute attribute = {};
      attribute.id = cudaLaunchAttributeClusterDimension;
      attribute.val.clusterDim.x = cluster;
      attribute.val.clusterDim.y = 1;
      attribute.val.clusterDim.z = 1;
      cudaLaunchConfig_t config = {};
      config.gridDim = dim3(cluster);
      config.blockDim = dim3(threads);
      config.dynamicSmemBytes = smem;
      config.attrs = &attribute;
      config.numAttrs = 1;
      int clusters = 0;
      CHECK(cudaOccupancyMaxActiveClusters(&clusters, cluster_kernel, &config));
      std::printf("%d,%d,%d,%d,%d,%.4f\n", resident, cluster, clusters, clusters * cluster, sms * resident,
                  double(clusters) * cluster / (double(sms) * resident));
    }
  }
  return 0;
}
