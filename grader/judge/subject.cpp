#include "subject.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime.h>
#include <fmt/format.h>

#include "judge/channel.hpp"
#include "judge/names.hpp"
#include "runner/cuda_check.hpp"
#include "runner/shared_memory.hpp"
#include "sandbox/gpu_memory.hpp"

namespace fs = std::filesystem;

namespace workbook::judge {
namespace {

using Clock = std::chrono::steady_clock;

// What a run's reply means to a test: the launchers' results, and the error that stopped the calls
// (fatal when the CUDA context is lost).
void take_reply(const remote::Reply& reply, Outcome& o) {
  o.results = reply.results;
  if (!reply.sync_error.empty()) {
    o.error = "the kernel failed while running: " + reply.sync_error;
    o.fatal = reply.context_lost;
  }
}

class LocalSubject : public Subject {
 public:
  explicit LocalSubject(const Entry& entry) : entry_(entry), registration_(remote::registration_of({entry})) {
    for (cudaStream_t& s : streams_) WORKBOOK_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  }
  const remote::Registration& registration() const override { return registration_; }
  std::optional<std::size_t> workspace_bytes(std::size_t n, std::string* why) override {
    if (!entry_.workspace_bytes) {
      *why = "a block pass has no workspace";
      return std::nullopt;
    }
    return entry_.workspace_bytes(n);
  }
  Outcome run(const std::vector<Call>& calls, const Ready& ready) override {
    if (ready.value) throw std::logic_error("a subject in the judge's process waits on the host, not on a word");
    Outcome o;
    const auto start = Clock::now();
    take_reply(remote::run_locally(entry_, calls, streams_), o);
    o.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return o;
  }
  std::string where() const override { return "in the judge's own process (not sandboxed)"; }

 private:
  Entry entry_;
  remote::Registration registration_;
  cudaStream_t streams_[2] = {nullptr, nullptr};
};

// The folders of the shared libraries this process has loaded: the runner links the same ones, and
// may read them inside the sandbox wherever they were installed (a conda environment, a module).
std::vector<std::string> loaded_library_folders() {
  std::set<std::string> folders;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    const std::size_t slash = line.find('/');
    if (slash == std::string::npos || line.find(".so", slash) == std::string::npos) continue;
    folders.insert(fs::path(line.substr(slash)).parent_path().string());
  }
  return {folders.begin(), folders.end()};
}

std::vector<std::string> device_files() {
  std::vector<std::string> files;
  glob_t g{};
  if (glob("/dev/nvidia*", 0, nullptr, &g) == 0) {
    for (std::size_t i = 0; i < g.gl_pathc; ++i) files.push_back(g.gl_pathv[i]);
  }
  globfree(&g);
  return files;
}

constexpr const char* kHardwareQueues = "CUDA_DEVICE_MAX_CONNECTIONS";

// The user's CUDA_DEVICE_MAX_CONNECTIONS as the process started (one_hardware_queue_here keeps it
// before setting this process's own), or nullopt where none was set.
const std::optional<std::string>& users_hardware_queues() {
  static const std::optional<std::string> given = [] {
    const char* v = std::getenv(kHardwareQueues);
    return v ? std::optional<std::string>(v) : std::nullopt;
  }();
  return given;
}

std::string status_text(int status) {
  if (WIFSIGNALED(status)) return fmt::format("died of signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  return "stopped";
}

}  // namespace

std::unique_ptr<Subject> local_subject(const Entry& entry) { return std::make_unique<LocalSubject>(entry); }

struct RemoteSubject::Process {
  pid_t pid = -1;
  int socket = -1;
  int status = 0;
  bool reaped = false;
  std::thread drain;
  std::atomic<std::size_t> bytes{0}, kept{0};
  std::string scratch;
  bool own_scratch = false;
  std::unique_ptr<cgroup::Leaf> cgroup;  // its sandbox's cgroup, where the machine allows one
  std::thread findings;                  // reads compute-sanitizer's own descriptor
  std::string findings_text;

