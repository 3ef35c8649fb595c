// How much GPU memory a process tree holds, from NVML's count per process (the driver's own
// bookkeeping, which the process cannot change): a chapter's runner is held to a budget, so that
// one chapter cannot take the GPU's memory from the chapters tested beside it.
//
// NVML (libnvidia-ml.so.1, part of the driver) is loaded when first needed; without it, or on a
// machine where it cannot see the processes, nothing is measured and `why` says so.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace workbook::gpu_memory {

//! `root` and every process descended from it (this machine's process ids, from /proc).
std::vector<pid_t> process_tree(pid_t root);

//! The GPU memory that the processes `pids` hold on every GPU, in bytes; nullopt with `*why` where
//! NVML cannot tell.
std::optional<std::uint64_t> held_by(const std::vector<pid_t>& pids, std::string* why);

}  // namespace workbook::gpu_memory
