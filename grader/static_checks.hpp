// Static checks on a learner's translation unit, before any of its code runs.
//
// What the grader can check itself, from the compiler's and binutils' own output:
// - check_includes: every file the source includes (nvcc -M, the compiler's dependency output,
//   for the host pass and the device pass of every architecture in the flags) is a system or CUDA
//   toolkit header that is not a library reduction, the workbook's chapter header, or a harness
//   header the chapter's manifest entry lists under "given" (given code: the answer of an earlier
//   chapter, such as chapter 07's block pass, workbook/block_pass.cuh, for chapters 08 on);
// - check_object: no symbol the object uses is one the rules refuse (a library's reduction, the
//   harness's or GoogleTest's code, a CUDA call beyond a launcher's; the C and C++ libraries are
//   allowed), it defines nothing in the harness's or GoogleTest's namespace and no C-linkage
//   function of a library the rules name, its host code has no system-call instruction, its
//   sections are those compiled code has, and its host inline assembly (the assembler's listing)
//   carries no directive: .incbin and .include read files into the object at build time, section
//   switches put bytes where compiled code never does;
// - idea_notes: for the instructor only, whether the chapter's idea shows in the machine code.
// The lists are in grader/manifest.json under "trust" and in each chapter's "symbols" and "idea".
#pragma once

#include <map>
#include <string>
#include <vector>

namespace grader {

struct Toolchain {
  std::string nvcc;                        // for `nvcc -M` (the compiler's own dependency output)
  std::string nm, objdump;                 // binutils
  std::string cuobjdump;                   // may be empty: then idea notes are not computed
  std::vector<std::string> include_roots;  // host compiler's implicit include dirs + CUDA include dirs
  std::string harness_dir;                 // <repo>/harness: only workbook/chapter.cuh,
                                           // workbook/contract.hpp and the chapter's "given"
                                           // files in it may be included
  std::vector<std::string> compile_flags;  // the build's flags for this file: -std=c++17
                                           // -I<harness> -DWORKBOOK_SUBJECT=... -DWORKBOOK_CHAPTER=...
                                           // and the build's architectures (-gencode ...): the
                                           // device pass of each architecture is checked
  std::string work_dir;                    // where to write logs and scratch files
  std::string submission_dir;              // the folder the chapter folders are in: a path
                                           // under it is named as the student knows it
                                           // ("07_vectorized/kernel.cu")

  // Additions to the interface (defaults fit the grader):
  double preprocess_timeout_s = 60;   // `#include "/dev/zero"` or a FIFO ends here
  long preprocess_memory_mib = 4096;  // address-space limit of the preprocessor (ulimit -v)
  double tool_timeout_s = 120;        // nm, objdump, cuobjdump
};

//! A library path pattern: components relative to an include root ("cub/" = a directory cub
//! anywhere under a root; "cooperative_groups/reduce.h" = that file; `*` within a component).
struct PathPattern {
  std::string pattern;
  std::string why;
};

//! Why an unlisted symbol is refused, for the message: symbols matching any of `patterns`.
struct SymbolReason {
  std::vector<std::string> patterns;
  std::string why;
};

//! A pattern that shows a chapter's idea: either `sass` (a regex matched against each SASS
//! instruction line; shown when at least `min_count` lines of one kernel match, counting only
//! lines after that kernel's last match of `after_last` when it is given) or `symbol` (a pattern
//! that an undefined symbol of the object matches).
struct IdeaPattern {
  std::string what;
  std::string sass;
  std::string after_last;
  int min_count = 1;
  std::string symbol;
};

struct ChapterRules {
  std::vector<std::string> symbols;  // what this chapter may use of refused_symbols beyond allowed_symbols
  std::vector<IdeaPattern> idea;
  std::vector<std::string> given;  // harness headers it may include ("workbook/block_pass.cuh")
};

//! The trust rules, read from grader/manifest.json.
struct Rules {
  std::vector<PathPattern> refused_includes;
  std::vector<std::string> allowed_symbols;      // what every chapter may use of refused_symbols
  std::vector<std::string> allowed_definitions;  // external definitions nvcc emits
  std::vector<SymbolReason> refused_symbols;     // what a chapter may not use, and why; the rest
                                                 // (the C and C++ libraries) it may
  std::map<std::string, ChapterRules> chapters;  // by slug
  //! Every chapter's "given" file, with the reason a chapter that does not list it may not
  //! include it: it is the answer of the chapter before the first (in the manifest's order) that
  //! lists it.
  std::map<std::string, std::string> given_files;
};

//! Reads "trust" and each chapter's "symbols", "idea" and "given"; throws std::runtime_error
//! naming the field that is missing or malformed (an unknown idea pattern kind is an error, and so
//! is a "given" file that is not a workbook/ header of the harness).
Rules load_rules(const std::string& manifest_path);

//! check: "include", "symbol", "syscall", "preprocess"; reason: one line, naming the file or symbol.
struct Refusal {
  std::string check;
  std::string reason;
};

struct IdeaNote {
  std::string what;
  bool shown = false;
  std::string evidence;
};

//! Before compiling: every file `source` includes. Runs `nvcc -M -x cu <compile_flags> source`.
std::vector<Refusal> check_includes(const Toolchain&, const Rules&, const std::string& slug, const std::string& source);

//! After compiling: the object's undefined and defined symbols, its host instructions and its
//! sections, and the directives in the host assembler's `listing` (-Wa,-adln=<listing>; "" or a
//! listing that does not exist skips that part). Throws std::runtime_error when nm or objdump
//! cannot read the object.
std::vector<Refusal> check_object(const Toolchain&, const Rules&, const std::string& slug, const std::string& object,
                                  const std::string& listing = "");

//! The directives a host assembler listing's inline assembly carries, as refusals: any directive
//! inside the learner's inline assembly (#APP ... #NO_APP) but the fatbinary's that nvcc itself
//! emits there, and anywhere a directive that reads a file or builds one (.incbin, .include,
//! macros, repetitions, section stacks).
std::vector<Refusal> check_host_assembly(const std::string& listing_text);

//! For the instructor only (never a failure): the chapter's idea in the SASS or the symbols.
//! Returns {} when toolchain.cuobjdump is empty.
std::vector<IdeaNote> idea_notes(const Toolchain&, const Rules&, const std::string& slug, const std::string& object);

//! The directories the host compiler behind `nvcc` searches for system headers
//! (`#include <...>`), as it prints them itself (`nvcc -E -Xcompiler -v`): the
//! system headers a chapter may include, whichever compiler nvcc uses here.
//! Empty if they cannot be found.
std::vector<std::string> host_compiler_include_dirs(const std::string& nvcc, const std::string& work_dir);

//! `*` matches any run of characters; everything else matches itself. Exposed for tests.
bool glob_match(const std::string& pattern, const std::string& text);

//! Whether the entity a demangled symbol names is declared in namespace `ns` (or one nested in
//! it): its qualified name, without template arguments, parameters or return type, begins with
//! `ns::`. Arguments may name any namespace: `(anonymous namespace)::launch<workbook::ops::Sum>()`
//! is the chapter's own function. Exposed for tests.
bool defined_in_namespace(const std::string& symbol, const std::string& ns);

}  // namespace grader
