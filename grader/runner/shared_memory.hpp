// Device memory that the judge (the process that checks a chapter) shares with the runner (the
// process that runs the chapter's code): each buffer a physical allocation of the CUDA driver's
// virtual-memory API, exported as a POSIX file descriptor that the runner maps at an address of
// its own. The runner sees only the buffers the judge hands it. A mapping the runner keeps after
// the judge freed a buffer holds that buffer's memory alive, never memory the judge uses again;
// the judge's own buffers (expected sums, results) come from cudaMalloc, never from here.
//
// A freed buffer of up to kKeptLargest bytes is kept, still mapped in both processes, and handed
// out again for the next buffer of its size (up to kKeptTotal bytes kept in all, given back when a
// new buffer does not fit beside them): a test's
// buffers are made and freed by the hundred, and each new one costs the runner a round trip to
// map it and another to unmap it, each with a synchronization of the device. Only buffers a
// chapter may be handed are kept, and a kept one is handed to the chapter again, never to the
// judge's own use; every user fills or poisons a buffer before a call, as it must a new one.
//
// (Memory pools exported by descriptor were the first choice; on the H200 with driver 580.159.04
// a runner that imports an allocation of 8.6 GB from one dies of SIGSEGV inside the driver, with
// or without the sandbox, while 5 GB works; the virtual-memory API maps 8.6 GB.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include <cuda_runtime_api.h>

namespace workbook {

//! The judge's side.
class SharedMemory {
 public:
  struct Allocation {
    std::uint64_t id = 0;
    char* base = nullptr;
    std::size_t bytes = 0;          // as asked for
    std::size_t mapped = 0;         // rounded up to the allocation granularity
    unsigned long long handle = 0;  // CUmemGenericAllocationHandle
    int device = 0;                 // the GPU it lives on (the current device when it was allocated)
  };

  //! This process's shared memory, or null when none was set up (the chapter's code is linked in).
  static SharedMemory* get();
  //! Sets it up (checked on the current device; each allocation is made on the device current
  //! at the time); false, saying why, where the device or driver cannot share memory between
  //! processes (no POSIX file descriptor handles: WSL is one such system).
  static bool create(std::string* why);

  //! The allocation `p` points into, or null.
  const Allocation* find(const void* p) const;
  //! A new descriptor for an allocation, for the runner (the caller closes it); -1 on failure.
  int export_descriptor(const Allocation& a) const;
  //! Called with an allocation's id before it is freed, so the runner unmaps it first.
  void on_release(std::function<void(std::uint64_t)> hook) { release_hook_ = std::move(hook); }

  //! Device memory a chapter may be handed: shared when set up, else cudaMalloc.
  static void* allocate(std::size_t bytes);
  static void release(void* p);

  static constexpr std::size_t kKeptLargest = std::size_t(128) << 20;
  static constexpr std::size_t kKeptTotal = std::size_t(256) << 20;

 private:
  SharedMemory() = default;
  //! Unmaps an allocation for good, the runner's mapping first.
  void unmap(const Allocation& a);
  //! Unmaps every kept buffer: where a new one does not fit beside them.
  void free_kept();
  //! The allocation granularity of `device`, looked up once.
  std::size_t granularity(int device);
  std::map<int, std::size_t> granularity_;
  std::uint64_t next_id_ = 1;
  std::map<const char*, Allocation, std::greater<>> allocations_;  // by base, highest first
  std::multimap<std::pair<int, std::size_t>, Allocation> kept_;    // freed, by (device, mapped)
  std::size_t kept_bytes_ = 0;
  std::function<void(std::uint64_t)> release_hook_;
};

//! An owning allocation of `count` elements of T that the chapter may be handed.
template <class T>
class SharedBuffer {
 public:
  explicit SharedBuffer(std::size_t count) : count_(count) {
    if (count) data_ = static_cast<T*>(SharedMemory::allocate(count * sizeof(T)));
  }
  SharedBuffer(const SharedBuffer&) = delete;
  SharedBuffer& operator=(const SharedBuffer&) = delete;
  ~SharedBuffer() {
    if (data_) SharedMemory::release(data_);
  }
  T* data() const { return data_; }
  std::size_t size() const { return count_; }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

//! The runner's side: the judge's buffers it was asked to map.
class ImportedMemory {
 public:
  //! Maps `mapped` bytes of the allocation behind `descriptor` (which it closes), on `device`;
  //! null, saying why, on failure.
  char* map(std::uint64_t id, int descriptor, std::size_t mapped, int device, std::string* why);
  //! The device of mapping `id` (0 if none).
  int device(std::uint64_t id) const;
  void unmap(std::uint64_t id);
  //! The mapping of `id`, or null.
  char* pointer(std::uint64_t id) const;

 private:
  struct Mapping {
    char* base = nullptr;
    std::size_t bytes = 0;
    unsigned long long handle = 0;
    int device = 0;
  };
  std::map<std::uint64_t, Mapping> mapped_;
};

//! Orders work across the two processes on the GPU, with no wait on the host: the judge's stream
//! writes a rising value to a word of shared memory once its poison, fingerprints and inputs are
//! enqueued, and the chapter's streams wait for that value before its calls. Without it the judge
//! waited for its stream before every call, and beside other processes each such wait is a time
//! slice of the GPU. (CUDA's interprocess events would need a /dev/shm shared by both processes;
//! the sandbox gives the chapter a private one.)
struct GpuOrder {
  //! Whether the current device and driver can (stream memory operations).
  static bool available(std::string* why);
  //! Enqueues `*word = value` on `stream`, after everything enqueued before it.
  static bool write(cudaStream_t stream, void* word, std::uint64_t value, std::string* why);
  //! Enqueues a wait on `stream` until `*word >= value`.
  static bool wait(cudaStream_t stream, const void* word, std::uint64_t value, std::string* why);
};

}  // namespace workbook
