// Chapters 09 and 11's question: back to back, chapter 09's two kernels take less time per call
// than cub::DeviceReduce::Sum, which also runs two kernels from 2^14 on. Is it CUB's work on the
// host? For each n this measures, per call, the device time (CUDA events around 20 calls back
// to back, / 20, median of 15) and the host time to enqueue the same 20 calls (std::chrono, the
// calls only; the stream is synchronized after the clock stops). A host time per call near the
// device time per call means the host, not the GPU, sets the pace.
//   bench/experiments/run <out>    (builds this with the references of chapters 09 and 11)
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <cub/device/device_reduce.cuh>

#include "common.cuh"
#include "runner/registry.hpp"

int main() {
  const std::size_t big = std::size_t(1) << 22;
  float *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, big * sizeof(float)));
  CHECK(cudaMalloc(&out, sizeof(float)));
  fill<<<1024, 256>>>(in, big, 1000, 1000.0f, 0.0f);
  CHECK(cudaDeviceSynchronize());
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  std::size_t temp_bytes = 0;
  CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, in, out, big, s));
  void* temp = nullptr;
  CHECK(cudaMalloc(&temp, temp_bytes));
  std::vector<void*> workspaces;
  struct Strategy {
    std::string name;
    std::function<void(std::size_t)> call;
  };
  std::vector<Strategy> strategies;
  for (const char* ch : {"09_two_pass", "11_last_block"}) {
    const workbook::Entry* e = workbook::find_entry(ch, "reference");
    if (!e) {
      std::fprintf(stderr, "no reference of %s linked\n", ch);
      return 1;
    }
    void* ws = nullptr;
    CHECK(cudaMalloc(&ws, std::max<std::size_t>(e->workspace_bytes(big), 16)));
    CHECK(cudaMemset(ws, 0, std::max<std::size_t>(e->workspace_bytes(big), 16)));
    strategies.push_back({ch, [=](std::size_t n) { e->reduce(in, n, out, ws, s); }});
  }
  strategies.push_back({"cub", [=](std::size_t n) {
                          std::size_t bytes = temp_bytes;
                          cub::DeviceReduce::Sum(temp, bytes, in, out, n, s);
                        }});
  strategies.push_back({"cub_with_size_query", [=](std::size_t n) {
                          std::size_t bytes = 0;
                          cub::DeviceReduce::Sum(nullptr, bytes, in, out, n, s);
                          bytes = temp_bytes;
                          cub::DeviceReduce::Sum(temp, bytes, in, out, n, s);
                        }});
  constexpr int calls = 20;
  std::printf("strategy,n,device_us_per_call,host_us_per_call\n");
  for (std::size_t n : {std::size_t(1) << 10, std::size_t(1) << 14, std::size_t(1) << 16, std::size_t(1) << 20, big}) {
    for (const Strategy& st : strategies) {
      const double dev = 1000.0 *
                         median_ms(
                             [&] {
                               for (int k = 0; k < calls; ++k) st.call(n);
                             },
                             s, 2, 15) /
                         calls;
      std::vector<double> host;
      for (int r = 0; r < 15; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < calls; ++k) st.call(n);
        const auto t1 = std::chrono::steady_clock::now();
        CHECK(cudaStreamSynchronize(s));
        host.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
      }
      std::sort(host.begin(), host.end());
      CHECK(cudaGetLastError());
      std::printf("%s,%zu,%.2f,%.2f\n", st.name.c_str(), n, dev, host[host.size() / 2]);
    }
  }
  return 0;
}
