// The generic chapter's question, before it is a chapter: does one templated kernel (chapter 07's
// 16-byte loads, several in flight; chapter 11's last-block finish) reduce every input type with
// every operator of workbook/operators.cuh at the streaming-read ceiling, and how does it compare
// with CUB's DeviceReduce (Sum, Max, Min, ArgMax, ArgMin, TransformReduce) in the same run?
//
// For each (type, operator) at n = 2^27 elements: the median of 30 timings of one call after 3
// warm-ups, for this kernel and for CUB; GB/s of input read, elements/s, and the fraction of a
// streaming-read ceiling measured in the same run (16-byte loads, the best of four grids, like the
// harness's but simpler: a first look, not the book's ceiling); each result checked against a
// host reference (exact where it can be: integers, Max, Min, ArgMax's index; otherwise the error
// relative to the sum of magnitudes).
//   tests/experiments/run <out>      (writes generic_ops.csv)
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "common.cuh"
#include "workbook/operators.cuh"

namespace {

using namespace workbook::ops;

constexpr unsigned kThreads = 256;
constexpr int kUnroll = 4;  // 16-byte loads in flight per thread per input

// ---- what one thread keeps, per operator: a fold for Sum, Max, Min, ArgMax and ArgMin ----

template <class T, class Op>
struct Fold {
  using Acc = Widened<T>;
  using Thread = Acc;
  __device__ static Thread start() { return Op::template identity<Acc>(); }
  __device__ static void add(Thread& t, T x, long long) { t = Op{}(t, widen(x)); }
  __device__ static Acc finish(Thread t) { return t; }
  __device__ static Acc combine(Acc a, Acc b) { return Op{}(a, b); }
  __host__ __device__ static Acc identity() { return Op::template identity<Acc>(); }
};

template <class T, class Op>
struct ArgFold {
  using Acc = Located<Widened<T>>;
  using Thread = Acc;
  __device__ static Thread start() { return Op::template identity<Acc>(); }
  __device__ static void add(Thread& t, T x, long long i) { t = Op{}(t, Acc{widen(x), i}); }
  __device__ static Acc finish(Thread t) { return t; }
  __device__ static Acc combine(Acc a, Acc b) { return Op{}(a, b); }
  __host__ __device__ static Acc identity() { return Op::template identity<Acc>(); }
};

// The dot product of two inputs: a sum of products, fused.
template <class T>
struct DotFold {
  using Acc = Widened<T>;
  using Thread = Acc;
  __device__ static Thread start() { return Acc(0); }
  __device__ static void add2(Thread& t, T x, T y) { t = fma(widen(x), widen(y), t); }
  __device__ static Acc finish(Thread t) { return t; }
  __device__ static Acc combine(Acc a, Acc b) { return a + b; }
  __host__ __device__ static Acc identity() { return Acc(0); }
};

// Mean and variance: a thread adds x - k and its square in double, k being its first element
// (near the data, so nothing large cancels), and turns them into Moments once; blocks merge
// Moments with Chan's update.
template <class T>
struct MomentsFold {
  using Acc = Moments;
  struct Thread {
    double k, s1, s2, count;
  };
  __device__ static Thread start() { return {0, 0, 0, 0}; }
  __device__ static void add(Thread& t, T x, long long) {
    const double v = widen(x);
    if (t.count == 0) t.k = v;
    const double d = v - t.k;
    t.s1 += d;
    t.s2 = fma(d, d, t.s2);
    t.count += 1;
  }
  __device__ static Acc finish(const Thread& t) {
    if (t.count == 0) return identity();
    return {t.count, t.k + t.s1 / t.count, t.s2 - t.s1 * (t.s1 / t.count)};
  }
  __device__ static Acc combine(const Acc& a, const Acc& b) { return MeanVariance{}(a, b); }
  __host__ __device__ static Acc identity() { return MeanVariance::identity<Moments>(); }
};

template <class F>
__device__ typename F::Acc block_combine(typename F::Acc acc) {
  __shared__ typename F::Acc shared[kThreads];
  shared[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) shared[threadIdx.x] = F::combine(shared[threadIdx.x], shared[threadIdx.x + half]);
    __syncthreads();
  }
  return shared[0];
}

