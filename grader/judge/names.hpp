// One table of the names the tests, the grader and the manifest share: the
// test groups (GoogleTest suites) and the tests that also run under
// compute-sanitizer (a graded chapter's status is the grader's type, grader/status.hpp). The chapter
// test process checks its suites against it when it starts, the grader checks
// that the sanitized tests exist and ran, and the manifest loader refuses a
// hint for a group that is not here.
#pragma once

#include <array>
#include <string_view>

namespace workbook::names {

//! The test groups, in the order failures are listed: smallest, most telling first.
//! Accuracy and Reproducible exist only for a chapter with a tuned launcher (chapter 15), Operators
//! only for the generic chapter, SeveralGpus only for the chapter over several GPUs.
inline constexpr std::array<std::string_view, 14> kGroups = {
    "Empty",     "ExactSums",  "RandomSums",   "Accuracy",  "Operators", "SeveralGpus", "MisalignedInput",
    "HugeInput", "Repeatable", "Reproducible", "Workspace", "Streams",   "Sanitizer",   "Bandwidth"};

//! Groups that are correctness tests (everything but the bandwidth measurement).
constexpr bool is_correctness_group(std::string_view group) { return group != "Bandwidth"; }

//! Groups the grader runs after the others, each asking for the GPU alone for its timed calls only
//! (take_gpu_alone). The input of more than 2^31 elements runs beside the other tests: where
//! another process holds the memory it needs, it is starved, and the grader tests the chapter
//! again with the GPU alone.
constexpr bool needs_the_gpu_alone(std::string_view group) { return group == "Bandwidth"; }

//! The group of a full test name "Sizes/ExactSums.EveryElementCountedOnce/n_1000" -> "ExactSums".
constexpr std::string_view group_of(std::string_view test) {
  const std::size_t dot = test.find('.');
  std::string_view suite = test.substr(0, dot);
  const std::size_t slash = suite.find('/');
  return slash == std::string_view::npos ? suite : suite.substr(slash + 1);
}

constexpr bool is_group(std::string_view name) {
  for (std::string_view g : kGroups) {
    if (g == name) return true;
  }
  return false;
}

//! Tests a kernel must also pass under compute-sanitizer (memcheck, racecheck,
//! synccheck): races and barrier misuse give right answers often enough that
//! only a tool sees them. n = 1000 and 1003 (misaligned) are one or a few
//! blocks; 2^20 + 1 is a grid of hundreds, so the cross-block code of chapters
//! 09-12 (a second pass, a last-block ticket, a grid barrier) runs under the
//! tools too. Full GoogleTest names: the grader checks each one ran.
inline constexpr std::array<std::string_view, 3> kSanitizedTests = {
    "Sizes/ExactSums.EveryElementCountedOnce/n_1000", "Offsets/MisalignedInput.ExactSums/offset_1_n_1003",
    "Sizes/ExactSums.EveryElementCountedOnce/n_1048577"};

inline constexpr std::array<std::string_view, 3> kSanitizerTools = {"memcheck", "racecheck", "synccheck"};

//! The environment variable that tells a chapter test process which inherited
//! descriptor carries its results to the grader (JSON lines).
inline constexpr const char* kResultFdVariable = "WORKBOOK_RESULT_FD";
//! Set to 1, it lets a judge run a chapter that needs several GPUs on the GPUs there are, one rank
//! each (on one GPU: one rank), to try its code there; the grader never sets it, and reports such a
//! chapter on too few GPUs as skipped.
inline constexpr const char* kRehearsalVariable = "WORKBOOK_ONE_GPU_REHEARSAL";
//! The seed a judge draws its inputs from, set by the grader (--seed) or by hand to repeat a run; the
//! judge takes it out of its environment at once, so no runner sees it.
inline constexpr const char* kSeedVariable = "WORKBOOK_SEED";
//! The descriptor a judge reads the grader's grant of the GPU alone from (channel.hpp, Event::alone).
inline constexpr const char* kGrantFdVariable = "WORKBOOK_GRANT_FD";
//! Set to 1, a judge orders each call after its own stream's work by waiting for that stream on the
//! host (as it does under a tool), instead of having the chapter's process wait on the GPU for its
//! word (GpuOrder): to compare the two ways on the same code.
inline constexpr const char* kOrderOnHostVariable = "WORKBOOK_ORDER_ON_HOST";
//! Set to 1, a judge hands the small tests' calls to the chapter's process one test at a time, as
//! under a tool, instead of together in a batch whose clean results those tests take: to compare
//! the two ways on the same code, and to see a fault as a test met it.
inline constexpr const char* kOneTestAtATimeVariable = "WORKBOOK_ONE_TEST_AT_A_TIME";
//! The judge's argument the grader passes a chapter's reference's ceiling shape in, as JSON
//! (CeilingShape, channel.hpp): --ceiling-shape={"blocks_per_sm":16,"loads":8}.
inline constexpr const char* kCeilingShapeFlag = "--ceiling-shape";
//! The judge's argument that sets the hardware queues (CUDA_DEVICE_MAX_CONNECTIONS) of the chapter's
//! process for its tests, unless the user set that variable: --hardware-queues=2; 0 leaves the
//! driver's default (8).
inline constexpr const char* kHardwareQueuesFlag = "--hardware-queues";
//! The chapter's process's hardware queues by default. Two, not the driver's eight: a context with
//! fewer queues is cheaper to make, and contexts made at once wait for each other (grading.md), while
//! Streams.TwoConcurrentCalls needs its two streams on two queues, so that a state the two calls share
//! is raced; the runner makes those two streams one after the other, and the driver gives streams
//! the queues in turn.
inline constexpr int kChapterHardwareQueues = 2;
//! The hardware queues of a process that works on one stream: the judge itself and each run of the
//! chapter's process under a compute-sanitizer tool (by either path: the judge's own runs, or the
//! grader's with --separate-judges).
inline constexpr int kOneStreamHardwareQueues = 1;

//! Exit codes of a chapter test process (and the benchmark): no CUDA device
//! (CTest's SKIP_RETURN_CODE in grader/judge/CMakeLists.txt), and a lost CUDA context.
inline constexpr int kNoDeviceExit = 77;
inline constexpr int kContextLostExit = 3;

}  // namespace workbook::names
