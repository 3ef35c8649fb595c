// What a chapter's kernel.cu includes, as the compiler's own dependency output lists it, against the
// rules: check_includes, and the host compiler's include folders.
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
// Includes

struct IncludePolicy {
  std::vector<fs::path> roots;                    // canonical, longest first
  std::set<fs::path> exact;                       // canonical files allowed by name
  std::map<fs::path, std::string> refused_given;  // other chapters' given files -> why not here
  fs::path repo;                                  // for messages
  fs::path submission;                            // for messages: paths as the student knows them
};

IncludePolicy include_policy(const Toolchain& tc, const Rules& rules, const std::string& slug) {
  IncludePolicy policy;
  for (const std::string& root : tc.include_roots) {
    if (!root.empty()) policy.roots.push_back(canonical_or_normal(fs::absolute(root)));
  }
  std::sort(policy.roots.begin(), policy.roots.end(),
            [](const fs::path& a, const fs::path& b) { return a.string().size() > b.string().size(); });
  const fs::path harness = canonical_or_normal(fs::absolute(tc.harness_dir));
  policy.exact.insert(harness / "workbook" / "chapter.cuh");
  policy.exact.insert(harness / "workbook" / "contract.hpp");
  // Given code: the files the chapter's manifest entry lists under "given". Any other chapter's
  // given file is an earlier chapter's answer and is refused with that reason (the references
  // too: each is a file a learner could hand in).
  const ChapterRules& chapter = chapter_rules(rules, slug);
  for (const auto& [file, why] : rules.given_files) {
    const fs::path path = canonical_or_normal(harness / file);
    const bool given = std::find(chapter.given.begin(), chapter.given.end(), file) != chapter.given.end();
    if (given) {
      policy.exact.insert(path);
    } else {
      policy.refused_given[path] = why;
    }
  }
  policy.repo = harness.parent_path();  // <repo>/harness
  if (!tc.submission_dir.empty()) policy.submission = canonical_or_normal(fs::absolute(tc.submission_dir));
  return policy;
}

// Whether the components of `rel` match `pattern` ("cub/": a directory named cub anywhere;
// "cooperative_groups/reduce.h": those last components; `*` within a component).
bool path_matches(const fs::path& rel, const std::string& pattern) {
  const bool directory = !pattern.empty() && pattern.back() == '/';
  std::vector<std::string> want;
  for (const std::string& part : split(pattern, '/')) {
    if (!part.empty()) want.push_back(part);
  }
  std::vector<std::string> have;
  for (const fs::path& part : rel) have.push_back(part.string());
  if (want.empty() || want.size() > have.size()) return false;
  for (std::size_t start = 0; start + want.size() <= have.size(); ++start) {
    const std::size_t end = start + want.size();
    if (directory ? end >= have.size() : end != have.size()) continue;
    bool all = true;
    for (std::size_t k = 0; k < want.size() && all; ++k) all = glob_match(want[k], have[start + k]);
    if (all) return true;
  }
  return false;
}

std::string shown_path(const IncludePolicy& policy, const fs::path& path) {
  fs::path rel;
  if (!policy.submission.empty() && is_under(path, policy.submission, &rel) && !rel.empty()) {
    return printable(rel.generic_string());
  }
  if (!policy.repo.empty() && is_under(path, policy.repo, &rel) && !rel.empty()) {
    return printable(rel.generic_string());
  }
  return printable(path.generic_string());
}

const char* const only_headers =
    "a chapter may include only system headers, CUDA toolkit headers, workbook/chapter.cuh and "
    "the given code its entry in grader/manifest.json lists";

// One included file: "" when allowed, else the refusal's reason. Library refusals are keyed by
// pattern so that a library's hundreds of headers give one line.
struct Verdict {
  std::string reason;
  std::string key;
  std::string shown;  // the path as the reason names it
};

Verdict judge_include(const IncludePolicy& policy, const Rules& rules, const std::string& file, bool missing) {
  fs::path raw(file);
  if (raw.is_relative()) raw = fs::current_path() / raw;  // nvcc ran in this directory
  const fs::path lexical = raw.lexically_normal();
  for (const char* special : {"/proc", "/dev", "/sys"}) {
    if (is_under(lexical, special)) {
      return {fmt::format("includes {}: {}", printable(lexical.generic_string()), only_headers), lexical.string(), ""};
    }
  }
  const fs::path path = canonical_or_normal(lexical);
  if (policy.exact.count(path)) return {};
  if (const auto given = policy.refused_given.find(path); given != policy.refused_given.end()) {
    return {fmt::format("includes {}: {}", shown_path(policy, path), given->second), path.string(),
            shown_path(policy, path)};
  }
  std::error_code ec;
  const bool regular = missing || fs::is_regular_file(path, ec);
  for (const fs::path& root : policy.roots) {
    fs::path rel;
    if (!regular || !is_under(path, root, &rel) || rel.empty()) continue;
    for (const PathPattern& refused : rules.refused_includes) {
      if (path_matches(rel, refused.pattern)) {
        return {fmt::format("includes {} ({})", printable(rel.generic_string()), refused.why),
                "pattern:" + refused.pattern, rel.generic_string()};
      }
    }
    return {};
  }
  return {fmt::format("includes {}: {}", shown_path(policy, path), only_headers), path.string(), ""};
}

