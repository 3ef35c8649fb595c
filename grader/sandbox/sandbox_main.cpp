// workbook-sandbox: runs a program that holds a learner's code in the sandbox sandbox/sandbox.hpp
// describes, set up with what the kernel offers an ordinary user (namespaces, Landlock, seccomp,
// rlimits), and writes what it managed as JSON (a SandboxReport) to --report-fd just before it
// starts the program. Needs no privileges; where a protection is not allowed on this machine it
// carries on without it and says so.
//
//   workbook-sandbox --report-fd N [--scratch DIR] [--write PATH]... [--read DIR]...
//                    [--env NAME=VALUE]... [--keep-fd N]... [--cpu-seconds S] [--file-bytes B]
//                    [--debugger] [--loopback] [--bwrap BWRAP [--scratch-bytes B] [--scratch-on-host]]
//                    [--skip namespaces|landlock|seccomp|limits]... -- PROGRAM [ARG]...
//   workbook-sandbox --probe      (exits 0: bubblewrap's check that it can start a program here)
//
// --bwrap: the helper starts itself again inside bubblewrap (sandbox.hpp: its mounts, its namespaces),
// with --in-bwrap; there it checks that it is inside them, adds its Landlock, seccomp and limits, and
// makes no namespaces of its own.
//
// Processes: this helper waits for the sandbox's first process (PID 1 of a new PID namespace, or
// a subreaper where namespaces are not allowed), which starts the program and, when it ends,
// kills whatever the program left behind. Each dies with its parent (PR_SET_PDEATHSIG), so
// killing this helper ends everything inside.
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <linux/landlock.h>
#include <linux/netlink.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(WORKBOOK_HAVE_SECCOMP)
#include <seccomp.h>
#endif

#include <nlohmann/json.hpp>

#include "sandbox/sandbox.hpp"

namespace {

using workbook::sandbox::Layer;
using workbook::sandbox::SandboxReport;

// Landlock's newer fields and rights, for headers older than the running kernel.
constexpr std::uint64_t kTruncate = 1ull << 14;                                    // ABI 3
constexpr std::uint64_t kBindTcp = 1ull << 0, kConnectTcp = 1ull << 1;             // ABI 4
constexpr std::uint64_t kScopeAbstractUnix = 1ull << 0, kScopeSignal = 1ull << 1;  // ABI 6
struct RulesetAttr {
  std::uint64_t handled_access_fs = 0;
  std::uint64_t handled_access_net = 0;
  std::uint64_t scoped = 0;
};

struct Args {
  int report_fd = -1;
  std::string scratch;
  std::vector<std::string> writable, readable, env;
  std::vector<int> keep;
  long cpu_seconds = 0;
  unsigned long long file_bytes = 0;
  bool debugger = false;
  bool loopback = false;  // a loopback network of its own (TCP inside it allowed); set only with a network namespace
  bool in_bwrap = false;  // started by bubblewrap: its namespaces and mounts are there already
  std::string bwrap;      // --bwrap: start again inside bubblewrap (with --in-bwrap)
  unsigned long long scratch_bytes = 0;
  bool scratch_on_host = false;
  std::vector<std::string> skip;  // layers left out on purpose: namespaces, landlock, seccomp, limits
  std::vector<std::string> program;
  bool skipped(const char* layer) const {
    for (const std::string& s : skip)
      if (s == layer) return true;
    return false;
  }
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr, "workbook-sandbox: %s\n", why);
  std::_Exit(125);
}

