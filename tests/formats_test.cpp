// Host-only tests of the report's other formats: the student's Markdown page,
// Gradescope's and PrairieLearn's results.json, JUnit XML, the gradebook CSV
// and its id mapping, and the class summary. Each starts from the two example
// reports in tests/data (one graded on a GPU, one built without a GPU).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "formats.hpp"
#include "report_document.hpp"
#include "text.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {
namespace {

fs::path data_dir() {
#ifdef WORKBOOK_TEST_DATA
  return WORKBOOK_TEST_DATA;
#else
  return fs::path(__FILE__).parent_path() / "data";
#endif
}

json load(const std::string& name) {
  std::ifstream in(data_dir() / name);
  if (!in) throw std::runtime_error("cannot read " + (data_dir() / name).string());
  return json::parse(in);
}

// The graded example, its total made the sum of its chapters' points (10)
// whatever the file says, so that every format's total can be checked.
json graded() {
  json r = load("report-example.json");
  double points = 0;
  for (const json& c : r.at("chapters")) points += c.at("points").get<double>();
  r["points"] = points;
  return r;
}
json no_gpu() { return load("report-example-no-gpu.json"); }

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + what.size())) ++n;
  return n;
}

// The attribute `name` of the first element that starts with `tag_start`, e.g. "<testsuite name=\"alice/00_naive\"".
std::string attribute(const std::string& xml, const std::string& tag_start, const std::string& name) {
  const std::size_t tag = xml.find(tag_start);
  if (tag == std::string::npos) return "<no " + tag_start + ">";
  const std::size_t end = xml.find('>', tag);
  const std::size_t at = xml.find(" " + name + "=\"", tag);
  if (at == std::string::npos || at > end) return "<no " + name + ">";
  const std::size_t from = at + name.size() + 3;
  return xml.substr(from, xml.find('"', from) - from);
}

// Whether Python's XML parser accepts `xml`; nullopt-like -1 when python3 is not there.
int python_parses(const std::string& xml) {
  if (std::system("python3 -c 'import xml.etree.ElementTree' >/dev/null 2>&1") != 0) return -1;
  const fs::path file = fs::temp_directory_path() / ("formats_test_" + std::to_string(getpid()) + ".xml");
  {
    std::ofstream out(file, std::ios::binary);
    out << xml;
  }
  const std::string command =
      "python3 -c \"import xml.etree.ElementTree as E,sys; E.parse(sys.argv[1])\" '" + file.string() + "'";
  const int rc = std::system(command.c_str());
  fs::remove(file);
  return rc == 0 ? 1 : 0;
}

// ---- The report as a type ----

TEST(ReportDocument, WrittenAndReadBackIsTheSameReport) {
  // The example report read into the type and written again: every field the grader writes
  // survives, with the same values (the written form is what every reader reads).
  const json original = load("report-example.json");
  const ReportDocument doc = original.get<ReportDocument>();
  const json again = doc;
  const ReportDocument twice = again.get<ReportDocument>();
  EXPECT_EQ(json(twice), again);
  EXPECT_EQ(doc.id, original.at("submission").at("id").get<std::string>());
  ASSERT_EQ(doc.chapters.size(), original.at("chapters").size());
  for (std::size_t i = 0; i < doc.chapters.size(); ++i) {
    const json& c = original["chapters"][i];
    EXPECT_EQ(doc.chapters[i].slug, c.at("slug").get<std::string>());
    EXPECT_EQ(doc.chapters[i].status.key(), c.at("status").get<std::string>());
    EXPECT_EQ(doc.chapters[i].status.word(), c.at("status_text").get<std::string>());
    EXPECT_EQ(doc.chapters[i].points, c.at("points").get<double>());
    EXPECT_EQ(doc.chapters[i].failed.size(), c.at("failed_tests").size());
  }
}

TEST(ReportDocument, AnyShapeReadsWithFallbacksAndNeverThrows) {
  for (const json& odd :
       {json(nullptr), json(42), json::array(), json::object(),
        json{{"schema", "three"}, {"submission", 7}, {"chapters", {1, "x", nullptr, json::object()}}},
        json{{"graded", false},
             {"chapters", {{{"slug", "03_idle_threads"}, {"points", 7}, {"max_points", 10}, {"status", "passed"}}}}}}) {
    ReportDocument doc;
    EXPECT_NO_THROW(doc = odd.get<ReportDocument>()) << odd.dump();
    EXPECT_EQ(doc.schema, 0) << odd.dump();
  }
  const ReportDocument old =
      json{{"chapters", {{{"slug", "03_idle_threads"}, {"points", 7}, {"max_points", 10}, {"status", "passed"}}}}}
          .get<ReportDocument>();
  ASSERT_EQ(old.chapters.size(), 1u);
  // Before schema 3 a chapter had its points only: all of them count as correctness.
  EXPECT_EQ(old.chapters[0].correctness_points, 7);
  EXPECT_EQ(old.chapters[0].max_correctness, 10);
  EXPECT_TRUE(old.chapters[0].correctness_passed);
  EXPECT_TRUE(old.graded);
  EXPECT_EQ(old.id, "(no id)");
  EXPECT_EQ(old.name, "(no id)");
}

