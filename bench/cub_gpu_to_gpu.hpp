// CUB's reproducible (gpu_to_gpu) sum, built only when newer CCCL headers are given
// (bench/CMakeLists.txt; see cub_gpu_to_gpu.cu).
#pragma once

#include <cstddef>

#include <cuda_runtime.h>

namespace workbook::bench {

//! Enqueues the sum of in[0, n) into *out on stream, reproducible from GPU to GPU.
cudaError_t cub_gpu_to_gpu_sum(const float* in, std::size_t n, float* out, cudaStream_t stream);

//! CUB_VERSION of the headers it was compiled with, e.g. 300500.
int cub_gpu_to_gpu_version();

}  // namespace workbook::bench
