// Chapter 14: the two passes of chapter 09, with each kernel launched early (PDL).
// Differs from chapter 09: both kernels are launched as programmatic dependents of the kernel
// ahead of them on the stream (cudaLaunchKernelEx with cudaLaunchAttributeProgrammaticStream-
// Serialization, given below), so a kernel's launch overlaps the run of the one before it.
// The block pass of chapter 07 is given (workbook/block_pass.cuh, with ordinary loads below);
// decide in each kernel where it waits for the kernel ahead (wait_for_previous_grid) and where it
// lets the next one launch (allow_next_grid_to_launch), and write the second pass's sum.
// Needs compute capability 9.0 (Hopper).
// Check it: `grader/grade --chapter 14_pdl`
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

#include "workbook/block_pass.cuh"  // given: chapter 07's block pass

namespace {

using namespace workbook::block_pass;

//! [grid_dependency]
// Blocks until every kernel this grid depends on (the one ahead of it on the stream, when this
// grid was launched with the attribute) has completed, and all its writes to global memory are
// visible here: those made after its trigger too. Returns at once if there is none.
// (PTX griddepcontrol.wait; the CUDA header's inline wrapper, no -rdc needed. [[maybe_unused]]
// only keeps the compiler quiet until your kernels call these two.)
[[maybe_unused]] __device__ __forceinline__ void wait_for_previous_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
#else
  __trap();  // no griddepcontrol before sm_90; the chapter is skipped there
#endif
}

// This block allows the kernel behind this one on the stream (launched with the attribute) to
// be scheduled; it launches once every block of this grid has called this or exited. It only
// schedules: it makes no write visible to anyone. (PTX griddepcontrol.launch_dependents.)
[[maybe_unused]] __device__ __forceinline__ void allow_next_grid_to_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaTriggerProgrammaticLaunchCompletion();
#else
  __trap();
#endif
}
//! [grid_dependency]

//! [kernels]
// First pass: block b writes dst[b] (dst is *out for a grid of one block, the partials
// otherwise). It may start while the kernel ahead of it still runs: the previous call's second
// pass, which reads the partials this pass overwrites, or whatever kernel wrote the input.
__global__ void __launch_bounds__(threads_per_block)
    reduce_first_pass(const float* in, std::size_t n, std::size_t head, const float4* body,
                      std::size_t body_vectors, std::size_t tail_begin, float* dst) {
  // TODO: wait_for_previous_grid() first, before this kernel touches global memory at all (the
  //       input, dst): the kernel ahead may still be writing or reading them. Every thread, with
  //       no early return before it.
  // TODO: then allow_next_grid_to_launch(): the grid is at most the blocks that fit on the GPU
  //       together, so they all get there early, and the second pass can launch and wait on a
  //       free slot while this pass streams the input. Not before the wait, or later calls'
  //       kernels could launch ahead of this one without bound.
  // The block pass of chapter 07 (given), with ordinary loads (Loads::plain) instead of __ldg:
  // the kernel ahead of this one may have written the input while this grid was already
  // resident, and the read-only path is promised fresh data only for memory no one writes during
  // the kernel's life. The lesson's "The hardware fact" says more. Thread 0 has the block's sum.
  const float block_sum =
      block_reduce_sum(thread_sum_of_input<Loads::plain>(in, n, head, body, body_vectors, tail_begin));
  // TODO: thread 0 writes block_sum to dst[blockIdx.x].
  (void)block_sum;  // TODO: remove once the store uses it
}

// Second pass, one block: adds partials[0, count) in a fixed order and writes *out.
__global__ void __launch_bounds__(threads_per_block)
    reduce_partials(const float* partials, std::size_t count, float* out) {
  // TODO: allow_next_grid_to_launch() first: the next call's first pass may launch and wait for
  //       this block (this kernel was itself launched only after every block of the first pass
  //       had passed its wait, so at most one call runs ahead).
  // TODO: wait_for_previous_grid(): only after it are the partials complete and visible. Read
  //       nothing from the partials before this line.
  // TODO: thread t adds partials[t], partials[t + threads_per_block], ... for j < count, in
  //       that order (std::size_t indices), reading with __ldcg: the partials were written while
  //       this grid was already resident, so the read-only path (__ldg) is not for them. Then
  //       block_reduce_sum; thread 0 writes *out.
}
//! [kernels]

// The first pass's grid, chapter 07's, from n alone (not the alignment of `in`), so
// workspace_bytes(n) knows it. It is at most the blocks that fit at once, so one block of the
// second pass covers its partials.
unsigned first_pass_blocks(std::size_t n) {
  return static_cast<unsigned>(grid_blocks(n, resident_blocks<reduce_first_pass>()));
}

std::size_t workspace_bytes(std::size_t n) {
  const unsigned blocks = first_pass_blocks(n);
  return blocks > 1 ? std::size_t{blocks} * sizeof(float) : 0;  // one block writes *out itself
}

//! [launch_dependent]
// Launches `kernel` on `stream` as a programmatic dependent of the kernel ahead of it: it may
// begin once every block of that kernel has triggered (or exited), not only when it completes.
template <typename... Params, typename... Args>
void launch_dependent(void (*kernel)(Params...), unsigned blocks, cudaStream_t stream,
                      Args... args) {
  cudaLaunchAttribute attribute[1] = {};
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(threads_per_block);
  config.dynamicSmemBytes = 0;
  config.stream = stream;
  config.attrs = attribute;
  config.numAttrs = 1;
  cudaLaunchKernelEx(&config, kernel, args...);  // an error stays in cudaGetLastError()
}
//! [launch_dependent]

void reduce(const float* in, std::size_t n, float* out, void* workspace, cudaStream_t stream) {
  // n == 0 needs no special case: one block finds nothing to load and writes 0 to *out.
  const Split s = split_at_16_bytes(in, n);
  const unsigned blocks = first_pass_blocks(n);
  if (blocks == 1) {  // one block's sum is the total: no second pass
    launch_dependent(reduce_first_pass, 1, stream, in, n, s.head, s.body, s.body_vectors,
                     s.tail_begin, out);
    return;
  }
  float* const partials = static_cast<float*>(workspace);
  launch_dependent(reduce_first_pass, blocks, stream, in, n, s.head, s.body, s.body_vectors,
                   s.tail_begin, partials);
  launch_dependent(reduce_partials, 1, stream, static_cast<const float*>(partials),
                   std::size_t{blocks}, out);
}

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
