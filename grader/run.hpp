// Running a chapter's test process and reading what it reported over the
// result channel (never its stdout, never a file it could name).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "judge/channel.hpp"
#include "process.hpp"

namespace grader {

struct TestRecord {
  std::string name;   // "Sizes/ExactSums.EveryElementCountedOnce/n_1000"
  std::string group;  // "ExactSums"
  workbook::channel::Result result = workbook::channel::Result::failed;
  std::vector<std::string> failures;
  std::optional<workbook::channel::Bandwidth> bandwidth;  // a Bandwidth test's measurement
  bool starved = false;  // it failed for want of device memory another process held (the judge's word)
};

struct TestRun {
  ProcessResult process;
  bool began = false;
  std::string started;         // the last test that started
  std::string problem;         // what the process found wrong before any test (registration)
  bool start_starved = false;  // the chapter's process could not start for want of device memory
  std::vector<TestRecord> tests;
  bool ended = false;
  bool asked_alone = false;  // it asked for the GPU alone (Event::alone)
  std::string context_lost;  // "<test>: <error>" when a kernel broke the CUDA context
  bool judge_broke = false;  // that context was the judge's own, not the chapter's process's
  std::string hang;          // "<test>: <error>" when a call never finished
  std::string where;         // where the chapter's code ran, with the sandbox's summary
  bool sandboxed = false;    // the sandbox contained it (sandbox/sandbox.hpp, contained())
  int runner_exit = -1;      // how the chapter's process ended (a tool's status for it), at the end
  std::size_t output_bytes = 0, output_kept = 0;  // what it printed, and what the log kept
  std::optional<std::uint64_t> gpu_bytes;         // the most GPU memory the chapter's processes held (NVML)
  //! Under compute-sanitizer: the tool's own lines, from a descriptor the chapter's code never holds.
  std::vector<std::string> findings;
  bool starved() const;       // a test of it, or of a tool's run, failed as starved (or could not start)
  bool judge_broken() const;  // the judge's own context broke in it, or in a tool's run
  int unreadable_lines = 0;
  //! The same judge's runs of the sanitized tests under each tool (Event::sanitize), in order: each
  //! its tests and how it ended (`problem`: why its chapter's process could not start). How the
  //! process ended (`process`) belongs to the last run it started: the others hold a clean exit.
  std::string tool;
  std::vector<TestRun> sanitized;
  const TestRecord* find(const std::string& name) const;
};

//! What a caller does with each event as it arrives (the run so far included): Event::alone is
//! answered through the grant pipe.
using OnEvent = std::function<ProcessOptions::Grant(workbook::channel::Event, const TestRun& so_far)>;

//! Runs a chapter test process (argv) with the result channel and a time limit.
//! With `silence_limit_s`, a test that reports nothing for that long ends the run (a tool's run
//! in the same process, after Event::sanitize: kSanitizerTimeFactor times as long).
//! With `on_event`, the process also gets a grant pipe (ProcessOptions), and each channel line is
//! read once, as it arrives.
TestRun run_tests(const std::vector<std::string>& argv, const std::string& log_path, double timeout_s,
                  const std::map<std::string, std::string>& env, double silence_limit_s = 0,
                  const OnEvent& on_event = {});

//! The tests a judge (`command`: its executable and arguments) holds, from `--gtest_list_tests`
//! (with `filter`, if any), in the order they run. Throws std::runtime_error when it cannot list them.
std::vector<std::string> list_tests(const std::vector<std::string>& command, const std::string& filter,
                                    const std::string& log_path);

}  // namespace grader
