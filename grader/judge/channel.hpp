// The result channel: what a judge (a chapter's test process) tells the grader, one JSON object a
// line, on a descriptor the grader opened (its number in WORKBOOK_RESULT_FD). Both sides use these
// names, so neither writes them twice.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "judge/ceiling_shape.hpp"
#include "runner/sanitizer_log.hpp"  // kSanitizerLogFd, kSanitizerLogFile

namespace workbook {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CeilingShape, blocks_per_sm, loads)
}  // namespace workbook

namespace workbook::channel {

enum class Event {
  begin,         // the judge started: chapter, subject, seed, problem ("" or why nothing can run),
                 // starved (the chapter's process could not start for want of device memory), where
  start,         // a test started: name
  test,          // a test ended: name, result, failures, ms, and a Bandwidth test's bandwidth
  context_lost,  // a kernel broke the CUDA context: name, error, judge (the judge's own context broke,
                 // not the chapter's process, whose code runs apart); the judge ends
  hang,          // a call never finished: name, seconds; the judge ends
  end,           // every test ran: ran, runner_exit, output_bytes, output_kept, gpu_bytes (the most GPU
                 // memory its processes held, NVML), and findings under a tool (--wrap)
  alone,         // the tests that run alone on the GPU come next: the judge waits for the grader's
                 // grant (one byte on the descriptor in kGrantFdVariable; none: they do not run)
  sanitize,      // after end: the sanitized tests under compute-sanitizer's tool come next, in a new
                 // chapter's process: tool; the judge waits for a grant as for alone
  between,       // between two tests (with --yield-between-tests): the judge waits for a grant before
                 // the next, so that a timed test waiting for the GPU alone waits for one test of
                 // each other process, not for all their tests
  sanitized,     // that run ended: tool, problem ("" or why it could not start), starved (as begin's),
                 // ran, runner_exit, output_bytes, output_kept, findings (the tool's own lines,
                 // kSanitizerLogFd); its tests' events came between the two
};
NLOHMANN_JSON_SERIALIZE_ENUM(Event, {{Event::begin, "begin"},
                                     {Event::start, "start"},
                                     {Event::test, "test"},
                                     {Event::context_lost, "context_lost"},
                                     {Event::hang, "hang"},
                                     {Event::end, "end"},
                                     {Event::alone, "alone"},
                                     {Event::sanitize, "sanitize"},
                                     {Event::between, "between"},
                                     {Event::sanitized, "sanitized"}})

//! A test's result word.
enum class Result { passed, failed, skipped };
NLOHMANN_JSON_SERIALIZE_ENUM(Result,
                             {{Result::passed, "passed"}, {Result::failed, "failed"}, {Result::skipped, "skipped"}})

//! What a Bandwidth test measured, as numbers: the subject's GB/s and the streaming-read ceiling's,
//! both measured the same way in the judge, the fastest batch's GB/s, and how many calls were
//! checked on how many distinct inputs, and the shape the ceiling was measured with.
struct Bandwidth {
  double subject_gbps = 0;
  double ceiling_gbps = 0;
  double fastest_batch_gbps = 0;
  int checked_calls = 0;
  int timed_inputs = 0;
  CeilingShape ceiling_shape;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Bandwidth, subject_gbps, ceiling_gbps, fastest_batch_gbps, checked_calls,
                                   timed_inputs, ceiling_shape)

//! What the runner's process ended with, as the end event says: the exit status compute-sanitizer
//! gives when it found errors.
inline constexpr int kSanitizerFoundErrors = 97;

//! A call of the chapter's code that has not finished after this long is a hang (the longest test
//! takes about a second alone on an H200): the grader's limit and a judge's default.
inline constexpr double kCallLimitSeconds = 10;

//! How much longer everything may take under a compute-sanitizer tool: a call, a test process, the
//! silence before a process counts as hung.
inline constexpr double kSanitizerTimeFactor = 4;

//! The command that runs a chapter's process under compute-sanitizer (at `path`) with `tool`: the
//! words before the runner's own. `api_errors` false leaves out the reports of CUDA calls that
//! returned an error, for the chapter over several GPUs: NCCL's start probes kernels with calls it
//! expects to fail (cudaFuncGetAttributes: "no kernel image", 8 reports per communicator, seen on
//! the H200 with NCCL 2.28.9, 2026-12-03). The judge still checks every call's errors itself.
inline std::vector<std::string> sanitizer_wrapper(const std::string& path, const std::string& tool,
                                                  bool api_errors = true) {
  std::vector<std::string> words = {path,
                                    "--tool",
                                    tool,
                                    "--error-exitcode",
                                    std::to_string(kSanitizerFoundErrors),
                                    "--print-limit",
                                    "4",
                                    "--log-file",
                                    kSanitizerLogFile};
  if (!api_errors) words.insert(words.end(), {"--report-api-errors", "no"});
  return words;
}

//! Whether `wrapper` is sanitizer_wrapper's command, writing its findings to kSanitizerLogFd.
inline bool writes_findings(const std::vector<std::string>& wrapper) {
  for (std::size_t i = 0; i + 1 < wrapper.size(); ++i) {
    if (wrapper[i] == "--log-file" && wrapper[i + 1] == kSanitizerLogFile) return true;
  }
  return false;
}

}  // namespace workbook::channel
