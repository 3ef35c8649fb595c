#include "submissions.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "process.hpp"
#include "report.hpp"
#include "text.hpp"

namespace fs = std::filesystem;

namespace grader {
namespace {

constexpr const char* kArchiveSuffixes[] = {".tar.gz", ".tgz", ".zip", ".tar"};
constexpr double kUnpackTimeout = 120;

struct Fnv {
  std::uint64_t h = 1469598103934665603ull;
  void add(const char* data, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      h ^= static_cast<unsigned char>(data[i]);
      h *= 1099511628211ull;
    }
  }
  void add(const std::string& s) {
    add(s.data(), s.size());
    add("\0", 1);
  }
  bool add_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    char buf[65536];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) add(buf, static_cast<std::size_t>(in.gcount()));
    return true;
  }
  std::string hex() const { return fmt::format("{:016x}", h); }
};

std::string archive_suffix(const std::string& name) {
  for (const char* suffix : kArchiveSuffixes) {
    const std::string s = suffix;
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) return s;
  }
  return "";
}

bool holds_a_chapter(const fs::path& dir, const workbook::Manifest& manifest) {
  std::error_code ec;
  for (const workbook::ChapterSpec& c : manifest.chapters) {
    if (fs::is_directory(dir / c.slug, ec) && !fs::is_symlink(dir / c.slug, ec)) return true;
  }
  return false;
}

}  // namespace

std::string safe_id(const std::string& name) {
  std::string id;
  for (const char c : name) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' || c == '@';
    id += keep ? c : '_';
  }
  if (id.empty() || id[0] == '.') id = "_" + id;
  return id.substr(0, 128);
}

void name_submission(Submission& s, const std::string& given) {
  s.id = safe_id(given);
  s.name = visible_line(given, 256);  // a file name may hold anything but NUL and '/'
}

std::vector<Submission> find_submissions(const std::string& dir, const workbook::Manifest& manifest,
                                         std::vector<std::string>* ignored) {
  std::vector<Submission> found;
  std::error_code ec;
  std::vector<fs::path> entries;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::end(it); it.increment(ec)) {
    entries.push_back(it->path());
  }
  std::sort(entries.begin(), entries.end());
  std::map<std::string, int> taken;
  for (const fs::path& path : entries) {
    const std::string name = path.filename().string();
    if (name.empty() || name[0] == '.') continue;
    Submission s;
    s.source = path.string();
    const std::string suffix = archive_suffix(name);
    if (fs::is_symlink(path, ec)) {
      if (ignored) ignored->push_back(name + ": a symbolic link (copy the submission itself into the folder)");
      continue;
    }
    if (fs::is_directory(path, ec)) {
      name_submission(s, name);
      const std::string tree = locate_chapters(path.string(), manifest);
      s.fingerprint = tree.empty() ? "none" : tree_fingerprint(tree, manifest);
    } else if (fs::is_regular_file(path, ec) && !suffix.empty()) {
      name_submission(s, name.substr(0, name.size() - suffix.size()));
      s.archive = true;
      s.fingerprint = file_fingerprint(path.string());
    } else {
      if (ignored) ignored->push_back(name + ": neither a folder nor a .zip, .tar.gz, .tgz or .tar file");
      continue;
    }
    // Two entries with one id (alice/ and alice.zip): the later gets a suffix.
    const int n = taken[s.id]++;
    if (n > 0) s.id += fmt::format("-{}", n + 1);
    found.push_back(std::move(s));
  }
  std::sort(found.begin(), found.end(), [](const Submission& a, const Submission& b) { return a.id < b.id; });
  return found;
}

std::vector<Submission> shard_of(const std::vector<Submission>& all, int k, int n) {
  std::vector<Submission> mine;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (static_cast<int>(i % static_cast<std::size_t>(n)) == k - 1) mine.push_back(all[i]);
  }
  return mine;
}

std::string locate_chapters(const std::string& dir, const workbook::Manifest& manifest) {
  fs::path at = dir;
  std::error_code ec;
  for (int depth = 0; depth < 4; ++depth) {
    if (holds_a_chapter(at, manifest)) return at.string();
    if (holds_a_chapter(at / "chapters", manifest)) return (at / "chapters").string();
    // Descend only into a lone folder (hidden entries and macOS leftovers aside).
    std::vector<fs::path> folders;
    for (auto it = fs::directory_iterator(at, ec); !ec && it != fs::end(it); it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.empty() || name[0] == '.' || name == "__MACOSX") continue;
      if (it->is_directory(ec) && !it->is_symlink(ec)) folders.push_back(it->path());
    }
    if (folders.size() != 1) return "";
    at = folders.front();
  }
  return "";
}

std::string unpack(const std::string& archive, const std::string& dest, const std::string& log) {
  const std::string script = std::string(WORKBOOK_SOURCE_DIR) + "/grader/unpack.py";
  // Only the kernel.cu files are written: a build folder or binaries beside them are never
  // unpacked (nor counted against the size limits).
  const ProcessResult r = run_process({"python3", script, archive, dest, "--only", "kernel.cu"}, log, kUnpackTimeout);
  if (r.interrupted) return "interrupted";
  if (r.timed_out) return fmt::format("unpacking took longer than {:.0f} s", kUnpackTimeout);
  if (r.exit_code == 127) return "python3 is needed to unpack archives and was not found";
  if (r.exit_code != 0 || r.signal) {
    std::string why = tail_of(log, 3);
    while (!why.empty() && why.back() == '\n') why.pop_back();
    return why.empty() ? fmt::format("the archive could not be unpacked (status {})", r.exit_code) : why;
  }
  return "";
}

std::string tree_fingerprint(const std::string& chapters_dir, const workbook::Manifest& manifest) {
  Fnv f;
  for (const workbook::ChapterSpec& c : manifest.chapters) {
    const fs::path source = fs::path(chapters_dir) / c.slug / "kernel.cu";
    f.add(c.slug);
    std::error_code ec;
    if (fs::is_regular_file(source, ec) && !fs::is_symlink(source, ec)) {
      f.add_file(source);
    } else {
      f.add("(none)");
    }
  }
  return f.hex();
}

bool report_to_keep(const std::string& path, const Submission& s, bool sanitized,
                    const std::vector<std::string>& slugs) {
  std::ifstream in(path);
  if (!in) return false;
  try {
    const ReportDocument doc = nlohmann::json::parse(in).get<ReportDocument>();
    if (doc.schema != kReportSchema || doc.grader_version != WORKBOOK_GRADER_VERSION || !doc.complete ||
        doc.fingerprint != s.fingerprint || doc.sanitized != sanitized || doc.chapters.size() != slugs.size()) {
      return false;
    }
    for (std::size_t i = 0; i < slugs.size(); ++i) {
      if (doc.chapters[i].slug != slugs[i]) return false;
    }
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

std::string file_fingerprint(const std::string& path) {
  Fnv f;
  if (!f.add_file(path)) return "unreadable";
  return f.hex();
}

}  // namespace grader
