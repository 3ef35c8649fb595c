// hostile: wrong past 2^31 elements, and fills the GPU's memory so that the test that shows it cannot run
// expect: crashed|failed ~ GPU memory|correctness tests? failed
// Its index is an int, so past 2^31 elements it sums the wrong ones; on its first call it takes most
// of the GPU's memory (a kernel with a 500 KiB stack frame per thread), so the judge cannot have the
// 8 GiB the test of more than 2^31 elements needs. That test was skipped for want of free memory, and
// the chapter passed. Now a test that could not run is no pass, and the chapter's process is held to
// its GPU memory budget: it is ended after its first call (crashed). Where a neighbour took the memory
// first, its own launch fails, and the test of more than 2^31 elements fails it (failed).
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

namespace {

constexpr int kFrame = 500 * 1024;
__global__ void big_frame(unsigned char* sink, int seed) {
  volatile unsigned char frame[kFrame];
  for (int i = threadIdx.x; i < kFrame; i += 4096) frame[i] = static_cast<unsigned char>(seed + i);
  if (frame[seed % kFrame] == 255 && sink) sink[0] = frame[(seed * 7) % kFrame];
}

// A block pass whose index is an int: right below 2^31 elements, wrong above.
__global__ void partial_sums(const float* in, std::size_t n, float* partials) {
  float sum = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < static_cast<long long>(n); i += gridDim.x * blockDim.x) {
    sum += in[i];
  }
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  __shared__ float warp_sums[32];
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x < 32) {
    sum = threadIdx.x < blockDim.x / 32 ? warp_sums[threadIdx.x] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (threadIdx.x == 0) partials[blockIdx.x] = sum;
  }
}

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity, cudaStream_t stream) {
  (void)capacity;  // at most 1024 blocks
  static bool first = true;
  if (first) {
    first = false;
    big_frame<<<1, 32, 0, stream>>>(nullptr, 5);
  }
  if (n == 0) return 0;
  const std::size_t blocks = (n + 255) / 256 < 1024 ? (n + 255) / 256 : 1024;
  partial_sums<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(in, n, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