  // Waits up to `seconds` for the process to end; true if it has.
  bool wait(double seconds) {
    const auto until = Clock::now() + std::chrono::duration<double>(seconds);
    while (!reaped) {
      const pid_t done = waitpid(pid, &status, WNOHANG);
      if (done == pid)
        reaped = true;
      else if (done < 0 && errno != EINTR)
        reaped = true;
      else if (Clock::now() >= until)
        return false;
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }
  void kill_now() {
    if (!reaped && pid > 0) kill(pid, SIGKILL);  // the sandbox's processes die with it
    if (cgroup) cgroup->kill_all();              // and with the cgroup, whatever they did to hide
    wait(10);
  }
};

void one_hardware_queue_here() {
  if (!users_hardware_queues()) setenv(kHardwareQueues, std::to_string(names::kOneStreamHardwareQueues).c_str(), 1);
}

std::unique_ptr<RemoteSubject> start_runner(const RunnerOptions& options) {
  std::unique_ptr<RemoteSubject> subject = begin_runner(options);
  subject->await_ready();
  return subject;
}

std::unique_ptr<RemoteSubject> begin_runner(const RunnerOptions& options) {
  SharedMemory* memory = SharedMemory::get();
  if (!memory) throw std::runtime_error("no shared memory: set it up before starting a runner");
  std::unique_ptr<RemoteSubject> subject(new RemoteSubject);
  subject->process_ = std::make_unique<RemoteSubject::Process>();
  RemoteSubject::Process& p = *subject->process_;
  subject->call_timeout_s_ = options.call_timeout_s;

  // The boundary: bubblewrap where the machine has it (sandbox.hpp), whose scratch is a tmpfs inside
  // the sandbox, so nothing of it is left on this machine whatever happens to either process.
  std::string bwrap_why;
  const std::string bwrap =
      options.sandbox_helper.empty() ? "" : sandbox::find_bwrap(options.sandbox_helper, &bwrap_why);
  p.scratch = options.scratch;
  if (p.scratch.empty() && !bwrap.empty()) {
    p.scratch = sandbox::kSandboxScratch;
  } else if (p.scratch.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/workbook-runner-XXXXXX";
    if (!mkdtemp(pattern.data()))
      throw std::runtime_error(fmt::format("mkdtemp {}: {}", pattern, std::strerror(errno)));
    p.scratch = pattern;
    p.own_scratch = true;
  }
  // compute-sanitizer writes its findings to a pipe of this process's (channel::kSanitizerLogFd), which
  // the runner closes before any of the chapter's code runs (runner_main.cpp): what the chapter prints
  // is never taken for a finding.
  const bool findings_wanted = channel::writes_findings(options.wrapper);
  std::vector<std::string> program = options.wrapper;
  program.push_back(options.runner);
  program.push_back(fmt::format("--fd={}", remote::kRunnerFd));
  // The runner's whole environment: nothing of the judge's (no seed, no paths of the grader's).
  std::vector<std::string> env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + p.scratch, "TMPDIR=" + p.scratch,
                                  "LANG=C.UTF-8"};
  // The driver's settings pass through; the hardware queues as the user set them, else hardware_queues.
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_MODULE_LOADING", "LD_LIBRARY_PATH",
                           "TERM", "NCCL_NVLS_ENABLE", "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS"}) {
    if (const char* v = std::getenv(name)) env.push_back(std::string(name) + "=" + v);
  }
  if (const std::optional<std::string>& queues = users_hardware_queues())
    env.push_back(std::string(kHardwareQueues) + "=" + *queues);
  else if (options.hardware_queues > 0)
    env.push_back(fmt::format("{}={}", kHardwareQueues, options.hardware_queues));
  constexpr int kReportFd = 4;
  std::vector<std::string> argv = program;
  const bool sandboxed = !options.sandbox_helper.empty();
  if (sandboxed) {
    sandbox::Policy policy;
    policy.helper = options.sandbox_helper;
    policy.bwrap = bwrap;
    policy.scratch = p.scratch;
    policy.scratch_bytes = sandbox::kScratchBytes;
    policy.scratch_on_host = !options.scratch.empty();
    policy.writable = device_files();
    policy.writable.push_back("/proc");  // the CUDA driver writes under /proc/self (a /proc of the sandbox's own)
    policy.readable = loaded_library_folders();
    policy.readable.push_back(options.runner);
    policy.readable.insert(policy.readable.end(), options.readable.begin(), options.readable.end());
    if (!options.wrapper.empty()) {
      std::error_code ec;
      const fs::path tool = fs::canonical(options.wrapper.front(), ec);
      if (!ec) policy.readable.push_back(tool.parent_path().parent_path().string());  // the tool's installation
    }
    policy.env = env;
    policy.keep_fds = {remote::kRunnerFd};
    if (findings_wanted) policy.keep_fds.push_back(channel::kSanitizerLogFd);
    policy.cpu_seconds = options.cpu_seconds;
    policy.file_bytes = std::size_t(1) << 30;
    policy.debugger = options.interactive;
    policy.loopback = options.loopback;
    argv = sandbox::helper_command(policy, kReportFd, program);
  }
  int sv[2], out[2] = {-1, -1}, report[2] = {-1, -1}, findings[2] = {-1, -1};
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0 ||
      (!options.interactive && pipe2(out, O_CLOEXEC) != 0) || (sandboxed && pipe2(report, O_CLOEXEC) != 0) ||
      (findings_wanted && pipe2(findings, O_CLOEXEC) != 0)) {
    throw std::runtime_error(fmt::format("socketpair or pipe: {}", std::strerror(errno)));
  }
  // Its own cgroup: host memory (pinned included) and processes, and one kill for all at the end.
  std::string cgroup_why;
  if (sandboxed && (options.limits.memory_bytes || options.limits.processes)) {
    p.cgroup = cgroup::Leaf::create(options.limits, &cgroup_why);
  }
  const int cgroup_fd = p.cgroup ? p.cgroup->procs_fd() : -1;
  std::vector<char*> args, envp;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec: the judge has the CUDA runtime's threads.
    // Each descriptor first moves above the numbers it goes to, so no dup2 overwrites another's source.
    const int socket_fd = fcntl(sv[1], F_DUPFD_CLOEXEC, 64);
    const int report_fd = sandboxed ? fcntl(report[1], F_DUPFD_CLOEXEC, 64) : -1;
    const int out_fd = options.interactive ? -1 : fcntl(out[1], F_DUPFD_CLOEXEC, 64);
    const int findings_fd = findings_wanted ? fcntl(findings[1], F_DUPFD_CLOEXEC, 64) : -1;
    if (cgroup_fd >= 0 && write(cgroup_fd, "0", 1) != 1) _exit(126);  // into the cgroup, before anything runs
    dup2(socket_fd, remote::kRunnerFd);
    if (findings_wanted) dup2(findings_fd, channel::kSanitizerLogFd);
    if (sandboxed) dup2(report_fd, kReportFd);
    if (!options.interactive) {
      dup2(out_fd, STDOUT_FILENO);
      dup2(out_fd, STDERR_FILENO);
      const int null = open("/dev/null", O_RDONLY);
      if (null >= 0) dup2(null, STDIN_FILENO);
    }
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  p.pid = pid;
  p.socket = sv[0];
  close(sv[1]);
  if (findings_wanted) {
    close(findings[1]);
    p.findings = std::thread([&p, fd = findings[0]] {
      char buffer[16384];
      for (;;) {
        const ssize_t n = read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        if (p.findings_text.size() < (std::size_t(1) << 20))
          p.findings_text.append(buffer, static_cast<std::size_t>(n));
      }
      close(fd);
    });
  }
  if (!options.interactive) {
    close(out[1]);
    // The runner's output (its printf, device printf, a tool's report) into this process's log,
    // the first output_limit bytes of it; the rest is counted.
    p.drain = std::thread([&p, fd = out[0], limit = options.output_limit] {
      char buffer[65536];
      bool said = false;
      for (;;) {
        const ssize_t n = read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        p.bytes += static_cast<std::size_t>(n);
        const std::size_t room = limit > p.kept ? limit - p.kept : 0;
        const std::size_t keep = std::min<std::size_t>(room, static_cast<std::size_t>(n));
        if (keep && write(STDOUT_FILENO, buffer, keep) > 0) p.kept += keep;
        if (keep < static_cast<std::size_t>(n) && !said) {
          said = true;
          const std::string note =
              fmt::format("\n[the chapter's output is cut here: the log keeps {} bytes of it]\n", limit);
          if (write(STDOUT_FILENO, note.data(), note.size()) < 0) {
          }
        }
      }
      close(fd);
    });
  }
  if (sandboxed) {
    close(report[1]);
    std::string text;
    char buffer[4096];
    for (;;) {
      pollfd pf{report[0], POLLIN, 0};
      if (poll(&pf, 1, 30000) <= 0) break;
      const ssize_t n = read(report[0], buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      text.append(buffer, static_cast<std::size_t>(n));
    }
    close(report[0]);
    // The last line is the report (a second one replaces the first when exec fails).
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      try {
        subject->sandbox_ = nlohmann::json::parse(line).get<sandbox::SandboxReport>();
      } catch (const std::exception&) {
      }
    }
    if (text.empty())
      subject->sandbox_.error =
          "the sandbox helper said nothing before it ended (what it or bubblewrap printed is in this log)";
    // What this process set up around the helper: its cgroup; and bubblewrap, or why not.
    if (p.cgroup)
      subject->sandbox_.enforced.push_back(sandbox::Layer::memory_limit);
    else if (!cgroup_why.empty())
      subject->sandbox_.missing.push_back(cgroup_why);
    if (bwrap.empty()) subject->sandbox_.missing.push_back(bwrap_why);
    if (!subject->sandbox_.error.empty()) {
      const std::string why = subject->sandbox_.error;
      p.kill_now();
      throw std::runtime_error("the sandbox could not start the runner: " + why);
    }
  }
  subject->sandboxed_ = sandboxed;
  subject->wrapped_ = !options.wrapper.empty();
  subject->gpu_budget_ = options.gpu_memory_bytes;
  subject->hello_timeout_s_ = std::max(120.0, options.call_timeout_s);
  // Asked to make its CUDA context now; the answer is read by await_ready.
  remote::Request hello;
  hello.op = remote::Op::hello;
  if (!remote::send_message(p.socket, hello)) {
    subject->dead_ = true;
    throw std::runtime_error("the runner did not start: " + subject->ended_how());
  }
  subject->unused_ = true;
  subject->answered_ = false;
  return subject;
}

