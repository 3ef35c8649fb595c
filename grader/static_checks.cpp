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

#include "process.hpp"
#include "text.hpp"
#include "workbook/manifest.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace grader {

bool glob_match(const std::string& pattern, const std::string& text) {
  std::size_t p = 0, t = 0, star = std::string::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

namespace {

// ---------------------------------------------------------------------------------------------
// Small helpers

std::string read_text(const fs::path& path, std::size_t max_bytes = std::size_t{64} << 20) {
  std::ifstream in(path, std::ios::binary);
  std::string text;
  if (!in) return text;
  text.resize(max_bytes);
  in.read(text.data(), static_cast<std::streamsize>(max_bytes));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
  }
  return lines;
}

// A name or path for a one-line message: printable ASCII only, bounded.
std::string printable(const std::string& s, std::size_t max = 160) {
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

void remove_quietly(const fs::path& path) {
  std::error_code ec;
  fs::remove(path, ec);
}

fs::path canonical_or_normal(const fs::path& path) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(path, ec);
  return ec ? path.lexically_normal() : c;
}

// Whether `path` is `root` or lies below it (both canonical); `rel` gets the rest.
bool is_under(const fs::path& path, const fs::path& root, fs::path* rel = nullptr) {
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

fs::path work_dir_of(const Toolchain& tc) {
  fs::path dir = tc.work_dir.empty() ? fs::temp_directory_path() : fs::path(tc.work_dir);
  fs::create_directories(dir);
  return dir;
}

// The tool with an address-space limit, so that `#include "/dev/zero"` ends soon instead of
// filling the machine's memory.
std::vector<std::string> memory_limited(const Toolchain& tc, std::vector<std::string> argv) {
  if (tc.preprocess_memory_mib <= 0) return argv;
  std::vector<std::string> wrapped = {
      "/bin/sh", "-c",
      fmt::format("ulimit -v {} 2>/dev/null; exec \"$0\" \"$@\"", tc.preprocess_memory_mib * 1024)};
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  return wrapped;
}

const ChapterRules& chapter_rules(const Rules& rules, const std::string& slug) {
  static const ChapterRules none;
  const auto it = rules.chapters.find(slug);
  return it == rules.chapters.end() ? none : it->second;
}

// ---------------------------------------------------------------------------------------------
// load_rules

[[noreturn]] void bad(const std::string& where, const std::string& what) {
  throw std::runtime_error(fmt::format("manifest: {}: {}", where, what));
}

const json& field(const json& obj, const std::string& key, const std::string& where) {
  if (!obj.is_object()) bad(where, "expected an object");
  const auto it = obj.find(key);
  if (it == obj.end()) bad(where, fmt::format("missing \"{}\"", key));
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

// ---------------------------------------------------------------------------------------------
// Includes

struct IncludePolicy {
  std::vector<fs::path> roots;  // canonical, longest first
  std::set<fs::path> exact;     // canonical files allowed by name
  std::map<fs::path, std::string> refused_given;  // other chapters' given files -> why not here
  fs::path repo;                // for messages
  fs::path submission;          // for messages: paths as the student knows them
};

IncludePolicy include_policy(const Toolchain& tc, const Rules& rules, const std::string& slug) {
  IncludePolicy policy;
  for (const std::string& root : tc.include_roots) {
    if (!root.empty()) policy.roots.push_back(canonical_or_normal(fs::absolute(root)));
  }
  std::sort(policy.roots.begin(), policy.roots.end(), [](const fs::path& a, const fs::path& b) {
    return a.string().size() > b.string().size();
  });
  const fs::path harness = canonical_or_normal(fs::absolute(tc.harness_dir));
  policy.exact.insert(harness / "workbook" / "chapter.cuh");
  policy.exact.insert(harness / "workbook" / "contract.hpp");
  // Given code: the files the chapter's manifest entry lists under "given". Any other chapter's
  // given file is an earlier chapter's answer and is refused with that reason (the references
  // too: each is a file a learner could hand in).
  const ChapterRules& chapter = chapter_rules(rules, slug);
  for (const auto& [file, why] : rules.given_files) {
    const fs::path path = canonical_or_normal(harness / file);
    const bool given =
        std::find(chapter.given.begin(), chapter.given.end(), file) != chapter.given.end();
    if (given) {
      policy.exact.insert(path);
    } else {
      policy.refused_given[path] = why;
    }
  }
  policy.repo = harness.parent_path().parent_path();
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

Verdict judge_include(const IncludePolicy& policy, const Rules& rules, const std::string& file,
                      bool missing) {
  fs::path raw(file);
  if (raw.is_relative()) raw = fs::current_path() / raw;  // nvcc ran in this directory
  const fs::path lexical = raw.lexically_normal();
  for (const char* special : {"/proc", "/dev", "/sys"}) {
    if (is_under(lexical, special)) {
      return {fmt::format("includes {}: {}", printable(lexical.generic_string()), only_headers),
              lexical.string()};
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
  return {fmt::format("includes {}: {}", shown_path(policy, path), only_headers), path.string()};
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
  return log.find("out of memory") != std::string::npos ||
         log.find("memory exhausted") != std::string::npos ||
         log.find("bad_alloc") != std::string::npos ||
         log.find("Cannot allocate memory") != std::string::npos;
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

// ---------------------------------------------------------------------------------------------
// Objects

struct Symbol {
  char type;
  bool undefined;
  std::string name;  // demangled
};

std::vector<Symbol> read_symbols(const Toolchain& tc, const std::string& object,
                                 const fs::path& log) {
  const ProcessResult r = run_process({tc.nm, "-C", "-p", object}, log.string(), tc.tool_timeout_s);
  if (r.timed_out || r.signal != 0 || r.exit_code != 0) {
    throw std::runtime_error(fmt::format("nm could not read {} (see {})", object, log.string()));
  }
  static const std::regex line_re(R"(^([0-9a-fA-F]+| +) ([A-Za-z?-]) (.+)$)");
  std::vector<Symbol> symbols;
  for (const std::string& line : lines_of(read_text(log))) {
    std::smatch m;
    if (!std::regex_match(line, m, line_re)) continue;
    const bool no_value = m[1].str().find_first_not_of(' ') == std::string::npos;
    const char type = m[2].str()[0];
    const bool undefined = type == 'U' || ((type == 'w' || type == 'v') && no_value);
    symbols.push_back({type, undefined, m[3].str()});
  }
  return symbols;
}

struct Instruction {
  std::string mnemonic;
  std::string operands;
};

struct Function {
  std::string name;
  std::vector<Instruction> instructions;
  std::vector<std::string> relocations;  // target symbols
};

std::vector<Function> disassemble(const Toolchain& tc, const std::string& object,
                                  const fs::path& log) {
  const ProcessResult r = run_process({tc.objdump, "-dr", "-C", "--no-show-raw-insn", object},
                                      log.string(), tc.tool_timeout_s);
  if (r.timed_out || r.signal != 0 || r.exit_code != 0) {
    throw std::runtime_error(fmt::format("objdump could not read {} (see {})", object, log.string()));
  }
  static const std::regex header_re(R"(^[0-9a-fA-F]+ <(.*)>:$)");
  static const std::regex reloc_re(R"(^\s+[0-9a-fA-F]+: R_\w+\s+(\S+?)(?:[-+]0x[0-9a-fA-F]+)?$)");
  static const std::regex insn_re(R"(^\s+[0-9a-fA-F]+:\s+(.*)$)");
  static const std::set<std::string> prefixes = {"lock",  "rep",    "repz", "repnz", "repe",
                                                 "repne", "data16", "cs",   "ds",    "es",
                                                 "fs",    "gs",     "ss",   "notrack", "bnd",
                                                 "addr32"};
  std::vector<Function> functions;
  functions.push_back({"(no symbol)", {}, {}});
  for (const std::string& line : lines_of(read_text(log))) {
    std::smatch m;
    if (std::regex_match(line, m, header_re)) {
      functions.push_back({m[1].str(), {}, {}});
    } else if (std::regex_match(line, m, reloc_re)) {
      functions.back().relocations.push_back(m[1].str());
    } else if (std::regex_match(line, m, insn_re)) {
      std::istringstream words(m[1].str());
      std::string word;
      Instruction insn;
      while (words >> word) {
        if (prefixes.count(word) || word.rfind("rex", 0) == 0) continue;
        insn.mnemonic = word;
        break;
      }
      std::getline(words, insn.operands);
      insn.operands.erase(0, insn.operands.find_first_not_of(" \t"));
      if (!insn.mnemonic.empty()) functions.back().instructions.push_back(insn);
    }
  }
  return functions;
}

bool is_padding(const Instruction& insn) {
  return insn.mnemonic.rfind("nop", 0) == 0 || insn.mnemonic == "xchg" || insn.mnemonic == "int3" ||
         insn.mnemonic == "(bad)";
}

// nvcc replaces the host side of a __device__ function by `{ int volatile ___ = 1; ::exit(___); }`,
// so objects of correct chapters reference exit(). A function of that shape can only ever call
// exit(1): it moves the stack, stores and loads the constant 1, and calls exit, nothing else.
bool is_device_function_host_stub(const Function& f, const std::string& callee) {
  int calls = 0;
  for (const std::string& target : f.relocations) {
    if (target != callee) return false;
  }
  static const std::set<std::string> moves = {"sub", "add", "push", "pop", "mov", "movl",
                                              "movq", "endbr64"};
  for (const Instruction& insn : f.instructions) {
    if (is_padding(insn)) continue;
    if (insn.mnemonic == "call" || insn.mnemonic == "jmp") {
      ++calls;
      continue;
    }
    if (!moves.count(insn.mnemonic)) return false;
    const std::size_t dollar = insn.operands.find('$');
    if (dollar != std::string::npos) {
      const bool one = insn.operands.compare(dollar, 5, "$0x1,") == 0;
      const bool stack = (insn.mnemonic == "sub" || insn.mnemonic == "add") &&
                         insn.operands.size() >= 5 &&
                         insn.operands.compare(insn.operands.size() - 5, 5, ",%rsp") == 0;
      if (!one && !stack) return false;
    }
  }
  return calls == 1 && f.relocations.size() == 1;
}

// The machine-code checks read the host's own instruction set: the grader builds chapters for the
// machine it runs on. x86-64 is checked in full. On AArch64 (a GH200's Grace) the system-call
// check looks for `svc`; the shape of nvcc's exit() stubs is known only for x86-64, so there a
// chapter's reference to exit() is let through (the runner's exit ends only the runner, which the
// judge reports as a failure): an honest chapter is never refused for the host's instruction set.
#if defined(__x86_64__)
constexpr bool kKnowsExitStubs = true;
#else
constexpr bool kKnowsExitStubs = false;
#endif

bool is_system_call(const Instruction& insn) {
#if defined(__aarch64__)
  return insn.mnemonic == "svc" || insn.mnemonic == "hvc" || insn.mnemonic == "smc";
#else
  if (insn.mnemonic == "syscall" || insn.mnemonic == "sysenter") return true;
  return insn.mnemonic == "int" && insn.operands.rfind("$0x80", 0) == 0;
#endif
}

// Data symbols are named bare; functions get "()" when their name is a plain C identifier.
std::string shown_symbol(const std::string& name) {
  static const std::set<std::string> data = {
      "environ", "__environ", "program_invocation_name", "program_invocation_short_name",
      "stdin",   "stdout",    "stderr",                  "_IO_2_1_stdout_",
      "_IO_2_1_stderr_", "__libc_argv", "__libc_argc", "optarg", "__dso_handle"};
  const std::string shown = printable(name);
  const bool identifier =
      !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
      });
  return identifier && !data.count(name) ? shown + "()" : shown;
}

bool any_match(const std::vector<std::string>& patterns, const std::string& name) {
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::string& p) { return glob_match(p, name); });
}

bool mentions_namespace(const std::string& name, const std::string& ns) {
  for (std::size_t at = name.find(ns + "::"); at != std::string::npos;
       at = name.find(ns + "::", at + 1)) {
    if (at == 0) return true;
    const char before = name[at - 1];
    if (!std::isalnum(static_cast<unsigned char>(before)) && before != '_') return true;
  }
  return false;
}

// The object's section names, from objdump's section headers.
std::vector<std::string> read_sections(const Toolchain& tc, const std::string& object, const fs::path& log) {
  const ProcessResult r = run_process({tc.objdump, "-h", object}, log.string(), tc.tool_timeout_s);
  if (r.timed_out || r.signal != 0 || r.exit_code != 0) {
    throw std::runtime_error(fmt::format("objdump could not read {} (see {})", object, log.string()));
  }
  static const std::regex line_re(R"(^\s*\d+\s+(\S+)\s+[0-9a-fA-F]+\s.*$)");
  std::vector<std::string> sections;
  for (const std::string& line : lines_of(read_text(log))) {
    std::smatch m;
    if (std::regex_match(line, m, line_re)) sections.push_back(m[1].str());
  }
  return sections;
}

// The sections compiled C++ and CUDA host code has (gcc and nvcc); anything else came from an
// assembler directive or a section attribute.
bool ordinary_section(const std::string& name) {
  static const std::vector<std::string> patterns = {
      ".text", ".text.*", ".data", ".data.*", ".bss", ".bss.*", ".rodata", ".rodata.*", ".tdata*", ".tbss*",
      ".init_array*", ".fini_array*", ".ctors*", ".dtors*", ".eh_frame", ".gcc_except_table*", ".comment",
      ".note.*", ".group", ".nv_fatbin", ".nvFatBinSegment", "__nv_relfatbin", "__nv_module_id", ".debug_*",
      ".gnu.linkonce.*"};
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) { return glob_match(p, name); });
}

}  // namespace

