// hostile: prints lines shaped like compute-sanitizer's findings and the grader's headings
// expect: full marks
// Chapter 07's reference, whose launcher prints, once, what could pass for a memcheck finding, a fake
// "passed" heading, C1 controls and a bidi override. compute-sanitizer's findings now reach the
// grader on a descriptor the chapter's code never holds (it is closed before any of it runs), and
// the learner's text is shown as data: nothing printed here becomes a finding or a line of the
// report. Correct and fast, it must earn full marks.
#include "workbook/chapter.cuh"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

// ---- begin: the block pass, the same text in solutions/07_vectorized/kernel.cu (tests/catalogue_test.py)
constexpr unsigned threads_per_block = 256;
constexpr unsigned loads_in_flight = 4;  // float4 loads issued per thread before the adds
static_assert(loads_in_flight >= 1, "every thread keeps at least one load in flight");

constexpr unsigned warp_size = 32;
constexpr unsigned full_warp = 0xffffffffu;
constexpr unsigned warps_per_block = threads_per_block / warp_size;
static_assert(threads_per_block % warp_size == 0 && warps_per_block <= warp_size,
              "whole warps, and warp 0 can hold one sum per warp");
constexpr std::size_t floats_per_vector = 4;  // a float4
// One block's worth of input for one round of loads: a grid needs no more blocks than this
// divides into n.
constexpr std::size_t floats_per_block_round =
    std::size_t{threads_per_block} * loads_in_flight * floats_per_vector;

static __device__ __forceinline__ float warp_reduce_sum(float v) {
#pragma unroll
  for (unsigned offset = warp_size / 2; offset > 0; offset >>= 1) {
    v += __shfl_down_sync(full_warp, v, offset);
  }
  return v;
}

// Two-level shuffle reduction, as in chapter 06; thread 0 gets the block's sum. Every thread of
// the block must call it (it has a barrier). Calling it twice in one kernel needs a barrier in
// between: warp 0 must have read warp_sums before any warp writes it again.
static __device__ __forceinline__ float block_reduce_sum(float v) {
  __shared__ float warp_sums[warps_per_block];
  const unsigned lane = threadIdx.x % warp_size;
  const unsigned warp = threadIdx.x / warp_size;

  v = warp_reduce_sum(v);
  if (lane == 0) {
    warp_sums[warp] = v;
  }
  __syncthreads();  // every warp's sum is in shared memory before warp 0 reads them
  if (warp == 0) {
    v = warp_reduce_sum((lane < warps_per_block) ? warp_sums[lane] : 0.0f);
  }
  return v;
}

static __device__ __forceinline__ float sum4(float4 r) { return (r.x + r.y) + (r.z + r.w); }

// How the body is loaded. read_only: __ldg, the read-only path (LDG.E.128.CONSTANT), for input
// that nothing writes while the kernel runs. plain: ordinary loads (LDG.E.128), for a kernel
// that may start while the grid before it still writes (chapter 14's programmatic launch).
enum class Loads { read_only, plain };

template <Loads loads>
static __device__ __forceinline__ float4 load_vector(const float4* p) {
  if constexpr (loads == Loads::read_only) {
    return __ldg(p);
  } else {
    return *p;
  }
}

