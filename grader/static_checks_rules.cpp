// The rules of the static checks, from the manifest's "trust" section and each chapter's "symbols"
// and "idea" (the chapters' order and given code from judge/manifest.cpp): load_rules.
#include "static_checks.hpp"

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
#include <string_view>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "judge/manifest.hpp"
#include "process.hpp"
#include "text.hpp"

#include "static_checks_detail.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace grader {

using namespace static_checks_detail;

namespace {

// ---------------------------------------------------------------------------------------------
// load_rules

[[noreturn]] void bad(const std::string& where, const std::string& what) {
  throw std::runtime_error(fmt::format("manifest: {}: {}", where, what));
}

// Its names by value, not by reference: a reference returned from a call given temporaries is what
// GCC 13's -Wdangling-reference warns of, though the object found lives in `obj`.
const json& field(const json& obj, std::string_view key, std::string_view where) {
  if (!obj.is_object()) bad(std::string(where), "expected an object");
  const auto it = obj.find(key);
  if (it == obj.end()) bad(std::string(where), fmt::format("missing \"{}\"", key));
  return *it;
}

std::string string_field(const json& obj, const std::string& key, const std::string& where) {
  const json& v = field(obj, key, where);
  if (!v.is_string() || v.get<std::string>().empty()) {
    bad(where + "." + key, "expected a non-empty string");
  }
  return v.get<std::string>();
}

std::vector<std::string> string_list(const json& v, const std::string& where) {
  if (!v.is_array()) bad(where, "expected a list of strings");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string() || v[i].get<std::string>().empty()) {
      bad(fmt::format("{}[{}]", where, i), "expected a non-empty string");
    }
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

IdeaPattern parse_idea(const json& v, const std::string& where) {
  if (!v.is_object()) bad(where, "expected an object");
  static const std::set<std::string> known = {"what", "sass", "after_last", "min_count", "symbol"};
  for (const auto& [key, value] : v.items()) {
    if (!known.count(key)) {
      bad(where, fmt::format("unknown pattern kind \"{}\" (known: what, sass, after_last, "
                             "min_count, symbol)",
                             key));
    }
  }
  IdeaPattern idea;
  idea.what = string_field(v, "what", where);
  const bool has_sass = v.contains("sass"), has_symbol = v.contains("symbol");
  if (has_sass == has_symbol) bad(where, "needs exactly one of \"sass\" and \"symbol\"");
  if (has_sass) {
    idea.sass = string_field(v, "sass", where);
    try {
      std::regex check(idea.sass);
    } catch (const std::regex_error& e) {
      bad(where + ".sass", fmt::format("not a regular expression: {}", e.what()));
    }
    if (v.contains("after_last")) {
      idea.after_last = string_field(v, "after_last", where);
      try {
        std::regex check(idea.after_last);
      } catch (const std::regex_error& e) {
        bad(where + ".after_last", fmt::format("not a regular expression: {}", e.what()));
      }
    }
    if (v.contains("min_count")) {
      const json& m = v.at("min_count");
      if (!m.is_number_integer() || m.get<int>() < 1) {
        bad(where + ".min_count", "expected an integer >= 1");
      }
      idea.min_count = m.get<int>();
    }
  } else {
    if (v.contains("after_last") || v.contains("min_count")) {
      bad(where, "\"after_last\" and \"min_count\" go with \"sass\", not \"symbol\"");
    }
    idea.symbol = string_field(v, "symbol", where);
  }
  return idea;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

Rules load_rules(const std::string& manifest_path) {
  // One parse: the chapters, their order and their given code as the harness reads them (and
  // checks them); from the document itself only what the static checks alone use: "trust",
  // "symbols" and "idea".
  std::ifstream in(manifest_path);
  if (!in) throw std::runtime_error(fmt::format("manifest: cannot read {}", manifest_path));
  json manifest;
  try {
    manifest = json::parse(in);
  } catch (const json::exception& e) {
    throw std::runtime_error(fmt::format("manifest: {} is not JSON: {}", manifest_path, e.what()));
  }
  const workbook::Manifest loaded = workbook::manifest_from_json(manifest, manifest_path);
  Rules rules;
  const json& trust = field(manifest, "trust", "manifest");
  const json& includes = field(trust, "refused_includes", "trust");
  if (!includes.is_array()) bad("trust.refused_includes", "expected a list");
  for (std::size_t i = 0; i < includes.size(); ++i) {
    const std::string where = fmt::format("trust.refused_includes[{}]", i);
    PathPattern p{string_field(includes[i], "pattern", where), string_field(includes[i], "why", where)};
    if (p.pattern.front() == '/' || p.pattern.find("..") != std::string::npos) {
      bad(where + ".pattern", "expected a path relative to an include root, without ..");
    }
    rules.refused_includes.push_back(std::move(p));
  }
  rules.allowed_symbols = string_list(field(trust, "allowed_symbols", "trust"), "trust.allowed_symbols");
  rules.allowed_definitions = string_list(field(trust, "allowed_definitions", "trust"), "trust.allowed_definitions");
  const json& reasons = field(trust, "refused_symbols", "trust");
  if (!reasons.is_array()) bad("trust.refused_symbols", "expected a list");
  for (std::size_t i = 0; i < reasons.size(); ++i) {
    const std::string where = fmt::format("trust.refused_symbols[{}]", i);
    rules.refused_symbols.push_back({string_list(field(reasons[i], "patterns", where), where + ".patterns"),
                                     string_field(reasons[i], "why", where)});
  }
  // manifest_from_json read the same list, in the same order: its slugs and given files are these.
  const json& chapters = field(manifest, "chapters", "manifest");
  std::vector<std::string> order;                            // slugs in the manifest's order
  std::map<std::string, std::vector<std::size_t>> given_to;  // given file -> the chapters' indices
  for (std::size_t i = 0; i < loaded.chapters.size(); ++i) {
    const std::string where = fmt::format("chapters[{}]", i);
    const std::string& slug = loaded.chapters[i].slug;
    ChapterRules chapter;
    chapter.symbols = string_list(field(chapters[i], "symbols", where + " (" + slug + ")"), where + ".symbols");
    if (chapters[i].contains("idea")) {
      const json& idea = chapters[i].at("idea");
      if (!idea.is_array()) bad(where + ".idea", "expected a list");
      for (std::size_t k = 0; k < idea.size(); ++k) {
        chapter.idea.push_back(parse_idea(idea[k], fmt::format("{}.idea[{}]", where, k)));
      }
    }
    chapter.given = loaded.chapters[i].given;
    for (const std::string& file : chapter.given) given_to[file].push_back(order.size());
    order.push_back(slug);
    rules.chapters[slug] = std::move(chapter);
  }
  // A file given to chapters that begin with a run of two or more consecutive ones is the answer of
  // the chapter before the run (the block pass: chapter 07's, given to 08-15 and 17); a file given
  // otherwise (to one chapter) is its scaffolding.
  for (const auto& [file, chapters] : given_to) {
    const std::size_t first = chapters.front();
    const bool run = chapters.size() >= 2 && chapters[1] == first + 1;
    std::string listed;
    for (std::size_t i : chapters) listed += (listed.empty() ? "" : ", ") + order[i];
    // The chapters as runs: "08_host_finish to 15_reproducible and 17_multi_gpu".
    std::vector<std::string> runs;
    for (std::size_t k = 0; k < chapters.size();) {
      std::size_t end = k;
      while (end + 1 < chapters.size() && chapters[end + 1] == chapters[end] + 1) ++end;
      runs.push_back(end > k ? order[chapters[k]] + " to " + order[chapters[end]] : order[chapters[k]]);
      k = end + 1;
    }
    std::string spans;
    for (std::size_t k = 0; k < runs.size(); ++k) {
      spans += (k == 0 ? "" : k + 1 == runs.size() ? " and " : ", ") + runs[k];
    }
    rules.given_files[file] = first > 0 && run
                                  ? fmt::format(
                                        "{} is chapter {}'s answer; chapters {} get it as given code "
                                        "(\"given\" in grader/manifest.json), earlier chapters write their own",
                                        file, order[first - 1], spans)
                                  : fmt::format(
                                        "{} is given code only to the chapters whose entry in grader/manifest.json "
                                        "lists it under \"given\" ({})",
                                        file, listed);
  }
  return rules;
}

}  // namespace grader
