// The contract between a chapter's kernel.cu and the harness.
//
// A chapter file keeps its kernels and launcher in an anonymous namespace and
// ends with one registration line. The build compiles every chapter twice, once
// from the learner's tree and once from solutions/, with WORKBOOK_SUBJECT
// ("learner" or "reference") and WORKBOOK_CHAPTER ("03_idle_threads") defined.
// Each version is linked into a runner of its own, a process that holds that one
// chapter's code and nothing that decides a grade; the judge, another process,
// sends it the inputs and checks and times what it returns (the learner's runner
// inside the grader's sandbox). The launcher types are in contract.hpp.
#pragma once

#include "workbook/contract.hpp"


#if !defined(WORKBOOK_SUBJECT) || !defined(WORKBOOK_CHAPTER)
#error "chapter files are compiled by the workbook's CMake, which defines WORKBOOK_SUBJECT and WORKBOOK_CHAPTER"
#endif

//! The last line of a block-pass chapter: `WORKBOOK_BLOCK_PASS(launch);`
#define WORKBOOK_BLOCK_PASS(launcher)                                               \
  namespace {                                                                      \
  const bool workbook_registered = ::workbook::register_entry(::workbook::Entry{   \
      WORKBOOK_CHAPTER, WORKBOOK_SUBJECT, ::workbook::ChapterKind::block_pass,     \
      &(launcher), nullptr, nullptr, nullptr});                                    \
  }                                                                                \
  static_assert(true, "")

//! The last line of a full chapter: `WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);`
#define WORKBOOK_FULL_REDUCE(reduce_fn, workspace_fn)                               \
  namespace {                                                                      \
  const bool workbook_registered = ::workbook::register_entry(::workbook::Entry{   \
      WORKBOOK_CHAPTER, WORKBOOK_SUBJECT, ::workbook::ChapterKind::full, nullptr,  \
      &(reduce_fn), &(workspace_fn), nullptr});                                    \
  }                                                                                \
  static_assert(true, "")

//! The last line of a full chapter whose launcher takes its grid as a parameter (contract.hpp,
//! Launch): `WORKBOOK_TUNED_REDUCE(reduce_tuned, workspace_bytes);`. The plain reduction is
//! `reduce_tuned(..., Launch{})`, the chapter's own grid; the chapter's tests also call it with
//! grids of their own choosing.
#define WORKBOOK_TUNED_REDUCE(tuned_fn, workspace_fn)                               \
  namespace {                                                                      \
  void workbook_default_reduce(const float* in, std::size_t n, float* out,          \
                               void* workspace, cudaStream_t stream) {              \
    (tuned_fn)(in, n, out, workspace, stream, ::workbook::Launch{});                \
  }                                                                                \
  const bool workbook_registered = ::workbook::register_entry(::workbook::Entry{   \
      WORKBOOK_CHAPTER, WORKBOOK_SUBJECT, ::workbook::ChapterKind::full, nullptr,  \
      &workbook_default_reduce, &(workspace_fn), &(tuned_fn)});                    \
  }                                                                                \
  static_assert(true, "")

//! The last line of the generic chapter: `WORKBOOK_GENERIC_REDUCE(reduce_any, workspace_bytes);`
//! (contract.hpp, Problem). Its float sum is also the chapter's plain full reduction, which the
//! tests every full chapter has run on.
#define WORKBOOK_GENERIC_REDUCE(generic_fn, workspace_fn)                                   \
  namespace {                                                                              \
  void workbook_float_sum(const float* in, std::size_t n, float* out, void* workspace,      \
                          cudaStream_t stream) {                                            \
    (generic_fn)(::workbook::Problem{::workbook::Element::f32, ::workbook::Operator::sum, in, \
                                     nullptr, n, out},                                      \
                 workspace, stream);                                                        \
  }                                                                                        \
  const bool workbook_registered = ::workbook::register_entry(::workbook::Entry{           \
      WORKBOOK_CHAPTER, WORKBOOK_SUBJECT, ::workbook::ChapterKind::full, nullptr,          \
      &workbook_float_sum, &(workspace_fn), nullptr, &(generic_fn)});                      \
  }                                                                                        \
  static_assert(true, "")

namespace workbook::ranks {
//! The communicator of one rank alone on the current device, made on first use and kept
//! (runner/ranks.cpp, linked into the programs of the chapter over several GPUs only).
ncclComm* one_rank_communicator();
}  // namespace workbook::ranks

//! The last line of the chapter over several GPUs: `WORKBOOK_RANK_REDUCE(reduce_rank, workspace_bytes);`
//! (contract.hpp, RankReduceFn). Its plain full reduction is one rank alone, on which every full
//! chapter's tests run with a single GPU.
#define WORKBOOK_RANK_REDUCE(rank_fn, workspace_fn)                                                   \
  namespace {                                                                                        \
  void workbook_one_rank(const float* in, std::size_t n, float* out, void* workspace,                 \
                         cudaStream_t stream) {                                                      \
    (rank_fn)(in, n, out, workspace, stream, ::workbook::ranks::one_rank_communicator());             \
  }                                                                                                  \
  const bool workbook_registered = ::workbook::register_entry(::workbook::Entry{                     \
      WORKBOOK_CHAPTER, WORKBOOK_SUBJECT, ::workbook::ChapterKind::full, nullptr, &workbook_one_rank, \
      &(workspace_fn), nullptr, nullptr, &(rank_fn)});                                               \
  }                                                                                                  \
  static_assert(true, "")
