#include "process.hpp"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace grader {
namespace {

std::atomic<int> g_signal{0};
// The process groups of the children running now (several run at once while
// the include checks run in parallel); 0 marks a free slot.
constexpr int kMaxChildren = 256;
std::atomic<pid_t> g_child_groups[kMaxChildren];

void on_signal(int sig) {
  g_signal.store(sig);
  for (std::atomic<pid_t>& group : g_child_groups) {
    const pid_t g = group.load();
    if (g > 0) kill(-g, SIGKILL);  // async-signal-safe; the wait loops reap them
  }
}

std::atomic<pid_t>* track(pid_t group) {
  for (std::atomic<pid_t>& slot : g_child_groups) {
    pid_t free = 0;
    if (slot.compare_exchange_strong(free, group)) return &slot;
  }
  return nullptr;  // more children than slots: an interrupt still ends them at their time limit
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocking call returns EINTR
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a write to a child that has gone (a grant) fails with EPIPE instead
}

bool interrupted(int* signal) {
  const int sig = g_signal.load();
  if (signal) *signal = sig;
  return sig != 0;
}

void lower_to_builder_priority() {
  // PRIO_PROCESS with a thread's id: that thread alone (gettid itself needs glibc 2.30).
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), kBuilderNice);
}

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& log_path, double timeout_s,
                          const ProcessOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  ProcessResult result;
  if (interrupted()) {
    result.interrupted = true;
    return result;
  }
  int pipe_fds[2] = {-1, -1};
  const bool channel = !options.channel_variable.empty();
  // Everything the child needs is made before fork: between fork and exec a
  // child of a threaded process may only make async-signal-safe calls.
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::size_t eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  for (const auto& [key, value] : options.env) env[key] = value;
  if (channel) env[options.channel_variable] = std::to_string(kChannelFd);
  const bool granting = channel && !options.grant_variable.empty();
  if (granting) env[options.grant_variable] = std::to_string(kGrantFd);
  std::vector<std::string> env_entries;
  for (const auto& [key, value] : env) env_entries.push_back(key + "=" + value);
  std::vector<char*> envp, args;
  for (std::string& e : env_entries) envp.push_back(e.data());
  envp.push_back(nullptr);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  if (channel && pipe2(pipe_fds, O_CLOEXEC) != 0) return result;
  int out_fds[2] = {-1, -1}, grant_fds[2] = {-1, -1};
  const bool streamed = static_cast<bool>(options.on_output);
  const auto close_pipes = [&] {
    for (int fd : {pipe_fds[0], pipe_fds[1], out_fds[0], out_fds[1], grant_fds[0], grant_fds[1]}) {
      if (fd >= 0) close(fd);
    }
  };
  if ((streamed && pipe2(out_fds, O_CLOEXEC) != 0) || (granting && pipe2(grant_fds, O_CLOEXEC) != 0)) {
    close_pipes();
    return result;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    close_pipes();
    return result;
  }
  result.pid = pid;
  if (pid == 0) {
    setpgid(0, 0);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);  // the grader ignores it; its children must not inherit that
    if (options.nice) setpriority(PRIO_PROCESS, 0, options.nice);
    const int fd = streamed ? out_fds[1] : open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
    }
    const int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null >= 0) dup2(null, STDIN_FILENO);
    // A pipe's end as descriptor `number` in the child: dup2 clears close-on-exec on the copy; the
    // same number needs it cleared by hand.
    const auto inherit_as = [](int fd, int number) {
      if (fd == number) {
        fcntl(number, F_SETFD, 0);
      } else {
        dup2(fd, number);
      }
    };
    if (channel) inherit_as(pipe_fds[1], kChannelFd);
    if (granting) inherit_as(grant_fds[0], kGrantFd);
    execvpe(args[0], args.data(), envp.data());
    _exit(127);
  }
  setpgid(pid, pid);  // also from the parent, so a kill of the group cannot miss
  std::atomic<pid_t>* slot = track(pid);
  if (interrupted()) kill(-pid, SIGKILL);  // a signal between fork and the store above
  if (channel) {
    close(pipe_fds[1]);
    fcntl(pipe_fds[0], F_SETFL, O_NONBLOCK);
  }
  if (streamed) {
    close(out_fds[1]);
    fcntl(out_fds[0], F_SETFL, O_NONBLOCK);
  }
  if (granting) close(grant_fds[0]);
  std::string pending;  // streamed output after its last full line
  auto pass_on = [&](bool all) {
    if (!streamed) return;
    char buf[65536];
    for (ssize_t n; (n = read(out_fds[0], buf, sizeof buf)) > 0;) pending.append(buf, static_cast<std::size_t>(n));
    for (std::size_t end; (end = pending.find('\n')) != std::string::npos; pending.erase(0, end + 1)) {
      options.on_output(std::string_view(pending).substr(0, end + 1));
    }
    if (all && !pending.empty()) options.on_output(pending), pending.clear();
  };
  auto began = start;  // moved later by the time on_channel_line spends waiting
  auto last_heard = start;
  std::size_t handled = 0;  // how much of result.channel on_channel_line has seen
  auto drain = [&] {
    if (!channel) return;
    char buf[65536];
    for (;;) {
      const ssize_t n = read(pipe_fds[0], buf, sizeof buf);
      if (n <= 0) break;
      last_heard = std::chrono::steady_clock::now();
      if (result.channel.size() < options.channel_limit) {
        result.channel.append(buf, static_cast<std::size_t>(n));
      } else {
        result.channel_overflowed = true;
      }
    }
    if (!granting || !options.on_channel_line) return;
    for (std::size_t end; (end = result.channel.find('\n', handled)) != std::string::npos; handled = end + 1) {
      const auto asked = std::chrono::steady_clock::now();
      const ProcessOptions::Grant g =
          options.on_channel_line(std::string_view(result.channel).substr(handled, end - handled));
      const auto waited = std::chrono::steady_clock::now() - asked;
      began += waited;
      last_heard += waited;
      if (g == ProcessOptions::Grant::grant && grant_fds[1] >= 0) {
        const char byte = 1;
        while (write(grant_fds[1], &byte, 1) < 0 && errno == EINTR) {
        }
      } else if (g == ProcessOptions::Grant::refuse && grant_fds[1] >= 0) {
        close(grant_fds[1]);
        grant_fds[1] = -1;
      }
    }
  };
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) break;
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - began).count();
    const double silence_limit = options.silence_limit_s ? options.silence_limit_s() : 0;
    const bool silent =
        channel && silence_limit > 0 && std::chrono::duration<double>(now - last_heard).count() > silence_limit;
    if (elapsed > timeout_s || silent || interrupted()) {
      result.silent = silent && elapsed <= timeout_s;
      kill(-pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      result.timed_out = !interrupted();
      result.interrupted = interrupted();
      break;
    }
    if (channel || streamed) {
      pollfd p[2] = {{channel ? pipe_fds[0] : -1, POLLIN, 0}, {streamed ? out_fds[0] : -1, POLLIN, 0}};
      poll(p, 2, 50);
      drain();
      pass_on(false);
    } else {
      usleep(50 * 1000);
    }
  }
  // The rest of the group (a grandchild that kept the pipe open) ends with it.
  kill(-pid, SIGKILL);
  if (interrupted()) {  // the handler killed it: it did not end by itself
    result.interrupted = true;
    result.timed_out = false;
  }
  if (slot) slot->store(0);
  drain();
  pass_on(true);
  if (channel) close(pipe_fds[0]);
  if (streamed) close(out_fds[0]);
  if (grant_fds[1] >= 0) close(grant_fds[1]);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!result.timed_out && !result.interrupted) {
    if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  }
  return result;
}

}  // namespace grader
