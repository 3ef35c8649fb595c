// Chapter 16's given code: what its one-launch reduction keeps of chapter 11 once it is a template.
//
// Chapter 16 makes chapter 11's last-block reduction a template over the element type T and a
// fold F (what one thread keeps for an operator: F::Thread, F::Acc, start, add or add2, finish,
// combine). What a learner writes there is the folds and each thread's loop over its elements;
// what does not change with the operator is given here, and both chapters/16_any_operator/kernel.cu
// and its reference include it (the manifest lists it under that chapter's "given").
//
// What it gives, in namespace workbook::any_reduce:
// - the policy: kThreads (256 a block), kLoadsInFlight (16-byte loads per input a thread issues
//   before it adds), kMaxBlocks (the most blocks a launch uses: the workspace's room);
// - consume_one<T, F, kTwo>(t, a, b, i): element i of the inputs into the thread's fold;
// - combine_blocks<F>(mine, partials, ticket, out): every thread of every block calls it last with
//   its finished fold; the block's results combine in a fixed tree, each block's goes to
//   partials[block], and the block with the last ticket combines them in block order into *out
//   and puts the ticket back to 0 (chapter 11);
// - workspace_bytes(n): the ticket at offset 0, the partials from offset 32;
// - launch<T, F, kTwo, kernel>(problem, workspace, stream): the head up to a's first 16-byte
//   boundary (and whether b shares a's alignment: `vectors`), the grid (the blocks resident at
//   once, no more than one round of loads needs, no more than kMaxBlocks), and the launch of
//   kernel(a, b, n, head, vectors, partials, ticket, out).
//
// Every function here is `static` (an unnamed namespace would not do: nvcc gives its members
// external names): each chapter's file gets its own copy, and none is an external definition of
// the harness's namespace (which the grader refuses in a chapter's object).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <cuda_runtime.h>

#include "workbook/contract.hpp"
#include "workbook/operators.cuh"

namespace workbook {
namespace any_reduce {

constexpr unsigned kThreads = 256;
constexpr unsigned kLoadsInFlight = 4;  // 16-byte loads per input a thread issues before it adds
constexpr unsigned kMaxBlocks = 4096;   // the most blocks any instance launches: the workspace's room

// One element i of the inputs into the thread's fold.
template <class T, class F, bool kTwo>
static __device__ void consume_one(typename F::Thread& t, const T* a, const T* b, std::size_t i) {
  if constexpr (kTwo) F::add2(t, a[i], b[i]);
  else F::add(t, a[i], static_cast<long long>(i));
}

// Every thread's accumulator to thread 0, in a fixed tree (the same for every launch).
template <class F>
static __device__ typename F::Acc block_combine(typename F::Acc acc) {
  __shared__ typename F::Acc shared[kThreads];
  shared[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) shared[threadIdx.x] = F::combine(shared[threadIdx.x], shared[threadIdx.x + half]);
    __syncthreads();
  }
  return shared[0];
}

// Another block's result, read through L2 (__ldcg): this SM's L1 is not coherent with the writes
// of other SMs (chapter 11).
template <class Acc>
static __device__ Acc load_from_l2(const Acc* p) {
  static_assert(sizeof(Acc) % 4 == 0, "accumulators are whole words");
  unsigned words[sizeof(Acc) / 4];
  const unsigned* from = reinterpret_cast<const unsigned*>(p);
#pragma unroll
  for (unsigned k = 0; k < sizeof(Acc) / 4; ++k) words[k] = __ldcg(from + k);
  Acc a;
  memcpy(&a, words, sizeof a);
  return a;
}

// The end of the kernel, called by every thread with its finished fold: the block's result to
// partials[block]; the block with the last ticket combines them in block order into *out and puts
// the ticket back to 0. One block writes *out directly.
template <class F>
static __device__ void combine_blocks(typename F::Acc thread_result, typename F::Acc* partials, unsigned* ticket,
                                      typename F::Acc* out) {
  const typename F::Acc mine = block_combine<F>(thread_result);
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) *out = mine;
    return;
  }
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = mine;
    __threadfence();  // release: the partial is visible device-wide before the ticket is taken
    const bool is_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    if (is_last) __threadfence();  // acquire: the reads of the partials stay behind the ticket
    last = is_last;
  }
  __syncthreads();
  if (!last) return;
  typename F::Acc all = F::finish(F::start());  // the identity
  bool any = false;
  for (unsigned k = threadIdx.x; k < gridDim.x; k += kThreads) {
    const typename F::Acc p = load_from_l2(partials + k);
    all = any ? F::combine(all, p) : p;
    any = true;
  }
  all = block_combine<F>(all);
  if (threadIdx.x == 0) {
    *out = all;
    *ticket = 0;
  }
}

// Workspace: the ticket at offset 0, the partials from offset 32, room for kMaxBlocks of the
// largest accumulator (Moments, 24 bytes).
constexpr std::size_t kPartialsOffset = 32;
constexpr std::size_t kLargestAcc = 24;
static_assert(sizeof(ops::Moments) == kLargestAcc && sizeof(ops::Located<double>) <= kLargestAcc,
              "the workspace's room");

static std::size_t workspace_bytes(std::size_t) { return kPartialsOffset + kMaxBlocks * kLargestAcc; }

// The blocks of `kernel` that fit on the device at once, looked up once per device.
template <auto kernel>
static unsigned resident_blocks() {
  static std::atomic<unsigned> cached[64];
  int device = 0;
  cudaGetDevice(&device);
  const auto query = [device] {
    int sms = 0, per_sm = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0);
    return static_cast<unsigned>(std::max(sms, 0) * std::max(per_sm, 0));
  };
  if (device < 0 || device >= 64) return query();
  unsigned blocks = cached[device].load(std::memory_order_relaxed);
  if (blocks == 0) cached[device].store(blocks = query(), std::memory_order_relaxed);
  return blocks;
}

// One launch of `kernel` (an instance of the chapter's reduce_any_kernel<T, F, kTwo>) over the
// problem's inputs.
template <class T, class F, bool kTwo, auto kernel>
static void launch(const Problem& p, void* workspace, cudaStream_t stream) {
  constexpr std::size_t per = 16 / sizeof(T);
  const T* a = static_cast<const T*>(p.a);
  const T* b = kTwo ? static_cast<const T*>(p.b) : a;
  const auto misalignment = [](const T* x) { return reinterpret_cast<std::uintptr_t>(x) % 16 / sizeof(T); };
  const bool vectors = misalignment(a) == misalignment(b);
  const std::size_t head = vectors ? std::min(p.n, (per - misalignment(a)) % per) : 0;
  const std::size_t useful = (p.n + per * kThreads * kLoadsInFlight - 1) / (per * kThreads * kLoadsInFlight);
  const unsigned blocks = static_cast<unsigned>(
      std::max<std::size_t>(1, std::min<std::size_t>({useful, resident_blocks<kernel>(), kMaxBlocks})));
  char* w = static_cast<char*>(workspace);
  kernel<<<blocks, kThreads, 0, stream>>>(a, b, p.n, head, vectors,
                                          reinterpret_cast<typename F::Acc*>(w + kPartialsOffset),
                                          reinterpret_cast<unsigned*>(w), static_cast<typename F::Acc*>(p.out));
}

}  // namespace any_reduce
}  // namespace workbook
