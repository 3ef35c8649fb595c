// The grader: builds each chapter of a chapters/ tree against the harness,
// runs its tests in a process of its own with a time limit, and reports a
// table, a JSON report and (optionally) Gradescope's results.json.
//
//   grader                          grade ./chapters
//   grader --chapter 03_idle_threads
//   grader --chapters ~/alice/chapters --report alice.json
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "process.hpp"
#include "workbook/device.hpp"
#include "workbook/manifest.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kNoDeviceExit = 77;       // tests/chapter_env.hpp
constexpr int kContextLostExit = 3;     // tests/chapter_env.hpp
constexpr int kSanitizerFoundError = 97;

// Three tests a kernel must also pass under compute-sanitizer: races and
// barrier misuse give right answers often enough that only a tool sees them.
// n = 1000 and 1003 (misaligned) are one or a few blocks; 2^20 + 1 is a grid
// of hundreds, so the cross-block code of chapters 09-12 (a second pass, a
// last-block ticket, a grid barrier) runs under the tools too.
constexpr const char* kSanitizedTests =
    "*ExactSums*n_1000:*MisalignedInput*offset_1_n_1003:*ExactSums*n_1048577";
constexpr const char* kSanitizerTools[] = {"memcheck", "racecheck", "synccheck"};

// The order failures are listed in: smallest, most telling first.
constexpr const char* kGroupOrder[] = {"Empty",      "ExactSums", "RandomSums", "MisalignedInput",
                                       "HugeInput",  "Repeatable", "Workspace", "Streams",
                                       "Sanitizer",  "Bandwidth"};

int group_rank(const std::string& name) {
  const std::string group = name.substr(0, name.find('.'));
  for (int i = 0; i < int(std::size(kGroupOrder)); ++i) {
    if (group == kGroupOrder[i]) return i;
  }
  return int(std::size(kGroupOrder));
}

std::string find_sanitizer() {
  for (const std::string& dir : {std::string(WORKBOOK_CUDA_BIN_DIR), std::string("/usr/local/cuda/bin")}) {
    const fs::path p = fs::path(dir) / "compute-sanitizer";
    if (fs::exists(p)) return p.string();
  }
  return "";
}

struct Options {
  std::string chapters_dir = WORKBOOK_SOURCE_DIR "/chapters";
  std::vector<std::string> only;
  std::string build_dir;
  std::string report;
  std::string gradescope;
  std::string roster;
  std::uint64_t seed = 0;
  double build_timeout_s = 900;
  int timeout_s = 0;  // 0: each chapter's own limit from the manifest
  bool sanitize = true;
  bool verbose = false;
};

struct FailedTest {
  std::string name, message;
};

struct ChapterResult {
  const workbook::ChapterSpec* spec = nullptr;
  std::string status;  // passed, failed, does not compile, crashed, timed out, skipped: no GPU, missing
  std::string detail;  // one paragraph: why
  int tests_passed = 0, tests_total = 0;
  std::vector<FailedTest> failed;
  std::vector<std::string> failed_groups;
  std::optional<double> learner_gbps, reference_gbps, ceiling_gbps;
  bool bandwidth_passed = false;
  double points = 0;
  int max_points() const { return spec->correctness_points + spec->performance_points; }
};

std::string first_lines(const std::string& text, std::size_t n) {
  std::string out;
  std::size_t lines = 0, pos = 0;
  while (pos < text.size() && lines < n) {
    const std::size_t end = text.find('\n', pos);
    out += text.substr(pos, end == std::string::npos ? std::string::npos : end - pos + 1);
    pos = end == std::string::npos ? text.size() : end + 1;
    ++lines;
  }
  return out;
}

// The compiler's error lines from a build log (nvcc and the host compiler
// both say "error"), or its tail when none match.
std::string compile_errors(const std::string& log_path) {
  std::ifstream in(log_path);
  std::string out;
  int kept = 0;
  for (std::string line; std::getline(in, line) && kept < 12;) {
    if (line.find("error") != std::string::npos && line.find("FAILED:") == std::string::npos) {
      out += line + "\n";
      ++kept;
    }
  }
  return out.empty() ? grader::tail_of(log_path, 12) : out;
}

std::string last_started_test(const std::string& log_path) {
  std::ifstream in(log_path);
  std::string last;
  const std::string tag = "[ RUN      ] ";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(tag, 0) == 0) last = line.substr(tag.size());
  }
  return last;
}

