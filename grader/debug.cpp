// Debugging one chapter: built with device line information (or -G), one test
// run under compute-sanitizer or cuda-gdb, with the student's paths in what
// the tool prints.
#include <algorithm>
#include <filesystem>
#include <iostream>

#include <csignal>

#include <unistd.h>

#include <fmt/format.h>

#include "compile.hpp"
#include "exit_status.hpp"
#include "gpu.hpp"
#include "judge/device.hpp"
#include "judge/names.hpp"
#include "process.hpp"
#include "session.hpp"
#include "student.hpp"
#include "text.hpp"

namespace fs = std::filesystem;

namespace grader {
namespace {

// The longest a debug run under compute-sanitizer may take: its calls may take 600 s each.
constexpr double kDebugLimitS = 3600;

}  // namespace

int debug_chapter(const Options& given, const workbook::Manifest& manifest, const std::string& slug,
                  const DebugOptions& debug) {
  Options opt = given;
  opt.only = {slug};
  opt.device_debug = debug.device_debug;
  // A build of its own: -G must not slow down the grading build.
  if (given.build_dir.empty()) {
    opt.build_dir = (fs::path(WORKBOOK_BINARY_DIR) / (debug.device_debug ? "debug-G" : "debug")).string();
  }
  std::vector<const workbook::ChapterSpec*> chosen = {manifest.find(slug)};
  std::string why;
  const std::vector<Gpu> gpus = find_gpus({0}, &why);  // the first visible GPU, as the tool uses it
  const bool gpu = !gpus.empty();
  Session session(opt, manifest, chosen);
  if (!session.prepare(1, architectures(gpus))) return code(Exit::cannot);
  std::vector<ChapterResult> results;
  compile_submissions(session, {SlotWork{0, opt.chapters_dir, session.build().log(slug), &results}});
  if (!results.front().status.is_pending()) {
    fmt::print("\n{}: {}\n{}\n", slug, results.front().status, results.front().detail);
    return code(Exit::some_failed);
  }
  const std::string runner = session.slot_runner(0, slug);
  if (!gpu) {
    fmt::print("\nBuilt {} ({}); running it needs a CUDA device ({}).\n", runner,
               debug.device_debug ? "-G" : "-lineinfo", why);
    return code(Exit::not_graded);
  }
  const std::string test = !debug.test.empty()        ? debug.test
                           : debug.tool == "cuda-gdb" ? std::string(workbook::names::kSanitizedTests.front())
                                                      : sanitizer_filter();
  const std::string slot = session.slot_dir(0);
  std::vector<std::string> wrap;
  if (debug.tool == "cuda-gdb") {
    const std::string gdb = find_tool("cuda-gdb");
    if (gdb.empty()) {
      fmt::print(stderr, "grader: cuda-gdb is not installed (it comes with the CUDA toolkit)\n");
      return code(Exit::cannot);
    }
    wrap = {gdb, "-ex", fmt::format("set substitute-path {} {}", slot, opt.chapters_dir), "--args"};
  } else {
    const std::string sanitizer = find_tool("compute-sanitizer");
    if (sanitizer.empty()) {
      fmt::print(stderr, "grader: compute-sanitizer is not installed (it comes with the CUDA toolkit)\n");
      return code(Exit::cannot);
    }
    wrap = {sanitizer, "--tool", debug.tool, "--show-backtrace", "device"};
  }
  // The judge runs the tests; the chapter's code runs under the tool in the sandbox, which may
  // read the student's chapters (the debugger shows their lines).
  std::vector<std::string> argv = {session.judge(),
                                   "--chapter=" + slug,
                                   "--subject=learner",
                                   "--runner=" + runner,
                                   "--sandbox=" + session.sandbox_helper(),
                                   "--read=" + opt.chapters_dir,
                                   "--read=" + slot,
                                   debug.tool == "cuda-gdb" ? "--call-timeout=0" : "--call-timeout=600"};
  if (debug.tool == "cuda-gdb") argv.push_back("--interactive");
  for (const std::string& w : wrap) argv.push_back("--wrap=" + w);
  argv.push_back("--gtest_filter=" + test);
  fmt::print("\n$ {}\n\n", [&] {
    std::string s;
    for (const std::string& a : argv) s += (s.empty() ? "" : " ") + a;
    return s;
  }());
  std::fflush(stdout);
  setenv(workbook::names::kSeedVariable, std::to_string(opt.seed).c_str(), 1);
  if (debug.tool == "cuda-gdb") {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    signal(SIGPIPE, SIG_DFL);  // the grader ignores it (process.cpp); the debugger gets the default
    execv(args[0], args.data());
    return code(Exit::cannot);
  }
  // The tool's findings name the slot's copy: show the student's file instead, line by line as
  // the tool prints them. Ctrl-C ends the judge, the tool and the chapter's process with it.
  const std::string from = slot + "/", to = opt.chapters_dir + "/";
  ProcessOptions streamed;
  streamed.on_output = [&](std::string_view line) {
    std::string text(line);
    for (std::size_t at; (at = text.find(from)) != std::string::npos;) text.replace(at, from.size(), to);
    fmt::print("{}", text);
    std::fflush(stdout);
  };
  const ProcessResult run = run_process(argv, "/dev/null", kDebugLimitS, streamed);
  if (run.interrupted) {
    int signal = SIGINT;
    interrupted(&signal);
    return interrupted_code(signal);
  }
  if (run.timed_out) {
    fmt::print("\nThe run did not end within {:.0f} s and was stopped.\n", kDebugLimitS);
    return code(Exit::some_failed);
  }
  if (run.signal) return interrupted_code(run.signal);
  // The judge's own statuses (77: no device, 3: the CUDA context was lost, 1: a test failed) are
  // said in words and mapped to the grader's, so that each exit status means one thing.
  const int judge = run.exit_code;
  if (judge == 0) return code(Exit::ok);
  if (judge == workbook::names::kNoDeviceExit) return code(Exit::not_graded);
  if (judge == workbook::names::kContextLostExit) {
    fmt::print("\nThe chapter's code broke the CUDA context: the tests after it did not run.\n");
  }
  return code(Exit::some_failed);
}

}  // namespace grader
