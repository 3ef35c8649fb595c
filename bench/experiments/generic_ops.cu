// Chapter 16's reference (solutions/16_any_operator, linked in and found in the registry) beside
// CUB's DeviceReduce (Sum, Max, Min, ArgMax, ArgMin, TransformReduce) in the same run: every input
// type with every operator it is asked, at n = 2^27 elements.
//
// For each (type, operator): the median of 30 timings of one call after 3 warm-ups, for the
// reference and for CUB; GB/s of input read, elements/s, and the fraction of a streaming-read
// ceiling measured in the same run (16-byte loads, the best of four grids, like the harness's but
// simpler); each result checked against a host reference (exact where it can be: integers, Max,
// Min, ArgMax's index; otherwise the error relative to the sum of magnitudes).
//   bench/experiments/run <out>      (writes generic_ops.csv and generic_ops_same_bytes.csv)
//   generic_ops [log2_n [type ...]]  (default: 27 and every type; types: float bfloat16 half
//                                     double int32 int64)
// The ceiling is always read from 2^27 floats (512 MiB): 2-byte types at 2^28 and 8-byte types at
// 2^26 read the same bytes as it, so a fixed cost per call weighs on them as on the ceiling.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <thrust/iterator/counting_iterator.h>
#include <cub/device/device_reduce.cuh>

#include "common.cuh"
#include "runner/registry.hpp"
#include "workbook/contract.hpp"
#include "workbook/operators.cuh"

