// WORKBOOK_HOST_DEVICE: a function for the host and the device under nvcc, for the host alone
// under a host compiler. Used by the seeded inputs (inputs.hpp) and the generic chapter's
// operators (operators.cuh), which the judge's host references share with the kernels.
#pragma once

#if defined(__CUDACC__)
#define WORKBOOK_HOST_DEVICE __host__ __device__
#else
#define WORKBOOK_HOST_DEVICE
#endif
