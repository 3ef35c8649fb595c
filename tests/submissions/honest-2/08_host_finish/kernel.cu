// honest: stages the partials in pinned memory from cudaHostAlloc (the flags form of cudaMallocHost)
// expect: full marks
// cudaHostAlloc(ptr, bytes, flags) is how the runtime spells pinned allocation with flags; the
// C++ overload cudaMallocHost(ptr, bytes, flags) calls it too. Pinned host memory is chapter 08's
// idea and the sandbox bounds the memory a chapter can take, so the static checks must let it by.
// Chapter 08: the block pass of chapter 07, then the partials are copied to the host, added in
// double there, and the total copied back to *out.
#include "workbook/chapter.cuh"

#include <cstddef>
#include <mutex>

#include <cuda_runtime.h>

#include "workbook/block_pass.cuh"

namespace {

using namespace workbook::block_pass;

__global__ void __launch_bounds__(threads_per_block)
    block_sums(const float* in, std::size_t n, std::size_t head, const float4* body,
               std::size_t body_vectors, std::size_t tail_begin, float* partials) {
  const float sum = block_reduce_sum(thread_sum_of_input(in, n, head, body, body_vectors, tail_begin));
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

std::size_t blocks_for(std::size_t n) { return grid_blocks(n, resident_blocks<block_sums>()); }

std::size_t workspace_bytes(std::size_t n) { return n == 0 ? 0 : blocks_for(n) * sizeof(float); }

// One pinned buffer for every call, grown (never shrunk) when a grid has more blocks than it holds.
// Its last slot carries the total back to the device. Kept until the process ends.
class HostStage {
 public:
  // A pointer to at least `count` + 1 pinned floats, or null when pinned memory is refused.
  float* floats(std::size_t count) {
    if (count + 1 > size_) {
      if (data_ != nullptr) cudaFreeHost(data_);  // the last call synchronized: nothing in flight
      data_ = nullptr;
      size_ = 0;
      const std::size_t want = count + 1 < 2048 ? 2048 : count + 1;
      void* p = nullptr;
      if (cudaHostAlloc(&p, want * sizeof(float), cudaHostAllocPortable) != cudaSuccess) return nullptr;
      data_ = static_cast<float*>(p);
      size_ = want;
    }
    return data_;
  }
  std::mutex& lock() { return mutex_; }

 private:
  std::mutex mutex_;
  float* data_ = nullptr;
  std::size_t size_ = 0;
};

void reduce(const float* in, std::size_t n, float* out, void* workspace, cudaStream_t stream) {
  if (n == 0) {
    cudaMemsetAsync(out, 0, sizeof(float), stream);
    return;
  }
  const Split split = split_at_16_bytes(in, n);
  const std::size_t blocks = blocks_for(n);
  float* partials = static_cast<float*>(workspace);
  block_sums<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(
      in, n, split.head, split.body, split.body_vectors, split.tail_begin, partials);

  static HostStage stage;
  const std::lock_guard<std::mutex> guard(stage.lock());
  float* host = stage.floats(blocks);
  if (host == nullptr) return;  // *out stays unwritten: the tests say so

  cudaMemcpyAsync(host, partials, blocks * sizeof(float), cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  double sum = 0.0;
  for (std::size_t b = 0; b < blocks; ++b) sum += host[b];
  host[blocks] = static_cast<float>(sum);
  cudaMemcpyAsync(out, host + blocks, sizeof(float), cudaMemcpyHostToDevice, stream);
  cudaStreamSynchronize(stream);  // the copy has read host[blocks] before another call reuses it
}

}  // namespace

WORKBOOK_FULL_REDUCE(reduce, workspace_bytes);
