#include "workbook/sandbox.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

namespace workbook::sandbox {

bool SandboxReport::has(Layer layer) const {
  return std::find(enforced.begin(), enforced.end(), layer) != enforced.end();
}

bool SandboxReport::contained() const {
  return error.empty() && (has(Layer::process_namespace) || has(Layer::kill_all)) && has(Layer::read_only);
}

std::string SandboxReport::summary() const {
  if (!error.empty()) return "not sandboxed: " + error;
  std::string on;
  for (const Layer l : enforced) on += (on.empty() ? "" : ", ") + nlohmann::json(l).get<std::string>();
  std::string off;
  for (const std::string& m : missing) off += (off.empty() ? "" : "; ") + m;
  if (!contained()) return fmt::format("not sandboxed: {}{}", off.empty() ? "no helper" : off,
                                       on.empty() ? "" : fmt::format(" (enforced: {})", on));
  return off.empty() ? fmt::format("sandboxed ({})", on) : fmt::format("sandboxed ({}; not: {})", on, off);
}

std::vector<std::string> helper_command(const Policy& policy, int report_fd,
                                        const std::vector<std::string>& program) {
  std::vector<std::string> argv = {policy.helper, "--report-fd", std::to_string(report_fd)};
  if (!policy.scratch.empty()) argv.insert(argv.end(), {"--scratch", policy.scratch});
  for (const std::string& w : policy.writable) argv.insert(argv.end(), {"--write", w});
  for (const std::string& r : policy.readable) argv.insert(argv.end(), {"--read", r});
  for (const std::string& e : policy.env) argv.insert(argv.end(), {"--env", e});
  for (const int fd : policy.keep_fds) argv.insert(argv.end(), {"--keep-fd", std::to_string(fd)});
  if (policy.cpu_seconds > 0) argv.insert(argv.end(), {"--cpu-seconds", fmt::format("{:.0f}", policy.cpu_seconds)});
  if (policy.file_bytes > 0) argv.insert(argv.end(), {"--file-bytes", std::to_string(policy.file_bytes)});
  if (policy.debugger) argv.push_back("--debugger");
  if (policy.loopback) argv.push_back("--loopback");
  argv.push_back("--");
  argv.insert(argv.end(), program.begin(), program.end());
  return argv;
}

std::vector<std::string> system_readable(const std::vector<std::string>& extra) {
  std::vector<std::string> dirs = {"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin",
                                   "/etc", "/opt", "/proc", "/sys", "/dev", "/run", "/nix"};
  if (const char* ld = std::getenv("LD_LIBRARY_PATH")) {
    std::istringstream in(ld);
    for (std::string d; std::getline(in, d, ':');) {
      if (!d.empty() && d[0] == '/') dirs.push_back(d);
    }
  }
  dirs.insert(dirs.end(), extra.begin(), extra.end());
  std::vector<std::string> unique;
  std::set<std::string> seen;
  for (const std::string& d : dirs) {
    if (seen.insert(d).second) unique.push_back(d);
  }
  return unique;
}

namespace {

// The children of this process, from every thread's list (/proc/self/task/*/children).
std::vector<pid_t> children() {
  std::vector<pid_t> out;
  DIR* tasks = opendir("/proc/self/task");
  if (!tasks) return out;
  while (const dirent* t = readdir(tasks)) {
    if (t->d_name[0] == '.') continue;
    std::ifstream in(std::string("/proc/self/task/") + t->d_name + "/children");
    for (pid_t pid; in >> pid;) out.push_back(pid);
  }
  closedir(tasks);
  return out;
}

}  // namespace

void kill_descendants(pid_t except) {
  // Each round kills the children there are; their children are then reparented here (a
  // subreaper) and die in the next round. A killed process forks no more, so it ends.
  for (int round = 0; round < 1000; ++round) {
    std::vector<pid_t> found = children();
    found.erase(std::remove(found.begin(), found.end(), except), found.end());
    if (found.empty()) return;
    for (const pid_t pid : found) kill(pid, SIGKILL);
    for (const pid_t pid : found) {
      while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
  }
}

}  // namespace workbook::sandbox
