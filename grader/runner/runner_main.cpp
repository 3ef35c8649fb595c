// main() of a runner: the process that holds one chapter's code (the learner's or the
// reference's) and nothing that decides a grade. The judge (chapter_main.cpp) starts it, usually
// inside the sandbox (sandbox/sandbox.hpp), and sends it requests on descriptor 3
// (runner/remote.hpp): map these buffers, run these calls, wait, say what the launchers
// returned. It knows no seed, no expected sum and no clock; what it says is checked.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cuda_runtime.h>
#include <fmt/format.h>

#include "runner/cuda_check.hpp"
#include "runner/registry.hpp"
#include "runner/remote.hpp"
#include "runner/sanitizer_log.hpp"
#include "runner/shared_memory.hpp"

namespace {

using namespace workbook;
using namespace workbook::remote;

// Before any of the chapter's code runs (a preinit function runs before every constructor of the
// executable, the chapter's included): every descriptor of compute-sanitizer's findings pipe
// (channel::kSanitizerLogFd, and the one the tool opened on it, which this process inherits) is
// closed, so the chapter can neither write a finding nor hide one.
void close_findings(int, char**, char**) {
  struct stat log {};
  if (fstat(channel::kSanitizerLogFd, &log) != 0 || !S_ISFIFO(log.st_mode)) return;
  const long open_max = sysconf(_SC_OPEN_MAX);
  const int last = static_cast<int>(open_max > 0 && open_max < 65536 ? open_max : 65536);
  for (int fd = 3; fd < last; ++fd) {
    struct stat st {};
    if (fd != kRunnerFd && fstat(fd, &st) == 0 && st.st_dev == log.st_dev && st.st_ino == log.st_ino) close(fd);
  }
}
__attribute__((section(".preinit_array"), used)) void (*const workbook_close_findings)(int, char**,
                                                                                       char**) = close_findings;

class Runner {
 public:
  explicit Runner(int socket) : socket_(socket) {
    const std::vector<Entry> entries = all_entries();
    registration_ = registration_of(entries);
    if (!entries.empty()) entry_ = entries.front();
  }

  int serve() {
    for (;;) {
      Received r = receive(socket_, 0);
      if (!r.problem.empty()) return 0;  // the judge is gone, or said something malformed
      Request request;
      try {
        request = r.message.get<Request>();
      } catch (const std::exception& e) {
        Reply unreadable;
        unreadable.error = fmt::format("a request the runner cannot read: {}", e.what());
        send(unreadable);
        continue;
      }
      if (request.op == Op::quit) return 0;
      send(answer(request, r.fd));
    }
  }

 private:
  Reply answer(const Request& request, int fd) {
    Reply reply;
    if (fd >= 0 && request.op != Op::map) close(fd);  // only a map request brings one
    switch (request.op) {
      case Op::hello:
        reply.registration = registration_;
        if (const cudaError_t err = cudaFree(nullptr); err != cudaSuccess) {
          reply.error = "the runner cannot use the GPU: " + error_text(err);
          // Other processes may hold the memory (the judge then tests the chapter again alone), or
          // the chapter's own module asks for more than the GPU has (a huge __device__ array).
          reply.out_of_memory = err == cudaErrorMemoryAllocation;
        } else {
          for (cudaStream_t& s : streams_) cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
          std::string why;
          reply.gpu_order = GpuOrder::available(&why);
        }
        break;
      case Op::map:
        if (fd < 0)
          reply.error = "no descriptor came with the buffer";
        else
          memory_.map(request.map.buffer, fd, request.map.bytes, request.map.device, &reply.error);
        fd = -1;
        break;
      case Op::unmap:
        for (const std::uint64_t id : request.unmap) memory_.unmap(id);
        break;
      case Op::workspace_bytes:
        if (registration_.registered != 1 || !entry_.workspace_bytes)
          reply.error = "no full reduction registered";
        else
          reply.bytes = entry_.workspace_bytes(request.n);
        break;
      case Op::run: run(request, reply); break;
      case Op::quit: break;
    }
    return reply;
  }

  void* at(const Place& p) const {
    char* base = memory_.pointer(p.buffer);
    return base ? base + p.offset : nullptr;
  }

  void run(const Request& request, Reply& reply) {
    if (registration_.registered != 1) {
      reply.error = "no single implementation registered";
      return;
    }
    if (request.ready_value > 0) {  // the judge's inputs and poison first, on the GPU
      const void* word = at(request.ready);
      if (!word) {
        reply.error = "the judge's ordering word is not mapped";
        return;
      }
      for (cudaStream_t s : streams_) {
        if (!GpuOrder::wait(s, word, request.ready_value, &reply.error)) return;
      }
      // A launcher that ignores its stream and launches on the default stream (or on a blocking
      // stream of its own, which waits for that one) waits too: it saw a ready input when the judge
      // waited on the host, and must not see a half-written one now.
      // An error here must not stay behind for the launcher's cudaGetLastError to report as its own.
      if ((!ready_event_ && cudaEventCreateWithFlags(&ready_event_, cudaEventDisableTiming) != cudaSuccess) ||
          cudaEventRecord(ready_event_, streams_[0]) != cudaSuccess ||
          cudaStreamWaitEvent(cudaStreamLegacy, ready_event_, 0) != cudaSuccess) {
        reply.error =
            "the runner could not order the default stream after the judge's inputs: " + error_text(cudaGetLastError());
        return;
      }
    }
    std::vector<LocalCall> local;
    for (const Call& c : request.calls) {
      local.push_back({c.kind, static_cast<const float*>(at(c.in)), c.n, static_cast<float*>(at(c.out)), c.capacity,
                       at(c.workspace), c.stream, Launch{c.blocks, c.threads}, c.element, c.op, at(c.in2), c.device});
    }
    reply = run_locally(entry_, local, streams_);
  }

  void send(const Reply& reply) {
    std::fflush(stdout);  // the launcher's own output (and device printf) before the answer
    send_message(socket_, reply);
  }

  int socket_;
  Entry entry_{};
  Registration registration_;
  ImportedMemory memory_;
  cudaStream_t streams_[2] = {nullptr, nullptr};
  cudaEvent_t ready_event_ = nullptr;  // the ordering word's wait, passed on to the default stream
};

}  // namespace

int main(int argc, char** argv) {
  int fd = kRunnerFd;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--fd=", 0) == 0) {
      fd = std::atoi(arg.c_str() + 5);
    } else {
      std::fprintf(stderr, "%s: unknown argument %s (a judge, test_<chapter> --runner=..., starts this program)\n",
                   argv[0], arg.c_str());
      return 2;
    }
  }
  if (fcntl(fd, F_GETFD) < 0) {
    std::fprintf(stderr, "%s: no judge on descriptor %d; a judge (test_<chapter> --runner=...) starts this program\n",
                 argv[0], fd);
    return 2;
  }
  return Runner(fd).serve();
}
