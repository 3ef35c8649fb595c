#include "session.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>

#include "judge/names.hpp"
#include "run.hpp"
#include "text.hpp"

namespace fs = std::filesystem;

namespace grader {
namespace {

namespace names = workbook::names;

//! CMake's CUDA architectures ("80-real;90", "native") as nvcc flags, so that
//! the include check preprocesses the device pass of every architecture built.
std::vector<std::string> nvcc_architectures(const std::string& list) {
  std::vector<std::string> flags;
  for (const std::string& a : split(list, ';')) {
    if (a.empty()) continue;
    if (a == "native" || a == "all" || a == "all-major") {
      flags.push_back("-arch=" + a);
      continue;
    }
    const std::string number = a.substr(0, a.find('-'));
    const std::string kind = a.size() > number.size() ? a.substr(number.size() + 1) : "";
    const std::string code = kind == "real"      ? "sm_" + number
                             : kind == "virtual" ? "compute_" + number
                                                 : "[compute_" + number + ",sm_" + number + "]";
    flags.push_back("-gencode=arch=compute_" + number + ",code=" + code);
  }
  return flags;
}

}  // namespace

workbook::Unmet unmet_in_build(const workbook::ChapterSpec& spec) {
  workbook::Capabilities have;
  have.compute_capability = std::numeric_limits<int>::max();
  have.gpus = std::numeric_limits<int>::max();
  have.nccl = WORKBOOK_HAVE_NCCL != 0;
  return workbook::unmet_requirement(spec, have);
}

void skip(ChapterResult& r, const workbook::Unmet& unmet, const std::string& here) {
  r.status = Status::skipped_for(unmet.word);
  r.detail = fmt::format(
      "this chapter needs {} (grader/manifest.json, requires); {}: not graded here, and its points do not count",
      unmet.word, here);
}

std::string gtest_filter(const std::vector<std::string>& tests) {
  std::string filter;
  for (const std::string& t : tests) filter += (filter.empty() ? "" : ":") + t;
  return filter;
}

std::string sanitizer_filter() { return gtest_filter({names::kSanitizedTests.begin(), names::kSanitizedTests.end()}); }

std::string find_tool(const std::string& name) {
  std::vector<std::string> dirs = {WORKBOOK_CUDA_BIN_DIR, "/usr/local/cuda/bin"};
  if (const char* path = std::getenv("PATH")) {
    for (const std::string& d : split(path, ':')) dirs.push_back(d);
  }
  for (const std::string& dir : dirs) {
    const fs::path p = fs::path(dir) / name;
    std::error_code ec;
    if (fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0) return p.string();
  }
  return "";
}

Session::Session(const Options& opt, const workbook::Manifest& manifest,
                 std::vector<const workbook::ChapterSpec*> chosen)
    : opt_(opt), manifest_(manifest), chosen_(std::move(chosen)), build_(opt.build_dir, opt.build_timeout_s) {}

Session::~Session() {
  if (lock_fd_ >= 0) close(lock_fd_);  // releases the flock
}

std::string Session::slot_dir(int slot) const {
  return (fs::path(build_.dir()) / "slots" / std::to_string(slot)).string();
}
std::string Session::slot_runner(int slot, const std::string& slug) const {
  return (fs::path(build_.dir()) / kJudgeBinaryDir / "slots" / std::to_string(slot) / ("runner_" + slug)).string();
}
std::string Session::slot_listing(int slot, const std::string& slug) const {
  return (fs::path(build_.dir()) / kJudgeBinaryDir / "slots" / std::to_string(slot) / (slug + ".host.lst")).string();
}
std::string Session::slot_object_target(int slot, const std::string& slug) {
  return fmt::format("slot{}_{}", slot, slug);
}
std::string Session::slot_runner_target(int slot, const std::string& slug) {
  return fmt::format("slot{}_runner_{}", slot, slug);
}
std::string Session::reference_runner(const std::string& slug) const {
  return (fs::path(build_.dir()) / kJudgeBinaryDir / ("reference_runner_" + slug)).string();
}
std::string Session::judge() const { return (fs::path(build_.dir()) / kJudgeBinaryDir / "judge").string(); }
std::string Session::sandbox_helper() const {
  return (fs::path(build_.dir()) / kSandboxBinaryDir / "workbook-sandbox").string();
}
int Session::limit(const workbook::ChapterSpec& spec) const {
  return opt_.timeout_s > 0 ? opt_.timeout_s : spec.timeout_s;
}

// One grader per build folder at a time: a second waits for the first.
bool Session::lock() {
  const std::string path = (fs::path(build_.dir()) / ".grader.lock").string();
  lock_fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) {
    fmt::print(stderr, "grader: cannot create {}\n", path);
    return false;
  }
  if (flock(lock_fd_, LOCK_EX | LOCK_NB) == 0) return true;
  fmt::print("waiting for the other grader that uses {} (or give this one --build-dir) ...\n", build_.dir());
  std::fflush(stdout);
  while (flock(lock_fd_, LOCK_EX) != 0) {
    if (errno != EINTR || interrupted()) return false;
  }
  return true;
}

