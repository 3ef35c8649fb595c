// CUDA error checks that say where the failing call is.
#pragma once

#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

namespace workbook {

//! A failed CUDA runtime call, with the expression, file and line in what().
class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

//! Errors after which the CUDA context is unusable: every later call in the
//! process fails too (illegal address, trap, launch failure, ...).
bool is_sticky(cudaError_t code);

//! "an illegal memory access was encountered (cudaErrorIllegalAddress)": the text and the name.
std::string error_text(cudaError_t code);

[[noreturn]] void throw_cuda_error(cudaError_t code, const char* expr, const char* file, int line);
//! How many checked calls of this process failed with cudaErrorMemoryAllocation so far: a judge
//! whose own buffers could not be had was starved by another process on the GPU, which is no fault
//! of the chapter it tests (the grader tests it again, alone).
int out_of_memory_count();
//! Throws what a call that could not have its device memory throws, counted as above: for calls
//! made outside the checks (the driver's cuMemCreate).
[[noreturn]] void throw_out_of_memory(const std::string& what);

inline void check_cuda(cudaError_t code, const char* expr, const char* file, int line) {
  if (code != cudaSuccess) throw_cuda_error(code, expr, file, line);
}

//! Makes `device` current for its scope (or, made with none, only keeps the current one) and puts
//! back the device that was current before.
class DeviceScope {
 public:
  DeviceScope() { cudaGetDevice(&before_); }
  explicit DeviceScope(int device) {
    cudaGetDevice(&before_);
    if (device != before_) cudaSetDevice(device);
  }
  ~DeviceScope() {
    int now = before_;
    cudaGetDevice(&now);
    if (now != before_) cudaSetDevice(before_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int before_ = 0;
};

}  // namespace workbook

//! Throws workbook::CudaError naming the call, the file and the line.
#define WORKBOOK_CUDA_CHECK(expr) ::workbook::check_cuda((expr), #expr, __FILE__, __LINE__)
