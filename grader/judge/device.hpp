// Device memory the harness hands to a chapter, guarded so that mistakes show.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "judge/verify.hpp"
#include "runner/cuda_check.hpp"
#include "runner/shared_memory.hpp"

namespace workbook {

//! True if a CUDA device can be used; otherwise `why` says what the runtime said.
bool device_available(std::string* why);

struct DeviceInfo {
  std::string name;
  int multiprocessors = 0;
  std::size_t l2_bytes = 0;
  std::size_t global_bytes = 0;
  std::size_t free_bytes = 0;
  int compute_major = 0, compute_minor = 0;
  int driver_version = 0, runtime_version = 0;  // 13000 = 13.0
  bool cooperative_launch = false;
};
//! The current device's attributes and its free memory (which needs, and makes, a CUDA context).
DeviceInfo device_info();
//! Device `device`'s attributes without making it current or a context on it (free_bytes 0). Read
//! once a process and kept: they do not change, and reading them all (cudaGetDeviceProperties) is a
//! call to the driver for each, where a judge asks before every test.
DeviceInfo device_properties(int device);
//! The same for the current device.
DeviceInfo device_properties();
std::string version_string(int cuda_version);  // 13000 -> "13.0"

//! An owning device allocation of `count` elements of T.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count) WORKBOOK_CUDA_CHECK(cudaMalloc(&data_, count * sizeof(T)));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept { swap(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    swap(other);
    return *this;
  }
  ~DeviceBuffer() {
    if (data_) cudaFree(data_);
  }
  T* data() const { return data_; }
  std::size_t size() const { return count_; }

 private:
  void swap(DeviceBuffer& other) {
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
  }
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

//! Fills `count` words at `dst` with `bits` on `stream`.
void fill_words(void* dst, std::uint32_t bits, std::size_t count, cudaStream_t stream);

//! An order-sensitive 64-bit fingerprint of `count` words: equal before and
//! after a call means nothing in that range was written (with overwhelming
//! probability).
std::uint64_t fingerprint(const void* data, std::size_t words, cudaStream_t stream);

//! The sum of x[0, n) * 16 in 64-bit integers: exact for dense exact inputs.
std::int64_t sum_in_sixteenths(const float* x, std::size_t n, cudaStream_t stream);
//! The same for several inputs of n floats, with one wait for all of them.
std::vector<std::int64_t> sums_in_sixteenths(const std::vector<const float*>& xs, std::size_t n, cudaStream_t stream);

//! reference_sum (verify.hpp) on the device, for inputs too large to draw and add on the host
//! quickly: the sum and the sum of magnitudes in double, the same on every run.
SumCheck reference_sum_on_device(const float* x, std::size_t n, cudaStream_t stream);

//! Enqueues the sum of partials[0, count) in double into *dst (one block, on
//! the device): what the harness makes of a block pass's partials.
void sum_partials_into(const float* partials, std::size_t count, double* dst, cudaStream_t stream);

//! Scans of device memory enqueued on one stream and read back together, with one wait for all:
//! the checks after a call cost one round trip to the GPU, not one each (beside other processes,
//! each round trip waits for the GPU's time slice). Their results live in a few words of device
//! and pinned host memory kept for the process's life, so a scan allocates nothing.
class Scans {
 public:
  static constexpr int kMaxSlots = 8;
  explicit Scans(cudaStream_t stream) : stream_(stream) {}
  Scans(const Scans&) = delete;
  Scans& operator=(const Scans&) = delete;
  ~Scans();
  //! Enqueues the search for the first word in [from, to) of `data` that is not `bits` (`to` if
  //! none); returns its slot.
  int first_mismatch(const void* data, std::size_t from, std::size_t to, std::uint32_t bits);
  //! Enqueues fingerprint(data, words); returns its slot.
  int fingerprint(const void* data, std::size_t words);
  //! Enqueues the copy of every result to the host. A later wait for the stream (a download, or
  //! value()) makes them readable.
  void fetch();
  //! Slot `slot`'s result; fetches and waits for the stream first if that has not been done.
  std::uint64_t value(int slot);

 private:
  int take(std::uint64_t none);
  cudaStream_t stream_;
  int gpu_ = 0;
  int used_ = 0;
  std::uint64_t none_[kMaxSlots] = {};  // first_mismatch's "to": what a slot holds when nothing differs
  bool fetched_ = false, waited_ = false;
  unsigned long long* device_ = nullptr;
  unsigned long long* host_ = nullptr;
};