std::string group_of(const std::string& suite) {
  // "Sizes/ExactSums" -> "ExactSums"
  const auto slash = suite.find('/');
  return slash == std::string::npos ? suite : suite.substr(slash + 1);
}

void read_gtest_report(const std::string& path, ChapterResult& r) {
  std::ifstream in(path);
  const json doc = json::parse(in);
  for (const auto& suite : doc.at("testsuites")) {
    const std::string group = group_of(suite.at("name").get<std::string>());
    for (const auto& test : suite.at("testsuite")) {
      const std::string name = group + "." + test.at("name").get<std::string>();
      const bool skipped = test.value("result", "") == "SKIPPED" || test.value("status", "") == "NOTRUN";
      if (skipped) continue;
      const bool failed = test.contains("failures");
      if (group == "Bandwidth") {
        r.bandwidth_passed = !failed;
        auto number = [&](const char* key) -> std::optional<double> {
          if (!test.contains(key)) return std::nullopt;
          return std::stod(test.at(key).get<std::string>());
        };
        r.learner_gbps = number("subject_gbps");
        r.reference_gbps = number("reference_gbps");
        r.ceiling_gbps = number("ceiling_gbps");
      } else {
        ++r.tests_total;
        if (!failed) ++r.tests_passed;
      }
      if (failed) {
        std::string message;
        for (const auto& f : test.at("failures")) message += f.value("failure", "") + "\n";
        r.failed.push_back({name, message});
        if (std::find(r.failed_groups.begin(), r.failed_groups.end(), group) == r.failed_groups.end()) {
          r.failed_groups.push_back(group);
        }
      }
    }
  }
}

void sort_failures(ChapterResult& r) {
  std::stable_sort(r.failed.begin(), r.failed.end(), [](const FailedTest& a, const FailedTest& b) {
    return group_rank(a.name) < group_rank(b.name);
  });
  std::stable_sort(r.failed_groups.begin(), r.failed_groups.end(),
                   [](const std::string& a, const std::string& b) { return group_rank(a) < group_rank(b); });
}

void score(ChapterResult& r) {
  const bool correct = r.tests_total > 0 && r.tests_passed == r.tests_total;
  r.points = (correct ? r.spec->correctness_points : 0) +
             (correct && r.bandwidth_passed ? r.spec->performance_points : 0);
  r.status = correct && r.bandwidth_passed ? "passed" : "failed";
  if (r.status == "failed" && r.detail.empty()) {
    r.detail = correct ? "correct, but below the chapter's bandwidth threshold"
                       : fmt::format("{} of {} correctness tests failed", r.tests_total - r.tests_passed,
                                     r.tests_total);
  }
}

class Grader {
 public:
  Grader(Options options, workbook::Manifest manifest)
      : opt_(std::move(options)), manifest_(std::move(manifest)) {}

  int run() {
    if (!fs::is_directory(opt_.chapters_dir)) {
      fmt::print(stderr, "grader: {} is not a directory (expected a chapters/ tree)\n", opt_.chapters_dir);
      return 2;
    }
    opt_.chapters_dir = fs::canonical(opt_.chapters_dir).string();
    if (opt_.build_dir.empty()) opt_.build_dir = default_build_dir();
    fs::create_directories(fs::path(opt_.build_dir) / "logs");
    std::string why;
    has_device_ = workbook::device_available(&why);
    fmt::print("Grading {}\n  build: {}\n  seed: {} (--seed {} repeats this run)\n", opt_.chapters_dir,
               opt_.build_dir, opt_.seed, opt_.seed);
    if (has_device_) {
      device_ = workbook::device_info();
      fmt::print("  device: {}, {} SMs, driver CUDA {}\n\n", device_->name, device_->multiprocessors,
                 workbook::version_string(device_->driver_version));
    } else {
      fmt::print("\nGrading needs a CUDA device, and none can be used here ({}).\nEvery chapter is "
                 "still built, so compile errors are reported; no test runs.\n\n", why);
    }
    if (!configure()) return 2;
    for (const workbook::ChapterSpec& spec : manifest_.chapters) {
      if (!opt_.only.empty() &&
          std::find(opt_.only.begin(), opt_.only.end(), spec.slug) == opt_.only.end()) {
        continue;
      }
      results_.push_back(grade(spec));
    }
    print_table();
    write_reports();
    const bool any_failed = std::any_of(results_.begin(), results_.end(), [](const ChapterResult& r) {
      return r.status != "passed" && r.status != "skipped: no GPU";
    });
    return any_failed ? 1 : 0;
  }

