#include "sandbox/cgroup.hpp"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

namespace workbook::cgroup {
namespace {

bool write_text(const std::string& path, const std::string& text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

bool has_word(const std::string& text, const std::string& word) {
  std::istringstream in(text);
  for (std::string w; in >> w;) {
    if (w == word) return true;
  }
  return false;
}

// The folder under which this process makes its cgroups, or "" with the reason.
struct Base {
  std::string dir, why;
};

Base find_base() {
  Base b;
  std::string mount;
  {
    std::ifstream mounts("/proc/self/mounts");
    for (std::string device, point, type; mounts >> device >> point >> type;) {
      if (type == "cgroup2") {
        mount = point;
        break;
      }
      std::string rest;
      std::getline(mounts, rest);
    }
  }
  if (mount.empty()) {
    b.why = "host memory limit: no cgroup v2 is mounted here";
    return b;
  }
  std::string own;
  {
    std::ifstream in("/proc/self/cgroup");
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("0::", 0) == 0) own = line.substr(3);
    }
  }
  if (own.empty() || own[0] != '/') {
    b.why = "host memory limit: this process is in no cgroup v2";
    return b;
  }
  // From this process's own cgroup up to the root: the first where a child cgroup gets the memory and
  // pids controllers and may be made by this user.
  for (std::string path = own;;) {
    const std::string dir = mount + (path == "/" ? "" : path);
    const std::string control = dir + "/cgroup.subtree_control";
    std::string enabled = read_text(control);
    if (!has_word(enabled, "memory") || !has_word(enabled, "pids")) {
      write_text(control, "+memory +pids");  // allowed where this user owns it and it holds no process
      enabled = read_text(control);
    }
    if (has_word(enabled, "memory") && has_word(enabled, "pids") && access(dir.c_str(), W_OK) == 0) {
      b.dir = dir;
      return b;
    }
    if (path == "/") break;
    path = path.substr(0, path.rfind('/'));
    if (path.empty()) path = "/";
  }
  b.why = fmt::format(
      "host memory limit: no cgroup this user may make with the memory controller (this process is "
      "in {}; run as root, or in a delegated cgroup: systemd-run --user --scope -p Delegate=yes)",
      own);
  return b;
}

const Base& base() {
  static const Base b = find_base();
  return b;
}

}  // namespace

std::unique_ptr<Leaf> Leaf::create(const Limits& limits, std::string* why) {
  const Base& b = base();
  if (b.dir.empty()) {
    *why = b.why;
    return nullptr;
  }
  static std::atomic<int> made{0};
  const std::string path = fmt::format("{}/workbook.{}.{}", b.dir, getpid(), made++);
  if (mkdir(path.c_str(), 0755) != 0) {
    *why = fmt::format("host memory limit: mkdir {}: {}", path, std::strerror(errno));
    return nullptr;
  }
  bool ok = true;
  if (limits.memory_bytes) {
    ok = write_text(path + "/memory.max", std::to_string(limits.memory_bytes)) && ok;
    write_text(path + "/memory.swap.max", "0");  // absent where the kernel has no swap accounting
  }
  if (limits.processes) ok = write_text(path + "/pids.max", std::to_string(limits.processes)) && ok;
  const int fd = open((path + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
  if (!ok || fd < 0) {
    *why = fmt::format("host memory limit: cannot set the limits of {}: {}", path, std::strerror(errno));
    if (fd >= 0) close(fd);
    rmdir(path.c_str());
    return nullptr;
  }
  return std::unique_ptr<Leaf>(new Leaf(path, limits, fd));
}

namespace {

// Kills every process in the cgroup at `path`: cgroup.kill (Linux 5.14 and later), else each one.
void kill_everything_in(const std::string& path) {
  if (!write_text(path + "/cgroup.kill", "1")) {
    std::istringstream procs(read_text(path + "/cgroup.procs"));
    for (pid_t pid; procs >> pid;) kill(pid, SIGKILL);
  }
}

// Removes the cgroup at `path` once it is empty, killing what is left in it meanwhile: the killed
// processes leave it as the kernel reaps them. Gives up after 10 s.
void kill_and_remove(const std::string& path) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (rmdir(path.c_str()) != 0 && errno == EBUSY && std::chrono::steady_clock::now() < until) {
    kill_everything_in(path);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

Leaf::Leaf(std::string path, const Limits& limits, int procs_fd)
    : path_(std::move(path)), limits_(limits), procs_fd_(procs_fd) {}

void Leaf::kill_all() { kill_everything_in(path_); }

Leaf::~Leaf() {
  if (procs_fd_ >= 0) close(procs_fd_);
  kill_and_remove(path_);
}

int Leaf::oom_kills() const {
  std::istringstream events(read_text(path_ + "/memory.events"));
  for (std::string key; events >> key;) {
    long long value = 0;
    events >> value;
    if (key == "oom_kill") return static_cast<int>(value);
  }
  return 0;
}

std::uint64_t Leaf::peak_bytes() const {
  const std::string text = read_text(path_ + "/memory.peak");
  return text.empty() ? 0 : std::strtoull(text.c_str(), nullptr, 10);
}

void remove_left_by(pid_t maker) {
  const Base& b = base();
  if (b.dir.empty() || maker <= 0) return;
  const std::string prefix = fmt::format("workbook.{}.", maker);
  DIR* dir = opendir(b.dir.c_str());
  if (!dir) return;
  std::vector<std::string> left;
  while (const dirent* e = readdir(dir)) {
    if (std::string(e->d_name).rfind(prefix, 0) == 0) left.push_back(b.dir + "/" + e->d_name);
  }
  closedir(dir);
  for (const std::string& path : left) kill_and_remove(path);
}

}  // namespace workbook::cgroup
