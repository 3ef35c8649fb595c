// main() of every chapter test process: checks what registered, chooses the
// seed, skips cleanly without a GPU, reports every test's result to the
// grader over the descriptor it inherited, and ends the process with a clear
// message if a kernel breaks the CUDA context (later tests could only fail
// confusingly).
//
// A test executable links the chapter tests with ONE implementation: the
// learner's (test_<slug>) or the reference (reference_<slug>). The learner's
// code never shares a process with the reference.
#include <cstdint>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "chapter_env.hpp"
#include "workbook/cuda_check.hpp"
#include "workbook/device.hpp"
#include "workbook/names.hpp"
#include "workbook/registry.hpp"

namespace workbook::test {
namespace {

std::string g_subject = "learner";
std::uint64_t g_seed = 0;
const Entry* g_subject_entry = nullptr;
Manifest g_manifest;
const ChapterSpec* g_spec = nullptr;
cudaStream_t g_stream = nullptr;

// The grader's channel: JSON lines on a descriptor the grader opened before it
// started this process (its number in WORKBOOK_RESULT_FD, read once, here).
// Chapter code may not write to descriptors (the grader refuses the symbols),
// so what arrives here comes from this file.
class ResultChannel {
 public:
  ResultChannel() {
    if (const char* env = std::getenv(kResultFdVariable)) {
      fd_ = std::atoi(env);
      unsetenv(kResultFdVariable);
      if (fd_ <= 2 || fcntl(fd_, F_GETFD) < 0) fd_ = -1;
      if (fd_ >= 0) fcntl(fd_, F_SETFD, FD_CLOEXEC);
    }
  }
  void send(const nlohmann::json& record) {
    if (fd_ < 0) return;
    const std::string line = record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    for (std::size_t done = 0; done < line.size();) {
      const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      done += static_cast<std::size_t>(n);
    }
  }

 private:
  int fd_ = -1;
};

ResultChannel& channel() {
  static ResultChannel c;
  return c;
}

// After each test: its result to the grader; then, if the context is lost
// (a sticky error), the process ends: no later test could run.
class Reporter : public ::testing::EmptyTestEventListener {
  // Each test's start, so the grader knows which test a kernel that never ends is in.
  void OnTestStart(const ::testing::TestInfo& info) override {
    channel().send({{"event", "start"}, {"name", std::string(info.test_suite_name()) + "." + info.name()}});
  }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    const ::testing::TestResult& r = *info.result();
    nlohmann::json failures = nlohmann::json::array();
    for (int i = 0; i < r.total_part_count(); ++i) {
      const ::testing::TestPartResult& part = r.GetTestPartResult(i);
      if (part.failed()) failures.push_back(part.message());
    }
    nlohmann::json properties = nlohmann::json::object();
    for (int i = 0; i < r.test_property_count(); ++i) {
      properties[r.GetTestProperty(i).key()] = r.GetTestProperty(i).value();
    }
    ++ran_;
    channel().send({{"event", "test"},
                    {"name", std::string(info.test_suite_name()) + "." + info.name()},
                    {"result", r.Skipped() ? "skipped" : r.Failed() ? "failed" : "passed"},
                    {"failures", failures},
                    {"properties", properties},
                    {"ms", r.elapsed_time()}});
    const cudaError_t err = cudaDeviceSynchronize();
    if (err == cudaSuccess || !is_sticky(err)) {
      cudaGetLastError();  // clear non-sticky errors so they do not leak into the next test
      return;
    }
    const std::string what = fmt::format("{}: {} ({})", info.name(), cudaGetErrorString(err),
                                         cudaGetErrorName(err));
    channel().send({{"event", "context_lost"},
                    {"name", std::string(info.test_suite_name()) + "." + info.name()},
                    {"error", fmt::format("{} ({})", cudaGetErrorString(err), cudaGetErrorName(err))}});
    std::fflush(stdout);
    std::fprintf(stderr,
                 "\nCONTEXT LOST in %s.%s: %s (%s).\nThe kernel broke the CUDA context (typically "
                 "an out-of-bounds or misaligned access); no further test can run in this "
                 "process.\n",
                 info.test_suite_name(), info.name(), cudaGetErrorString(err),
                 cudaGetErrorName(err));
    std::fflush(stderr);
    std::_Exit(kContextLostExit);
  }
  void OnTestProgramEnd(const ::testing::UnitTest&) override {
    channel().send({{"event", "end"}, {"ran", ran_}});
  }
  int ran_ = 0;
};

std::uint64_t pick_seed() {
  if (const char* env = std::getenv("WORKBOOK_SEED")) return std::strtoull(env, nullptr, 0);
  std::random_device rd;
  return (std::uint64_t(rd()) << 32) ^ rd();
}

// Every test suite this binary holds must be one of the named groups.
std::string unknown_groups() {
  std::string out;
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  for (int i = 0; i < unit.total_test_suite_count(); ++i) {
    const std::string suite = unit.GetTestSuite(i)->name();
    if (!names::is_group(names::group_of(suite))) out += " " + suite;
  }
  return out;
}

}  // namespace