template <class T, class F, bool kTwo>
__device__ void consume(typename F::Thread& t, const uint4& va, const uint4& vb, long long first) {
  constexpr int per = 16 / sizeof(T);
  T a[per], b[per];
  std::memcpy(a, &va, 16);
  std::memcpy(b, &vb, 16);
#pragma unroll
  for (int j = 0; j < per; ++j) {
    if constexpr (kTwo) F::add2(t, a[j], b[j]);
    else F::add(t, a[j], first + j);
  }
}

// One launch: a grid-stride pass of 16-byte loads, kUnroll in flight, each block's result to
// partials, and the last block to finish (a ticket) combines them in block order into *out.
template <class T, class F, bool kTwo>
__global__ void __launch_bounds__(kThreads)
    generic_reduce(const T* __restrict__ a, const T* __restrict__ b, std::size_t n, typename F::Acc* partials,
                   unsigned* ticket, typename F::Acc* out) {
  constexpr int per = 16 / sizeof(T);
  const uint4* va = reinterpret_cast<const uint4*>(a);
  const uint4* vb = reinterpret_cast<const uint4*>(b);
  const std::size_t vectors = n / per, stride = std::size_t{gridDim.x} * kThreads;
  const std::size_t me = std::size_t{blockIdx.x} * kThreads + threadIdx.x;
  typename F::Thread t = F::start();
  std::size_t v = me;
  for (; v + (kUnroll - 1) * stride < vectors; v += kUnroll * stride) {
    uint4 ra[kUnroll], rb[kUnroll] = {};
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      ra[u] = __ldg(va + v + u * stride);
      if constexpr (kTwo) rb[u] = __ldg(vb + v + u * stride);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) consume<T, F, kTwo>(t, ra[u], rb[u], static_cast<long long>((v + u * stride) * per));
  }
  for (; v < vectors; v += stride) {
    uint4 ra = __ldg(va + v), rb = {};
    if constexpr (kTwo) rb = __ldg(vb + v);
    consume<T, F, kTwo>(t, ra, rb, static_cast<long long>(v * per));
  }
  for (std::size_t i = vectors * per + me; i < n; i += stride) {
    if constexpr (kTwo) F::add2(t, a[i], b[i]);
    else F::add(t, a[i], static_cast<long long>(i));
  }
  typename F::Acc acc = block_combine<F>(F::finish(t));
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = acc;
    __threadfence();
    last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();  // every block's partial, written before its ticket, is visible now
  typename F::Acc mine = F::identity();
  for (unsigned k = threadIdx.x; k < gridDim.x; k += kThreads) mine = F::combine(mine, partials[k]);
  mine = block_combine<F>(mine);
  if (threadIdx.x == 0) {
    *out = mine;
    *ticket = 0;
  }
}

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

double ceiling_gbps = 0;
cudaStream_t stream;

template <class T>
std::vector<T> host_input(std::size_t n, std::uint64_t seed) {
  std::vector<T> x(n);
  std::mt19937_64 rng(seed);
  for (T& v : x) {
    if constexpr (std::is_integral_v<T>) v = static_cast<T>(static_cast<long long>(rng() % 2001) - 1000);
    else v = narrow<T>(static_cast<double>(rng() >> 11) * 0x1.0p-53 * 1.5 - 0.5);
  }
  return x;
}

struct Row {
  std::string type, op, who;
  double ms, error;
  bool ok;
};
std::vector<Row> rows;

void report(const std::string& type, const std::string& op, const std::string& who, double ms, std::size_t bytes,
            std::size_t n, double error, bool ok) {
  const double gbps = bytes / ms / 1e6;
  std::printf("%-8s %-8s %-5s %8.3f ms %7.0f GB/s %6.1f%% %8.2f Gelem/s  error %.2e %s\n", type.c_str(), op.c_str(),
              who.c_str(), ms, gbps, 100 * gbps / ceiling_gbps, n / ms / 1e6, error, ok ? "ok" : "WRONG");
  rows.push_back({type, op, who, ms, error, ok});
  CHECK(cudaGetLastError());
}

