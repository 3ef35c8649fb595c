// Host-only tests of the harness: they need no GPU and run in CI.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "judge/inputs.hpp"
#include "judge/manifest.hpp"
#include "judge/verify.hpp"
#include "sandbox/sandbox.hpp"

namespace workbook {
namespace {

std::vector<float> partials_from(const ExactPlan& plan, std::size_t block) {
  std::vector<float> partials((plan.n + block - 1) / block, 0.0f);
  const std::vector<float> x = plan.dense();
  for (std::size_t i = 0; i < x.size(); ++i) partials[i / block] += x[i];
  return partials;
}

float poison() {
  float v;
  std::memcpy(&v, &kPoisonBits, sizeof v);
  return v;
}

TEST(RandomInput, IsReproducibleAndInRange) {
  const auto a = random_input(10000, 42), b = random_input(10000, 42), c = random_input(10000, 43);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  double mean = 0;
  for (float v : a) {
    ASSERT_GE(v, -0.5f);
    ASSERT_LT(v, 1.0f);
    mean += v / a.size();
  }
  EXPECT_NEAR(mean, 0.25, 0.02);
}

std::size_t mark_at(const ExactPlan& plan, std::size_t position) {
  return static_cast<std::size_t>(std::find(plan.positions.begin(), plan.positions.end(), position) -
                                  plan.positions.begin());
}

std::string value_name(const ExactPlan& plan, std::size_t k) {
  return "(value 2^" + std::to_string(plan.exponents[k] + plan.scale) + ")";
}

TEST(ExactPlan, MarksEdgesAndDistinctPositions) {
  for (std::size_t n : {1ul, 2ul, 22ul, 25ul, 257ul, 1000ul, 1ul << 20, (1ul << 31) + 7}) {
    const ExactPlan plan = make_exact_plan(n, 7);
    EXPECT_EQ(plan.positions.size(), std::min<std::size_t>(n, kExactMarks)) << n;
    const std::set<std::size_t> unique(plan.positions.begin(), plan.positions.end());
    EXPECT_EQ(unique.size(), plan.positions.size()) << n;
    EXPECT_TRUE(unique.count(0)) << n;
    EXPECT_TRUE(unique.count(n - 1)) << n;
    for (std::size_t p : plan.positions) EXPECT_LT(p, n);
    const std::set<int> exponents(plan.exponents.begin(), plan.exponents.end());
    EXPECT_EQ(exponents.size(), plan.positions.size()) << n;
    for (int e : plan.exponents) EXPECT_TRUE(e >= 0 && e < 24) << n;
  }
  const ExactPlan big = make_exact_plan((1ul << 31) + 7, 1);
  EXPECT_TRUE(std::count(big.positions.begin(), big.positions.end(), 1ul << 31)) << "2^31 edge";
}

TEST(ExactPlan, TotalsDifferFromSeedToSeed) {
  // A kernel must not be able to answer an exact test without reading its input.
  std::set<double> totals;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) totals.insert(make_exact_plan(1000, seed).total());
  EXPECT_GE(totals.size(), 38u);
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const ExactPlan plan = make_exact_plan(1000, seed);
    double sum = 0;
    for (float v : plan.dense()) sum += v;
    EXPECT_EQ(sum, plan.total());
    EXPECT_EQ(static_cast<double>(static_cast<float>(plan.total())), plan.total()) << "exact in float";
  }
}

TEST(ExactPartials, AcceptsAnyBlockingOfTheRightElements) {
  const ExactPlan plan = make_exact_plan(5000, 3);
  for (std::size_t block : {1ul, 32ul, 256ul, 512ul, 5000ul}) {
    EXPECT_EQ(explain_exact_partials(plan, partials_from(plan, block)), "") << block;
  }
}

TEST(ExactPartials, NamesADroppedElement) {
  const ExactPlan plan = make_exact_plan(1000, 3);
  std::vector<float> partials = partials_from(plan, 256);
  const std::size_t k = mark_at(plan, 999);
  partials.back() -= plan.value(k);
  const std::string why = explain_exact_partials(plan, partials);
  EXPECT_NE(why.find("element 999 " + value_name(plan, k) + " is in no partial"), std::string::npos) << why;
}

