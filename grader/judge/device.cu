#include "judge/device.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <cub/block/block_reduce.cuh>

#include "judge/inputs.hpp"
#include "judge/verify.hpp"

namespace workbook {
namespace {

constexpr unsigned kThreads = 256;

unsigned blocks_for(std::size_t count) {
  const std::size_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::min<std::size_t>(std::max<std::size_t>(blocks, 1), 65536));
}

// The scans that fold memory into one word (a fingerprint, an exact sum, the first mismatch) reduce
// within each block and make one atomic operation a block, in a grid of about one wave (1024
// blocks of 256 threads). Atomic operations on one address are served one after another: with one
// a thread, a scan of 2^24 words or more made 2^24 of them on one word, and a process's GPU time is
// every other process's wait when they share the GPU (book/results/grading.md).
constexpr unsigned kScanBlocks = 1024;
using BlockReduceWords = cub::BlockReduce<unsigned long long, kThreads>;

unsigned scan_blocks_for(std::size_t count) { return std::min(blocks_for(count), kScanBlocks); }

// f(data[i], i) for this thread's elements of a grid-stride loop over [0, count), four loads in
// flight at a time: a wave of threads with one load each in flight reads far below the bandwidth.
template <class T, class F>
__device__ __forceinline__ void each_element(const T* data, std::size_t count, F&& f) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  for (; i + 3 * stride < count; i += 4 * stride) {
    T v[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) v[k] = data[i + k * stride];
#pragma unroll
    for (int k = 0; k < 4; ++k) f(v[k], i + k * stride);
  }
  for (; i < count; i += stride) f(data[i], i);
}

struct Least {
  __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const { return a < b ? a : b; }
};

__global__ void fill_kernel(std::uint32_t* dst, std::uint32_t bits, std::size_t count) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    dst[i] = bits;
  }
}

__device__ std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

__global__ void __launch_bounds__(kThreads)
    fingerprint_kernel(const std::uint32_t* data, std::size_t count, unsigned long long* out) {
  __shared__ BlockReduceWords::TempStorage temp;
  unsigned long long h = 0;
  each_element(data, count, [&](std::uint32_t word, std::size_t i) {
    h += mix((std::uint64_t(word) << 32) ^ (i * 0x9e3779b97f4a7c15ull));
  });
  const unsigned long long block = BlockReduceWords(temp).Sum(h);
  if (threadIdx.x == 0) atomicAdd(out, block);  // wrapping sums: the same in any order
}

// First index in [from, count) whose word differs from `bits`, or the all-ones *first unchanged.
__global__ void __launch_bounds__(kThreads)
    first_mismatch_kernel(const std::uint32_t* data, std::size_t from, std::size_t count, std::uint32_t bits,
                          unsigned long long* first) {
  __shared__ BlockReduceWords::TempStorage temp;
  unsigned long long mine = ~0ull;
  for (std::size_t i = from + blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    if (data[i] != bits) {
      mine = i;  // a thread's indices rise: its first mismatch is its least
      break;
    }
  }
  const unsigned long long block = BlockReduceWords(temp).Reduce(mine, Least());
  if (threadIdx.x == 0 && block != ~0ull) atomicMin(first, block);
}

__global__ void dense_exact_kernel(float* dst, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    dst[i] = static_cast<float>(dense_exact_units(seed, i)) / kDenseExactScale;
  }
}

__global__ void random_kernel(float* dst, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    dst[i] = random_value(seed, i);
  }
}

// Each block's sum and sum of magnitudes in double, in a fixed order for a fixed grid: the host adds
// the blocks' pairs in block order, so the reference is the same number on every run.
constexpr unsigned kReferenceBlocks = 1024;
constexpr unsigned kReferenceThreads = 256;
__global__ void __launch_bounds__(kReferenceThreads)
    reference_sum_kernel(const float* x, std::size_t n, double2* block_sums) {
  __shared__ double2 part[kReferenceThreads];
  double2 s = {0, 0};
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    s.x += x[i];
    s.y += fabs(static_cast<double>(x[i]));
  }
  part[threadIdx.x] = s;
  __syncthreads();
  for (unsigned half = kReferenceThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      part[threadIdx.x].x += part[threadIdx.x + half].x;
      part[threadIdx.x].y += part[threadIdx.x + half].y;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) block_sums[blockIdx.x] = part[0];
}