// ---- Gradescope ----

TEST(Gradescope, GradedReportHasScoresPerChapterAndTheirSum) {
  const json out = json::parse(gradescope_results(graded()));
  EXPECT_DOUBLE_EQ(out.at("score").get<double>(), 10);
  EXPECT_EQ(out.at("execution_time"), 25);  // 24.7 s, whole seconds as documented
  EXPECT_TRUE(out.at("execution_time").is_number_integer());
  EXPECT_EQ(out.at("visibility"), "visible");
  EXPECT_EQ(out.at("stdout_visibility"), "hidden");
  EXPECT_EQ(out.at("output_format"), "simple_format");
  const json& tests = out.at("tests");
  ASSERT_EQ(tests.size(), 6u);  // correctness and performance for each of 3 chapters
  double score = 0, max_score = 0;
  for (const json& t : tests) {
    score += t.at("score").get<double>();
    max_score += t.at("max_score").get<double>();
    EXPECT_EQ(t.at("visibility"), "visible");
    EXPECT_EQ(t.at("name_format"), "text");
    EXPECT_EQ(t.at("output_format"), "text");
  }
  EXPECT_DOUBLE_EQ(score, 10);
  EXPECT_DOUBLE_EQ(max_score, 30);

  EXPECT_EQ(tests[0].at("name"), "00_naive (V0) Shared-memory tree: correctness");
  EXPECT_EQ(tests[0].at("number"), "1.1");
  EXPECT_EQ(tests[0].at("status"), "passed");
  EXPECT_DOUBLE_EQ(tests[0].at("max_score").get<double>(), 7);
  EXPECT_EQ(tests[0].at("tags"), json::array({"00_naive", "correctness"}));
  EXPECT_EQ(tests[1].at("name"), "00_naive (V0) Shared-memory tree: performance");
  EXPECT_EQ(tests[1].at("status"), "passed");
  EXPECT_DOUBLE_EQ(tests[1].at("score").get<double>(), 3);
  EXPECT_DOUBLE_EQ(tests[1].at("max_score").get<double>(), 3);

  const json& idle = tests[2];
  EXPECT_EQ(idle.at("status"), "failed");
  EXPECT_DOUBLE_EQ(idle.at("score").get<double>(), 0);
  const std::string output = idle.at("output");
  EXPECT_NE(output.find("2 of 84 correctness tests failed"), std::string::npos) << output;
  EXPECT_NE(output.find("Sizes/ExactSums.EveryElementCountedOnce/n_1001"), std::string::npos);
  EXPECT_NE(output.find("element 1000 (block 0, the last one) was not counted"), std::string::npos);
  EXPECT_NE(output.find("Hint (MisalignedInput): The input may start at any 4-byte boundary."), std::string::npos);
  EXPECT_EQ(tests[3].at("status"), "failed");
  EXPECT_NE(tests[3].at("output").get<std::string>().find("Not measured"), std::string::npos);

  EXPECT_EQ(tests[4].at("status"), "failed");
  EXPECT_NE(tests[4].at("output").get<std::string>().find("\"float5\" is undefined"), std::string::npos);
}

TEST(Gradescope, LeaderboardHasTheGbpsOfCorrectChaptersOnly) {
  const json out = json::parse(gradescope_results(graded()));
  ASSERT_TRUE(out.contains("leaderboard"));
  const json& board = out.at("leaderboard");
  ASSERT_EQ(board.size(), 1u);  // 03 measured 2410.7 GB/s but is wrong; 07 did not compile
  EXPECT_EQ(board[0].at("name"), "00_naive GB/s");
  EXPECT_DOUBLE_EQ(board[0].at("value").get<double>(), 1630.2);
  EXPECT_EQ(board[0].at("order"), "desc");

  GradescopeOptions off;
  off.leaderboard = false;
  EXPECT_FALSE(json::parse(gradescope_results(graded(), off)).contains("leaderboard"));
}

