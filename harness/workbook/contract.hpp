// The types of the contract between a chapter's kernel.cu and the harness.
// Chapter files include "workbook/chapter.cuh", which adds the registration macros.
#pragma once

#include <cstddef>

#include <cuda_runtime.h>

// NCCL's communicator (nccl.h: typedef struct ncclComm* ncclComm_t), named here without nccl.h,
// which only the chapter over several GPUs includes.
struct ncclComm;

namespace workbook {

//! What every launcher below may and may not do, in every chapter:
//!
//! - **Errors.** A launcher neither throws nor exits. A CUDA call that fails
//!   leaves its error where the caller finds it (a failed launch in
//!   `cudaGetLastError()`, a failed kernel at the next synchronization): the
//!   harness checks both after every call, and poisons the outputs before it,
//!   so a launch that never ran shows as a wrong or missing result. A launcher
//!   need not check its own calls; one that does must not hide an error (by
//!   clearing it with `cudaGetLastError()` and carrying on).
//! - **State on the host.** A launcher runs on every call, so host work shows
//!   at small n. It may keep one kind of state between calls: facts about the
//!   device that do not change (the SM count, an occupancy lookup), cached per
//!   device (`cudaGetDevice`), as the code given in chapter 11's stub does.
//!   Nothing that depends on the input or on an earlier call's result; state
//!   on the device lives in the workspace (full reductions).
//! - **Floating point.** Every chapter's kernel.cu (a learner's and a reference)
//!   is compiled with IEEE single precision: `-ftz=false -prec-div=true
//!   -prec-sqrt=true` (the top CMakeLists.txt; workbook_add_subject in grader/judge/CMakeLists.txt), after any
//!   flags of the build, so `--use_fast_math` in CMAKE_CUDA_FLAGS cannot flush
//!   a chapter's subnormals to zero. Chapter 15's exact sum depends on it: under
//!   flush-to-zero a subnormal compares equal to 0 and is lost. Contraction
//!   into FMA is nvcc's default (`-fmad=true`); sums have no product to contract.
//!
//! A block pass: reduce `in[0, n)` to one partial sum per block.
//!
//! Writes `partials[0, count)` and returns `count`, which must not exceed
//! `capacity` (the harness gives `partials_capacity(n)`: at least `ceil(n / 32)`
//! and at least 65536). Every element of `in` is added to exactly one partial. The
//! launch is asynchronous on `stream`; nothing may synchronize the device.
//! `n == 0` returns 0. `in` is only 4-byte aligned in general.
using BlockPassFn = std::size_t (*)(const float* in, std::size_t n, float* partials,
                                    std::size_t capacity, cudaStream_t stream);

//! A full reduction: write the sum of `in[0, n)` to `*out` (device memory).
//!
//! `workspace` is device memory of `workspace_bytes(n)` bytes, zero-filled by
//! the caller before its first use and then reused across calls: a chapter
//! that keeps state there (a counter) must leave it zero when the call ends.
//! Everything is asynchronous on `stream` unless the chapter's idea needs the
//! host (host finish). `n == 0` writes 0.
using FullReduceFn = void (*)(const float* in, std::size_t n, float* out, void* workspace,
                              cudaStream_t stream);
using WorkspaceBytesFn = std::size_t (*)(std::size_t n);

//! The grid of a tuned full reduction: `blocks` blocks of `threads` threads; 0 leaves that
//! number to the chapter (what its plain `reduce` launches).
struct Launch {
  unsigned blocks = 0;
  unsigned threads = 0;
};

//! What a tuned launcher must accept: every `blocks` in [1, kMaxTunedBlocks] and every
//! `threads` in [kMinTunedThreads, kMaxTunedThreads] that is a multiple of kTunedThreadsStep,
//! either one 0 for the chapter's own choice; for any n, in one workspace of
//! `workspace_bytes(n)` bytes (which therefore covers kMaxTunedBlocks blocks).
inline constexpr unsigned kMaxTunedBlocks = 4096;
inline constexpr unsigned kMinTunedThreads = 64;
inline constexpr unsigned kMaxTunedThreads = 1024;
inline constexpr unsigned kTunedThreadsStep = 64;

//! A full reduction whose grid the caller may choose: the same contract as FullReduceFn, with
//! `launch` in the ranges above. A chapter that promises the same result bits for every grid
//! (chapter 15) registers one, and the tests call it with several grids and compare the bits.
using TunedReduceFn = void (*)(const float* in, std::size_t n, float* out, void* workspace,
                               cudaStream_t stream, Launch launch);

//! The generic chapter: one reduction for every element type and operator (workbook/operators.cuh
//! holds the operators and their rules). The element types of its input:
enum class Element { f32, f64, f16, bf16, i32, i64 };
//! Its operators.
enum class Operator { sum, max, min, argmax, argmin, dot, mean_variance };

//! The bytes of one element.
constexpr std::size_t element_bytes(Element e) {
  return e == Element::f64 || e == Element::i64 ? 8 : e == Element::f16 || e == Element::bf16 ? 2 : 4;
}
constexpr bool is_floating(Element e) { return e != Element::i32 && e != Element::i64; }
//! Whether the generic chapter is asked `op` over `e`s: dot and mean_variance only of floating point.
constexpr bool is_asked(Element e, Operator op) {
  return is_floating(e) || (op != Operator::dot && op != Operator::mean_variance);
}
//! The bytes of the result a generic reduction writes (operators.cuh, checked there): the
//! accumulator (float for f32, f16 and bf16; double for f64; long long for i32 and i64) for sum,
//! max, min and dot; that and a long long index (Located) for argmax and argmin; three doubles
//! (Moments) for mean_variance.
constexpr std::size_t result_bytes(Element e, Operator op) {
  const std::size_t accumulator = e == Element::f32 || e == Element::f16 || e == Element::bf16 ? 4 : 8;
  if (op == Operator::argmax || op == Operator::argmin) return 16;
  if (op == Operator::mean_variance) return 24;
  return accumulator;
}

//! One generic reduction: `op` over `a[0, n)`, an array of `element`s (dot: the sum of
//! a[i] * b[i]; `b` is null for every other operator), its result written to `out` (device
//! memory) as result_bytes() says. The contract of a full reduction otherwise: `workspace` is
//! `workspace_bytes(n)` bytes, enough for every element type and operator at n; everything is
//! asynchronous on `stream`; `n == 0` writes the operator's identity (argmax and argmin: index
//! -1). `a` and `b` are aligned to their element only.
struct Problem {
  Element element = Element::f32;
  Operator op = Operator::sum;
  const void* a = nullptr;
  const void* b = nullptr;
  std::size_t n = 0;
  void* out = nullptr;
};
using GenericReduceFn = void (*)(const Problem& problem, void* workspace, cudaStream_t stream);

//! Several GPUs (chapter 17): one rank's part of one reduction over every rank's shard.
//!
//! The rank's GPU is the current device and holds its shard, `in[0, n)`. Write the sum of every
//! rank's shard to `*out` (this GPU's memory) on every rank, the same bits on each. `comm` is the
//! NCCL communicator of all the ranks (an `ncclComm_t`; ncclCommCount and ncclCommUserRank say how
//! many and which). The harness calls the function once per rank, each with that rank's device
//! current and its own stream, all inside one ncclGroupStart()/ncclGroupEnd() when one process
//! drives several GPUs: enqueue the collective, never wait for it inside the call. `workspace`:
//! workspace_bytes(n) bytes of this GPU's memory, as a full reduction's. `n` may differ between
//! ranks, and may be 0. With a communicator of one rank this is a full reduction, and the chapter's
//! plain reduction is exactly that (WORKBOOK_RANK_REDUCE).
using RankReduceFn = void (*)(const float* in, std::size_t n, float* out, void* workspace, cudaStream_t stream,
                              ncclComm* comm);

enum class ChapterKind { block_pass, full };

//! The room the harness gives a block pass's partials for `n` elements.
constexpr std::size_t partials_capacity(std::size_t n) {
  return (n + 31) / 32 > 65536 ? (n + 31) / 32 : 65536;
}

//! The most workspace a full reduction may ask for (workspace_bytes) for n elements: far more than
//! any strategy here needs, and a bound on what a call can take from the device.
constexpr std::size_t max_workspace_bytes(std::size_t n) { return (std::size_t(64) << 20) + 4 * n; }

//! The size every chapter is timed at: 2^27 floats, 512 MB, over 8x the H200's
//! 60 MB L2, so the timed calls read from memory, not from the cache.
inline constexpr std::size_t kTimedElements = std::size_t(1) << 27;

//! One registered chapter implementation (the learner's or the reference).
struct Entry {
  const char* chapter;  // "03_idle_threads"
  const char* subject;  // "learner" or "reference"
  ChapterKind kind;
  BlockPassFn block_pass;
  FullReduceFn reduce;
  WorkspaceBytesFn workspace_bytes;
  TunedReduceFn tuned = nullptr;  // a full reduction that takes its grid as a parameter, or null
  GenericReduceFn generic = nullptr;  // the generic chapter's reduction (reduce: its float sum), or null
  RankReduceFn rank = nullptr;  // one rank's part over several GPUs (reduce: one rank alone), or null
};

//! Adds an entry to the process-wide registry; returns true so it can
//! initialize a namespace-scope constant.
bool register_entry(const Entry& entry);

}  // namespace workbook