TEST(ExactPartials, NamesADoubleCount) {
  const ExactPlan plan = make_exact_plan(1000, 3);
  const std::size_t k = mark_at(plan, 0);
  std::vector<float> partials = partials_from(plan, 256);
  partials[0] += plan.value(k);  // element 0 counted again in partial 0 -> carries
  EXPECT_NE(explain_exact_partials(plan, partials), "");
  partials = partials_from(plan, 256);
  partials[1] += plan.value(k);  // ... or in another block
  const std::string why = explain_exact_partials(plan, partials);
  EXPECT_NE(why.find("element 0 " + value_name(plan, k) + " is counted in partials 0, 1"), std::string::npos) << why;
}

TEST(ExactPartials, NamesUnwrittenAndGarbagePartials) {
  const ExactPlan plan = make_exact_plan(1000, 3);
  std::vector<float> partials = partials_from(plan, 256);
  partials[2] = poison();
  EXPECT_NE(explain_exact_partials(plan, partials).find("partial 2 is never written"), std::string::npos);
  partials[2] = std::nanf("");
  EXPECT_NE(explain_exact_partials(plan, partials).find("partial 2 is NaN"), std::string::npos);
  partials[2] = static_cast<float>(plan.unit() / 2);  // half a unit: no set of marks adds up to it
  EXPECT_NE(explain_exact_partials(plan, partials).find("partial 2 is "), std::string::npos);
}

TEST(ExactTotal, NamesMissingElements) {
  const ExactPlan plan = make_exact_plan(100, 3);
  EXPECT_EQ(explain_exact_total(plan, static_cast<float>(plan.total())), "");
  const std::string why = explain_exact_total(plan, static_cast<float>(plan.total() - plan.value(2)));
  EXPECT_NE(why.find("element " + std::to_string(plan.positions[2]) + " " + value_name(plan, 2) + " is missing"),
            std::string::npos)
      << why;
  EXPECT_NE(explain_exact_total(plan, poison()).find("never written"), std::string::npos);
}

TEST(Tolerance, AcceptsEveryOrderButNotMissingData) {
  EXPECT_EQ(sum_tolerance(1, 5.0), 0.0);
  const std::size_t n = 4096;
  const auto x = random_input(n, 1);
  const SumCheck check = reference_sum(x.data(), n);
  // The worst order for rounding: one thread adding every element in turn.
  float chain = 0;
  for (float v : x) chain += v;
  EXPECT_TRUE(check.passes(chain)) << check.describe(chain);
  // So is the other extreme, a pairwise tree.
  std::vector<float> level(x);
  while (level.size() > 1) {
    std::vector<float> next;
    for (std::size_t i = 0; i < level.size(); i += 2) next.push_back(level[i] + level[i + 1]);
    level = next;
  }
  EXPECT_TRUE(check.passes(level[0])) << check.describe(level[0]);
  // Dropping a tenth of the data is far outside it.
  double dropped = check.reference;
  for (std::size_t i = 0; i < n / 10; ++i) dropped -= x[i];
  EXPECT_FALSE(check.passes(dropped)) << check.describe(dropped);
  EXPECT_FALSE(check.passes(std::nan(""))) << "NaN never passes";
  // Past (n-1)u = 1/2 no order-free bound exists: the random tests use exact inputs there.
  EXPECT_TRUE(std::isinf(sum_tolerance(std::size_t(1) << 24, 1.0)));
  EXPECT_LT(kLargestRoundedInput * 0x1p-24, 0.01) << "the rounded random tests keep their teeth";
}

TEST(DenseExact, EveryOrderGivesTheExactSum) {
  // One chain of 2^22 additions (the worst order) and a strided order both land exactly.
  const std::size_t n = std::size_t(1) << 22;
  std::int64_t units = 0;
  float chain = 0, strided[64] = {};
  for (std::size_t i = 0; i < n; ++i) {
    const int u = dense_exact_units(7, i);
    EXPECT_GE(u, -128);
    EXPECT_LE(u, 128);
    units += u;
    const float v = static_cast<float>(u) / kDenseExactScale;
    chain += v;
    strided[i % 64] += v;
  }
  float tree = 0;
  for (float s : strided) tree += s;
  const SumCheck check = exact_sum(units);
  EXPECT_TRUE(check.passes(chain)) << check.describe(chain);
  EXPECT_TRUE(check.passes(tree)) << check.describe(tree);
  EXPECT_FALSE(check.passes(chain - 1.0f / 16)) << "one sixteenth off fails";
  EXPECT_NE(units % 16, 0) << "the fractions matter (an int accumulator would drop them)";
}

