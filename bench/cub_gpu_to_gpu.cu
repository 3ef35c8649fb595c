// CUB's reproducible sum for the benchmark: cub::DeviceReduce::Sum with the gpu_to_gpu determinism
// requirement (CCCL 3.1 and later; CUDA 13.0 ships CCCL 3.0). This file alone is compiled against
// the newer headers bench/CMakeLists.txt finds or fetches (WORKBOOK_CCCL_WHEEL); the rest
// of the benchmark keeps the toolkit's CUB. Its temporary storage comes from the stream-ordered
// pool inside each call, as a caller of this interface gets it.
#include <cstddef>

#include <cub/device/device_reduce.cuh>
#include <cub/version.cuh>
#include <cuda/std/execution>
#include <cuda/stream_ref>

#include "cub_gpu_to_gpu.hpp"

static_assert(CUB_VERSION >= 300100, "CUB's gpu_to_gpu determinism needs CCCL 3.1 or later");

namespace workbook::bench {

cudaError_t cub_gpu_to_gpu_sum(const float* in, std::size_t n, float* out, cudaStream_t stream) {
  const auto env = ::cuda::std::execution::env{::cuda::stream_ref{stream},
                                               ::cuda::execution::require(::cuda::execution::determinism::gpu_to_gpu)};
  return cub::DeviceReduce::Sum(in, out, static_cast<long long>(n), env);
}

int cub_gpu_to_gpu_version() { return CUB_VERSION; }

}  // namespace workbook::bench