Args parse(int argc, char** argv) {
  Args a;
  int i = 1;
  auto value = [&](const char* flag) -> std::string {
    if (i + 1 >= argc) usage((std::string(flag) + " needs a value").c_str());
    return argv[++i];
  };
  for (; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "--report-fd")
      a.report_fd = std::atoi(value("--report-fd").c_str());
    else if (arg == "--scratch")
      a.scratch = value("--scratch");
    else if (arg == "--write")
      a.writable.push_back(value("--write"));
    else if (arg == "--read")
      a.readable.push_back(value("--read"));
    else if (arg == "--env")
      a.env.push_back(value("--env"));
    else if (arg == "--keep-fd")
      a.keep.push_back(std::atoi(value("--keep-fd").c_str()));
    else if (arg == "--cpu-seconds")
      a.cpu_seconds = std::atol(value("--cpu-seconds").c_str());
    else if (arg == "--file-bytes")
      a.file_bytes = std::strtoull(value("--file-bytes").c_str(), nullptr, 10);
    else if (arg == "--debugger")
      a.debugger = true;
    else if (arg == "--loopback")
      a.loopback = true;
    else if (arg == "--in-bwrap")
      a.in_bwrap = true;
    else if (arg == "--bwrap")
      a.bwrap = value("--bwrap");
    else if (arg == "--scratch-bytes")
      a.scratch_bytes = std::strtoull(value("--scratch-bytes").c_str(), nullptr, 10);
    else if (arg == "--scratch-on-host")
      a.scratch_on_host = true;
    else if (arg == "--probe")
      std::_Exit(0);
    else if (arg == "--skip")
      a.skip.push_back(value("--skip"));
    else
      usage(("unknown option " + arg).c_str());
  }
  for (; i < argc; ++i) a.program.push_back(argv[i]);
  if (a.program.empty()) usage("no program given after --");
  return a;
}

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

bool write_file(const char* path, const std::string& text) {
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

// The parent's side of a pipe whose write end only the parent holds: the child sees it close
// when the parent is gone, whatever PID namespace either is in.
struct Lifeline {
  int fds[2] = {-1, -1};
  Lifeline() {
    if (pipe2(fds, O_CLOEXEC) != 0) fds[0] = fds[1] = -1;
  }
  // In the child, after fork: dies with the parent; false if the parent is already gone.
  bool hold() {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    close(fds[1]);
    pollfd p{fds[0], POLLIN, 0};
    const bool gone = poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR));
    close(fds[0]);
    return !gone;
  }
  // In the parent, after fork.
  void keep() { close(fds[0]); }
};

// A user namespace (which makes the others allowed without privileges), then PID, network, IPC and
// mount namespaces. Returns which of PID, network and mount it got.
struct Namespaces {
  bool pid = false, net = false, mount = false;
};
Namespaces enter_namespaces(const Args& a, SandboxReport& report) {
  Namespaces got;
  if (a.skipped("namespaces")) {
    report.missing.push_back("namespaces: left out (--skip namespaces)");
    return got;
  }
  const uid_t uid = geteuid();
  const gid_t gid = getegid();
  std::string user_error;
  if (unshare(CLONE_NEWUSER) == 0) {
    // The same ids inside as outside: files keep their owners, and nothing gains a right.
    write_file("/proc/self/setgroups", "deny");
    if (!write_file("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1") ||
        !write_file("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1")) {
      user_error = errno_text("user namespace id map");
    }
  } else {
    user_error = errno_text("user namespace");
  }
  const struct {
    int flag;
    bool* got;
    Layer layer;
  } wanted[] = {{CLONE_NEWPID, &got.pid, Layer::process_namespace},
                {CLONE_NEWNET, &got.net, Layer::no_network},
                {CLONE_NEWNS, &got.mount, Layer::private_proc}};
  unshare(CLONE_NEWIPC);  // System V shared memory of its own; nothing depends on it
  for (const auto& w : wanted) {
    *w.got = unshare(w.flag) == 0;
    if (!*w.got) {
      const std::string why = errno_text("unshare");
      const std::string name = nlohmann::json(w.layer).get<std::string>();
      report.missing.push_back(name + ": " + (user_error.empty() ? why : user_error + ", " + why));
    }
  }
  if (got.net) report.enforced.push_back(Layer::no_network);
  return got;
}

// The network namespace's own loopback interface, up: TCP between the sandbox's own processes and
// threads (NCCL's bootstrap), and nothing else, since the namespace has no other interface.
bool loopback_up(SandboxReport& report) {
  const int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  const bool up =
      s >= 0 && ioctl(s, SIOCGIFFLAGS, &ifr) == 0 && (ifr.ifr_flags |= IFF_UP, ioctl(s, SIOCSIFFLAGS, &ifr) == 0);
  if (!up) report.missing.push_back(errno_text("loopback network: lo"));
  if (s >= 0) close(s);
  return up;
}

