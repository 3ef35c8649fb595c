// The grader's manifest (grader/manifest.json): chapters, points, thresholds, hints, hint steps.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace workbook {

//! What a chapter's process may hold while it is tested (a chapter's manifest entry may say more,
//! under `limits`): host memory, pinned memory included (a cgroup), and GPU memory beside the
//! judge's buffers it maps (NVML's count per process). Far more than any chapter's idea needs (a
//! CUDA context and a workspace), far less than the machine: one chapter cannot take the memory
//! of the chapters tested beside it. A process over either is ended, and its chapter fails.
inline constexpr std::uint64_t kRunnerHostMemoryBytes = std::uint64_t(8) << 30;
inline constexpr std::uint64_t kRunnerGpuMemoryBytes = std::uint64_t(4) << 30;
//! The processes and threads of one sandbox (its cgroup's pids.max): the CUDA runtime, NCCL and
//! compute-sanitizer start dozens; a fork bomb stops here.
inline constexpr std::uint64_t kRunnerProcesses = 2048;

struct ChapterSpec {
  std::string slug;     // "03_idle_threads"
  std::string version;  // "V3"
  std::string title;
  std::string kind;  // "block_pass" or "full"
  int correctness_points = 0;
  int performance_points = 0;
  //! The learner's GB/s must reach this fraction of the reference's, each timed in a process of
  //! its own against the streaming-read ceiling measured beside it.
  double bandwidth_fraction = 0;
  int timeout_s = 0;  // for the chapter's whole test process
  //! Same input, same bits, every run (false where atomics order the adds).
  bool deterministic = true;
  //! A full chapter whose launcher takes its grid as a parameter (WORKBOOK_TUNED_REDUCE): it also
  //! gets the tests that change the grid (Reproducible, Accuracy).
  bool tuned = false;
  //! The generic chapter (WORKBOOK_GENERIC_REDUCE): every element type and operator
  //! (contract.hpp, Problem); it also gets the tests of each (Operators).
  bool generic = false;
  //! The chapter over several GPUs (WORKBOOK_RANK_REDUCE): one rank's part of a reduction whose
  //! shards are on several GPUs, combined with NCCL (contract.hpp, RankReduceFn); it also gets
  //! the tests of several ranks (SeveralGpus). Its `requires` name gpus_N and nccl.
  bool ranks = false;
  //! What the chapter needs of the machine: "cooperative_launch"; "sm_90" (a compute capability
  //! of at least 9.0); "gpus_2" (two GPUs or more, for the chapter over several GPUs); "nccl" (a
  //! build with NCCL). A machine without one skips the chapter: its tests skip, and the grader
  //! reports "skipped: needs sm_90" (or "needs 2 GPUs", "needs NCCL"), never failed.
  std::vector<std::string> requires_features;
  //! Harness headers the chapter's kernel.cu may include as given code ("workbook/block_pass.cuh":
  //! chapter 07's block pass, given from chapter 08 on). The grader refuses them to every chapter
  //! that does not list them (grader/static_checks_*.cpp).
  std::vector<std::string> given;
  std::map<std::string, std::string> hints;  // test suite -> hint
  //! Hints shown one at a time to a student who asks, from a nudge to nearly the answer (two or
  //! three); each names the `## ` section of the chapter's lesson.md that explains it.
  struct HintStep {
    std::string hint, lesson;
  };
  std::vector<HintStep> steps;
  //! What the chapter's sandboxed process may hold (the manifest's `limits`, else contract.hpp's
  //! defaults): host memory, pinned included (its cgroup), and GPU memory beside the judge's
  //! buffers it maps (NVML). A process over either is ended and its chapter failed, with the figure.
  std::uint64_t host_memory_bytes = kRunnerHostMemoryBytes;
  std::uint64_t gpu_memory_bytes = kRunnerGpuMemoryBytes;
};

struct Manifest {
  std::vector<ChapterSpec> chapters;
  const ChapterSpec* find(const std::string& slug) const;
};

//! What a machine offers the chapters' `requires`.
struct Capabilities {
  int compute_capability = 0;  // 90 for sm_90
  bool cooperative_launch = true;
  int gpus = 1;       // the GPUs the chapter's test process may use
  bool nccl = false;  // this build has NCCL (WORKBOOK_HAVE_NCCL)
};

//! The GPUs a chapter needs: N for "gpus_N" in its `requires`, else 1.
int gpus_needed(const ChapterSpec& spec);

//! A requirement the machine does not meet: which kind, and how a reader says it.
struct Unmet {
  enum class Need { none, cooperative_launch, compute_capability, gpus, nccl };
  Need need = Need::none;
  std::string word;  // "cooperative_launch", "sm_90", "2 GPUs", "NCCL"; "" when met
  bool met() const { return need == Need::none; }
};

//! The first of the chapter's `requires` the machine lacks (met() when it has them all).
Unmet unmet_requirement(const ChapterSpec& spec, const Capabilities& have);

//! Reads and validates the manifest; throws std::runtime_error naming the
//! file and the field on any problem.
Manifest load_manifest(const std::string& path);

//! The same from a manifest already parsed (`where`: the file, for messages), for a reader that
//! also needs sections of its own (the grader's static checks: "trust", "symbols", "idea").
Manifest manifest_from_json(const nlohmann::json& doc, const std::string& where);

//! Why `file` cannot be a chapter's given code ("" if it can): it must be a header of the harness,
//! workbook/<name>, relative, without "..", and not workbook/chapter.cuh or workbook/contract.hpp,
//! which every chapter may include. load_manifest checks every "given" entry with it; the grader's
//! static checks take the lists from the Manifest, never from the file again.
std::string given_problem(const std::string& file);

}  // namespace workbook
