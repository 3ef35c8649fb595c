#include "judge/timing.hpp"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <utility>

#include "judge/device.hpp"
#include "runner/cuda_check.hpp"

namespace workbook {
namespace {

void warm_up(const std::function<void()>& work, cudaStream_t stream, int times) {
  for (int i = 0; i < times; ++i) work();
  WORKBOOK_CUDA_CHECK(cudaGetLastError());
  WORKBOOK_CUDA_CHECK(cudaStreamSynchronize(stream));
}

// Loads every float4 of the input and nothing else: `LoadsInFlight`
// independent 16-byte loads per thread per iteration keep enough bytes in
// flight to cover DRAM latency (Little's law). The store is never taken but
// keeps the loads alive.
template <int LoadsInFlight>
__global__ void streaming_read_kernel(const float4* in, std::size_t count, float* sink) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  float acc = 0.0f;
  for (; i + (LoadsInFlight - 1) * stride < count; i += LoadsInFlight * stride) {
    float4 v[LoadsInFlight];
#pragma unroll
    for (int k = 0; k < LoadsInFlight; ++k) v[k] = in[i + k * stride];
#pragma unroll
    for (int k = 0; k < LoadsInFlight; ++k) acc += v[k].x + v[k].y + v[k].z + v[k].w;
  }
  for (; i < count; i += stride) {
    const float4 v = in[i];
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == -1.0f) *sink = acc;
}

// One streaming read of `count` float4s by `grid` blocks of 256 threads, 4 or 8 loads in flight.
void launch_streaming_read(int loads, unsigned grid, const float4* in, std::size_t count, float* sink,
                           cudaStream_t stream) {
  if (loads == 4)
    streaming_read_kernel<4><<<grid, 256, 0, stream>>>(in, count, sink);
  else
    streaming_read_kernel<8><<<grid, 256, 0, stream>>>(in, count, sink);
}

// The grids the ceiling tries: blocks per SM.
constexpr int kCeilingBlocksPerSm[] = {4, 8, 16, 32};
constexpr int kCeilingLoads[] = {4, 8};

// Whether `shape` is one the screen tries.
bool is_screened_shape(CeilingShape shape) {
  return std::find(std::begin(kCeilingBlocksPerSm), std::end(kCeilingBlocksPerSm), shape.blocks_per_sm) !=
             std::end(kCeilingBlocksPerSm) &&
         std::find(std::begin(kCeilingLoads), std::end(kCeilingLoads), shape.loads) != std::end(kCeilingLoads);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : 0.5 * (v[mid - 1] + v[mid]);
}

}  // namespace

EventPair::EventPair() {
  WORKBOOK_CUDA_CHECK(cudaEventCreate(&start_));
  WORKBOOK_CUDA_CHECK(cudaEventCreate(&stop_));
}

EventPair::~EventPair() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
}

double EventPair::time_ms(const std::function<void()>& work, cudaStream_t stream) {
  WORKBOOK_CUDA_CHECK(cudaEventRecord(start_, stream));
  work();
  WORKBOOK_CUDA_CHECK(cudaGetLastError());
  WORKBOOK_CUDA_CHECK(cudaEventRecord(stop_, stream));
  WORKBOOK_CUDA_CHECK(cudaEventSynchronize(stop_));
  float ms = 0;
  WORKBOOK_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
  return ms;
}

double Timing::median_ms() const { return median(samples_ms); }

double Timing::gbps(std::size_t bytes) const {
  const double ms = median_ms();
  return ms > 0 ? static_cast<double>(bytes) / (ms * 1e6) : 0.0;
}

Timing time_on_stream(const std::function<void()>& work, cudaStream_t stream, int warmup, int reps) {
  warm_up(work, stream, warmup);
  EventPair events;
  Timing t;
  for (int r = 0; r < reps; ++r) t.samples_ms.push_back(events.time_ms(work, stream));
  return t;
}

double streaming_read_gbps(const float* data, std::size_t n, cudaStream_t stream) {
  // Callers pass a 16-byte aligned buffer; only whole float4s are read and counted.
  const auto* in = reinterpret_cast<const float4*>(data);
  const std::size_t count = n / 4;
  const std::size_t bytes = count * sizeof(float4);
  DeviceBuffer<float> sink(1);
  const DeviceInfo info = device_properties();
  double best = 0;
  for (int blocks_per_sm : kCeilingBlocksPerSm) {
    const unsigned grid = static_cast<unsigned>(blocks_per_sm * info.multiprocessors);
    for (int loads : kCeilingLoads) {
      const auto run = [&] { launch_streaming_read(loads, grid, in, count, sink.data(), stream); };
      best = std::max(best, time_on_stream(run, stream, 2, 20).gbps(bytes));
    }
  }
  return best;
}

