// hostile: includes another chapter's kernel.cu (a faster chapter 07) for this chapter
// expect: rejected ~ includes 07_vectorized/kernel\.cu
// Chapter 02 (V2): sequential addressing, free of bank conflicts.
#include "../07_vectorized/kernel.cu"
