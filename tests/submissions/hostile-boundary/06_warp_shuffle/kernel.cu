// hostile: a slow kernel that pads the single calls timing once used, to look fast
// expect: slow ~ below the chapter's bandwidth threshold
// Correct, but slow: one block of 128 threads per SM, each with one load in flight. The judge used to
// take one call's time as the slope between a batch of 16 calls and a single call, so a chapter that
// tells a single call apart (here: by the host clock since its last call) and pads it looked fast
// (10/10 at about 20% of the ceiling). Now only whole batches of checked calls are timed, and nothing
// is subtracted: padding anything makes it slower, never faster.
#include "workbook/chapter.cuh"

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

__global__ void slow_sums(const float* in, std::size_t n, float* partials) {
  float sum = 0.0f;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    sum += in[i];
  }
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  __shared__ float warp_sums[4];
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x == 0) partials[blockIdx.x] = warp_sums[0] + warp_sums[1] + warp_sums[2] + warp_sums[3];
}

// Spins for about `cycles` clock cycles: the padding.
__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

int sms() {
  static int count = 0;
  if (count == 0) {
    int device = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device);
  }
  return count;
}

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity, cudaStream_t stream) {
  (void)capacity;  // at most 1024 blocks
  // A call after a pause of more than a millisecond is a single timed call: padded by about 16 calls'
  // worth, so that the slope between a batch and it came out small.
  static cudaEvent_t last = nullptr;
  static float pause_ms = 0;
  if (last == nullptr) cudaEventCreate(&last);
  else if (cudaEventQuery(last) == cudaSuccess) pause_ms = 1.0f;
  if (n == 0) return 0;
  const std::size_t blocks = static_cast<std::size_t>(sms());
  slow_sums<<<static_cast<unsigned>(blocks), 128, 0, stream>>>(in, n, partials);
  if (pause_ms > 0 && n >= (std::size_t(1) << 27)) spin<<<1, 1, 0, stream>>>(std::int64_t(1) << 30);
  pause_ms = 0;
  cudaEventRecord(last, stream);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
