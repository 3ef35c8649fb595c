// The ladder benchmark: every reference chapter, the streaming-read ceiling
// and cub::DeviceReduce::Sum, measured in one process on the same data.
//
//   workbook_bench [results-dir]     writes ladder.csv, sweep.csv, floor.csv, bits.csv and device.json there
//
// The ladder (block passes V0-V7 at n = 2^27, and beside them the whole reductions that are
// judged against the ceiling there: CUB, chapter 15 and CUB's reproducible gpu_to_gpu mode):
// bytes = n x 4 read;
// GB/s = bytes / median time of 30 CUDA-event timings after 3 warm-ups;
// 2^27 floats = 512 MB, over 8x the H200's L2.
// The sweep (whole reductions 08-15 and CUB, n = 2^10 .. 2^30): microseconds
// per call, timed back to back: 20 calls between one pair of events, divided
// by 20, median of 15 such timings (a single call between its own events
// would add the events' own cost, which dominates below 2^22). CUB as its users call it: `cub`
// with an int item count (below 2^31, as every size here), `cub_size_t` with a 64-bit count
// (another code path; which is faster at small n varies). `*_graph`: the same 20 calls captured
// once in a CUDA graph and launched as one.
// The floor (floor.csv), in the same run and timed the same way: an empty kernel launched back to
// back (<<<1, 32>>> and a grid of two blocks per SM), a 4-byte memset plus the empty kernel, and
// the empty kernel in a graph, and through cudaLaunchKernelEx; sweep.csv gives every call as a
// multiple of the empty <<<1, 32>>> launch timed just before that size (x_empty).
// The bits (chapter 15's lesson): every whole reduction and CUB on one input, 2^20 + 12345
// floats, the result's bits beside the correctly rounded sum.
// CUB's gpu_to_gpu mode is in all three when the build was given CCCL 3.1+ headers
// (bench/CMakeLists.txt: WORKBOOK_CCCL_WHEEL): CUDA 13.0's own CCCL 3.0 does not have it.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <cub/device/device_reduce.cuh>
#include <nlohmann/json.hpp>

#if WORKBOOK_CUB_GPU_TO_GPU
#include "cub_gpu_to_gpu.hpp"
#endif
#include "judge/device.hpp"
#include "judge/exact_sum.hpp"
#include "judge/inputs.hpp"
#include "judge/manifest.hpp"
#include "judge/names.hpp"
#include "judge/timing.hpp"
#include "judge/verify.hpp"
#include "runner/registry.hpp"

namespace {

using namespace workbook;

// The whole reduction timed in the ladder beside CUB: chapter 15's target is a fraction of the
// streaming-read ceiling at 2^27. And the name of CUB's reproducible mode in the results.
constexpr const char* kReproducible = "15_reproducible";
#if WORKBOOK_CUB_GPU_TO_GPU
constexpr const char* kCubGpuToGpu = "cub_gpu_to_gpu";
#endif

struct Row {
  std::string chapter, version, title;
  std::size_t n;
  double gbps;
};

// The driver's own version (580.159.04): the runtime knows only the CUDA version it supports.
std::string driver_version() {
  FILE* p = popen("nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null", "r");
  if (!p) return "unknown";
  char buf[64] = {};
  const bool got = std::fgets(buf, sizeof buf, p) != nullptr;
  pclose(p);
  std::string v = got ? buf : "";
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
  return v.empty() ? "unknown" : v;
}

__global__ void empty_kernel() {}

// Captures `calls` enqueues of `call` on `stream` into an executable graph (null, having said
// why, when the calls cannot be captured).
cudaGraphExec_t capture(const std::function<void()>& call, int calls, cudaStream_t stream, const std::string& name) {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) return nullptr;
  for (int k = 0; k < calls; ++k) call();
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  if (ended != cudaSuccess || cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) {
    fmt::print(stderr, "{}: cannot be captured in a CUDA graph ({}); no graph row\n", name,
               cudaGetErrorString(cudaGetLastError()));
    if (graph) cudaGraphDestroy(graph);
    return nullptr;
  }
  cudaGraphDestroy(graph);
  return exec;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string out_dir = argc > 1 ? argv[1] : ".";
  std::filesystem::create_directories(out_dir);  // a results folder that is not there yet
  std::string why;
  if (!device_available(&why)) {
    fmt::print("SKIPPED: no CUDA device: {}\n", why);
    return names::kNoDeviceExit;
  }
  const Manifest manifest = load_manifest(WORKBOOK_MANIFEST);
  const DeviceInfo info = device_info();
  cudaStream_t stream;
  WORKBOOK_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  const std::size_t n = kTimedElements;
  const std::size_t bytes = n * sizeof(float);
  const std::vector<float> host = random_input(n, 2026);
  const SumCheck check = reference_sum(host.data(), n);
  GuardedInput input(n, 0);
  input.upload(host, stream);

