// A deliberately faulty submission, for testing the grader: chapter 16's reduction, but a thread's
// argmax or argmin of integers takes an element equal to the one it holds (>= where > belongs), so
// it answers with the last of equal values among its own elements, not the first. Inputs whose ties
// fall in different threads do not show it; ties within a thread do.
#include "workbook/chapter.cuh"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <cuda_runtime.h>

#include "workbook/any_reduce.cuh"  // given: the block combine, the ticket, the launch
#include "workbook/operators.cuh"

namespace {

using namespace workbook::ops;
using workbook::Element;
using workbook::Operator;
using workbook::Problem;

using workbook::any_reduce::combine_blocks;  // the given block combine and last block (chapter 11)
using workbook::any_reduce::consume_one;
using workbook::any_reduce::kLoadsInFlight;
using workbook::any_reduce::kThreads;

// ---- what one thread keeps, and how two results combine: a fold per kind of operator ----

// Sum, and Max and Min of integers: the accumulator is the thread's state.
template <class T, class Op>
struct Fold {
  using Acc = Widened<T>;
  using Thread = Acc;
  static __device__ Thread start() { return Op::template identity<Acc>(); }
  static __device__ void add(Thread& t, T x, long long) { t = Op{}(t, widen(x)); }
  static __device__ Acc finish(Thread t) { return t; }
  static __device__ Acc combine(Acc a, Acc b) { return Op{}(a, b); }
};

// ArgMax and ArgMin of integers: a value and its index. A thread meets its elements in increasing
// index order, so within a thread a tie keeps the element it has: it takes a new one only if that
// one wins outright, or if it has none yet. No index is compared per element; the combines compare
// them.
template <class T, class Op>
struct ArgFold {
  using Acc = Located<Widened<T>>;
  using Thread = Acc;
  static __device__ Thread start() { return Op::template identity<Acc>(); }
  static __device__ void add(Thread& t, T x, long long i) {
    const Widened<T> v = widen(x);
    if (t.index < 0 || !Op{}.wins(t.value, v)) t = {v, i};  // the fault: a tie takes the later element
  }
  static __device__ Acc finish(Thread t) { return t; }
  static __device__ Acc combine(Acc a, Acc b) { return Op{}(a, b); }
};

// The bits of a floating accumulator as an unsigned integer of the same size.
template <class A>
using Bits = std::conditional_t<sizeof(A) == 4, std::uint32_t, std::uint64_t>;
template <class A>
__device__ Bits<A> bits_of(A x) {
  Bits<A> b;
  memcpy(&b, &x, sizeof b);
  return b;
}
template <class A>
__device__ A from_bits(Bits<A> b) {
  A x;
  memcpy(&x, &b, sizeof x);
  return x;
}
template <class A>
__device__ constexpr Bits<A> kSign = Bits<A>(1) << (8 * sizeof(A) - 1);

// Max (greater) and Min of a floating type: one fmax/fmin per element (it drops a NaN and may
// return either of two zeros), and two flags that the operator's rules need, applied once in
// finish: a NaN was seen (a NaN wins), and the zero that wins a tie of zeros was seen (+0 for Max,
// -0 for Min).
template <class T, bool greater>
struct ExtremeFold {
  using Acc = Widened<T>;
  struct Thread {
    Acc best;
    bool nan, winning_zero;
  };
  static __device__ Thread start() { return {Extreme<greater>::template identity<Acc>(), false, false}; }
  static __device__ void add(Thread& t, T x, long long) {
    const Acc v = widen(x);
    t.best = greater ? fmax(t.best, v) : fmin(t.best, v);
    t.nan = t.nan || v != v;
    t.winning_zero = t.winning_zero || bits_of(v) == (greater ? Bits<Acc>(0) : kSign<Acc>);
  }
  static __device__ Acc finish(const Thread& t) {
    if (t.nan) return from_bits<Acc>(~Bits<Acc>(0) >> 1);  // a quiet NaN
    if (t.best == 0) {  // a zero won: the winning one if it was seen, else the other
      const bool negative = greater ? !t.winning_zero : t.winning_zero;
      return from_bits<Acc>(negative ? kSign<Acc> : Bits<Acc>(0));
    }
    return t.best;
  }
  static __device__ Acc combine(Acc a, Acc b) { return Extreme<greater>{}(a, b); }
};

// ArgMax (greater) and ArgMin of a floating type with one comparison an element: v replaces the
// thread's value when !(v <= value) (ArgMax), which holds when v is greater or either is a NaN,
// provided the value held is not a NaN (the first NaN stays); or when nothing is held yet. Equal
// values (+0 and -0 too) keep the earlier index: a thread meets its elements in index order.
template <class T, bool greater>
struct ArgExtremeFold {
  using Acc = Located<Widened<T>>;
  using Thread = Acc;
  static __device__ Thread start() { return ArgExtreme<greater>::template identity<Acc>(); }
  static __device__ void add(Thread& t, T x, long long i) {
    const Widened<T> v = widen(x);
    const bool beats = greater ? !(v <= t.value) : !(v >= t.value);
    if ((beats && t.value == t.value) || t.index < 0) t = {v, i};
  }
  static __device__ Acc finish(Thread t) { return t; }
  static __device__ Acc combine(Acc a, Acc b) { return ArgExtreme<greater>{}(a, b); }
};

// The fold of Max (greater) or Min, and of ArgMax or ArgMin: the operator itself for integers, the
// folds above for floating types.
template <class T, bool greater>
using MaxOrMinFold =
    std::conditional_t<std::is_integral_v<T>, Fold<T, Extreme<greater>>, ExtremeFold<T, greater>>;
template <class T, bool greater>
using ArgMaxOrMinFold =
    std::conditional_t<std::is_integral_v<T>, ArgFold<T, ArgExtreme<greater>>, ArgExtremeFold<T, greater>>;

// The dot product: products added as they come, fused.
template <class T>
struct DotFold {
  using Acc = Widened<T>;
  using Thread = Acc;
  static __device__ Thread start() { return Acc(0); }
  static __device__ void add2(Thread& t, T x, T y) { t = fma(widen(x), widen(y), t); }
  static __device__ Acc finish(Thread t) { return t; }
  static __device__ Acc combine(Acc a, Acc b) { return a + b; }
};

// Mean and variance: a thread adds x - k and its square in double, k being its first element
// (near the data, so nothing large cancels), and makes Moments of them once; blocks merge Moments
// with Chan's update (MeanVariance).
template <class T>
struct MomentsFold {
  using Acc = Moments;
  struct Thread {
    double k, s1, s2, count;
  };
  static __device__ Thread start() { return {0, 0, 0, 0}; }
  static __device__ void add(Thread& t, T x, long long) {
    const double v = widen(x);
    if (t.count == 0) t.k = v;
    const double d = v - t.k;
    t.s1 += d;
    t.s2 = fma(d, d, t.s2);
    t.count += 1;
  }
  static __device__ Acc finish(const Thread& t) {
    if (t.count == 0) return MeanVariance::identity<Moments>();
    return {t.count, t.k + t.s1 / t.count, t.s2 - t.s1 * (t.s1 / t.count)};
  }
  static __device__ Acc combine(const Acc& a, const Acc& b) { return MeanVariance{}(a, b); }
};

// ---- the kernel ----

// The elements of one 16-byte load of each input into the thread's fold; `first` is the index of
// its first element.
template <class T, class F, bool kTwo>
__device__ void consume(typename F::Thread& t, const uint4& va, const uint4& vb, long long first) {
  constexpr int per = 16 / sizeof(T);
  T a[per], b[per];
  memcpy(a, &va, 16);
  memcpy(b, &vb, 16);
#pragma unroll
  for (int j = 0; j < per; ++j) {
    if constexpr (kTwo) F::add2(t, a[j], b[j]);
    else F::add(t, a[j], first + j);
  }
}

// One launch. Elements [0, head) one at a time (up to the first 16-byte boundary of a); then, if
// `vectors`, 16-byte loads of every input from there, kLoadsInFlight in flight, and the last
// elements one at a time; otherwise (dot's two inputs misaligned differently) every element one at
// a time. Each block's result goes to partials[block]; the block with the last ticket combines
// them in block order into *out and puts the ticket back to 0.
template <class T, class F, bool kTwo>
__global__ void __launch_bounds__(kThreads)
    reduce_any_kernel(const T* __restrict__ a, const T* __restrict__ b, std::size_t n, std::size_t head,
                      bool vectors, typename F::Acc* partials, unsigned* ticket, typename F::Acc* out) {
  constexpr std::size_t per = 16 / sizeof(T);
  const std::size_t stride = std::size_t{gridDim.x} * kThreads;
  const std::size_t me = std::size_t{blockIdx.x} * kThreads + threadIdx.x;
  typename F::Thread t = F::start();
  std::size_t rest = head;  // where the one-at-a-time tail begins
  if (vectors) {
    for (std::size_t i = me; i < head; i += stride) consume_one<T, F, kTwo>(t, a, b, i);
    const uint4* va = reinterpret_cast<const uint4*>(a + head);
    const uint4* vb = reinterpret_cast<const uint4*>(kTwo ? b + head : a + head);
    const std::size_t count = (n - head) / per;
    std::size_t v = me;
    for (; v + (kLoadsInFlight - 1) * stride < count; v += kLoadsInFlight * stride) {
      uint4 ra[kLoadsInFlight], rb[kLoadsInFlight] = {};
#pragma unroll
      for (unsigned u = 0; u < kLoadsInFlight; ++u) {
        ra[u] = __ldg(va + v + u * stride);
        if constexpr (kTwo) rb[u] = __ldg(vb + v + u * stride);
      }
#pragma unroll
      for (unsigned u = 0; u < kLoadsInFlight; ++u) {
        consume<T, F, kTwo>(t, ra[u], rb[u], static_cast<long long>(head + (v + u * stride) * per));
      }
    }
    for (; v < count; v += stride) {
      const uint4 ra = __ldg(va + v);
      uint4 rb = {};
      if constexpr (kTwo) rb = __ldg(vb + v);
      consume<T, F, kTwo>(t, ra, rb, static_cast<long long>(head + v * per));
    }
    rest = head + count * per;
  }
  for (std::size_t i = rest + me; i < n; i += stride) consume_one<T, F, kTwo>(t, a, b, i);
  combine_blocks<F>(F::finish(t), partials, ticket, out);
}

// ---- the launcher ----

// One instance: the kernel for (T, F), launched by the given launcher.
template <class T, class F, bool kTwo>
void launch(const Problem& p, void* workspace, cudaStream_t stream) {
  workbook::any_reduce::launch<T, F, kTwo, reduce_any_kernel<T, F, kTwo>>(p, workspace, stream);
}

template <class T>
void launch_for(const Problem& p, void* workspace, cudaStream_t stream) {
  switch (p.op) {
    case Operator::sum: return launch<T, Fold<T, Sum>, false>(p, workspace, stream);
    case Operator::max: return launch<T, MaxOrMinFold<T, true>, false>(p, workspace, stream);
    case Operator::min: return launch<T, MaxOrMinFold<T, false>, false>(p, workspace, stream);
    case Operator::argmax: return launch<T, ArgMaxOrMinFold<T, true>, false>(p, workspace, stream);
    case Operator::argmin: return launch<T, ArgMaxOrMinFold<T, false>, false>(p, workspace, stream);
    case Operator::dot:
      if constexpr (!std::is_integral_v<T>) return launch<T, DotFold<T>, true>(p, workspace, stream);
      break;
    case Operator::mean_variance:
      if constexpr (!std::is_integral_v<T>) return launch<T, MomentsFold<T>, false>(p, workspace, stream);
      break;
  }
}

void reduce_any(const Problem& p, void* workspace, cudaStream_t stream) {
  switch (p.element) {
    case Element::f32: return launch_for<float>(p, workspace, stream);
    case Element::f64: return launch_for<double>(p, workspace, stream);
    case Element::f16: return launch_for<__half>(p, workspace, stream);
    case Element::bf16: return launch_for<__nv_bfloat16>(p, workspace, stream);
    case Element::i32: return launch_for<int>(p, workspace, stream);
    case Element::i64: return launch_for<long long>(p, workspace, stream);
  }
}

}  // namespace

WORKBOOK_GENERIC_REDUCE(reduce_any, workbook::any_reduce::workspace_bytes);
