// hostile: puts data in a section of its own with a section attribute (no assembly at all)
// expect: rejected ~ section wb_payload
// Compiled C++ and CUDA code has a known set of sections; one of its own naming came from an
// attribute or a directive, and the object is refused with its name.
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

namespace {

__attribute__((section("wb_payload"), used)) const char payload[] = "anything at all";

__global__ void reduce_one(const float* in, std::size_t n, float* out) {
  float s = 0;
  for (std::size_t i = 0; i < n; ++i) s += in[i];
  *out = s;
}

void reduce(const float* in, std::size_t n, float* out, void* workspace, cudaStream_t stream,
            workbook::Launch launch) {
  (void)workspace;
  (void)launch;
  reduce_one<<<1, 1, 0, stream>>>(in, n, out);
}

std::size_t workspace_bytes(std::size_t) { return 0; }

}  // namespace

WORKBOOK_TUNED_REDUCE(reduce, workspace_bytes);