  const double ceiling = streaming_read_gbps(input.data(), n, stream);
  std::vector<Row> rows;
  DeviceBuffer<float> partials(partials_capacity(n));
  for (const Entry& e : all_entries()) {
    if (std::string(e.subject) != "reference" || e.kind != ChapterKind::block_pass) continue;
    const ChapterSpec* spec = manifest.find(e.chapter);
    const auto run = [&] { return e.block_pass(input.data(), n, partials.data(), partials.size(), stream); };
    const std::size_t count = run();
    std::vector<float> p(count);
    WORKBOOK_CUDA_CHECK(
        cudaMemcpyAsync(p.data(), partials.data(), count * sizeof(float), cudaMemcpyDeviceToHost, stream));
    WORKBOOK_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (!check.passes(sum_in_double(p))) {
      fmt::print(stderr, "{}: wrong sum, {}\n", e.chapter, check.describe(sum_in_double(p)));
      return 1;
    }
    rows.push_back(
        {e.chapter, spec ? spec->version : "?", spec ? spec->title : "", n, time_on_stream(run, stream).gbps(bytes)});
  }

  // Whole reductions to one float beside the block passes: CUB (its temporary storage allocated
  // once), chapter 15 and CUB's gpu_to_gpu mode, each checked first.
  DeviceBuffer<float> total(1);
  std::size_t temp_bytes = 0;
  WORKBOOK_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, input.data(), total.data(), n, stream));
  DeviceBuffer<unsigned char> temp(temp_bytes);
  const auto whole = [&](const std::string& chapter, const std::string& version, const std::string& title,
                         const std::function<void()>& sum) {
    sum();
    float got = 0;
    WORKBOOK_CUDA_CHECK(cudaMemcpyAsync(&got, total.data(), sizeof got, cudaMemcpyDeviceToHost, stream));
    WORKBOOK_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (!check.passes(got)) fmt::print(stderr, "{}: wrong sum, {}\n", chapter, check.describe(got));
    rows.push_back({chapter, version, title, n, time_on_stream(sum, stream).gbps(bytes)});
  };
  static_assert(kTimedElements < (std::size_t(1) << 31), "CUB's int item count holds the ladder's n");
  whole("cub", "CUB", "cub::DeviceReduce::Sum, int item count (whole reduction)", [&] {
    WORKBOOK_CUDA_CHECK(
        cub::DeviceReduce::Sum(temp.data(), temp_bytes, input.data(), total.data(), static_cast<int>(n), stream));
  });
  whole("cub_size_t", "CUB", "cub::DeviceReduce::Sum, 64-bit item count (whole reduction)", [&] {
    WORKBOOK_CUDA_CHECK(cub::DeviceReduce::Sum(temp.data(), temp_bytes, input.data(), total.data(), n, stream));
  });
  std::unique_ptr<DeviceBuffer<unsigned char>> reproducible_ws;
  if (const Entry* e = find_entry(kReproducible, "reference")) {
    const ChapterSpec* spec = manifest.find(e->chapter);
    reproducible_ws = std::make_unique<DeviceBuffer<unsigned char>>(std::max<std::size_t>(e->workspace_bytes(n), 1));
    WORKBOOK_CUDA_CHECK(cudaMemset(reproducible_ws->data(), 0, reproducible_ws->size()));
    void* ws = reproducible_ws->data();
    whole(e->chapter, spec ? spec->version : "?", spec ? spec->title : "",
          [&, e, ws] { e->reduce(input.data(), n, total.data(), ws, stream); });
  }
