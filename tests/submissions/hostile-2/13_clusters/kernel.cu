// hostile: reads a file into its object at build time with the assembler's .incbin, to print it later
// expect: rejected ~ directive \.incbin
// The preprocessor never sees this file (the assembler reads it), so the compiler's dependency
// list does not name it; the assembler's listing of the host code does. Spelled through macros,
// so that no single string in the source says ".incbin".
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

#define WB_STR2(x) #x
#define WB_STR(x) WB_STR2(x)
#define WB_DIRECTIVE .inc##bin

asm(".pushsection .rodata\nwb_secret:\n" WB_STR(WB_DIRECTIVE) " \"/etc/hostname\"\n.byte 0\n.popsection");

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
