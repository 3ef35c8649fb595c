// What a chapter's compiled object holds: its symbols, its sections, the host code's system calls and
// assembler directives (check_object, check_host_assembly), and the idea notes from its machine
// code (idea_notes).
#include "static_checks.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <utility>

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

bool defined_in_namespace(const std::string& symbol, const std::string& ns) {
  // Operators whose names hold brackets, and the anonymous namespace, first: then every <...>
  // and (...) left is a template argument list, a parameter list or a function type.
  std::string name = symbol;
  for (const auto& [from, to] : {std::pair<const char*, const char*>{"(anonymous namespace)", "{anonymous}"},
                                 {"operator<<=", "operator_"},
                                 {"operator>>=", "operator_"},
                                 {"operator<<", "operator_"},
                                 {"operator>>", "operator_"},
                                 {"operator<=>", "operator_"},
                                 {"operator<=", "operator_"},
                                 {"operator>=", "operator_"},
                                 {"operator<", "operator_"},
                                 {"operator>", "operator_"},
                                 {"operator->", "operator_"},
                                 {"operator()", "operator_"}}) {
    for (std::size_t at = name.find(from); at != std::string::npos; at = name.find(from, at + std::strlen(to))) {
      name.replace(at, std::strlen(from), to);
    }
  }
  std::string outside;  // the name with every bracketed part removed
  int depth = 0;
  for (char c : name) {
    if (c == '<' || c == '(')
      ++depth;
    else if (c == '>' || c == ')')
      depth = depth > 0 ? depth - 1 : 0;
    else if (depth == 0)
      outside += c;
  }
  // The qualified name is the last word with a scope in it ("void {anonymous}::f const" gives
  // "{anonymous}::f"; a return type comes before it); a name with no scope is in no namespace.
  std::string qualified;
  std::istringstream words(outside);
  for (std::string word; words >> word;) {
    if (word.find("::") != std::string::npos) qualified = word;
  }
  const std::string prefix = ns + "::";
  return qualified.compare(0, prefix.size(), prefix) == 0;
}

namespace {

// ---------------------------------------------------------------------------------------------
// Objects

struct Symbol {
  char type;
  bool undefined;
  std::string name;  // demangled
};

std::vector<Symbol> read_symbols(const Toolchain& tc, const std::string& object, const fs::path& log) {
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

std::vector<Function> disassemble(const Toolchain& tc, const std::string& object, const fs::path& log) {
  const ProcessResult r =
      run_process({tc.objdump, "-dr", "-C", "--no-show-raw-insn", object}, log.string(), tc.tool_timeout_s);
  if (r.timed_out || r.signal != 0 || r.exit_code != 0) {
    throw std::runtime_error(fmt::format("objdump could not read {} (see {})", object, log.string()));
  }
  static const std::regex header_re(R"(^[0-9a-fA-F]+ <(.*)>:$)");
  static const std::regex reloc_re(R"(^\s+[0-9a-fA-F]+: R_\w+\s+(\S+?)(?:[-+]0x[0-9a-fA-F]+)?$)");
  static const std::regex insn_re(R"(^\s+[0-9a-fA-F]+:\s+(.*)$)");
  static const std::set<std::string> prefixes = {"lock", "rep", "repz", "repnz", "repe", "repne",   "data16", "cs",
                                                 "ds",   "es",  "fs",   "gs",    "ss",   "notrack", "bnd",    "addr32"};
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
  static const std::set<std::string> moves = {"sub", "add", "push", "pop", "mov", "movl", "movq", "endbr64"};
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
      const bool stack = (insn.mnemonic == "sub" || insn.mnemonic == "add") && insn.operands.size() >= 5 &&
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

// A demangled name that is a plain C identifier: a C-linkage function or a variable at file scope (a C++
// function's name carries its parameters, a namespace's member its scope).
bool is_identifier(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(),
                                      [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// Data symbols are named bare; functions get "()" when their name is a plain C identifier.
std::string shown_symbol(const std::string& name) {
  static const std::set<std::string> data = {"environ",
                                             "__environ",
                                             "program_invocation_name",
                                             "program_invocation_short_name",
                                             "stdin",
                                             "stdout",
                                             "stderr",
                                             "_IO_2_1_stdout_",
                                             "_IO_2_1_stderr_",
                                             "__libc_argv",
                                             "__libc_argc",
                                             "optarg",
                                             "__dso_handle"};
  const std::string shown = printable(name);
  return is_identifier(name) && !data.count(name) ? shown + "()" : shown;
}

bool any_match(const std::vector<std::string>& patterns, const std::string& name) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) { return glob_match(p, name); });
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
  static const std::vector<std::string> patterns = {".text",
                                                    ".text.*",
                                                    ".data",
                                                    ".data.*",
                                                    ".bss",
                                                    ".bss.*",
                                                    ".rodata",
                                                    ".rodata.*",
                                                    ".tdata*",
                                                    ".tbss*",
                                                    ".init_array*",
                                                    ".fini_array*",
                                                    ".ctors*",
                                                    ".dtors*",
                                                    ".eh_frame",
                                                    ".gcc_except_table*",
                                                    ".comment",
                                                    ".note.*",
                                                    ".group",
                                                    ".nv_fatbin",
                                                    ".nvFatBinSegment",
                                                    "__nv_relfatbin",
                                                    "__nv_module_id",
                                                    ".debug_*",
                                                    ".gnu.linkonce.*"};
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) { return glob_match(p, name); });
}

}  // namespace

