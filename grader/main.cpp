// The grader's command line: reads and checks the options, then grades.
//
//   grader                          grade ./chapters
//   grader --chapter 03             one chapter
//   grader --chapters ~/alice/chapters --report alice.json
//   grader --submissions class/ --out grades/              a whole class
//   grader --submissions class/ --out grades/ --shard 2/8  one task of a Slurm array
//   grader --merge grades/                                 the class reports of the shards
//   grader status | list | hint 03 | watch [03] | reset 03 | debug 03   the student's loop
//
// Every usage error exits 2 with one line saying what is wrong.
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <sys/prctl.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <fmt/format.h>

#include "formats.hpp"
#include "grade.hpp"
#include "judge/manifest.hpp"
#include "merge.hpp"
#include "options.hpp"
#include "process.hpp"
#include "sandbox/sandbox.hpp"
#include "student.hpp"

namespace fs = std::filesystem;

namespace {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string slug_list(const workbook::Manifest& manifest) {
  std::string out;
  for (const workbook::ChapterSpec& c : manifest.chapters) out += (out.empty() ? "" : ", ") + c.slug;
  return out;
}

// "03_idle_threads", "03" or "3" -> "03_idle_threads".
std::string chapter_slug(const std::string& name, const workbook::Manifest& manifest) {
  std::string key = name;
  if (!key.empty() && key.size() < 2 && std::all_of(key.begin(), key.end(), ::isdigit)) key = "0" + key;
  for (const workbook::ChapterSpec& c : manifest.chapters) {
    if (c.slug == key || c.slug.rfind(key + "_", 0) == 0) return c.slug;
  }
  throw UsageError(
      fmt::format("--chapter {}: no such chapter; the chapters are {} (or their numbers)", name, slug_list(manifest)));
}

bool holds_a_chapter(const fs::path& dir, const workbook::Manifest& manifest) {
  std::error_code ec;
  for (const workbook::ChapterSpec& c : manifest.chapters) {
    if (fs::is_directory(dir / c.slug, ec)) return true;
  }
  return false;
}

fs::path chapters_tree(const std::string& given, const workbook::Manifest& manifest) {
  const fs::path dir = fs::absolute(given).lexically_normal();
  std::error_code ec;
  if (!fs::exists(dir, ec)) throw UsageError(fmt::format("--chapters {}: no such directory", given));
  if (!fs::is_directory(dir, ec)) {
    throw UsageError(fmt::format("--chapters {}: not a directory (expected a chapters/ tree)", given));
  }
  if (holds_a_chapter(dir, manifest)) return fs::canonical(dir);
  if (holds_a_chapter(dir / "chapters", manifest)) {
    throw UsageError(
        fmt::format("--chapters {}: holds no chapter folders; did you mean {}?", given, (dir / "chapters").string()));
  }
  throw UsageError(fmt::format("--chapters {}: holds none of the chapter folders ({}, ...)", given,
                               manifest.chapters.empty() ? "" : manifest.chapters.front().slug));
}

// An output file: absolute against the caller's directory, in a directory that exists.
std::string output_path(const char* option, const std::string& given) {
  if (given.empty()) return given;
  const fs::path path = fs::absolute(given).lexically_normal();
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw UsageError(fmt::format("{} {}: is a directory, not a file", option, given));
  if (!fs::is_directory(path.parent_path(), ec)) {
    throw UsageError(fmt::format("{} {}: the directory {} does not exist", option, given, path.parent_path().string()));
  }
  // Found now, not after grading: the report is written by renaming a new file into place.
  if (access(path.parent_path().c_str(), W_OK | X_OK) != 0 ||
      (fs::exists(path, ec) && access(path.c_str(), W_OK) != 0)) {
    throw UsageError(fmt::format("{} {}: cannot write there ({})", option, given, std::strerror(errno)));
  }
  return path.string();
}

std::string input_file(const char* option, const std::string& given) {
  const fs::path path = fs::absolute(given).lexically_normal();
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw UsageError(fmt::format("{} {}: no such file", option, given));
  return path.string();
}

std::uint64_t parse_seed(const std::string& text) {
  if (text.empty() || text.size() > 20 || !std::all_of(text.begin(), text.end(), ::isdigit)) {
    throw UsageError(fmt::format("--seed {}: a seed is a whole number from 0 to 18446744073709551615", text));
  }
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE) {
    throw UsageError(fmt::format("--seed {}: larger than 18446744073709551615", text));
  }
  return v;
}

std::string existing_dir(const char* option, const std::string& given) {
  const fs::path dir = fs::absolute(given).lexically_normal();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw UsageError(fmt::format("{} {}: no such directory", option, given));
  return fs::canonical(dir).string();
}