std::vector<Refusal> check_host_assembly(const std::string& listing_text) {
  // Directives that read a file into the object or build code out of text: never in compiled code.
  static const std::map<std::string, std::string> never = {
      {".incbin", "reads a file into the object at build time"},
      {".include", "reads a file into the assembly at build time"},
      {".macro", "defines an assembler macro"}, {".irp", "repeats assembly"}, {".irpc", "repeats assembly"},
      {".rept", "repeats assembly"}, {".altmacro", "changes how macros expand"}, {".purgem", "undefines a macro"},
      {".pushsection", "switches sections"}, {".popsection", "switches sections"}, {".previous", "switches sections"},
      {".subsection", "switches sections"}};
  std::vector<Refusal> refusals;
  std::set<std::string> said;
  auto refuse = [&](const std::string& directive, const std::string& why) {
    if (!said.insert(directive).second) return;
    refusals.push_back({"assembly", fmt::format("host code's inline assembly carries the directive {} ({}): a "
                                                "chapter's host code needs no assembler directives",
                                                printable(directive, 40), why)});
  };
  bool inline_assembly = false;  // between #APP and #NO_APP: what asm() statements wrote
  for (const std::string& line : lines_of(listing_text)) {
    // "  12 0004 0F05     <tab><tab>syscall": the source text follows the first tab.
    const std::size_t tab = line.find('\t');
    if (tab == std::string::npos) continue;
    std::string text = line.substr(tab + 1);
    text.erase(0, text.find_first_not_of(" \t"));
    if (text.rfind("#APP", 0) == 0) {
      inline_assembly = true;
      continue;
    }
    if (text.rfind("#NO_APP", 0) == 0) {
      inline_assembly = false;
      continue;
    }
    if (text.empty() || text[0] != '.') continue;
    const std::string directive = text.substr(0, text.find_first_of(" \t,\""));
    if (!directive.empty() && directive.back() == ':') continue;  // a label (.L12:)
    if (const auto it = never.find(directive); it != never.end()) {
      refuse(directive, it->second);
      continue;
    }
    if (!inline_assembly) continue;
    // nvcc's own inline assembly: the fatbinary, `.section .nv_fatbin, "a"`, `.align 8`, `.quad ...`,
    // and back to `.text`.
    std::string normal;
    for (char c : text) {
      if (c != ' ' && c != '\t') normal += c;
    }
    if (directive == ".align" || directive == ".quad" || directive == ".text" || normal == ".section.nv_fatbin,\"a\"") {
      continue;
    }
    refuse(directive, "assembler directives in host code");
  }
  return refusals;
}