TEST(Manifest, EveryChapterHasPointsThresholdAndHints) {
  const Manifest m = load_manifest(WORKBOOK_MANIFEST);
  ASSERT_GE(m.chapters.size(), 8u);
  std::string previous;
  for (const ChapterSpec& c : m.chapters) {
    EXPECT_LT(previous, c.slug) << "chapters are in order";
    previous = c.slug;
    EXPECT_GT(c.correctness_points + c.performance_points, 0) << c.slug;
    EXPECT_GT(c.timeout_s, 0) << c.slug;
    for (const char* group : {"Empty", "ExactSums", "RandomSums", "MisalignedInput", "Bandwidth"}) {
      EXPECT_TRUE(c.hints.count(group)) << c.slug << " has no hint for " << group;
    }
  }
}

TEST(Manifest, RefusesAHintForAnUnknownGroup) {
  const std::string path = testing::TempDir() + "manifest_unknown_group.json";
  std::ofstream(path) << R"({"chapters": [{"slug": "00_x", "version": "V0", "title": "t", "kind": "block_pass",
    "points": {"correctness": 7, "performance": 3}, "bandwidth_fraction": 0.8, "timeout_s": 60,
    "hints": {"ExactSum": "a typo of ExactSums"},
    "steps": [{"hint": "a nudge", "lesson": "The idea"},
              {"hint": "more", "lesson": "What to write"}]}]})";
  try {
    load_manifest(path);
    ADD_FAILURE() << "a hint for an unknown group was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("ExactSum"), std::string::npos) << e.what();
  }
}

// `generic` (the generic chapter, WORKBOOK_GENERIC_REDUCE) is a full chapter that is not tuned.
TEST(Manifest, RefusesAGenericBlockPass) {
  const std::string path = testing::TempDir() + "manifest_generic_block_pass.json";
  std::ofstream(path) << R"({"chapters": [{"slug": "16_x", "version": "V16", "title": "t", "kind": "block_pass",
    "generic": true, "points": {"correctness": 7, "performance": 3}, "bandwidth_fraction": 0.8, "timeout_s": 60,
    "hints": {"Operators": "widen first"},
    "steps": [{"hint": "a nudge", "lesson": "The idea"},
              {"hint": "more", "lesson": "What to write"}]}]})";
  try {
    load_manifest(path);
    ADD_FAILURE() << "a generic block pass was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("generic"), std::string::npos) << e.what();
  }
}

// `requires`: a chapter needing sm_90 is skipped on an sm_80 GPU and runs on sm_90 and later;
// a feature the loader does not know is refused, so a typo cannot silently skip nothing.
TEST(Manifest, RequirementsSkipOnlyWhereTheGpuLacksThem) {
  const auto gpu = [](int cc, bool cooperative = true, int gpus = 1, bool nccl = false) {
    Capabilities have;
    have.compute_capability = cc;
    have.cooperative_launch = cooperative;
    have.gpus = gpus;
    have.nccl = nccl;
    return have;
  };
  ChapterSpec hopper;
  hopper.requires_features = {"sm_90"};
  EXPECT_EQ(unmet_requirement(hopper, gpu(80)).word, "sm_90");
  EXPECT_EQ(unmet_requirement(hopper, gpu(89)).word, "sm_90");
  EXPECT_EQ(unmet_requirement(hopper, gpu(90)).word, "");
  EXPECT_EQ(unmet_requirement(hopper, gpu(100)).word, "");
  ChapterSpec cooperative;
  cooperative.requires_features = {"cooperative_launch"};
  EXPECT_EQ(unmet_requirement(cooperative, gpu(90, false)).word, "cooperative_launch");
  EXPECT_EQ(unmet_requirement(cooperative, gpu(90, true)).word, "");
  // The chapter over several GPUs: NCCL in the build and two GPUs, said as a reader says them.
  ChapterSpec ranks;
  ranks.requires_features = {"nccl", "gpus_2"};
  EXPECT_EQ(gpus_needed(ranks), 2);
  EXPECT_EQ(gpus_needed(hopper), 1);
  EXPECT_EQ(unmet_requirement(ranks, gpu(90, true, 8, false)).word, "NCCL");
  EXPECT_EQ(unmet_requirement(ranks, gpu(90, true, 1, true)).word, "2 GPUs");
  EXPECT_EQ(unmet_requirement(ranks, gpu(90, true, 2, true)).word, "");
  EXPECT_EQ(unmet_requirement(ranks, gpu(80, true, 4, true)).word, "");
  EXPECT_EQ(unmet_requirement(ranks, gpu(90, true, 1, true)).need, Unmet::Need::gpus);
  EXPECT_EQ(unmet_requirement(ranks, gpu(90, true, 2, false)).need, Unmet::Need::nccl);
  EXPECT_EQ(unmet_requirement(hopper, gpu(80)).need, Unmet::Need::compute_capability);
  EXPECT_TRUE(unmet_requirement(ranks, gpu(90, true, 2, true)).met());

  const std::string path = testing::TempDir() + "manifest_unknown_feature.json";
  std::ofstream(path) << R"({"chapters": [{"slug": "13_x", "version": "13", "title": "t", "kind": "full",
    "points": {"correctness": 7, "performance": 3}, "bandwidth_fraction": 0.8, "timeout_s": 60,
    "requires": ["hopper"], "hints": {},
    "steps": [{"hint": "a nudge", "lesson": "The idea"},
              {"hint": "more", "lesson": "What to write"}]}]})";
  try {
    load_manifest(path);
    ADD_FAILURE() << "an unknown feature in requires was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("hopper"), std::string::npos) << e.what();
  }
}

