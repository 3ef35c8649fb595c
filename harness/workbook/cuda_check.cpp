#include "workbook/cuda_check.hpp"

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
    case cudaErrorECCUncorrectable:
      return true;
    default:
      return false;
  }
}

std::string error_text(cudaError_t code) {
  return fmt::format("{} ({})", cudaGetErrorString(code), cudaGetErrorName(code));
}

void throw_cuda_error(cudaError_t code, const char* expr, const char* file, int line) {
  throw CudaError(code, fmt::format("{}:{}: {} failed: {}", file, line, expr, error_text(code)));
}

}  // namespace workbook