 private:
  std::string default_build_dir() const {
    std::string tag = fs::path(opt_.chapters_dir).parent_path().filename().string() + "-" +
                      std::to_string(std::hash<std::string>{}(opt_.chapters_dir) % 100000);
    std::replace_if(tag.begin(), tag.end(), [](char c) { return !std::isalnum(c) && c != '-'; }, '_');
    return (fs::path(WORKBOOK_BINARY_DIR) / "graded" / tag).string();
  }

  std::string log(const std::string& name) const {
    return (fs::path(opt_.build_dir) / "logs" / name).string();
  }

  bool configure() {
    const std::vector<std::string> cmd = {
        "cmake", "-S", WORKBOOK_SOURCE_DIR, "-B", opt_.build_dir, "-G", WORKBOOK_GENERATOR,
        "-DCMAKE_BUILD_TYPE=Release", "-DWORKBOOK_CHAPTERS_ONLY=ON",
        "-DWORKBOOK_CHAPTERS_DIR=" + opt_.chapters_dir,
        "-DCMAKE_CUDA_ARCHITECTURES=" + cuda_architectures(),
        "-DCMAKE_CUDA_COMPILER=" + std::string(WORKBOOK_CUDA_COMPILER)};
    fmt::print("configuring ... ");
    std::fflush(stdout);
    const auto r = grader::run_process(cmd, log("configure.log"), opt_.build_timeout_s);
    if (r.timed_out || r.exit_code != 0) {
      fmt::print("failed\n{}\ngrader: configuring the chapter build failed; the log is {}\n",
                 grader::tail_of(log("configure.log"), 20), log("configure.log"));
      return false;
    }
    fmt::print("done\nbuilding the harness ... ");
    std::fflush(stdout);
    const auto h = build("chapter_tests", "harness.log");
    if (h.timed_out || h.exit_code != 0) {
      fmt::print("failed\n{}\ngrader: the harness does not build; this is not the learner's code\n",
                 grader::tail_of(log("harness.log"), 20));
      return false;
    }
    fmt::print("done\n\n");
    return true;
  }

  // The architectures the grader itself was configured with ("80-real,90" -> "80-real;90").
  static std::string cuda_architectures() {
    std::string list = WORKBOOK_CUDA_ARCHITECTURES;
    std::replace(list.begin(), list.end(), ',', ';');
    return list;
  }

  grader::ProcessResult build(const std::string& target, const std::string& log_name) {
    return grader::run_process({"cmake", "--build", opt_.build_dir, "--target", target},
                               log(log_name), opt_.build_timeout_s);
  }

  ChapterResult grade(const workbook::ChapterSpec& spec) {
    ChapterResult r;
    r.spec = &spec;
    fmt::print("{:<18} ", spec.slug);
    std::fflush(stdout);
    const fs::path source = fs::path(opt_.chapters_dir) / spec.slug / "kernel.cu";
    if (!fs::exists(source)) {
      r.status = "missing";
      r.detail = fmt::format("{} does not exist", source.string());
      fmt::print("{}\n", r.status);
      return r;
    }
    const std::string build_log = log(spec.slug + ".build.log");
    const auto b = build("test_" + spec.slug, spec.slug + ".build.log");
    if (b.timed_out || b.exit_code != 0) {
      r.status = "does not compile";
      r.detail = b.timed_out ? "the build timed out" : compile_errors(build_log);
      fmt::print("{} (log: {})\n", r.status, build_log);
      return r;
    }
    fmt::print("built ({:.0f} s) ", b.seconds);
    if (!has_device_) {
      r.status = "skipped: no GPU";
      r.detail = "built; grading needs a CUDA device";
      fmt::print("{}\n", r.status);
      return r;
    }
    run_tests(spec, r);
    fmt::print("{}\n", r.status);
    return r;
  }

