// Chapter 14: the two passes of chapter 09, with each kernel launched early (PDL).
// Differs from chapter 09: both kernels are launched with cudaLaunchKernelEx and the attribute
// cudaLaunchAttributeProgrammaticStreamSerialization, which lets a kernel be scheduled before the
// kernel ahead of it on the stream has finished: once every block of that kernel has called
// cudaTriggerProgrammaticLaunchCompletion (or exited), and as SMs have room. So the second pass's
// launch overlaps the first pass, and the next call's first pass overlaps this call's second.
// The data dependency stays: every thread of every block calls cudaGridDependencySynchronize
// before its first access to global memory, and that call returns only when the kernel ahead has
// completed and all its writes are visible, those made after its trigger included. The trigger
// only schedules; it publishes nothing. Needs compute capability 9.0 (griddepcontrol); the
// chapter is skipped below. The result is deterministic, as in chapter 09: fixed grid and order.
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

#include "workbook/block_pass.cuh"

namespace {

using namespace workbook::block_pass;

// A single block's share of partials[0, count), written by other blocks of this grid: thread t
// adds partials[t], partials[t + threads_per_block], ... in that order, so the total depends only
// on the partials, never on which block runs this. __ldcg reads through L2, where the other
// blocks' partials are, and never from this SM's L1, which is not coherent with other SMs'
// writes.
static __device__ __forceinline__ float thread_sum_of_partials(const float* partials,
                                                               std::size_t count) {
  float v = 0.0f;
  for (std::size_t j = threadIdx.x; j < count;
       j += std::size_t{loads_in_flight} * threads_per_block) {
    float r[loads_in_flight];
#pragma unroll
    for (unsigned k = 0; k < loads_in_flight; ++k) {
      const std::size_t p = j + std::size_t{k} * threads_per_block;
      r[k] = (p < count) ? __ldcg(&partials[p]) : 0.0f;
    }
#pragma unroll
    for (unsigned k = 0; k < loads_in_flight; ++k) {
      v += r[k];
    }
  }
  return v;
}

// PTX griddepcontrol.wait: blocks until every grid this one depends on has completed and its
// memory operations are performed and visible to this grid. In a grid launched without the
// attribute, or with no kernel ahead of it, it returns at once. cudaGridDependencySynchronize is
// an inline wrapper in the CUDA headers, not a device-runtime call: no -rdc, no cudadevrt.
__device__ __forceinline__ void wait_for_previous_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
#else
  __trap();  // no griddepcontrol before sm_90; the manifest skips the chapter there
#endif
}

// PTX griddepcontrol.launch_dependents: this block allows the kernel behind this one on the
// stream (if it was launched with the attribute) to be scheduled; that kernel launches once
// every block of this grid has done so or exited. It publishes nothing.
__device__ __forceinline__ void allow_next_grid_to_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaTriggerProgrammaticLaunchCompletion();
#else
  __trap();
#endif
}

// First pass, the block pass of chapter 07: block b writes dst[b] (dst is *out for a grid of
// one block, the partials otherwise).
__global__ void __launch_bounds__(threads_per_block)
    reduce_first_pass(const float* in, std::size_t n, std::size_t head, const float4* body,
                      std::size_t body_vectors, std::size_t tail_begin, float* dst) {
  // Launched early, this kernel may be resident while the kernel ahead of it on the stream still
  // runs: the previous call's second pass, which reads the partials this pass overwrites, or the
  // caller's kernel that wrote the input. So nothing touches global memory before the wait. Every
  // thread waits, with no early exit: then this grid cannot complete before the kernel ahead,
  // and an ordinary launch or copy queued after this call still finds everything before it done.
  wait_for_previous_grid();
  // Trigger at once: the grid is at most the blocks that fit on the GPU together, so its blocks
  // all get here early, and the second pass's one block can take a free slot (or the first one a
  // finishing block frees) and wait there while this pass streams the input. After the wait,
  // not before it: so this call's second pass launches only once the previous call has
  // completed, and calls never pile up ahead of the one running.
  allow_next_grid_to_launch();

  // The block pass with ordinary loads (ld.global) instead of __ldg (ld.global.nc): the input
  // may have been written by the kernel ahead of this one while this grid was already resident.
  // The read-only path promises fresh data only for memory no one writes during the kernel's
  // life; the wait's promise is made in the terms of the PTX memory model, which covers ordinary
  // loads. They stream the input through the same LDG.E.128, only without .CONSTANT.
  const float v =
      block_reduce_sum(thread_sum_of_input<Loads::plain>(in, n, head, body, body_vectors, tail_begin));
  if (threadIdx.x == 0) {
    dst[blockIdx.x] = v;  // written after the trigger, and still visible to the second pass
                          // after its wait: the wait waits for this whole grid to complete
  }
}

// Second pass, one block: the sum of partials[0, count) in a fixed order, to *out.
__global__ void __launch_bounds__(threads_per_block)
    reduce_partials(const float* partials, std::size_t count, float* out) {
  // Trigger before the wait: the next call's first pass may launch now, and its blocks wait for
  // this one to complete. (This kernel launched only after every block of the first pass had
  // passed its own wait, so at most one call's first pass waits ahead.)
  allow_next_grid_to_launch();
  // Above this line is the prologue that overlaps the first pass. The partials are read only
  // below it, once the first pass has completed and all its partials are visible.
  wait_for_previous_grid();

  // The partials were written while this grid was already resident: read them through L2
  // (__ldcg), as chapter 11's last block does, not through the read-only path, whose promise
  // is data that no one writes during the kernel's life.
  const float total = block_reduce_sum(thread_sum_of_partials(partials, count));
  if (threadIdx.x == 0) {
    *out = total;
  }
}

// Launches `kernel` on `stream` as a programmatic dependent of the kernel ahead of it.
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

// The first pass's grid, as in chapter 07: at most the blocks resident at once, so one block
// of the second pass covers its partials (about a thousand on the H200). It depends on n alone
// (not on the alignment of `in`), so workspace_bytes(n) knows it.
unsigned first_pass_blocks(std::size_t n) {
  return static_cast<unsigned>(grid_blocks(n, resident_blocks<reduce_first_pass>()));
}

std::size_t workspace_bytes(std::size_t n) {
  const unsigned blocks = first_pass_blocks(n);
  return blocks > 1 ? std::size_t{blocks} * sizeof(float) : 0;  // one block writes *out itself
}

void reduce(const float* in, std::size_t n, float* out, void* workspace, cudaStream_t stream) {
  // n == 0 needs no special case: one block finds nothing to load and writes 0 to *out.
  const Split s = split_at_16_bytes(in, n);  // as in chapter 07
  const unsigned blocks = first_pass_blocks(n);
  if (blocks == 1) {
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
