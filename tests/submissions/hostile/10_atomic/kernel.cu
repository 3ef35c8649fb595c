// hostile: calls thrust::reduce instead of writing the kernel
// expect: rejected ~ includes .*thrust/.*Thrust
// Chapter 10: blocks add their sums straight into *out with atomicAdd.
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>
#include <thrust/execution_policy.h>
#include <thrust/reduce.h>

namespace {

std::size_t workspace_bytes(std::size_t) { return 0; }

void reduce(const float* in, std::size_t n, float* out, void*, cudaStream_t stream) {
  const float sum = thrust::reduce(thrust::cuda::par.on(stream), in, in + n, 0.0f);
  cudaMemcpyAsync(out, &sum, sizeof(float), cudaMemcpyHostToDevice, stream);
  cudaStreamSynchronize(stream);
}

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