  void run_tests(const workbook::ChapterSpec& spec, ChapterResult& r) {
    const std::string run_log = log(spec.slug + ".test.log");
    const std::string report = (fs::path(opt_.build_dir) / "logs" / (spec.slug + ".json")).string();
    fs::remove(report);
    const std::string exe = (fs::path(opt_.build_dir) / "tests" / ("test_" + spec.slug)).string();
    const int limit = opt_.timeout_s > 0 ? opt_.timeout_s : spec.timeout_s;
    const auto t = grader::run_process({exe, "--gtest_output=json:" + report}, run_log, limit,
                                       {{"WORKBOOK_SEED", std::to_string(opt_.seed)},
                                        {"WORKBOOK_SUBJECT", "learner"}});
    if (t.timed_out) {
      const std::string test = last_started_test(run_log);
      r.status = "timed out";
      r.detail = fmt::format("no result after {} s{}: a kernel that never finishes (a __syncthreads() "
                             "some threads never reach, or a loop that never ends)",
                             limit, test.empty() ? "" : ", in test " + test);
      return;
    }
    if (t.exit_code == kNoDeviceExit) {
      r.status = "skipped: no GPU";
      r.detail = first_lines(grader::tail_of(run_log, 3), 3);
      return;
    }
    if (t.signal != 0 || t.exit_code == kContextLostExit || !fs::exists(report)) {
      r.status = "crashed";
      const std::string tail = grader::tail_of(run_log, 6);
      r.detail = t.signal ? fmt::format("the test process died of signal {} ({}) during test {}\n{}",
                                        t.signal, strsignal(t.signal), last_started_test(run_log), tail)
                          : tail;
      return;
    }
    try {
      read_gtest_report(report, r);
    } catch (const std::exception& e) {
      r.status = "crashed";
      r.detail = fmt::format("unreadable test report {}: {}", report, e.what());
      return;
    }
    if (opt_.sanitize && r.tests_total > 0 && r.tests_passed == r.tests_total) sanitize(spec, exe, r);
    sort_failures(r);
    score(r);
  }

  // Runs kSanitizedTests under each compute-sanitizer tool; a finding fails
  // the chapter's correctness, with the tool's first lines as the reason.
  void sanitize(const workbook::ChapterSpec& spec, const std::string& exe, ChapterResult& r) {
    const std::string tool_path = find_sanitizer();
    if (tool_path.empty()) return;
    for (const char* tool : kSanitizerTools) {
      const std::string tool_log = log(spec.slug + "." + tool + ".log");
      const auto t = grader::run_process(
          {tool_path, "--tool", tool, "--error-exitcode", std::to_string(kSanitizerFoundError),
           "--print-limit", "4", exe, std::string("--gtest_filter=") + kSanitizedTests},
          tool_log, 4.0 * (opt_.timeout_s > 0 ? opt_.timeout_s : spec.timeout_s),
          {{"WORKBOOK_SEED", std::to_string(opt_.seed)}, {"WORKBOOK_SUBJECT", "learner"}});
      if (t.exit_code == 0) continue;
      std::string findings;
      std::ifstream in(tool_log);
      int kept = 0;
      for (std::string line; std::getline(in, line) && kept < 10;) {
        if (line.rfind("=========", 0) == 0 && line.size() > 10) {
          findings += line + "\n";
          ++kept;
        }
      }
      const std::string what = t.timed_out ? "timed out under compute-sanitizer " + std::string(tool)
                                           : "compute-sanitizer " + std::string(tool) + " reports errors";
      r.failed.push_back({std::string("Sanitizer.") + tool,
                          fmt::format("{} on tests {} (log: {})\n{}", what, kSanitizedTests, tool_log, findings)});
      r.failed_groups.push_back("Sanitizer");
      ++r.tests_total;  // the sanitizer run counts as one more correctness test
      r.detail = what + (std::string(tool) == "racecheck"
                             ? ": a shared-memory data race (threads of one warp are not in lockstep on "
                               "Volta and later: order their accesses with __syncwarp())"
                             : std::string(tool) == "synccheck"
                                   ? ": a barrier that not every thread of the block (or warp) reaches"
                                   : ": an out-of-bounds or misaligned memory access");
      return;
    }
  }

  static std::string gbps(const std::optional<double>& v) {
    return v ? fmt::format("{:.0f}", *v) : "-";
  }