// ---------------------------------------------------------------------------------------------

Rules load_rules(const std::string& manifest_path) {
  // The chapters, their order and their given code as the harness reads them (and checks them);
  // from the file itself only what the static checks alone use: "trust", "symbols" and "idea".
  const workbook::Manifest loaded = workbook::load_manifest(manifest_path);
  std::ifstream in(manifest_path);
  if (!in) throw std::runtime_error(fmt::format("manifest: cannot read {}", manifest_path));
  json manifest;
  try {
    manifest = json::parse(in);
  } catch (const json::exception& e) {
    throw std::runtime_error(fmt::format("manifest: {} is not JSON: {}", manifest_path, e.what()));
  }
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
  rules.allowed_symbols =
      string_list(field(trust, "allowed_symbols", "trust"), "trust.allowed_symbols");
  rules.allowed_definitions =
      string_list(field(trust, "allowed_definitions", "trust"), "trust.allowed_definitions");
  const json& reasons = field(trust, "refused_symbols", "trust");
  if (!reasons.is_array()) bad("trust.refused_symbols", "expected a list");
  for (std::size_t i = 0; i < reasons.size(); ++i) {
    const std::string where = fmt::format("trust.refused_symbols[{}]", i);
    rules.refused_symbols.push_back(
        {string_list(field(reasons[i], "patterns", where), where + ".patterns"),
         string_field(reasons[i], "why", where)});
  }
  const json& chapters = field(manifest, "chapters", "manifest");
  if (!chapters.is_array()) bad("chapters", "expected a list");
  std::vector<std::string> order;                           // slugs in the manifest's order
  std::map<std::string, std::size_t> first_given;           // given file -> first chapter's index
  for (std::size_t i = 0; i < chapters.size(); ++i) {
    const std::string where = fmt::format("chapters[{}]", i);
    const std::string slug = string_field(chapters[i], "slug", where);
    ChapterRules chapter;
    chapter.symbols =
        string_list(field(chapters[i], "symbols", where + " (" + slug + ")"), where + ".symbols");
    if (chapters[i].contains("idea")) {
      const json& idea = chapters[i].at("idea");
      if (!idea.is_array()) bad(where + ".idea", "expected a list");
      for (std::size_t k = 0; k < idea.size(); ++k) {
        chapter.idea.push_back(parse_idea(idea[k], fmt::format("{}.idea[{}]", where, k)));
      }
    }
    if (i >= loaded.chapters.size() || loaded.chapters[i].slug != slug) bad(where, "not the manifest's chapter");
    chapter.given = loaded.chapters[i].given;
    for (const std::string& file : chapter.given) first_given.emplace(file, order.size());
    order.push_back(slug);
    rules.chapters[slug] = std::move(chapter);
  }
  // Given code is the answer of the chapter before the first that is given it.
  for (const auto& [file, first] : first_given) {
    rules.given_files[file] =
        first == 0
            ? fmt::format("{} is given code only to the chapters whose entry in "
                          "grader/manifest.json lists it under \"given\"",
                          file)
            : fmt::format("{} is chapter {}'s answer; chapters from {} on get it as given code "
                          "(\"given\" in grader/manifest.json), earlier chapters write their own",
                          file, order[first - 1], order[first]);
  }
  return rules;
}