namespace {

using namespace workbook::ops;
using workbook::Element;
using workbook::Operator;

// ---- CUB's side: the transforms its users write ----

template <class T>
struct WidenOp {
  __host__ __device__ Widened<T> operator()(T x) const { return widen(x); }
};
template <class T>
struct ToMoments {
  __host__ __device__ Moments operator()(T x) const { return moments_of(widen(x)); }
};
template <class T>
struct ProductAt {
  const T* a;
  const T* b;
  __host__ __device__ Widened<T> operator()(long long i) const { return widen(a[i]) * widen(b[i]); }
};
struct Plus {
  template <class A>
  __host__ __device__ A operator()(A x, A y) const {
    return x + y;
  }
};

// ---- the run ----

constexpr int kCeilingLog2 = 27;  // the ceiling reads 2^27 floats, and n defaults to 2^27 elements
double ceiling_gbps = 0;
cudaStream_t stream;

template <class T>
std::vector<T> host_input(std::size_t n, std::uint64_t seed) {
  std::vector<T> x(n);
  std::mt19937_64 rng(seed);
  for (T& v : x) {
    if constexpr (std::is_integral_v<T>)
      v = static_cast<T>(static_cast<long long>(rng() % 2001) - 1000);
    else
      v = narrow<T>(static_cast<double>(rng() >> 11) * 0x1.0p-53 * 1.5 - 0.5);
  }
  return x;
}

struct Row {
  std::string type, op, who;
  double ms, gbps, percent, gelems, error;
  bool ok;
};
std::vector<Row> rows;

void report(const std::string& type, const std::string& op, const std::string& who, double ms, std::size_t bytes,
            std::size_t n, double error, bool ok) {
  const double gbps = bytes / ms / 1e6;
  std::printf("%-8s %-8s %-9s %8.3f ms %7.0f GB/s %6.1f%% %8.2f Gelem/s  error %.2e %s\n", type.c_str(), op.c_str(),
              who.c_str(), ms, gbps, 100 * gbps / ceiling_gbps, n / ms / 1e6, error, ok ? "ok" : "WRONG");
  rows.push_back({type, op, who, ms, gbps, 100 * gbps / ceiling_gbps, n / ms / 1e6, error, ok});
  CHECK(cudaGetLastError());
}

// The chapter's reference, as the judge calls it: a Problem, a workspace of workspace_bytes(n).
template <class T, class Result>
double time_reference(Element element, Operator op, const T* a, const T* b, std::size_t n, Result* result) {
  static const workbook::Entry* entry = workbook::find_entry("16_any_operator", "reference");
  if (entry == nullptr || entry->generic == nullptr) {
    std::fprintf(stderr, "16_any_operator's reference is not linked in\n");
    std::exit(1);
  }
  void *out, *workspace;
  CHECK(cudaMalloc(&out, sizeof(Result)));
  CHECK(cudaMalloc(&workspace, std::max<std::size_t>(entry->workspace_bytes(n), 1)));
  CHECK(cudaMemset(workspace, 0, std::max<std::size_t>(entry->workspace_bytes(n), 1)));
  const workbook::Problem problem{element, op, a, op == Operator::dot ? b : nullptr, n, out};
  const double ms = median_ms([&] { entry->generic(problem, workspace, stream); }, stream);
  CHECK(cudaMemcpy(result, out, sizeof(Result), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(out));
  CHECK(cudaFree(workspace));
  return ms;
}

template <class Call>
double time_cub(Call call) {
  std::size_t bytes = 0;
  CHECK(call(nullptr, bytes));
  void* temp;
  CHECK(cudaMalloc(&temp, std::max<std::size_t>(bytes, 1)));
  const double ms = median_ms([&] { CHECK(call(temp, bytes)); }, stream);
  CHECK(cudaFree(temp));
  return ms;
}

// Every operator asked of one input type, the reference's and CUB's.
template <class T>
void run_type(const char* type, Element element, std::size_t n) {
  using A = Widened<T>;
  const std::vector<T> host = host_input<T>(n, 1), host2 = host_input<T>(n, 2);
  T *a, *b;
  CHECK(cudaMalloc(&a, n * sizeof(T)));
  CHECK(cudaMalloc(&b, n * sizeof(T)));
  CHECK(cudaMemcpy(a, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b, host2.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  // Host references.
  long double sum = 0, magnitude = 0, dot_sum = 0, dot_magnitude = 0;
  A max = Max::identity<A>(), min = Min::identity<A>();
  long long arg_max = 0, arg_min = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const A x = widen(host[i]);
    sum += x;
    magnitude += x < 0 ? -static_cast<long double>(x) : x;
    if (x > max) max = x, arg_max = static_cast<long long>(i);
    if (x < min) min = x, arg_min = static_cast<long long>(i);
    const long double p = static_cast<long double>(x) * widen(host2[i]);
    dot_sum += p;
    dot_magnitude += p < 0 ? -p : p;
  }
  long double mean = sum / n, m2 = 0;
  for (std::size_t i = 0; i < n; ++i) m2 += (widen(host[i]) - mean) * (widen(host[i]) - mean);
  const double variance = static_cast<double>(m2 / n);
  const std::size_t bytes = n * sizeof(T);
  auto sum_error = [&](double got) {
    return static_cast<double>(std::fabs(got - sum) / std::max<long double>(magnitude, 1));
  };

  A got;
  double ms = time_reference(element, Operator::sum, a, b, n, &got);
  const bool exact = std::is_integral_v<T>;
  report(type, "sum", "reference", ms, bytes, n, sum_error(got),
         exact ? got == static_cast<A>(sum) : sum_error(got) < 1e-5);
  A* d_out;
  CHECK(cudaMalloc(&d_out, sizeof(Located<A>) > sizeof(Moments) ? sizeof(Located<A>) : sizeof(Moments)));
  ms = time_cub([&](void* t, std::size_t& s) {
    return cub::DeviceReduce::TransformReduce(t, s, a, d_out, n, Plus{}, WidenOp<T>{}, A(0), stream);
  });
  CHECK(cudaMemcpy(&got, d_out, sizeof got, cudaMemcpyDeviceToHost));
  report(type, "sum", "cub", ms, bytes, n, sum_error(got), exact ? got == static_cast<A>(sum) : sum_error(got) < 1e-5);

  ms = time_reference(element, Operator::max, a, b, n, &got);
  report(type, "max", "reference", ms, bytes, n, 0, got == max);
  T got_t;
  ms = time_cub(
      [&](void* t, std::size_t& s) { return cub::DeviceReduce::Max(t, s, a, reinterpret_cast<T*>(d_out), n, stream); });
  CHECK(cudaMemcpy(&got_t, d_out, sizeof got_t, cudaMemcpyDeviceToHost));
  report(type, "max", "cub", ms, bytes, n, 0, widen(got_t) == max);

  ms = time_reference(element, Operator::min, a, b, n, &got);
  report(type, "min", "reference", ms, bytes, n, 0, got == min);
  ms = time_cub(
      [&](void* t, std::size_t& s) { return cub::DeviceReduce::Min(t, s, a, reinterpret_cast<T*>(d_out), n, stream); });
  CHECK(cudaMemcpy(&got_t, d_out, sizeof got_t, cudaMemcpyDeviceToHost));
  report(type, "min", "cub", ms, bytes, n, 0, widen(got_t) == min);

  Located<A> where;
  ms = time_reference(element, Operator::argmax, a, b, n, &where);
  report(type, "argmax", "reference", ms, bytes, n, 0, where.index == arg_max);
  long long* d_index;
  CHECK(cudaMalloc(&d_index, sizeof(long long)));
  ms = time_cub([&](void* t, std::size_t& s) {
    return cub::DeviceReduce::ArgMax(t, s, a, reinterpret_cast<T*>(d_out), d_index, static_cast<std::int64_t>(n),
                                     stream);
  });
  long long index;
  CHECK(cudaMemcpy(&index, d_index, sizeof index, cudaMemcpyDeviceToHost));
  report(type, "argmax", "cub", ms, bytes, n, 0, index == arg_max);

  ms = time_reference(element, Operator::argmin, a, b, n, &where);
  report(type, "argmin", "reference", ms, bytes, n, 0, where.index == arg_min);
  ms = time_cub([&](void* t, std::size_t& s) {
    return cub::DeviceReduce::ArgMin(t, s, a, reinterpret_cast<T*>(d_out), d_index, static_cast<std::int64_t>(n),
                                     stream);
  });
  CHECK(cudaMemcpy(&index, d_index, sizeof index, cudaMemcpyDeviceToHost));
  report(type, "argmin", "cub", ms, bytes, n, 0, index == arg_min);

  if constexpr (!std::is_integral_v<T>) {
    auto dot_error = [&](double g) {
      return static_cast<double>(std::fabs(g - dot_sum) / std::max<long double>(dot_magnitude, 1));
    };
    {
      ms = time_reference(element, Operator::dot, a, b, n, &got);
      report(type, "dot", "reference", ms, 2 * bytes, n, dot_error(got), dot_error(got) < 1e-5);
      ms = time_cub([&](void* t, std::size_t& s) {
        return cub::DeviceReduce::TransformReduce(t, s, thrust::counting_iterator<long long>(0), d_out, n, Plus{},
                                                  ProductAt<T>{a, b}, A(0), stream);
      });
      CHECK(cudaMemcpy(&got, d_out, sizeof got, cudaMemcpyDeviceToHost));
      report(type, "dot", "cub", ms, 2 * bytes, n, dot_error(got), dot_error(got) < 1e-5);
    }
    {
      Moments m;
      ms = time_reference(element, Operator::mean_variance, a, b, n, &m);
      double error = std::fabs(m.variance() / variance - 1);
      report(type, "meanvar", "reference", ms, bytes, n, error, error < 1e-9);
      Moments* d_moments = reinterpret_cast<Moments*>(d_out);
      ms = time_cub([&](void* t, std::size_t& s) {
        return cub::DeviceReduce::TransformReduce(t, s, a, d_moments, n, MeanVariance{}, ToMoments<T>{},
                                                  MeanVariance::identity<Moments>(), stream);
      });
      CHECK(cudaMemcpy(&m, d_moments, sizeof m, cudaMemcpyDeviceToHost));
      error = std::fabs(m.variance() / variance - 1);
      report(type, "meanvar", "cub", ms, bytes, n, error, error < 1e-9);
    }
  }
  CHECK(cudaFree(d_out));
  CHECK(cudaFree(d_index));
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
}

__global__ void streaming_read(const float4* in, std::size_t count, float* sink) {
  float s = 0;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const float4 v = __ldg(in + i);
    s += v.x + v.y + v.z + v.w;
  }
  if (s == 12345.678f) *sink = s;  // never true for the inputs here: keeps the loads
}

}  // namespace

int main(int argc, char** argv) {
  // Each row as it is measured: the host's inputs and references take seconds a type (a minute
  // in all on the H200's host, 2026-12-02: a run cut at 30 s printed nothing).
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const int log2_n = argc > 1 ? std::atoi(argv[1]) : kCeilingLog2;
  if (log2_n < 10 || log2_n > 30) {
    std::fprintf(stderr, "usage: generic_ops [log2_n (10 to 30) [type ...]]\n");
    return 2;
  }
  const auto wanted = [&](const char* type) {
    if (argc <= 2) return true;
    for (int k = 2; k < argc; ++k) {
      if (std::strcmp(argv[k], type) == 0) return true;
    }
    return false;
  };
  const std::size_t n = std::size_t{1} << kCeilingLog2;
  // The ceiling: a kernel that only loads, 16 bytes a load, the best of a few grids (n floats).
  float *x, *sink;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&sink, sizeof(float)));
  fill<<<1024, 256, 0, stream>>>(x, n, 1000, 1000, 0);
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  for (int per_sm : {4, 8, 16, 32}) {
    const double ms = median_ms(
        [&] { streaming_read<<<per_sm * sms, 256, 0, stream>>>(reinterpret_cast<float4*>(x), n / 4, sink); }, stream);
    ceiling_gbps = std::max(ceiling_gbps, n * sizeof(float) / ms / 1e6);
  }
  CHECK(cudaFree(x));
  std::printf("streaming-read ceiling: %.0f GB/s (this program's own, 2^%d floats)\n", ceiling_gbps, kCeilingLog2);
  const std::size_t count = std::size_t{1} << log2_n;
  if (wanted("float")) run_type<float>("float", Element::f32, count);
  if (wanted("bfloat16")) run_type<__nv_bfloat16>("bfloat16", Element::bf16, count);
  if (wanted("half")) run_type<__half>("half", Element::f16, count);
  if (wanted("double")) run_type<double>("double", Element::f64, count);
  if (wanted("int32")) run_type<int>("int32", Element::i32, count);
  if (wanted("int64")) run_type<long long>("int64", Element::i64, count);
  std::printf("\ntype,op,who,log2_n,ms,gbps,percent_of_ceiling,gelem_per_s,error,ok\n");
  std::printf("float,read,ceiling,%d,%.4f,%.1f,100.0,%.2f,0,1\n", kCeilingLog2, n * sizeof(float) / ceiling_gbps / 1e6,
              ceiling_gbps, ceiling_gbps / sizeof(float));
  for (const Row& r : rows) {
    std::printf("%s,%s,%s,%d,%.4f,%.1f,%.1f,%.2f,%.3g,%d\n", r.type.c_str(), r.op.c_str(), r.who.c_str(), log2_n, r.ms,
                r.gbps, r.percent, r.gelems, r.error, r.ok);
  }
  return 0;
}
