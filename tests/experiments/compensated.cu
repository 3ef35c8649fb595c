// Chapter 15's question: what does a more accurate per-thread sum cost at memory speed? Chapter
// 07's block pass three ways, the same loads (16-byte, four in flight, grid-stride over the
// resident blocks), only the per-thread accumulation differs: plain float adds, Kahan's
// compensated sum (four more float operations per element), and a double accumulator (a
// conversion and a DADD per element). GB/s at 2^27, five alternating rounds.
//   tests/experiments/run <out>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "common.cuh"
#include "workbook/block_pass.cuh"

namespace {

using namespace workbook::block_pass;

enum class Sum { plain, kahan, wide };

template <Sum kind>
__global__ void __launch_bounds__(threads_per_block) pass(const float4* body, std::size_t vectors, float* partials) {
  float s = 0.0f, c = 0.0f;  // c: Kahan's running compensation
  double d = 0.0;
  const std::size_t stride = std::size_t{gridDim.x} * threads_per_block;
  for (std::size_t i = std::size_t{blockIdx.x} * threads_per_block + threadIdx.x; i < vectors; i += loads_in_flight * stride) {
    float4 r[loads_in_flight];
#pragma unroll
    for (unsigned k = 0; k < loads_in_flight; ++k) {
      const std::size_t j = i + k * stride;
      r[k] = j < vectors ? __ldg(&body[j]) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
#pragma unroll
    for (unsigned k = 0; k < loads_in_flight; ++k) {
      const float x[4] = {r[k].x, r[k].y, r[k].z, r[k].w};
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        if (kind == Sum::plain) {
          s += x[q];
        } else if (kind == Sum::kahan) {
          const float y = x[q] - c;
          const float t = s + y;
          c = (t - s) - y;
          s = t;
        } else {
          d += static_cast<double>(x[q]);
        }
      }
    }
  }
  const float v = kind == Sum::wide ? static_cast<float>(d) : s;
  const float total = block_reduce_sum(v);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}


}  // namespace

int main() {
  const std::size_t n = std::size_t(1) << 27;
  float *in = nullptr, *partials = nullptr;
  CHECK(cudaMalloc(&in, n * sizeof(float)));
  CHECK(cudaMalloc(&partials, 65536 * sizeof(float)));
  fill<<<1024, 256>>>(in, n, 1536, 1024.0f, -0.5f);
  CHECK(cudaDeviceSynchronize());
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  const auto* body = reinterpret_cast<const float4*>(in);
  const std::size_t vectors = n / 4;
  const unsigned plain_blocks = static_cast<unsigned>(resident_blocks<pass<Sum::plain>>());
  const unsigned kahan_blocks = static_cast<unsigned>(resident_blocks<pass<Sum::kahan>>());
  const unsigned wide_blocks = static_cast<unsigned>(resident_blocks<pass<Sum::wide>>());
  struct K {
    std::string name;
    std::function<void()> f;
  };
  const std::vector<K> ks = {
      {"plain", [&] { pass<Sum::plain><<<plain_blocks, threads_per_block, 0, s>>>(body, vectors, partials); }},
      {"kahan", [&] { pass<Sum::kahan><<<kahan_blocks, threads_per_block, 0, s>>>(body, vectors, partials); }},
      {"double", [&] { pass<Sum::wide><<<wide_blocks, threads_per_block, 0, s>>>(body, vectors, partials); }},
  };
  std::printf("accumulation,round,gbps\n");
  for (int round = 0; round < 5; ++round) {
    for (const K& k : ks) {
      const double ms = median_ms(k.f, s);
      CHECK(cudaGetLastError());
      std::printf("%s,%d,%.1f\n", k.name.c_str(), round, n * sizeof(float) / (ms * 1e6));
    }
  }
  return 0;
}