// An output folder: created if its parent exists.
std::string output_dir(const char* option, const std::string& given) {
  const fs::path dir = fs::absolute(given).lexically_normal();
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) {
    throw UsageError(fmt::format("{} {}: exists and is not a directory", option, given));
  }
  if (!fs::exists(dir, ec) && !fs::is_directory(dir.parent_path(), ec)) {
    throw UsageError(fmt::format("{} {}: the directory {} does not exist", option, given, dir.parent_path().string()));
  }
  fs::create_directories(dir, ec);
  if (ec) throw UsageError(fmt::format("{} {}: cannot create it: {}", option, given, ec.message()));
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    throw UsageError(fmt::format("{} {}: cannot write there ({})", option, given, std::strerror(errno)));
  }
  return dir.string();
}

// "K/N" with 1 <= K <= N.
std::pair<int, int> parse_shard(const std::string& text) {
  const std::size_t slash = text.find('/');
  const auto whole = [](const std::string& t) {
    return !t.empty() && t.size() < 6 && std::all_of(t.begin(), t.end(), ::isdigit);
  };
  if (slash != std::string::npos && whole(text.substr(0, slash)) && whole(text.substr(slash + 1))) {
    const int k = std::stoi(text.substr(0, slash)), n = std::stoi(text.substr(slash + 1));
    if (k >= 1 && k <= n) return {k, n};
  }
  throw UsageError(fmt::format("--shard {}: expected K/N with 1 <= K <= N (the K-th of N slices), e.g. 1/4", text));
}

std::vector<int> parse_gpus(const std::string& text) {
  std::vector<int> gpus;
  std::string item;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != ',') {
      item += text[i];
      continue;
    }
    if (item.empty() || item.size() > 3 || !std::all_of(item.begin(), item.end(), ::isdigit)) {
      throw UsageError(fmt::format("--gpus {}: expected GPU numbers separated by commas, e.g. 0,1", text));
    }
    gpus.push_back(std::stoi(item));
    item.clear();
  }
  return gpus;
}

}  // namespace

