#include "runner/shared_memory.hpp"

#include <memory>

#include <cuda.h>  // the driver's types; its functions come from cudaGetDriverEntryPoint (no libcuda link)
#include <cuda_runtime.h>
#include <unistd.h>

#include <fmt/format.h>

#include "runner/cuda_check.hpp"

namespace workbook {
namespace {

// The driver's virtual-memory functions, looked up through the runtime, so that no executable
// links libcuda (CI has no driver; the test programs must still start there and skip).
struct Driver {
  CUresult (*create)(CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*, unsigned long long) = nullptr;
  CUresult (*release)(CUmemGenericAllocationHandle) = nullptr;
  CUresult (*reserve)(CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long) = nullptr;
  CUresult (*free_address)(CUdeviceptr, size_t) = nullptr;
  CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long) = nullptr;
  CUresult (*unmap)(CUdeviceptr, size_t) = nullptr;
  CUresult (*set_access)(CUdeviceptr, size_t, const CUmemAccessDesc*, size_t) = nullptr;
  CUresult (*export_handle)(void*, CUmemGenericAllocationHandle, CUmemAllocationHandleType,
                            unsigned long long) = nullptr;
  CUresult (*import_handle)(CUmemGenericAllocationHandle*, void*, CUmemAllocationHandleType) = nullptr;
  CUresult (*granularity)(size_t*, const CUmemAllocationProp*, CUmemAllocationGranularity_flags) = nullptr;
  CUresult (*error_string)(CUresult, const char**) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  std::string missing;  // the functions it could not find
  // Stream memory operations (GpuOrder); not needed to share memory, so not in `missing`.
  CUresult (*write_value)(CUstream, CUdeviceptr, cuuint64_t, unsigned) = nullptr;
  CUresult (*wait_value)(CUstream, CUdeviceptr, cuuint64_t, unsigned) = nullptr;
  std::string missing_order;
};

template <class F>
void look_up(const char* name, F*& function, std::string& missing) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found{};
#if CUDART_VERSION >= 12050
  const cudaError_t err = cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &found);
#else
  const cudaError_t err = cudaGetDriverEntryPoint(name, &p, cudaEnableDefault, &found);
#endif
  if (err != cudaSuccess || found != cudaDriverEntryPointSuccess || !p) {
    cudaGetLastError();
    missing += (missing.empty() ? "" : ", ") + std::string(name);
    return;
  }
  function = reinterpret_cast<F*>(p);
}

const Driver& driver() {
  static const Driver d = [] {
    Driver d;
    look_up("cuMemCreate", d.create, d.missing);
    look_up("cuMemRelease", d.release, d.missing);
    look_up("cuMemAddressReserve", d.reserve, d.missing);
    look_up("cuMemAddressFree", d.free_address, d.missing);
    look_up("cuMemMap", d.map, d.missing);
    look_up("cuMemUnmap", d.unmap, d.missing);
    look_up("cuMemSetAccess", d.set_access, d.missing);
    look_up("cuMemExportToShareableHandle", d.export_handle, d.missing);
    look_up("cuMemImportFromShareableHandle", d.import_handle, d.missing);
    look_up("cuMemGetAllocationGranularity", d.granularity, d.missing);
    look_up("cuGetErrorString", d.error_string, d.missing);
    look_up("cuDeviceGet", d.device_get, d.missing);
    look_up("cuDeviceGetAttribute", d.attribute, d.missing);
    look_up("cuStreamWriteValue64", d.write_value, d.missing_order);
    look_up("cuStreamWaitValue64", d.wait_value, d.missing_order);
    return d;
  }();
  return d;
}

std::string text(CUresult r) {
  const char* s = nullptr;
  if (driver().error_string) driver().error_string(r, &s);
  return fmt::format("{} (CUresult {})", s ? s : "unknown error", static_cast<int>(r));
}

void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) throw std::runtime_error(fmt::format("{}: {}", what, text(r)));
}

CUmemAllocationProp properties(int device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return prop;
}

// Maps `handle` at a fresh address of `bytes`, readable and writable by `device`.
char* map_handle(CUmemGenericAllocationHandle handle, std::size_t bytes, int device) {
  const Driver& d = driver();
  CUdeviceptr address = 0;
  check(d.reserve(&address, bytes, 0, 0, 0), "cuMemAddressReserve");
  if (const CUresult r = d.map(address, bytes, 0, handle, 0); r != CUDA_SUCCESS) {
    d.free_address(address, bytes);
    check(r, "cuMemMap");
  }
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = device;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (const CUresult r = d.set_access(address, bytes, &access, 1); r != CUDA_SUCCESS) {
    d.unmap(address, bytes);
    d.free_address(address, bytes);
    check(r, "cuMemSetAccess");
  }
  return reinterpret_cast<char*>(address);
}