  void print_table() const {
    fmt::print("\n{:<18} {:<17} {:>11} {:>12} {:>14} {:>10} {:>9}\n", "chapter", "status",
               "correctness", "learner GB/s", "reference GB/s", "% ceiling", "points");
    fmt::print("{}\n", std::string(97, '-'));
    double total = 0;
    int max_total = 0;
    for (const ChapterResult& r : results_) {
      const std::string correctness =
          r.tests_total ? fmt::format("{}/{}", r.tests_passed, r.tests_total) : "-";
      const std::string pct = r.learner_gbps && r.ceiling_gbps && *r.ceiling_gbps > 0
                                  ? fmt::format("{:.1f}%", 100 * *r.learner_gbps / *r.ceiling_gbps)
                                  : "-";
      fmt::print("{:<18} {:<17} {:>11} {:>12} {:>14} {:>10} {:>9}\n", r.spec->slug, r.status,
                 correctness, gbps(r.learner_gbps), gbps(r.reference_gbps), pct,
                 fmt::format("{:g}/{}", r.points, r.max_points()));
      total += r.points;
      max_total += r.max_points();
    }
    fmt::print("{}\n{:<18} {:>78}\n", std::string(97, '-'), "total",
               fmt::format("{:g}/{}", total, max_total));
    for (const ChapterResult& r : results_) {
      if (r.status == "passed" || r.status == "skipped: no GPU") continue;
      fmt::print("\n== {} ({}): {}\n", r.spec->slug, r.spec->version, r.status);
      if (!r.detail.empty()) fmt::print("{}\n", r.detail);
      for (std::size_t i = 0; i < r.failed.size() && i < 4; ++i) {
        fmt::print("  x {}\n{}", r.failed[i].name, indent(first_lines(r.failed[i].message, 8)));
      }
      if (r.failed.size() > 4) fmt::print("  ... and {} more failed tests\n", r.failed.size() - 4);
      for (const std::string& group : r.failed_groups) {
        const auto hint = r.spec->hints.find(group);
        if (hint != r.spec->hints.end()) fmt::print("  hint ({}): {}\n", group, hint->second);
      }
    }
    const bool none_ran = std::all_of(results_.begin(), results_.end(),
                                      [](const ChapterResult& r) { return r.status == "skipped: no GPU"; });
    if (!results_.empty() && none_ran) {
      fmt::print("\nEvery chapter compiled. Grading needs a CUDA device: run this on a machine with a GPU.\n");
    }
  }

  static std::string indent(const std::string& text) {
    std::string out;
    std::size_t pos = 0;
    while (pos < text.size()) {
      const std::size_t end = text.find('\n', pos);
      out += "      " + text.substr(pos, end == std::string::npos ? std::string::npos : end - pos) + "\n";
      pos = end == std::string::npos ? text.size() : end + 1;
    }
    return out;
  }

  void write_reports() const {
    json chapters = json::array();
    double total = 0;
    int max_total = 0;
    for (const ChapterResult& r : results_) {
      json c = {{"slug", r.spec->slug},       {"version", r.spec->version},
                {"title", r.spec->title},     {"status", r.status},
                {"detail", r.detail},         {"tests_passed", r.tests_passed},
                {"tests_total", r.tests_total}, {"bandwidth_passed", r.bandwidth_passed},
                {"points", r.points},         {"max_points", r.max_points()},
                {"required_fraction", r.spec->bandwidth_fraction}};
      auto put = [&](const char* key, const std::optional<double>& v) { c[key] = v ? json(*v) : json(nullptr); };
      put("learner_gbps", r.learner_gbps);
      put("reference_gbps", r.reference_gbps);
      put("ceiling_gbps", r.ceiling_gbps);
      c["failed_tests"] = json::array();
      for (const FailedTest& f : r.failed) c["failed_tests"].push_back({{"name", f.name}, {"message", f.message}});
      chapters.push_back(c);
      total += r.points;
      max_total += r.max_points();
    }
    json device = nullptr;
    if (device_) {
      device = {{"name", device_->name},
                {"multiprocessors", device_->multiprocessors},
                {"driver_cuda", workbook::version_string(device_->driver_version)},
                {"runtime_cuda", workbook::version_string(device_->runtime_version)}};
    }
    const json report = {{"chapters_dir", opt_.chapters_dir}, {"seed", opt_.seed},
                         {"date", timestamp()},               {"device", device},
                         {"graded", has_device_},              {"points", total},
                         {"max_points", max_total},            {"chapters", chapters}};
    const std::string path = opt_.report.empty()
                                 ? (fs::path(opt_.build_dir) / "report.json").string()
                                 : opt_.report;
    std::ofstream(path) << report.dump(2) << "\n";
    fmt::print("\nreport: {}\n", path);
    if (!opt_.roster.empty()) append_roster(total, max_total);
    if (!opt_.gradescope.empty()) {
      json tests = json::array();
      for (const ChapterResult& r : results_) {
        std::string output = r.status + (r.detail.empty() ? "" : ": " + r.detail);
        for (const FailedTest& f : r.failed) output += "\n" + f.name + "\n" + first_lines(f.message, 8);
        tests.push_back({{"name", r.spec->slug + " (" + r.spec->version + ") " + r.spec->title},
                         {"score", r.points},
                         {"max_score", r.max_points()},
                         {"status", r.status == "passed" ? "passed" : "failed"},
                         {"output", output}});
      }
      std::ofstream(opt_.gradescope) << json{{"score", total}, {"tests", tests}}.dump(2) << "\n";
      fmt::print("gradescope results: {}\n", opt_.gradescope);
    }
  }

