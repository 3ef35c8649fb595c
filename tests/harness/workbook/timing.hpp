// Timing kernels with CUDA events: warm-up, then the median of many runs.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include <cuda_runtime.h>

namespace workbook {

//! Times one piece of work on a stream between a pair of CUDA events.
class EventPair {
 public:
  EventPair();
  ~EventPair();
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  //! Enqueues `work` between the events and waits for it: its milliseconds.
  double time_ms(const std::function<void()>& work, cudaStream_t stream);

 private:
  cudaEvent_t start_{}, stop_{};
};

struct Timing {
  std::vector<double> samples_ms;
  double median_ms() const;
  //! Input bytes over the median time, in GB/s (10^9 bytes per second).
  double gbps(std::size_t bytes) const;
};

//! Runs `work` (which enqueues on `stream`) `warmup` times untimed, then
//! `reps` times, each between a pair of events.
Timing time_on_stream(const std::function<void()>& work, cudaStream_t stream, int warmup = 3,
                      int reps = 30);

//! The device's streaming-read ceiling in GB/s, measured on `n` floats at
//! `data` (n >= 4 x L2 for a memory figure): a kernel that only loads
//! (16-byte loads, several in flight per thread, a few grid sizes tried) and
//! keeps the best median.
double streaming_read_gbps(const float* data, std::size_t n, cudaStream_t stream);

}  // namespace workbook
