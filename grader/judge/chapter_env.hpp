// What every chapter test knows: which chapter (from the manifest), the implementation it tests
// (in a runner process of its own, or linked in: subject.hpp), the seed of this run.
//
// The process these tests run in is the judge: it holds the inputs, the expected results and the
// clock. The chapter's code runs in the runner, which sees only the buffers a call names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "judge/channel.hpp"
#include "judge/manifest.hpp"
#include "judge/names.hpp"
#include "subject.hpp"
#include "workbook/contract.hpp"

namespace testing {
class TestInfo;
}

namespace workbook::judge {

//! A test's full GoogleTest name: "Sizes/ExactSums.EveryElementCountedOnce/n_1000".
std::string full_name(const ::testing::TestInfo& info);

//! The implementation under test.
Subject& subject();
const ChapterSpec& spec();
std::uint64_t seed();
//! A stream of the judge's own (not the legacy default stream), for its own kernels and copies.
cudaStream_t stream();
//! Test names carry this prefix on the subject's result lines, e.g. "[learner]".
const std::string& subject_name();
//! A full reduction (chapters 08 on), as the manifest says.
bool is_full();
//! The first of the chapter's `requires` this machine lacks (met() when it has them all).
Unmet unmet_here();
//! Why a test skips for want of `unmet` (unmet_here()), in a sentence.
std::string skip_reason(const Unmet& unmet);
//! The GPUs this process sees: a chapter over several GPUs puts one rank on each.
int visible_gpus();

//! Runs calls on the subject (subject().run) and remembers whether the subject broke: a lost CUDA
//! context, a runner that died or a call that never finished ends the test process after the
//! test, since no later test could run.
Outcome run_calls(const std::vector<Call>& calls);
//! The same, ordered after everything enqueued on the judge's stream() so far (inputs, poison,
//! fingerprints): on the GPU where the subject's process can wait for the judge's word there
//! (GpuOrder), else by waiting here for the stream first. A call must never see an input before it
//! was written, nor an output before it was poisoned.
//!
//! With Order::host_first the judge also waits for its stream here before handing the calls over
//! (a timed batch, whose time must hold none of the judge's work); the calls still carry the
//! judge's word, already written, so that the chapter's process sees the same operations before
//! every call, timed or not.
enum class Order { on_gpu, host_first };
Outcome run_calls_after_stream(const std::vector<Call>& calls, Order order = Order::on_gpu);
//! The same for a batch of several tests' calls (run_batch, trial.hpp), which breaks nothing: a
//! subject that breaks in it is started again (restart_after_batch), and the tests run their calls
//! alone. Nor does a want of memory in it mark the running test starved. Without an error, it has a
//! result for every call.
Outcome run_batch_after_stream(const std::vector<Call>& calls);
//! Whether tests may take their calls' results from a batch: the chapter's code runs in a process
//! of its own, not under a tool, and the user did not ask for one test at a time
//! (names::kOneTestAtATimeVariable).
bool batches_allowed();
//! After a batch broke the chapter's process (`broke`, fatal): ends it and starts a new one with the
//! same options, in which the tests run their calls one test at a time. False where it cannot: then
//! the running test is the one that broke it, as if its own call had.
bool restart_after_batch(const Outcome& broke);

//! Asks the grader for the GPU alone (Event::alone) and waits until every other test process on it
//! has stopped: the timed test calls it once its inputs are ready and checked, so that it holds the
//! GPU alone only while it times. True once granted, and where no grader grants (a judge run by hand
//! or by CTest has the GPU as it finds it); false when the grader refuses it.
bool take_gpu_alone();
//! What the running Bandwidth test measured: sent to the grader, as numbers, with the test's end.
void report_bandwidth(const channel::Bandwidth& measured);
//! The shape the Bandwidth test's ceiling is measured with (--ceiling-shape): the one the reference
//! of this chapter measured its own with, where the grader knows it; none (screen them all) else.
CeilingShape given_ceiling_shape();
//! The running test could not have the device memory it needs, which the device has: another
//! process holds it. Its failure is then marked "starved" on the channel, and the grader tests the
//! chapter again with the GPU alone (a judge's own failed allocation marks it too).
void report_starved();
//! Why the device is too small for a test that needs `need` bytes (skipped: a fact of the device),
//! or nullopt.
std::optional<std::string> device_too_small(std::size_t need);
//! Whether `need` bytes are free; if not, the running test fails as starved (a test that needs
//! memory someone else holds did not run: that is never a pass, and never a skip).
bool device_memory_free(std::size_t need);

using names::kContextLostExit;
using names::kGrantFdVariable;
using names::kNoDeviceExit;
using names::kRehearsalVariable;
using names::kResultFdVariable;

}  // namespace workbook::judge