// The `## ` headings of a lesson, without the marker; empty if the file cannot be read.
std::set<std::string> lesson_sections(const std::filesystem::path& lesson) {
  std::set<std::string> sections;
  std::ifstream file(lesson);
  for (std::string line; std::getline(file, line);) {
    if (line.rfind("## ", 0) != 0) continue;
    line.erase(line.find_last_not_of(" \t\r") + 1);
    sections.insert(line.substr(3));
  }
  return sections;
}

// What is wrong with a chapter's stepped hints, measured against its lesson; empty if nothing.
std::vector<std::string> step_problems(const ChapterSpec& c, const std::filesystem::path& lesson) {
  std::vector<std::string> problems;
  if (c.steps.size() < 2 || c.steps.size() > 3) {
    problems.push_back(c.slug + ": " + std::to_string(c.steps.size()) + " steps, expected 2 or 3");
  }
  const std::set<std::string> sections = lesson_sections(lesson);
  if (sections.empty()) problems.push_back(c.slug + ": no `## ` section in " + lesson.string());
  std::set<std::string> seen;
  for (const ChapterSpec::HintStep& step : c.steps) {
    if (step.hint.empty()) problems.push_back(c.slug + ": an empty hint");
    if (!seen.insert(step.hint).second) {
      problems.push_back(c.slug + ": hint given twice: " + step.hint);
    }
    if (!sections.count(step.lesson)) {
      problems.push_back(c.slug + ": \"" + step.lesson + "\" is no `## ` section of " + lesson.string());
    }
  }
  return problems;
}

// The source tree: grader/manifest.json sits in <source>/grader.
std::filesystem::path source_dir() { return std::filesystem::path(WORKBOOK_MANIFEST).parent_path().parent_path(); }

TEST(Manifest, EveryChapterHasStepsThatItsLessonExplains) {
  const Manifest m = load_manifest(WORKBOOK_MANIFEST);
  ASSERT_FALSE(m.chapters.empty());
  for (const ChapterSpec& c : m.chapters) {
    const std::filesystem::path lesson = source_dir() / "chapters" / c.slug / "lesson.md";
    ASSERT_TRUE(std::filesystem::exists(lesson)) << lesson;
    for (const std::string& problem : step_problems(c, lesson)) ADD_FAILURE() << problem;
  }
}

TEST(Manifest, StepCheckCatchesAWrongSectionAndARepeatedHint) {
  const std::filesystem::path lesson = testing::TempDir() + "lesson_steps.md";
  std::ofstream(lesson) << "# Title\n\n## The idea\n\ntext\n\n## What to write\r\n\n### Hints\n";
  ChapterSpec c;
  c.slug = "00_x";
  c.steps = {{"a nudge", "The idea"}, {"the code", "What to write"}};
  EXPECT_TRUE(step_problems(c, lesson).empty()) << "a well-formed chapter passes";
  c.steps = {{"a nudge", "The idea"}, {"a nudge", "Hints"}, {"more", "The Idea"}};
  const std::vector<std::string> problems = step_problems(c, lesson);
  EXPECT_EQ(problems.size(), 3u) << "a repeated hint, a ### subsection and a wrong case";
  c.steps = {{"a nudge", "The idea"}};
  EXPECT_FALSE(step_problems(c, lesson).empty()) << "one step is too few";
}