// The files of a make rule written by `-M -MT deps -MF file`.
std::vector<std::string> parse_make_deps(const std::string& text) {
  std::vector<std::string> files;
  std::string current;
  bool target_done = false;
  auto flush = [&] {
    if (current.empty()) return;
    if (!target_done) {
      if (current.back() == ':') target_done = true;  // "deps:"
    } else if (current != ":") {
      files.push_back(current);
    }
    current.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      const char next = text[i + 1];
      if (next == '\n') {
        ++i;
        flush();
        continue;
      }
      if (next == '\r' && i + 2 < text.size() && text[i + 2] == '\n') {
        i += 2;
        flush();
        continue;
      }
      if (next == ' ' || next == '#' || next == '\\') {
        current += next;
        ++i;
        continue;
      }
      current += c;
    } else if (c == '$' && i + 1 < text.size() && text[i + 1] == '$') {
      current += '$';
      ++i;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      flush();
    } else {
      current += c;
    }
  }
  flush();
  return files;
}

// The files named by the preprocessor's line markers (`# 12 "file" 2`), for a failed run.
std::vector<std::string> parse_line_markers(const std::string& text) {
  std::vector<std::string> files;
  std::set<std::string> seen;
  for (const std::string& line : lines_of(text)) {
    if (line.size() < 5 || line[0] != '#' || line[1] != ' ') continue;
    std::size_t i = 2;
    while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
    if (i == 2 || i + 1 >= line.size() || line[i] != ' ' || line[i + 1] != '"') continue;
    std::string name;
    bool closed = false;
    for (i += 2; i < line.size(); ++i) {
      if (line[i] == '\\' && i + 1 < line.size()) {
        const char next = line[i + 1];
        if (next >= '0' && next <= '7') {
          int value = 0, digits = 0;
          while (digits < 3 && i + 1 < line.size() && line[i + 1] >= '0' && line[i + 1] <= '7') {
            value = value * 8 + (line[++i] - '0');
            ++digits;
          }
          name += static_cast<char>(value);
        } else {
          name += next;
          ++i;
        }
      } else if (line[i] == '"') {
        closed = true;
        break;
      } else {
        name += line[i];
      }
    }
    if (!closed || name.empty() || name.front() == '<') continue;  // <built-in>, <command-line>
    if (seen.insert(name).second) files.push_back(name);
  }
  return files;
}

bool ran_out_of_memory(const std::string& log) {
  return log.find("out of memory") != std::string::npos || log.find("memory exhausted") != std::string::npos ||
         log.find("bad_alloc") != std::string::npos || log.find("Cannot allocate memory") != std::string::npos;
}

std::string not_finished(double timeout_s) {
  return fmt::format(
      "preprocessing did not finish within {:g} s: does it include a device or a pipe (such as "
      "/dev/zero)?",
      timeout_s);
}

const char* const out_of_memory =
    "preprocessing did not finish: it ran out of memory (does it include a device such as "
    "/dev/zero?)";

}  // namespace