// Landlock: writes only beneath the scratch folder and the files given; reads only beneath the
// folders given; TCP refused (ABI 4); no signals or abstract sockets outside (ABI 6).
void restrict_files(const Args& a, SandboxReport& report) {
  if (a.skipped("landlock")) {
    report.missing.push_back("read-only file system: left out (--skip landlock)");
    return;
  }
  const long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi < 1) {
    report.missing.push_back(errno_text("read-only file system: Landlock"));
    return;
  }
  const std::uint64_t read = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_EXECUTE;
  std::uint64_t write = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
                        LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                        LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
                        LANDLOCK_ACCESS_FS_MAKE_SYM;
  if (abi >= 2) write |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) write |= kTruncate;
  RulesetAttr attr;
  attr.handled_access_fs = read | write;
  std::size_t size = sizeof(std::uint64_t);
  if (abi >= 4 && !a.loopback) {  // with --loopback the namespace is the boundary: TCP reaches only lo
    attr.handled_access_net = kBindTcp | kConnectTcp;
  }
  if (abi >= 4) size = 2 * sizeof(std::uint64_t);
  if (abi >= 6) {
    attr.scoped = kScopeAbstractUnix | kScopeSignal;
    size = sizeof attr;
  }
  const int ruleset = static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, size, 0));
  if (ruleset < 0) {
    report.missing.push_back(errno_text("read-only file system: Landlock ruleset"));
    return;
  }
  const std::uint64_t file_rights = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                                    LANDLOCK_ACCESS_FS_EXECUTE | (abi >= 3 ? kTruncate : 0);
  auto allow = [&](const std::string& path, std::uint64_t rights) {
    const int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) return;  // a folder this machine does not have
    struct stat st {};
    if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) rights &= file_rights;
    landlock_path_beneath_attr rule{};
    rule.allowed_access = rights;
    rule.parent_fd = fd;
    syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
    close(fd);
  };
  for (const std::string& r : workbook::sandbox::system_readable(a.readable)) allow(r, read);
  for (const std::string& w : a.writable) allow(w, read | write);
  if (!a.scratch.empty()) allow(a.scratch, read | write);
  allow("/dev/null", read | write);
  allow("/dev/shm", read | write);
  allow(a.program[0], read);
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
    report.missing.push_back(errno_text("read-only file system: Landlock restrict_self"));
    close(ruleset);
    return;
  }
  close(ruleset);
  report.enforced.push_back(Layer::read_only);
  report.enforced.push_back(Layer::limited_reads);
  if (a.loopback)
    report.enforced.push_back(Layer::loopback_only);
  else if (abi >= 4)
    report.enforced.push_back(Layer::no_tcp);
  else
    report.missing.push_back("no TCP: Landlock ABI 4 needed, the kernel has " + std::to_string(abi));
  if (abi >= 6)
    report.enforced.push_back(Layer::no_outside_signals);
  else
    report.missing.push_back("no signals outside: Landlock ABI 6 needed, the kernel has " + std::to_string(abi));
}