TEST(Gradescope, VisibilityIsOneOfFourAndAppliesToEveryTest) {
  for (const char* v : {"visible", "hidden", "after_due_date", "after_published"}) {
    EXPECT_TRUE(valid_gradescope_visibility(v)) << v;
  }
  for (const char* v : {"", "Visible", "hiden", "after-due-date", "published"}) {
    EXPECT_FALSE(valid_gradescope_visibility(v)) << v;
  }
  GradescopeOptions later;
  later.visibility = "after_due_date";
  const json out = json::parse(gradescope_results(graded(), later));
  EXPECT_EQ(out.at("visibility"), "after_due_date");
  for (const json& t : out.at("tests")) EXPECT_EQ(t.at("visibility"), "after_due_date");

  GradescopeOptions typo;
  typo.visibility = "hiden";
  EXPECT_THROW(gradescope_results(graded(), typo), std::invalid_argument);
}

TEST(Gradescope, NotGradedShowsNoFailureAndSaysWhy) {
  const json out = json::parse(gradescope_results(no_gpu()));
  // The specification requires a top-level score when the tests carry none.
  EXPECT_DOUBLE_EQ(out.at("score").get<double>(), 0);
  const std::string output = out.at("output");
  EXPECT_EQ(output.rfind("Not graded: no GPU: no CUDA-capable device is detected\n", 0), 0u) << output;
  EXPECT_NE(output.find("not a grade"), std::string::npos);
  ASSERT_EQ(out.at("tests").size(), 2u);
  for (const json& t : out.at("tests")) {
    EXPECT_FALSE(t.contains("status")) << t.dump();
    EXPECT_FALSE(t.contains("score")) << t.dump();
    EXPECT_FALSE(t.contains("max_score")) << t.dump();
    EXPECT_NE(t.at("output").get<std::string>().find("not graded: no GPU"), std::string::npos);
  }
  EXPECT_FALSE(out.contains("leaderboard"));
  EXPECT_EQ(out.at("execution_time"), 31);
}

TEST(Gradescope, TopLevelOutputIsEscapedForItsHtmlFormat) {
  json r = no_gpu();
  r["not_graded_reason"] = "driver <b>& co</b>";
  const std::string output = json::parse(gradescope_results(r)).at("output");
  EXPECT_NE(output.find("Not graded: driver &lt;b&gt;&amp; co&lt;/b&gt;"), std::string::npos) << output;
}

// ---- PrairieLearn ----

TEST(PrairieLearn, GradedScoreIsAFractionAndTestsCarryPoints) {
  const json out = json::parse(prairielearn_results(graded()));
  EXPECT_EQ(out.at("gradable"), true);
  EXPECT_DOUBLE_EQ(out.at("score").get<double>(), 10.0 / 30.0);
  EXPECT_EQ(out.at("message"), "10 of 30 points.");
  ASSERT_EQ(out.at("tests").size(), 3u);
  const json& first = out.at("tests")[0];
  EXPECT_EQ(first.at("name"), "00_naive (V0) Shared-memory tree");
  EXPECT_DOUBLE_EQ(first.at("points").get<double>(), 10);
  EXPECT_DOUBLE_EQ(first.at("max_points").get<double>(), 10);
  EXPECT_EQ(first.at("message"), "passed");
  EXPECT_TRUE(first.contains("description"));
  const json& idle = out.at("tests")[1];
  EXPECT_DOUBLE_EQ(idle.at("points").get<double>(), 0);
  EXPECT_NE(idle.at("output").get<std::string>().find("n = 1003 at offset 1: expected 3, got 2"), std::string::npos);
  EXPECT_NE(out.at("output").get<std::string>().find("07_vectorized: does not compile, 0/10"), std::string::npos);
}

TEST(PrairieLearn, ScoreStaysInZeroToOne) {
  json over = graded();
  over["points"] = 45;  // more than max_points: clamped
  EXPECT_DOUBLE_EQ(json::parse(prairielearn_results(over)).at("score").get<double>(), 1.0);
  json none = graded();
  none["max_points"] = 0;
  EXPECT_DOUBLE_EQ(json::parse(prairielearn_results(none)).at("score").get<double>(), 0.0);
}

TEST(PrairieLearn, NotGradedIsNotGradableAndHasNoScore) {
  const json out = json::parse(prairielearn_results(no_gpu()));
  EXPECT_EQ(out.at("gradable"), false);
  EXPECT_FALSE(out.contains("score"));
  EXPECT_EQ(out.at("message"), "Not graded: no GPU: no CUDA-capable device is detected");
  EXPECT_EQ(out.at("format_errors"), json::array({"Not graded: no GPU: no CUDA-capable device is detected"}));
  ASSERT_EQ(out.at("tests").size(), 1u);
  EXPECT_FALSE(out.at("tests")[0].contains("points"));
  EXPECT_EQ(out.at("tests")[0].at("message"), "not graded: no GPU");
}

TEST(PrairieLearn, AGradedReportWithFailuresIsStillGradable) {
  json r = graded();
  for (json& c : r["chapters"]) c["status"] = "does_not_compile";
  EXPECT_EQ(json::parse(prairielearn_results(r)).at("gradable"), true);
}

