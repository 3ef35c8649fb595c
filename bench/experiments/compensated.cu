// Chapter 15's question: what does a more accurate per-thread sum cost at memory speed? Chapter
// 07's block pass three ways, the same loads (16-byte, four in flight, grid-stride over the
// resident blocks), only the per-thread accumulation differs: plain float adds, Kahan's
// compensated sum (four more float operations per element), and a double accumulator (a
// conversion and a DADD per element). And the scheme that fixes a common exponent first: one
// pass finds the largest exponent, a second adds every element as a 64-bit fixed-point integer
// aligned to it (order-independent, exact only within 31 bits below the largest element, which
// leaves room for the sum of 2^27 of them in 64 bits):
// two reads of the data. GB/s at 2^27 (input bytes over the time of the whole scheme), five
// alternating rounds.
//   bench/experiments/run <out>
#include <cmath>
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

// The loads every kernel here shares: a thread's rounds of loads_in_flight float4 (zeros past
// the end), grid-stride over the launch, each float4 handed to add in order.
template <class Add>
__device__ __forceinline__ void for_each_float4(const float4* body, std::size_t vectors, Add add) {
  const std::size_t stride = std::size_t{gridDim.x} * threads_per_block;
  for (std::size_t i = std::size_t{blockIdx.x} * threads_per_block + threadIdx.x; i < vectors;
       i += loads_in_flight * stride) {
    float4 r[loads_in_flight];
#pragma unroll
    for (unsigned k = 0; k < loads_in_flight; ++k) {
      const std::size_t j = i + k * stride;
      r[k] = j < vectors ? __ldg(&body[j]) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
#pragma unroll
    for (unsigned k = 0; k < loads_in_flight; ++k) add(r[k]);
  }
}

template <Sum kind>
__global__ void __launch_bounds__(threads_per_block) pass(const float4* body, std::size_t vectors, float* partials) {
  float s = 0.0f, c = 0.0f;  // c: Kahan's running compensation
  double d = 0.0;
  for_each_float4(body, vectors, [&](float4 r) {
    const float x[4] = {r.x, r.y, r.z, r.w};
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
  });
  const float v = kind == Sum::wide ? static_cast<float>(d) : s;
  const float total = block_reduce_sum(v);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// The common exponent, pass 1: the largest biased exponent of any element (its exponent bits),
// by a max over each thread, its warp, then atomicMax.
__global__ void __launch_bounds__(threads_per_block)
    largest_exponent(const float4* body, std::size_t vectors, unsigned* top) {
  unsigned m = 0;
  for_each_float4(body, vectors, [&](float4 r) {
    m = max(m, max(max(__float_as_uint(r.x) & 0x7f800000u, __float_as_uint(r.y) & 0x7f800000u),
                   max(__float_as_uint(r.z) & 0x7f800000u, __float_as_uint(r.w) & 0x7f800000u)));
  });
  for (unsigned offset = warp_size / 2; offset > 0; offset >>= 1) m = max(m, __shfl_xor_sync(full_warp, m, offset));
  if (threadIdx.x % warp_size == 0) atomicMax(top, m);
}

// Pass 2: every element times 2^(30 - (e - 127)) (a power of two: exact), rounded to an integer
// (the bits 31 or more below the largest element are lost), added in 64 bits, then per warp,
// then atomicAdd: the same total in every order.
__global__ void __launch_bounds__(threads_per_block)
    fixed_point(const float4* body, std::size_t vectors, const unsigned* top, unsigned long long* total) {
  const unsigned e = *top >> 23;
  const float scale = __uint_as_float((127u + 30u + 127u - e) << 23);  // 2^(157 - e), e >= 31 here
  long long acc = 0;
  for_each_float4(body, vectors, [&](float4 r) {
    acc += __float2ll_rn(r.x * scale) + __float2ll_rn(r.y * scale) + __float2ll_rn(r.z * scale) +
           __float2ll_rn(r.w * scale);
  });
  for (unsigned offset = warp_size / 2; offset > 0; offset >>= 1) acc += __shfl_down_sync(full_warp, acc, offset);
  if (threadIdx.x % warp_size == 0) atomicAdd(total, static_cast<unsigned long long>(acc));
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
  const unsigned max_blocks = static_cast<unsigned>(resident_blocks<largest_exponent>());
  const unsigned fixed_blocks = static_cast<unsigned>(resident_blocks<fixed_point>());
  unsigned long long* scheme = nullptr;  // [0]: the largest exponent's bits, [1]: the fixed-point total
  CHECK(cudaMalloc(&scheme, 16));
  auto* top = reinterpret_cast<unsigned*>(scheme);
  unsigned long long* total = scheme + 1;
  struct K {
    std::string name;
    std::function<void()> f;
  };
  const std::vector<K> ks = {
      {"plain", [&] { pass<Sum::plain><<<plain_blocks, threads_per_block, 0, s>>>(body, vectors, partials); }},
      {"kahan", [&] { pass<Sum::kahan><<<kahan_blocks, threads_per_block, 0, s>>>(body, vectors, partials); }},
      {"double", [&] { pass<Sum::wide><<<wide_blocks, threads_per_block, 0, s>>>(body, vectors, partials); }},
      {"common_exponent",
       [&] {
         CHECK(cudaMemsetAsync(scheme, 0, 16, s));
         largest_exponent<<<max_blocks, threads_per_block, 0, s>>>(body, vectors, top);
         fixed_point<<<fixed_blocks, threads_per_block, 0, s>>>(body, vectors, top, total);
       }},
  };
  std::printf("accumulation,round,gbps\n");
  for (int round = 0; round < 5; ++round) {
    for (const K& k : ks) {
      const double ms = median_ms(k.f, s);
      CHECK(cudaGetLastError());
      std::printf("%s,%d,%.1f\n", k.name.c_str(), round, n * sizeof(float) / (ms * 1e6));
    }
  }
  unsigned long long got[2] = {0, 0};  // the last call's exponent and total, as a check
  CHECK(cudaMemcpy(got, scheme, 16, cudaMemcpyDeviceToHost));
  const unsigned e = static_cast<unsigned>(got[0]) >> 23;
  std::fprintf(stderr, "common_exponent: largest biased exponent %u, sum %.6f\n", e,
               std::ldexp(static_cast<double>(static_cast<long long>(got[1])), static_cast<int>(e) - 157));
  return 0;
}
