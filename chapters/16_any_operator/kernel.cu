// Chapter 16: one reduction for every element type and operator.
// Differs from chapter 11: nothing here is a float any more. Write the folds (what a thread keeps
// for each kind of operator: start, add, finish, combine), the split of a 16-byte load into
// 16 / sizeof(T) elements, and the kernel's loop over its elements. The block's combine, the
// ticket and the launch are given (workbook/any_reduce.cuh), and so is the dispatch below.
// Check it: `grader/grade --chapter 16_any_operator`
// Chapter 11's one-launch reduction (16-byte loads, several in flight; each block's result to the
// workspace; the block with the last ticket combines them in block order), made a template over
// the element type T, its accumulator (workbook/operators.cuh: Widened<T>, Located, Moments) and
// the operator, the way CUB's DeviceReduce takes an operator object, an identity and a transform.
// One dispatch turns the problem's (element, operator) into the instance that runs it.
#include "workbook/chapter.cuh"

#include <cstddef>
#include <cstdint>
#include <cstring>

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

//! [fold]
// Sum, Max and Min: the accumulator is the thread's state.
template <class T, class Op>
struct Fold {
  using Acc = Widened<T>;
  using Thread = Acc;
  // TODO: start() is the operator's identity for Acc (Op::template identity<Acc>()); add()
  //       widens x (widen(x): float for __half and __nv_bfloat16, long long for int) and combines
  //       it into t with the operator object, Op{}(t, ...); combine() is the operator.
  static __device__ Thread start() { return Thread{}; }
  static __device__ void add(Thread& t, T x, long long) { (void)t, (void)x; }
  static __device__ Acc finish(Thread t) { return t; }
  static __device__ Acc combine(Acc a, Acc b) { return (void)b, a; }
};
//! [fold]

// ArgMax and ArgMin: a value and its index. A thread meets its elements in increasing index
// order, so within a thread a tie keeps the element it has: it takes a new one only if that one
// wins outright, or if it has none yet. No index is compared per element; the combines compare
// them.
template <class T, class Op>
struct ArgFold {
  using Acc = Located<Widened<T>>;
  using Thread = Acc;
  static __device__ Thread start() { return Op::template identity<Acc>(); }
  static __device__ void add(Thread& t, T x, long long i) {
    // TODO: t becomes {widen(x), i} when t holds nothing yet (t.index < 0) or when the new value
    //       wins outright, Op{}.wins(value, t.value). Not on a tie: the earlier index stays.
    (void)t, (void)x, (void)i;
  }
  static __device__ Acc finish(Thread t) { return t; }
  static __device__ Acc combine(Acc a, Acc b) { return Op{}(a, b); }
};

// The dot product: products added as they come, fused.
template <class T>
struct DotFold {
  using Acc = Widened<T>;
  using Thread = Acc;
  static __device__ Thread start() { return Acc(0); }
  // TODO: add the product of the widened x and y to t, in one fused multiply-add (fma).
  static __device__ void add2(Thread& t, T x, T y) { (void)t, (void)x, (void)y; }
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
    // TODO: v = widen(x) as a double; the first element a thread sees becomes its shift k
    //       (t.count == 0); then d = v - k is added to s1, d * d to s2 (fma), and 1 to count.
    (void)t, (void)x;
  }
  static __device__ Acc finish(const Thread& t) {
    // TODO: the thread's Moments: {count, mean, M2}, the mean being k + s1 / count and M2 the
    //       squared deviations from it, s2 - s1 * s1 / count. No elements: the identity,
    //       MeanVariance::identity<Moments>().
    (void)t;
    return MeanVariance::identity<Moments>();
  }
  static __device__ Acc combine(const Acc& a, const Acc& b) { return MeanVariance{}(a, b); }
};

// ---- the kernel ----

//! [consume]
// The elements of one 16-byte load of each input into the thread's fold; `first` is the index of
// its first element.
template <class T, class F, bool kTwo>
__device__ void consume(typename F::Thread& t, const uint4& va, const uint4& vb, long long first) {
  // TODO: the 16 bytes as an array of per = 16 / sizeof(T) elements (memcpy them into a local
  //       T a[per]; and b[per]), then each element into the fold: F::add2(t, a[j], b[j]) when
  //       kTwo, else F::add(t, a[j], first + j). `#pragma unroll` the loop: per is a constant.
  (void)t, (void)va, (void)vb, (void)first;
}
//! [consume]

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
  // TODO: fold this thread's elements into t, each of [0, n) once in the whole grid:
  //   - if `vectors`: the elements [0, head) one at a time (consume_one, grid-stride from me);
  //     then count = (n - head) / per 16-byte loads (uint4) of a + head (and of b + head when
  //     kTwo), grid-stride, kLoadsInFlight of them issued before any is consumed, read with
  //     __ldg; load v holds the elements from head + v * per on (consume); then the elements
  //     after the last whole load, one at a time;
  //   - otherwise (two inputs misaligned differently): every element one at a time.
  (void)a, (void)b, (void)n, (void)head, (void)vectors, (void)me, (void)stride, (void)per;
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
    case Operator::max: return launch<T, Fold<T, Max>, false>(p, workspace, stream);
    case Operator::min: return launch<T, Fold<T, Min>, false>(p, workspace, stream);
    case Operator::argmax: return launch<T, ArgFold<T, ArgMax>, false>(p, workspace, stream);
    case Operator::argmin: return launch<T, ArgFold<T, ArgMin>, false>(p, workspace, stream);
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