// ---- JUnit XML ----

TEST(JUnit, CountsPerChapterAndInTotal) {
  const std::string xml = junit_xml({graded(), no_gpu()});
  EXPECT_EQ(count(xml, "<testsuite "), 4u);
  const std::string naive = "<testsuite name=\"alice/00_naive\"";
  EXPECT_EQ(attribute(xml, naive, "tests"), "4");  // 3 tests + performance
  EXPECT_EQ(attribute(xml, naive, "failures"), "0");
  EXPECT_EQ(attribute(xml, naive, "errors"), "0");
  EXPECT_EQ(attribute(xml, naive, "skipped"), "0");
  EXPECT_EQ(attribute(xml, naive, "time"), "6.100");
  EXPECT_EQ(attribute(xml, naive, "timestamp"), "2026-11-30T21:14:03Z");

  const std::string idle = "<testsuite name=\"alice/03_idle_threads\"";
  EXPECT_EQ(attribute(xml, idle, "tests"), "5");     // 4 tests + performance
  EXPECT_EQ(attribute(xml, idle, "failures"), "2");  // n_1001 and offset_1_n_1003
  EXPECT_EQ(attribute(xml, idle, "skipped"), "1");   // performance: not measured while wrong
  EXPECT_EQ(attribute(xml, idle, "time"), "3.900");

  const std::string vectorized = "<testsuite name=\"alice/07_vectorized\"";
  EXPECT_EQ(attribute(xml, vectorized, "tests"), "1");
  EXPECT_EQ(attribute(xml, vectorized, "failures"), "1");
  EXPECT_NE(xml.find("<testcase classname=\"alice.07_vectorized\" name=\"07_vectorized\">\n      <failure "
                     "type=\"does not compile\""),
            std::string::npos)
      << xml;

  const std::string bob = "<testsuite name=\"bob/00_naive\"";
  EXPECT_EQ(attribute(xml, bob, "tests"), "1");
  EXPECT_EQ(attribute(xml, bob, "failures"), "0");
  EXPECT_EQ(attribute(xml, bob, "skipped"), "1");
  EXPECT_NE(xml.find("<skipped message=\"not graded: no GPU: built and checked; grading needs a CUDA device\"/>"),
            std::string::npos);

  EXPECT_EQ(attribute(xml, "<testsuites", "tests"), "11");
  EXPECT_EQ(attribute(xml, "<testsuites", "failures"), "3");
  EXPECT_EQ(attribute(xml, "<testsuites", "errors"), "0");
  EXPECT_EQ(attribute(xml, "<testsuites", "time"), "12.000");  // 6.1 + 3.9 + 0 + 2.0

  EXPECT_NE(xml.find("<testcase classname=\"alice.03_idle_threads\" "
                     "name=\"Sizes/ExactSums.EveryElementCountedOnce/n_1001\">\n      <failure type=\"failed\" "
                     "message=\"n = 1001: expected 1, got 0\">n = 1001: expected 1, got 0\nelement 1000"),
            std::string::npos)
      << xml;
  EXPECT_EQ(python_parses(xml) != 0, true);
}

TEST(JUnit, SlowButCorrectFailsPerformanceAndACrashIsAnError) {
  json r = graded();
  json& naive = r["chapters"][0];
  naive["status"] = "failed";
  naive["bandwidth_passed"] = false;
  naive["bandwidth_ratio"] = 0.5;
  json& vectorized = r["chapters"][2];
  vectorized["status"] = "crashed";
  vectorized["detail"] = "misaligned address in test Sizes/ExactSums";
  const std::string xml = junit_xml({r});
  const std::string suite = "<testsuite name=\"alice/00_naive\"";
  EXPECT_EQ(attribute(xml, suite, "failures"), "1");
  EXPECT_NE(xml.find("name=\"performance\">\n      <failure type=\"performance\" message=\"not fast enough: 1630 "
                     "GB/s; the reference: 1702 GB/s; 50.0% of the reference&apos;s bandwidth"),
            std::string::npos)
      << xml;
  EXPECT_EQ(attribute(xml, "<testsuite name=\"alice/07_vectorized\"", "errors"), "1");
  EXPECT_NE(xml.find("<error type=\"crashed\" message=\"crashed: misaligned address in test Sizes/ExactSums\">"),
            std::string::npos);
  EXPECT_EQ(attribute(xml, "<testsuites", "errors"), "1");
}

// A test's result word the grader does not know (a report edited by hand) is a failure, never
// read as passed.
TEST(JUnit, AResultWordNoOneKnowsIsAFailure) {
  json r = graded();
  json& idle = r["chapters"][1];
  idle["tests"][0]["result"] = "passd";
  idle["failed_tests"] = json::array();
  const std::string xml = junit_xml({r});
  EXPECT_NE(xml.find("<failure type=\"unreadable result\" message=\"unreadable result\""), std::string::npos) << xml;
}