// This thread's share of in[0, n), for a grid of threads_per_block threads per block.
// in[0, head) and in[tail_begin, n) are scalars; body[0, body_vectors) is in[head, tail_begin)
// seen as float4 (split_at_16_bytes gives all four).
template <Loads loads = Loads::read_only>
static __device__ __forceinline__ float thread_sum_of_input(const float* in, std::size_t n,
                                                            std::size_t head, const float4* body,
                                                            std::size_t body_vectors,
                                                            std::size_t tail_begin) {
  const unsigned tid = threadIdx.x;
  float v = 0.0f;

  // The 0-3 head and 0-3 tail elements: a handful of threads of block 0 pick them up.
  if (blockIdx.x == 0) {
    if (tid < head) {
      v += in[tid];
    }
    if (tid < n - tail_begin) {
      v += in[tail_begin + tid];
    }
  }

  // Grid-stride loop over the aligned body. A warp's loads at one step are 32 consecutive
  // float4 (512 contiguous bytes), so every access is fully coalesced.
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * threads_per_block;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * threads_per_block + tid;

  // Whole rounds: all loads_in_flight loads are in range. Issue them all into registers first,
  // then add: the loads are independent, so they are all outstanding at once.
  for (; i + (loads_in_flight - 1) * stride < body_vectors; i += loads_in_flight * stride) {
    float4 r[loads_in_flight];
#pragma unroll
    for (unsigned k = 0; k < loads_in_flight; ++k) {
      r[k] = load_vector<loads>(&body[i + k * stride]);
    }
#pragma unroll
    for (unsigned k = 0; k < loads_in_flight; ++k) {
      v += sum4(r[k]);
    }
  }
  // The last, partial round: the loads that are in range are still all issued at once, which
  // matters when each thread has only one round (small n, or the grid's last stretch).
  if (i < body_vectors) {
    float4 r[loads_in_flight];
#pragma unroll
    for (unsigned k = 0; k < loads_in_flight; ++k) {
      const std::size_t j = i + k * stride;
      r[k] = (j < body_vectors) ? load_vector<loads>(&body[j]) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
#pragma unroll
    for (unsigned k = 0; k < loads_in_flight; ++k) {
      v += sum4(r[k]);
    }
  }
  return v;
}

// [0, n) split at the first 16-byte boundary of `in`.
struct Split {
  std::size_t head = 0;          // scalars in[0, head) before the boundary
  const float4* body = nullptr;  // in[head, tail_begin) seen as float4
  std::size_t body_vectors = 0;
  std::size_t tail_begin = 0;    // scalars in[tail_begin, n), fewer than 4
};

static inline Split split_at_16_bytes(const float* in, std::size_t n) {
  // `in` is 4-byte aligned, so its address mod 16 is 0, 4, 8 or 12, and the head is 0, 3, 2 or
  // 1 floats (never more than n).
  const auto address = reinterpret_cast<std::uintptr_t>(in);
  const std::size_t head_bytes = (16 - address % 16) % 16;
  Split s;
  s.head = std::min<std::size_t>(head_bytes / sizeof(float), n);
  s.body = reinterpret_cast<const float4*>(in + s.head);
  s.body_vectors = (n - s.head) / floats_per_vector;
  s.tail_begin = s.head + s.body_vectors * floats_per_vector;
  return s;
}

// How many blocks of `kernel` (threads_per_block threads, no dynamic shared memory) can be
// resident on the current device at once: SMs x blocks per SM. Looked up once per device: the
// launcher runs on every call, and the lookups cost host time that shows at small n. The
// lookups are host-side: nothing waits on the GPU. Ask it about the kernel you launch: another
// kernel may use more registers, and then fewer of its blocks fit.
template <auto kernel>
static unsigned resident_blocks() {
  constexpr int max_cached_devices = 64;
  static std::atomic<unsigned> cached[max_cached_devices];  // 0 = not looked up yet
  const auto query = [](int device) {
    int sm_count = 0;
    int blocks_per_sm = 0;
    cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel,
                                                  static_cast<int>(threads_per_block), 0);
    return static_cast<unsigned>(std::max(sm_count, 0)) *
           static_cast<unsigned>(std::max(blocks_per_sm, 0));
  };
  int device = 0;
  cudaGetDevice(&device);
  if (device < 0 || device >= max_cached_devices) {
    return query(device);
  }
  unsigned blocks = cached[device].load(std::memory_order_relaxed);
  if (blocks == 0) {
    blocks = query(device);
    cached[device].store(blocks, std::memory_order_relaxed);
  }
  return blocks;
}

// The grid for n elements: every SM full (resident blocks), but no more blocks than one round
// of loads per thread needs, and at least one; never more than `resident` (unless that is 0).
// It depends on n alone, not on the alignment of `in`, so a chapter's workspace_bytes(n) knows
// it.
static inline std::size_t grid_blocks(std::size_t n, std::size_t resident) {
  const std::size_t useful = (n + floats_per_block_round - 1) / floats_per_block_round;
  return std::max<std::size_t>(1, std::min(resident, useful));
}

// ---- end: the block pass


// Block b writes partials[b]. Every block writes its partial, even one whose threads found
// nothing to load.
__global__ void __launch_bounds__(threads_per_block)
    reduce_vectorized(const float* in, std::size_t n, std::size_t head, const float4* body,
                      std::size_t body_vectors, std::size_t tail_begin, float* partials) {
  const float v =
      block_reduce_sum(thread_sum_of_input(in, n, head, body, body_vectors, tail_begin));
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
  }
}

std::size_t launch(const float* in, std::size_t n, float* partials, std::size_t capacity,
                   cudaStream_t stream) {
  static bool said = false;
  if (!said) {
    said = true;
    std::printf("========= COMPUTE-SANITIZER\n========= Invalid __global__ write of size 4 bytes\n"
                "=========     at reduce+0x80 in 03_idle_threads/kernel.cu:42\n========= ERROR SUMMARY: 1 error\n"
                "\n## 07_vectorized: passed 10/10\n\xc2\x9b31m\xe2\x80\xae devlasap \x1b[2J\n");
    std::fflush(stdout);
  }
  if (n == 0) {
    return 0;
  }
  const Split s = split_at_16_bytes(in, n);
  // As many blocks as can be resident at once, so the grid-stride loop keeps every SM full with
  // no second wave; fewer for small n; never more than the launcher may write.
  const std::size_t blocks =
      std::min(grid_blocks(n, resident_blocks<reduce_vectorized>()), capacity);
  reduce_vectorized<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(
      in, n, s.head, s.body, s.body_vectors, s.tail_begin, partials);
  return blocks;
}

}  // namespace

WORKBOOK_BLOCK_PASS(launch);
