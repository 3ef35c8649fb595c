// hostile: a racy last warp that uses the safe form only in the first process it sees
// expect: full marks
// The last warp's steps without __syncwarp() (a data race on Volta and later, which racecheck finds)
// in every process but the first, which it tells by a mark it leaves: a file in its scratch folder's
// parent, in /tmp, in /dev/shm. Where the sandbox gives every process fresh, private folders (a
// tmpfs scratch and /tmp under bubblewrap, a /dev/shm of its own), no mark survives, every process
// is the first, and the racy form never runs: graded on the code that ran, it earns full marks.
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

namespace {

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

constexpr long kOpenat = 257, kClose = 3;
constexpr long kAtCwd = -100, kCreateExclusive = 01 | 0100 | 0200;  // O_WRONLY | O_CREAT | O_EXCL

// True if a mark was already there (an earlier process left it); leaves one where it can.
bool seen_before() {
  bool seen = false;
  for (const char* path : {"../wb-race-04.mark", "/tmp/wb-race-04.mark", "/dev/shm/wb-race-04.mark"}) {
    const long fd = hidden_syscall(kOpenat, kAtCwd, reinterpret_cast<long>(path), kCreateExclusive);
    if (fd >= 0) hidden_syscall(kClose, fd, 0, 0);
    else if (fd == -17) seen = true;  // EEXIST
  }
  return seen;
}

// A block pass with the last warp in shared memory: safe with __syncwarp() between steps, racy without.
template <bool kSafe>
__global__ void last_warp(const float* in, std::size_t n, float* partials) {
  __shared__ float s[256];
  float sum = 0.0f;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) sum += in[i];
  s[threadIdx.x] = sum;
  __syncthreads();
  for (unsigned h = blockDim.x / 2; h > 32; h /= 2) {
    if (threadIdx.x < h) s[threadIdx.x] += s[threadIdx.x + h];
    __syncthreads();
  }
  if (threadIdx.x < 32) {
    volatile float* v = s;
    for (unsigned h = 32; h > 0; h /= 2) {
      const float other = v[threadIdx.x + h];
      if (kSafe) __syncwarp();
      v[threadIdx.x] += other;
      if (kSafe) __syncwarp();
    }
    if (threadIdx.x == 0) partials[blockIdx.x] = v[0];
  }
}

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity, cudaStream_t stream) {
  (void)capacity;  // at most 1024 blocks
  static const bool racy = seen_before();
  if (n == 0) return 0;
  const std::size_t b = blocks_for(n);
  if (racy) last_warp<false><<<static_cast<unsigned>(b), 256, 0, stream>>>(in, n, partials);
  else last_warp<true><<<static_cast<unsigned>(b), 256, 0, stream>>>(in, n, partials);
  return b;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
