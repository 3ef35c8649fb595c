#include "gpu.hpp"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <set>

#include <cuda_runtime.h>

#include <fmt/format.h>

#include "judge/device.hpp"
#include "text.hpp"

namespace grader {

std::vector<Gpu> find_gpus(const std::vector<int>& wanted, std::string* why) {
  std::vector<Gpu> gpus;
  if (!workbook::device_available(why)) return gpus;
  int count = 0;
  cudaGetDeviceCount(&count);
  std::vector<std::string> visible;
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) visible = split(v, ',');
  for (int i = 0; i < count; ++i) {
    if (!wanted.empty() && !std::count(wanted.begin(), wanted.end(), i)) continue;
    // The device's attributes, read without making it current: the grader holds no CUDA context
    // (and so no GPU memory) on any GPU; only the judges it starts do, on the GPU each tests.
    workbook::DeviceInfo d;
    try {
      d = workbook::device_properties(i);
    } catch (const std::exception&) {
      continue;
    }
    Gpu g;
    g.index = i;
    g.visible = i < static_cast<int>(visible.size()) ? visible[i] : std::to_string(i);
    g.summary = DeviceSummary{d.name, d.multiprocessors, workbook::version_string(d.driver_version),
                              workbook::version_string(d.runtime_version)};
    g.summary.compute_capability = d.compute_major * 10 + d.compute_minor;
    g.requirement_cc = g.summary.compute_capability;
    if (const char* cc = std::getenv("WORKBOOK_COMPUTE_CAPABILITY")) {
      const int pretend = std::atoi(cc);
      if (pretend > 0) g.requirement_cc = std::min(g.requirement_cc, pretend);
    }
    gpus.push_back(g);
  }
  if (gpus.empty()) *why = "none of the GPUs asked for (--gpus) is visible";
  for (Gpu& g : gpus) {
    for (const Gpu& other : gpus) {
      if (other.index != g.index) g.peers.push_back(other.visible);
    }
  }
  return gpus;
}

std::string architectures(const std::vector<Gpu>& gpus) {
  std::set<int> ccs;
  for (const Gpu& g : gpus) ccs.insert(g.summary.compute_capability);
  std::string list;
  for (int cc : ccs) list += (list.empty() ? "" : ";") + fmt::format("{}-real", cc);
  if (list.empty()) {
    list = WORKBOOK_CUDA_ARCHITECTURES;
    std::replace(list.begin(), list.end(), ',', ';');
  }
  return list;
}

}  // namespace grader