bool RemoteSubject::settled(bool wait) {
  if (answered_) return true;
  if (!wait) {
    pollfd pf{process_->socket, POLLIN, 0};
    if (poll(&pf, 1, 0) <= 0) return false;  // nothing yet (a reply, or the runner's end, ends the poll)
  }
  answered_ = true;
  if (!reply_to(&hello_, hello_timeout_s_, &hello_why_) && hello_why_.empty()) hello_why_ = "no answer";
  return true;
}

void RemoteSubject::await_ready() {
  if (!unused_) throw std::logic_error("await_ready: a runner begun by begin_runner, once");
  unused_ = false;
  settled(true);
  if (!hello_why_.empty()) throw std::runtime_error("the runner did not start: " + hello_why_);
  if (hello_.out_of_memory) throw_out_of_memory(hello_.error);  // counted: the judge says starved
  if (!hello_.error.empty()) throw std::runtime_error(hello_.error);
  registration_ = hello_.registration;
  // Under a tool the calls keep the host's wait: a tool's run has three small tests, and what a
  // tool makes of a stream waiting on memory another process writes is not worth finding out there.
  // Every call of that run is then alike (none carries a word). That a chapter could tell a run
  // under a tool from one without by its streams adds nothing: the tool's own library is loaded in
  // its process, for it to see.
  gpu_order_ = hello_.gpu_order && !wrapped_;
  SharedMemory::get()->on_release([this](std::uint64_t id) { unmap(id); });
  releases_ = true;
}