void filter_system_calls(const Args& a, SandboxReport& report) {
  if (a.skipped("seccomp")) {
    report.missing.push_back("system-call filter: left out (--skip seccomp)");
    return;
  }
#if defined(WORKBOOK_HAVE_SECCOMP)
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) {
    report.missing.push_back("system-call filter: seccomp_init failed");
    return;
  }
  // Refused with EPERM: what reaches other processes, the kernel or the machine's configuration.
  std::vector<const char*> refused = {"process_vm_readv",
                                      "process_vm_writev",
                                      "pidfd_getfd",
                                      "kcmp",
                                      "kexec_load",
                                      "kexec_file_load",
                                      "init_module",
                                      "finit_module",
                                      "delete_module",
                                      "bpf",
                                      "perf_event_open",
                                      "mount",
                                      "umount2",
                                      "pivot_root",
                                      "chroot",
                                      "move_mount",
                                      "open_tree",
                                      "fsopen",
                                      "fsmount",
                                      "fsconfig",
                                      "fspick",
                                      "mount_setattr",
                                      "unshare",
                                      "setns",
                                      "keyctl",
                                      "add_key",
                                      "request_key",
                                      "userfaultfd",
                                      "io_uring_setup",
                                      "io_uring_enter",
                                      "io_uring_register",
                                      "open_by_handle_at",
                                      "name_to_handle_at",
                                      "reboot",
                                      "swapon",
                                      "swapoff",
                                      "syslog",
                                      "acct",
                                      "settimeofday",
                                      "clock_settime",
                                      "clock_adjtime",
                                      "adjtimex",
                                      "sethostname",
                                      "setdomainname",
                                      "quotactl",
                                      "iopl",
                                      "ioperm",
                                      "uselib",
                                      "vhangup",
                                      "lookup_dcookie"};
  if (!a.debugger) refused.push_back("ptrace");
  bool ok = true;
  for (const char* name : refused) {
    const int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) continue;  // not on this architecture
    ok = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0) == 0 && ok;
  }
  // Sockets: Unix ones only (no network, whatever namespaces the machine allows); with a loopback
  // network of its own (--loopback, in a network namespace), IPv4 and IPv6 too, which reach only lo,
  // and netlink's route protocol, by which getifaddrs (NCCL's search for interfaces) lists them.
  if (a.loopback) {
    constexpr int kFamilies = 64;  // above AF_MAX on every Linux so far
    for (int family = 0; family < kFamilies; ++family) {
      if (family == AF_UNIX || family == AF_INET || family == AF_INET6 || family == AF_NETLINK) continue;
      ok = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
                            SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(family))) == 0 &&
           ok;
    }
    ok = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 2, SCMP_A0(SCMP_CMP_EQ, AF_NETLINK),
                          SCMP_A2(SCMP_CMP_NE, NETLINK_ROUTE)) == 0 &&
         ok;
    ok = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_GE, kFamilies)) ==
             0 &&
         ok;
  } else {
    ok = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_NE, AF_UNIX)) == 0 &&
         ok;
  }
  // No new namespaces inside: clone with a CLONE_NEW* flag; clone3 hides its flags in memory, so
  // it answers ENOSYS and the C library falls back to clone.
  for (const unsigned long flag :
       {CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWCGROUP}) {
    ok = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)) ==
             0 &&
         ok;
  }
  const int clone3 = seccomp_syscall_resolve_name("clone3");
  if (clone3 != __NR_SCMP_ERROR) ok = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), clone3, 0) == 0 && ok;
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (!ok || seccomp_load(ctx) != 0) {
    report.missing.push_back("system-call filter: libseccomp could not load the filter");
  } else {
    report.enforced.push_back(Layer::syscall_filter);
  }
  seccomp_release(ctx);
#else
  (void)a;
  report.missing.push_back(
      "system-call filter: the workbook was built without libseccomp (Debian and "
      "Ubuntu: libseccomp-dev)");
#endif
}

void set_limits(const Args& a, SandboxReport& report) {
  if (a.skipped("limits")) {
    report.missing.push_back("resource limits: left out (--skip limits)");
    return;
  }
  bool ok = true;
  const rlimit no_core{0, 0};
  ok = setrlimit(RLIMIT_CORE, &no_core) == 0 && ok;
  if (a.file_bytes) {
    const rlimit f{a.file_bytes, a.file_bytes};
    ok = setrlimit(RLIMIT_FSIZE, &f) == 0 && ok;
  }
  if (a.cpu_seconds > 0) {
    const rlimit c{static_cast<rlim_t>(a.cpu_seconds), static_cast<rlim_t>(a.cpu_seconds) + 5};
    ok = setrlimit(RLIMIT_CPU, &c) == 0 && ok;
  }
  // Processes (threads count too): the user's processes now, and room for the program's threads
  // (the CUDA runtime and compute-sanitizer start dozens), but no fork bomb.
  rlimit now{};
  if (getrlimit(RLIMIT_NPROC, &now) == 0) {
    long tasks = 0;
    if (FILE* f = std::fopen("/proc/loadavg", "r")) {  // "0.00 0.01 0.05 2/345 6789": all tasks
      char line[256] = {};
      if (std::fgets(line, sizeof line, f)) {
        if (const char* slash = std::strchr(line, '/')) tasks = std::atol(slash + 1);
      }
      std::fclose(f);
    }
    const rlim_t cap = static_cast<rlim_t>(tasks + 4096);
    if (tasks > 0 && (now.rlim_cur == RLIM_INFINITY || now.rlim_cur > cap)) {
      const rlimit p{cap, cap};
      ok = setrlimit(RLIMIT_NPROC, &p) == 0 && ok;
    }
  }
  if (ok)
    report.enforced.push_back(Layer::limits);
  else
    report.missing.push_back(errno_text("resource limits"));
}