TEST(JUnit, EscapesMarkupAndDropsWhatXmlForbids) {
  json r = graded();
  json& idle = r["chapters"][1];
  idle["tests"][1]["name"] = "Quote\"d<name>";
  idle["failed_tests"][0]["name"] = "Quote\"d<name>";
  idle["failed_tests"][0]["message"] = "got <&\"'> \x01here\x1b[31m \xEF\xBF\xBE\xEF\xBF\xBF bad \xff byte\nline 2";
  const std::string xml = junit_xml({r});
  EXPECT_NE(xml.find("name=\"Quote&quot;d&lt;name&gt;\""), std::string::npos) << xml;
  // Control characters are shown as escapes (the learner's text is data), not dropped.
  EXPECT_NE(xml.find("message=\"got &lt;&amp;&quot;&apos;&gt; \\x01here\\x1b[31m  bad \xEF\xBF\xBD byte\""),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find(">got &lt;&amp;&quot;&apos;&gt; \\x01here\\x1b[31m  bad \xEF\xBF\xBD byte\nline 2</failure>"),
            std::string::npos);
  EXPECT_EQ(xml.find('\x01'), std::string::npos);
  EXPECT_EQ(xml.find('\x1b'), std::string::npos);
  EXPECT_EQ(xml.find("\xEF\xBF\xBE"), std::string::npos);
  EXPECT_EQ(xml.find("\xEF\xBF\xBF"), std::string::npos);
  EXPECT_EQ(valid_utf8(xml), xml);
  const int parsed = python_parses(xml);
  if (parsed < 0) GTEST_SKIP() << "python3 is not here to parse the XML";
  EXPECT_EQ(parsed, 1) << xml;
}

// ---- Gradebook CSV ----

TEST(Gradebook, OneRowPerReportSortedByStudentWithEmptyCellsWhenNotGraded) {
  const std::string csv = gradebook_csv({no_gpu(), graded()}, {"00_naive", "03_idle_threads", "07_vectorized"}, {});
  EXPECT_EQ(csv,
            "student,00_naive,03_idle_threads,07_vectorized,total,max_points,status\r\n"
            "alice,10,0,0,10,30,graded\r\n"
            "bob,,,,,10,not graded: no GPU: no CUDA-capable device is detected\r\n");
}

TEST(Gradebook, MapsIdsQuotesAndGuardsFormulas) {
  json a = graded();
  a["chapters"][0]["points"] = 8.5;
  a["points"] = 8.5;
  json b = graded();
  b["submission"]["id"] = "b";
  json c = graded();
  c["submission"]["id"] = "c";
  json d = graded();
  d["submission"]["id"] = "d";
  d["complete"] = false;
  const std::map<std::string, std::string> ids = {
      {"alice", "Smith, \"Al\""}, {"b", "=HYPERLINK(\"http://x\")"}, {"c", "-2+3"}, {"d", "@sum"}};
  const std::string csv = gradebook_csv({a, b, c, d}, {"00_naive"}, ids);
  EXPECT_EQ(csv,
            "student,00_naive,total,max_points,status\r\n"
            "'-2+3,10,10,30,graded\r\n"
            "\"'=HYPERLINK(\"\"http://x\"\")\",10,10,30,graded\r\n"
            "'@sum,10,10,30,incomplete\r\n"
            "\"Smith, \"\"Al\"\"\",8.5,8.5,30,graded\r\n");
}

TEST(Gradebook, NamesAsHandedInNotTheirFolderSafeIds) {
  // A submission handed in as "José García" has the folder Jos___Garc__a; people read the name.
  json a = graded();
  a["submission"]["id"] = "Jos___Garc__a";
  a["submission"]["name"] = "José García";
  json b = graded();
  b["submission"]["id"] = "_1_2__Ann_";
  b["submission"]["name"] = "=1+2 (Ann)";
  const std::string csv = gradebook_csv({a, b}, {"00_naive"}, {});
  EXPECT_EQ(csv,
            "student,00_naive,total,max_points,status\r\n"
            "'=1+2 (Ann),10,10,30,graded\r\n"
            "José García,10,10,30,graded\r\n");
  // A mapping may name either.
  EXPECT_NE(gradebook_csv({a}, {"00_naive"}, {{"José García", "s001"}}).find("s001,"), std::string::npos);
  EXPECT_NE(gradebook_csv({a}, {"00_naive"}, {{"Jos___Garc__a", "s001"}}).find("s001,"), std::string::npos);
  EXPECT_NE(feedback_markdown(a).find("# Feedback: José García"), std::string::npos) << feedback_markdown(a);
}

