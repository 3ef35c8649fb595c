#include "student.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "exit_status.hpp"
#include "judge/names.hpp"
#include "process.hpp"
#include "progress.hpp"
#include "report.hpp"
#include "text.hpp"

namespace fs = std::filesystem;

namespace grader {
namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The chapter's stub as the project ships it (grader/stubs.json, checked against chapters/ in CI):
// found in any copy of the project, whatever the student committed. The file is read once.
std::optional<std::string> pristine_stub(const std::string& slug) {
  static const nlohmann::json stubs = [] {
    std::ifstream in(fs::path(WORKBOOK_SOURCE_DIR) / "grader" / "stubs.json");
    try {
      return in ? nlohmann::json::parse(in).at("stubs") : nlohmann::json::object();
    } catch (const nlohmann::json::exception&) {
      return nlohmann::json::object();
    }
  }();
  const auto it = stubs.find(slug);
  if (it == stubs.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::string lesson_page(const std::string& slug) {
  const fs::path page = fs::path(WORKBOOK_BINARY_DIR) / "book" / "html" / ("lesson_" + slug + ".html");
  std::error_code ec;
  if (fs::exists(page, ec)) return "xdg-open " + page.string();
  return fmt::format("chapters/{}/lesson.md (the book: cmake --build build/default --target book)", slug);
}

std::string result_line(const ChapterProgress& p) {
  std::string line = fmt::format("{}, {:g}/{}", p.status, p.points, p.max_points);
  if (p.learner_gbps) {
    line += fmt::format(", {:.0f} GB/s", *p.learner_gbps);
    if (p.bandwidth_ratio) {
      line += fmt::format(" ({:.0f}% of the reference; {:.0f}% needed)", 100 * *p.bandwidth_ratio,
                          100 * p.required_fraction);
    }
  }
  return line;
}

}  // namespace

std::string next_chapter(const std::string& chapters_dir, const workbook::Manifest& manifest) {
  const Progress p = load_progress(chapters_dir);
  for (const workbook::ChapterSpec& c : manifest.chapters) {
    const auto it = p.chapters.find(c.slug);
    if (it == p.chapters.end() || !it->second.status.is_done()) {
      return c.slug;  // a chapter this GPU cannot run (skipped: needs sm_90) is not next
    }
  }
  return "";
}

int show_status(const Options& opt, const workbook::Manifest& manifest) {
  const Progress p = load_progress(opt.chapters_dir);
  fmt::print("Progress in {} (the last grading of each chapter)\n\n", opt.chapters_dir);
  int done = 0;
  for (const workbook::ChapterSpec& c : manifest.chapters) {
    const auto it = p.chapters.find(c.slug);
    std::string state, result;
    // Untouched is "not started", whether or not the stub was graded (the first grader/grade grades
    // every stub).
    const fs::path file = fs::path(opt.chapters_dir) / c.slug / "kernel.cu";
    const std::optional<std::string> stub = pristine_stub(c.slug);
    std::error_code ec;
    const bool edited = fs::exists(file, ec) && stub && read_file(file) != *stub;
    if (it != p.chapters.end() && it->second.status == Status::passed) {
      state = paint("done", "32");
      ++done;
    } else if (edited) {
      state = paint("in progress", "33");
    } else {
      state = paint("not started", "2");
    }
    if (it != p.chapters.end()) {
      result = result_line(it->second) + "  " + it->second.date.substr(0, 16);
      std::replace(result.begin(), result.end(), 'T', ' ');
    }
    // Pad by the visible width: colour codes take no room on the terminal.
    const std::size_t visible = colour_wanted() ? state.size() - 9 : state.size();
    fmt::print("  {:<18} {}{}  {}\n", c.slug, state, std::string(visible < 12 ? 12 - visible : 0, ' '), result);
  }
  const std::string next = next_chapter(opt.chapters_dir, manifest);
  fmt::print("\n{} of {} chapters done.", done, manifest.chapters.size());
  if (next.empty()) {
    fmt::print(" Every chapter passed.\n");
  } else {
    fmt::print(" Next: {}: grader/grade watch {}   (a hint: grader/grade hint {})\n", next, next.substr(0, 2),
               next.substr(0, 2));
  }
  return code(Exit::ok);
}

int show_list(const workbook::Manifest& manifest) {
  for (const workbook::ChapterSpec& c : manifest.chapters) {
    fmt::print("{} {:<4} {}\n", paint(fmt::format("{:<18}", c.slug), "1"), c.version, c.title);
    fmt::print("     lesson: {}\n", lesson_page(c.slug));
  }
  return code(Exit::ok);
}

int show_hint(const Options& opt, const workbook::Manifest& manifest, const std::string& slug, bool all) {
  const workbook::ChapterSpec* spec = manifest.find(slug);
  const Progress p = load_progress(opt.chapters_dir);
  const auto seen = p.hints_shown.find(slug);
  const int shown = seen == p.hints_shown.end() ? 0 : seen->second;
  const int total = static_cast<int>(spec->steps.size());
  const int upto = all ? total : std::min(total, shown + 1);
  // One hint a call, the next one (the last one again once all were shown); --all: every one.
  for (int i = all ? 0 : std::max(upto - 1, 0); i < upto; ++i) {
    fmt::print("{} {}\n   (lesson: chapters/{}/lesson.md, \"{}\")\n",
               paint(fmt::format("Hint {}/{}:", i + 1, total), "1"), spec->steps[i].hint, slug, spec->steps[i].lesson);
  }
  if (upto < total) {
    fmt::print("\nAsk again for the next hint: grader/grade hint {}{}\n", slug.substr(0, 2),
               upto > 1 && !all ? fmt::format(" (the {} before: --all)", upto - 1 == 1 ? "one" : "ones") : "");
  } else {
    fmt::print("\nThat was the last hint. The lesson's \"What to write\" and the tests' messages say the rest.\n");
  }
  const std::string why = record_hints(opt.chapters_dir, slug, std::max(shown, upto));
  if (!why.empty()) fmt::print(stderr, "grader: {}\n", why);
  return code(Exit::ok);
}

int reset_chapter(const Options& opt, const workbook::Manifest& manifest, const std::string& slug, bool yes) {
  (void)manifest;
  const fs::path file = fs::path(opt.chapters_dir) / slug / "kernel.cu";
  const std::optional<std::string> stub = pristine_stub(slug);
  if (!stub) {
    fmt::print(stderr,
               "grader: the stub of {} is not in grader/stubs.json; take "
               "chapters/{}/kernel.cu from the project's repository\n",
               slug, slug);
    return code(Exit::cannot);
  }
  std::error_code ec;
  if (fs::exists(file, ec) && read_file(file) == *stub) {
    fmt::print("{} is already the stub.\n", file.string());
    return code(Exit::ok);
  }
  if (!yes) {
    if (!isatty(STDIN_FILENO)) {
      fmt::print(stderr, "grader: reset replaces {}; run it on a terminal to confirm, or add --yes\n", file.string());
      return code(Exit::cannot);
    }
    fmt::print("Replace {} with the stub? Your file is kept as a backup. [y/N] ", file.string());
    std::fflush(stdout);
    std::string answer;
    std::getline(std::cin, answer);
    if (answer != "y" && answer != "Y" && answer != "yes") {
      fmt::print("Nothing changed.\n");
      return code(Exit::ok);
    }
  }
  if (fs::exists(file, ec)) {
    const std::time_t now = std::time(nullptr);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
    const fs::path backup = file.parent_path() / fmt::format("kernel.cu.{}.bak", stamp);
    fs::copy_file(file, backup, fs::copy_options::overwrite_existing, ec);
    if (ec) {
      fmt::print(stderr, "grader: cannot keep a backup of {}: {}; nothing changed\n", file.string(), ec.message());
      return code(Exit::cannot);
    }
    fmt::print("Your file is kept as {}\n", backup.string());
  }
  fs::create_directories(file.parent_path(), ec);
  const std::string why = write_atomically(file.string(), *stub);
  if (!why.empty()) {
    fmt::print(stderr, "grader: {}\n", why);
    return code(Exit::cannot);
  }
  fmt::print("{} is the stub again.\n", file.string());
  return code(Exit::ok);
}

}  // namespace grader