std::vector<Refusal> check_host_assembly(const std::string& listing_text) {
  // Directives that read a file into the object or build code out of text: never in compiled code.
  static const std::map<std::string, std::string> never = {{".incbin", "reads a file into the object at build time"},
                                                           {".include", "reads a file into the assembly at build time"},
                                                           {".macro", "defines an assembler macro"},
                                                           {".irp", "repeats assembly"},
                                                           {".irpc", "repeats assembly"},
                                                           {".rept", "repeats assembly"},
                                                           {".altmacro", "changes how macros expand"},
                                                           {".purgem", "undefines a macro"},
                                                           {".pushsection", "switches sections"},
                                                           {".popsection", "switches sections"},
                                                           {".previous", "switches sections"},
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
    // libstdc++'s own, from <iostream> since GCC 13: a reference that pulls in the streams' start-up.
    if (normal == ".globl_ZSt21ios_base_library_initv") continue;
    refuse(directive, "assembler directives in host code");
  }
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
      // Allowed unless the rules refuse it: the C and C++ libraries are ordinary code, and the
      // sandbox bounds what they can do. refused_symbols names what no sandbox can stop (a
      // library's reduction, the harness's code, CUDA calls beyond a launcher's); allowed_symbols
      // and the chapter's "symbols" are the exceptions to it.
      if (any_match(rules.allowed_symbols, s.name) || any_match(chapter.symbols, s.name)) continue;
      const auto reason = std::find_if(rules.refused_symbols.begin(), rules.refused_symbols.end(),
                                       [&](const SymbolReason& r) { return any_match(r.patterns, s.name); });
      if (reason == rules.refused_symbols.end()) continue;
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
      refusals.push_back({"symbol", fmt::format("uses {}: {}", shown_symbol(s.name), reason->why)});
      continue;
    }
    const bool local = std::islower(static_cast<unsigned char>(s.type)) && s.type != 'u';
    if (local) continue;
    // A definition in the harness's or GoogleTest's namespace would replace their code.
    const bool harness_code = defined_in_namespace(s.name, "workbook") || defined_in_namespace(s.name, "testing");
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
    // A definition of its own (a __constant__ table, a helper outside the anonymous namespace, named
    // ceil_div or anything else) is the chapter's business; replacing the harness, GoogleTest or
    // the CUDA runtime is not. Only a C-linkage function can stand in for a library's (a C++
    // function's symbol carries its parameters), and only one whose name the rules list is refused.
    if (harness_code) {
      refuse_harness_code();
      continue;
    }
    const bool c_function = (s.type == 'T' || s.type == 'i') && is_identifier(s.name);
    const bool library =
        c_function && (any_match(rules.allowed_symbols, s.name) ||
                       std::any_of(rules.refused_symbols.begin(), rules.refused_symbols.end(),
                                   [&](const SymbolReason& r) { return any_match(r.patterns, s.name); }));
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
        {"syscall",
         fmt::format("host code issues a system call instruction ({}{})", first_call,
                     more_functions ? fmt::format(", and in {} more function(s)", more_functions) : std::string())});
  }
  for (const std::string& section : read_sections(tc, object, work / (slug + ".sections.log"))) {
    if (!ordinary_section(section)) {
      refusals.push_back(
          {"section", fmt::format("the object has a section {}, which compiled C++ and CUDA code does "
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

  const bool wants_sass =
      std::any_of(chapter.idea.begin(), chapter.idea.end(), [](const IdeaPattern& p) { return !p.sass.empty(); });
  const bool wants_symbols =
      std::any_of(chapter.idea.begin(), chapter.idea.end(), [](const IdeaPattern& p) { return !p.symbol.empty(); });

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
      note.evidence =
          note.shown ? fmt::format("calls {}", printable(*it)) : fmt::format("no call of {}", printable(idea.symbol));
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
      const std::string where = idea.after_last.empty() ? "" : fmt::format(" after the last /{}/", idea.after_last);
      note.evidence = best == 0 ? fmt::format("no SASS instruction matches /{}/{}", idea.sass, where)
                                : fmt::format("{} instruction(s) of one kernel match /{}/{} (needs {}), e.g. {}", best,
                                              idea.sass, where, idea.min_count, printable(example, 100));
    }
    notes.push_back(std::move(note));
  }
  return notes;
}

}  // namespace grader
