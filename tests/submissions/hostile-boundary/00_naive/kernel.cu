// hostile: takes most of the GPU's memory on its first call (a kernel with the largest stack frame)
// expect: crashed|failed ~ GPU memory
// A correct block pass that, on its first call, launches a kernel whose every thread has a 500 KiB
// stack frame: the driver reserves that for every thread the GPU can hold at once (about 130 GiB on
// an H200), and keeps it. Tested beside the rest of its submission, it took the memory their tests
// needed. The judge holds each chapter's process to a GPU memory budget (NVML's count per process),
// so this one is ended after its first call (crashed) if the driver gives it the memory; if what
// is free falls short (the judge's buffers and the other chapters' contexts hold some), the launch
// fails out of memory, again with the GPU alone, and the chapter fails on that. Either way every
// other chapter of this tree keeps its own verdict.
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

namespace {

// A correct block pass: a grid-stride loop, then the block's sum through warp shuffles.
__global__ void partial_sums(const float* in, std::size_t n, float* partials) {
  float sum = 0.0f;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) sum += in[i];
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

std::size_t blocks_for(std::size_t n) {
  const std::size_t wanted = (n + 255) / 256;
  return wanted < 1024 ? wanted : 1024;
}

// Every thread gets a stack frame of kFrame bytes, all of it used, so the compiler keeps it.
constexpr int kFrame = 500 * 1024;
__global__ void big_frame(unsigned char* sink, int seed) {
  volatile unsigned char frame[kFrame];
  for (int i = threadIdx.x; i < kFrame; i += 4096) frame[i] = static_cast<unsigned char>(seed + i);
  if (frame[seed % kFrame] == 255 && sink) sink[0] = frame[(seed * 7) % kFrame];
}

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity, cudaStream_t stream) {
  (void)capacity;  // at most 1024 blocks
  static bool first = true;
  if (first) {
    first = false;
    big_frame<<<1, 32, 0, stream>>>(nullptr, 3);
  }
  if (n == 0) return 0;
  const std::size_t blocks = blocks_for(n);
  partial_sums<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(in, n, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