RemoteSubject::~RemoteSubject() {
  if (releases_) {
    if (SharedMemory* memory = SharedMemory::get()) memory->on_release(nullptr);
  }
  finish();
}

bool RemoteSubject::request(const remote::Request& req, remote::Reply* reply, double timeout_s, std::string* why,
                            int fd, bool* timed_out) {
  if (dead_) {
    *why = "the chapter's process has ended";
    return false;
  }
  if (!remote::send_message(process_->socket, req, fd)) {
    dead_ = true;
    *why = ended_how();
    return false;
  }
  return reply_to(reply, timeout_s, why, timed_out);
}

bool RemoteSubject::reply_to(remote::Reply* reply, double timeout_s, std::string* why, bool* timed_out) {
  const remote::Received r = remote::receive(process_->socket, timeout_s);
  if (r.fd >= 0) close(r.fd);
  if (!r.problem.empty()) {
    dead_ = true;
    if (r.timed_out) {
      if (timed_out) *timed_out = true;
      process_->kill_now();
      *why = fmt::format("no answer within {:.0f} s", timeout_s);
    } else {
      *why = ended_how();
    }
    return false;
  }
  try {
    *reply = r.message.get<remote::Reply>();
  } catch (const std::exception& e) {
    dead_ = true;
    process_->kill_now();
    *why = fmt::format("the chapter's process answered something that is not a reply ({})", e.what());
    return false;
  }
  return true;
}

