// What a CUDA context costs to make, alone and beside processes that make and drop contexts and
// large allocations (as a class's test processes do), for context_cost.sh.
//   context_cost probe               prints "context_ms alloc_ms free_ms" for one context
//   context_cost contexts <seconds>  makes and drops contexts (2 MiB each) until the time is up
//   context_cost memory <seconds>    in one context, allocates, fills and frees 512 MiB over and over
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <cuda_runtime.h>

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

bool ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  return false;
}

__global__ void touch(float* p, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    p[i] = 1.0f;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "probe";
  int count = 0;
  if (!ok(cudaGetDeviceCount(&count), "cudaGetDeviceCount")) return 77;  // the driver loaded: not timed
  if (mode == "contexts" || mode == "memory") {
    const double seconds = argc > 2 ? std::atof(argv[2]) : 10;
    const bool contexts = mode == "contexts";
    // 512 MiB of floats, as a Bandwidth test's input; 2 MiB where only the contexts matter.
    const std::size_t n = contexts ? std::size_t(1) << 19 : std::size_t(1) << 27;
    const Clock::time_point start = Clock::now();
    while (ms_since(start) < seconds * 1000) {
      float* p = nullptr;
      if (!ok(cudaMalloc(&p, n * sizeof(float)), "cudaMalloc")) return 1;
      touch<<<1024, 256>>>(p, n);
      if (!ok(cudaDeviceSynchronize(), "touch")) return 1;
      cudaFree(p);
      if (contexts) cudaDeviceReset();  // the next round makes a new context
    }
    return 0;
  }
  Clock::time_point t = Clock::now();
  if (!ok(cudaFree(nullptr), "context")) return 1;
  const double context = ms_since(t);
  float* p = nullptr;
  t = Clock::now();
  if (!ok(cudaMalloc(&p, std::size_t(64) << 20), "cudaMalloc")) return 1;
  const double alloc = ms_since(t);
  t = Clock::now();
  cudaFree(p);
  const double freed = ms_since(t);
  std::printf("%.1f %.1f %.1f\n", context, alloc, freed);
  return 0;
}