TEST(Gradebook, InterruptedAndAbsentChaptersAreEmptyAndTabsAreGuarded) {
  json r = graded();
  r["submission"]["id"] = "\tx\ny";
  r["chapters"][1]["status"] = "interrupted";
  r["interrupted"] = true;
  const std::string csv = gradebook_csv({r}, {"00_naive", "03_idle_threads", "99_absent"}, {});
  // A submission's name is shown as one visible line: its tab and line end as escapes.
  EXPECT_EQ(csv,
            "student,00_naive,03_idle_threads,99_absent,total,max_points,status\r\n"
            "\\tx\\ny,10,,,10,30,incomplete\r\n");
  // A student's name from the instructor's mapping is taken as it is, a leading tab guarded.
  EXPECT_NE(gradebook_csv({r}, {"00_naive"}, {{"\\tx\\ny", "\tx"}}).find("\n'\tx,"), std::string::npos);
}

TEST(IdMapping, ReadsQuotedFieldsCrlfAndAByteOrderMark) {
  std::string error = "unset";
  const auto ids = read_id_mapping(
      "\xEF\xBB\xBFsubmission,student\r\nalice,s001\r\n\"bob,jr\",\"Doe, \"\"B\"\"\"\r\n\r\ncarol , s003\n", &error);
  EXPECT_EQ(error, "");
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids.at("alice"), "s001");
  EXPECT_EQ(ids.at("bob,jr"), "Doe, \"B\"");
  EXPECT_EQ(ids.at("carol"), "s003");
}

TEST(IdMapping, AMalformedLineIsAnErrorWithItsNumber) {
  std::string error;
  EXPECT_TRUE(read_id_mapping("submission,student\nalice,s001\nbob\n", &error).empty());
  EXPECT_EQ(error, "line 3: 1 fields; a line is 'submission,student'");
  EXPECT_TRUE(read_id_mapping("submission,student\nalice,s001,extra\n", &error).empty());
  EXPECT_EQ(error, "line 2: 3 fields; a line is 'submission,student'");
  EXPECT_TRUE(read_id_mapping("submission,student\n\"alice,s001\n", &error).empty());
  EXPECT_EQ(error, "line 2: a quoted field is not closed");
  EXPECT_TRUE(read_id_mapping("submission,student\n\"alice\"x,s001\n", &error).empty());
  EXPECT_EQ(error, "line 2: text after the closing quote of a field");
  EXPECT_TRUE(read_id_mapping("submission,student\nal\"ice,s001\n", &error).empty());
  EXPECT_EQ(error, "line 2: a quote inside a field that does not start with one");
  EXPECT_TRUE(read_id_mapping("submission,student\n,s001\n", &error).empty());
  EXPECT_EQ(error, "line 2: an empty submission or student");
  EXPECT_TRUE(read_id_mapping("id,name\nalice,s001\n", &error).empty());
  EXPECT_EQ(error, "line 1: the first line must be the header 'submission,student'");
  EXPECT_TRUE(read_id_mapping("", &error).empty());
  EXPECT_NE(error.find("empty"), std::string::npos);
}

TEST(IdMapping, ADuplicateSubmissionIsAnError) {
  std::string error;
  // A quoted field over two lines: the duplicate is on line 5.
  EXPECT_TRUE(read_id_mapping("submission,student\nalice,s001\n\"multi\nline\",s002\nalice,s009\n", &error).empty());
  EXPECT_EQ(error, "line 5: submission 'alice' is listed twice (first on line 2)");
}

// ---- Markdown ----

TEST(Markdown, GradedPageHasHeaderTableAndWhatFailed) {
  const std::string md = feedback_markdown(graded());
  EXPECT_EQ(md.rfind("# Feedback: alice\n", 0), 0u) << md;
  EXPECT_NE(md.find("- **Date:** 2026-11-30T21:14:03Z\n"), std::string::npos);
  EXPECT_NE(md.find("- **Device:** NVIDIA H200 (132 multiprocessors, driver CUDA 13.0, runtime CUDA 13.0)\n"),
            std::string::npos);
  EXPECT_NE(md.find("- **Total:** 10 / 30 points\n"), std::string::npos);
  EXPECT_EQ(md.find("Not graded"), std::string::npos);
  EXPECT_NE(md.find("| 00\\_naive (V0) Shared-memory tree | passed | 84/84 | 1630 | 95.7% (80%) | 10 / 10 |\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| 03\\_idle\\_threads (V3) First add during load | failed | 82/84 | 2411 | - (80%) | 0 / 10 |\n"),
            std::string::npos);
  // Only chapters that did not pass get a section.
  EXPECT_EQ(md.find("## 00\\_naive"), std::string::npos);
  EXPECT_NE(md.find("## 03\\_idle\\_threads (V3) First add during load: failed\n"), std::string::npos);
  EXPECT_NE(md.find("**`Sizes/ExactSums.EveryElementCountedOnce/n_1001`**\n\n```\nn = 1001: expected 1, got 0\n"
                    "element 1000 (block 0, the last one) was not counted\n```\n"),
            std::string::npos);
  EXPECT_NE(md.find("- **ExactSums:** A block now covers 2 \\* blockDim.x elements"), std::string::npos);
  // Compiler output stays verbatim in a block.
  EXPECT_NE(md.find("```\n07_vectorized/kernel.cu(41): error: identifier \"float5\" is undefined\n"),
            std::string::npos);
  EXPECT_EQ(valid_utf8(md), md);
}