std::string RemoteSubject::ended_how() {
  if (!process_->wait(3)) return "the chapter's process stopped answering";
  std::string how = "the chapter's process " + status_text(process_->status);
  if (process_->cgroup && process_->cgroup->oom_kills() > 0) {
    how += fmt::format(
        ": the kernel killed it for going over its host memory limit of {:.1f} GiB (pinned "
        "memory counts)",
        process_->cgroup->limits().memory_bytes / 1073741824.0);
  }
  return how;
}

bool RemoteSubject::over_gpu_budget(std::string* why) {
  if (!gpu_budget_ || !process_ || dead_) return false;
  std::string unknown;
  const std::optional<std::uint64_t> held = gpu_memory::held_by(gpu_memory::process_tree(process_->pid), &unknown);
  if (!held) return false;
  gpu_bytes_peak_ = std::max(gpu_bytes_peak_.value_or(0), *held);
  std::uint64_t mapped_bytes = 0;
  for (const auto& [id, bytes] : mapped_) mapped_bytes += bytes;
  if (*held <= gpu_budget_ + mapped_bytes) return false;
  *why = fmt::format(
      "the chapter's process held {:.2f} GiB of GPU memory (NVML), over its budget of {:.2f} GiB "
      "beside the {:.2f} GiB of the judge's buffers it maps: it was ended, so that it cannot take "
      "the GPU's memory from the chapters tested beside it (a large __device__ array, a huge "
      "stack, or cudaMalloc calls it never frees)",
      *held / 1073741824.0, gpu_budget_ / 1073741824.0, mapped_bytes / 1073741824.0);
  dead_ = true;
  process_->kill_now();
  return true;
}

void RemoteSubject::unmap(std::uint64_t id) {
  if (mapped_.erase(id) == 0) return;
  remote::Request req;
  req.op = remote::Op::unmap;
  req.unmap = {id};
  remote::Reply reply;
  std::string why;
  const auto start = Clock::now();
  request(req, &reply, 30, &why);
  ++costs_.unmappings;
  costs_.unmappings_s += std::chrono::duration<double>(Clock::now() - start).count();
}

std::optional<std::size_t> RemoteSubject::workspace_bytes(std::size_t n, std::string* why) {
  remote::Request req;
  req.op = remote::Op::workspace_bytes;
  req.n = n;
  remote::Reply reply;
  if (!request(req, &reply, call_timeout_s_, why)) return std::nullopt;
  if (!reply.error.empty()) {
    *why = reply.error;
    return std::nullopt;
  }
  return reply.bytes;
}

