// hostile: ends the compiler's inline-assembly markers itself (#NO_APP) and switches sections outside them
// expect: rejected ~ directive \.pushsection
// A listing that only looked between #APP and #NO_APP would miss what follows a #NO_APP the
// source wrote itself; the directives that switch sections and build code are refused anywhere.
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

asm("#NO_APP\n.pushsection .init_array\n.quad 0\n.popsection\n#APP");

namespace {

__global__ void reduce_one(const float* in, std::size_t n, float* out) {
  float s = 0;
  for (std::size_t i = 0; i < n; ++i) s += in[i];
  *out = s;
}

void reduce(const float* in, std::size_t n, float* out, void* workspace, cudaStream_t stream) {
  (void)workspace;
  reduce_one<<<1, 1, 0, stream>>>(in, n, out);
}

std::size_t workspace_bytes(std::size_t) { return 0; }

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