#if WORKBOOK_CUB_GPU_TO_GPU
  whole(kCubGpuToGpu, "CUB g2g",
        fmt::format("cub::DeviceReduce::Sum, gpu_to_gpu determinism (CUB {})", bench::cub_gpu_to_gpu_version()),
        [&] { WORKBOOK_CUDA_CHECK(bench::cub_gpu_to_gpu_sum(input.data(), n, total.data(), stream)); });
#endif

  // The sweep: whole reductions against CUB, one input of 2^30 floats whose
  // prefixes are the inputs of each size.
  const std::size_t big = std::size_t(1) << 30;
  std::vector<float> big_host = random_input(big, 7);
  GuardedInput big_input(big, 0);
  big_input.upload(big_host, stream);
  std::vector<std::pair<std::size_t, SumCheck>> sizes;
  {
    SumCheck running;
    std::size_t next = 1024;
    for (std::size_t i = 0; i < big; ++i) {
      running.reference += big_host[i];
      running.sum_abs += std::fabs(big_host[i]);
      if (i + 1 == next) {
        SumCheck c = running;
        c.tolerance = sum_tolerance(next, c.sum_abs);
        sizes.emplace_back(next, c);
        next *= 4;
      }
    }
  }
  const std::size_t bits_n = (std::size_t(1) << 20) + 12345;
  const float exact_bits_sum = exact_sum_rounded(big_host.data(), bits_n);
  big_host.clear();
  big_host.shrink_to_fit();
  constexpr int kBackToBack = 20;
  struct Strategy {
    std::string name;
    std::function<void(std::size_t)> call;  // enqueue one whole reduction of the first n
  };
  std::vector<Strategy> strategies;
  std::vector<std::unique_ptr<DeviceBuffer<unsigned char>>> workspaces;
  for (const Entry& e : all_entries()) {
    if (std::string(e.subject) != "reference" || e.kind != ChapterKind::full) continue;
    workspaces.push_back(
        std::make_unique<DeviceBuffer<unsigned char>>(std::max<std::size_t>(e.workspace_bytes(big), 1)));
    WORKBOOK_CUDA_CHECK(cudaMemset(workspaces.back()->data(), 0, workspaces.back()->size()));
    void* ws = workspaces.back()->data();
    strategies.push_back(
        {e.chapter, [&, e, ws](std::size_t m) { e.reduce(big_input.data(), m, total.data(), ws, stream); }});
  }
  std::size_t big_temp_bytes = 0;
  WORKBOOK_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, big_temp_bytes, big_input.data(), total.data(), big, stream));
  DeviceBuffer<unsigned char> big_temp(big_temp_bytes);
  // As CUB's users call it: an int count where n fits (every n of the sweep), and the 64-bit path.
  strategies.push_back({"cub", [&](std::size_t m) {
                          std::size_t bytes_needed = big_temp_bytes;
                          if (m < (std::size_t(1) << 31)) {
                            WORKBOOK_CUDA_CHECK(cub::DeviceReduce::Sum(big_temp.data(), bytes_needed, big_input.data(),
                                                                       total.data(), static_cast<int>(m), stream));
                          } else {
                            WORKBOOK_CUDA_CHECK(cub::DeviceReduce::Sum(big_temp.data(), bytes_needed, big_input.data(),
                                                                       total.data(), m, stream));
                          }
                        }});
  strategies.push_back({"cub_size_t", [&](std::size_t m) {
                          std::size_t bytes_needed = big_temp_bytes;
                          WORKBOOK_CUDA_CHECK(cub::DeviceReduce::Sum(big_temp.data(), bytes_needed, big_input.data(),
                                                                     total.data(), m, stream));
                        }});
#if WORKBOOK_CUB_GPU_TO_GPU
  strategies.push_back({kCubGpuToGpu, [&](std::size_t m) {
                          WORKBOOK_CUDA_CHECK(bench::cub_gpu_to_gpu_sum(big_input.data(), m, total.data(), stream));
                        }});
