// hostile: calls cub::DeviceReduce::Sum instead of writing the two passes
// expect: rejected ~ includes .*cub/.*CUB
// Chapter 09: a second kernel reduces the partials, with no host round trip.
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cub/cub.cuh>
#include <cuda_runtime.h>

namespace {

std::size_t workspace_bytes(std::size_t n) {
  std::size_t bytes = 0;
  cub::DeviceReduce::Sum(nullptr, bytes, static_cast<const float*>(nullptr),
                         static_cast<float*>(nullptr), static_cast<int>(n));
  return bytes;
}

void reduce(const float* in, std::size_t n, float* out, void* workspace, cudaStream_t stream) {
  std::size_t bytes = workspace_bytes(n);
  cub::DeviceReduce::Sum(workspace, bytes, in, out, static_cast<int>(n), stream);
}

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
