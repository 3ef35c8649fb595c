// Chapter 05 (V5): unrolling the whole tree with a template block size.
// Differs from V4: the block size is a template parameter, so every level is decided at compile
// time and the loop disappears.
// Write reduce_full_unroll<BlockSize> with one `if (BlockSize >= ...)` step per level, then make
// the launcher dispatch a runtime block size to the matching instantiation.
// Check it: `grader/grade --chapter 05_full_unroll`
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

namespace {

// The block size this launcher uses; it must be one the dispatch instantiates.
constexpr unsigned threads_per_block = 256;

//! [warp_todo]
// TODO: bring warp_reduce_last over from chapter 04 (register sum, __syncwarp() between each
//       read and write; not the racy volatile form without __syncwarp()).
//! [warp_todo]

//! [unroll_todo]
template <unsigned BlockSize>
__global__ void __launch_bounds__(BlockSize)
    reduce_full_unroll(const float* in, std::size_t n, float* partials) {
  // TODO: `__shared__ float smem[BlockSize];` (the size is a constant now). Load as in V3, with
  //       BlockSize in place of blockDim.x, then __syncthreads().
  // TODO: one step per level, e.g.
  //         if (BlockSize >= 512) { if (tid < 256) smem[tid] += smem[tid + 256]; __syncthreads(); }
  //       for 1024, 512, 256 and 128. The outer `if` is a compile-time constant, so its
  //       __syncthreads() is reached by the whole block or by none of it.
  // TODO: if (tid < 32), warp_reduce_last; thread 0 writes partials[blockIdx.x].
}
//! [unroll_todo]

// Launches the instantiation for BlockSize: each block covers 2 * BlockSize elements.
template <unsigned BlockSize>
std::size_t launch_unrolled(const float* in, std::size_t n, float* partials,
                            cudaStream_t stream) {
  constexpr std::size_t elements_per_block = 2 * BlockSize;
  const std::size_t blocks = (n + elements_per_block - 1) / elements_per_block;
  reduce_full_unroll<BlockSize><<<static_cast<unsigned>(blocks), BlockSize, 0, stream>>>(
      in, n, partials);
  return blocks;
}

//! [dispatch_todo]
std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity,
                   cudaStream_t stream) {
  (void)capacity;  // ceil(n / 128) blocks or fewer never exceed it
  if (n == 0) {
    return 0;
  }
  // TODO: the line below already works, because threads_per_block is a compile-time constant.
  //       Replace it with a dispatch for a block size known only at run time: a function that
  //       takes the block size as an `unsigned` and switches over 1024, 512, 256, 128 and 64,
  //       each case returning launch_unrolled<N>(...); call it with threads_per_block. Its
  //       `default:` (a size with no instantiation) can only launch nothing and return 0, which
  //       would break the contract for n > 0, so also static_assert that threads_per_block is
  //       one of the five: then launch() can never reach the default.
  return launch_unrolled<threads_per_block>(in, n, partials, stream);
}
//! [dispatch_todo]

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