template <class F, bool kTwo, class T>
double time_ours(const T* a, const T* b, std::size_t n, typename F::Acc* result) {
  int per_sm = 0, sms = 0, device = 0;
  CHECK(cudaGetDevice(&device));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, generic_reduce<T, F, kTwo>, kThreads, 0));
  const unsigned grid = std::max(1, per_sm * sms);
  typename F::Acc *partials, *out;
  unsigned* ticket;
  CHECK(cudaMalloc(&partials, grid * sizeof(typename F::Acc)));
  CHECK(cudaMalloc(&out, sizeof(typename F::Acc)));
  CHECK(cudaMalloc(&ticket, sizeof(unsigned)));
  CHECK(cudaMemset(ticket, 0, sizeof(unsigned)));
  const double ms = median_ms([&] { generic_reduce<T, F, kTwo><<<grid, kThreads, 0, stream>>>(a, b, n, partials, ticket, out); },
                              stream);
  CHECK(cudaMemcpy(result, out, sizeof(typename F::Acc), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(partials));
  CHECK(cudaFree(out));
  CHECK(cudaFree(ticket));
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

// Every operator of one input type (and the dot product where `dot`), ours and CUB's.
template <class T>
void run_type(const char* type, std::size_t n, bool dot, bool moments) {
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
  auto sum_error = [&](double got) { return static_cast<double>(std::fabs(got - sum) / std::max<long double>(magnitude, 1)); };

  A got;
  double ms = time_ours<Fold<T, Sum>, false>(a, a, n, &got);
  const bool exact = std::is_integral_v<T>;
  report(type, "sum", "ours", ms, bytes, n, sum_error(got), exact ? got == static_cast<A>(sum) : sum_error(got) < 1e-5);
  A* d_out;
  CHECK(cudaMalloc(&d_out, sizeof(Located<A>) > sizeof(Moments) ? sizeof(Located<A>) : sizeof(Moments)));
  ms = time_cub([&](void* t, std::size_t& s) {
    return cub::DeviceReduce::TransformReduce(t, s, a, d_out, n, Plus{}, WidenOp<T>{}, A(0), stream);
  });
  CHECK(cudaMemcpy(&got, d_out, sizeof got, cudaMemcpyDeviceToHost));
  report(type, "sum", "cub", ms, bytes, n, sum_error(got), exact ? got == static_cast<A>(sum) : sum_error(got) < 1e-5);

  ms = time_ours<Fold<T, Max>, false>(a, a, n, &got);
  report(type, "max", "ours", ms, bytes, n, 0, got == max);
  T got_t;
  ms = time_cub([&](void* t, std::size_t& s) { return cub::DeviceReduce::Max(t, s, a, reinterpret_cast<T*>(d_out), n, stream); });
  CHECK(cudaMemcpy(&got_t, d_out, sizeof got_t, cudaMemcpyDeviceToHost));
  report(type, "max", "cub", ms, bytes, n, 0, widen(got_t) == max);

  ms = time_ours<Fold<T, Min>, false>(a, a, n, &got);
  report(type, "min", "ours", ms, bytes, n, 0, got == min);
  ms = time_cub([&](void* t, std::size_t& s) { return cub::DeviceReduce::Min(t, s, a, reinterpret_cast<T*>(d_out), n, stream); });
  CHECK(cudaMemcpy(&got_t, d_out, sizeof got_t, cudaMemcpyDeviceToHost));
  report(type, "min", "cub", ms, bytes, n, 0, widen(got_t) == min);

  Located<A> where;
  ms = time_ours<ArgFold<T, ArgMax>, false>(a, a, n, &where);
  report(type, "argmax", "ours", ms, bytes, n, 0, where.index == arg_max);
  long long* d_index;
  CHECK(cudaMalloc(&d_index, sizeof(long long)));
  ms = time_cub([&](void* t, std::size_t& s) {
    return cub::DeviceReduce::ArgMax(t, s, a, reinterpret_cast<T*>(d_out), d_index, static_cast<std::int64_t>(n), stream);
  });
  long long index;
  CHECK(cudaMemcpy(&index, d_index, sizeof index, cudaMemcpyDeviceToHost));
  report(type, "argmax", "cub", ms, bytes, n, 0, index == arg_max);

  ms = time_ours<ArgFold<T, ArgMin>, false>(a, a, n, &where);
  report(type, "argmin", "ours", ms, bytes, n, 0, where.index == arg_min);
  ms = time_cub([&](void* t, std::size_t& s) {
    return cub::DeviceReduce::ArgMin(t, s, a, reinterpret_cast<T*>(d_out), d_index, static_cast<std::int64_t>(n), stream);
  });
  CHECK(cudaMemcpy(&index, d_index, sizeof index, cudaMemcpyDeviceToHost));
  report(type, "argmin", "cub", ms, bytes, n, 0, index == arg_min);

  if constexpr (!std::is_integral_v<T>) {
    auto dot_error = [&](double g) { return static_cast<double>(std::fabs(g - dot_sum) / std::max<long double>(dot_magnitude, 1)); };
    if (dot) {
      ms = time_ours<DotFold<T>, true>(a, b, n, &got);
      report(type, "dot", "ours", ms, 2 * bytes, n, dot_error(got), dot_error(got) < 1e-5);
      ms = time_cub([&](void* t, std::size_t& s) {
        return cub::DeviceReduce::TransformReduce(t, s, thrust::counting_iterator<long long>(0), d_out, n, Plus{},
                                                  ProductAt<T>{a, b}, A(0), stream);
      });
      CHECK(cudaMemcpy(&got, d_out, sizeof got, cudaMemcpyDeviceToHost));
      report(type, "dot", "cub", ms, 2 * bytes, n, dot_error(got), dot_error(got) < 1e-5);
    }
    if (moments) {
      Moments m;
      ms = time_ours<MomentsFold<T>, false>(a, a, n, &m);
      double error = std::fabs(m.variance() / variance - 1);
      report(type, "meanvar", "ours", ms, bytes, n, error, error < 1e-9);
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
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += std::size_t{gridDim.x} * blockDim.x) {
    const float4 v = __ldg(in + i);
    s += v.x + v.y + v.z + v.w;
  }
  if (s == 12345.678f) *sink = s;  // never true for the inputs here: keeps the loads
}

}  // namespace

int main() {
  // Each row as it is measured: the host's inputs and references take seconds a type (a minute
  // in all on the H200's host, 2026-12-02: a run cut at 30 s printed nothing).
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const std::size_t n = std::size_t{1} << 27;
  // The ceiling: a kernel that only loads, 16 bytes a load, the best of a few grids (n floats).
  float *x, *sink;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&sink, sizeof(float)));
  fill<<<1024, 256, 0, stream>>>(x, n, 1000, 1000, 0);
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  for (int per_sm : {4, 8, 16, 32}) {
    const double ms = median_ms([&] { streaming_read<<<per_sm * sms, 256, 0, stream>>>(reinterpret_cast<float4*>(x), n / 4, sink); }, stream);
    ceiling_gbps = std::max(ceiling_gbps, n * sizeof(float) / ms / 1e6);
  }
  CHECK(cudaFree(x));
  std::printf("streaming-read ceiling: %.0f GB/s (this program's own, 2^27 floats)\n", ceiling_gbps);
  run_type<float>("float", n, true, true);
  run_type<__nv_bfloat16>("bfloat16", n, true, false);
  run_type<__half>("half", n, false, false);
  run_type<double>("double", n, true, true);
  run_type<int>("int32", n, false, false);
  run_type<long long>("int64", n, false, false);
  std::printf("\ntype,op,who,ms,error,ok\n");
  for (const Row& r : rows) std::printf("%s,%s,%s,%.4f,%.3g,%d\n", r.type.c_str(), r.op.c_str(), r.who.c_str(), r.ms, r.error, r.ok);
  return 0;
}
