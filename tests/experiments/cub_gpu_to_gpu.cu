// Chapter 15's comparison: CUB's reproducible reduction (gpu_to_gpu determinism, CCCL 3.1 and
// later; CUDA 13.0 ships CCCL 3.0) beside CUB's ordinary sum and chapter 15's reference, on one
// input, per call back to back (20 calls between one pair of events, / 20, median of 15), as the
// benchmark's sweep times them. Built only when newer CCCL headers are given:
//   python3 -m pip download --no-deps nvidia-cuda-cccl && unzip the wheel, then
//   CCCL_INCLUDE=<unpacked>/nvidia/cu13/include/cccl tests/experiments/run <out>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <cub/device/device_reduce.cuh>
#include <cuda/std/execution>
#include <cuda/stream_ref>

#include "common.cuh"
#include "workbook/registry.hpp"

int main() {
  const std::size_t big = std::size_t(1) << 30;
  float *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, big * sizeof(float)));
  CHECK(cudaMalloc(&out, sizeof(float)));
  fill<<<4096, 256>>>(in, big, 1536, 1024.0f, -0.5f);
  CHECK(cudaDeviceSynchronize());
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  const workbook::Entry* e = workbook::find_entry("15_reproducible", "reference");
  if (!e) { std::fprintf(stderr, "no reference of 15_reproducible linked\n"); return 1; }
  void* ws = nullptr;
  CHECK(cudaMalloc(&ws, e->workspace_bytes(big)));
  CHECK(cudaMemset(ws, 0, e->workspace_bytes(big)));
  std::size_t temp_bytes = 0;
  CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, in, out, big, s));
  void* temp = nullptr;
  CHECK(cudaMalloc(&temp, temp_bytes));
  const auto gpu_to_gpu = ::cuda::std::execution::env{::cuda::stream_ref{s},
                                                     ::cuda::execution::require(::cuda::execution::determinism::gpu_to_gpu)};
  struct Strategy {
    std::string name;
    std::function<void(std::size_t)> call;
  };
  const std::vector<Strategy> strategies = {
      {"15_reproducible", [&](std::size_t n) { e->reduce(in, n, out, ws, s); }},
      {"cub", [&](std::size_t n) { std::size_t b = temp_bytes; (void)cub::DeviceReduce::Sum(temp, b, in, out, n, s); }},
      {"cub_gpu_to_gpu", [&](std::size_t n) { (void)cub::DeviceReduce::Sum(in, out, n, gpu_to_gpu); }},
  };
  std::printf("strategy,n,us_per_call,gbps\n");
  for (int lg = 10; lg <= 30; lg += 2) {
    const std::size_t n = std::size_t(1) << lg;
    for (const Strategy& st : strategies) {
      const double ms = median_ms([&] { for (int k = 0; k < 20; ++k) st.call(n); }, s, 2, 15);
      CHECK(cudaGetLastError());
      const double us = 1000.0 * ms / 20;
      std::printf("%s,%zu,%.3f,%.1f\n", st.name.c_str(), n, us, n * sizeof(float) / (us * 1e3));
    }
  }
  return 0;
}