std::vector<Refusal> check_includes(const Toolchain& tc, const Rules& rules, const std::string& slug,
                                    const std::string& source) {
  const fs::path work = work_dir_of(tc);
  const fs::path deps = work / (slug + ".includes.d");
  const fs::path log = work / (slug + ".includes.log");
  const fs::path markers = work / (slug + ".includes.ii");
  remove_quietly(deps);

  std::vector<std::string> args = {tc.nvcc, "-M", "-MT", "deps", "-MF", deps.string(), "-x", "cu"};
  args.insert(args.end(), tc.compile_flags.begin(), tc.compile_flags.end());
  args.push_back(source);
  const ProcessResult r = run_process(memory_limited(tc, args), log.string(), tc.preprocess_timeout_s);
  if (r.timed_out) {
    remove_quietly(deps);
    return {{"preprocess", not_finished(tc.preprocess_timeout_s)}};
  }
  const std::string log_text = read_text(log, std::size_t{1} << 20);
  if (r.signal != 0 || ran_out_of_memory(log_text)) {
    remove_quietly(deps);
    return {{"preprocess", out_of_memory}};
  }

  std::vector<std::string> files;
  std::vector<std::pair<std::string, std::string>> missing;  // (includer, include as written)
  if (r.exit_code == 0) {
    files = parse_make_deps(read_text(deps));
  } else {
    // The compile will fail and report it. What did the preprocessor read before it stopped?
    // Its line markers say; the output holds the files' text, so it is deleted at once.
    static const std::regex fatal_re(R"(^(.*):[0-9]+:[0-9]+: fatal error: (.*): No such file or directory$)");
    for (const std::string& line : lines_of(log_text)) {
      std::smatch m;
      if (std::regex_match(line, m, fatal_re)) missing.emplace_back(m[1].str(), m[2].str());
    }
    std::vector<std::string> e_args = {tc.nvcc, "-E", "-x", "cu"};
    e_args.insert(e_args.end(), tc.compile_flags.begin(), tc.compile_flags.end());
    e_args.push_back(source);
    const ProcessResult e = run_process(memory_limited(tc, e_args), markers.string(), tc.preprocess_timeout_s);
    const std::string text = read_text(markers);
    remove_quietly(markers);
    if (e.timed_out) return {{"preprocess", not_finished(tc.preprocess_timeout_s)}};
    if (e.signal != 0) return {{"preprocess", out_of_memory}};
    files = parse_line_markers(text);
  }
  remove_quietly(deps);

  const IncludePolicy policy = include_policy(tc, rules, slug);
  const fs::path source_path = canonical_or_normal(fs::absolute(source));
  // One refusal per file, and one per library pattern, naming the library header the source
  // itself names if it is among them (cub/cub.cuh rather than a file that one includes), else
  // the shallowest. The source's text only picks the name shown; the decision is made above.
  const std::string source_text = read_text(source, std::size_t{1} << 20);
  auto named_in_source = [&](const std::string& rel) {
    for (std::size_t at = 0; at != std::string::npos; at = rel.find('/', at + 1)) {
      const std::string tail = rel.substr(at == 0 ? 0 : at + 1);
      for (const char close : {'>', '"'}) {
        if (source_text.find(tail + close) != std::string::npos) return true;
      }
    }
    return false;
  };
  std::vector<Refusal> refusals;
  std::map<std::string, std::pair<std::size_t, int>> by_key;  // key -> (refusal, depth)
  auto add = [&](const Verdict& v, int depth = 0) {
    if (v.reason.empty()) return;
    const auto it = by_key.find(v.key);
    if (it == by_key.end()) {
      by_key[v.key] = {refusals.size(), depth};
      refusals.push_back({"include", v.reason});
    } else if (depth < it->second.second) {
      refusals[it->second.first].reason = v.reason;
      it->second.second = depth;
    }
  };
  for (const std::string& file : files) {
    fs::path p(file);
    if (canonical_or_normal(fs::absolute(p)) == source_path) continue;
    const Verdict v = judge_include(policy, rules, file, false);
    add(v, named_in_source(v.shown) ? -1 : static_cast<int>(std::count(v.shown.begin(), v.shown.end(), '/')));
  }
  // A missing file is the compiler's to report, unless its path alone puts it out of bounds.
  for (const auto& [includer, written] : missing) {
    const fs::path spelled(written);
    bool has_parent = false;
    for (const fs::path& part : spelled) has_parent = has_parent || part == "..";
    if (spelled.is_absolute()) {
      add(judge_include(policy, rules, written, true));
    } else if (has_parent) {
      add(judge_include(policy, rules, (fs::path(includer).parent_path() / spelled).string(), true));
    }
  }
  // The log may quote lines of a refused file: keep no copy of it.
  if (!refusals.empty()) remove_quietly(log);
  return refusals;
}

std::vector<std::string> host_compiler_include_dirs(const std::string& nvcc, const std::string& work_dir) {
  const std::string log = (fs::path(work_dir) / "host-include-dirs.log").string();
  const ProcessResult r =
      run_process({nvcc, "-x", "cu", "-E", "/dev/null", "-o", "/dev/null", "-Xcompiler", "-v"}, log, 60);
  std::vector<std::string> dirs;
  if (r.timed_out || r.exit_code != 0) return dirs;
  std::ifstream in(log);
  bool listing = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#include <...> search starts here:", 0) == 0) {
      listing = true;
    } else if (line.rfind("End of search list.", 0) == 0) {
      listing = false;
    } else if (listing && !line.empty() && line[0] == ' ') {
      std::string dir = line.substr(line.find_first_not_of(' '));
      if (const std::size_t note = dir.find(" ("); note != std::string::npos)
        dir.resize(note);  // "(framework directory)"
      dirs.push_back(dir);
    }
  }
  return dirs;
}

}  // namespace grader
