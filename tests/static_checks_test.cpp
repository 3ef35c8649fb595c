// The grader's static checks on real files, without a GPU: every hostile submission that names a
// refusal is refused for that reason, every other planted submission passes them (its fault shows
// at run time), and so do the references and the stubs.
//
// A file under tests/submissions/{hostile,honest}*/<slug>/kernel.cu starts with two lines:
//   // hostile: <what it tries>                (or // honest: ...)
//   // expect: rejected ~ <regex a refusal's reason must match>
// or any other expectation (`// expect: accepted`, `// expect: failed ~ ...`): then the static
// checks must let it through. Its includes are checked; when they pass, it is compiled (one
// architecture, the build's flags) and its object is checked. The faulty* and malformed* trees
// are only preprocessed: nothing they include may be refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <iterator>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "process.hpp"
#include "static_checks.hpp"
#include "text.hpp"

namespace fs = std::filesystem;
using namespace grader;

namespace {

const fs::path kSourceDir = WORKBOOK_SOURCE_DIR;
// One architecture keeps the compiles short (the grader passes the build's own list): sm_90,
// where the chapters that require it (clusters, PDL) compile their idea rather than a trap.
const std::vector<std::string> kArchFlags = {"-arch=sm_90"};

fs::path work_root() {
  static const fs::path root = [] {
    fs::path dir = fs::temp_directory_path() / fmt::format("static_checks_test-{}", getpid());
    fs::create_directories(dir);
    return dir;
  }();
  return root;
}

// The scratch directory goes when the tests end.
class RemoveWorkDir : public ::testing::Environment {
 public:
  void TearDown() override;
};

std::vector<std::string> compile_flags(const std::string& slug, const std::string& subject) {
  std::vector<std::string> flags = {"-O3",
                                    "-DNDEBUG",
                                    "-lineinfo",
                                    "-std=c++17",
                                    "-I" + (kSourceDir / "harness").string(),
                                    fmt::format("-DWORKBOOK_SUBJECT=\"{}\"", subject),
                                    fmt::format("-DWORKBOOK_CHAPTER=\"{}\"", slug)};
  flags.insert(flags.end(), kArchFlags.begin(), kArchFlags.end());
  if (*WORKBOOK_NCCL_INCLUDE_DIR) flags.insert(flags.end(), {"-isystem", WORKBOOK_NCCL_INCLUDE_DIR});
  return flags;
}

Toolchain toolchain(const std::string& slug, const std::string& subject, const fs::path& work) {
  Toolchain tc;
  tc.nvcc = WORKBOOK_NVCC;
  tc.nm = WORKBOOK_NM;
  tc.objdump = WORKBOOK_OBJDUMP;
  tc.cuobjdump = WORKBOOK_CUOBJDUMP;
  tc.include_roots = split(WORKBOOK_INCLUDE_ROOTS, '|');
  static const std::vector<std::string> host_dirs =
      host_compiler_include_dirs(WORKBOOK_NVCC, fs::temp_directory_path().string());
  tc.include_roots.insert(tc.include_roots.end(), host_dirs.begin(), host_dirs.end());
  tc.harness_dir = (kSourceDir / "harness").string();
  tc.compile_flags = compile_flags(slug, subject);
  tc.work_dir = work.string();
  tc.preprocess_timeout_s = 30;
  tc.preprocess_memory_mib = 2048;  // `#include "/dev/zero"` ends within seconds
  return tc;
}

void RemoveWorkDir::TearDown() {
  std::error_code ec;
  fs::remove_all(work_root(), ec);
}
::testing::Environment* const remove_work_dir = ::testing::AddGlobalTestEnvironment(new RemoveWorkDir);

const Rules& rules() {
  static const Rules r = load_rules((kSourceDir / "grader" / "manifest.json").string());
  return r;
}

std::string joined(const std::vector<Refusal>& refusals) {
  std::string s;
  for (const Refusal& r : refusals) s += fmt::format("\n  [{}] {}", r.check, r.reason);
  return s.empty() ? " (none)" : s;
}

// ---------------------------------------------------------------------------------------------
// The files under test, found when the test starts.

struct Case {
  std::string name;  // test name
  std::string tree;  // hostile, hostile-2, solutions, chapters, faulty, ...
  std::string slug;
  fs::path source;
  bool planted = false;              // hostile* and honest* trees: the file says what to expect
  bool compile = false;              // compile and check the object too
  bool expect_rejected = false;      // from the expect line
  std::string expect_regex;          // a refusal's reason must match it
  std::string expect_compile_error;  // `does_not_compile ~ <regex>`: the compiler's output must match it
  std::string header_error;          // a planted file without the two header lines
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.source.string(); }

void read_header(Case& c) {
  std::ifstream in(c.source);
  std::string first, second;
  std::getline(in, first);
  std::getline(in, second);
  if (first.rfind("// hostile: ", 0) != 0 && first.rfind("// honest: ", 0) != 0) {
    c.header_error = "the first line must be `// hostile: <what it tries>` or `// honest: ...`";
    return;
  }
  static const std::regex expect_re(R"(^// expect: (rejected ~ (.+)|does_not_compile ~ (.+)|\S.*)$)");
  std::smatch m;
  if (!std::regex_match(second, m, expect_re)) {
    c.header_error = "the second line must be `// expect: rejected ~ <regex>` or another expectation";
    return;
  }
  c.expect_rejected = m[2].matched;
  c.expect_regex = m[2].str();
  c.expect_compile_error = m[3].str();
}

std::string test_name(const std::string& tree, const std::string& slug) {
  std::string name = tree + "_" + slug;
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

// Where a case's kernel.cu is checked: a copy among the copies of its tree's
// other kernel.cu files and nothing else, as the grader stages a submission.
fs::path staged(const Case& c) { return work_root() / "stage" / c.tree / c.slug / "kernel.cu"; }

// A file that includes nccl.h (the chapter over several GPUs) compiles only where the build found
// NCCL; elsewhere that chapter is not built, and not checked here.
bool left_out_for_nccl(const fs::path& source) {
  if (*WORKBOOK_NCCL_INCLUDE_DIR) return false;
  std::ifstream in(source);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text.find("<nccl.h>") != std::string::npos;
}

std::vector<Case> discover() {
  std::vector<Case> cases;
  auto add_tree = [&](const fs::path& dir, const std::string& tree, bool planted, bool compile) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return;
    std::vector<fs::path> chapters;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.is_directory() && fs::is_regular_file(entry.path() / "kernel.cu")) {
        chapters.push_back(entry.path());
      }
    }
    std::sort(chapters.begin(), chapters.end());
    for (const fs::path& chapter : chapters) {
      Case c;
      c.tree = tree;
      c.slug = chapter.filename().string();
      c.name = test_name(tree, c.slug);
      c.source = chapter / "kernel.cu";
      c.planted = planted;
      c.compile = compile;
      if (planted) read_header(c);
      if (!left_out_for_nccl(c.source)) cases.push_back(c);
    }
  };
  const fs::path submissions = kSourceDir / "tests" / "submissions";
  std::vector<fs::path> trees;
  for (const auto& entry : fs::directory_iterator(submissions)) {
    if (entry.is_directory()) trees.push_back(entry.path());
  }
  std::sort(trees.begin(), trees.end());
  auto planted = [](const std::string& name) { return name.rfind("hostile", 0) == 0 || name.rfind("honest", 0) == 0; };
  for (const fs::path& tree : trees) {
    if (planted(tree.filename().string())) add_tree(tree, tree.filename().string(), true, true);
  }
  add_tree(kSourceDir / "solutions", "solutions", false, true);
  add_tree(kSourceDir / "chapters", "chapters", false, true);
  // The other trees (faulty, malformed): includes only; some do not compile, on purpose.
  for (const fs::path& tree : trees) {
    if (!planted(tree.filename().string())) add_tree(tree, tree.filename().string(), false, false);
  }
  for (const Case& c : cases) {
    fs::create_directories(staged(c).parent_path());
    fs::copy_file(c.source, staged(c), fs::copy_options::overwrite_existing);
  }
  return cases;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = discover();
  return all;
}

