// Which zero the GPU's min and max return for +0 and -0, with the operands either way round:
// fmaxf/fminf, fmax of doubles, and the packed half and bf16 __hmax2_nan/__hmin2_nan. Chapter 16's
// reference does not rely on the answer (C's fmax does not promise one); its lesson quotes it.
// Prints CSV: operation,first,second,result (the result's bits in hex).
//   bench/experiments/run <out>      (writes signed_zeros.csv)
#include <cstdio>
#include <cstring>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common.cuh"

namespace {

constexpr int kCases = 14;

__global__ void zeros(const float* in, unsigned* out) {
  const float p = in[0], m = in[1];  // +0 and -0, read at run time so nothing is folded
  const __half2 hp = __float2half2_rn(p), hm = __float2half2_rn(m);
  const __nv_bfloat162 bp = __float2bfloat162_rn(p), bm = __float2bfloat162_rn(m);
  const auto bits = [](auto x) {
    unsigned u = 0;
    memcpy(&u, &x, sizeof x < 4 ? sizeof x : 4);
    return u;
  };
  out[0] = bits(fmaxf(p, m)), out[1] = bits(fmaxf(m, p));
  out[2] = bits(fminf(p, m)), out[3] = bits(fminf(m, p));
  out[4] = static_cast<unsigned>(__double_as_longlong(fmax(double(p), double(m))) >> 32);
  out[5] = static_cast<unsigned>(__double_as_longlong(fmax(double(m), double(p))) >> 32);
  out[6] = bits(__hmax2_nan(hp, hm)), out[7] = bits(__hmax2_nan(hm, hp));
  out[8] = bits(__hmin2_nan(hp, hm)), out[9] = bits(__hmin2_nan(hm, hp));
  out[10] = bits(__hmax2_nan(bp, bm)), out[11] = bits(__hmax2_nan(bm, bp));
  out[12] = bits(__hmin2_nan(bp, bm)), out[13] = bits(__hmin2_nan(bm, bp));
}

}  // namespace

int main() {
  float* in;
  unsigned* out;
  CHECK(cudaMallocManaged(&in, 2 * sizeof(float)));
  CHECK(cudaMallocManaged(&out, kCases * sizeof(unsigned)));
  in[0] = 0.0f, in[1] = -0.0f;
  zeros<<<1, 1>>>(in, out);
  CHECK(cudaDeviceSynchronize());
  const char* names[kCases / 2] = {"fmaxf",
                                   "fminf",
                                   "fmax_double_high_word",
                                   "hmax2_nan_half2",
                                   "hmin2_nan_half2",
                                   "hmax2_nan_bfloat162",
                                   "hmin2_nan_bfloat162"};
  std::printf("operation,first,second,result\n");
  for (int k = 0; k < kCases; ++k) {
    std::printf("%s,%s,%s,%08x\n", names[k / 2], k % 2 ? "-0" : "+0", k % 2 ? "+0" : "-0", out[k]);
  }
  return 0;
}