Outcome RemoteSubject::run(const std::vector<Call>& calls, const Ready& ready) {
  Outcome o;
  SharedMemory& memory = *SharedMemory::get();
  remote::Request req;
  req.op = remote::Op::run;
  std::vector<const SharedMemory::Allocation*> new_mappings;
  auto place = [&](const void* p) {
    remote::Place at;
    if (!p) return at;
    const SharedMemory::Allocation* a = memory.find(p);
    if (!a) throw std::logic_error("a call names memory that is not shared with the runner");
    at.buffer = a->id;
    at.offset = static_cast<std::uint64_t>(static_cast<const char*>(p) - a->base);
    if (mapped_.count(a->id) == 0 && std::find(new_mappings.begin(), new_mappings.end(), a) == new_mappings.end()) {
      new_mappings.push_back(a);
    }
    return at;
  };
  for (const Call& c : calls) {
    remote::Call rc;
    rc.kind = c.kind;
    rc.in = place(c.in);
    rc.out = place(c.out);
    rc.workspace = place(c.workspace);
    rc.n = c.n;
    rc.capacity = c.capacity;
    rc.stream = c.stream;
    rc.blocks = c.launch.blocks;
    rc.threads = c.launch.threads;
    rc.element = c.element;
    rc.op = c.op;
    rc.in2 = place(c.in2);
    rc.device = c.device;
    req.calls.push_back(rc);
  }
  if (ready.value) {
    if (!gpu_order_) throw std::logic_error("this runner does not wait on the GPU");
    req.ready = place(ready.word);
    req.ready_value = ready.value;
  }
  remote::Reply reply;
  const auto mapping = Clock::now();
  for (const SharedMemory::Allocation* a : new_mappings) {
    remote::Request map;
    map.op = remote::Op::map;
    map.map = {a->id, a->mapped, a->device};
    const int fd = memory.export_descriptor(*a);
    const bool answered = fd >= 0 && request(map, &reply, 60, &o.error, fd);
    if (fd >= 0) close(fd);
    if (!answered || !reply.error.empty()) {
      if (fd < 0) o.error = "the judge could not export the buffer";
      if (o.error.empty()) o.error = reply.error;
      o.error = "the chapter's process could not map the judge's buffers: " + o.error;
      o.fatal = true;
      return o;
    }
    mapped_[a->id] = a->mapped;
    ++costs_.mappings;
    costs_.mapped_gb += a->mapped / 1e9;
  }
  const auto start = Clock::now();
  costs_.mappings_s += std::chrono::duration<double>(start - mapping).count();
  std::string why;
  if (!request(req, &reply, call_timeout_s_, &why, -1, &o.hang)) {
    o.fatal = true;
    o.error = o.hang ? fmt::format(
                           "the calls did not finish within {:.0f} s: a kernel that never ends, or a "
                           "launcher that never returns",
                           call_timeout_s_)
                     : why;
    return o;
  }
  o.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  costs_.answers_s += o.seconds;
  ++costs_.runs;
  if (!reply.error.empty()) {
    o.error = reply.error;
    return o;
  }
  if (reply.results.size() != calls.size()) {
    dead_ = true;
    process_->kill_now();
    o.fatal = true;
    o.error = fmt::format("the chapter's process answered {} results for {} calls", reply.results.size(), calls.size());
    return o;
  }
  take_reply(reply, o);
  const auto budget = Clock::now();
  std::string over;
  const bool hog = over_gpu_budget(&over);
  costs_.budget_s += std::chrono::duration<double>(Clock::now() - budget).count();
  if (hog) {
    o.fatal = true;
    o.error = over;
  }
  return o;
}

std::string RemoteSubject::where() const {
  return sandboxed_ ? "in a process of its own, " + sandbox_.summary()
                    : "in a process of its own (not sandboxed: started without the sandbox helper)";
}

int RemoteSubject::finish() {
  if (!process_) return exit_code_;
  Process& p = *process_;
  if (unused_) {
    p.kill_now();  // begun and never used: nothing of its run is wanted, nor a wait for its tool to end
    dead_ = true;
  }
  if (!dead_) {
    remote::Request quit;
    quit.op = remote::Op::quit;
    remote::send_message(p.socket, quit);
    dead_ = true;
  }
  int code = -1;
  if (p.wait(120)) {
    code = WIFEXITED(p.status) ? WEXITSTATUS(p.status) : 128 + WTERMSIG(p.status);
  } else {
    p.kill_now();
  }
  if (p.socket >= 0) close(p.socket);
  p.socket = -1;
  if (p.cgroup) p.cgroup->kill_all();
  if (p.drain.joinable()) p.drain.join();
  if (p.findings.joinable()) p.findings.join();
  {
    std::istringstream lines(p.findings_text);
    for (std::string line; std::getline(lines, line) && findings_.size() < 400;) findings_.push_back(line);
  }
  p.cgroup.reset();  // kills what is left in it, and removes it
  if (p.own_scratch) {
    std::error_code ec;
    fs::remove_all(p.scratch, ec);
    p.own_scratch = false;
  }
  exit_code_ = code;
  output_bytes_ = p.bytes;
  output_kept_ = p.kept;
  process_.reset();
  return code;
}

std::size_t RemoteSubject::output_bytes() const { return process_ ? process_->bytes.load() : output_bytes_; }
std::size_t RemoteSubject::output_kept() const { return process_ ? process_->kept.load() : output_kept_; }

}  // namespace workbook::judge