void close_other_descriptors(const Args& a) {
  const int max = static_cast<int>(sysconf(_SC_OPEN_MAX) > 0 ? std::min<long>(sysconf(_SC_OPEN_MAX), 65536) : 1024);
  for (int fd = 3; fd < max; ++fd) {
    if (fd == a.report_fd) continue;
    bool keep = false;
    for (const int k : a.keep) keep = keep || k == fd;
    if (!keep) close(fd);
  }
}

void send_report(int fd, const SandboxReport& report) {
  if (fd < 0) return;
  const std::string text = nlohmann::json(report).dump() + "\n";
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n <= 0 && errno != EINTR) break;
    if (n > 0) done += static_cast<std::size_t>(n);
  }
}

// The program's process: limits, Landlock, seccomp (in that order: each may need what the next
// refuses), then exec. Never returns.
[[noreturn]] void start_program(const Args& a, SandboxReport report) {
  set_limits(a, report);
  restrict_files(a, report);
  filter_system_calls(a, report);
  if (!a.scratch.empty() && chdir(a.scratch.c_str()) != 0) {
    report.missing.push_back(errno_text("scratch folder"));
  }
  std::vector<char*> args, env;
  for (const std::string& s : a.program) args.push_back(const_cast<char*>(s.c_str()));
  args.push_back(nullptr);
  for (const std::string& s : a.env) env.push_back(const_cast<char*>(s.c_str()));
  env.push_back(nullptr);
  fcntl(a.report_fd, F_SETFD, FD_CLOEXEC);
  send_report(a.report_fd, report);
  execve(args[0], args.data(), env.data());
  SandboxReport failed = report;
  failed.error = errno_text(("cannot run " + a.program[0]).c_str());
  send_report(a.report_fd, failed);
  std::_Exit(127);
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 126;
}

// --bwrap: this helper's own command again, with --in-bwrap, as bubblewrap's program; the report
// descriptor and the kept ones pass through. Never returns.
[[noreturn]] void exec_in_bwrap(const Args& a, int argc, char** argv) {
  char self[4096] = {};
  const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  workbook::sandbox::BwrapView view;
  view.bwrap = a.bwrap;
  view.scratch = a.scratch.empty() ? workbook::sandbox::kSandboxScratch : a.scratch;
  view.scratch_bytes = a.scratch_bytes;
  view.scratch_on_host = a.scratch_on_host && !a.scratch.empty();
  view.readable = a.readable;
  view.terminal = a.debugger;
  const std::string helper = len > 0 ? std::string(self, static_cast<std::size_t>(len)) : std::string(argv[0]);
  view.readable.push_back(helper);
  view.readable.push_back(a.program.front());
  for (const std::string& w : a.writable) {
    if (w.rfind("/dev/", 0) != 0 && w != "/proc") view.readable.push_back(w);
  }
  std::vector<std::string> words = workbook::sandbox::bwrap_words(view);
  words.push_back(helper);
  words.push_back("--in-bwrap");
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--bwrap" || arg == "--scratch-bytes") {
      ++i;
      continue;
    }
    if (arg == "--scratch-on-host") continue;
    if (arg == "--") {
      for (; i < argc; ++i) words.push_back(argv[i]);
      break;
    }
    words.push_back(arg);
  }
  if (a.scratch.empty())
    words.insert(words.end() - static_cast<long>(a.program.size()) - 1, {"--scratch", view.scratch});
  std::vector<char*> args;
  for (std::string& w : words) args.push_back(w.data());
  args.push_back(nullptr);
  execv(args[0], args.data());
  SandboxReport failed;
  failed.error = errno_text(("cannot run bubblewrap " + a.bwrap).c_str());
  send_report(a.report_fd, failed);
  std::_Exit(127);
}

