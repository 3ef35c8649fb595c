// The ladder benchmark: every reference chapter, the streaming-read ceiling
// and cub::DeviceReduce::Sum, measured in one process on the same data.
//
//   workbook_bench [results-dir]     writes ladder.csv and device.json there
//
// Bytes = n x 4 read; GB/s = bytes / median time of 30 CUDA-event timings
// after 3 warm-ups; n = 2^27 floats (512 MB, over 8x the H200's L2).
#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include <cub/device/device_reduce.cuh>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "workbook/device.hpp"
#include "workbook/inputs.hpp"
#include "workbook/manifest.hpp"
#include "workbook/registry.hpp"
#include "workbook/timing.hpp"
#include "workbook/verify.hpp"

namespace {

using namespace workbook;

struct Row {
  std::string chapter, version, title;
  std::size_t n;
  double gbps;
};

}  // namespace

int main(int argc, char** argv) {
  const std::string out_dir = argc > 1 ? argv[1] : ".";
  std::string why;
  if (!device_available(&why)) {
    fmt::print("SKIPPED: no CUDA device: {}\n", why);
    return 77;
  }
  const Manifest manifest = load_manifest(WORKBOOK_MANIFEST);
  const DeviceInfo info = device_info();
  cudaStream_t stream;
  WORKBOOK_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  const std::size_t n = std::size_t(1) << 27;
  const std::size_t bytes = n * sizeof(float);
  const std::vector<float> host = random_input(n, 2026);
  const SumCheck check = reference_sum(host.data(), n);
  GuardedInput input(n, 0);
  input.upload(host, stream);

  const double ceiling = streaming_read_gbps(input.data(), n, stream);
  std::vector<Row> rows;
  DeviceBuffer<float> partials(std::max<std::size_t>(n / 32, 65536));
  for (const Entry& e : all_entries()) {
    if (std::string(e.subject) != "reference" || e.kind != ChapterKind::block_pass) continue;
    const ChapterSpec* spec = manifest.find(e.chapter);
    const auto run = [&] { return e.block_pass(input.data(), n, partials.data(), partials.size(), stream); };
    const std::size_t count = run();
    std::vector<float> p(count);
    WORKBOOK_CUDA_CHECK(cudaMemcpyAsync(p.data(), partials.data(), count * sizeof(float),
                                        cudaMemcpyDeviceToHost, stream));
    WORKBOOK_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (!check.passes(sum_in_double(p))) {
      fmt::print(stderr, "{}: wrong sum, {}\n", e.chapter, check.describe(sum_in_double(p)));
      return 1;
    }
    rows.push_back({e.chapter, spec ? spec->version : "?", spec ? spec->title : "", n,
                    time_on_stream(run, stream).gbps(bytes)});
  }

  // CUB: the whole reduction to one float, its temporary storage allocated once.
  DeviceBuffer<float> total(1);
  std::size_t temp_bytes = 0;
  WORKBOOK_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, input.data(), total.data(), n, stream));
  DeviceBuffer<unsigned char> temp(temp_bytes);
  const auto cub_sum = [&] {
    WORKBOOK_CUDA_CHECK(cub::DeviceReduce::Sum(temp.data(), temp_bytes, input.data(), total.data(), n, stream));
  };
  cub_sum();
  float cub_total = 0;
  WORKBOOK_CUDA_CHECK(cudaMemcpyAsync(&cub_total, total.data(), sizeof cub_total, cudaMemcpyDeviceToHost, stream));
  WORKBOOK_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (!check.passes(cub_total)) fmt::print(stderr, "cub: wrong sum, {}\n", check.describe(cub_total));
  rows.push_back({"cub", "CUB", "cub::DeviceReduce::Sum (whole reduction)", n,
                  time_on_stream(cub_sum, stream).gbps(bytes)});

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
                                 {"driver_cuda", version_string(info.driver_version)},
                                 {"runtime_cuda", version_string(info.runtime_version)},
                                 {"date", date},
                                 {"ceiling_gbps", ceiling}};
  std::ofstream(out_dir + "/device.json") << device.dump(2) << "\n";
  return 0;
}
