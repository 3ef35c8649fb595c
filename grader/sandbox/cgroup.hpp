// A cgroup v2 of its own for each sandboxed process tree (Linux): its host memory (pinned memory
// included: the CUDA driver's pinned pages are charged to the cgroup of the process that asks for
// them, seen on the H200 with driver 580.159.04, 2026-12-04) and its number of processes are
// limited, and everything in it is killed at once when it ends (cgroup.kill), whatever it did to
// hide.
//
// A cgroup can be made where this process may write a cgroup whose children get the memory and pids
// controllers: the nearest of its own cgroup's ancestors that allows it (as root, the root of the
// hierarchy; as an ordinary user, a delegated subtree, e.g. `systemd-run --user --scope -p
// Delegate=yes`). Where none can be made, nothing is limited and `why` says so.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <sys/types.h>

namespace workbook::cgroup {

//! The limits of one sandbox.
struct Limits {
  std::uint64_t memory_bytes = 0;  //!< memory.max (swap off); 0: none
  std::uint64_t processes = 0;     //!< pids.max; 0: none
};

//! One cgroup, made for one process tree and removed with it.
class Leaf {
 public:
  //! A new cgroup with `limits`, or nullptr with `*why`.
  static std::unique_ptr<Leaf> create(const Limits& limits, std::string* why);
  ~Leaf();  // kills what is left in it and removes it
  Leaf(const Leaf&) = delete;
  Leaf& operator=(const Leaf&) = delete;

  //! A descriptor of its cgroup.procs, open for writing: a child writes "0" there (async-signal-
  //! safe) before it executes the program, and so moves itself and all it starts into the cgroup.
  int procs_fd() const { return procs_fd_; }
  //! Kills every process in it (cgroup.kill; where the kernel lacks it, each listed process).
  void kill_all();
  //! How many times the kernel killed a process in it for memory (memory.events oom_kill).
  int oom_kills() const;
  //! The most memory it held (memory.peak; 0 where the kernel lacks it).
  std::uint64_t peak_bytes() const;
  const Limits& limits() const { return limits_; }
  const std::string& path() const { return path_; }

 private:
  Leaf(std::string path, const Limits& limits, int procs_fd);
  std::string path_;
  Limits limits_;
  int procs_fd_ = -1;
};

//! Kills what is in the cgroups that the process `maker` made and did not remove (it was killed),
//! and removes them. The grader calls it when a judge has ended.
void remove_left_by(pid_t maker);

}  // namespace workbook::cgroup