// A one-chapter manifest whose "steps" field is `steps`.
std::string manifest_with_steps(const std::string& steps) {
  return R"({"chapters": [{"slug": "07_x", "version": "V7", "title": "t", "kind": "block_pass",
    "points": {"correctness": 7, "performance": 3}, "bandwidth_fraction": 0.8, "timeout_s": 60,
    "hints": {"ExactSums": "h"}, "steps": )" +
         steps + "}]}";
}

TEST(Manifest, RefusesAChapterWithoutTwoOrThreeGoodSteps) {
  const std::string path = testing::TempDir() + "manifest_steps.json";
  const std::string step = R"({"hint": "look at the load", "lesson": "The idea"})";
  std::ofstream(path) << manifest_with_steps("[" + step + ", " + step + "]");
  ASSERT_EQ(load_manifest(path).chapters.at(0).steps.size(), 2u) << "two steps load";

  const std::vector<std::pair<std::string, std::string>> bad = {
      {"one step", "[" + step + "]"},
      {"four steps", "[" + step + ", " + step + ", " + step + ", " + step + "]"},
      {"an empty hint", "[" + step + R"(, {"hint": " ", "lesson": "The idea"}])"},
      {"a step without a lesson", "[" + step + R"(, {"hint": "look at the tree"}])"},
      {"no steps at all", "null"},
  };
  for (const auto& [what, steps] : bad) {
    std::ofstream(path) << manifest_with_steps(steps);
    try {
      load_manifest(path);
      ADD_FAILURE() << "a chapter with " << what << " was accepted";
    } catch (const std::runtime_error& e) {
      const std::string why = e.what();
      EXPECT_NE(why.find("chapter 07_x"), std::string::npos) << what << ": " << why;
      EXPECT_NE(why.find("step"), std::string::npos) << what << ": " << why;
    }
  }
}

TEST(Manifest, ReportsAMissingFile) { EXPECT_THROW(load_manifest("/nonexistent/manifest.json"), std::runtime_error); }

// What a runner sees under bubblewrap: the system's mounts read-only, its own files at their real
// paths (not again where a system mount shows them: a bind onto the read-only /usr cannot be made), a
// scratch tmpfs, and the program's words after "--".
TEST(Sandbox, BubblewrapShowsTheSystemAndTheProgramsOwnFilesOnly) {
  namespace fs = std::filesystem;
  const fs::path own = fs::temp_directory_path() / "workbook-bwrap-view";
  fs::create_directories(own);
  sandbox::BwrapView view;
  view.bwrap = "/bin/true";  // only asked for --help here: no --size then
  view.scratch = sandbox::kSandboxScratch;
  view.scratch_bytes = sandbox::kScratchBytes;
  view.readable = {"/usr/lib", own.string(), "/nonexistent/workbook"};
  const std::vector<std::string> words = sandbox::bwrap_words(view);
  const auto has = [&](std::vector<std::string> run) {
    return std::search(words.begin(), words.end(), run.begin(), run.end()) != words.end();
  };
  EXPECT_EQ(words.front(), "/bin/true");
  EXPECT_EQ(words.back(), "--");
  EXPECT_TRUE(has({"--unshare-all"}) && has({"--die-with-parent"}) && has({"--cap-drop", "ALL"}));
  EXPECT_TRUE(has({"--ro-bind-try", "/usr", "/usr"}));
  EXPECT_TRUE(has({"--tmpfs", "/tmp"}));
  EXPECT_TRUE(has({"--tmpfs", sandbox::kSandboxScratch}));
  EXPECT_TRUE(has({"--chdir", sandbox::kSandboxScratch}));
  const std::string real = fs::canonical(own).string();
  EXPECT_TRUE(has({"--ro-bind", real, real})) << "the program's own folder, at its real path";
  EXPECT_FALSE(has({"--ro-bind", "/usr/lib", "/usr/lib"})) << "shown by /usr already";
  EXPECT_FALSE(has({"--ro-bind", "/nonexistent/workbook", "/nonexistent/workbook"}));
  for (const std::string& w : words) EXPECT_NE(w, "/etc") << "no /etc beyond the loader's files";
  fs::remove_all(own);
}

}  // namespace
}  // namespace workbook
