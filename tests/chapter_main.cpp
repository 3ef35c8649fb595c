// main() of every chapter test process: chooses the subject and the seed,
// skips cleanly without a GPU, and ends the process with a clear message if
// a kernel breaks the CUDA context (later tests could only fail confusingly).
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "chapter_env.hpp"
#include "workbook/cuda_check.hpp"
#include "workbook/device.hpp"
#include "workbook/registry.hpp"

namespace workbook::test {
namespace {

std::string g_subject = "learner";
std::uint64_t g_seed = 0;
const Entry* g_subject_entry = nullptr;
const Entry* g_reference_entry = nullptr;
Manifest g_manifest;
const ChapterSpec* g_spec = nullptr;
cudaStream_t g_stream = nullptr;

// After each test: a sticky error means the context is gone for good.
class ContextGuard : public ::testing::EmptyTestEventListener {
  void OnTestEnd(const ::testing::TestInfo& info) override {
    const cudaError_t err = cudaDeviceSynchronize();
    if (err == cudaSuccess || !is_sticky(err)) {
      cudaGetLastError();  // clear non-sticky errors so they do not leak into the next test
      return;
    }
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
};

std::uint64_t pick_seed() {
  if (const char* env = std::getenv("WORKBOOK_SEED")) return std::strtoull(env, nullptr, 0);
  std::random_device rd;
  return (std::uint64_t(rd()) << 32) ^ rd();
}

}  // namespace

const Entry& subject() { return *g_subject_entry; }
const Entry& reference() { return *g_reference_entry; }
const ChapterSpec& spec() { return *g_spec; }
std::uint64_t seed() { return g_seed; }
cudaStream_t stream() { return g_stream; }
const std::string& subject_name() { return g_subject; }

}  // namespace workbook::test

int main(int argc, char** argv) {
  using namespace workbook::test;
  ::testing::InitGoogleTest(&argc, argv);
  if (const char* env = std::getenv("WORKBOOK_SUBJECT")) g_subject = env;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--subject=", 0) == 0) {
      g_subject = arg.substr(10);
    } else {
      fmt::print(stderr, "unknown argument {} (expected --subject=learner|reference and gtest flags)\n", arg);
      return 2;
    }
  }
  g_seed = pick_seed();
  // The chapter is the one whose reference is linked into this executable.
  std::string chapter;
  for (const workbook::Entry& e : workbook::all_entries()) {
    if (std::string(e.subject) == "reference") chapter = e.chapter;
  }
  try {
    g_manifest = workbook::load_manifest(WORKBOOK_MANIFEST);
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 2;
  }
  g_spec = g_manifest.find(chapter);
  g_subject_entry = workbook::find_entry(chapter, g_subject);
  g_reference_entry = workbook::find_entry(chapter, "reference");
  if (!g_spec || !g_subject_entry || !g_reference_entry) {
    fmt::print(stderr,
               "NOT REGISTERED: no {} implementation of chapter {} is linked in. A chapter's "
               "kernel.cu must end with its registration line, e.g. WORKBOOK_BLOCK_PASS(launch);\n",
               g_spec && !g_subject_entry ? g_subject : std::string("reference"), chapter);
    return 2;
  }
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
  ::testing::UnitTest::GetInstance()->listeners().Append(new ContextGuard);
  return RUN_ALL_TESTS();
}
