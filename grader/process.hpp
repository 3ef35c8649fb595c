// Running a child process with a time limit, its output captured to a file.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace grader {

struct ProcessResult {
  bool timed_out = false;
  int exit_code = -1;  // valid when !timed_out && signal == 0
  int signal = 0;      // the signal that ended it, if any
  double seconds = 0;
};

//! Runs argv[0] with argv in its own process group, stdout and stderr to
//! `log_path`, extra environment `env`. After `timeout_s` the whole group is
//! killed (a hung kernel's host thread with it).
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& log_path,
                          double timeout_s, const std::map<std::string, std::string>& env = {});

//! The last `max_lines` lines of a file.
std::string tail_of(const std::string& path, std::size_t max_lines);

}  // namespace grader
