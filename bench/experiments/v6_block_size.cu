// Chapter 06's question: V6 (shuffles) measured slower than V5 (a fully unrolled shared-memory
// tree), and V6 changes two things at once: the tree becomes shuffles, and the block size is
// read from blockDim.x instead of being a template parameter. This times the two references
// and a third kernel, V6 with the block size as a template parameter (otherwise the
// reference's code), side by side on one input of 2^27 floats, in alternating rounds.
//   bench/experiments/run <out>    (builds this with the references of chapters 05 and 06)
#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "common.cuh"
#include "runner/registry.hpp"

namespace {

constexpr unsigned warp_size = 32;

__device__ __forceinline__ float warp_reduce_sum(float v) {
#pragma unroll
  for (unsigned offset = warp_size / 2; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// Chapter 06's reference with BlockSize for blockDim.x: nothing else differs.
template <unsigned BlockSize>
__global__ void __launch_bounds__(BlockSize)
    reduce_warp_shuffle_fixed(const float* in, std::size_t n, float* partials) {
  __shared__ float warp_sums[BlockSize / warp_size];
  const unsigned tid = threadIdx.x, lane = tid % warp_size, warp = tid / warp_size;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * BlockSize * 2 + tid;
  const std::size_t j = i + BlockSize;
  float v = ((i < n) ? in[i] : 0.0f) + ((j < n) ? in[j] : 0.0f);
  v = warp_reduce_sum(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = (lane < BlockSize / warp_size) ? warp_sums[lane] : 0.0f;
    v = warp_reduce_sum(v);
    if (lane == 0) partials[blockIdx.x] = v;
  }
}

}  // namespace

int main() {
  const std::size_t n = std::size_t(1) << 27;
  float *in = nullptr, *partials = nullptr;
  CHECK(cudaMalloc(&in, n * sizeof(float)));
  CHECK(cudaMalloc(&partials, (n / 512 + 1) * sizeof(float)));
  fill<<<1024, 256>>>(in, n, 1000, 1000.0f, 0.0f);
  CHECK(cudaDeviceSynchronize());
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  struct K {
    std::string name;
    std::function<void()> f;
  };
  std::vector<K> ks;
  for (const char* ch : {"05_full_unroll", "06_warp_shuffle"}) {
    const workbook::Entry* e = workbook::find_entry(ch, "reference");
    if (!e) {
      std::fprintf(stderr, "no reference of %s linked\n", ch);
      return 1;
    }
    ks.push_back({ch, [=] { e->block_pass(in, n, partials, n / 32, s); }});
  }
  ks.push_back({"06_template_block_size", [=] {
                  reduce_warp_shuffle_fixed<256>
                      <<<static_cast<unsigned>((n + 511) / 512), 256, 0, s>>>(in, n, partials);
                }});
  std::printf("kernel,round,gbps\n");
  for (int round = 0; round < 5; ++round) {
    for (const K& k : ks) {
      const double ms = median_ms(k.f, s);
      CHECK(cudaGetLastError());
      std::printf("%s,%d,%.1f\n", k.name.c_str(), round, n * sizeof(float) / (ms * 1e6));
    }
  }
  return 0;
}
