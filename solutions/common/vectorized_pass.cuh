// The block pass of chapter 07 (V7), shared by the references of chapters 07 on.
//
// The block pass itself lives in the harness, tests/harness/workbook/block_pass.cuh, because
// chapters 08 on get it as given code (their entries in grader/manifest.json list it under
// "given"): one copy for the references and the learners' files alike. This file forwards to
// it, so a reference writes `using namespace vectorized_pass;`, and adds what only the
// references share: thread_sum_of_partials, the fixed-order sum of the partials that is part of
// chapter 11's answer (and 12's), not of chapter 07's.
#pragma once

#include <cstddef>

#include <cuda_runtime.h>

#include "workbook/block_pass.cuh"

namespace vectorized_pass {

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

}  // namespace vectorized_pass