namespace {

int run_grader(int argc, char** argv) {
  workbook::Manifest manifest;
  try {
    manifest = workbook::load_manifest(WORKBOOK_SOURCE_DIR "/grader/manifest.json");
  } catch (const std::exception& e) {
    fmt::print(stderr, "grader: {}\n", e.what());
    return grader::code(grader::Exit::cannot);
  }
  grader::Options opt;
  std::string chapters = WORKBOOK_SOURCE_DIR "/chapters", seed, shard, gpus;
  CLI::App app{
      "Builds, checks and tests each chapter of a chapters/ tree on the GPU, one process per "
      "chapter, and reports points per chapter; or a whole class of submissions. Exit status: "
      "0 every chapter passed, 1 some failed, 2 a usage error or something the grader could "
      "not do (its own build, a report it could not write), 3 nothing graded (no GPU) and every "
      "chapter built and checked, 4 nothing graded (no GPU) and some chapter does not compile, "
      "was refused or is missing, 130 interrupted.",
      "grader/grade"};  // the name usage lines give: the command people run
  app.add_option("--chapters", chapters, "the chapters/ tree to grade (one submission)")->capture_default_str();
  app.add_option("--chapter", opt.only, "grade only this chapter (repeatable): 03_idle_threads, 03 or 3");
  auto* submissions =
      app.add_option("--submissions", opt.submissions_dir,
                     "grade a class: every folder, .zip, .tar.gz or .tgz in this folder is a submission");
  app.add_option("--out", opt.out_dir,
                 "with --submissions: <out>/<id>/ gets each submission's reports, "
                 "<out> the class reports (gradebook.csv, junit.xml, summary.txt)");
  app.add_option("--shard", shard, "with --submissions: grade only the K-th of N slices, K/N (a Slurm array task)");
  app.add_flag("--regrade", opt.regrade, "with --submissions: grade again where a complete report exists");
  auto* merge = app.add_option(
      "--merge", opt.merge_dir,
      "write the class reports of this output folder (after the shards of a Slurm array), grading nothing");
  app.add_option("--ids", opt.ids_file, "a CSV 'submission,student' naming each submission's student in the gradebook");
  app.add_option("--gpus", gpus, "the GPUs to use, e.g. 0,1 (default: every visible GPU, one worker each)");
  app.add_option("--timeline", opt.timeline,
                 "write a CSV of every test process and build of the run: when it "
                 "asked for the GPU, started and ended (where the time goes)");
  app.add_option("--jobs-per-gpu", opt.jobs_per_gpu,
                 "chapters in their tests at once on one GPU (default: half the CPU cores per GPU, 2 to 8); a "
                 "timed run is always alone")
      ->check(CLI::Range(1, 64));
  app.add_option("--tool-runs-per-gpu", opt.tool_runs_per_gpu,
                 "chapters whose tests are done, in their compute-sanitizer runs, at once on one GPU beside "
                 "those in their tests (0: a chapter keeps its place until its last run ends)")
      ->capture_default_str()
      ->check(CLI::Range(0, 64));
  app.add_option("--timed-batch", opt.timed_batch,
                 "timed runs served one after another once the shared test processes drain (1: each "
                 "timed run drains them alone)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app.add_option("--timed-patience", opt.timed_patience_s,
                 "the longest a timed run waits, in seconds, for its batch to fill while other tests run")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 600.0));
  app.add_option("--chapter-hardware-queues", opt.chapter_hardware_queues,
                 "hardware queues (CUDA_DEVICE_MAX_CONNECTIONS) of a chapter's process in its tests, unless that "
                 "variable is set (0: the driver's default; the runs under compute-sanitizer and the judges get one)")
      ->capture_default_str()
      ->check(CLI::Range(0, 32));
  app.add_flag("--drain-whole-parts{false}", opt.drain_between_tests,
               "a timed test waits for every other test process on its GPU to finish its part (the tests, or a "
               "sanitizer tool's run) instead of its current test (the default: judges wait between tests while a "
               "timed test has the GPU alone)");
  app.add_flag("--separate-judges", opt.separate_judges,
               "start a judge process for each part of a chapter (its tests, its timed tests, each sanitizer "
               "tool) instead of one judge for all of them (the default: four judges and their CUDA "
               "contexts fewer per chapter)");
  app.add_option("--build-dir", opt.build_dir,
                 "the grading build, shared by every submission (default: grading/ in the grader's build)");
  app.add_option("--report", opt.paths.report, "where to write the JSON report (default: <build-dir>/report.json)");
  app.add_option("--feedback", opt.paths.feedback, "also write the student's feedback (Markdown) here");
  app.add_option("--gradescope", opt.paths.gradescope, "also write Gradescope's results.json here");
  app.add_option("--prairielearn", opt.paths.prairielearn, "also write PrairieLearn's results.json here");
  app.add_option("--junit", opt.paths.junit, "also write JUnit XML here");
  app.add_option("--gradescope-visibility", opt.gradescope_visibility,
                 "visible, hidden, after_due_date or after_published")
      ->capture_default_str();
  app.add_flag("!--no-leaderboard", opt.leaderboard, "leave the GB/s leaderboard out of Gradescope's results");
  app.add_option("--seed", seed, "seed for the random inputs, 0 to 2^64-1 (default: fresh each run)");
  app.add_option("--build-timeout", opt.build_timeout_s, "seconds allowed to build one chapter")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 86400.0));
  app.add_flag("!--no-sanitize", opt.sanitize,
               "skip the compute-sanitizer runs (memcheck, racecheck, synccheck) on three tests");
  app.add_option("--timeout", opt.timeout_s,
                 "seconds allowed for one chapter's tests (default: the manifest's, per chapter)")
      ->check(CLI::Range(1, 86400));
  submissions->excludes(merge);
  // The student's loop: subcommands that share --chapters with grading.
  std::string sub_chapter;
  bool all_hints = false, yes = false;
  grader::DebugOptions debug;
  auto* status_cmd = app.add_subcommand(
      "status", "each chapter: done, in progress or not started, its last result, and the next chapter");
  auto* list_cmd = app.add_subcommand("list", "the chapters, each one's idea, and where its lesson is");
  auto* hint_cmd =
      app.add_subcommand("hint", "the next hint for a chapter, one step at a time (from a nudge to nearly the answer)");
  hint_cmd->add_option("chapter", sub_chapter, "the chapter: 03_idle_threads, 03 or 3")->required();
  hint_cmd->add_flag("--all", all_hints, "every hint up to the last");
  auto* watch_cmd =
      app.add_subcommand("watch", "grade a chapter, then again on every save of its kernel.cu (Ctrl-C stops)");
  watch_cmd->add_option("chapter", sub_chapter, "the chapter (default: the first not yet passed)");
  auto* reset_cmd = app.add_subcommand("reset", "put a chapter's stub back, keeping your file as a backup");
  reset_cmd->add_option("chapter", sub_chapter, "the chapter")->required();
  reset_cmd->add_flag("--yes", yes, "do not ask");
  auto* debug_cmd = app.add_subcommand("debug",
                                       "build a chapter with device line information and run one test under "
                                       "compute-sanitizer or cuda-gdb");
  debug_cmd->add_option("chapter", sub_chapter, "the chapter")->required();
  debug_cmd->add_option("--test", debug.test,
                        "the test (a GoogleTest filter; default: the three tests the grader sanitizes)");
  debug_cmd->add_option("--tool", debug.tool, "memcheck, racecheck, synccheck, initcheck or cuda-gdb")
      ->capture_default_str()
      ->check(CLI::IsMember({"memcheck", "racecheck", "synccheck", "initcheck", "cuda-gdb"}));
  debug_cmd->add_flag("-G", debug.device_debug, "device code built with -G (unoptimized, for stepping in cuda-gdb)");
  for (CLI::App* sub : {status_cmd, list_cmd, hint_cmd, watch_cmd, reset_cmd, debug_cmd}) sub->fallthrough();
  app.require_subcommand(0, 1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "grader: {}\n(grader/grade --help lists the options)\n", e.what());
    return grader::code(grader::Exit::cannot);
  }
  try {
    for (std::string& name : opt.only) name = chapter_slug(name, manifest);
    if (!sub_chapter.empty()) sub_chapter = chapter_slug(sub_chapter, manifest);
    if (!grader::valid_gradescope_visibility(opt.gradescope_visibility)) {
      throw UsageError(
          fmt::format("--gradescope-visibility {}: one of visible, hidden, after_due_date, after_published",
                      opt.gradescope_visibility));
    }
    if (!shard.empty()) std::tie(opt.shard, opt.shards) = parse_shard(shard);
    if (!gpus.empty()) opt.gpus = parse_gpus(gpus);
    if (!opt.ids_file.empty()) opt.ids_file = input_file("--ids", opt.ids_file);
    if (!opt.merge_dir.empty()) {
      opt.merge_dir = existing_dir("--merge", opt.merge_dir);
    } else if (!opt.submissions_dir.empty()) {
      opt.submissions_dir = existing_dir("--submissions", opt.submissions_dir);
      if (opt.out_dir.empty()) throw UsageError("--submissions needs --out: the folder the reports go to");
      opt.out_dir = output_dir("--out", opt.out_dir);
      for (const std::string& single :
           {opt.paths.report, opt.paths.feedback, opt.paths.gradescope, opt.paths.prairielearn, opt.paths.junit}) {
        if (!single.empty()) {
          throw UsageError(
              "--report, --feedback, --gradescope, --prairielearn and --junit are for one "
              "submission; with --submissions every report goes to <out>/<id>/");
        }
      }
    } else {
      if (!shard.empty() || !opt.out_dir.empty() || opt.regrade) {
        throw UsageError("--shard, --out and --regrade go with --submissions");
      }
      opt.chapters_dir = chapters_tree(chapters, manifest).string();
      opt.paths.report = output_path("--report", opt.paths.report);
      opt.paths.feedback = output_path("--feedback", opt.paths.feedback);
      opt.paths.gradescope = output_path("--gradescope", opt.paths.gradescope);
      opt.paths.prairielearn = output_path("--prairielearn", opt.paths.prairielearn);
      opt.paths.junit = output_path("--junit", opt.paths.junit);
    }
    opt.timeline = output_path("--timeline", opt.timeline);
    if (!opt.build_dir.empty()) opt.build_dir = fs::absolute(opt.build_dir).lexically_normal().string();
    if (!seed.empty()) {
      opt.seed = parse_seed(seed);
      opt.seed_given = true;
    }
  } catch (const UsageError& e) {
    fmt::print(stderr, "grader: {}\n", e.what());
    return grader::code(grader::Exit::cannot);
  }
  if (!opt.merge_dir.empty()) {
    return grader::merge_class(opt.merge_dir, manifest, opt.ids_file, opt.only);
  }
  if (*status_cmd) return grader::show_status(opt, manifest);
  if (*list_cmd) return grader::show_list(manifest);
  if (*hint_cmd) return grader::show_hint(opt, manifest, sub_chapter, all_hints);
  if (*reset_cmd) return grader::reset_chapter(opt, manifest, sub_chapter, yes);
  if (!opt.seed_given) {
    std::random_device rd;
    opt.seed = (std::uint64_t(rd()) << 20) ^ rd();
  }
  if (opt.build_dir.empty()) opt.build_dir = (fs::path(WORKBOOK_BINARY_DIR) / "grading").string();
  grader::install_interrupt_handlers();
  try {
    if (*watch_cmd) return grader::watch(opt, manifest, sub_chapter);
    if (*debug_cmd) {
      if (opt.build_dir == (fs::path(WORKBOOK_BINARY_DIR) / "grading").string()) opt.build_dir.clear();
      return grader::debug_chapter(opt, manifest, sub_chapter, debug);
    }
    return grader::grade(opt, manifest);
  } catch (const std::exception& e) {
    fmt::print(stderr, "grader: {}\n", e.what());
    return grader::code(grader::Exit::cannot);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Nothing of the same user may read the grader's memory (the seed); every process it starts,
  // and every process those start (ninja's compilers in process groups of their own, a judge's
  // sandbox), is reparented here if its parent dies, and ends when the grader does.
  prctl(PR_SET_DUMPABLE, 0);
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  const int status = run_grader(argc, argv);
  workbook::sandbox::kill_descendants();
  return status;
}