TEST(Markdown, NotGradedSaysSoFirstAndShowsNoZeroPoints) {
  const std::string md = feedback_markdown(no_gpu());
  EXPECT_EQ(md.rfind("# Feedback: bob\n\n> **Not graded: no GPU: no CUDA-capable device is detected**\n", 0), 0u) << md;
  EXPECT_NE(md.find("- **Device:** no GPU\n"), std::string::npos);
  EXPECT_NE(md.find("- **Total:** not graded (10 points to earn)\n"), std::string::npos);
  EXPECT_EQ(md.find("0 / 10"), std::string::npos);
  EXPECT_EQ(md.find("0 / 0"), std::string::npos);
  EXPECT_NE(md.find("| not graded: no GPU | - | - | - (80%) | not graded |\n"), std::string::npos) << md;
}

TEST(Markdown, FencesOutgrowBackticksAndCellsEscapePipes) {
  json r = graded();
  json& idle = r["chapters"][1];
  idle["title"] = "a | b";
  idle["failed_tests"][0]["message"] = "before\n```\nnot the end ```` of it\n";
  for (int i = 0; i < 3; ++i)
    idle["failed_tests"].push_back({{"name", "Extra.Test" + std::to_string(i)}, {"message", "m"}});
  const std::string md = feedback_markdown(r);
  EXPECT_NE(md.find("| 03\\_idle\\_threads (V3) a \\| b | failed |"), std::string::npos) << md;
  // The longest run of backticks inside is 4: the fence is 5.
  EXPECT_NE(md.find("\n`````\nbefore\n```\nnot the end ```` of it\n`````\n"), std::string::npos) << md;
  EXPECT_NE(md.find("Failed tests (the first 3 of 5):"), std::string::npos);
  EXPECT_NE(md.find("Extra.Test0"), std::string::npos);
  EXPECT_EQ(md.find("Extra.Test1"), std::string::npos);
}

// ---- Class summary ----

TEST(ClassSummary, CountsPerChapterAndListsNotGraded) {
  std::vector<json> reports = {graded(), no_gpu()};
  const std::string text = class_summary(reports, {"00_naive", "03_idle_threads"});
  EXPECT_NE(text.find("2 reports: 1 graded, 1 not graded; 0 of the graded ones incomplete.\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("00_naive              1       0                 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("03_idle_threads       0       1                 1\n"), std::string::npos);
  EXPECT_NE(text.find("Not graded (1):\n  bob: no GPU: no CUDA-capable device is detected\n"), std::string::npos);
  EXPECT_NE(text.find("Incomplete reports (graded, but the run did not finish): 0\n"), std::string::npos);
}

TEST(ClassSummary, ListsTwentyNotGradedThenHowManyMore) {
  std::vector<json> reports;
  for (int i = 0; i < 25; ++i) {
    json r = no_gpu();
    r["submission"]["id"] = "s" + std::to_string(100 + i);
    reports.push_back(r);
  }
  json cut = graded();
  cut["complete"] = false;
  reports.push_back(cut);
  const std::string text = class_summary(reports, {"00_naive"});
  EXPECT_NE(text.find("Not graded (25):\n"), std::string::npos);
  EXPECT_NE(text.find("  s119: no GPU"), std::string::npos);
  EXPECT_EQ(text.find("  s120: no GPU"), std::string::npos);
  EXPECT_NE(text.find("  ... and 5 more\n"), std::string::npos);
  EXPECT_NE(text.find("Incomplete reports (graded, but the run did not finish): 1\n"), std::string::npos);
}

// ---- Text from the learner's code ----

// A report whose every learner-given string holds a fake heading on a line of its own, terminal
// escapes, C1 controls and a right-to-left override: what a chapter's registration, its process's
// messages or a hand-edited report can hold.
constexpr const char* kHostile =
    "evil\n## passed\n\x1b[32mOK\x1b[0m \xc2\x9b"
    "2J \xe2\x80\xae"
    "dessap\r\x07";

json hostile_report() {
  json r = graded();
  r["submission"]["name"] = kHostile;
  r["submission"]["id"] = kHostile;
  json& idle = r["chapters"][1];
  idle["detail"] = "the runner said: \x1b[2J\xc2\x9b\xe2\x80\xae";
  idle["tests"][1]["name"] = kHostile;
  idle["failed_tests"][0]["name"] = kHostile;
  // A failure's message is a block of lines (each format delimits it); what it quotes is made visible.
  idle["failed_tests"][0]["message"] = "expected 1, got 0\nlaunch error: \x1b[2J\xc2\x9b\xe2\x80\xae\x07";
  return r;
}

// No line of `text` is the learner's own, and nothing in it acts on a reader.
void expect_visible(const std::string& text, const std::string& format) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    EXPECT_NE(line.substr(0, 9), "## passed") << format << ": a line of its own: " << line;
    EXPECT_NE(line.rfind("dessap"), 0u) << format << ": a line of its own: " << line;
  }
  for (const char* hidden : {"\x1b", "\x07", "\xc2\x9b", "\xe2\x80\xae"}) {
    EXPECT_EQ(text.find(hidden), std::string::npos) << format << " holds a raw control: " << text;
  }
  for (std::size_t cr = text.find('\r'); cr != std::string::npos; cr = text.find('\r', cr + 1)) {
    EXPECT_EQ(text[cr + 1], '\n') << format << " holds a carriage return of its own: " << text;
  }
  EXPECT_NE(text.find("U+202E"), std::string::npos) << format << " does not show the override: " << text;
  EXPECT_NE(text.find("U+009B"), std::string::npos) << format << " does not show the C1 control: " << text;
  EXPECT_NO_THROW((void)json(text).dump()) << format << " is not valid UTF-8";
}