void unmap_handle(char* base, std::size_t bytes, CUmemGenericAllocationHandle handle) {
  const Driver& d = driver();
  const CUdeviceptr address = reinterpret_cast<CUdeviceptr>(base);
  d.unmap(address, bytes);
  d.free_address(address, bytes);
  d.release(handle);
}

std::unique_ptr<SharedMemory>& the_memory() {
  static std::unique_ptr<SharedMemory> memory;
  return memory;
}

}  // namespace

SharedMemory* SharedMemory::get() { return the_memory().get(); }

bool SharedMemory::create(std::string* why) {
  if (the_memory()) return true;
  int device = 0, vmm = 0, fd_handles = 0;
  WORKBOOK_CUDA_CHECK(cudaGetDevice(&device));
  const Driver& d = driver();
  if (!d.missing.empty()) {
    *why = "the CUDA driver lacks functions the judge needs to share memory: " + d.missing;
    return false;
  }
  CUdevice cu_device = 0;
  if (d.device_get(&cu_device, device) != CUDA_SUCCESS ||
      d.attribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, cu_device) != CUDA_SUCCESS ||
      d.attribute(&fd_handles, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, cu_device) !=
          CUDA_SUCCESS ||
      !vmm || !fd_handles) {
    *why =
        "this GPU's driver cannot share device memory with another process (no virtual memory management "
        "with POSIX file descriptor handles; WSL is one such system)";
    return false;
  }
  std::unique_ptr<SharedMemory> memory(new SharedMemory);
  try {
    memory->granularity(device);  // looked up once here, so a device that cannot say fails now
  } catch (const std::exception& e) {
    *why = e.what();
    return false;
  }
  the_memory() = std::move(memory);
  return true;
}

std::size_t SharedMemory::granularity(int device) {
  if (const auto it = granularity_.find(device); it != granularity_.end()) return it->second;
  const CUmemAllocationProp prop = properties(device);
  std::size_t g = 0;
  if (const CUresult r = driver().granularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM); r != CUDA_SUCCESS || !g) {
    throw CudaError(cudaErrorUnknown, fmt::format("cuMemGetAllocationGranularity on GPU {}: {}", device, text(r)));
  }
  return granularity_[device] = g;
}

const SharedMemory::Allocation* SharedMemory::find(const void* p) const {
  const char* c = static_cast<const char*>(p);
  const auto it = allocations_.lower_bound(c);  // the highest base <= p
  if (it == allocations_.end()) return nullptr;
  const Allocation& a = it->second;
  return c < a.base + a.mapped ? &a : nullptr;
}

int SharedMemory::export_descriptor(const Allocation& a) const {
  int fd = -1;
  if (driver().export_handle(&fd, a.handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) != CUDA_SUCCESS) return -1;
  return fd;
}

void* SharedMemory::allocate(std::size_t bytes) {
  SharedMemory* memory = get();
  if (!memory) {
    void* p = nullptr;
    WORKBOOK_CUDA_CHECK(cudaMalloc(&p, bytes));
    return p;
  }
  const Driver& d = driver();
  Allocation a;
  WORKBOOK_CUDA_CHECK(cudaGetDevice(&a.device));
  a.bytes = bytes;
  const std::size_t granularity = memory->granularity(a.device);
  a.mapped = (bytes + granularity - 1) / granularity * granularity;
  if (const auto kept = memory->kept_.find({a.device, a.mapped}); kept != memory->kept_.end()) {
    Allocation again = kept->second;  // its id too: the runner still maps it
    memory->kept_.erase(kept);
    memory->kept_bytes_ -= again.mapped;
    again.bytes = bytes;
    memory->allocations_[again.base] = again;
    return again.base;
  }
  const CUmemAllocationProp prop = properties(a.device);
  CUmemGenericAllocationHandle handle = 0;
  CUresult r = d.create(&handle, a.mapped, &prop, 0);
  if (r == CUDA_ERROR_OUT_OF_MEMORY && !memory->kept_.empty()) {
    memory->free_kept();  // the kept buffers give their memory back first
    r = d.create(&handle, a.mapped, &prop, 0);
  }
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {
    // Another process holds the memory: the running test is starved, not failed by the chapter.
    throw_out_of_memory(fmt::format("cuMemCreate of {} bytes: {}", a.mapped, text(r)));
  }
  if (r != CUDA_SUCCESS)
    throw CudaError(cudaErrorUnknown, fmt::format("cuMemCreate of {} bytes: {}", a.mapped, text(r)));
  a.id = memory->next_id_++;
  a.handle = handle;
  try {
    a.base = map_handle(handle, a.mapped, a.device);
  } catch (...) {
    d.release(handle);
    throw;
  }
  memory->allocations_[a.base] = a;
  return a.base;
}