bool Session::prepare(int slots, const std::string& architectures) {
  if (!lock()) return false;
  std::error_code ec;
  // Keep more slots where a bigger run made them: a smaller run then needs no new configure.
  try {
    slots = std::max(slots, std::stoi(build_.cached("WORKBOOK_GRADING_SLOTS")));
  } catch (const std::exception&) {
  }
  // Every slot holds a file for every chapter, so the build can be generated;
  // a submission's files replace them while it is graded.
  for (int slot = 0; slot < slots; ++slot) {
    for (const workbook::ChapterSpec& c : manifest_.chapters) {
      const fs::path file = fs::path(slot_dir(slot)) / c.slug / "kernel.cu";
      if (fs::exists(file, ec)) continue;
      fs::create_directories(file.parent_path(), ec);
      std::ofstream(file) << "";
    }
  }
  // Configured before with these settings: the build itself notices a changed
  // CMakeLists.txt, so a student's next run goes straight to compiling.
  const std::string slots_dir = (fs::path(build_.dir()) / "slots").string();
  const bool configured = fs::exists(fs::path(build_.dir()) / "build.ninja", ec) &&
                          build_.cached("CMAKE_CUDA_ARCHITECTURES") == architectures &&
                          build_.cached("WORKBOOK_GRADING_SLOTS") == std::to_string(slots) &&
                          build_.cached("WORKBOOK_SLOTS_DIR") == slots_dir &&
                          build_.cached("WORKBOOK_LEARNER_DEVICE_DEBUG") == (opt_.device_debug ? "ON" : "OFF") &&
                          build_.caches(found_by_own_build());
  fmt::print("configuring (CUDA architectures {}) ... ", architectures);
  std::fflush(stdout);
  std::string why;
  if (!configured && !build_.configure(architectures, slots, slots_dir, opt_.device_debug, &why)) {
    fmt::print("failed\n{}\ngrader: configuring the grading build failed; the log is {}\n", why,
               build_.log("configure.log"));
    return false;
  }
  arch_flags_ = nvcc_architectures(architectures);
  if (!find_tools()) return false;
  fmt::print("done\nbuilding the harness and the references ... ");
  std::fflush(stdout);
  std::vector<std::string> targets = {"judge", "workbook-sandbox"};
  for (const workbook::ChapterSpec* spec : chosen_) {
    if (unmet_in_build(*spec).met()) targets.push_back("reference_runner_" + spec->slug);
  }
  const ProcessResult h = build_.build(targets, build_.log("harness.log"));
  if (h.interrupted) return false;
  if (h.timed_out || h.exit_code != 0) {
    fmt::print(
        "failed\n{}\ngrader: the harness or a reference does not build; this is not the "
        "learner's code (log: {})\n",
        tail_of(build_.log("harness.log"), 20), build_.log("harness.log"));
    return false;
  }
  fmt::print("done ({:.0f} s)\n", h.seconds);
  if (chosen_.empty()) return true;
  // The tests each chapter process must report, from a process that holds no learner code.
  tests_.clear();
  for (const workbook::ChapterSpec* spec : chosen_) {
    if (unmet_in_build(*spec).met() && !list_chapter_tests(spec->slug)) return false;
  }
  return true;
}

