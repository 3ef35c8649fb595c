// What every chapter test process knows: which chapter (compiled in), which
// implementation it tests (--subject), the seed of this run, the manifest.
#pragma once

#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "workbook/contract.hpp"
#include "workbook/manifest.hpp"
#include "workbook/names.hpp"

namespace workbook::test {

//! The implementation under test: the learner's unless --subject=reference.
const Entry& subject();
const ChapterSpec& spec();
std::uint64_t seed();
//! A stream of the test process's own (not the legacy default stream).
cudaStream_t stream();
//! Test names carry this prefix on the subject's result lines, e.g. "[learner]".
const std::string& subject_name();

using names::kResultFdVariable;

//! Exit code when the process cannot go on because the CUDA context is lost.
constexpr int kContextLostExit = 3;
//! Exit code when there is no CUDA device (CTest's SKIP_RETURN_CODE).
constexpr int kNoDeviceExit = 77;

}  // namespace workbook::test