double BatchTimes::per_call_s() const { return median(many) / std::max(calls, 1); }

double BatchTimes::fastest_per_call_s() const {
  return many.empty() ? 0 : *std::min_element(many.begin(), many.end()) / std::max(calls, 1);
}

double BatchTimes::spread() const {
  if (many.empty()) return 0;
  const auto [lo, hi] = std::minmax_element(many.begin(), many.end());
  const double m = median(many);
  return m > 0 ? (*hi - *lo) / m : 0;
}

double BatchTimes::middle_spread() const {
  if (many.size() < 4) return spread();
  std::vector<double> v = many;
  std::sort(v.begin(), v.end());
  const std::size_t quarter = v.size() / 4;
  const double middle = v[v.size() - 1 - quarter] - v[quarter];
  const double m = median(std::move(v));
  return m > 0 ? middle / m : 0;
}

Ceiling streaming_read_ceiling(const std::vector<const float*>& inputs, std::size_t n, cudaStream_t stream,
                               CeilingShape given, int rounds) {
  const std::size_t count = n / 4;  // whole float4s of 16-byte aligned inputs
  const std::size_t bytes = count * sizeof(float4);
  DeviceBuffer<float> sink(1);
  const DeviceInfo info = device_properties();
  // One batch: a launch per input with one configuration; its seconds.
  auto batch = [&](int blocks_per_sm, int loads) {
    const unsigned grid = static_cast<unsigned>(blocks_per_sm * info.multiprocessors);
    const auto start = std::chrono::steady_clock::now();
    for (const float* in : inputs) {
      launch_streaming_read(loads, grid, reinterpret_cast<const float4*>(in), count, sink.data(), stream);
    }
    WORKBOOK_CUDA_CHECK(cudaGetLastError());
    WORKBOOK_CUDA_CHECK(cudaStreamSynchronize(stream));
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const double batch_bytes = double(bytes) * inputs.size();
  Ceiling best;
  // A screen of every configuration (a warm-up and kScreenRounds batches each, their fastest), then
  // `rounds` batches of the fastest: 8 x 3 + 10 batches where every configuration measured in full
  // took 80. The GPU is held alone meanwhile (the timed test's window), so fewer is cheaper for
  // every other test process. A shape given (the reference's screen's winner, passed on by the
  // grader) is measured as the winner is, without the screen: 10 batches.
  constexpr int kScreenRounds = 2;
  const bool screen = !is_screened_shape(given);
  int best_blocks = screen ? kCeilingBlocksPerSm[0] : given.blocks_per_sm;
  int best_loads = screen ? kCeilingLoads[0] : given.loads;
  double best_screen = 0;
  if (screen) {
    for (int blocks_per_sm : kCeilingBlocksPerSm) {
      for (int loads : kCeilingLoads) {
        batch(blocks_per_sm, loads);  // warm-up
        double fastest = 1e30;
        for (int r = 0; r < kScreenRounds; ++r) fastest = std::min(fastest, batch(blocks_per_sm, loads));
        best.fastest_batch_gbps = std::max(best.fastest_batch_gbps, batch_bytes / fastest / 1e9);
        if (batch_bytes / fastest > best_screen) {
          best_screen = batch_bytes / fastest;
          best_blocks = blocks_per_sm;
          best_loads = loads;
        }
      }
    }
  }
  batch(best_blocks, best_loads);  // warm-up
  BatchTimes t;
  t.calls = static_cast<int>(inputs.size());
  for (int r = 0; r < rounds; ++r) t.many.push_back(batch(best_blocks, best_loads));
  best.gbps = bytes / t.per_call_s() / 1e9;
  best.spread = t.spread();
  best.middle_spread = t.middle_spread();
  best.fastest_batch_gbps = std::max(best.fastest_batch_gbps, bytes / t.fastest_per_call_s() / 1e9);
  best.shape = {best_blocks, best_loads};
  best.screened = screen;
  return best;
}

}  // namespace workbook
