#include "runner/cuda_check.hpp"

#include <atomic>

#include <fmt/format.h>

namespace workbook {

bool is_sticky(cudaError_t code) {
  switch (code) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorLaunchTimeout:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable: return true;
    default: return false;
  }
}

std::string error_text(cudaError_t code) {
  return fmt::format("{} ({})", cudaGetErrorString(code), cudaGetErrorName(code));
}

namespace {
std::atomic<int> g_out_of_memory{0};
}

int out_of_memory_count() { return g_out_of_memory.load(); }

void throw_out_of_memory(const std::string& what) {
  ++g_out_of_memory;
  throw CudaError(cudaErrorMemoryAllocation, what);
}

void throw_cuda_error(cudaError_t code, const char* expr, const char* file, int line) {
  if (code == cudaErrorMemoryAllocation) ++g_out_of_memory;
  throw CudaError(code, fmt::format("{}:{}: {} failed: {}", file, line, expr, error_text(code)));
}

}  // namespace workbook
