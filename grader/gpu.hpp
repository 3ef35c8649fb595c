// The GPUs the grader tests on: found as its CUDA runtime sees them, each pinned for its test
// processes, and the architectures a grading build is compiled for.
#pragma once

#include <string>
#include <vector>

#include "result.hpp"

namespace grader {

struct Gpu {
  int index = -1;       // as the grader's CUDA runtime numbers the visible GPUs
  std::string visible;  // CUDA_VISIBLE_DEVICES for its test processes
  DeviceSummary summary;
  //! The compute capability that decides which chapters it skips for their `requires`: its
  //! own, or lower with WORKBOOK_COMPUTE_CAPABILITY=80 (the maintainers' check of that path on
  //! a newer GPU). The build is always for its real architecture.
  int requirement_cc = 0;
  //! The other GPUs the grader tests on (CUDA_VISIBLE_DEVICES entries): a chapter over several
  //! GPUs puts its other ranks there.
  std::vector<std::string> peers;
};

//! The GPUs to test on, as the grader's runtime sees them (`wanted`: indices,
//! empty for all), each pinned for its test processes; empty, with `why`, when
//! there is none.
std::vector<Gpu> find_gpus(const std::vector<int>& wanted, std::string* why);

//! The CUDA architectures to build for (CMake's list): the GPUs' own, else
//! the grader's build's.
std::string architectures(const std::vector<Gpu>& gpus);

}  // namespace grader