std::vector<Refusal> check_includes(const Toolchain& tc, const Rules& rules,
                                    const std::string& slug, const std::string& source) {
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
    const ProcessResult e = run_process(memory_limited(tc, e_args), markers.string(),
                                        tc.preprocess_timeout_s);
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

std::vector<Refusal> check_object(const Toolchain& tc, const Rules& rules, const std::string& slug,
                                  const std::string& object, const std::string& listing) {
  const fs::path work = work_dir_of(tc);
  const std::vector<Symbol> symbols = read_symbols(tc, object, work / (slug + ".nm.log"));
  const std::vector<Function> functions = disassemble(tc, object, work / (slug + ".objdump.log"));
  const ChapterRules& chapter = chapter_rules(rules, slug);

  std::vector<Refusal> refusals;
  std::set<std::string> seen;
  for (const Symbol& s : symbols) {
    if (!seen.insert(std::string(1, s.undefined ? 'U' : 'D') + s.name).second) continue;
    if (s.undefined) {
      if (any_match(rules.allowed_symbols, s.name) || any_match(chapter.symbols, s.name)) continue;
      if (s.name == "exit") {
        bool referenced = false, only_stubs = true;
        for (const Function& f : functions) {
          if (std::find(f.relocations.begin(), f.relocations.end(), s.name) == f.relocations.end()) {
            continue;
          }
          referenced = true;
          only_stubs = only_stubs && (!kKnowsExitStubs || is_device_function_host_stub(f, s.name));
        }
        if (referenced && only_stubs) continue;
      }
      std::string why = fmt::format(
          "chapter {} may not use it (not on trust.allowed_symbols or the chapter's \"symbols\" in "
          "grader/manifest.json)",
          slug);
      for (const SymbolReason& reason : rules.refused_symbols) {
        if (any_match(reason.patterns, s.name)) {
          why = reason.why;
          break;
        }
      }
      refusals.push_back({"symbol", fmt::format("uses {}: {}", shown_symbol(s.name), why)});
      continue;
    }
    const bool local = std::islower(static_cast<unsigned char>(s.type)) && s.type != 'u';
    if (local) continue;
    // A definition in the harness's or GoogleTest's namespace would replace their code.
    const bool harness_code = mentions_namespace(s.name, "workbook") || mentions_namespace(s.name, "testing");
    const auto refuse_harness_code = [&] {
      refusals.push_back({"symbol", fmt::format("defines {}: a chapter may not define code of the harness "
                                                "(namespace workbook) or of GoogleTest (namespace testing)",
                                                shown_symbol(s.name))});
    };
    const bool weak = s.type == 'W' || s.type == 'V' || s.type == 'u';
    if (weak) {
      if (harness_code) refuse_harness_code();
      continue;
    }
    if (any_match(rules.allowed_definitions, s.name)) continue;
    // A definition of its own (a __constant__ table, a helper outside the anonymous namespace) is
    // the chapter's business; replacing the harness, GoogleTest, the C library or the CUDA runtime
    // is not.
    if (harness_code) {
      refuse_harness_code();
      continue;
    }
    const bool library = any_match(rules.allowed_symbols, s.name) ||
                         std::any_of(rules.refused_symbols.begin(), rules.refused_symbols.end(),
                                     [&](const SymbolReason& r) { return any_match(r.patterns, s.name); });
    if (library) {
      refusals.push_back({"symbol", fmt::format("defines {}, a function of the C library or the CUDA runtime: a "
                                                "chapter may not replace it",
                                                shown_symbol(s.name))});
    }
  }
  // One line for the system calls: the first function that issues one, and how many more do.
  std::string first_call;
  int more_functions = 0;
  for (const Function& f : functions) {
    const auto it = std::find_if(f.instructions.begin(), f.instructions.end(), is_system_call);
    if (it == f.instructions.end()) continue;
    if (first_call.empty()) {
      first_call = fmt::format("{} in {}", printable(it->mnemonic), printable(f.name, 100));
    } else {
      ++more_functions;
    }
  }
  if (!first_call.empty()) {
    refusals.push_back(
        {"syscall", fmt::format("host code issues a system call instruction ({}{})", first_call,
                                more_functions ? fmt::format(", and in {} more function(s)", more_functions)
                                               : std::string())});
  }
  for (const std::string& section : read_sections(tc, object, work / (slug + ".sections.log"))) {
    if (!ordinary_section(section)) {
      refusals.push_back({"section", fmt::format("the object has a section {}, which compiled C++ and CUDA code does "
                                                 "not have (an assembler directive or a section attribute put it there)",
                                                 printable(section, 60))});
    }
  }
  if (!listing.empty()) {
    std::error_code ec;
    if (fs::is_regular_file(listing, ec)) {
      for (Refusal& r : check_host_assembly(read_text(listing))) refusals.push_back(std::move(r));
    }
  }
  constexpr std::size_t max_refusals = 20;
  if (refusals.size() > max_refusals) {
    const std::size_t more = refusals.size() - (max_refusals - 1);
    refusals.resize(max_refusals - 1);
    refusals.push_back({"symbol", fmt::format("... and {} more", more)});
  }
  return refusals;
}

std::vector<IdeaNote> idea_notes(const Toolchain& tc, const Rules& rules, const std::string& slug,
                                 const std::string& object) {
  if (tc.cuobjdump.empty()) return {};
  const ChapterRules& chapter = chapter_rules(rules, slug);
  if (chapter.idea.empty()) return {};
  const fs::path work = work_dir_of(tc);

  const bool wants_sass = std::any_of(chapter.idea.begin(), chapter.idea.end(),
                                      [](const IdeaPattern& p) { return !p.sass.empty(); });
  const bool wants_symbols = std::any_of(chapter.idea.begin(), chapter.idea.end(),
                                         [](const IdeaPattern& p) { return !p.symbol.empty(); });

  // SASS: per kernel, its instruction lines.
  std::vector<std::pair<std::string, std::vector<std::string>>> kernels;
  std::string sass_error;
  if (wants_sass) {
    const fs::path log = work / (slug + ".sass.log");
    // cuobjdump runs nvdisasm, which PyPI's packages put beside it: that directory goes first
    // on the PATH.
    std::vector<std::string> argv = {tc.cuobjdump, "-sass", object};
    const std::string dir = fs::path(tc.cuobjdump).parent_path().string();
    if (!dir.empty()) {
      const char* path = std::getenv("PATH");
      argv.insert(argv.begin(), {"env", "PATH=" + dir + (path ? std::string(":") + path : "")});
    }
    const ProcessResult r = run_process(argv, log.string(), tc.tool_timeout_s);
    if (r.timed_out || r.signal != 0 || r.exit_code != 0) {
      sass_error = fmt::format("cuobjdump -sass failed (see {})", log.string());
    } else {
      static const std::regex insn_re(R"(^\s*/\*[0-9a-fA-F]{4,}\*/\s+(.*?)\s*;)");
      for (const std::string& line : lines_of(read_text(log))) {
        const std::size_t at = line.find("Function : ");
        if (at != std::string::npos) {
          kernels.push_back({line.substr(at + 11), {}});
          continue;
        }
        std::smatch m;
        if (!kernels.empty() && std::regex_search(line, m, insn_re)) {
          kernels.back().second.push_back(m[1].str());
        }
      }
    }
  }
  std::vector<std::string> undefined;
  if (wants_symbols) {
    for (const Symbol& s : read_symbols(tc, object, work / (slug + ".idea-nm.log"))) {
      if (s.undefined) undefined.push_back(s.name);
    }
  }

  std::vector<IdeaNote> notes;
  for (const IdeaPattern& idea : chapter.idea) {
    IdeaNote note{idea.what, false, ""};
    if (!idea.symbol.empty()) {
      const auto it = std::find_if(undefined.begin(), undefined.end(),
                                   [&](const std::string& n) { return glob_match(idea.symbol, n); });
      note.shown = it != undefined.end();
      note.evidence = note.shown ? fmt::format("calls {}", printable(*it))
                                 : fmt::format("no call of {}", printable(idea.symbol));
    } else if (!sass_error.empty()) {
      note.evidence = sass_error;
    } else {
      const std::regex re(idea.sass);
      const std::regex after(idea.after_last.empty() ? "$^" : idea.after_last);
      int best = 0;
      std::string example;
      for (const auto& [name, lines] : kernels) {
        std::size_t start = 0;
        if (!idea.after_last.empty()) {
          for (std::size_t i = 0; i < lines.size(); ++i) {
            if (std::regex_search(lines[i], after)) start = i + 1;
          }
        }
        int count = 0;
        std::string first;
        for (std::size_t i = start; i < lines.size(); ++i) {
          if (std::regex_search(lines[i], re)) {
            if (count++ == 0) first = lines[i];
          }
        }
        if (count > best) {
          best = count;
          example = first;
        }
      }
      note.shown = best >= idea.min_count;
      const std::string where =
          idea.after_last.empty() ? "" : fmt::format(" after the last /{}/", idea.after_last);
      note.evidence =
          best == 0 ? fmt::format("no SASS instruction matches /{}/{}", idea.sass, where)
                    : fmt::format("{} instruction(s) of one kernel match /{}/{} (needs {}), e.g. {}",
                                  best, idea.sass, where, idea.min_count, printable(example, 100));
    }
    notes.push_back(std::move(note));
  }
  return notes;
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
      if (const std::size_t note = dir.find(" ("); note != std::string::npos) dir.resize(note);  // "(framework directory)"
      dirs.push_back(dir);
    }
  }
  return dirs;
}

}  // namespace grader
