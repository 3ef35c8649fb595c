// Helpers the grader's static checks share (static_checks_rules.cpp, static_checks_includes.cpp,
// static_checks_objects.cpp): bounded file reads, printable excerpts, paths, the tools' limits.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "judge/manifest.hpp"
#include "process.hpp"
#include "text.hpp"

#include "static_checks.hpp"

namespace grader::static_checks_detail {

namespace fs = std::filesystem;

inline std::string read_text(const fs::path& path, std::size_t max_bytes = std::size_t{64} << 20) {
  std::ifstream in(path, std::ios::binary);
  std::string text;
  if (!in) return text;
  text.resize(max_bytes);
  in.read(text.data(), static_cast<std::streamsize>(max_bytes));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
  }
  return lines;
}

// A name or path for a one-line message: printable ASCII only, bounded.
inline std::string printable(const std::string& s, std::size_t max = 160) {
  std::string out;
  for (unsigned char c : s) {
    if (out.size() >= max) {
      out += "...";
      break;
    }
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  return out;
}

inline void remove_quietly(const fs::path& path) {
  std::error_code ec;
  fs::remove(path, ec);
}

inline fs::path canonical_or_normal(const fs::path& path) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(path, ec);
  return ec ? path.lexically_normal() : c;
}

// Whether `path` is `root` or lies below it (both canonical); `rel` gets the rest.
inline bool is_under(const fs::path& path, const fs::path& root, fs::path* rel = nullptr) {
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p) {
    if (r->empty()) continue;  // a trailing separator
    if (p == path.end() || *p != *r) return false;
  }
  if (rel) {
    fs::path rest;
    for (; p != path.end(); ++p) rest /= *p;
    *rel = rest;
  }
  return true;
}

inline fs::path work_dir_of(const Toolchain& tc) {
  fs::path dir = tc.work_dir.empty() ? fs::temp_directory_path() : fs::path(tc.work_dir);
  fs::create_directories(dir);
  return dir;
}

// The tool with an address-space limit, so that `#include "/dev/zero"` ends soon instead of
// filling the machine's memory.
inline std::vector<std::string> memory_limited(const Toolchain& tc, std::vector<std::string> argv) {
  if (tc.preprocess_memory_mib <= 0) return argv;
  std::vector<std::string> wrapped = {
      "/bin/sh", "-c", fmt::format("ulimit -v {} 2>/dev/null; exec \"$0\" \"$@\"", tc.preprocess_memory_mib * 1024)};
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  return wrapped;
}

inline const ChapterRules& chapter_rules(const Rules& rules, const std::string& slug) {
  static const ChapterRules none;
  const auto it = rules.chapters.find(slug);
  return it == rules.chapters.end() ? none : it->second;
}

}  // namespace grader::static_checks_detail