__global__ void __launch_bounds__(kThreads) sixteenths_kernel(const float* x, std::size_t n, unsigned long long* out) {
  __shared__ BlockReduceWords::TempStorage temp;
  long long units = 0;
  each_element(x, n, [&](float v, std::size_t) { units += static_cast<long long>(v * kDenseExactScale); });
  // Two's complement: the unsigned sums wrap to the signed total, in any order.
  const unsigned long long block = BlockReduceWords(temp).Sum(static_cast<unsigned long long>(units));
  if (threadIdx.x == 0) atomicAdd(out, block);
}

__global__ void scatter_kernel(float* dst, const std::size_t* at, const float* to, std::size_t count) {
  for (std::size_t i = threadIdx.x; i < count; i += blockDim.x) dst[at[i]] = to[i];
}

//! Up to kCount positions and their values, passed by value in a launch's parameters.
struct ScatterChunk {
  static constexpr int kCount = 32;
  std::size_t at[kCount];
  float to[kCount];
  int count;
};
//! The most launches of ScatterChunk a set() makes before it stages its values in device memory.
constexpr std::size_t kSetByValue = 8;

__global__ void scatter_chunk_kernel(float* dst, ScatterChunk chunk) {
  if (static_cast<int>(threadIdx.x) < chunk.count) dst[chunk.at[threadIdx.x]] = chunk.to[threadIdx.x];
}

constexpr unsigned kSumThreads = 1024;

__global__ void __launch_bounds__(kSumThreads)
    sum_partials_kernel(const float* partials, std::size_t count, double* dst) {
  __shared__ double part[kSumThreads];
  double s = 0;
  for (std::size_t i = threadIdx.x; i < count; i += kSumThreads) s += partials[i];
  part[threadIdx.x] = s;
  __syncthreads();
  for (unsigned half = kSumThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) part[threadIdx.x] += part[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) *dst = part[0];
}

constexpr std::uint32_t kSlackNaN = 0x7fc0dead;  // a quiet NaN, unlike kPoisonBits

}  // namespace

bool device_available(std::string* why) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    if (why) *why = fmt::format("cudaGetDeviceCount: {}", cudaGetErrorString(err));
    return false;
  }
  if (count == 0) {
    if (why) *why = "the CUDA runtime sees no device";
    return false;
  }
  return true;
}

DeviceInfo device_info() {
  DeviceInfo info = device_properties();
  std::size_t total = 0;
  WORKBOOK_CUDA_CHECK(cudaMemGetInfo(&info.free_bytes, &total));
  return info;
}

DeviceInfo device_properties() {
  int device = 0;
  WORKBOOK_CUDA_CHECK(cudaGetDevice(&device));
  return device_properties(device);
}

DeviceInfo device_properties(int device) {
  static std::mutex lock;  // the judge reads them in a thread of its own too, while its runner starts
  static std::map<int, DeviceInfo> known;
  const std::lock_guard<std::mutex> hold(lock);
  if (const auto it = known.find(device); it != known.end()) return it->second;
  cudaDeviceProp prop{};
  WORKBOOK_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  DeviceInfo info;
  info.name = prop.name;
  info.multiprocessors = prop.multiProcessorCount;
  info.l2_bytes = static_cast<std::size_t>(prop.l2CacheSize);
  info.global_bytes = prop.totalGlobalMem;
  info.compute_major = prop.major;
  info.compute_minor = prop.minor;
  info.cooperative_launch = prop.cooperativeLaunch != 0;
  WORKBOOK_CUDA_CHECK(cudaDriverGetVersion(&info.driver_version));
  WORKBOOK_CUDA_CHECK(cudaRuntimeGetVersion(&info.runtime_version));
  known[device] = info;
  return info;
}

