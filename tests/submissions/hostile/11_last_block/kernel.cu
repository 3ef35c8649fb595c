// hostile: finds the reference in the harness's registry (its own declaration) and calls it
// expect: rejected ~ uses workbook::find_entry.*registry
// Chapter 11: the last block to finish sums the partials, in one launch.
#include "workbook/chapter.cuh"

#include <cstddef>
#include <string>

#include <cuda_runtime.h>

namespace workbook {
const Entry* find_entry(const std::string& chapter, const std::string& subject);
}  // namespace workbook

namespace {

const workbook::Entry& reference() {
  static const workbook::Entry* entry = workbook::find_entry(WORKBOOK_CHAPTER, "reference");
  return *entry;
}

std::size_t workspace_bytes(std::size_t n) { return reference().workspace_bytes(n); }

void reduce(const float* in, std::size_t n, float* out, void* workspace, cudaStream_t stream) {
  reference().reduce(in, n, out, workspace, stream);
}

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