//! A read-only input of n floats placed `offset` floats past a 16-byte
//! boundary (offset 1..3 misaligns it), with a NaN slack before and after
//! it: a kernel that adds anything outside in[0, n) gets a NaN.
class GuardedInput {
 public:
  static constexpr std::size_t kSlack = 4096;  // floats on each side
  GuardedInput(std::size_t n, std::size_t offset);
  const float* data() const { return base_.data() + kSlack + offset_; }
  std::size_t size() const { return n_; }
  //! `host` into the input, the slacks NaN (enqueued on `stream`, not waited for: the calls are
  //! ordered after the judge's stream, run_calls_after_stream).
  void upload(const std::vector<float>& host, cudaStream_t stream);
  //! Zeros everywhere except `values` at their positions (enqueued on `stream`, as set()).
  void upload_sparse(const std::vector<std::pair<std::size_t, float>>& values, cudaStream_t stream);
  //! The dense exact input of `seed` (see dense_exact_units), drawn on the device (enqueued on
  //! `stream`: wait for it before another process reads the input).
  void fill_dense_exact(std::uint64_t seed, cudaStream_t stream);
  //! random_value(seed, 0 .. n-1) (see random_input), drawn on the device (enqueued, as above).
  void fill_random(std::uint64_t seed, cudaStream_t stream);
  //! Sets elements (the timed calls change some before each call), the last value given for a
  //! position winning; enqueued, never waited for (many are staged through device memory).
  void set(const std::vector<std::pair<std::size_t, float>>& values, cudaStream_t stream);
  //! Fingerprint of the input and both slacks.
  std::uint64_t fingerprint(cudaStream_t stream) const;
  //! The same, enqueued among other scans; returns its slot.
  int fingerprint(Scans& scans) const;

 private:
  //! A kernel that writes element i of a seeded input: dst[i] for i < n.
  using DrawKernel = void (*)(float* dst, std::size_t n, std::uint64_t seed);
  void fill_drawn(DrawKernel kernel, std::uint64_t seed, cudaStream_t stream);
  float* writable() { return base_.data() + kSlack + offset_; }
  std::size_t n_, offset_;
  SharedBuffer<float> base_;
};

//! Room for `capacity` outputs, poisoned before every run, followed by a
//! guard band that must survive the run.
class GuardedOutput {
 public:
  static constexpr std::size_t kGuard = 4096;
  explicit GuardedOutput(std::size_t capacity);
  float* data() const { return base_.data(); }
  std::size_t capacity() const { return capacity_; }
  void poison(cudaStream_t stream);
  std::vector<float> download(std::size_t count, cudaStream_t stream) const;
  //! "" if [from, capacity) still holds poison and the guard band is intact;
  //! otherwise where the first stray write is.
  std::string explain_stray_writes(std::size_t from, cudaStream_t stream) const;
  //! The same in two steps: enqueue the scan among others, then explain once they are read.
  int scan_stray_writes(Scans& scans, std::size_t from) const;
  std::string explain_stray_writes(Scans& scans, int slot, std::size_t from) const;

 private:
  std::size_t capacity_;
  SharedBuffer<float> base_;
};

//! A full chapter's workspace of `bytes`, zero-filled once, between two
//! poisoned guard bands that must survive every call.
class GuardedWorkspace {
 public:
  static constexpr std::size_t kGuardWords = 4096;  // 16 KB on each side
  //! Filled on `stream`, not waited for: whoever hands it to the chapter orders the call after it.
  GuardedWorkspace(std::size_t bytes, cudaStream_t stream);
  //! Filled on the current device's default stream, and waited for (the ranks' workspaces).
  explicit GuardedWorkspace(std::size_t bytes);
  void* data() const { return base_.data() + kGuardWords; }
  std::size_t bytes() const { return bytes_; }
  //! "" if both guard bands are intact, else where the overrun is.
  std::string explain_overrun(cudaStream_t stream) const;
  //! The same in two steps: enqueue the two guard bands' scans, then explain once they are read.
  int scan_guards(Scans& scans) const;  // the first of two slots
  std::string explain_overrun(Scans& scans, int first_slot) const;

 private:
  std::size_t bytes_, words_;  // words_: the workspace in 4-byte words, rounded up
  SharedBuffer<std::uint32_t> base_;
};

}  // namespace workbook