// ---------------------------------------------------------------------------------------------
// Checking every case once, two at a time, before the first test looks at its result.

struct Outcome {
  std::vector<Refusal> include_refusals;
  bool compiled = false;
  std::string compile_log;  // when the compile failed
  std::vector<Refusal> object_refusals;
  std::vector<IdeaNote> ideas;
  std::string error;  // an exception from the checks
};

Outcome run_case(const Case& c) {
  Outcome out;
  const fs::path work = work_root() / c.name;
  fs::create_directories(work);
  const bool reference = c.tree == "solutions";
  Toolchain tc = toolchain(c.slug, reference ? "reference" : "learner", work);
  // As the grader does: each chapter's kernel.cu is copied alone into a folder of its own and
  // checked there. The references too: each is a file a learner could hand in.
  const fs::path source = staged(c);
  tc.submission_dir = source.parent_path().parent_path().string();
  try {
    out.include_refusals = check_includes(tc, rules(), c.slug, source.string());
    if (!out.include_refusals.empty() || !c.compile) return out;
    const fs::path object = work / "kernel.o";
    const fs::path listing = work / "host.lst";  // as the grading build writes it
    std::vector<std::string> argv = {tc.nvcc};
    argv.insert(argv.end(), tc.compile_flags.begin(), tc.compile_flags.end());
    argv.insert(argv.end(),
                {"-Xcompiler=-Wa\\,-adln=" + listing.string(), "-c", source.string(), "-o", object.string()});
    const fs::path log = work / "compile.log";
    const ProcessResult r = run_process(argv, log.string(), 300);
    if (r.timed_out || r.signal != 0 || r.exit_code != 0) {
      std::ifstream in(log);
      out.compile_log.assign(std::istreambuf_iterator<char>(in), {});
      return out;
    }
    out.compiled = true;
    out.object_refusals = check_object(tc, rules(), c.slug, object.string(), listing.string());
    out.ideas = idea_notes(tc, rules(), c.slug, object.string());
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  return out;
}

const std::map<std::string, Outcome>& outcomes() {
  static const std::map<std::string, Outcome> all = [] {
    std::map<std::string, Outcome> results;
    std::mutex mutex;
    std::size_t next = 0;
    const unsigned workers = std::max(2u, std::min(8u, std::thread::hardware_concurrency()));
    std::vector<std::thread> threads;
    for (unsigned w = 0; w < workers; ++w) {
      threads.emplace_back([&] {
        for (;;) {
          std::size_t i;
          {
            const std::lock_guard<std::mutex> lock(mutex);
            if (next == cases().size()) return;
            i = next++;
          }
          Outcome o = run_case(cases()[i]);
          const std::lock_guard<std::mutex> lock(mutex);
          results[cases()[i].name] = std::move(o);
        }
      });
    }
    for (std::thread& t : threads) t.join();
    return results;
  }();
  return all;
}

// ---------------------------------------------------------------------------------------------

class Submission : public ::testing::TestWithParam<Case> {};

TEST_P(Submission, MeetsItsExpectation) {
  const Case& c = GetParam();
  const Outcome& o = outcomes().at(c.name);
  ASSERT_TRUE(o.error.empty()) << c.source << ": " << o.error;
  if (c.planted) {
    ASSERT_TRUE(c.header_error.empty()) << c.source << ": " << c.header_error;
  }
  std::vector<Refusal> all = o.include_refusals;
  all.insert(all.end(), o.object_refusals.begin(), o.object_refusals.end());
  for (const Refusal& r : all) {
    EXPECT_EQ(r.reason.find('\n'), std::string::npos) << "a reason is one line: " << r.reason;
    EXPECT_TRUE(std::all_of(r.reason.begin(), r.reason.end(), [](char ch) { return ch >= 0x20 && ch < 0x7f; }))
        << "a reason is printable ASCII: " << r.reason;
    // A refused file's content never reaches a reason (/etc/passwd's first entry is root's).
    EXPECT_EQ(r.reason.find("root:"), std::string::npos) << r.reason;
  }

  if (!c.expect_compile_error.empty()) {
    // A file the grader never sees (a header beside kernel.cu): the compiler says so.
    EXPECT_TRUE(o.include_refusals.empty()) << c.source << " includes:" << joined(o.include_refusals);
    if (c.compile) {
      EXPECT_FALSE(o.compiled) << c.source << " compiles";
      EXPECT_TRUE(std::regex_search(o.compile_log,
                                    std::regex(c.expect_compile_error.substr(0, c.expect_compile_error.find(".*")))))
          << c.source << ": the compiler's output does not match /" << c.expect_compile_error << "/:\n"
          << o.compile_log;
    }
    return;
  }
  if (!c.expect_rejected) {
    // References, stubs, honest submissions and those whose fault shows at run time.
    EXPECT_TRUE(o.include_refusals.empty()) << c.source << " includes:" << joined(o.include_refusals);
    if (c.compile) {
      ASSERT_TRUE(o.compiled) << c.source << " does not compile:\n" << o.compile_log;
      EXPECT_TRUE(o.object_refusals.empty()) << c.source << " object:" << joined(o.object_refusals);
    }
    return;
  }
  const std::regex expected(c.expect_regex);
  const bool matched =
      std::any_of(all.begin(), all.end(), [&](const Refusal& r) { return std::regex_search(r.reason, expected); });
  for (const Refusal& r : all) std::cout << "  refused [" << r.check << "] " << r.reason << "\n";
  EXPECT_TRUE(matched) << c.source << ": no refusal matches /" << c.expect_regex << "/; refusals:" << joined(all)
                       << (o.compile_log.empty() ? "" : "\ncompile log:\n" + o.compile_log);
}

INSTANTIATE_TEST_SUITE_P(Files, Submission, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(StaticChecks, FindsTheSubmissions) {
  // The static refusals of tests/submissions/hostile and hostile-2 (12 each): each is checked by
  // Submission.MeetsItsExpectation; none may go missing when the rules shrink.
  const auto hostile = std::count_if(cases().begin(), cases().end(), [](const Case& c) { return c.expect_rejected; });
  EXPECT_GE(hostile, 24) << "tests/submissions/hostile*/ should hold the hostile set";
  const auto solutions =
      std::count_if(cases().begin(), cases().end(), [](const Case& c) { return c.tree == "solutions"; });
  long without_nccl = 0;  // the references that need NCCL, where the build has none
  for (const auto& entry : fs::directory_iterator(kSourceDir / "solutions"))
    without_nccl += fs::is_regular_file(entry.path() / "kernel.cu") && left_out_for_nccl(entry.path() / "kernel.cu");
  EXPECT_EQ(solutions + without_nccl, static_cast<long>(rules().chapters.size()));
}

void write(const fs::path& path, const std::string& text);

// The object's symbols as nm prints them (demangled), after Submission.MeetsItsExpectation built it.
std::string symbols_of(const fs::path& object) {
  const fs::path log = object.string() + ".symbols.log";
  const ProcessResult r = run_process({WORKBOOK_NM, "-C", "-p", object.string()}, log.string(), 60);
  if (r.timed_out || r.signal != 0 || r.exit_code != 0) return {};
  std::ifstream in(log);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Honest kinds the checks once refused (tests/submissions/honest-2): pinned memory allocated with
// flags (cudaHostAlloc), a helper at file scope named like a C function (ceil_div), std::call_once,
// and std::cout with std::endl. Each file passes every static check, and its object really holds
// the kind (so the file tests what it says).
TEST(StaticChecks, HonestKindsOnceRefusedPass) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> kinds = {
      {"08_host_finish", {"U cudaHostAlloc", "U cudaFreeHost"}},
      {"10_atomic", {"T ceil_div(unsigned long, unsigned long)"}},
      {"09_two_pass", {"__once_proxy", "_GLOBAL_OFFSET_TABLE_"}},
      {"03_idle_threads", {"U std::cout", "std::ctype<char>::_M_widen_init() const"}}};
  for (const auto& [slug, symbols] : kinds) {
    const auto c = std::find_if(cases().begin(), cases().end(),
                                [&](const Case& k) { return k.tree == "honest-2" && k.slug == slug; });
    ASSERT_NE(c, cases().end()) << "tests/submissions/honest-2/" << slug << "/kernel.cu is missing";
    const Outcome& o = outcomes().at(c->name);
    ASSERT_TRUE(o.error.empty()) << o.error;
    EXPECT_TRUE(o.include_refusals.empty()) << slug << " includes:" << joined(o.include_refusals);
    ASSERT_TRUE(o.compiled) << slug << " does not compile:\n" << o.compile_log;
    EXPECT_TRUE(o.object_refusals.empty()) << slug << " object:" << joined(o.object_refusals);
    const std::string nm = symbols_of(work_root() / c->name / "kernel.o");
    for (const std::string& symbol : symbols) {
      EXPECT_NE(nm.find(symbol), std::string::npos) << slug << ": the object has no " << symbol << ":\n" << nm;
    }
  }
}

// A definition is the chapter's own whatever its name: a variable at file scope, a C++ helper named
// like a CUDA call, a C-linkage function no library has. Only a C-linkage function the rules name (a
// CUDA runtime call here) would replace a library's, and is refused.
TEST(StaticChecks, DefinitionsAreTheChaptersOwnWhateverTheirName) {
  const fs::path dir = work_root() / "definitions" / "00_naive";
  fs::create_directories(dir);
  write(dir / "kernel.cu",
        "#include <cstddef>\n#include <cuda_runtime.h>\n"
        "float cutoff = 1.0f;\n"
        "int exit_code = 0;\n"
        "extern \"C\" int ceil_div_c(int a, int b) { return (a + b - 1) / b; }\n"
        "std::size_t ceil(std::size_t a, std::size_t b) { return (a + b - 1) / b; }\n"
        "cudaError_t cudaCheck(cudaError_t e) { return e; }\n"
        "extern \"C\" cudaError_t cudaEventQuery(cudaEvent_t) { return cudaSuccess; }\n");
  const fs::path work = work_root() / "definitions-work";
  fs::create_directories(work);
  const Toolchain tc = toolchain("00_naive", "learner", work);
  std::vector<std::string> argv = {tc.nvcc};
  argv.insert(argv.end(), tc.compile_flags.begin(), tc.compile_flags.end());
  argv.insert(argv.end(), {"-c", (dir / "kernel.cu").string(), "-o", (work / "kernel.o").string()});
  const ProcessResult r = run_process(argv, (work / "compile.log").string(), 300);
  ASSERT_TRUE(!r.timed_out && r.signal == 0 && r.exit_code == 0) << "see " << (work / "compile.log");
  const std::vector<Refusal> refusals = check_object(tc, rules(), "00_naive", (work / "kernel.o").string());
  ASSERT_EQ(refusals.size(), 1u) << joined(refusals);
  EXPECT_NE(refusals[0].reason.find("defines cudaEventQuery(), a function of the C library or the CUDA runtime"),
            std::string::npos)
      << refusals[0].reason;
}

TEST(StaticChecks, EveryManifestChapterHasRules) {
  for (const auto& [slug, chapter] : rules().chapters) {
    EXPECT_TRUE(fs::is_regular_file(kSourceDir / "solutions" / slug / "kernel.cu")) << slug;
  }
}

// The idea notes of the references, where cuobjdump is found (PyPI: nvidia-cuda-cuobjdump).
TEST(StaticChecks, ReferencesShowTheirIdea) {
  if (std::string(WORKBOOK_CUOBJDUMP).empty()) GTEST_SKIP() << "no cuobjdump: idea notes not computed";
  for (const Case& c : cases()) {
    if (c.tree != "solutions") continue;
    const Outcome& o = outcomes().at(c.name);
    for (const IdeaNote& note : o.ideas) {
      std::cout << "  " << c.slug << ": " << note.what << ": " << note.evidence << "\n";
      EXPECT_TRUE(note.shown) << c.slug << ": " << note.what << ": " << note.evidence;
    }
  }
}

TEST(StaticChecks, StubsDoNotShowTheIdeaInTheMachineCode) {
  if (std::string(WORKBOOK_CUOBJDUMP).empty()) GTEST_SKIP() << "no cuobjdump: idea notes not computed";
  for (const Case& c : cases()) {
    if (c.tree != "chapters") continue;
    for (const IdeaNote& note : outcomes().at(c.name).ideas) {
      EXPECT_FALSE(note.shown) << c.slug << ": " << note.what << ": " << note.evidence;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The pieces.

TEST(StaticChecks, GlobMatch) {
  EXPECT_TRUE(glob_match("std::__throw_*", "std::__throw_length_error(char const*)"));
  EXPECT_TRUE(glob_match("exit", "exit"));
  EXPECT_FALSE(glob_match("exit", "_exit"));
  EXPECT_TRUE(glob_match("*printf*", "__fprintf_chk"));
  EXPECT_TRUE(glob_match("a*b*c", "abxbc"));
  EXPECT_FALSE(glob_match("a*b*c", "abxbd"));
  EXPECT_TRUE(glob_match("*", ""));
}

// The harness's namespace is where a symbol is defined, not what its template arguments name: the
// generic chapter's launch<workbook::ops::Sum> is its own code.
TEST(StaticChecks, DefinedInNamespace) {
  EXPECT_TRUE(defined_in_namespace("workbook::find_entry(std::string const&)", "workbook"));
  EXPECT_TRUE(defined_in_namespace("workbook::ops::Extreme<true>::operator()<float>(float, float) const", "workbook"));
  EXPECT_TRUE(defined_in_namespace("vtable for workbook::Thing", "workbook"));
  EXPECT_TRUE(defined_in_namespace("testing::internal::Foo<int>::bar()", "testing"));
  EXPECT_TRUE(defined_in_namespace("workbook::operator<<(std::ostream&, workbook::Problem const&)", "workbook"));
  EXPECT_FALSE(defined_in_namespace(
      "void (anonymous namespace)::launch<float, (anonymous namespace)::Fold<float, workbook::ops::Sum>, false>"
      "(workbook::Problem const&, void*, CUstream_st*)",
      "workbook"));
  EXPECT_FALSE(defined_in_namespace("workbook::Problem (anonymous namespace)::make(int)", "workbook"));
  EXPECT_FALSE(defined_in_namespace("std::vector<workbook::Element, std::allocator<workbook::Element> >::size() const",
                                    "workbook"));
  EXPECT_FALSE(
      defined_in_namespace("(anonymous namespace)::operator<(workbook::Problem, workbook::Problem)", "workbook"));
  EXPECT_FALSE(defined_in_namespace("my_workbook::f()", "workbook"));
  EXPECT_FALSE(defined_in_namespace("reduce", "workbook"));
}

void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

TEST(StaticChecks, LoadRulesNamesTheBadField) {
  const fs::path dir = work_root() / "manifests";
  fs::create_directories(dir);
  nlohmann::json manifest;
  {
    std::ifstream in(kSourceDir / "grader" / "manifest.json");
    manifest = nlohmann::json::parse(in);
  }
  auto expect_error = [&](nlohmann::json m, const std::string& needle) {
    const fs::path path = dir / "manifest.json";
    write(path, m.dump(2));
    try {
      load_rules(path.string());
      ADD_FAILURE() << "no error for " << needle;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  {
    auto m = manifest;
    m["chapters"][7]["idea"][0] = {{"what", "x"}, {"ptx", "ld.global.v4"}};
    expect_error(m, "unknown pattern kind \"ptx\"");
  }
  {
    auto m = manifest;
    m["chapters"][7]["idea"][0] = {{"what", "x"}, {"sass", "("}};
    expect_error(m, "chapters[7].idea[0].sass");
  }
  {
    auto m = manifest;
    m["chapters"][3].erase("symbols");
    expect_error(m, "missing \"symbols\"");
  }
  {
    auto m = manifest;
    m["trust"].erase("allowed_symbols");
    expect_error(m, "missing \"allowed_symbols\"");
  }
  {
    auto m = manifest;
    m["trust"]["refused_includes"][0]["pattern"] = "/usr/include/cub/";
    expect_error(m, "trust.refused_includes[0].pattern");
  }
  {
    auto m = manifest;
    m["chapters"][9]["given"] = {"workbook/block_pass.cuh", "../solutions/07_vectorized/kernel.cu"};
    expect_error(m, "chapters[9].given[1]");
  }
  {
    auto m = manifest;
    m["chapters"][9]["given"] = {"workbook/chapter.cuh"};
    expect_error(m, "chapters[9].given[0]");
  }
}

// Given code (a manifest entry's "given"): chapter 07's block pass, workbook/block_pass.cuh, is
// chapter 07's answer, so 07 and the chapters before it may not include it; 08 on may. The
// references are held to the same rule (chapter 07's holds the block pass's text itself).
TEST(StaticChecks, GivenCodeOnlyToTheChaptersThatListIt) {
  const std::string file = "workbook/block_pass.cuh";
  ASSERT_TRUE(fs::is_regular_file(kSourceDir / "harness" / file));
  ASSERT_EQ(rules().given_files.count(file), 1u);
  const std::string text =
      "#include \"workbook/chapter.cuh\"\n#include \"workbook/block_pass.cuh\"\n"
      "namespace { using namespace workbook::block_pass; }\n";
  auto check = [&](const std::string& slug, const std::string& subject) {
    const fs::path dir = work_root() / "given" / subject / slug;
    fs::create_directories(dir);
    write(dir / "kernel.cu", text);
    Toolchain tc = toolchain(slug, subject, work_root() / "given-work" / subject);
    tc.submission_dir = dir.parent_path().string();
    return check_includes(tc, rules(), slug, (dir / "kernel.cu").string());
  };

  for (const std::string subject : {"learner", "reference"}) {
    for (const std::string slug : {"07_vectorized", "00_naive"}) {
      const std::vector<Refusal> r = check(slug, subject);
      ASSERT_EQ(r.size(), 1u) << slug << ":" << joined(r);
      EXPECT_EQ(r[0].check, "include");
      EXPECT_NE(r[0].reason.find("includes harness/workbook/block_pass.cuh: "
                                 "workbook/block_pass.cuh is chapter 07_vectorized's answer; "
                                 "chapters 08_host_finish to 15_reproducible and 17_multi_gpu get it as given code"),
                std::string::npos)
          << r[0].reason;
    }
    EXPECT_TRUE(check("09_two_pass", subject).empty()) << joined(check("09_two_pass", subject));
  }

  // The manifest says which chapters: 08 to 15 and 17 (whose shard reduction is chapter 11's), none
  // before (and not 16, which reduces with templates of its own).
  for (const auto& [slug, chapter] : rules().chapters) {
    const bool given = std::find(chapter.given.begin(), chapter.given.end(), file) != chapter.given.end();
    EXPECT_EQ(given, (slug >= "08_host_finish" && slug <= "15_reproducible") || slug == "17_multi_gpu") << slug;
  }
}

// Given code that is no chapter's answer: workbook/cluster_launch.cuh, what launching in clusters
// takes, is given to chapter 13 alone. Another chapter that includes it, before or after, is told
// which chapters it is given to.
TEST(StaticChecks, ScaffoldingGivenToOneChapter) {
  const std::string file = "workbook/cluster_launch.cuh";
  ASSERT_TRUE(fs::is_regular_file(kSourceDir / "harness" / file));
  const std::string text =
      "#include \"workbook/chapter.cuh\"\n#include \"workbook/cluster_launch.cuh\"\n"
      "namespace { using namespace workbook::cluster_launch; }\n";
  auto check = [&](const std::string& slug) {
    const fs::path dir = work_root() / "given-once" / slug;
    fs::create_directories(dir);
    write(dir / "kernel.cu", text);
    Toolchain tc = toolchain(slug, "learner", work_root() / "given-once-work");
    tc.submission_dir = dir.parent_path().string();
    return check_includes(tc, rules(), slug, (dir / "kernel.cu").string());
  };
  for (const std::string slug : {"12_grid_sync", "14_pdl"}) {
    const std::vector<Refusal> r = check(slug);
    ASSERT_EQ(r.size(), 1u) << slug << ":" << joined(r);
    EXPECT_NE(r[0].reason.find("workbook/cluster_launch.cuh is given code only to the chapters whose entry in "
                               "grader/manifest.json lists it under \"given\" (13_clusters)"),
              std::string::npos)
        << r[0].reason;
  }
  EXPECT_TRUE(check("13_clusters").empty()) << joined(check("13_clusters"));
}

// A file that lies next to the source, nvcc -M on a missing include, and a FIFO.
TEST(StaticChecks, IncludeCornerCases) {
  const fs::path dir = work_root() / "corners" / "07_vectorized";
  fs::create_directories(dir);
  const Toolchain tc = toolchain("07_vectorized", "learner", work_root() / "corners-work");

  // A missing header: the compiler reports it, not the static check.
  write(dir / "kernel.cu", "#include \"workbook/chapter.cuh\"\n#include \"not_here.cuh\"\n");
  EXPECT_TRUE(check_includes(tc, rules(), "07_vectorized", (dir / "kernel.cu").string()).empty());

  // A missing file whose path alone is out of bounds, after a refused one that exists.
  write(dir / "kernel.cu", "#include \"/etc/hostname\"\n#include \"../../../solutions/nothing.cu\"\n");
  std::vector<Refusal> r = check_includes(tc, rules(), "07_vectorized", (dir / "kernel.cu").string());
  ASSERT_EQ(r.size(), 2u) << joined(r);
  EXPECT_NE(r[0].reason.find("/etc/hostname"), std::string::npos) << r[0].reason;
  EXPECT_NE(r[1].reason.find("nothing.cu"), std::string::npos) << r[1].reason;

  // A FIFO nobody writes: the preprocessor waits until the time limit.
  const fs::path fifo = dir / "fifo";
  fs::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  write(dir / "kernel.cu", "#include \"" + fifo.string() + "\"\n");
  Toolchain quick = tc;
  quick.preprocess_timeout_s = 3;
  r = check_includes(quick, rules(), "07_vectorized", (dir / "kernel.cu").string());
  ASSERT_EQ(r.size(), 1u) << joined(r);
  EXPECT_EQ(r[0].check, "preprocess");
  EXPECT_NE(r[0].reason.find("preprocessing did not finish"), std::string::npos) << r[0].reason;
}

}  // namespace

// The host assembler's listing of GCC 13's <iostream> (an asm() of libstdc++'s own, between #APP and
// #NO_APP) is honest code's; a directive the learner wrote there, or one that reads a file, is not.
TEST(StaticChecks, HostAssemblyOfLibstdcxxIsNotTheLearners) {
  const std::string iostream_gcc13 =
      "  10              \t#APP\n"
      "  11              \t\t.globl _ZSt21ios_base_library_initv\n"
      "  12              \t#NO_APP\n";
  EXPECT_TRUE(check_host_assembly(iostream_gcc13).empty());
  const std::string learners =
      "  10              \t#APP\n"
      "  11              \t\t.globl my_entry\n"
      "  12              \t#NO_APP\n"
      "  13              \t.incbin \"/etc/passwd\"\n";
  EXPECT_EQ(check_host_assembly(learners).size(), 2u);
}
