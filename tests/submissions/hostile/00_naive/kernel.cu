// hostile: includes the reference solution by a relative path instead of writing the kernel
// expect: rejected ~ includes .*solutions/00_naive/kernel\.cu
// Chapter 00 (V0): the naive tree reduction.
#include "../../../../solutions/00_naive/kernel.cu"
