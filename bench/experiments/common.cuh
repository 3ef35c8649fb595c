// Shared by the experiments: timing with CUDA events, the median of repeated timings.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CHECK(call)                                                                    \
  do {                                                                                 \
    const cudaError_t e_ = (call);                                                     \
    if (e_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

// x[i] = (i * 2654435761 mod steps) / denominator + offset: a cheap, varied, reproducible input.
// (1000, 1000, 0): [0, 1) in steps of 0.001; (1536, 1024, -0.5): [-0.5, 1) like the sweep's input.
__global__ void fill(float* x, std::size_t n, unsigned steps, float denominator, float offset) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    x[i] = static_cast<float>((i * 2654435761u) % steps) / denominator + offset;
}

// Median milliseconds of `reps` timings of f() on `stream`, after `warm` untimed calls.
template <class F>
double median_ms(F&& f, cudaStream_t stream, int warm = 3, int reps = 30) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int i = 0; i < warm; ++i) f();
  std::vector<float> t(reps);
  for (int i = 0; i < reps; ++i) {
    CHECK(cudaEventRecord(a, stream));
    f();
    CHECK(cudaEventRecord(b, stream));
    CHECK(cudaEventSynchronize(b));
    CHECK(cudaEventElapsedTime(&t[i], a, b));
  }
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  std::sort(t.begin(), t.end());
  return t[reps / 2];
}
