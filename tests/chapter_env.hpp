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

using names::kContextLostExit;
using names::kNoDeviceExit;
using names::kResultFdVariable;

}  // namespace workbook::test