// Inside bubblewrap (--in-bwrap): its PID namespace, whose first process is bubblewrap itself, and
// its mounts (no /etc/passwd, a /proc of its own). What it finds is reported; the helper makes no
// namespaces of its own there (its filter would refuse them to the program anyway).
void check_bwrap(const Args& a, SandboxReport& report) {
  std::string init;
  if (FILE* f = std::fopen("/proc/1/comm", "r")) {
    char line[64] = {};
    if (std::fgets(line, sizeof line, f)) init = line;
    std::fclose(f);
  }
  if (init.rfind("bwrap", 0) != 0 || access("/etc/passwd", F_OK) == 0) {
    report.missing.push_back("bubblewrap: asked for, but this process is not inside its namespaces");
    return;
  }
  report.enforced.push_back(Layer::bubblewrap);
  report.enforced.push_back(Layer::process_namespace);
  report.enforced.push_back(Layer::private_proc);
  report.enforced.push_back(Layer::private_shm);
  report.enforced.push_back(a.loopback ? Layer::loopback_only : Layer::no_network);
}

}  // namespace

int main(int argc, char** argv) {
  Args a = parse(argc, argv);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1 && !a.in_bwrap) return 125;  // the caller is already gone (inside bubblewrap, PID 1 is its parent)
  close_other_descriptors(a);
  signal(SIGPIPE, SIG_DFL);
  if (!a.bwrap.empty() && !a.in_bwrap) exec_in_bwrap(a, argc, argv);
  SandboxReport report;
  if (a.in_bwrap) {
    check_bwrap(a, report);
    start_program(a, report);  // bubblewrap's first process reaps it, and its PID namespace ends what it leaves
  }
  const Namespaces ns = enter_namespaces(a, report);
  if (a.loopback && !ns.net) {
    report.missing.push_back("loopback network: no network namespace of its own, so TCP stays refused");
    a.loopback = false;
  } else if (a.loopback) {
    a.loopback = loopback_up(report);
  }

  // The sandbox's first process: PID 1 of the new namespace, else a subreaper.
  Lifeline helper;
  const pid_t init = fork();
  if (init < 0) {
    report.error = errno_text("fork");
    send_report(a.report_fd, report);
    return 126;
  }
  if (init > 0) {
    helper.keep();
    close(a.report_fd);
    for (const int fd : a.keep) close(fd);
    int status = 0;
    while (waitpid(init, &status, 0) < 0) {
      if (errno != EINTR) return 126;
    }
    return exit_code_of(status);
  }
  if (!helper.hold()) std::_Exit(125);
  if (ns.pid) {
    report.enforced.push_back(Layer::process_namespace);
  } else if (prctl(PR_SET_CHILD_SUBREAPER, 1) == 0) {
    report.enforced.push_back(Layer::kill_all);
  } else {
    report.missing.push_back(errno_text("kill all descendants: PR_SET_CHILD_SUBREAPER"));
  }
  // Mounts of the sandbox's own (they change nothing outside it): a /proc that shows only its
  // processes (and so not the grader's), and a /dev/shm, where the CUDA driver keeps a file,
  // so the program can neither touch another process's files there nor fill the machine's.
  const bool mounts = ns.mount && mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0;
  if (ns.mount && !mounts) report.missing.push_back(errno_text("private mounts: mount"));
  if (mounts && ns.pid && mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) == 0) {
    report.enforced.push_back(Layer::private_proc);
  } else if (mounts && ns.pid) {
    report.missing.push_back(errno_text("private /proc: mount"));
  }
  if (mounts && mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=256m,mode=1777") == 0) {
    report.enforced.push_back(Layer::private_shm);
  } else {
    report.missing.push_back(mounts ? errno_text("private /dev/shm: mount") : "private /dev/shm: no mount namespace");
  }
  Lifeline first;
  const pid_t program = fork();
  if (program < 0) {
    report.error = errno_text("fork");
    send_report(a.report_fd, report);
    std::_Exit(126);
  }
  if (program == 0) {
    if (!first.hold()) std::_Exit(125);
    start_program(a, report);
  }
  first.keep();
  close(a.report_fd);
  for (const int fd : a.keep) close(fd);
  // Reap everything until the program ends; then end what it left behind.
  int status = 0;
  for (;;) {
    int s = 0;
    const pid_t done = wait(&s);
    if (done == program) {
      status = s;
      break;
    }
    if (done < 0 && errno != EINTR) break;
  }
  if (ns.pid && getpid() == 1) {
    kill(-1, SIGKILL);  // PID 1 of its own namespace: every other process in it, nothing outside
    while (wait(nullptr) > 0 || errno == EINTR) {
    }
  } else {
    workbook::sandbox::kill_descendants();
  }
  std::_Exit(exit_code_of(status));
}