std::string version_string(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

void fill_words(void* dst, std::uint32_t bits, std::size_t count, cudaStream_t stream) {
  if (count == 0) return;
  fill_kernel<<<blocks_for(count), kThreads, 0, stream>>>(static_cast<std::uint32_t*>(dst), bits, count);
  WORKBOOK_CUDA_CHECK(cudaGetLastError());
}

std::uint64_t fingerprint(const void* data, std::size_t words, cudaStream_t stream) {
  Scans scans(stream);
  return scans.value(scans.fingerprint(data, words));
}

namespace {

// A device buffer kept for the process's life, one per device, grown as needed: a cudaFree waits
// for the whole device, so a helper that needs room on every call keeps it here.
template <class T>
class KeptBuffer {
 public:
  //! Room for at least `count` elements on the current device; growing it first waits for
  //! `stream`, where an earlier call may still use the old room.
  T* at_least(std::size_t count, cudaStream_t stream) {
    int device = 0;
    WORKBOOK_CUDA_CHECK(cudaGetDevice(&device));
    DeviceBuffer<T>& room = rooms_[device];
    if (room.size() < count) {
      if (room.size() > 0) WORKBOOK_CUDA_CHECK(cudaStreamSynchronize(stream));
      room = DeviceBuffer<T>(count);
    }
    return room.data();
  }

 private:
  std::map<int, DeviceBuffer<T>> rooms_;
};

// Blocks of Scans::kMaxSlots result words, device and pinned host, by device; a Scans takes one
// while it lives and gives it back. Made once each, kept for the process's life: a cudaMalloc and
// cudaFree around every scan would cost a synchronization of the whole device each.
struct SlotBlock {
  unsigned long long* device = nullptr;
  unsigned long long* host = nullptr;
};
std::map<int, std::vector<SlotBlock>>& idle_slot_blocks() {
  static std::map<int, std::vector<SlotBlock>> blocks;
  return blocks;
}

}  // namespace

int Scans::take(std::uint64_t none) {
  if (used_ == kMaxSlots) throw std::logic_error("more scans enqueued at once than Scans::kMaxSlots");
  if (!device_) {
    WORKBOOK_CUDA_CHECK(cudaGetDevice(&gpu_));
    std::vector<SlotBlock>& idle = idle_slot_blocks()[gpu_];
    SlotBlock b;
    if (!idle.empty()) {
      b = idle.back();
      idle.pop_back();
    } else {
      WORKBOOK_CUDA_CHECK(cudaMalloc(&b.device, kMaxSlots * sizeof(unsigned long long)));
      WORKBOOK_CUDA_CHECK(cudaMallocHost(&b.host, kMaxSlots * sizeof(unsigned long long)));
    }
    device_ = b.device;
    host_ = b.host;
  }
  none_[used_] = none;
  return used_++;
}

Scans::~Scans() {
  if (!device_) return;
  if (used_ > 0 && !waited_) cudaStreamSynchronize(stream_);  // nothing enqueued may still write the block
  idle_slot_blocks()[gpu_].push_back({device_, host_});
}

int Scans::first_mismatch(const void* data, std::size_t from, std::size_t to, std::uint32_t bits) {
  const int slot = take(to);
  // All ones: larger than any index, so atomicMin keeps the first mismatch and value() reads
  // "none" as `to`.
  WORKBOOK_CUDA_CHECK(cudaMemsetAsync(device_ + slot, 0xff, sizeof(unsigned long long), stream_));
  if (from < to) {
    first_mismatch_kernel<<<scan_blocks_for(to - from), kThreads, 0, stream_>>>(static_cast<const std::uint32_t*>(data),
                                                                                from, to, bits, device_ + slot);
    WORKBOOK_CUDA_CHECK(cudaGetLastError());
  }
  return slot;
}

int Scans::fingerprint(const void* data, std::size_t words) {
  const int slot = take(~std::uint64_t(0));
  WORKBOOK_CUDA_CHECK(cudaMemsetAsync(device_ + slot, 0, sizeof(unsigned long long), stream_));
  fingerprint_kernel<<<scan_blocks_for(words), kThreads, 0, stream_>>>(static_cast<const std::uint32_t*>(data), words,
                                                                       device_ + slot);
  WORKBOOK_CUDA_CHECK(cudaGetLastError());
  return slot;
}

void Scans::fetch() {
  if (fetched_ || !device_) return;
  WORKBOOK_CUDA_CHECK(
      cudaMemcpyAsync(host_, device_, used_ * sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream_));
  fetched_ = true;
}

std::uint64_t Scans::value(int slot) {
  if (slot < 0 || slot >= used_) throw std::logic_error("no such scan");
  fetch();
  if (!waited_) {
    WORKBOOK_CUDA_CHECK(cudaStreamSynchronize(stream_));  // returns at once when a download already waited
    waited_ = true;
  }
  return std::min<std::uint64_t>(host_[slot], none_[slot]);
}

GuardedInput::GuardedInput(std::size_t n, std::size_t offset)
    : n_(n), offset_(offset), base_(n + 2 * kSlack + offset) {}

void GuardedInput::upload(const std::vector<float>& host, cudaStream_t stream) {
  fill_words(base_.data(), kSlackNaN, base_.size(), stream);
  // From pageable memory the copy returns once `host` is staged, so `host` may go away; no wait.
  WORKBOOK_CUDA_CHECK(cudaMemcpyAsync(writable(), host.data(), n_ * sizeof(float), cudaMemcpyHostToDevice, stream));
}

void GuardedInput::upload_sparse(const std::vector<std::pair<std::size_t, float>>& values, cudaStream_t stream) {
  fill_words(base_.data(), kSlackNaN, base_.size(), stream);
  WORKBOOK_CUDA_CHECK(cudaMemsetAsync(writable(), 0, n_ * sizeof(float), stream));
  set(values, stream);  // every mark at once, not a copy and a wait each
}

void GuardedInput::fill_drawn(DrawKernel kernel, std::uint64_t seed, cudaStream_t stream) {
  fill_words(base_.data(), kSlackNaN, base_.size(), stream);
  if (n_) {
    kernel<<<blocks_for(n_), kThreads, 0, stream>>>(writable(), n_, seed);
    WORKBOOK_CUDA_CHECK(cudaGetLastError());
  }
}

void GuardedInput::fill_dense_exact(std::uint64_t seed, cudaStream_t stream) {
  fill_drawn(dense_exact_kernel, seed, stream);
}

void GuardedInput::fill_random(std::uint64_t seed, cudaStream_t stream) { fill_drawn(random_kernel, seed, stream); }

void GuardedInput::set(const std::vector<std::pair<std::size_t, float>>& values, cudaStream_t stream) {
  if (values.empty()) return;
  // The last value given for a position wins, as if set one by one: the kernels write each position once.
  std::map<std::size_t, float> last;
  for (const auto& [index, value] : values) last[index] = value;
  // A few values travel in the launches' parameters: nothing to stage, nothing to wait for (an
  // input is set before every timed call, and beside other processes each wait is for a time slice).
  if (last.size() <= kSetByValue * ScatterChunk::kCount) {
    ScatterChunk chunk{};
    for (auto it = last.begin(); it != last.end();) {
      chunk.count = 0;
      for (; it != last.end() && chunk.count < ScatterChunk::kCount; ++it, ++chunk.count) {
        chunk.at[chunk.count] = it->first;
        chunk.to[chunk.count] = it->second;
      }
      scatter_chunk_kernel<<<1, ScatterChunk::kCount, 0, stream>>>(writable(), chunk);
      WORKBOOK_CUDA_CHECK(cudaGetLastError());
    }
    return;
  }
  // Where many positions and values go on the device.
  static KeptBuffer<std::size_t> at_room;
  static KeptBuffer<float> to_room;
  std::size_t* at = at_room.at_least(last.size(), stream);
  float* to = to_room.at_least(last.size(), stream);
  std::vector<std::size_t> host_at;
  std::vector<float> host_to;
  for (const auto& [index, value] : last) {
    host_at.push_back(index);
    host_to.push_back(value);
  }
  WORKBOOK_CUDA_CHECK(
      cudaMemcpyAsync(at, host_at.data(), host_at.size() * sizeof(std::size_t), cudaMemcpyHostToDevice, stream));
  WORKBOOK_CUDA_CHECK(
      cudaMemcpyAsync(to, host_to.data(), host_to.size() * sizeof(float), cudaMemcpyHostToDevice, stream));
  // The copies from pageable memory return once the host vectors are staged, so they may go; the
  // rooms are reused in the stream's order (and grown only after a wait for it).
  scatter_kernel<<<1, 256, 0, stream>>>(writable(), at, to, host_at.size());
  WORKBOOK_CUDA_CHECK(cudaGetLastError());
}

SumCheck reference_sum_on_device(const float* x, std::size_t n, cudaStream_t stream) {
  static KeptBuffer<double2> room;
  double2* sums = room.at_least(kReferenceBlocks, stream);
  reference_sum_kernel<<<kReferenceBlocks, kReferenceThreads, 0, stream>>>(x, n, sums);
  WORKBOOK_CUDA_CHECK(cudaGetLastError());
  std::vector<double2> host(kReferenceBlocks);
  WORKBOOK_CUDA_CHECK(
      cudaMemcpyAsync(host.data(), sums, host.size() * sizeof(double2), cudaMemcpyDeviceToHost, stream));
  WORKBOOK_CUDA_CHECK(cudaStreamSynchronize(stream));
  SumCheck check;
  for (const double2& b : host) {
    check.reference += b.x;
    check.sum_abs += b.y;
  }
  check.tolerance = sum_tolerance(n, check.sum_abs);
  return check;
}

std::vector<std::int64_t> sums_in_sixteenths(const std::vector<const float*>& xs, std::size_t n, cudaStream_t stream) {
  std::vector<std::int64_t> out(xs.size());
  if (xs.empty()) return out;
  static KeptBuffer<unsigned long long> room;
  unsigned long long* sums = room.at_least(xs.size(), stream);
  WORKBOOK_CUDA_CHECK(cudaMemsetAsync(sums, 0, xs.size() * sizeof(unsigned long long), stream));
  for (std::size_t i = 0; i < xs.size() && n; ++i) {
    sixteenths_kernel<<<scan_blocks_for(n), kThreads, 0, stream>>>(xs[i], n, sums + i);
    WORKBOOK_CUDA_CHECK(cudaGetLastError());
  }
  WORKBOOK_CUDA_CHECK(
      cudaMemcpyAsync(out.data(), sums, xs.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
  WORKBOOK_CUDA_CHECK(cudaStreamSynchronize(stream));
  return out;
}

std::int64_t sum_in_sixteenths(const float* x, std::size_t n, cudaStream_t stream) {
  return sums_in_sixteenths({x}, n, stream).front();
}

void sum_partials_into(const float* partials, std::size_t count, double* dst, cudaStream_t stream) {
  sum_partials_kernel<<<1, kSumThreads, 0, stream>>>(partials, count, dst);
  WORKBOOK_CUDA_CHECK(cudaGetLastError());
}

std::uint64_t GuardedInput::fingerprint(cudaStream_t stream) const {
  return workbook::fingerprint(base_.data(), base_.size(), stream);
}

int GuardedInput::fingerprint(Scans& scans) const { return scans.fingerprint(base_.data(), base_.size()); }

GuardedOutput::GuardedOutput(std::size_t capacity) : capacity_(capacity), base_(capacity + kGuard) {}

void GuardedOutput::poison(cudaStream_t stream) { fill_words(base_.data(), kPoisonBits, base_.size(), stream); }

std::vector<float> GuardedOutput::download(std::size_t count, cudaStream_t stream) const {
  std::vector<float> host(count);
  if (count) {
    WORKBOOK_CUDA_CHECK(
        cudaMemcpyAsync(host.data(), base_.data(), count * sizeof(float), cudaMemcpyDeviceToHost, stream));
  }
  WORKBOOK_CUDA_CHECK(cudaStreamSynchronize(stream));
  return host;
}

std::string GuardedOutput::explain_stray_writes(std::size_t from, cudaStream_t stream) const {
  Scans scans(stream);
  const int slot = scan_stray_writes(scans, from);
  return explain_stray_writes(scans, slot, from);
}

int GuardedOutput::scan_stray_writes(Scans& scans, std::size_t from) const {
  return scans.first_mismatch(base_.data(), from, base_.size(), kPoisonBits);
}

std::string GuardedOutput::explain_stray_writes(Scans& scans, int slot, std::size_t from) const {
  const std::size_t first = static_cast<std::size_t>(scans.value(slot));
  if (first >= base_.size()) return "";
  if (first >= capacity_) {
    return fmt::format(
        "output element {} was written: that is past the end of the {} the "
        "harness provided (an out-of-bounds write)\n",
        first, capacity_);
  }
  return fmt::format("output element {} was written, but the launcher said it wrote only {}\n", first, from);
}

GuardedWorkspace::GuardedWorkspace(std::size_t bytes, cudaStream_t stream)
    : bytes_(bytes), words_((bytes + 3) / 4), base_(words_ + 2 * kGuardWords) {
  fill_words(base_.data(), kPoisonBits, base_.size(), stream);
  if (words_) WORKBOOK_CUDA_CHECK(cudaMemsetAsync(data(), 0, words_ * sizeof(std::uint32_t), stream));
}

GuardedWorkspace::GuardedWorkspace(std::size_t bytes) : GuardedWorkspace(bytes, nullptr) {
  WORKBOOK_CUDA_CHECK(cudaDeviceSynchronize());
}

std::string GuardedWorkspace::explain_overrun(cudaStream_t stream) const {
  Scans scans(stream);
  const int first_slot = scan_guards(scans);
  return explain_overrun(scans, first_slot);
}

int GuardedWorkspace::scan_guards(Scans& scans) const {
  const int before = scans.first_mismatch(base_.data(), 0, kGuardWords, kPoisonBits);
  scans.first_mismatch(base_.data(), kGuardWords + words_, base_.size(), kPoisonBits);
  return before;
}

std::string GuardedWorkspace::explain_overrun(Scans& scans, int first_slot) const {
  const std::size_t before = static_cast<std::size_t>(scans.value(first_slot));
  if (before != kGuardWords) {
    return fmt::format("the workspace was written {} bytes before its start\n", (kGuardWords - before) * 4);
  }
  const std::size_t after = static_cast<std::size_t>(scans.value(first_slot + 1));
  if (after != base_.size()) {
    return fmt::format(
        "the workspace was written at byte {}, but workspace_bytes(n) asked for "
        "only {} bytes\n",
        (after - kGuardWords) * 4, bytes_);
  }
  return "";
}

}  // namespace workbook
