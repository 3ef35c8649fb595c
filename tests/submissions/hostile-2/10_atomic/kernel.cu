// hostile: looks the reference up with dlsym, without naming the registry in its code
// expect: rejected ~ uses dlsym\(\): file and environment access
// Chapter 10: blocks add their sums straight into *out with atomicAdd.
#include "workbook/chapter.cuh"

#include <cstddef>
#include <string>

#include <cuda_runtime.h>
#include <dlfcn.h>

namespace {

using FindEntry = const workbook::Entry* (*)(const std::string&, const std::string&);

const workbook::Entry& reference() {
  static const workbook::Entry* entry = [] {
    const auto find = reinterpret_cast<FindEntry>(
        dlsym(RTLD_DEFAULT, "_ZN8workbook10find_entryERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEES8_"));
    return find(WORKBOOK_CHAPTER, "reference");
  }();
  return *entry;
}

std::size_t workspace_bytes(std::size_t n) { return reference().workspace_bytes(n); }

void reduce(const float* in, std::size_t n, float* out, void* workspace, cudaStream_t stream) {
  reference().reduce(in, n, out, workspace, stream);
}

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
