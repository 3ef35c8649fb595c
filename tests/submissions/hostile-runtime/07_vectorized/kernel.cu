// hostile: prints megabytes on its first call, to flood the log the grader keeps
// expect: passed ~ the log keeps
// A correct V7 whose launcher prints 4 MiB the first time it runs. The judge keeps the first
// 1 MiB of the chapter's output in its log and counts the rest; the report says so. Printing is
// allowed and costs this chapter nothing else.
#include "workbook/chapter.cuh"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include <cuda_runtime.h>

namespace {

constexpr unsigned threads_per_block = 256;

__global__ void reduce_vectorized(const float* in, std::size_t n, float* partials) {
  __shared__ float warp_sums[threads_per_block / 32];
  const std::size_t head = (16 - reinterpret_cast<std::uintptr_t>(in) % 16) % 16 / 4;
  const std::size_t lead = head < n ? head : n;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t t = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  float v = 0.0f;
  if (t < lead) v += in[t];
  const float4* body = reinterpret_cast<const float4*>(in + lead);
  const std::size_t quads = (n - lead) / 4;
  for (std::size_t q = t; q < quads; q += stride) {
    const float4 x = body[q];
    v += (x.x + x.y) + (x.z + x.w);
  }
  for (std::size_t k = lead + 4 * quads + t; k < n; k += stride) v += in[k];
  for (unsigned offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < threads_per_block / 32 ? warp_sums[threadIdx.x] : 0.0f;
    for (unsigned offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (threadIdx.x == 0) partials[blockIdx.x] = v;
  }
}

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity, cudaStream_t stream) {
  static bool flooded = false;
  if (!flooded) {
    flooded = true;
    for (int line = 0; line < 65536; ++line) std::printf("%063d\n", line);  // 64 bytes a line: 4 MiB
    std::fflush(stdout);
  }
  if (n == 0) return 0;
  static int sms = 0;
  if (sms == 0) {
    int device = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  }
  const std::size_t want = (n + 4 * threads_per_block - 1) / (4 * threads_per_block);
  const std::size_t blocks = std::min<std::size_t>({want, static_cast<std::size_t>(sms) * 8, capacity});
  reduce_vectorized<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(in, n, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
