// The grader's command line: reads and checks the options, then grades.
//
//   grader                          grade ./chapters
//   grader --chapter 03             one chapter
//   grader --chapters ~/alice/chapters --report alice.json
//
// Every usage error exits 2 with one line saying what is wrong.
#include <cstdint>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "grade.hpp"
#include "options.hpp"
#include "process.hpp"
#include "workbook/manifest.hpp"

namespace fs = std::filesystem;

namespace {

constexpr int kUsageError = 2;

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
  throw UsageError(fmt::format("--chapter {}: no such chapter; the chapters are {} (or their numbers)",
                               name, slug_list(manifest)));
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
    throw UsageError(fmt::format("--chapters {}: holds no chapter folders; did you mean {}?", given,
                                 (dir / "chapters").string()));
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
    throw UsageError(fmt::format("{} {}: the directory {} does not exist", option, given,
                                 path.parent_path().string()));
  }
  return path.string();
}

std::uint64_t parse_seed(const std::string& text) {
  if (text.empty() || text.size() > 20 || !std::all_of(text.begin(), text.end(), ::isdigit)) {
    throw UsageError(fmt::format("--seed {}: a seed is a whole number from 0 to 18446744073709551615",
                                 text));
  }
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE) {
    throw UsageError(fmt::format("--seed {}: larger than 18446744073709551615", text));
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  workbook::Manifest manifest;
  try {
    manifest = workbook::load_manifest(WORKBOOK_SOURCE_DIR "/grader/manifest.json");
  } catch (const std::exception& e) {
    fmt::print(stderr, "grader: {}\n", e.what());
    return kUsageError;
  }
  grader::Options opt;
  std::string chapters = WORKBOOK_SOURCE_DIR "/chapters", seed;
  CLI::App app{"Builds, checks and tests each chapter of a chapters/ tree on the GPU, one process per "
               "chapter, and reports points per chapter. Exit status: 0 every graded chapter passed "
               "(or there is no GPU), 1 some failed, 2 a usage error or a report that could not be "
               "written, 130 interrupted."};
  app.add_option("--chapters", chapters, "the chapters/ tree to grade (a submission)")->capture_default_str();
  app.add_option("--chapter", opt.only, "grade only this chapter (repeatable): 03_idle_threads, 03 or 3");
  app.add_option("--build-dir", opt.build_dir, "where to build (default: one folder per tree under the grader's build)");
  app.add_option("--report", opt.report, "where to write the JSON report (default: <build-dir>/report.json)");
  app.add_option("--gradescope", opt.gradescope, "also write Gradescope's results.json here");
  app.add_option("--roster", opt.roster, "append one CSV row (submission, points per chapter) to this class roster");
  app.add_option("--seed", seed, "seed for the random inputs, 0 to 2^64-1 (default: fresh each run)");
  app.add_option("--build-timeout", opt.build_timeout_s, "seconds allowed to build one chapter")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 86400.0));
  app.add_flag("!--no-sanitize", opt.sanitize,
               "skip the compute-sanitizer runs (memcheck, racecheck, synccheck) on three tests");
  app.add_option("--timeout", opt.timeout_s,
                 "seconds allowed for one chapter's tests (default: the manifest's, per chapter)")
      ->check(CLI::Range(1, 86400));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "grader: {}\n(grader --help lists the options)\n", e.what());
    return kUsageError;
  }
  try {
    for (std::string& name : opt.only) name = chapter_slug(name, manifest);
    opt.chapters_dir = chapters_tree(chapters, manifest).string();
    opt.report = output_path("--report", opt.report);
    opt.gradescope = output_path("--gradescope", opt.gradescope);
    opt.roster = output_path("--roster", opt.roster);
    if (!opt.build_dir.empty()) opt.build_dir = fs::absolute(opt.build_dir).lexically_normal().string();
    if (!seed.empty()) {
      opt.seed = parse_seed(seed);
      opt.seed_given = true;
    }
  } catch (const UsageError& e) {
    fmt::print(stderr, "grader: {}\n", e.what());
    return kUsageError;
  }
  if (!opt.seed_given) {
    std::random_device rd;
    opt.seed = (std::uint64_t(rd()) << 20) ^ rd();
  }
  if (opt.build_dir.empty()) {
    std::string tag = fs::path(opt.chapters_dir).parent_path().filename().string() + "-" +
                      std::to_string(std::hash<std::string>{}(opt.chapters_dir) % 100000);
    std::replace_if(tag.begin(), tag.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)) && c != '-'; }, '_');
    opt.build_dir = (fs::path(WORKBOOK_BINARY_DIR) / "graded" / tag).string();
  }
  grader::install_interrupt_handlers();
  try {
    return grader::grade(opt, manifest);
  } catch (const std::exception& e) {
    fmt::print(stderr, "grader: {}\n", e.what());
    return kUsageError;
  }
}