void SharedMemory::unmap(const Allocation& a) {
  if (release_hook_) release_hook_(a.id);  // the runner unmaps it first
  unmap_handle(a.base, a.mapped, a.handle);
}

void SharedMemory::free_kept() {
  for (const auto& [size, a] : kept_) unmap(a);
  kept_.clear();
  kept_bytes_ = 0;
}

void SharedMemory::release(void* p) {
  SharedMemory* memory = get();
  if (!memory) {
    cudaFree(p);
    return;
  }
  const auto it = memory->allocations_.find(static_cast<const char*>(p));
  if (it == memory->allocations_.end()) return;
  const Allocation a = it->second;
  memory->allocations_.erase(it);
  {
    const DeviceScope on(a.device);
    cudaDeviceSynchronize();  // every stream of this process on its device may still be using it
  }
  if (a.mapped <= kKeptLargest && memory->kept_bytes_ + a.mapped <= kKeptTotal) {
    memory->kept_.emplace(std::make_pair(a.device, a.mapped), a);
    memory->kept_bytes_ += a.mapped;
    return;
  }
  memory->unmap(a);
}

char* ImportedMemory::map(std::uint64_t id, int descriptor, std::size_t mapped, int device, std::string* why) {
  if (const auto it = mapped_.find(id); it != mapped_.end()) {
    close(descriptor);
    return it->second.base;
  }
  const Driver& d = driver();
  if (!d.missing.empty()) {
    close(descriptor);
    *why = "the CUDA driver lacks " + d.missing;
    return nullptr;
  }
  CUmemGenericAllocationHandle handle = 0;
  const CUresult r = d.import_handle(&handle, reinterpret_cast<void*>(static_cast<std::intptr_t>(descriptor)),
                                     CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  close(descriptor);
  if (r != CUDA_SUCCESS) {
    *why = fmt::format("importing buffer {}: {}", id, text(r));
    return nullptr;
  }
  try {
    char* base = map_handle(handle, mapped, device);
    mapped_[id] = {base, mapped, handle, device};
    return base;
  } catch (const std::exception& e) {
    d.release(handle);
    *why = fmt::format("mapping buffer {}: {}", id, e.what());
    return nullptr;
  }
}

void ImportedMemory::unmap(std::uint64_t id) {
  const auto it = mapped_.find(id);
  if (it == mapped_.end()) return;
  {
    const DeviceScope on(it->second.device);
    cudaDeviceSynchronize();
  }
  unmap_handle(it->second.base, it->second.bytes, it->second.handle);
  mapped_.erase(it);
}

int ImportedMemory::device(std::uint64_t id) const {
  const auto it = mapped_.find(id);
  return it == mapped_.end() ? 0 : it->second.device;
}

char* ImportedMemory::pointer(std::uint64_t id) const {
  const auto it = mapped_.find(id);
  return it == mapped_.end() ? nullptr : it->second.base;
}

bool GpuOrder::available(std::string* why) {
  const Driver& d = driver();
  if (!d.missing_order.empty() || !d.device_get || !d.attribute) {
    *why = "the CUDA driver lacks " + (d.missing_order.empty() ? std::string("cuDeviceGetAttribute") : d.missing_order);
    return false;
  }
  // CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, by number: its name changed between CUDA 11
  // and 12 (_V2), and the value did not.
  constexpr auto k64BitMemOps = static_cast<CUdevice_attribute>(122);
  int device = 0, ops = 0;
  CUdevice cu_device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || d.device_get(&cu_device, device) != CUDA_SUCCESS ||
      d.attribute(&ops, k64BitMemOps, cu_device) != CUDA_SUCCESS) {
    cudaGetLastError();
    *why = "the driver could not say whether this GPU waits on memory values";
    return false;
  }
  if (!ops) {
    *why = "this GPU's driver has stream memory operations disabled";
    return false;
  }
  return true;
}

bool GpuOrder::write(cudaStream_t stream, void* word, std::uint64_t value, std::string* why) {
  // The default flags put a memory barrier before the write: what the stream wrote before it is
  // visible to whoever sees the value.
  const CUresult r = driver().write_value(reinterpret_cast<CUstream>(stream), reinterpret_cast<CUdeviceptr>(word),
                                          value, CU_STREAM_WRITE_VALUE_DEFAULT);
  if (r == CUDA_SUCCESS) return true;
  *why = "cuStreamWriteValue64: " + text(r);
  return false;
}

bool GpuOrder::wait(cudaStream_t stream, const void* word, std::uint64_t value, std::string* why) {
  const CUresult r = driver().wait_value(reinterpret_cast<CUstream>(stream), reinterpret_cast<CUdeviceptr>(word), value,
                                         CU_STREAM_WAIT_VALUE_GEQ);
  if (r == CUDA_SUCCESS) return true;
  *why = "cuStreamWaitValue64: " + text(r);
  return false;
}

}  // namespace workbook
