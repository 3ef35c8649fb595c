#include "sandbox/gpu_memory.hpp"

#include <algorithm>
#include <fstream>
#include <string>

#include <dirent.h>
#include <dlfcn.h>

#include <fmt/format.h>

namespace workbook::gpu_memory {
namespace {

// NVML's types and calls that this file uses (nvml.h; the ABI is stable across drivers).
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
struct nvmlProcessInfo_t {  // nvmlProcessInfo_v2_t, as _v2 and _v3 of the call below fill it
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
constexpr nvmlReturn_t kSuccess = 0, kInsufficientSize = 7;
constexpr unsigned long long kNotAvailable = ~0ull;

struct Nvml {
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*count)(unsigned int*) = nullptr;
  nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*processes)(nvmlDevice_t, unsigned int*, nvmlProcessInfo_t*) = nullptr;
  std::string why;
};

const Nvml& nvml() {
  static const Nvml n = [] {
    Nvml m;
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      m.why = "NVML (libnvidia-ml.so.1, part of the NVIDIA driver) is not here";
      return m;
    }
    m.init = reinterpret_cast<decltype(m.init)>(dlsym(lib, "nvmlInit_v2"));
    m.count = reinterpret_cast<decltype(m.count)>(dlsym(lib, "nvmlDeviceGetCount_v2"));
    m.handle = reinterpret_cast<decltype(m.handle)>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
    m.processes = reinterpret_cast<decltype(m.processes)>(dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v3"));
    if (!m.processes) {
      m.processes = reinterpret_cast<decltype(m.processes)>(dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v2"));
    }
    if (!m.init || !m.count || !m.handle || !m.processes) {
      m.why = "this driver's NVML lacks nvmlDeviceGetComputeRunningProcesses_v2";
      m.processes = nullptr;
    } else if (const nvmlReturn_t r = m.init(); r != kSuccess) {
      m.why = fmt::format("nvmlInit failed (NVML error {})", r);
      m.processes = nullptr;
    }
    return m;
  }();
  return n;
}

}  // namespace

std::vector<pid_t> process_tree(pid_t root) {
  std::vector<pid_t> tree = {root};
  for (std::size_t i = 0; i < tree.size() && tree.size() < 100000; ++i) {
    const std::string tasks = fmt::format("/proc/{}/task", tree[i]);
    DIR* dir = opendir(tasks.c_str());
    if (!dir) continue;
    while (const dirent* t = readdir(dir)) {
      if (t->d_name[0] == '.') continue;
      std::ifstream in(tasks + "/" + t->d_name + "/children");
      for (pid_t child; in >> child;) {
        if (std::find(tree.begin(), tree.end(), child) == tree.end()) tree.push_back(child);
      }
    }
    closedir(dir);
  }
  return tree;
}

std::optional<std::uint64_t> held_by(const std::vector<pid_t>& pids, std::string* why) {
  const Nvml& n = nvml();
  if (!n.processes) {
    *why = n.why;
    return std::nullopt;
  }
  unsigned int devices = 0;
  if (n.count(&devices) != kSuccess) {
    *why = "NVML could not count the GPUs";
    return std::nullopt;
  }
  std::uint64_t total = 0;
  for (unsigned int d = 0; d < devices; ++d) {
    nvmlDevice_t device = nullptr;
    if (n.handle(d, &device) != kSuccess) continue;
    std::vector<nvmlProcessInfo_t> list(64);
    unsigned int count = static_cast<unsigned int>(list.size());
    nvmlReturn_t r = n.processes(device, &count, list.data());
    if (r == kInsufficientSize) {
      list.resize(count + 16);
      count = static_cast<unsigned int>(list.size());
      r = n.processes(device, &count, list.data());
    }
    if (r != kSuccess) {
      *why = fmt::format("NVML could not list the processes on GPU {} (NVML error {})", d, r);
      return std::nullopt;
    }
    for (unsigned int i = 0; i < count; ++i) {
      if (std::find(pids.begin(), pids.end(), static_cast<pid_t>(list[i].pid)) == pids.end()) continue;
      if (list[i].usedGpuMemory == kNotAvailable) {
        *why = "NVML does not count each process's memory on this machine";
        return std::nullopt;
      }
      total += list[i].usedGpuMemory;
    }
  }
  return total;
}

}  // namespace workbook::gpu_memory
