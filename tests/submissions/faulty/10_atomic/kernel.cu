// A deliberately faulty submission, for testing the grader: chapter 10's atomics, but the sum is
// gathered in one __device__ variable of the module instead of *out, zeroed and copied out by
// one-thread kernels on the call's stream. One call at a time gets the right sum; two calls at once
// on two streams share the variable, and one zeroes it while the other adds into it
// (Streams.TwoConcurrentCalls). Each warp adds its own sum, so a call spends long enough in its
// atomics (one a warp, on one address) for the other call's zeroing to land among them.
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

namespace {

constexpr unsigned kThreads = 256;

__device__ float g_total;  // shared by every call in the process: the fault

__global__ void zero_total() { g_total = 0.0f; }

__global__ void add_warps(const float* in, std::size_t n) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  float v = i < n ? in[i] : 0.0f;
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) atomicAdd(&g_total, v);
}

__global__ void copy_total(float* out) { *out = g_total; }

std::size_t workspace_bytes(std::size_t /*n*/) { return 0; }

void reduce(const float* in, std::size_t n, float* out, void* /*workspace*/, cudaStream_t stream) {
  zero_total<<<1, 1, 0, stream>>>();
  if (n > 0) {
    const std::size_t blocks = (n + kThreads - 1) / kThreads;
    add_warps<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(in, n);
  }
  copy_total<<<1, 1, 0, stream>>>(out);
}

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
