// Timing kernels with CUDA events: warm-up, then the median of many runs.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include <cuda_runtime.h>

#include "judge/ceiling_shape.hpp"

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
Timing time_on_stream(const std::function<void()>& work, cudaStream_t stream, int warmup = 3, int reps = 30);

//! The device's streaming-read ceiling in GB/s, measured on `n` floats at
//! `data` (n >= 4 x L2 for a memory figure): a kernel that only loads
//! (16-byte loads, several in flight per thread, a few grid sizes tried) and
//! keeps the best median.
double streaming_read_gbps(const float* data, std::size_t n, cudaStream_t stream);

//! Times taken by the host's clock around whole batches of calls, from handing them over to
//! knowing they finished: `many` for batches of `calls` calls, `one` for single calls.
struct BatchTimes {
  int calls = 0;
  std::vector<double> many;  // seconds, each of a whole batch of `calls` calls
  //! median(many) / calls: one call's share of a whole batch, the hand-off to the chapter's process
  //! and the wait for the device included. Nothing but the batch's calls themselves is timed, and no
  //! other time is subtracted, so a chapter that slows anything else (a single call, the calls it
  //! takes for correctness tests) gains nothing by it. The reference is timed the same way.
  double per_call_s() const;
  //! The fastest batch of `calls` calls divided by `calls`: hand-off and all.
  double fastest_per_call_s() const;
  //! (max - min) / median of `many`: how much the same batch varies, its outliers included.
  double spread() const;
  //! (third quartile - first quartile) / median of `many`: how much the middle half of the batches
  //! varies. The median, which the verdict reads, moves only where this does: a few batches held up
  //! (a wakeup late on a busy host) change the range, not the middle.
  double middle_spread() const;
};

//! The device's streaming-read ceiling measured as BatchTimes are: a kernel that only loads
//! (16-byte loads, several in flight per thread), one launch per input of `inputs` in a batch, with
//! the fastest of a few shapes (grid sizes, loads in flight) found by a screen; the GB/s of `rounds`
//! batches of it, and their spread.
struct Ceiling {
  double gbps = 0;
  double spread = 0, middle_spread = 0;  // BatchTimes's, of its batches
  //! Its fastest whole batch, hand-off and all: what a chapter's fastest batch is held against.
  double fastest_batch_gbps = 0;
  CeilingShape shape;     // the shape measured
  bool screened = false;  // found by the screen here, not given
};
//! With a known `given` shape (one of those the screen tries) there is no screen: the ceiling is
//! measured with that shape only, as the screen's winner is.
Ceiling streaming_read_ceiling(const std::vector<const float*>& inputs, std::size_t n, cudaStream_t stream,
                               CeilingShape given = {}, int rounds = 9);

}  // namespace workbook
