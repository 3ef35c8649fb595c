// The implementation a judge tests: the chapter's code in a runner process of its own (how the
// grader always tests, and the default), or linked into the judge's own process (the student's
// profiling builds, and machines that cannot share GPU memory between processes).
//
// Either way a test hands it calls on buffers the judge allocated (runner/shared_memory.hpp),
// it runs them on its two streams, waits for all of them, and says what each launcher returned;
// the judge then checks the buffers itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "judge/channel.hpp"
#include "runner/remote.hpp"
#include "sandbox/cgroup.hpp"
#include "sandbox/sandbox.hpp"
#include "workbook/contract.hpp"

namespace workbook::judge {

//! One call of the chapter's launcher, on judge memory.
using Call = remote::LocalCall;

//! What running a list of calls gave.
struct Outcome {
  std::vector<remote::CallResult> results;  // one per call, in order, when the calls ran
  std::string error;                        // why they did not all finish: a kernel error, a hang, a runner that died
  bool fatal = false;                       // no later call can run (the CUDA context is lost, or the runner is gone)
  bool hang = false;                        // fatal because a call did not finish in time
  double seconds = 0;  // from handing the calls over to knowing they all finished, as the judge's clock says
};

//! A word of shared device memory the judge's stream sets (GpuOrder), and the value to wait for.
struct Ready {
  const void* word = nullptr;
  std::uint64_t value = 0;  // 0: no wait
};

class Subject {
 public:
  virtual ~Subject() = default;
  virtual const remote::Registration& registration() const = 0;
  //! The workspace a full reduction asks for; nullopt, with `why`, if it could not be asked.
  virtual std::optional<std::size_t> workspace_bytes(std::size_t n, std::string* why) = 0;
  //! Enqueues every call in order on its stream, then waits for both streams. With `ready`, the
  //! streams first wait on the GPU for the word to hold ready.value or more (orders_on_gpu()).
  virtual Outcome run(const std::vector<Call>& calls, const Ready& ready) = 0;
  //! Whether run() can wait on the GPU for a word of the judge's (GpuOrder): a runner in a process
  //! of its own that said so, and not under a tool.
  virtual bool orders_on_gpu() const { return false; }
  //! Where the code runs, for the log: "in this process", or the sandbox's summary.
  virtual std::string where() const = 0;
};

//! The implementation linked into this process (exactly one must have registered).
std::unique_ptr<Subject> local_subject(const Entry& entry);

//! How to start a runner.
struct RunnerOptions {
  std::string runner;                 //!< the runner executable
  std::string sandbox_helper;         //!< workbook-sandbox, or "" to run it unsandboxed
  std::string scratch;                //!< its writable folder ("": a fresh one, removed at the end)
  std::vector<std::string> readable;  //!< more folders it may read (a debugger's sources)
  std::vector<std::string> wrapper;   //!< a tool that starts it (compute-sanitizer ..., cuda-gdb --args)
  bool interactive = false;           //!< the tool talks to the terminal (cuda-gdb): stdio inherited
  bool loopback = false;              //!< a loopback network of its own in the sandbox (NCCL's bootstrap)
  double call_timeout_s = channel::kCallLimitSeconds;  //!< a run that takes longer is a hang (0: no limit)
  double cpu_seconds = 0;                              //!< RLIMIT_CPU of the runner
  std::size_t output_limit = std::size_t(1) << 20;     //!< the runner's output kept in the log
  //! What the sandbox's cgroup allows its processes (host memory, pinned included; processes).
  cgroup::Limits limits;
  //! The GPU memory its processes may hold beyond the judge's buffers they map (NVML); 0: any.
  std::uint64_t gpu_memory_bytes = 0;
  //! The hardware queues of its context (CUDA_DEVICE_MAX_CONNECTIONS) unless the user set a number;
  //! 0: the driver's default. One for runs whose calls use one stream (the sanitized tests), at least
  //! two for the two-stream test (names::kChapterHardwareQueues).
  int hardware_queues = 0;
};

//! Called first in a judge's main, before any CUDA call: its own context gets one hardware queue
//! (CUDA_DEVICE_MAX_CONNECTIONS=1; it works on one stream) unless the user set a number, which
//! runners then get as it was. Beside a class's test processes such a context was made in a third of
//! the time (book/results/grading.md).
void one_hardware_queue_here();

//! The chapter's code in a runner process: started, shown this process's shared memory pool,
//! and asked what registered. Throws std::runtime_error, saying why, when that fails.
class RemoteSubject;
std::unique_ptr<RemoteSubject> start_runner(const RunnerOptions& options);
//! The first half of start_runner: the process started in its sandbox and asked to make its CUDA
//! context, without waiting for it; RemoteSubject::await_ready is the second half. A judge begins
//! its runs under the tools while its tests run, so that their starts overlap the tests.
std::unique_ptr<RemoteSubject> begin_runner(const RunnerOptions& options);

class RemoteSubject : public Subject {
 public:
  ~RemoteSubject() override;
  const remote::Registration& registration() const override { return registration_; }
  std::optional<std::size_t> workspace_bytes(std::size_t n, std::string* why) override;
  Outcome run(const std::vector<Call>& calls, const Ready& ready) override;
  bool orders_on_gpu() const override { return gpu_order_; }
  std::string where() const override;
  const sandbox::SandboxReport& sandbox() const { return sandbox_; }
  //! Whether it was started under a tool (compute-sanitizer, a debugger).
  bool under_tool() const { return wrapped_; }