const Entry& subject() { return *g_subject_entry; }
const ChapterSpec& spec() { return *g_spec; }
std::uint64_t seed() { return g_seed; }
cudaStream_t stream() { return g_stream; }
const std::string& subject_name() { return g_subject; }

void register_reproducible_tests();  // reproducible_test.cpp

}  // namespace workbook::test

int main(int argc, char** argv) {
  using namespace workbook::test;
  ::testing::InitGoogleTest(&argc, argv);
  std::string chapter;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--subject=", 0) == 0) {
      g_subject = arg.substr(10);
    } else if (arg.rfind("--chapter=", 0) == 0) {
      chapter = arg.substr(10);
    } else {
      fmt::print(stderr,
                 "unknown argument {} (expected --chapter=<slug>, --subject=learner|reference and "
                 "gtest flags)\n",
                 arg);
      return 2;
    }
  }
  // A chapter whose launcher takes its grid as a parameter also gets the tests that change the
  // grid (Reproducible, Accuracy); registered before any listing, so the grader's list of a
  // chapter's tests, taken from its reference, includes them.
  if (const std::vector<workbook::Entry> found = workbook::all_entries();
      found.size() == 1 && found[0].kind == workbook::ChapterKind::full && found[0].tuned != nullptr) {
    register_reproducible_tests();
  }
  if (const std::string bad = unknown_groups(); !bad.empty()) {
    fmt::print(stderr, "test suites outside the named groups (workbook/names.hpp):{}\n", bad);
    return 2;
  }
#ifdef GTEST_FLAG_GET
  if (GTEST_FLAG_GET(list_tests)) return RUN_ALL_TESTS();
#else
  if (::testing::GTEST_FLAG(list_tests)) return RUN_ALL_TESTS();
#endif
  channel();  // takes the descriptor before any chapter code runs after static initialization
  g_seed = pick_seed();
  // Exactly one implementation may be linked in, registered once, as the
  // chapter and subject this executable was built for.
  const std::vector<workbook::Entry> entries = workbook::all_entries();
  std::string problem;
  if (entries.empty()) {
    problem = "no implementation registered: a chapter's kernel.cu must end with its registration "
              "line, e.g. WORKBOOK_BLOCK_PASS(launch);";
  } else if (entries.size() > 1) {
    problem = fmt::format("{} implementations registered; a chapter registers exactly one, with "
                          "the registration line the stub ends with",
                          entries.size());
  } else if ((!chapter.empty() && chapter != entries[0].chapter) || g_subject != entries[0].subject) {
    problem = fmt::format("the implementation registered as chapter {}, {}; this test is for "
                          "chapter {}, {}",
                          entries[0].chapter, entries[0].subject,
                          chapter.empty() ? entries[0].chapter : chapter, g_subject);
  }
  if (chapter.empty() && !entries.empty()) chapter = entries[0].chapter;
  try {
    g_manifest = workbook::load_manifest(WORKBOOK_MANIFEST);
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 2;
  }
  g_spec = g_manifest.find(chapter);
  if (!g_spec && problem.empty()) problem = fmt::format("no chapter {} in the manifest", chapter);
  channel().send({{"event", "begin"}, {"chapter", chapter}, {"subject", g_subject},
                  {"seed", g_seed}, {"problem", problem}});
  if (!problem.empty()) {
    fmt::print(stderr, "NOT REGISTERED: {}\n", problem);
    return 2;
  }
  g_subject_entry = &entries[0];
  fmt::print("chapter {} ({}), testing the {} implementation, seed {} (set WORKBOOK_SEED={} to "
             "repeat)\n",
             chapter, g_spec->version, g_subject, g_seed, g_seed);
  std::string why;
  if (!workbook::device_available(&why)) {
    fmt::print("SKIPPED: no CUDA device: {}. These tests need a GPU.\n", why);
    return kNoDeviceExit;
  }
  try {
    const workbook::DeviceInfo info = workbook::device_info();
    fmt::print("device: {} ({} SMs, {} MB L2, {:.1f} GiB), driver CUDA {}, runtime {}\n", info.name,
               info.multiprocessors, info.l2_bytes >> 20, info.global_bytes / 1073741824.0,
               workbook::version_string(info.driver_version),
               workbook::version_string(info.runtime_version));
    WORKBOOK_CUDA_CHECK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  } catch (const std::exception& e) {
    fmt::print("SKIPPED: the CUDA device cannot be used: {}\n", e.what());
    return kNoDeviceExit;
  }
  ::testing::UnitTest::GetInstance()->listeners().Append(new Reporter);
  return RUN_ALL_TESTS();
}
