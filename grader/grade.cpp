#include "grade.hpp"

#include <algorithm>
#include <cstring>
#include <ctime>
#include <future>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include <unistd.h>

#include <fmt/format.h>

#include "build.hpp"
#include "report.hpp"
#include "result.hpp"
#include "run.hpp"
#include "static_checks.hpp"
#include "text.hpp"
#include "workbook/device.hpp"
#include "workbook/names.hpp"

namespace fs = std::filesystem;

namespace grader {
namespace {

namespace names = workbook::names;
namespace st = workbook::names::status;

constexpr int kSanitizerFoundError = 97;

std::string timestamp() {
  const std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

//! A tool from the CUDA toolkit's bin directory, /usr/local/cuda/bin or PATH; "" if none.
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

//! CMake's CUDA architectures ("80-real,90", "native") as nvcc flags, so that
//! the include check preprocesses the device pass of every architecture built.
std::vector<std::string> nvcc_architectures(const std::string& list) {
  std::vector<std::string> flags;
  for (const std::string& a : split(list, ',')) {
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

int group_rank(const std::string& group) {
  const auto it = std::find(names::kGroups.begin(), names::kGroups.end(), group);
  return int(it - names::kGroups.begin());
}

std::string sanitizer_filter() {
  std::string filter;
  for (std::string_view t : names::kSanitizedTests) filter += (filter.empty() ? "" : ":") + std::string(t);
  return filter;
}

std::optional<double> number(const TestRecord& t, const char* key) {
  const auto it = t.properties.find(key);
  if (it == t.properties.end()) return std::nullopt;
  try {
    return std::stod(it->second);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void add_failure(ChapterResult& r, const std::string& name, const std::string& message) {
  r.failed.push_back({name, message});
  const std::string group(names::group_of(name));
  if (std::find(r.failed_groups.begin(), r.failed_groups.end(), group) == r.failed_groups.end()) {
    r.failed_groups.push_back(group);
  }
}

class Grader {
 public:
  Grader(const Options& opt, const workbook::Manifest& manifest)
      : opt_(opt), manifest_(manifest), build_(opt.build_dir, opt.chapters_dir, opt.build_timeout_s) {}

  int run() {
    run_.chapters_dir = opt_.chapters_dir;
    run_.build_dir = opt_.build_dir;
    run_.seed = opt_.seed;
    run_.date = timestamp();
    std::string why;
    run_.graded = workbook::device_available(&why);  // the grader's own finding, never a child's
    fmt::print("Grading {}\n  build: {}\n  seed: {} (--seed {} repeats this run)\n", opt_.chapters_dir,
               opt_.build_dir, opt_.seed, opt_.seed);
    if (run_.graded) {
      const workbook::DeviceInfo d = workbook::device_info();
      run_.device = DeviceSummary{d.name, d.multiprocessors, workbook::version_string(d.driver_version),
                                  workbook::version_string(d.runtime_version)};
      fmt::print("  device: {}, {} SMs, driver CUDA {}\n\n", d.name, d.multiprocessors,
                 run_.device->driver_cuda);
    } else {
      fmt::print("\nGrading needs a CUDA device, and none can be used here ({}).\nEvery chapter is "
                 "still built and checked, so compile errors and refused files are reported; no "
                 "test runs.\n\n", why);
    }
    std::vector<const workbook::ChapterSpec*> chosen;
    for (const workbook::ChapterSpec& spec : manifest_.chapters) {
      if (opt_.only.empty() || std::count(opt_.only.begin(), opt_.only.end(), spec.slug)) chosen.push_back(&spec);
    }
    if (!prepare(chosen)) {
      if (!interrupted()) return 2;
    }
    for (const workbook::ChapterSpec* spec : chosen) {
      if (interrupted()) {
        ChapterResult r;
        r.spec = spec;
        r.status = st::kNotGraded;
        r.detail = "the grader was interrupted before this chapter";
        run_.chapters.push_back(r);
        continue;
      }
      run_.chapters.push_back(grade(*spec));
    }
    int sig = 0;
    run_.interrupted = interrupted(&sig);
    print_table(run_);
    print_idea_notes();
    const bool wrote = write_reports();
    if (run_.interrupted) return 128 + sig;
    if (!wrote) return 2;
    const bool any_failed = std::any_of(run_.chapters.begin(), run_.chapters.end(), [](const ChapterResult& r) {
      return r.status != st::kPassed && r.status != st::kNoGpu;
    });
    return any_failed ? 1 : 0;
  }

 private:
  // Configure, build the harness and the chosen chapters' references in one
  // call, list the tests, and find the tools of the static checks.
  bool prepare(const std::vector<const workbook::ChapterSpec*>& chosen) {
    fmt::print("configuring ... ");
    std::fflush(stdout);
    std::string why;
    if (!build_.configure(&why)) {
      fmt::print("failed\n{}\ngrader: configuring the chapter build failed; the log is {}\n", why,
                 build_.log("configure.log"));
      return false;
    }
    if (!find_tools()) return false;
    // What each learner's file includes is checked while the harness builds.
    for (const workbook::ChapterSpec* spec : chosen) {
      const fs::path source = fs::path(opt_.chapters_dir) / spec->slug / "kernel.cu";
      std::error_code ec;
      if (!fs::is_regular_file(source, ec)) continue;
      includes_[spec->slug] = std::async(std::launch::async, [this, spec, source] {
        return check_includes(tools_for(*spec), rules_, spec->slug, source.string());
      });
    }
    fmt::print("done\nbuilding the harness and the references ... ");
    std::fflush(stdout);
    std::vector<std::string> targets = {"chapter_tests"};
    for (const workbook::ChapterSpec* spec : chosen) targets.push_back("reference_" + spec->slug);
    const ProcessResult h = build_.build(targets, "harness.log");
    if (h.interrupted) return false;
    if (h.timed_out || h.exit_code != 0) {
      fmt::print("failed\n{}\ngrader: the harness or a reference does not build; this is not the "
                 "learner's code (log: {})\n",
                 tail_of(build_.log("harness.log"), 20), build_.log("harness.log"));
      return false;
    }
    fmt::print("done ({:.0f} s)\n", h.seconds);
    // Then every learner's file that may be compiled, in parallel; a chapter whose file does not
    // compile is built again on its own when it is graded, for a log of its own.
    std::vector<std::string> learners;
    for (auto& [slug, refusals] : includes_) {
      if (refusals.get().empty()) learners.push_back(slug + "_learner");
    }
    if (!learners.empty()) {
      fmt::print("compiling the learner's files ... ");
      std::fflush(stdout);
      // Keep going past a file that does not compile (Ninja: -k 0; Make: -k).
      const std::string generator = WORKBOOK_GENERATOR;
      if (generator.find("Ninja") != std::string::npos) {
        learners.insert(learners.end(), {"--", "-k", "0"});
      } else if (generator.find("Makefiles") != std::string::npos) {
        learners.insert(learners.end(), {"--", "-k"});
      }
      const ProcessResult l = build_.build(learners, "learners.log");
      if (l.interrupted) return false;
      fmt::print("done ({:.0f} s)\n", l.seconds);
    }
    fmt::print("\n");
    if (!chosen.empty()) {
      // The tests a chapter process must report, from a process that holds no learner code.
      const std::string exe = executable("reference_" + chosen.front()->slug);
      try {
        expected_ = list_tests(exe, "", build_.log("tests.list"));
        sanitized_ = list_tests(exe, sanitizer_filter(), build_.log("sanitized.list"));
      } catch (const std::exception& e) {
        fmt::print(stderr, "grader: {}\n", e.what());
        return false;
      }
      if (sanitized_.size() != names::kSanitizedTests.size()) {
        fmt::print(stderr, "grader: {} of the {} sanitized tests in workbook/names.hpp exist in the "
                   "chapter tests; the names and the tests disagree\n",
                   sanitized_.size(), names::kSanitizedTests.size());
        return false;
      }
    }
    return true;
  }

  bool find_tools() {
    arch_flags_ = nvcc_architectures(WORKBOOK_CUDA_ARCHITECTURES);
    tools_.nvcc = WORKBOOK_CUDA_COMPILER;
    tools_.nm = find_tool("nm");
    tools_.objdump = find_tool("objdump");
    tools_.cuobjdump = find_tool("cuobjdump");
    tools_.include_roots = split(WORKBOOK_INCLUDE_ROOTS, '|');
    for (const std::string& dir : host_compiler_include_dirs(tools_.nvcc, (fs::path(opt_.build_dir) / "logs").string())) {
      tools_.include_roots.push_back(dir);  // the compiler nvcc really uses may not be CMake's
    }
    tools_.harness_dir = std::string(WORKBOOK_SOURCE_DIR) + "/tests/harness";
    tools_.work_dir = (fs::path(opt_.build_dir) / "logs").string();
    // The references themselves, graded as a submission, share one header; a learner's tree may not.
    std::error_code same;
    if (fs::equivalent(opt_.chapters_dir, fs::path(WORKBOOK_SOURCE_DIR) / "solutions", same)) {
      tools_.extra_allowed = {std::string(WORKBOOK_SOURCE_DIR) + "/solutions/common"};
    }
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

  Toolchain tools_for(const workbook::ChapterSpec& spec) const {
    Toolchain tools = tools_;
    tools.compile_flags = {"-std=c++17", "-I" + tools_.harness_dir, "-DWORKBOOK_SUBJECT=\"learner\"",
                           "-DWORKBOOK_CHAPTER=\"" + spec.slug + "\""};
    for (const std::string& flag : split(WORKBOOK_LEARNER_CUDA_FLAGS, ' ')) tools.compile_flags.push_back(flag);
    tools.compile_flags.insert(tools.compile_flags.end(), arch_flags_.begin(), arch_flags_.end());
    return tools;
  }

  std::string executable(const std::string& name) const {
    return (fs::path(opt_.build_dir) / "tests" / name).string();
  }

  int limit(const workbook::ChapterSpec& spec) const { return opt_.timeout_s > 0 ? opt_.timeout_s : spec.timeout_s; }

  ChapterResult grade(const workbook::ChapterSpec& spec) {
    ChapterResult r;
    r.spec = &spec;
    fmt::print("{:<18} ", spec.slug);
    std::fflush(stdout);
    grade_into(spec, r);
    if (r.status.empty()) r.status = st::kFailed;
    fmt::print("{}\n", r.status);
    return r;
  }

  void grade_into(const workbook::ChapterSpec& spec, ChapterResult& r) {
    const fs::path source = fs::path(opt_.chapters_dir) / spec.slug / "kernel.cu";
    std::error_code ec;
    if (!fs::is_regular_file(source, ec)) {
      r.status = st::kMissing;
      r.detail = fmt::format("{} does not exist", source.string());
      return;
    }
    const Toolchain tools = tools_for(spec);
    auto checked = includes_.find(spec.slug);
    if (reject(r, checked != includes_.end() ? checked->second.get()
                                             : check_includes(tools, rules_, spec.slug, source.string()))) {
      return;
    }
    if (interrupted()) return interrupt(r);
    // Compile the learner's object, check it, and only then link it with the tests.
    const std::string build_log = spec.slug + ".build.log";
    const ProcessResult b = build_.build({spec.slug + "_learner"}, build_log);
    if (b.interrupted) return interrupt(r);
    if (b.timed_out || b.exit_code != 0) return compile_failure(r, b, build_log);
    const std::string object = build_.learner_object(spec.slug);
    if (object.empty()) {
      r.status = st::kDoesNotCompile;
      r.detail = "the build made no object file for kernel.cu";
      return;
    }
    try {
      if (reject(r, check_object(tools, rules_, spec.slug, object))) return;
      r.idea = idea_notes(tools, rules_, spec.slug, object);
    } catch (const std::exception& e) {
      reject(r, {Refusal{"object", fmt::format("the grader could not read the object file: {}", e.what())}});
      return;
    }
    const std::string link_log = spec.slug + ".link.log";
    const ProcessResult l = build_.build({"test_" + spec.slug}, link_log);
    if (l.interrupted) return interrupt(r);
    if (l.timed_out || l.exit_code != 0) return compile_failure(r, l, link_log);
    fmt::print("built ({:.0f} s) ", b.seconds + l.seconds);
    if (!run_.graded) {
      r.status = st::kNoGpu;
      r.detail = "built and checked; grading needs a CUDA device";
      return;
    }
    if (!measure_reference(spec, r)) return;
    run_main(spec, r);
    if (!r.status.empty()) return;
    if (opt_.sanitize && r.tests_total > 0 && r.tests_passed == r.tests_total) sanitize(spec, r);
    if (!r.status.empty()) return;
    score(r);
  }

  void compile_failure(ChapterResult& r, const ProcessResult& p, const std::string& log_name) {
    r.status = st::kDoesNotCompile;
    r.detail = p.timed_out ? fmt::format("the build took longer than {:.0f} s", opt_.build_timeout_s)
                           : compile_errors(build_.log(log_name), opt_.chapters_dir);
    fmt::print("does not compile (log: {})\n{:<18} ", build_.log(log_name), "");
  }

  bool reject(ChapterResult& r, const std::vector<Refusal>& refusals) {
    if (refusals.empty()) return false;
    r.status = st::kRejected;
    r.refusals.insert(r.refusals.end(), refusals.begin(), refusals.end());
    std::string detail = "the grader refuses this kernel.cu before running it:";
    for (const Refusal& f : refusals) detail += "\n  - " + f.reason;
    r.detail = detail;
    return true;
  }

  void interrupt(ChapterResult& r) {
    r.status = st::kInterrupted;
    r.detail = "the grader was interrupted while grading this chapter";
  }

  // The reference's bandwidth, measured in a process that holds no learner code;
  // once per chapter and grading run.
  bool measure_reference(const workbook::ChapterSpec& spec, ChapterResult& r) {
    auto it = reference_.find(spec.slug);
    if (it == reference_.end()) {
      const TestRun t = run_tests({executable("reference_" + spec.slug), "--chapter=" + spec.slug,
                                   "--subject=reference", "--gtest_filter=Bandwidth.*"},
                                  build_.log(spec.slug + ".reference.log"), limit(spec),
                                  {{"WORKBOOK_SEED", std::to_string(opt_.seed)}});
      if (t.process.interrupted) {
        interrupt(r);
        return false;
      }
      std::pair<std::optional<double>, std::optional<double>> m;
      for (const TestRecord& rec : t.tests) {
        if (rec.group == "Bandwidth" && rec.result == "passed") {
          m = {number(rec, "subject_gbps"), number(rec, "ceiling_gbps")};
        }
      }
      if (!m.first && !t.tests.empty() && t.tests.front().result == "skipped") m = {0.0, 0.0};
      it = reference_.emplace(spec.slug, m).first;
      if (!m.first) {
        fmt::print(stderr, "\ngrader: the reference of {} could not be measured (log: {})\n", spec.slug,
                   build_.log(spec.slug + ".reference.log"));
      }
    }
    r.reference_gbps = it->second.first;
    r.reference_ceiling_gbps = it->second.second;
    return true;
  }

  // The name of the test that was running when a process stopped: the first
  // expected test it did not report.
  static std::string running_test(const TestRun& t, const std::vector<std::string>& expected) {
    for (const std::string& name : expected) {
      if (!t.find(name)) return name;
    }
    return "";
  }

  // Checks that a run reported exactly the expected tests; "" if it did.
  static std::string incomplete(const TestRun& t, const std::vector<std::string>& expected) {
    std::set<std::string> seen;
    for (const TestRecord& rec : t.tests) {
      if (!std::count(expected.begin(), expected.end(), rec.name)) {
        return fmt::format("it reported a test the grader did not ask for: {}", rec.name);
      }
      if (!seen.insert(rec.name).second) return fmt::format("it reported test {} twice", rec.name);
    }
    if (t.unreadable_lines) return fmt::format("{} of its result lines were unreadable", t.unreadable_lines);
    if (t.process.channel_overflowed) return "it sent more results than any test run can";
    if (seen.size() != expected.size() || !t.ended) {
      return fmt::format("it reported {} of the {} tests{}", seen.size(), expected.size(),
                         t.ended ? "" : " and never said it had finished");
    }
    return "";
  }

  std::string process_end(const ProcessResult& p) const {
    if (p.signal) return fmt::format("died of signal {} ({})", p.signal, strsignal(p.signal));
    return fmt::format("exited with status {}", p.exit_code);
  }

  void run_main(const workbook::ChapterSpec& spec, ChapterResult& r) {
    const std::string log = build_.log(spec.slug + ".test.log");
    const TestRun t = run_tests({executable("test_" + spec.slug), "--chapter=" + spec.slug, "--subject=learner"},
                                log, limit(spec), {{"WORKBOOK_SEED", std::to_string(opt_.seed)}});
    tally(t, r);
    if (t.process.interrupted) return interrupt(r);
    if (t.process.timed_out) {
      const std::string test = running_test(t, expected_);
      r.status = st::kTimedOut;
      r.detail = fmt::format("no result after {} s{}: a kernel that never finishes (a __syncthreads() "
                             "some threads never reach, or a loop that never ends)",
                             limit(spec), test.empty() ? "" : ", in test " + test);
      return;
    }
    if (!t.context_lost.empty()) {
      r.status = st::kCrashed;
      r.detail = fmt::format("the kernel broke the CUDA context in test {}; no later test could run "
                             "(typically an out-of-bounds or misaligned access)",
                             t.context_lost);
      return;
    }
    if (t.process.signal) {
      r.status = st::kCrashed;
      r.detail = fmt::format("the test process {} during test {}\n{}", process_end(t.process),
                             running_test(t, expected_), tail_of(log, 6));
      return;
    }
    if (!t.problem.empty()) {
      r.status = st::kFailed;
      r.detail = t.problem;
      return;
    }
    if (!t.began) {
      r.status = st::kCrashed;
      r.detail = fmt::format("the test process {} before it reported anything\n{}",
                             process_end(t.process), tail_of(log, 6));
      return;
    }
    if (const std::string why = incomplete(t, expected_); !why.empty()) {
      r.status = st::kIncomplete;
      r.detail = fmt::format("the test process {}, and {}: a run that stops early or skips tests is "
                             "not graded (last test started: {})",
                             process_end(t.process), why, running_test(t, expected_));
    }
  }

  // Counts the tests: every test that ran and was not skipped is a correctness
  // test, the bandwidth measurement's checks of its timed calls included.
  static void tally(const TestRun& t, ChapterResult& r) {
    for (const TestRecord& rec : t.tests) {
      if (rec.group == "Bandwidth") {
        r.learner_gbps = number(rec, "subject_gbps");
        r.learner_ceiling_gbps = number(rec, "ceiling_gbps");
      }
      if (rec.result == "skipped") continue;
      ++r.tests_total;
      if (rec.result == "passed") {
        ++r.tests_passed;
        continue;
      }
      std::string message;
      for (const std::string& f : rec.failures) message += f + "\n";
      add_failure(r, rec.name, message);
    }
  }

  // Runs the sanitized tests under each compute-sanitizer tool; a finding
  // fails the chapter's correctness, with the tool's first lines as the reason.
  void sanitize(const workbook::ChapterSpec& spec, ChapterResult& r) {
    const std::string sanitizer = find_tool("compute-sanitizer");
    if (sanitizer.empty()) return;
    for (std::string_view tool_view : names::kSanitizerTools) {
      const std::string tool(tool_view);
      const std::string log = build_.log(spec.slug + "." + tool + ".log");
      const TestRun t = run_tests({sanitizer, "--tool", tool, "--error-exitcode", std::to_string(kSanitizerFoundError),
                                   "--print-limit", "4", executable("test_" + spec.slug), "--chapter=" + spec.slug,
                                   "--subject=learner", "--gtest_filter=" + sanitizer_filter()},
                                  log, 4.0 * limit(spec), {{"WORKBOOK_SEED", std::to_string(opt_.seed)}});
      if (t.process.interrupted) return interrupt(r);
      ++r.tests_total;  // each tool's run counts as one more correctness test
      std::string what;
      if (t.process.timed_out) {
        what = "timed out under compute-sanitizer " + tool;
      } else if (t.process.exit_code == kSanitizerFoundError) {
        what = "compute-sanitizer " + tool + " reports errors";
      } else if (const std::string why = incomplete(t, sanitized_); !why.empty()) {
        what = fmt::format("under compute-sanitizer {} the test process {}, and {}", tool,
                           process_end(t.process), why);
      } else if (t.process.exit_code != 0 || std::any_of(t.tests.begin(), t.tests.end(), [](const TestRecord& x) {
                   return x.result == "failed";
                 })) {
        what = fmt::format("tests fail under compute-sanitizer {} ({})", tool, process_end(t.process));
      } else {
        ++r.tests_passed;
        continue;
      }
      std::string findings;
      std::istringstream in(read_bounded(log));
      int kept = 0;
      for (std::string line; std::getline(in, line) && kept < 10;) {
        if (line.rfind("=========", 0) == 0 && line.size() > 10) {
          findings += line + "\n";
          ++kept;
        }
      }
      add_failure(r, "Sanitizer." + tool,
                  fmt::format("{} on tests {} (log: {})\n{}", what, sanitizer_filter(), log, findings));
      r.detail = what + (tool == "racecheck"
                             ? ": a shared-memory data race (threads of one warp are not in lockstep on "
                               "Volta and later: order their accesses with __syncwarp())"
                         : tool == "synccheck" ? ": a barrier that not every thread of the block (or warp) reaches"
                                               : ": an out-of-bounds or misaligned memory access");
      return;
    }
  }

  void score(ChapterResult& r) const {
    std::stable_sort(r.failed.begin(), r.failed.end(), [](const FailedTest& a, const FailedTest& b) {
      return group_rank(std::string(names::group_of(a.name))) < group_rank(std::string(names::group_of(b.name)));
    });
    std::stable_sort(r.failed_groups.begin(), r.failed_groups.end(),
                     [](const std::string& a, const std::string& b) { return group_rank(a) < group_rank(b); });
    const bool correct = r.tests_total > 0 && r.tests_passed == r.tests_total;
    if (correct && r.learner_gbps && r.learner_ceiling_gbps && r.reference_gbps && r.reference_ceiling_gbps &&
        *r.learner_ceiling_gbps > 0 && *r.reference_gbps > 0 && *r.reference_ceiling_gbps > 0) {
      r.bandwidth_ratio = (*r.learner_gbps / *r.learner_ceiling_gbps) / (*r.reference_gbps / *r.reference_ceiling_gbps);
      r.bandwidth_passed = *r.bandwidth_ratio >= r.spec->bandwidth_fraction;
    }
    r.points = (correct ? r.spec->correctness_points : 0) + (r.bandwidth_passed ? r.spec->performance_points : 0);
    r.status = correct && r.bandwidth_passed ? st::kPassed : st::kFailed;
    if (r.status == st::kFailed && r.detail.empty()) {
      if (!correct) {
        r.detail = fmt::format("{} of {} correctness tests failed", r.tests_total - r.tests_passed, r.tests_total);
      } else if (r.bandwidth_ratio) {
        r.detail = fmt::format("correct, but below the chapter's bandwidth threshold: {:.0f} GB/s is "
                               "{:.0f}% of the reference's {:.0f} GB/s (each as a fraction of the "
                               "streaming-read ceiling measured beside it); the chapter asks for {:.0f}%",
                               *r.learner_gbps, 100 * *r.bandwidth_ratio, *r.reference_gbps,
                               100 * r.spec->bandwidth_fraction);
        r.failed_groups.push_back("Bandwidth");
      } else {
        r.detail = "correct, but the bandwidth could not be compared with the reference's";
      }
    }
  }

  void print_idea_notes() const {
    std::string out;
    for (const ChapterResult& r : run_.chapters) {
      for (const IdeaNote& n : r.idea) {
        if (!n.shown) out += fmt::format("  {}: {} not seen in the machine code\n", r.spec->slug, n.what);
      }
    }
    if (!out.empty()) fmt::print("\nFor the instructor (not part of the grade):\n{}", out);
  }

  bool write_reports() const {
    bool ok = true;
    const auto write = [&](const std::string& what, const std::string& path, const std::string& why) {
      if (why.empty()) {
        fmt::print("{}: {}\n", what, path);
      } else {
        fmt::print(stderr, "grader: {}\n", why);
        ok = false;
      }
    };
    const std::string report = opt_.report.empty() ? (fs::path(opt_.build_dir) / "report.json").string() : opt_.report;
    fmt::print("\n");
    write("report", report, write_atomically(report, report_json(run_)));
    if (!opt_.gradescope.empty()) {
      write("gradescope results", opt_.gradescope, write_atomically(opt_.gradescope, gradescope_json(run_)));
    }
    if (!opt_.roster.empty()) write("roster", opt_.roster, append_roster(opt_.roster, run_, manifest_));
    return ok;
  }

  const Options& opt_;
  const workbook::Manifest& manifest_;
  Build build_;
  GradingRun run_;
  Toolchain tools_;
  Rules rules_;
  std::vector<std::string> expected_, sanitized_, arch_flags_;
  std::map<std::string, std::shared_future<std::vector<Refusal>>> includes_;  // by slug
  std::map<std::string, std::pair<std::optional<double>, std::optional<double>>> reference_;
};

}  // namespace

int grade(const Options& opt, const workbook::Manifest& manifest) {
  return Grader(opt, manifest).run();
}

}  // namespace grader