  // One row per graded submission; the header is written when the file is new.
  void append_roster(double total, int max_total) const {
    const bool fresh = !fs::exists(opt_.roster) || fs::file_size(opt_.roster) == 0;
    std::ofstream csv(opt_.roster, std::ios::app);
    if (fresh) {
      csv << "submission,date,seed,points,max_points";
      for (const ChapterResult& r : results_) csv << "," << r.spec->slug;
      csv << "\n";
    }
    std::string name = fs::path(opt_.chapters_dir).parent_path().filename().string();
    std::replace(name.begin(), name.end(), ',', '_');
    csv << fmt::format("{},{},{},{:g},{}", name, timestamp(), opt_.seed, total, max_total);
    for (const ChapterResult& r : results_) csv << fmt::format(",{:g}", r.points);
    csv << "\n";
    fmt::print("roster: {}\n", opt_.roster);
  }

  static std::string timestamp() {
    const std::time_t now = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    return buf;
  }

  Options opt_;
  workbook::Manifest manifest_;
  bool has_device_ = false;
  std::optional<workbook::DeviceInfo> device_;
  std::vector<ChapterResult> results_;
};

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  CLI::App app{"Builds and tests each chapter of a chapters/ tree on the GPU, one process per "
               "chapter, and reports points per chapter."};
  app.add_option("--chapters", opt.chapters_dir, "the chapters/ tree to grade (a submission)")
      ->capture_default_str();
  app.add_option("--chapter", opt.only, "grade only this chapter (repeatable), e.g. 03_idle_threads or 03");
  app.add_option("--build-dir", opt.build_dir, "where to build (default: one folder per tree under the grader's build)");
  app.add_option("--report", opt.report, "where to write the JSON report (default: <build-dir>/report.json)");
  app.add_option("--gradescope", opt.gradescope, "also write Gradescope's results.json here");
  app.add_option("--roster", opt.roster,
                 "append one CSV row (submission, points per chapter) to this class roster");
  app.add_option("--seed", opt.seed, "seed for the random inputs (default: fresh each run)");
  app.add_option("--build-timeout", opt.build_timeout_s, "seconds allowed to build one chapter")
      ->capture_default_str();
  app.add_flag("!--no-sanitize", opt.sanitize,
               "skip the compute-sanitizer runs (memcheck, racecheck, synccheck) on three tests");
  app.add_option("--timeout", opt.timeout_s,
                 "seconds allowed for one chapter's tests (default: the manifest's, per chapter)");
  CLI11_PARSE(app, argc, argv);
  if (opt.seed == 0) {
    std::random_device rd;
    opt.seed = (std::uint64_t(rd()) << 20) ^ rd();
  }
  workbook::Manifest manifest;
  try {
    manifest = workbook::load_manifest(WORKBOOK_SOURCE_DIR "/grader/manifest.json");
  } catch (const std::exception& e) {
    fmt::print(stderr, "grader: {}\n", e.what());
    return 2;
  }
  for (std::string& slug : opt.only) {  // "03" is short for "03_idle_threads"
    for (const workbook::ChapterSpec& c : manifest.chapters) {
      if (c.slug.rfind(slug + "_", 0) == 0) slug = c.slug;
    }
    if (!manifest.find(slug)) {
      fmt::print(stderr, "grader: no chapter {} in the manifest\n", slug);
      return 2;
    }
  }
  return Grader(std::move(opt), std::move(manifest)).run();
}
