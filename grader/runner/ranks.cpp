// The harness's NCCL part, for the chapter over several GPUs (contract.hpp, RankReduceFn): the
// communicators, a stream per GPU, and one collective's rank calls run in one NCCL group. Linked
// into that chapter's programs alone (grader/judge/CMakeLists.txt), so nothing else needs NCCL; it
// registers its group runner with run_locally (runner/remote.hpp) as the program starts.
//
// One process drives every GPU of a collective: ncclCommInitAll makes one communicator per GPU,
// rank r on the r-th GPU named, and the rank calls are enqueued between ncclGroupStart and
// ncclGroupEnd, which NCCL needs when one thread issues the same collective for several ranks
// (without the group, the first rank's all-reduce would wait for ranks not yet called).
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nccl.h>

#include "runner/cuda_check.hpp"
#include "runner/remote.hpp"

namespace workbook::ranks {

ncclComm* one_rank_communicator();  // declared for chapters in workbook/chapter.cuh

namespace {

std::string nccl_text(ncclResult_t r, ncclComm_t comm = nullptr) {
  const char* last = ncclGetLastError(comm);
  return fmt::format("{}{}{}", ncclGetErrorString(r), last && *last ? ": " : "", last ? last : "");
}

struct State {
  std::mutex lock;
  std::map<std::vector<int>, std::vector<ncclComm_t>> communicators;  // by the GPUs, in rank order
  std::map<int, cudaStream_t> streams;                                // one per GPU
};

State& state() {
  static State* s = new State;  // never destroyed: NCCL's own threads may outlive static destructors
  return *s;
}

// NVLink multicast (NVLS) stays off: on shared machines a program using it can take the host's GPUs
// out of service. Set before NCCL first reads its environment; a value already set is kept only
// when it is 0.
void nvls_off() {
  static const bool done = [] {
    setenv("NCCL_NVLS_ENABLE", "0", 1);
    return true;
  }();
  (void)done;
}

// One communicator per GPU in `devices` (rank r on devices[r]), made on first use and kept.
const std::vector<ncclComm_t>* communicators(const std::vector<int>& devices, std::string* why) {
  State& s = state();
  std::lock_guard<std::mutex> hold(s.lock);
  if (const auto it = s.communicators.find(devices); it != s.communicators.end()) return &it->second;
  nvls_off();
  std::vector<ncclComm_t> comms(devices.size(), nullptr);
  ncclResult_t r;
  {
    const DeviceScope keep;  // ncclCommInitAll leaves another device current
    r = ncclCommInitAll(comms.data(), static_cast<int>(devices.size()), devices.data());
  }
  if (r != ncclSuccess) {
    *why = fmt::format("NCCL could not make the communicators of GPUs {}: {}", fmt::join(devices, ", "), nccl_text(r));
    return nullptr;
  }
  return &(s.communicators[devices] = std::move(comms));
}

cudaStream_t stream_of(int device) {
  State& s = state();
  std::lock_guard<std::mutex> hold(s.lock);
  cudaStream_t& stream = s.streams[device];
  if (!stream) {
    const DeviceScope on(device);
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  }
  return stream;
}

void run_group(RankReduceFn fn, const std::vector<remote::LocalCall>& calls, std::vector<remote::CallResult>& results,
               std::vector<std::pair<int, cudaStream_t>>& streams) {
  std::vector<int> devices;
  for (const remote::LocalCall& c : calls) devices.push_back(c.device);
  std::string why;
  const std::vector<ncclComm_t>* comms = communicators(devices, &why);
  if (!comms) {
    for (remote::CallResult& r : results) r.launch_error = why;
    return;
  }
  const ncclResult_t started = ncclGroupStart();
  for (std::size_t k = 0; k < calls.size(); ++k) {
    const remote::LocalCall& c = calls[k];
    const cudaStream_t stream = stream_of(c.device);
    const DeviceScope on(c.device);
    fn(c.in, c.n, c.out, c.workspace, stream, (*comms)[k]);
    if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) results[k].launch_error = error_text(err);
    streams.emplace_back(c.device, stream);
  }
  const ncclResult_t ended = started == ncclSuccess ? ncclGroupEnd() : started;
  if (ended != ncclSuccess) {
    // The group's collectives failed to start (an invalid argument, a communicator in error):
    // every rank's result says so, with what NCCL told. (Counts that differ between ranks are not
    // always caught: such a collective can hang, which the judge's time limit ends.)
    for (std::size_t k = 0; k < calls.size(); ++k) {
      if (results[k].launch_error.empty()) {
        results[k].launch_error = "NCCL refused the collective: " + nccl_text(ended, (*comms)[k]);
      }
    }
  }
}

const bool registered = remote::set_rank_group_runner(&run_group);

}  // namespace

ncclComm* one_rank_communicator() {
  int device = 0;
  cudaGetDevice(&device);
  std::string why;
  const std::vector<ncclComm_t>* comms = communicators({device}, &why);
  if (!comms) {
    std::fprintf(stderr, "%s\n", why.c_str());
    return nullptr;  // the launcher's collective then fails, and the judge says so
  }
  return comms->front();
}

}  // namespace workbook::ranks
