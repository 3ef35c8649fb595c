// hostile: reads and reaches outside its sandbox (secret files, home folders, host /tmp, Unix sockets)
// expect: full marks
// A correct block pass that, on its first call, tries with raw system calls (hidden from the static
// checks) what a runner must not manage: open /etc/shadow, /etc/passwd, /root and /home; list the
// host's /tmp and /run; connect to every Unix socket it finds there. It breaks its own sums if any
// of that works, so full marks mean the boundary held (inside bubblewrap none of it is there).
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

struct Dirent64 {
  unsigned long long ino;
  long long off;
  unsigned short reclen;
  unsigned char type;
  char name[1];
};

constexpr long kOpenat = 257, kClose = 3, kGetdents64 = 217, kSocket = 41, kConnect = 42;
constexpr long kAtCwd = -100, kDirectory = 0200000;

bool opens(const char* path, long flags) {
  const long fd = hidden_syscall(kOpenat, kAtCwd, reinterpret_cast<long>(path), flags);
  if (fd < 0) return false;
  hidden_syscall(kClose, fd, 0, 0);
  return true;
}

// Lists `dir`; true if it has any entry; connects to each Unix socket in it (true if one answers).
bool lists_or_connects(const char* dir) {
  const long fd = hidden_syscall(kOpenat, kAtCwd, reinterpret_cast<long>(dir), kDirectory);
  if (fd < 0) return false;
  bool found = false;
  alignas(8) char buffer[8192];
  for (long got; (got = hidden_syscall(kGetdents64, fd, reinterpret_cast<long>(buffer), sizeof buffer)) > 0;) {
    for (long at = 0; at < got;) {
      const auto* d = reinterpret_cast<const Dirent64*>(buffer + at);
      at += d->reclen;
      if (d->name[0] == '.' && (d->name[1] == 0 || (d->name[1] == '.' && d->name[2] == 0))) continue;
      found = true;
      if (d->type != 12) continue;  // DT_SOCK
      struct {
        unsigned short family = 1;  // AF_UNIX
        char path[108] = {};
      } address;
      int k = 0;
      for (const char* p = dir; *p && k < 100; ++p) address.path[k++] = *p;
      address.path[k++] = '/';
      for (const char* p = d->name; *p && k < 107; ++p) address.path[k++] = *p;
      const long s = hidden_syscall(kSocket, 1, 1, 0);
      if (s >= 0) {
        if (hidden_syscall(kConnect, s, reinterpret_cast<long>(&address), sizeof address) == 0) found = true;
        hidden_syscall(kClose, s, 0, 0);
      }
    }
  }
  hidden_syscall(kClose, fd, 0, 0);
  return found;
}

bool escaped() {
  return opens("/etc/shadow", 0) || opens("/etc/passwd", 0) || opens("/root", kDirectory) ||
         opens("/home", kDirectory) || lists_or_connects("/tmp") || lists_or_connects("/run");
}

__global__ void spoil(float* partials) { partials[0] += 1.0f; }

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity, cudaStream_t stream) {
  (void)capacity;  // at most 1024 blocks
  static const bool out = escaped();
  if (n == 0) return 0;
  const std::size_t blocks = blocks_for(n);
  partial_sums<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(in, n, partials);
  if (out) spoil<<<1, 1, 0, stream>>>(partials);  // got out: every sum is wrong
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
