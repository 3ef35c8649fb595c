// Child processes: a time limit, output to a log file, an optional result
// channel, and an end to the whole tree of them when the grader is interrupted.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace grader {

struct ProcessResult {
  bool timed_out = false;
  bool interrupted = false;  // the grader got SIGINT or SIGTERM while it ran
  int exit_code = -1;        // valid when it exited (not timed out, no signal)
  int signal = 0;            // the signal that ended it, if any
  double seconds = 0;
  std::string channel;  // what arrived on the result channel, if one was asked for
  bool channel_overflowed = false;
  bool silent = false;  // timed out because the channel stayed silent too long
  int pid = -1;         // the child's process id, once it was started
};

//! The CPU priority (nice) of what builds and checks learners' code: below the test processes, whose
//! timed runs' host side must not wait for a core behind a compiler.
inline constexpr int kBuilderNice = 10;

//! Lowers the calling thread to kBuilderNice, and with it every thread and process it starts from
//! then on (on Linux a nice value is a thread's, and inherited). Not undone: an unprivileged
//! process cannot raise it again, so call it on a thread of its own.
void lower_to_builder_priority();

struct ProcessOptions {
  std::map<std::string, std::string> env;  // added to the child's environment
  //! Open a pipe the child inherits, its descriptor number in this variable;
  //! what the child writes there comes back in ProcessResult::channel.
  std::string channel_variable;
  std::size_t channel_limit = std::size_t(8) << 20;
  int nice = 0;  // a lower CPU priority (builds beside timed GPU runs)
  //! With a channel: end the child when nothing arrives on it for this many seconds (a test that
  //! hangs), however much of its whole time limit is left. Asked each time it is checked, so it
  //! may change as lines arrive (on_channel_line); empty or 0: no limit.
  std::function<double()> silence_limit_s;
  //! Given: the child's stdout and stderr come here, line by line as they arrive (a student
  //! watching a tool's output), instead of to the log file.
  std::function<void(std::string_view line)> on_output;
  //! With a channel and a grant_variable: the child also inherits a grant pipe (its descriptor
  //! number in that variable), and on_channel_line sees each whole channel line as it arrives and
  //! says what to do with the pipe. The time it takes (a wait for the GPU) counts toward neither
  //! the time limit nor the silence limit.
  std::string grant_variable;
  enum class Grant { none, grant, refuse };  // nothing; write one byte; close the pipe
  std::function<Grant(std::string_view line)> on_channel_line;
};

//! Runs argv[0] with argv in a process group of its own, stdout and stderr to
//! `log_path`. Safe to call from several threads at once. After `timeout_s`, or when the grader is interrupted, the
//! whole group is killed (a hung kernel's host thread, nvcc's children with it).
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& log_path, double timeout_s,
                          const ProcessOptions& options = {});

//! The descriptor numbers a child finds its result channel and its grant pipe on.
inline constexpr int kChannelFd = 3;
inline constexpr int kGrantFd = 4;

//! Makes SIGINT and SIGTERM end the running child's process group and mark
//! the grader interrupted, instead of killing the grader at once.
void install_interrupt_handlers();

//! True once SIGINT or SIGTERM has arrived; the signal number in `signal`.
bool interrupted(int* signal = nullptr);

}  // namespace grader