  //! For a runner from begin_runner: whether it has answered (its context made, or why not); with
  //! `wait`, waits for that up to the start's limit. A judge lets no timed test have the GPU while
  //! a runner it began is still starting.
  bool settled(bool wait);
  //! Waits for a runner from begin_runner to say it is ready and what registered; throws
  //! std::runtime_error, saying why, when it does not (a CudaError counted by out_of_memory_count
  //! where its context could not be made for want of device memory). Once only; start_runner calls it.
  void await_ready();
  //! Asks the runner to end and waits for it: its exit status as the shell gives it (a tool such
  //! as compute-sanitizer answers for it), or -1 if it had to be killed.
  int finish();
  //! How many bytes the runner wrote to its output, and how many of them the log kept.
  std::size_t output_bytes() const;
  std::size_t output_kept() const;
  //! What compute-sanitizer wrote to its own descriptor (RunnerOptions::findings), once finished: the
  //! runner's output is never read for findings.
  const std::vector<std::string>& findings() const { return findings_; }
  //! GPU memory its processes held at the last look (NVML), and the most seen; nullopt where NVML
  //! could not tell.
  std::optional<std::uint64_t> gpu_bytes_peak() const { return gpu_bytes_peak_; }
  //! Where run()'s time went, summed over its calls so far, for the judge's [timing] lines.
  struct Costs {
    int runs = 0;             //!< run() requests answered
    double answers_s = 0;     //!< from a run's request sent to its answer (the calls, the runner's wait)
    double mappings_s = 0;    //!< mapping the judge's new buffers into the chapter's process
    int mappings = 0;         //!< buffers mapped
    double mapped_gb = 0;     //!< their size
    int unmappings = 0;       //!< buffers unmapped there again (freed, not kept for reuse)
    double unmappings_s = 0;  //!< the time that took
    double budget_s = 0;      //!< asking NVML what the chapter's processes hold (over_gpu_budget)
  };
  const Costs& costs() const { return costs_; }

 private:
  friend std::unique_ptr<RemoteSubject> begin_runner(const RunnerOptions& options);
  struct Process;
  RemoteSubject() = default;
  //! Sends a request and waits for its reply; false, with why, when none came (*timed_out: because
  //! none came within timeout_s, and the runner was ended).
  bool request(const remote::Request& req, remote::Reply* reply, double timeout_s, std::string* why, int fd = -1,
               bool* timed_out = nullptr);
  //! The second half of request: waits for the reply to what was sent.
  bool reply_to(remote::Reply* reply, double timeout_s, std::string* why, bool* timed_out = nullptr);
  std::string ended_how();
  void unmap(std::uint64_t id);

  std::unique_ptr<Process> process_;
  remote::Registration registration_;
  sandbox::SandboxReport sandbox_;
  bool sandboxed_ = false;
  bool dead_ = false;
  bool unused_ = false;   // from begin_runner until await_ready: ended unused if never awaited
  bool answered_ = true;  // its answer to begin_runner's request read (hello_, hello_why_)
  remote::Reply hello_;
  std::string hello_why_;   // why it did not answer
  bool releases_ = false;   // told of the shared buffers the judge frees (await_ready)
  bool wrapped_ = false;    // started under a tool (compute-sanitizer)
  bool gpu_order_ = false;  // its hello said it can wait on the GPU, and it is not wrapped
  double call_timeout_s_ = 60;
  double hello_timeout_s_ = 120;
  std::map<std::uint64_t, std::uint64_t> mapped_;  // the judge's buffers it maps now: id -> bytes
  int exit_code_ = -1;
  std::size_t output_bytes_ = 0, output_kept_ = 0;
  std::vector<std::string> findings_;
  std::optional<std::uint64_t> gpu_bytes_peak_;
  Costs costs_;
  std::uint64_t gpu_budget_ = 0;
  //! Whether its processes hold more GPU memory than their budget (and the judge's buffers they map);
  //! if so, `*why` says how much, and the runner is ended.
  bool over_gpu_budget(std::string* why);
};

}  // namespace workbook::judge