#endif
  {
    // The same input through every strategy: the bits of each result.
    std::ofstream bits(out_dir + "/bits.csv");
    bits << "strategy,n,bits,value\n";
    auto line = [&](const std::string& name, float v) {
      std::uint32_t u = 0;
      std::memcpy(&u, &v, sizeof u);
      bits << fmt::format("{},{},0x{:08x},{:.9g}\n", name, bits_n, u, v);
    };
    for (const Strategy& st : strategies) {
      st.call(bits_n);
      float got = 0;
      WORKBOOK_CUDA_CHECK(cudaMemcpyAsync(&got, total.data(), sizeof got, cudaMemcpyDeviceToHost, stream));
      WORKBOOK_CUDA_CHECK(cudaStreamSynchronize(stream));
      line(st.name, got);
    }
    line("exact", exact_bits_sum);
  }
  // Microseconds per call, timed back to back (kBackToBack calls between one pair of events).
  const auto per_call_us = [&](const std::function<void()>& call) {
    const Timing t = time_on_stream(
        [&] {
          for (int k = 0; k < kBackToBack; ++k) call();
        },
        stream, 2, 15);
    return 1000.0 * t.median_ms() / kBackToBack;
  };
  const auto graph_us = [&](cudaGraphExec_t exec) {  // one graph of kBackToBack calls
    const Timing t = time_on_stream([&] { WORKBOOK_CUDA_CHECK(cudaGraphLaunch(exec, stream)); }, stream, 2, 15);
    return 1000.0 * t.median_ms() / kBackToBack;
  };
  // The floor: what a launch costs with nothing to do, timed as the sweep's calls are.
  const unsigned full_grid = 2 * static_cast<unsigned>(info.multiprocessors);
  const auto launch_empty = [&] { empty_kernel<<<1, 32, 0, stream>>>(); };
  std::vector<std::pair<std::string, double>> floor_rows;
  floor_rows.emplace_back("empty_1x32", per_call_us(launch_empty));
  floor_rows.emplace_back("empty_grid", per_call_us([&] { empty_kernel<<<full_grid, 256, 0, stream>>>(); }));
  // The same empty kernel through cudaLaunchKernelEx, the launch path of chapters 13 and 14.
  floor_rows.emplace_back("empty_1x32_ex", per_call_us([&] {
                            cudaLaunchConfig_t config = {};
                            config.gridDim = dim3(1);
                            config.blockDim = dim3(32);
                            config.stream = stream;
                            cudaLaunchKernelEx(&config, empty_kernel);
                          }));
  floor_rows.emplace_back("memset_empty", per_call_us([&] {
                            WORKBOOK_CUDA_CHECK(cudaMemsetAsync(total.data(), 0, sizeof(float), stream));
                            launch_empty();
                          }));
  if (cudaGraphExec_t g = capture(launch_empty, kBackToBack, stream, "empty")) {
    floor_rows.emplace_back("empty_1x32_graph", graph_us(g));
    cudaGraphExecDestroy(g);
  }
  WORKBOOK_CUDA_CHECK(cudaGetLastError());
  fmt::print("\nthe floor, microseconds per call (back to back)\n");
  for (const auto& [what, us] : floor_rows) fmt::print("  {:<18} {:>8.2f}\n", what, us);
  // The strategies also timed as a graph of the 20 calls: the single-launch chapters and CUB.
  const std::vector<std::string> graphed = {"11_last_block", "13_clusters", "14_pdl", "cub"};

  std::ofstream sweep(out_dir + "/sweep.csv");
  sweep << "strategy,n,us_per_call,gbps,x_empty\n";
  fmt::print("\nwhole reductions, microseconds per call (back to back)\n{:>12}", "n");
  for (const Strategy& st : strategies) fmt::print(" {:>15}", st.name);
  for (const Strategy& st : strategies) {
    if (std::count(graphed.begin(), graphed.end(), st.name)) fmt::print(" {:>15}", st.name + "_graph");
  }
  fmt::print("\n");
  for (const auto& size : sizes) {
    const std::size_t m = size.first;
    const SumCheck& check = size.second;
    // The empty launch again just before each size (empty_1x32_before_<n>): each row's x_empty
    // is against the floor of its own moment, and a floor that drifts shows in floor.csv.
    const double empty_us = per_call_us(launch_empty);
    floor_rows.emplace_back(fmt::format("empty_1x32_before_{}", m), empty_us);
    // One row of sweep.csv; `sum` enqueued once first, its result checked against the reference.
    const auto row = [&](const std::string& name, const std::function<void()>& sum,
                         const std::function<double()>& time_us) {
      sum();
      float got = 0;
      WORKBOOK_CUDA_CHECK(cudaMemcpyAsync(&got, total.data(), sizeof got, cudaMemcpyDeviceToHost, stream));
      WORKBOOK_CUDA_CHECK(cudaStreamSynchronize(stream));
      if (!check.passes(got)) {
        fmt::print(stderr, "\n{} at n = {}: wrong sum, {}\n", name, m, check.describe(got));
        return false;
      }
      const double us = time_us();
      fmt::print(" {:>15.2f}", us);
      sweep << fmt::format("{},{},{:.3f},{:.1f},{:.3f}\n", name, m, us, m * sizeof(float) / (us * 1e3), us / empty_us);
      return true;
    };
    fmt::print("{:>12}", fmt::format("2^{}", int(std::log2(double(m)))));
    for (const Strategy& st : strategies) {
      const auto call = [&] { st.call(m); };
      if (!row(st.name, call, [&] { return per_call_us(call); })) return 1;
    }
    for (const Strategy& st : strategies) {
      if (!std::count(graphed.begin(), graphed.end(), st.name)) continue;
      const std::string name = st.name + "_graph";
      cudaGraphExec_t g = capture([&] { st.call(m); }, kBackToBack, stream, name);
      if (!g) continue;
      const bool ok = row(
          name, [&] { WORKBOOK_CUDA_CHECK(cudaGraphLaunch(g, stream)); }, [&] { return graph_us(g); });
      cudaGraphExecDestroy(g);
      if (!ok) return 1;
    }
    fmt::print("\n");
  }

  {
    std::ofstream floor(out_dir + "/floor.csv");
    floor << "what,us_per_call\n";
    for (const auto& [what, us] : floor_rows) floor << fmt::format("{},{:.3f}\n", what, us);
  }

  char date[16];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  fmt::print("{} ({} SMs, {} MB L2), driver CUDA {}, runtime {}, {}\n", info.name, info.multiprocessors,
             info.l2_bytes >> 20, version_string(info.driver_version), version_string(info.runtime_version), date);
  fmt::print("streaming-read ceiling at n = 2^27: {:.0f} GB/s\n\n", ceiling);
  fmt::print("{:<18} {:<8} {:>10} {:>10}\n", "chapter", "version", "GB/s", "% ceiling");
  std::ofstream csv(out_dir + "/ladder.csv");
  csv << "chapter,version,n,gbps,percent_of_ceiling\n";
  for (const Row& r : rows) {
    fmt::print("{:<18} {:<8} {:>10.0f} {:>9.1f}%\n", r.chapter, r.version, r.gbps, 100 * r.gbps / ceiling);
    csv << fmt::format("{},{},{},{:.1f},{:.1f}\n", r.chapter, r.version, r.n, r.gbps, 100 * r.gbps / ceiling);
  }
  csv << fmt::format("ceiling,read,{},{:.1f},100.0\n", n, ceiling);
  const nlohmann::json device = {{"gpu", info.name},
                                 {"multiprocessors", info.multiprocessors},
                                 {"l2_mb", info.l2_bytes >> 20},
                                 {"driver", driver_version()},
                                 {"driver_cuda", version_string(info.driver_version)},
                                 {"runtime_cuda", version_string(info.runtime_version)},
                                 {"date", date},
                                 {"ceiling_gbps", ceiling}};
  std::ofstream(out_dir + "/device.json") << device.dump(2) << "\n";
  return 0;
}