// The JSON formats' strings, as the site that reads them shows them.
std::string strings_of(const json& j) {
  if (j.is_string()) return j.get<std::string>() + "\n";
  std::string out;
  if (j.is_structured()) {
    for (const json& v : j) out += strings_of(v);
  }
  return out;
}

TEST(Formats, LearnerTextIsOneVisibleLineInEveryFormat) {
  const json r = hostile_report();
  const std::string md = feedback_markdown(r);
  expect_visible(md, "Markdown");
  EXPECT_NE(md.find("# Feedback: evil\\\\n\\#\\# passed\\\\n\\\\x1b\\[32mOK"), std::string::npos) << md;
  expect_visible(junit_xml({r}), "JUnit");
  const std::string gradescope = gradescope_results(r);
  ASSERT_TRUE(json::accept(gradescope));
  expect_visible(strings_of(json::parse(gradescope)), "Gradescope");
  const std::string prairielearn = prairielearn_results(r);
  ASSERT_TRUE(json::accept(prairielearn));
  expect_visible(strings_of(json::parse(prairielearn)), "PrairieLearn");
  expect_visible(gradebook_csv({r}, {"00_naive"}, {}), "gradebook");
  json not_graded = no_gpu();
  not_graded["submission"]["name"] = kHostile;
  const std::string summary = class_summary({r, not_graded}, {"00_naive", "03_idle_threads"});
  expect_visible(summary, "class summary");
  EXPECT_NE(summary.find("  evil\\n## passed\\n\\x1b[32mOK\\x1b[0m <U+009B>2J <U+202E>dessap\\r\\x07: no GPU"),
            std::string::npos)
      << summary;
}

// ---- Reports with fields missing or of the wrong type ----

TEST(Formats, NeverThrowOnPartialReportsAndStayValidUtf8) {
  json odd = {{"graded", "yes"},
              {"points", "ten"},
              {"device", 5},
              {"submission", {{"id", "x\xff\x01y"}}},
              {"chapters",
               {{{"slug", 3}, {"tests", 5}, {"failed_tests", {1, 2}}, {"detail", "a\xc3(b"}, {"status", "failed"}},
                7,
                {{"status", "passed"}}}}};
  for (const json& r : {json(), json::object(), json::array(), odd}) {
    EXPECT_NO_THROW({
      const std::string md = feedback_markdown(r);
      EXPECT_EQ(valid_utf8(md), md);
      EXPECT_TRUE(json::accept(gradescope_results(r)));
      EXPECT_TRUE(json::accept(prairielearn_results(r)));
      const std::string xml = junit_xml({r});
      EXPECT_EQ(valid_utf8(xml), xml);
      const std::string csv = gradebook_csv({r}, {"00_naive"}, {});
      const std::string summary = class_summary({r}, {"00_naive"});
      EXPECT_EQ(valid_utf8(summary), summary);
    }) << r.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  const json out = json::parse(prairielearn_results(json::object()));
  EXPECT_EQ(out.at("gradable"), true);
  EXPECT_DOUBLE_EQ(out.at("score").get<double>(), 0);
}

}  // namespace
}  // namespace grader