bool Session::list_chapter_tests(const std::string& slug) {
  const std::vector<std::string> judge_for = {judge(), "--chapter=" + slug};
  std::vector<std::string> all;
  TestLists lists;
  try {
    all = list_tests(judge_for, "", build_.log(slug + ".tests.list"));
    lists.sanitized = list_tests(judge_for, sanitizer_filter(), build_.log(slug + ".sanitized.list"));
  } catch (const std::exception& e) {
    fmt::print(stderr, "grader: {}\n", e.what());
    return false;
  }
  for (const std::string& t : all) {
    (names::needs_the_gpu_alone(names::group_of(t)) ? lists.alone : lists.shared).push_back(t);
  }
  const bool timed = std::any_of(lists.alone.begin(), lists.alone.end(),
                                 [](const std::string& t) { return !names::is_correctness_group(names::group_of(t)); });
  if (lists.sanitized.size() != names::kSanitizedTests.size() || !timed) {
    fmt::print(stderr,
               "grader: {} of the {} sanitized tests in judge/names.hpp exist in the "
               "tests of {}, and {} timed test; the names and the tests disagree\n",
               lists.sanitized.size(), names::kSanitizedTests.size(), slug, timed ? "a" : "no");
    return false;
  }
  tests_[slug] = std::move(lists);
  return true;
}

bool Session::find_tools() {
  tools_.nvcc = WORKBOOK_CUDA_COMPILER;
  tools_.nm = find_tool("nm");
  tools_.objdump = find_tool("objdump");
  tools_.cuobjdump = find_tool("cuobjdump");
  tools_.include_roots = split(WORKBOOK_INCLUDE_ROOTS, '|');
  for (const std::string& dir : host_compiler_include_dirs(tools_.nvcc, (fs::path(build_.dir()) / "logs").string())) {
    tools_.include_roots.push_back(dir);  // the compiler nvcc really uses may not be CMake's
  }
  tools_.harness_dir = std::string(WORKBOOK_SOURCE_DIR) + "/harness";
  if (tools_.nm.empty() || tools_.objdump.empty()) {
    fmt::print(stderr, "grader: nm and objdump (binutils) are needed to check a submission\n");
    return false;
  }
  try {
    rules_ = load_rules(WORKBOOK_SOURCE_DIR "/grader/manifest.json");
  } catch (const std::exception& e) {
    fmt::print(stderr, "grader: {}\n", e.what());
    return false;
  }
  return true;
}

Toolchain Session::tools_for(const workbook::ChapterSpec& spec, const std::string& work_dir) const {
  Toolchain tools = tools_;
  tools.work_dir = work_dir;
  tools.compile_flags = {"-std=c++17", "-I" + tools_.harness_dir, "-DWORKBOOK_SUBJECT=\"learner\"",
                         "-DWORKBOOK_CHAPTER=\"" + spec.slug + "\""};
  for (const std::string& flag : split(WORKBOOK_LEARNER_CUDA_FLAGS, ' ')) tools.compile_flags.push_back(flag);
  tools.compile_flags.insert(tools.compile_flags.end(), arch_flags_.begin(), arch_flags_.end());
  // The chapter over several GPUs includes nccl.h, from where the build found NCCL (as the build's
  // imported target gives it: a system include folder).
  if (spec.ranks && *WORKBOOK_NCCL_INCLUDE_DIR) {
    tools.compile_flags.insert(tools.compile_flags.end(), {"-isystem", WORKBOOK_NCCL_INCLUDE_DIR});
  }
  return tools;
}

}  // namespace grader
