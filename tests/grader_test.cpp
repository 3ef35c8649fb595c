// Host-only tests of the grader's parts that need no GPU: text from children
// made valid UTF-8 and bounded, compiler errors as nvcc prints them, reports
// written atomically or not at all, the report's record, submissions found and
// sliced, the GPU's timing gate, and child processes
// that end with their whole group on a time limit or an interrupt.
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <sys/resource.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "build.hpp"
#include "judge/names.hpp"
#include "judge/timing.hpp"
#include "pool.hpp"
#include "process.hpp"
#include "progress.hpp"
#include "report.hpp"
#include "run.hpp"
#include "status.hpp"
#include "submissions.hpp"
#include "tester.hpp"
#include "text.hpp"
#include "timing_gate.hpp"

namespace fs = std::filesystem;

namespace grader {
namespace {

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("grader_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  return dir / name;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// True when nlohmann-json's strict writer accepts `text` (it throws on invalid UTF-8).
bool strict_json_accepts(const std::string& text) {
  try {
    (void)nlohmann::json(text).dump();
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

TEST(Text, EveryByteSequenceBecomesValidUtf8) {
  const std::string latin1 = "caf\xe9";
  const std::string gbk = "\xc4\xe3\xba\xc3";
  const std::string utf16 = std::string("\xff\xfe/\0/\0 \0", 8);
  const std::string overlong = "\xc0\xaf and \xe0\x80\xaf";
  const std::string surrogate = "\xed\xa0\x80";
  const std::string truncated = "ok \xe2\x82";
  const std::string stray = "\x80\xbf";
  for (const std::string& bad : {latin1, gbk, utf16, overlong, surrogate, truncated, stray}) {
    EXPECT_FALSE(strict_json_accepts(bad)) << "the test input should be invalid";
    const std::string fixed = valid_utf8(bad);
    EXPECT_TRUE(strict_json_accepts(fixed)) << fixed;
    EXPECT_EQ(valid_utf8(fixed), fixed) << "valid text is left as it is";
  }
  EXPECT_EQ(valid_utf8("caf\xc3\xa9 \xe4\xbd\xa0\xe5\xa5\xbd \xf0\x9f\x99\x82\n\tx"),
            "caf\xc3\xa9 \xe4\xbd\xa0\xe5\xa5\xbd \xf0\x9f\x99\x82\n\tx");
  EXPECT_EQ(valid_utf8("a\x1b[2Jb"), "a\\x1b[2Jb") << "no terminal escapes: shown as an escape";
  EXPECT_EQ(valid_utf8("line\r\n"), "line\n");
  std::string blob;
  for (int i = 0; i < 65536; ++i) blob += static_cast<char>((i * 7919) & 0xff);
  EXPECT_TRUE(strict_json_accepts(valid_utf8(blob)));
}

TEST(Text, EntriesAreBounded) {
  const std::string big(5 << 20, 'x');
  const std::string cut = bounded_text(big);
  EXPECT_LE(cut.size(), kMaxEntryBytes + 200);
  EXPECT_NE(cut.find("more bytes cut"), std::string::npos);
  // Never cut in the middle of a character.
  std::string wide;
  while (wide.size() < 2 * kMaxEntryBytes) wide += "\xe4\xbd\xa0";
  EXPECT_TRUE(strict_json_accepts(bounded_text(wide)));
  const fs::path file = scratch("big.log");
  std::ofstream(file, std::ios::binary) << std::string(3 << 20, 'y') << "\n\xff the end\n";
  const std::string read = read_bounded(file.string());
  EXPECT_LE(read.size(), kMaxEntryBytes + 200);
  EXPECT_NE(read.find("the end"), std::string::npos) << "the end of a long log is kept";
  EXPECT_TRUE(strict_json_accepts(read));
  EXPECT_EQ(tail_of(file.string(), 1), "\xef\xbf\xbd the end\n");
}

// What a learner's code says (a name it registered, what its process printed) is data: one
// visible line, whatever it holds.
TEST(Text, LearnerTextIsShownOnOneVisibleLine) {
  EXPECT_EQ(visible_line("03_idle_threads\n## passed\n"), "03_idle_threads\\n## passed\\n");
  EXPECT_EQ(visible_line("a\tb\rc"), "a\\tb\\rc");
  EXPECT_EQ(visible_line("\x1b[2J\x1b]0;title\x07 ok\x7f"), "\\x1b[2J\\x1b]0;title\\x07 ok\\x7f");
  EXPECT_EQ(visible_line(std::string("nul\0here", 8)), "nul\\x00here");
  EXPECT_EQ(visible_line("c1 \xc2\x85 \xc2\x9b"
                         "31m"),
            "c1 <U+0085> <U+009B>31m")
      << "C1 controls, NEL and CSI";
  EXPECT_EQ(visible_line("abc\xe2\x80\xae"
                         "fed"),
            "abc<U+202E>fed")
      << "a right-to-left override";
  EXPECT_EQ(visible_line("\xe2\x81\xa6x\xe2\x81\xa9\xe2\x80\x8b\xef\xbb\xbf\xd8\x9c\xe2\x80\xa8"),
            "<U+2066>x<U+2069><U+200B><U+FEFF><U+061C><U+2028>")
      << "isolates, zero-width and line-separator characters";
  EXPECT_EQ(visible_line("caf\xc3\xa9 \xe4\xbd\xa0\xe5\xa5\xbd \xf0\x9f\x99\x82"),
            "caf\xc3\xa9 \xe4\xbd\xa0\xe5\xa5\xbd \xf0\x9f\x99\x82")
      << "other characters are themselves";
  const std::string hostile = "x\n## passed\n\x1b[32m\xc2\x9b\xe2\x80\xae";
  const std::string once = visible_line(hostile);
  EXPECT_EQ(once.find('\n'), std::string::npos);
  EXPECT_EQ(visible_line(once), once) << "visible text is left as it is";
  EXPECT_TRUE(strict_json_accepts(once));
  // Bounded, never inside an escape, saying how much was cut.
  std::string flood;
  for (int i = 0; i < 1000; ++i) flood += "\x1b\xe2\x80\xae";
  const std::string cut = visible_line(flood, 100);
  EXPECT_LE(cut.size(), 100u + 40);
  EXPECT_NE(cut.find("more bytes cut]"), std::string::npos) << cut;
  EXPECT_EQ(cut.find('\n'), std::string::npos);
  EXPECT_EQ(cut.substr(0, 12), "\\x1b<U+202E>");
  // A block keeps its lines and tabs, and shows every other control.
  EXPECT_EQ(bounded_text("a\n\tb\r\n\x1b[1m\xe2\x80\xae\r"), "a\n\tb\n\\x1b[1m<U+202E>\\r");
  // A log excerpt is quoted: no line of it starts where the grader's own lines do.
  EXPECT_EQ(quoted_block("== 00_naive: passed\nok\n"), "    == 00_naive: passed\n    ok\n");
}

// UTF-16 (an editor's "Unicode", a Windows tool's output) is decoded, not shown as NULs.
TEST(Text, Utf16TextIsDecoded) {
  const auto utf16le = [](const std::string& ascii) {
    std::string out;
    for (const char c : ascii) out += std::string(1, c) + '\0';
    return out;
  };
  const std::string bom = "\xff\xfe" + utf16le("hi\n") + std::string("\x3d\xd8\x42\xde", 4);  // U+1F642
  EXPECT_EQ(valid_utf8(bom), "[UTF-16 text, decoded]\nhi\n\xf0\x9f\x99\x82");
  EXPECT_EQ(visible_line("\xfe\xff" + std::string("\0o\0k", 4)), "[UTF-16 text, decoded] ok");
  EXPECT_EQ(valid_utf8(utf16le("kernel.cu(3): error\n")), "[UTF-16 text, decoded]\nkernel.cu(3): error\n")
      << "without a byte-order mark";
  // One line of a log in UTF-16 among UTF-8 ones.
  const std::string mixed = "ninja: build stopped\n" + utf16le("#error \"x\"\n") + "FAILED: tests/x.o\n";
  const std::string shown = valid_utf8(mixed);
  EXPECT_EQ(shown, "ninja: build stopped\n[UTF-16 text, decoded] #error \"x\"\nFAILED: tests/x.o\n") << shown;
  EXPECT_EQ(shown.find("\\x00"), std::string::npos);
  EXPECT_EQ(shown.find("\xef\xbf\xbd"), std::string::npos);
  EXPECT_EQ(valid_utf8(shown), shown);
}

// The compiler's output about a file saved as UTF-16 reads as the error it is.
TEST(CompileErrors, Utf16OutputIsDecoded) {
  std::string text;
  for (const char c : std::string("/subs/bob/chapters/02_bank_conflicts/kernel.cu(3): error: #error "
                                  "directive: \"\xae ## passed\"\n    #error here\n    ^\n\n")) {
    text += std::string(1, c) + '\0';
  }
  const fs::path log = scratch("utf16.log");
  std::ofstream(log, std::ios::binary) << "\xff\xfe" << text;
  const std::string out = compile_errors(log.string(), "/subs/bob/chapters");
  EXPECT_NE(out.find("02_bank_conflicts/kernel.cu(3): error: #error directive: \"\xc2\xae ## passed\""),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("\\x00"), std::string::npos) << out;
  EXPECT_EQ(out.find("<U+0000>"), std::string::npos) << out;
  EXPECT_EQ(out.find('\0'), std::string::npos);
}

TEST(Text, SplitKeepsTheNonEmptyItems) {
  EXPECT_EQ(split("a|b||c|", '|'), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(split("", ':').empty());
  EXPECT_EQ(split("-O3 -DNDEBUG  -lineinfo", ' '), (std::vector<std::string>{"-O3", "-DNDEBUG", "-lineinfo"}));
}

TEST(CompileErrors, AsNvccPrintsThem) {
  const fs::path log = scratch("build.log");
  std::ofstream(log)
      << "[1/3] Building CUDA object tests/CMakeFiles/x.dir/kernel.cu.o\n"
         "FAILED: tests/CMakeFiles/00_naive_learner.dir/subs/alice/chapters/00_naive/kernel.cu.o\n"
         "/usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler -DWORKBOOK_SUBJECT=error ...\n"
         "/subs/alice/chapters/00_naive/kernel.cu(14): error: identifier \"undefined_name\" is undefined\n"
         "    float error_count = undefined_name;\n"
         "                        ^\n"
         "\n"
         "/subs/alice/chapters/00_naive/kernel.cu(20): error: expected a \";\"\n"
         "    }\n"
         "    ^\n"
         "\n"
         "2 errors detected in the compilation of \"/subs/alice/chapters/00_naive/kernel.cu\".\n"
         "ninja: build stopped: subcommand failed.\n";
  const std::string out = compile_errors(log.string(), "/subs/alice/chapters");
  EXPECT_EQ(out,
            "00_naive/kernel.cu(14): error: identifier \"undefined_name\" is undefined\n"
            "    float error_count = undefined_name;\n"
            "                        ^\n"
            "00_naive/kernel.cu(20): error: expected a \";\"\n"
            "    }\n"
            "    ^\n"
            "2 errors detected in the compilation of \"00_naive/kernel.cu\".\n");
  std::ofstream many(log);
  for (int i = 0; i < 100; ++i) many << "k.cu(" << i << "): error: bad " << i << "\n  x\n  ^\n\n";
  many.close();
  const std::string some = compile_errors(log.string(), "/nowhere");
  EXPECT_NE(some.find("k.cu(4): error"), std::string::npos);
  EXPECT_EQ(some.find("k.cu(5): error"), std::string::npos);
  EXPECT_NE(some.find("and 95 more errors"), std::string::npos);
}

// A grading build configured before bubblewrap or libseccomp was installed holds "-NOTFOUND" for
// it, and a configured build never looks again: the grader configures it again when its own build
// found the part (found_by_own_build).
TEST(GradingBuild, ConfiguredAgainWhereItLacksAPartFound) {
  const fs::path dir = scratch("grading-build");
  fs::create_directories(dir);
  std::ofstream(dir / "CMakeCache.txt") << "// a comment\n"
                                        << "WORKBOOK_BWRAP:FILEPATH=WORKBOOK_BWRAP-NOTFOUND\n"
                                        << "WORKBOOK_SECCOMP_LIBRARY:FILEPATH=/usr/lib/libseccomp.a\n";
  const Build build(dir.string(), 10);
  EXPECT_TRUE(build.caches({}));
  EXPECT_TRUE(build.caches({{"WORKBOOK_SECCOMP_LIBRARY", "/usr/lib/libseccomp.a"}}));
  EXPECT_FALSE(build.caches({{"WORKBOOK_BWRAP", "/usr/bin/bwrap"}}));
  EXPECT_FALSE(
      build.caches({{"WORKBOOK_SECCOMP_LIBRARY", "/usr/lib/libseccomp.a"}, {"WORKBOOK_BWRAP", "/usr/bin/bwrap"}}));
  EXPECT_FALSE(build.caches({{"WORKBOOK_SECCOMP_INCLUDE_DIR", "/usr/include"}}));  // not in the cache at all
  // Only what was found is passed on, never a "-NOTFOUND".
  for (const auto& [variable, value] : found_by_own_build()) {
    EXPECT_FALSE(value.empty()) << variable;
    EXPECT_EQ(value.find("NOTFOUND"), std::string::npos) << variable;
  }
}

TEST(Reports, WrittenAtomicallyOrNotAtAll) {
  const fs::path good = scratch("report.json");
  EXPECT_EQ(write_atomically(good.string(), "{}\n"), "");
  EXPECT_EQ(slurp(good), "{}\n");
  const std::string why = write_atomically("/nonexistent-dir/report.json", "{}");
  EXPECT_NE(why.find("does not exist"), std::string::npos) << why;
  EXPECT_NE(write_atomically(scratch("").string(), "{}"), "") << "a directory is not a file";
  for (const auto& entry : fs::directory_iterator(good.parent_path())) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << "no temporary left";
  }
}

workbook::Manifest three_chapters() {
  workbook::Manifest manifest;
  for (const char* slug : {"00_a", "01_b", "02_c"}) {
    workbook::ChapterSpec spec;
    spec.slug = slug;
    spec.correctness_points = 7;
    spec.performance_points = 3;
    spec.hints["ExactSums"] = "count every element once";
    manifest.chapters.push_back(spec);
  }
  return manifest;
}

void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

// One table says what every status means; each consumer (exit status, table, formats, progress,
// the student's next chapter) asks it. Every word reads back as the status it came from.
TEST(Status, OneTableClassifiesEveryStatus) {
  using O = Outcome;
  const std::vector<std::pair<Status, O>> cases = {{Status::passed, O::passed},
                                                   {Status::failed, O::failed},
                                                   {Status::rejected, O::failed},
                                                   {Status::does_not_compile, O::failed},
                                                   {Status::missing, O::failed},
                                                   {Status::from_word("a status no one knows"), O::failed},
                                                   {Status::crashed, O::error},
                                                   {Status::timed_out, O::error},
                                                   {Status::incomplete, O::error},
                                                   {Status::skipped_for("sm_90"), O::skipped},
                                                   {Status::skipped_for("2 GPUs"), O::skipped},
                                                   {Status::skipped_for("NCCL"), O::skipped},
                                                   {Status::no_gpu, O::untested},
                                                   {Status::interrupted, O::unknown},
                                                   {Status::not_graded, O::unknown},
                                                   {Status(), O::unknown}};
  for (const auto& [status, outcome] : cases) {
    const std::string word = status.word();
    EXPECT_EQ(status.outcome(), outcome) << "'" << word << "'";
    EXPECT_EQ(status.counts_as_failure(), outcome == O::failed || outcome == O::error) << word;
    EXPECT_EQ(status.is_done(), outcome == O::passed || outcome == O::skipped) << word;
    EXPECT_EQ(status.was_tested(), outcome != O::untested && outcome != O::unknown) << word;
    EXPECT_EQ(Status::from_word(word), status) << word;
    nlohmann::json j;
    put_status(j, status);
    EXPECT_EQ(status_of(j), status) << word;
  }
  EXPECT_EQ(Status::skipped_for("sm_90").word(), "skipped: needs sm_90");
  EXPECT_EQ(Status::from_word("skipped: needs sm_90").feature(), "sm_90");
  EXPECT_EQ(Status::skipped_for("2 GPUs").word(), "skipped: needs 2 GPUs");
  EXPECT_EQ(Status::from_word("skipped: needs NCCL").feature(), "NCCL");
  EXPECT_EQ(Status::from_word("a status no one knows").word(), "a status no one knows");
  EXPECT_EQ(fmt::format("[{:<8}]", Status(Status::failed)), "[failed  ]");
  EXPECT_TRUE(status_of({{"status", 3}}).is_pending()) << "a value that is not a key";
  EXPECT_EQ(Status().word_or("no status"), "no status");
}

TEST(Reports, TheRecordOfOneSubmission) {
  const workbook::Manifest manifest = three_chapters();
  GradingRun run;
  run.id = "alice";
  run.graded = true;
  run.device = DeviceSummary{"NVIDIA H200", 132, "13.0", "13.0", 90};
  ChapterResult passed, failed, refused;
  passed.spec = &manifest.chapters[0];
  passed.status = Status::passed;
  passed.tests_passed = passed.tests_total = 5;
  passed.bandwidth_passed = true;
  passed.points = 10;
  failed.spec = &manifest.chapters[1];
  failed.status = Status::failed;
  failed.tests_passed = 4;
  failed.tests_total = 5;
  failed.failed = {{"Sizes/ExactSums.X/n_3", "expected 3, got 2"}};
  failed.failed_groups = {"ExactSums"};
  refused.spec = &manifest.chapters[2];
  refused.status = Status::rejected;
  run.chapters = {passed, failed, refused};
  const nlohmann::json doc = report_document(run);
  EXPECT_EQ(doc["schema"], kReportSchema);
  EXPECT_TRUE(doc["complete"].get<bool>());
  EXPECT_EQ(doc["points"], 10);
  EXPECT_EQ(doc["max_points"], 30);
  EXPECT_EQ(doc["device"]["compute_capability"], 90);
  EXPECT_EQ(doc["chapters"][0]["correctness_points"], 7);
  EXPECT_EQ(doc["chapters"][0]["performance_points"], 3);
  EXPECT_EQ(doc["chapters"][1]["correctness_points"], 0);
  EXPECT_EQ(doc["chapters"][1]["hints"][0]["text"], "count every element once");
  EXPECT_EQ(doc["chapters"][2]["correctness_passed"], false);
  // Not graded (no GPU): never complete, so a rerun with a GPU grades it.
  run.graded = false;
  run.chapters[0].status = Status::no_gpu;
  EXPECT_FALSE(report_document(run)["complete"].get<bool>());
}

// A chapter this GPU cannot run (its manifest entry requires sm_90, the GPU is older) is
// skipped: complete, not failed, and its points count neither way.
TEST(Reports, ASkippedChapterCountsForNothing) {
  const workbook::Manifest manifest = three_chapters();
  GradingRun run;
  run.id = "ampere";
  run.graded = true;
  run.device = DeviceSummary{"NVIDIA A100", 108, "13.0", "13.0", 80};
  ChapterResult passed, skipped;
  passed.spec = &manifest.chapters[0];
  passed.status = Status::passed;
  passed.tests_passed = passed.tests_total = 5;
  passed.points = 10;
  skipped.spec = &manifest.chapters[1];
  skipped.status = Status::skipped_for("sm_90");
  run.chapters = {passed, skipped};
  const nlohmann::json doc = report_document(run);
  EXPECT_TRUE(doc["complete"].get<bool>());
  EXPECT_EQ(doc["points"], 10);
  EXPECT_EQ(doc["max_points"], 10) << "a skipped chapter's points are not counted";
  EXPECT_EQ(doc["chapters"][1]["status"], "skipped");
  EXPECT_EQ(doc["chapters"][1]["needs"], "sm_90");
  EXPECT_EQ(doc["chapters"][1]["status_text"], "skipped: needs sm_90");
  EXPECT_EQ(doc["chapters"][0]["status"], "passed");
  EXPECT_EQ(doc["chapters"][0].count("needs"), 0u);
}

TEST(Status, KeysForScriptsWordsForPeople) {
  // Every status reads back from its key, and from the word an older report held.
  for (const Status& s : {Status(Status::passed), Status(Status::does_not_compile), Status(Status::timed_out),
                          Status(Status::no_gpu), Status(Status::not_graded), Status::skipped_for("2 GPUs")}) {
    nlohmann::json j;
    put_status(j, s);
    EXPECT_EQ(status_of(j), s) << j.dump();
    EXPECT_EQ(Status::from_word(s.word()), s) << s.word();
  }
  EXPECT_EQ(Status(Status::does_not_compile).key(), "does_not_compile");
  EXPECT_EQ(Status(Status::does_not_compile).word(), "does not compile");
  EXPECT_EQ(Status(Status::no_gpu).key(), "no_gpu");
  EXPECT_EQ(Status::from_key("timed out"), Status(Status::timed_out)) << "a schema-3 report's word";
  EXPECT_EQ(Status::from_key("skipped: needs sm_90"), Status::skipped_for("sm_90")) << "a schema-3 report's word";
  EXPECT_EQ(Status::from_key("bogus").code(), Status::unrecognised);
}

TEST(Submissions, FoundNamedAndSliced) {
  const workbook::Manifest manifest = three_chapters();
  const fs::path dir = scratch("class");
  fs::remove_all(dir);
  write_file(dir / "alice" / "chapters" / "00_a" / "kernel.cu", "a");
  write_file(dir / "bob smith" / "wrapper" / "chapters" / "01_b" / "kernel.cu", "b");
  write_file(dir / "carol" / "01_b" / "kernel.cu", "c");
  write_file(dir / "dave.zip", "PK");
  write_file(dir / "eve.tar.gz", "gz");
  write_file(dir / "notes.txt", "x");
  write_file(dir / ".hidden" / "00_a" / "kernel.cu", "h");
  std::vector<std::string> ignored;
  const std::vector<Submission> all = find_submissions(dir.string(), manifest, &ignored);
  std::vector<std::string> ids;
  for (const Submission& s : all) ids.push_back(s.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"alice", "bob_smith", "carol", "dave", "eve"}));
  ASSERT_EQ(ignored.size(), 1u);
  EXPECT_NE(ignored[0].find("notes.txt"), std::string::npos);
  EXPECT_TRUE(all[3].archive);
  EXPECT_EQ(locate_chapters((dir / "bob smith").string(), manifest),
            (dir / "bob smith" / "wrapper" / "chapters").string());
  EXPECT_EQ(locate_chapters((dir / "carol").string(), manifest), (dir / "carol").string());
  EXPECT_EQ(locate_chapters(scratch("").string(), manifest), "");
  // A changed kernel.cu changes the fingerprint; the slices cover all, once.
  const std::string before = all[0].fingerprint;
  write_file(dir / "alice" / "chapters" / "00_a" / "kernel.cu", "a2");
  EXPECT_NE(find_submissions(dir.string(), manifest, nullptr)[0].fingerprint, before);
  std::multiset<std::string> seen;
  for (int k = 1; k <= 3; ++k) {
    for (const Submission& s : shard_of(all, k, 3)) seen.insert(s.id);
  }
  EXPECT_EQ(seen, std::multiset<std::string>(ids.begin(), ids.end()));
  EXPECT_EQ(shard_of(all, 2, 3).size(), 2u);
  EXPECT_EQ(safe_id("../x y"), "_.._x_y");
}

TEST(Submissions, ACompleteReportOfTheSameSubmissionIsKept) {
  const fs::path path = scratch("keep/report.json");
  Submission s;
  s.id = "alice";
  s.fingerprint = "00ff";
  nlohmann::json doc = {{"schema", kReportSchema},
                        {"grader_version", WORKBOOK_GRADER_VERSION},
                        {"complete", true},
                        {"sanitized", true},
                        {"submission", {{"id", "alice"}, {"fingerprint", "00ff"}}},
                        {"chapters", {{{"slug", "00_a"}}, {{"slug", "01_b"}}}}};
  const std::vector<std::string> slugs = {"00_a", "01_b"};
  const auto keep = [&](const nlohmann::json& d, const Submission& sub, bool sanitized,
                        const std::vector<std::string>& chosen) {
    write_file(path, d.dump());
    return report_to_keep(path.string(), sub, sanitized, chosen);
  };
  EXPECT_TRUE(keep(doc, s, true, slugs));
  EXPECT_FALSE(keep(doc, s, false, slugs)) << "graded without the sanitizers";
  EXPECT_FALSE(keep(doc, s, true, {"00_a"})) << "other chapters";
  Submission changed = s;
  changed.fingerprint = "0100";
  EXPECT_FALSE(keep(doc, changed, true, slugs)) << "the student handed in again";
  nlohmann::json d = doc;
  d["complete"] = false;
  EXPECT_FALSE(keep(d, s, true, slugs)) << "not graded or interrupted";
  d = doc;
  d["grader_version"] = "0.0.1";
  EXPECT_FALSE(keep(d, s, true, slugs)) << "another grader";
  write_file(path, "{\"schema\": 3, trunc");
  EXPECT_FALSE(report_to_keep(path.string(), s, true, slugs)) << "a damaged report";
}

// The builder waits for a free slot, a GPU thread waits for the builder, and a
// finished submission gives its slot back: no thread may wait on another in a
// circle, however many threads and however few slots.
TEST(Gpu, EverySubmissionIsFinishedAndGivesItsSlotBack) {
  struct Sub {
    int id = 0, chapters = 0;
    std::atomic<int> tested{0};
  };
  for (const int threads : {1, 3, 8}) {
    std::mutex m;
    std::condition_variable cv;
    int free_slots = 2, built = 0, finished = 0;
    const int total = 30;
    std::deque<std::shared_ptr<Sub>> ready;
    std::thread builder([&] {
      for (int i = 0; i < total; ++i) {
        std::unique_lock<std::mutex> l(m);
        cv.wait(l, [&] { return free_slots > 0; });
        --free_slots;
        auto s = std::make_shared<Sub>();
        s->id = i;
        s->chapters = i % 4;  // some with nothing to test
        ready.push_back(s);
        ++built;
        cv.notify_all();
      }
    });
    PoolTasks<Sub> tasks;
    tasks.fetch = [&]() -> std::shared_ptr<Sub> {
      std::unique_lock<std::mutex> l(m);
      cv.wait(l, [&] { return !ready.empty() || built == total; });
      if (ready.empty()) return nullptr;
      auto s = ready.front();
      ready.pop_front();
      return s;
    };
    tasks.chapters = [](Sub& s) {
      std::vector<std::size_t> c;
      for (int i = 0; i < s.chapters; ++i) c.push_back(static_cast<std::size_t>(i));
      return c;
    };
    tasks.test = [](Sub& s, std::size_t) {
      std::this_thread::sleep_for(std::chrono::microseconds(300 + 100 * (s.id % 3)));
      ++s.tested;
    };
    std::atomic<bool> all_tested{true};
    tasks.finish = [&](const std::shared_ptr<Sub>& s) {
      if (s->tested != s->chapters) all_tested = false;
      std::lock_guard<std::mutex> l(m);
      ++free_slots;
      ++finished;
      cv.notify_all();
    };
    std::thread pool([&] { run_pool(threads, tasks); });
    {
      std::unique_lock<std::mutex> l(m);
      ASSERT_TRUE(cv.wait_for(l, std::chrono::seconds(20), [&] { return finished == total; }))
          << threads << " threads: " << finished << " of " << total << " submissions finished (a deadlock)";
    }
    pool.join();
    builder.join();
    EXPECT_TRUE(all_tested.load()) << "a submission was finished before its last chapter";
  }
}

TEST(Pool, PlacesBoundTheChaptersInTheirTestsNotInTheirToolsRuns) {
  // Six threads, two places: at most two chapters in their tests at once; a chapter that gives its
  // place back (its tools' runs left) lets the next one begin its tests while it still runs.
  struct Sub {
    std::atomic<int> tested{0};
  };
  Places places(2);
  std::atomic<int> in_tests{0}, most_in_tests{0}, running{0}, most_running{0};
  auto sub = std::make_shared<Sub>();
  bool fetched = false;
  PoolTasks<Sub> tasks;
  tasks.fetch = [&]() -> std::shared_ptr<Sub> {
    if (fetched) return nullptr;
    fetched = true;
    return sub;
  };
  tasks.chapters = [](Sub&) { return std::vector<std::size_t>(12); };
  tasks.test = [&](Sub& s, std::size_t) {
    Place place(places);
    most_running = std::max(most_running.load(), ++running);
    most_in_tests = std::max(most_in_tests.load(), ++in_tests);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    --in_tests;
    place.give_back();  // its tools' runs
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    place.take();  // a retest takes it again
    most_in_tests = std::max(most_in_tests.load(), ++in_tests);
    --in_tests;
    --running;
    ++s.tested;
  };
  tasks.finish = [](const std::shared_ptr<Sub>&) {};
  run_pool(6, tasks);
  EXPECT_EQ(sub->tested.load(), 12);
  EXPECT_LE(most_in_tests.load(), 2) << "more chapters in their tests than places";
  EXPECT_GT(most_running.load(), 2) << "no chapter began its tests beside another's tools' runs";
}

TEST(Progress, AChapterEntryOfAnyShapeReadsWithItsFallbacks) {
  // The progress file is the grader's own, but a hand or an older grader may have left anything.
  const ChapterProgress odd = nlohmann::json{
      {"status", 3},
      {"points", "seven"},
      {"max_points", 10.0},
      {"learner_gbps", nullptr}}.get<ChapterProgress>();
  EXPECT_TRUE(odd.status.is_pending());
  EXPECT_EQ(odd.points, 0);
  EXPECT_EQ(odd.max_points, 10);
  EXPECT_FALSE(odd.learner_gbps);
  const ChapterProgress c{Status::passed, "all tests", "2026-12-02", 10, 10, 4100.5, 0.97, 0.8};
  const ChapterProgress back = nlohmann::json(c).get<ChapterProgress>();
  EXPECT_EQ(back.status, c.status);
  EXPECT_EQ(back.points, c.points);
  EXPECT_EQ(*back.learner_gbps, *c.learner_gbps);
  EXPECT_EQ(back.required_fraction, c.required_fraction);
}

TEST(Gpu, ATimedRunHasTheGpuToItself) {
  for (int batch : {1, 4}) {
    SCOPED_TRACE("timed runs in batches of " + std::to_string(batch));
    TimingGate gate(batch, 0.05);
    std::atomic<int> inside{0}, worst{0};
    std::atomic<bool> timed_alone{true};
    std::vector<std::thread> threads;
    for (int i = 0; i < 8; ++i) {
      threads.emplace_back([&, i] {
        for (int k = 0; k < 50; ++k) {
          if ((i + k) % 5 == 0) {
            gate.lock();
            if (inside.load() != 0) timed_alone = false;
            std::this_thread::sleep_for(std::chrono::microseconds(200));
            if (inside.load() != 0) timed_alone = false;
            gate.unlock();
          } else {
            gate.lock_shared();
            worst = std::max(worst.load(), ++inside);
            std::this_thread::sleep_for(std::chrono::microseconds(100));
            --inside;
            gate.unlock_shared();
          }
        }
      });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_TRUE(timed_alone.load());
    EXPECT_GT(worst.load(), 1) << "test processes share the GPU";
  }
}

TEST(Gpu, TimedRunsWaitForABatchButNotForever) {
  // A batch of four, patience 0.3 s. One timed run waits behind a running test process: more
  // shared work may start meanwhile, until its patience is spent; then shared work waits, and
  // the timed run goes as soon as the GPU is free.
  TimingGate gate(4, 0.3);
  gate.lock_shared();  // a test process is running
  std::atomic<bool> timed_done{false};
  std::thread timed([&] {
    gate.lock();
    timed_done = true;
    gate.unlock();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto more = std::async(std::launch::async, [&] {
    gate.lock_shared();
    gate.unlock_shared();
  });
  EXPECT_EQ(more.wait_for(std::chrono::seconds(2)), std::future_status::ready)
      << "shared work stopped for a single timed run before its patience was spent";
  EXPECT_FALSE(timed_done.load()) << "a timed run took the GPU while a test process ran";
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  std::atomic<bool> later_ran{false};
  auto later = std::async(std::launch::async, [&] {
    gate.lock_shared();
    later_ran = !timed_done.load() ? false : true;
    gate.unlock_shared();
  });
  EXPECT_EQ(later.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout)
      << "new shared work started although a timed run had waited past its patience";
  gate.unlock_shared();
  timed.join();
  later.get();
  EXPECT_TRUE(timed_done.load());
  EXPECT_TRUE(later_ran.load()) << "the waiting test process went before the timed run";
}

TEST(Processes, ATimeLimitEndsTheWholeGroup) {
  const fs::path pid_file = scratch("grandchild.pid");
  fs::remove(pid_file);
  const ProcessResult r = run_process({"sh", "-c", "sleep 300 & echo $! > " + pid_file.string() + "; wait"},
                                      scratch("t.log").string(), 1.0);
  EXPECT_TRUE(r.timed_out);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const int grandchild = std::stoi(slurp(pid_file));
  // Gone, or a zombie waiting for a reaper (in a container, PID 1 may never reap it).
  const std::string stat = slurp("/proc/" + std::to_string(grandchild) + "/stat");
  const std::size_t paren = stat.rfind(')');
  const bool running = paren != std::string::npos && stat.size() > paren + 2 && stat[paren + 2] != 'Z';
  EXPECT_FALSE(running) << "the grandchild (a test's host thread, nvcc's cicc) must be gone: " << stat;
}

TEST(Processes, TheChannelIsAnInheritedDescriptor) {
  ProcessOptions options;
  options.channel_variable = workbook::names::kResultFdVariable;
  const ProcessResult r = run_process(
      {"sh", "-c", std::string("echo '{\"event\":\"end\"}' >&$") + workbook::names::kResultFdVariable + "; echo noise"},
      scratch("c.log").string(), 10, options);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.channel, "{\"event\":\"end\"}\n");
  EXPECT_EQ(slurp(scratch("c.log")), "noise\n") << "stdout is a log, never results";
}

// The builder's lower priority is its thread's alone (the GPU workers and their test processes keep
// theirs), and every process and thread it starts inherits it: the compilers, the checks' tools.
TEST(Processes, TheBuildersPriorityIsItsThreadsAndItsChildrens) {
  const int before = getpriority(PRIO_PROCESS, 0);
  if (before >= kBuilderNice) GTEST_SKIP() << "this process already runs at nice " << before;
  int builder = 0, builders_thread = 0;
  std::string child;
  std::thread([&] {
    lower_to_builder_priority();
    builder = getpriority(PRIO_PROCESS, 0);
    std::thread([&] { builders_thread = getpriority(PRIO_PROCESS, 0); }).join();
    run_process({"sh", "-c", "cut -d' ' -f19 /proc/self/stat"}, scratch("nice.log").string(), 10);
    child = slurp(scratch("nice.log"));
  }).join();
  EXPECT_EQ(builder, kBuilderNice);
  EXPECT_EQ(builders_thread, kBuilderNice) << "a thread the builder starts (a check's) inherits its priority";
  EXPECT_EQ(child, std::to_string(kBuilderNice) + "\n") << "a process the builder starts inherits its priority";
  EXPECT_EQ(getpriority(PRIO_PROCESS, 0), before) << "the other threads keep theirs";
}

// grader debug shows a tool's output as it comes, through run_process: whole lines, stdout and
// stderr both, a last line without its newline too, and nothing written to the log.
TEST(Processes, OutputCanBeStreamedLineByLine) {
  std::vector<std::string> lines;
  ProcessOptions options;
  options.on_output = [&](std::string_view line) { lines.emplace_back(line); };
  fs::remove(scratch("s.log"));
  const ProcessResult r = run_process({"sh", "-c", "echo one; echo two >&2; sleep 0.2; printf three"},
                                      scratch("s.log").string(), 10, options);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(lines, (std::vector<std::string>{"one\n", "two\n", "three"}));
  EXPECT_FALSE(fs::exists(scratch("s.log")));
}

// One judge for a chapter: it asks for the GPU alone (Event::alone) and waits for one byte on
// its grant pipe; the grader's answer may take as long as the GPU takes to drain, which counts
// toward neither of the process's limits; a refusal closes the pipe.
std::string grant_script() {
  return std::string("echo '{\"event\":\"alone\"}' >&$") + workbook::names::kResultFdVariable + "; b=$(head -c1 <&$" +
         workbook::names::kGrantFdVariable + " | od -An -tu1 | tr -d ' ');" +
         " echo \"{\\\"event\\\":\\\"end\\\",\\\"runner_exit\\\":${b:-0}}\" >&$" + workbook::names::kResultFdVariable;
}

TEST(Processes, AnAloneRequestIsAnsweredOnTheGrantPipe) {
  int asked = 0;
  const TestRun run = run_tests({"sh", "-c", grant_script()}, scratch("g.log").string(), 1.0, {}, 1.0,
                                [&](workbook::channel::Event event, const TestRun& so_far) {
                                  if (event != workbook::channel::Event::alone) return ProcessOptions::Grant::none;
                                  EXPECT_TRUE(so_far.asked_alone) << "the event is in the run before the callback";
                                  ++asked;
                                  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the GPU drains
                                  return ProcessOptions::Grant::grant;
                                });
  EXPECT_EQ(asked, 1);
  EXPECT_TRUE(run.asked_alone);
  EXPECT_FALSE(run.process.timed_out) << "the wait for the grant is not the process's time";
  EXPECT_TRUE(run.ended);
  EXPECT_EQ(run.runner_exit, 1) << "the judge read the grant's byte: " << slurp(scratch("g.log"));
}

TEST(Processes, ARefusedAloneRequestClosesTheGrantPipe) {
  const TestRun run = run_tests({"sh", "-c", grant_script()}, scratch("r.log").string(), 10, {}, 0,
                                [](workbook::channel::Event event, const TestRun&) {
                                  return event == workbook::channel::Event::alone ? ProcessOptions::Grant::refuse
                                                                                  : ProcessOptions::Grant::none;
                                });
  EXPECT_TRUE(run.ended);
  EXPECT_EQ(run.runner_exit, 0) << "the judge read the end of the pipe, no byte";
}

// A chapter's one judge reports the timed tests when it was granted the GPU alone, and also when one
// failed before it asked (its inputs could not have their device memory): then the run is whole, and
// the failure is graded as one, not as a run that reported a test the grader did not ask for.
TEST(Processes, ATimedTestThatFailsBeforeItsGrantIsExpected) {
  const std::vector<std::string> shared = {"Sizes/ExactSums.A/n_1", "Empty.NothingToAdd"};
  const std::vector<std::string> alone = {"Bandwidth.TimedCallsDoTheWork"};
  TestRun run;
  run.tests.push_back({"Sizes/ExactSums.A/n_1", "ExactSums", workbook::channel::Result::passed, {}, {}, false});
  EXPECT_EQ(tests_to_report(shared, alone, false, run), shared) << "no timed test begun, none expected";
  EXPECT_EQ(tests_to_report(shared, alone, true, run).size(), 3u) << "granted the GPU alone: the timed tests too";
  run.tests.push_back({"Bandwidth.TimedCallsDoTheWork",
                       "Bandwidth",
                       workbook::channel::Result::failed,
                       {"cuMemCreate of 538968064 bytes: out of memory"},
                       {},
                       true});
  const std::vector<std::string> expected = tests_to_report(shared, alone, false, run);
  EXPECT_EQ(expected.size(), 3u) << "a timed test reported without a grant is one the grader asked for";
  EXPECT_EQ(expected.back(), alone.front());
}

TEST(Timing, TheMiddleSpreadIgnoresAFewLateBatchesNotAMovedMedian) {
  workbook::BatchTimes t;
  t.calls = 16;
  t.many = {2.70, 2.71, 2.69, 2.70, 2.72, 2.70, 2.71, 2.69, 2.70, 2.71, 2.70, 2.72, 2.70, 6.00, 5.10};
  EXPECT_GT(t.spread(), 1.0) << "two batches a few milliseconds late widen the range";
  EXPECT_LT(t.middle_spread(), 0.02) << "but not the middle half, nor the median";
  t.many = {2.70, 2.71, 2.69, 2.70, 2.72, 2.70, 2.71, 2.69, 2.70, 2.71, 3.30, 3.40, 3.35, 3.30, 3.50};
  EXPECT_GT(t.middle_spread(), 0.1) << "a third of the batches slowed widens the middle half too";
  t.many = {1.0, 2.0, 3.0};
  EXPECT_DOUBLE_EQ(t.middle_spread(), t.spread()) << "too few batches for quartiles: the range";
}

TEST(Processes, AChapterOutOfTimeBesideOthersIsTestedAgainAlone) {
  ChapterResult r;
  r.status = Status(Status::timed_out);
  EXPECT_FALSE(test_again_alone(r)) << "a hang with the GPU alone is a verdict";
  r.crowded = true;
  EXPECT_TRUE(test_again_alone(r)) << "out of time beside others: no verdict yet";
  r.status = Status(Status::interrupted);
  EXPECT_FALSE(test_again_alone(r)) << "an interrupted grading ends";
  ChapterResult first, again;
  first.crowded = true;
  again.status = Status(Status::timed_out);
  EXPECT_NE(retest_note(first, again).find("again with the GPU alone"), std::string::npos);
  again.status = Status();
  EXPECT_NE(retest_note(first, again).find("ran out of time beside other test processes"), std::string::npos);
  first.starved = true;
  EXPECT_NE(retest_note(first, again).find("device memory"), std::string::npos);
}

// A fake judge's script: each line sends one event on the result channel, as a judge does; a
// request (alone, sanitize) then waits for the grader's byte on the grant pipe.
std::string send_event(const nlohmann::json& event) {
  return "echo '" + event.dump() + "' >&$" + workbook::names::kResultFdVariable + "\n";
}
std::string request_event(const nlohmann::json& event) {
  std::string line = send_event(event);
  line.pop_back();
  return line + "; head -c1 <&$" + workbook::names::kGrantFdVariable + " >/dev/null\n";
}
nlohmann::json test_event(const std::string& name, const char* result) {
  return {{"event", workbook::channel::Event::test},
          {"name", name},
          {"result", result},
          {"failures", nlohmann::json::array()}};
}

// One judge for a chapter: after its tests (end), it asks for each tool's run (sanitize), waits for the
// grant, and closes the run (sanitized). Each run gets its own events, and how the process ended
// belongs to the last run it started, not to the tests before it.
TEST(Processes, EachSanitizerRunInOneJudgeIsReadApart) {
  using workbook::channel::Event;
  const fs::path script = scratch("one_judge.sh");
  std::ofstream(script) << send_event({{"event", Event::begin}, {"problem", ""}})
                        << send_event(test_event("Sizes/ExactSums.A/n_1", "passed"))
                        << send_event({{"event", Event::end}, {"runner_exit", 0}})
                        << request_event({{"event", Event::sanitize}, {"tool", "memcheck"}})
                        << send_event(test_event("Sizes/ExactSums.A/n_1", "passed"))
                        << send_event(
                               {{"event", Event::sanitized}, {"tool", "memcheck"}, {"problem", ""}, {"runner_exit", 0}})
                        << request_event({{"event", Event::sanitize}, {"tool", "racecheck"}})
                        << send_event(test_event("Sizes/ExactSums.A/n_1", "failed")) << "exit 3\n";
  std::vector<std::string> asked;
  const TestRun run = run_tests({"sh", script.string()}, scratch("one_judge.log").string(), 10, {}, 0,
                                [&](Event event, const TestRun& so_far) {
                                  if (event != Event::sanitize) return ProcessOptions::Grant::none;
                                  asked.push_back(so_far.sanitized.back().tool);
                                  return ProcessOptions::Grant::grant;
                                });
  EXPECT_EQ(asked, (std::vector<std::string>{"memcheck", "racecheck"}));
  ASSERT_EQ(run.tests.size(), 1u);
  EXPECT_TRUE(run.ended);
  EXPECT_EQ(run.process.exit_code, 0) << "the tests' part ended well; the process ended in a tool's run";
  ASSERT_EQ(run.sanitized.size(), 2u);
  EXPECT_TRUE(run.sanitized[0].ended);
  EXPECT_EQ(run.sanitized[0].runner_exit, 0);
  EXPECT_EQ(run.sanitized[0].process.exit_code, 0);
  ASSERT_EQ(run.sanitized[1].tests.size(), 1u);
  EXPECT_EQ(run.sanitized[1].tests[0].result, workbook::channel::Result::failed);
  EXPECT_FALSE(run.sanitized[1].ended);
  EXPECT_EQ(run.sanitized[1].process.exit_code, 3);
}

// A tool's run is slower: after Event::sanitize the silence a judge may keep is
// kSanitizerTimeFactor times the tests' (here 0.4 s, then 1.6 s), and no more.
TEST(Processes, AToolRunMayBeSilentLongerThanTheTests) {
  using workbook::channel::Event;
  const auto script = [&](const char* name, const char* pause) {
    const fs::path path = scratch(name);
    std::ofstream(path)
        << send_event({{"event", Event::begin}, {"problem", ""}})
        << send_event({{"event", Event::end}, {"runner_exit", 0}})
        << request_event({{"event", Event::sanitize}, {"tool", "memcheck"}}) << "sleep " << pause << "\n"
        << send_event({{"event", Event::sanitized}, {"tool", "memcheck"}, {"problem", ""}, {"runner_exit", 0}});
    return path.string();
  };
  const auto go = [](Event event, const TestRun&) {
    return event == Event::sanitize ? ProcessOptions::Grant::grant : ProcessOptions::Grant::none;
  };
  const TestRun slow =
      run_tests({"sh", script("tool_slow.sh", "1")}, scratch("tool_slow.log").string(), 30, {}, 0.4, go);
  ASSERT_EQ(slow.sanitized.size(), 1u);
  EXPECT_FALSE(slow.sanitized[0].process.timed_out) << "1 s of silence under a tool is allowed (1.6 s)";
  EXPECT_TRUE(slow.sanitized[0].ended);
  const TestRun hung =
      run_tests({"sh", script("tool_hung.sh", "5")}, scratch("tool_hung.log").string(), 30, {}, 0.4, go);
  ASSERT_EQ(hung.sanitized.size(), 1u);
  EXPECT_TRUE(hung.sanitized[0].process.timed_out && hung.sanitized[0].process.silent)
      << "5 s of silence under a tool is not";
  EXPECT_FALSE(hung.process.timed_out) << "the tests before it ended well";
}

// A judge's test event carries a Bandwidth test's figures as JSON numbers (channel.hpp, Bandwidth),
// read into the record as they were sent; a test without them has none. (Before the interrupt
// test below: once the process was interrupted, no child runs.)
TEST(Processes, TheChannelCarriesBandwidthAsNumbers) {
  using workbook::channel::Bandwidth;
  using workbook::channel::Event;
  const nlohmann::json timed = {{"event", Event::test},
                                {"name", "Timing/Bandwidth.AtLeastTheFloor/n_134217728"},
                                {"result", "passed"},
                                {"failures", nlohmann::json::array()},
                                {"ms", 812},
                                {"bandwidth", Bandwidth{4032.25, 4371.5, 4100.0, 240, 16, {16, 8}}}};
  const nlohmann::json plain = {{"event", Event::test},
                                {"name", "Sizes/ExactSums.EveryElementCountedOnce/n_1000"},
                                {"result", "passed"},
                                {"failures", nlohmann::json::array()},
                                {"ms", 1}};
  nlohmann::json odd = plain;  // a result no test has is not read as any (the enum's first is "passed")
  odd["result"] = "great";
  const std::string lines =
      timed.dump() + "\n" + plain.dump() + "\n" + odd.dump() + "\n" + nlohmann::json{{"event", Event::end}}.dump();
  const fs::path script = scratch("judge.sh");
  std::ofstream(script) << "cat >&$" << workbook::names::kResultFdVariable << " <<'EOF'\n" << lines << "\nEOF\n";
  const TestRun run = run_tests({"sh", script.string()}, scratch("judge.log").string(), 10, {});
  ASSERT_EQ(run.tests.size(), 2u);
  ASSERT_TRUE(run.tests[0].bandwidth.has_value());
  EXPECT_EQ(run.tests[0].bandwidth->subject_gbps, 4032.25);
  EXPECT_EQ(run.tests[0].bandwidth->ceiling_gbps, 4371.5);
  EXPECT_EQ(run.tests[0].bandwidth->timed_inputs, 16);
  EXPECT_EQ(run.tests[0].bandwidth->ceiling_shape.blocks_per_sm, 16);
  EXPECT_EQ(run.tests[0].bandwidth->ceiling_shape.loads, 8);
  EXPECT_FALSE(run.tests[1].bandwidth.has_value());
  EXPECT_EQ(run.tests[1].result, workbook::channel::Result::passed);
  EXPECT_EQ(run.unreadable_lines, 1);
}

// The judge's word that a test was starved (another process held the device memory it needed), the
// GPU memory its runner held, and compute-sanitizer's findings, all read from the channel, never
// from what the chapter printed; the judge's TMPDIR is the grader's, gone once the judge ends.
TEST(Processes, StarvedFindingsAndMemoryComeFromTheChannel) {
  using workbook::channel::Event;
  nlohmann::json starved = test_event("Sizes/ExactSums.EveryElementCountedOnce/n_1000", "failed");
  starved["starved"] = true;
  const nlohmann::json printed = {{"event", Event::sanitized},
                                  {"tool", "memcheck"},
                                  {"problem", ""},
                                  {"runner_exit", 97},
                                  {"gpu_bytes", 536870912},
                                  {"findings", {"========= Invalid __global__ read", "\x1b[2J"}}};
  const fs::path script = scratch("starved.sh");
  std::ofstream(script) << "echo '========= a line the chapter printed'\n"
                        << "echo \"$TMPDIR\" > " << scratch("judge_tmpdir.txt").string() << "\n"
                        << "touch \"$TMPDIR/left\"\n"
                        << send_event({{"event", Event::begin}, {"problem", ""}}) << send_event(starved)
                        << send_event({{"event", Event::end}, {"runner_exit", 0}, {"gpu_bytes", 1073741824}})
                        << request_event({{"event", Event::sanitize}, {"tool", "memcheck"}}) << send_event(printed);
  const TestRun run =
      run_tests({"sh", script.string()}, scratch("starved.log").string(), 10, {}, 0, [](Event event, const TestRun&) {
        return event == Event::sanitize ? ProcessOptions::Grant::grant : ProcessOptions::Grant::none;
      });
  ASSERT_EQ(run.tests.size(), 1u);
  EXPECT_TRUE(run.tests[0].starved);
  EXPECT_TRUE(run.starved());
  ASSERT_TRUE(run.gpu_bytes.has_value());
  EXPECT_EQ(*run.gpu_bytes, 1073741824u);
  EXPECT_TRUE(run.findings.empty()) << "the chapter's own lines are never findings";
  ASSERT_EQ(run.sanitized.size(), 1u);
  ASSERT_EQ(run.sanitized[0].findings.size(), 2u);
  EXPECT_EQ(run.sanitized[0].findings[0], "========= Invalid __global__ read");
  EXPECT_EQ(run.sanitized[0].findings[1].find('\x1b'), std::string::npos) << "a finding is shown on one visible line";
  std::string tmpdir;
  std::getline(std::ifstream(scratch("judge_tmpdir.txt")), tmpdir);
  EXPECT_NE(tmpdir.find("workbook-judge-"), std::string::npos) << tmpdir;
  EXPECT_FALSE(fs::exists(tmpdir)) << "the judge's temporary folder is removed when it ends";
}

// Two failures that are not the chapter's: its process could not start for want of device memory
// (other processes held it), and the judge's own CUDA context broke (the chapter's code runs apart
// and cannot reach it). The judge says which on the channel; the chapter is then tested again alone.
TEST(Processes, AStarvedStartAndABrokenJudgeAreTestedAgainAlone) {
  using workbook::channel::Event;
  const fs::path script = scratch("not_the_chapter.sh");
  std::ofstream(script) << send_event(
      {{"event", Event::begin}, {"problem", "the runner cannot use the GPU: out of memory"}, {"starved", true}});
  const TestRun start = run_tests({"sh", script.string()}, scratch("not_the_chapter.log").string(), 10, {}, 0);
  EXPECT_TRUE(start.start_starved);
  EXPECT_TRUE(start.starved()) << "a process that could not start for want of memory is starved";
  ChapterResult r;
  r.starved = start.starved();  // as the tester tallies a run
  r.status = Status(Status::failed);
  EXPECT_TRUE(test_again_alone(r));

  const fs::path broke = scratch("judge_broke.sh");
  std::ofstream(broke) << send_event({{"event", Event::begin}, {"problem", ""}})
                       << send_event({{"event", Event::context_lost},
                                      {"name", "HugeInput.MoreThan2To31Elements"},
                                      {"error", "unspecified launch failure"},
                                      {"judge", true}});
  const TestRun run = run_tests({"sh", broke.string()}, scratch("judge_broke.log").string(), 10, {}, 0);
  EXPECT_TRUE(run.judge_broken());
  EXPECT_FALSE(run.starved());
  ChapterResult first;
  first.judge_broke = run.judge_broken();
  first.status = Status(Status::crashed);
  EXPECT_TRUE(test_again_alone(first)) << "the judge's own context is no verdict on the chapter";
  ChapterResult again;
  again.status = Status(Status::passed);
  EXPECT_NE(retest_note(first, again).find("the judge's own CUDA context broke"), std::string::npos);
  again.judge_broke = true;
  again.status = Status(Status::crashed);
  EXPECT_NE(retest_note(first, again).find("not of this code"), std::string::npos);
}

TEST(Processes, AnInterruptEndsTheChildAndIsRemembered) {
  install_interrupt_handlers();
  std::thread interrupter([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kill(getpid(), SIGINT);
  });
  const ProcessResult r = run_process({"sleep", "60"}, scratch("i.log").string(), 30);
  interrupter.join();
  EXPECT_TRUE(r.interrupted);
  EXPECT_FALSE(r.timed_out);
  EXPECT_LT(r.seconds, 10);
  int sig = 0;
  EXPECT_TRUE(interrupted(&sig));
  EXPECT_EQ(sig, SIGINT);
  EXPECT_TRUE(run_process({"true"}, scratch("j.log").string(), 5).interrupted) << "nothing new starts";
}

}  // namespace
}  // namespace grader
