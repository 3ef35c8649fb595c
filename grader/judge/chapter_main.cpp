// main() of a judge: the process that tests one chapter. It holds the inputs, the expected results,
// the seed and the clock; the chapter's code runs in a runner process of its own (--runner, how the
// grader always tests, inside the sandbox given with --sandbox), or linked into this process (the
// student's test_<chapter> and the reference_<chapter> builds, for profiling).
//
// It chooses the seed, skips cleanly without a GPU, reports every test's result to the grader over
// the descriptor it inherited (judge/channel.hpp), and ends with a clear message when the
// chapter's code breaks the CUDA context, dies or hangs (later tests could only fail confusingly).
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "chapter_env.hpp"
#include "judge/channel.hpp"
#include "judge/device.hpp"
#include "runner/cuda_check.hpp"
#include "runner/registry.hpp"
#include "runner/shared_memory.hpp"
#include "trial.hpp"

namespace workbook::judge {
namespace {

using channel::Event;

std::string g_subject;  // --subject; by default the linked implementation's, else "learner"
std::uint64_t g_seed = 0;
std::unique_ptr<Subject> g_implementation;
Manifest g_manifest;
const ChapterSpec* g_spec = nullptr;
cudaStream_t g_stream = nullptr;
std::string g_broken;  // why the subject can run no more calls (set by run_calls)
bool g_hung = false;
bool g_broken_here = false;                     // g_broken is this process's own context, the chapter's code not in it
std::optional<channel::Bandwidth> g_bandwidth;  // what the running Bandwidth test measured
bool g_yield_between_tests = false;             // --yield-between-tests
CeilingShape g_ceiling_shape;                   // --ceiling-shape: the reference's, where the grader knows it
RunnerOptions g_runner_options;                 // how the chapter's process was started (restart_after_batch)
bool g_starved = false;                         // the running test lacked memory another process held
// The runs under the tools, begun before the tests (by tool, in --sanitize order; null where one
// could not begin, and why in g_tool_problems) and taken out as each is granted.
std::vector<std::unique_ptr<RemoteSubject>> g_tool_runners;
std::vector<std::string> g_tool_problems;
const std::chrono::steady_clock::time_point g_started = std::chrono::steady_clock::now();  // the [timing] lines' zero
bool g_tools_said = false;  // "the runs under the tools ready" written

// Where a judge's time goes, in its log: the grader's timeline holds only the whole process.
double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

// Whether every run begun under a tool has made its context or failed to (with `wait`: once it
// has). The tests begin before, once the chapter's own process is ready; but until then this
// process neither gives its place beside the others to a timed test nor asks for the GPU alone: no
// process may be starting while a timed test has the GPU.
bool tools_settled(bool wait) {
  bool all = true;
  for (const auto& r : g_tool_runners) all = (!r || r->settled(wait)) && all;
  if (all && !g_tools_said && !g_tool_runners.empty()) {
    g_tools_said = true;
    fmt::print("[timing] the runs under the tools ready after {:.0f} ms\n", ms_since(g_started));
  }
  return all;
}

// A descriptor the grader opened before it started this process, its number in `variable`
// (read once, and taken out of the environment); -1 if there is none. Not inherited by the
// chapter's process.
int take_inherited_fd(const char* variable) {
  const char* env = std::getenv(variable);
  if (!env) return -1;
  const int fd = std::atoi(env);
  unsetenv(variable);
  if (fd <= 2 || fcntl(fd, F_GETFD) < 0) return -1;
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  return fd;
}

// The grader's channel: JSON lines on the descriptor in WORKBOOK_RESULT_FD. The chapter's code runs
// in another process and never sees it.
class ResultChannel {
 public:
  ResultChannel() : fd_(take_inherited_fd(kResultFdVariable)) {}
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

ResultChannel& results() {
  static ResultChannel c;
  return c;
}

// The grader's grant of the GPU alone (Event::alone): the descriptor in WORKBOOK_GRANT_FD, -1 when
// it gave none.
int grant_fd() {
  static const int fd = take_inherited_fd(kGrantFdVariable);
  return fd;
}

// Asks the grader (Event::alone, Event::sanitize) and waits for its answer: true once granted (a
// byte arrives), false if there is no grant descriptor or the grader closed it without one.
bool granted(const nlohmann::json& request) {
  if (grant_fd() < 0) return false;
  results().send(request);
  char byte = 0;
  for (;;) {
    const ssize_t n = ::read(grant_fd(), &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    return n == 1;
  }
}

void set_filter(const std::string& filter) {
#ifdef GTEST_FLAG_SET
  GTEST_FLAG_SET(filter, filter);
#else
  ::testing::GTEST_FLAG(filter) = filter;
#endif
}

// After each test: its result to the grader; then, if the implementation broke (a lost context, a
// runner that died or hangs), the process ends: no later test could run.
class Reporter : public ::testing::EmptyTestEventListener {
 public:
  int ran() const { return ran_; }

 private:
  void OnTestStart(const ::testing::TestInfo& info) override {
    // A point where this process has nothing on the GPU: the grader may hold it here while a timed
    // test has the GPU alone (the answer comes at once otherwise).
    if (g_yield_between_tests && tools_settled(false)) granted({{"event", Event::between}});
    results().send({{"event", Event::start}, {"name", full_name(info)}});
    out_of_memory_before_ = out_of_memory_count();
    g_starved = false;
  }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    const ::testing::TestResult& r = *info.result();
    nlohmann::json failures = nlohmann::json::array();
    for (int i = 0; i < r.total_part_count(); ++i) {
      const ::testing::TestPartResult& part = r.GetTestPartResult(i);
      if (part.failed()) failures.push_back(part.message());
    }
    ++ran_;
    nlohmann::json event = {{"event", Event::test},
                            {"name", full_name(info)},
                            {"result", r.Skipped()  ? channel::Result::skipped
                                       : r.Failed() ? channel::Result::failed
                                                    : channel::Result::passed},
                            {"failures", failures},
                            {"ms", r.elapsed_time()}};
    if (g_bandwidth) event["bandwidth"] = *g_bandwidth;
    g_bandwidth.reset();
    if (r.Failed() && (g_starved || out_of_memory_count() > out_of_memory_before_)) event["starved"] = true;
    results().send(event);
    // The judge's own context (and, linked in, the chapter's): a sticky error ends it.
    if (g_broken.empty()) {
      const cudaError_t err = cudaDeviceSynchronize();
      if (err != cudaSuccess && is_sticky(err)) {
        g_broken = error_text(err);
        g_broken_here = dynamic_cast<const RemoteSubject*>(g_implementation.get()) != nullptr;
      } else {
        cudaGetLastError();  // a non-sticky error must not leak into the next test
      }
    }
    if (g_broken.empty()) return;
    if (g_hung) {
      results().send({{"event", Event::hang}, {"name", full_name(info)}, {"error", g_broken}});
    } else {
      results().send(
          {{"event", Event::context_lost}, {"name", full_name(info)}, {"error", g_broken}, {"judge", g_broken_here}});
    }
    std::fflush(stdout);
    std::fprintf(stderr, "\n%s in %s: %s.\nNo further test can run%s.\n", g_hung ? "HANG" : "CONTEXT LOST",
                 full_name(info).c_str(), g_broken.c_str(),
                 g_hung ? "" : " (typically an out-of-bounds or misaligned access broke the CUDA context)");
    std::fflush(stderr);
    std::_Exit(kContextLostExit);
  }
  int ran_ = 0;
  int out_of_memory_before_ = 0;
};

std::uint64_t pick_seed() {
  if (const char* env = std::getenv(names::kSeedVariable)) {
    const std::uint64_t s = std::strtoull(env, nullptr, 0);
    unsetenv(names::kSeedVariable);
    return s;
  }
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

struct Arguments {
  std::string chapter;
  RunnerOptions runner;
  bool remote = false;
  bool yield_between_tests = false;  // ask the grader between tests (Event::between)
  std::string alone_tests;           // a gtest filter: run after the others, once the grader grants the GPU alone
  // Then, tool by tool once the grader grants each, these tests under compute-sanitizer.
  std::vector<std::string> sanitize_tools;
  std::string sanitizer, sanitized_tests;
  CeilingShape ceiling_shape;  // as JSON (channel.hpp), the one the Bandwidth test's ceiling is measured with
};

std::optional<Arguments> parse(int argc, char** argv) {
  Arguments a;
  a.runner.hardware_queues = names::kChapterHardwareQueues;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* flag) -> std::optional<std::string> {
      const std::string prefix = std::string(flag) + "=";
      if (arg.rfind(prefix, 0) == 0) return arg.substr(prefix.size());
      return std::nullopt;
    };
    if (auto v = value("--subject"))
      g_subject = *v;
    else if (auto v = value("--chapter"))
      a.chapter = *v;
    else if (auto v = value("--runner"))
      a.runner.runner = *v, a.remote = true;
    else if (auto v = value("--sandbox"))
      a.runner.sandbox_helper = *v;
    else if (auto v = value("--scratch"))
      a.runner.scratch = *v;
    else if (auto v = value("--read"))
      a.runner.readable.push_back(*v);
    else if (auto v = value("--wrap"))
      a.runner.wrapper.push_back(*v);
    else if (arg == "--interactive")
      a.runner.interactive = true;
    else if (arg == "--yield-between-tests")
      a.yield_between_tests = true;
    else if (auto v = value("--alone-tests"))
      a.alone_tests = *v;
    else if (auto v = value("--sanitize"))
      a.sanitize_tools.push_back(*v);
    else if (auto v = value("--sanitizer"))
      a.sanitizer = *v;
    else if (auto v = value("--sanitized-tests"))
      a.sanitized_tests = *v;
    else if (auto v = value("--call-timeout"))
      a.runner.call_timeout_s = std::atof(v->c_str());
    else if (auto v = value("--cpu-seconds"))
      a.runner.cpu_seconds = std::atof(v->c_str());
    else if (auto v = value(names::kHardwareQueuesFlag))
      a.runner.hardware_queues = std::atoi(v->c_str());
    else if (auto v = value(names::kCeilingShapeFlag)) {
      try {
        a.ceiling_shape = nlohmann::json::parse(*v).get<CeilingShape>();
      } catch (const nlohmann::json::exception& e) {
        fmt::print(stderr, "{}: not a shape ({}): {}\n", names::kCeilingShapeFlag, e.what(), *v);
        return std::nullopt;
      }
    } else {
      fmt::print(stderr,
                 "unknown argument {} (expected --chapter=<slug>, --subject=learner|reference, "
                 "--runner=<runner> [--sandbox=<workbook-sandbox>] [--scratch=<folder>] [--read=<folder>]... "
                 "[--wrap=<tool argument>]... [--interactive] [--call-timeout=<s>] [--cpu-seconds=<s>] "
                 "[--hardware-queues=<n>] "
                 "[--alone-tests=<gtest filter>] [--yield-between-tests] [--ceiling-shape=<json>] "
                 "[--sanitizer=<compute-sanitizer> "
                 "--sanitized-tests=<gtest filter> "
                 "--sanitize=<tool>...], and gtest flags)\n",
                 arg);
      return std::nullopt;
    }
  }
  if (!a.sanitize_tools.empty() && (a.sanitizer.empty() || a.sanitized_tests.empty() || !a.remote)) {
    fmt::print(stderr, "--sanitize needs --sanitizer, --sanitized-tests and --runner\n");
    return std::nullopt;
  }
  return a;
}

// Whether the runner registered what this judge tests, as the manifest describes it.
std::string check_registration(const remote::Registration& r, const std::string& chapter) {
  if (r.registered == 0) {
    return "no implementation registered: a chapter's kernel.cu must end with its registration line, e.g. "
           "WORKBOOK_BLOCK_PASS(launch);";
  }
  if (r.registered > 1) {
    return fmt::format(
        "{} implementations registered; a chapter registers exactly one, with the registration "
        "line the stub ends with",
        r.registered);
  }
  // The names come from the learner's code: one that is not a plain name is refused and quoted
  // visible (runner/visible_text.hpp), never as lines or escapes of its own.
  if (!plain_name(r.chapter) || !plain_name(r.subject)) {
    return fmt::format(
        "the implementation registered as chapter \"{}\", \"{}\": a chapter and a subject are plain "
        "names (letters, digits, '_', '-', '.'); keep the registration line the stub ends with",
        visible(r.chapter, Shape::line, 128), visible(r.subject, Shape::line, 128));
  }
  if (r.chapter != chapter || r.subject != g_subject) {
    return fmt::format("the implementation registered as chapter {}, {}; this test is for chapter {}, {}", r.chapter,
                       r.subject, chapter, g_subject);
  }
  const bool full = is_full();
  if ((r.kind == ChapterKind::full) != full || r.tuned != g_spec->tuned || r.generic != g_spec->generic ||
      r.rank != g_spec->ranks) {
    const char* want = !full             ? "WORKBOOK_BLOCK_PASS"
                       : g_spec->tuned   ? "WORKBOOK_TUNED_REDUCE"
                       : g_spec->generic ? "WORKBOOK_GENERIC_REDUCE"
                       : g_spec->ranks   ? "WORKBOOK_RANK_REDUCE"
                                         : "WORKBOOK_FULL_REDUCE";
    return fmt::format("chapter {} registers with {} (grader/manifest.json); this kernel.cu registered a {}", chapter,
                       want,
                       r.kind == ChapterKind::block_pass ? "block pass"
                       : r.tuned                         ? "tuned full reduction"
                       : r.generic                       ? "generic reduction"
                       : r.rank                          ? "reduction over several GPUs"
                                                         : "full reduction");
  }
  return "";
}

// A run under `tool`: the chapter's process under compute-sanitizer, its calls on one stream (one
// hardware queue), its time limit stretched for the tool.
RunnerOptions tool_options(const Arguments& args, const std::string& tool) {
  RunnerOptions options = args.runner;
  options.wrapper = channel::sanitizer_wrapper(args.sanitizer, tool, !g_spec->ranks);
  options.call_timeout_s *= channel::kSanitizerTimeFactor;
  options.hardware_queues = names::kOneStreamHardwareQueues;
  return options;
}

// The runs under the tools begin while the chapter's process starts; the tests begin without
// waiting for them (tools_settled says what does wait). Their starts (the tool, the sandbox, a CUDA
// context each) were 1.3 to 1.6 s each, one after another, after the tests; begun inside the tests
// they held back the timed tests of others, which may not run while a process starts (grading.md).
// One that is not granted is ended unused.
void begin_tool_runs(const Arguments& args) {
  g_tool_runners.resize(args.sanitize_tools.size());
  g_tool_problems.resize(args.sanitize_tools.size());
  for (std::size_t i = 0; i < args.sanitize_tools.size(); ++i) {
    try {
      g_tool_runners[i] = begin_runner(tool_options(args, args.sanitize_tools[i]));
    } catch (const std::exception& e) {
      g_tool_problems[i] = e.what();
    }
  }
}

}  // namespace

std::string full_name(const ::testing::TestInfo& info) {
  return std::string(info.test_suite_name()) + "." + info.name();
}

Subject& subject() { return *g_implementation; }
const ChapterSpec& spec() { return *g_spec; }
std::uint64_t seed() { return g_seed; }
cudaStream_t stream() { return g_stream; }
const std::string& subject_name() { return g_subject; }
bool is_full() { return g_spec->kind == "full"; }

int visible_gpus() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  return count;
}

Unmet unmet_here() {
  const DeviceInfo d = device_properties();
  Capabilities have;
  have.compute_capability = d.compute_major * 10 + d.compute_minor;
  have.cooperative_launch = d.cooperative_launch;
  have.gpus = visible_gpus();
  const char* rehearsal = std::getenv(kRehearsalVariable);
  if (rehearsal && std::string(rehearsal) == "1" && have.gpus >= 1)
    have.gpus = std::max(have.gpus, gpus_needed(*g_spec));
#if WORKBOOK_HAVE_NCCL
  have.nccl = true;
#endif
  return unmet_requirement(*g_spec, have);
}

std::string skip_reason(const Unmet& unmet) {
  switch (unmet.need) {
    case Unmet::Need::cooperative_launch:
      return "this device cannot launch cooperative kernels (cudaDevAttrCooperativeLaunch is 0)";
    case Unmet::Need::nccl:
      return "needs NCCL: this build has none (pip install nvidia-nccl-cu13, then configure again)";
    case Unmet::Need::gpus:
      return fmt::format(
          "needs {}; this machine has {} ({}=1 runs the chapter's ranks on the GPUs there are, to "
          "try its code: not a grade)",
          unmet.word, visible_gpus(), kRehearsalVariable);
    case Unmet::Need::compute_capability:
    case Unmet::Need::none: break;
  }
  const DeviceInfo d = device_properties();
  return fmt::format("needs {}; this device is sm_{}{}", unmet.word, d.compute_major, d.compute_minor);
}

namespace {

Outcome run_subject(const std::vector<Call>& calls, const Ready& ready) {
  Outcome o = subject().run(calls, ready);
  // The chapter's code could not have device memory (a launch or an allocation of its): where other
  // processes hold the device's memory, that is no fault of its own, and the grader tests it again
  // with the GPU alone (where it still fails, that run's verdict stands).
  const std::string no_memory = error_text(cudaErrorMemoryAllocation);
  bool short_of_memory = o.error.find(no_memory) != std::string::npos;
  for (const auto& r : o.results)
    short_of_memory = short_of_memory || r.launch_error.find(no_memory) != std::string::npos;
  if (short_of_memory) report_starved();
  if (o.fatal && g_broken.empty()) {
    g_broken = o.error;
    g_hung = o.hang;
  }
  return o;
}

bool set_to_one(const char* variable) {
  const char* v = std::getenv(variable);
  return v && std::string(v) == "1";
}

// Whether the user asked for calls ordered by a wait on the host (names::kOrderOnHostVariable).
bool order_on_host_asked() {
  static const bool asked = set_to_one(names::kOrderOnHostVariable);
  return asked;
}

// The word run_calls_after_stream orders calls by: set up once, zeroed before any runner reads it.
unsigned long long* ordering_word() {
  static unsigned long long* word = [] {
    auto* w = static_cast<unsigned long long*>(SharedMemory::allocate(sizeof(unsigned long long)));
    WORKBOOK_CUDA_CHECK(cudaMemsetAsync(w, 0, sizeof *w, stream()));
    WORKBOOK_CUDA_CHECK(cudaStreamSynchronize(stream()));
    return w;
  }();
  return word;
}

}  // namespace

Outcome run_calls(const std::vector<Call>& calls) { return run_subject(calls, {}); }

namespace {

// Orders what is handed over next after everything enqueued on the judge's stream so far: the
// word the calls wait for on the GPU, or none once the judge has waited for its stream here.
Ready order_after_stream(Order order) {
  static bool on_gpu = !order_on_host_asked();  // until the driver refuses a write
  static std::uint64_t last_value = 0;
  if (on_gpu && subject().orders_on_gpu() && SharedMemory::get()) {
    unsigned long long* word = ordering_word();
    std::string why;
    if (GpuOrder::write(stream(), word, last_value + 1, &why)) {
      const Ready ready{word, ++last_value};
      if (order == Order::host_first) WORKBOOK_CUDA_CHECK(cudaStreamSynchronize(stream()));
      return ready;
    }
    on_gpu = false;
    fmt::print("[order] the judge waits on the host before calls from now on: {}\n", why);
  }
  WORKBOOK_CUDA_CHECK(cudaStreamSynchronize(stream()));
  return {};
}

}  // namespace

Outcome run_calls_after_stream(const std::vector<Call>& calls, Order order) {
  const Ready ready = order_after_stream(order);
  return run_subject(calls, ready);
}

Outcome run_batch_after_stream(const std::vector<Call>& calls) {
  const Ready ready = order_after_stream(Order::on_gpu);
  Outcome o = subject().run(calls, ready);
  if (o.error.empty() && o.results.size() != calls.size())
    o.error = fmt::format("the chapter's process answered {} calls of {}", o.results.size(), calls.size());
  return o;
}

bool batches_allowed() {
  static const bool one_at_a_time = set_to_one(names::kOneTestAtATimeVariable);
  const auto* remote = dynamic_cast<const RemoteSubject*>(g_implementation.get());
  return !one_at_a_time && remote && !remote->under_tool() && g_runner_options.wrapper.empty();
}

bool restart_after_batch(const Outcome& broke) {
  auto* old = dynamic_cast<RemoteSubject*>(g_implementation.get());
  std::string why = "the chapter's code does not run in a process of its own";
  if (old && g_runner_options.wrapper.empty()) {
    const int code = old->finish();
    try {
      std::unique_ptr<RemoteSubject> fresh = start_runner(g_runner_options);
      if (const std::string problem = check_registration(fresh->registration(), g_spec->slug); !problem.empty())
        throw std::runtime_error(problem);
      g_implementation = std::move(fresh);
      // The running test starts over, its calls alone: said on the channel, so that the grader's
      // silence limit counts from here, not from before the batch and its time limit.
      if (const ::testing::TestInfo* running = ::testing::UnitTest::GetInstance()->current_test_info())
        results().send({{"event", Event::start}, {"name", full_name(*running)}});
      fmt::print(
          "[batch] the chapter's process broke in a batch of calls (it ended with status {}): {}\n"
          "[batch] a new one runs the tests' calls one test at a time\n",
          code, broke.error);
      return true;
    } catch (const std::exception& e) {
      why = e.what();
    }
  }
  fmt::print("[batch] the chapter's process broke in a batch of calls, and no new one could start: {}\n", why);
  if (g_broken.empty()) {  // as if the running test's own call had broken it
    g_broken = broke.error;
    g_hung = broke.hang;
  }
  return false;
}

void report_bandwidth(const channel::Bandwidth& measured) { g_bandwidth = measured; }

CeilingShape given_ceiling_shape() { return g_ceiling_shape; }

void report_starved() { g_starved = true; }

bool take_gpu_alone() {
  tools_settled(true);
  return grant_fd() < 0 || granted({{"event", channel::Event::alone}});
}

std::optional<std::string> device_too_small(std::size_t need) {
  const DeviceInfo info = device_properties();
  if (info.global_bytes >= need + (std::size_t(1) << 30)) return std::nullopt;
  return fmt::format("needs {:.1f} GiB of device memory; this device has {:.1f} GiB", need / 1073741824.0,
                     info.global_bytes / 1073741824.0);
}

bool device_memory_free(std::size_t need) {
  const DeviceInfo info = device_info();
  if (info.free_bytes >= need + (std::size_t(1) << 30)) return true;
  report_starved();
  ADD_FAILURE() << fmt::format(
      "needs {:.1f} GiB of free device memory and {:.1f} GiB is free: other processes hold "
      "the rest of the device's {:.1f} GiB. A test that did not run is no pass; the grader "
      "tests the chapter again with the GPU alone",
      need / 1073741824.0, info.free_bytes / 1073741824.0, info.global_bytes / 1073741824.0);
  return false;
}

void register_reproducible_tests();    // reproducible_test.cpp
void register_operator_tests();        // operators_chapter_test.cpp
void register_ranks_tests();           // ranks_chapter_test.cpp
std::string unlisted_batched_tests();  // chapter_test.cpp

}  // namespace workbook::judge

int main(int argc, char** argv) {
  const auto started = workbook::judge::g_started;
  using namespace workbook;
  using namespace workbook::judge;
  // No process of the same user may read this one's memory (the seed, the expected sums).
  prctl(PR_SET_DUMPABLE, 0);
  // The runs under the tools that were begun and never granted end with main, on every return.
  struct EndToolRuns {
    ~EndToolRuns() { g_tool_runners.clear(); }
  } end_tool_runs;
  ::testing::InitGoogleTest(&argc, argv);
  std::optional<Arguments> args = parse(argc, argv);
  if (!args) return 2;
  if (args->remote) one_hardware_queue_here();  // never where the chapter's code runs in this process
  const std::vector<Entry> linked = all_entries();
  std::string chapter = args->chapter;
  g_yield_between_tests = args->yield_between_tests;
  g_ceiling_shape = args->ceiling_shape;
  if (chapter.empty() && !linked.empty()) chapter = linked.front().chapter;
  if (g_subject.empty()) g_subject = !args->remote && !linked.empty() ? linked.front().subject : "learner";
  try {
    g_manifest = load_manifest(WORKBOOK_MANIFEST);
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 2;
  }
  g_spec = g_manifest.find(chapter);
  if (!g_spec) {
    fmt::print(stderr, "no chapter '{}' in the manifest (give --chapter=<slug>)\n", chapter);
    return 2;
  }
  args->runner.limits = {g_spec->host_memory_bytes, kRunnerProcesses};
  args->runner.gpu_memory_bytes = g_spec->gpu_memory_bytes;
  // A chapter whose launcher takes its grid as a parameter also gets the tests that change the
  // grid (Reproducible, Accuracy): registered before any listing, so the grader's list has them.
  if (g_spec->tuned) register_reproducible_tests();
  if (g_spec->generic) register_operator_tests();
  if (g_spec->ranks) {
    register_ranks_tests();
    // Its runner talks to itself over TCP (NCCL's bootstrap), on a loopback network of its own,
    // and loads NCCL from where the build found it.
    args->runner.loopback = true;
#ifdef WORKBOOK_NCCL_LIB_DIR
    args->runner.readable.push_back(WORKBOOK_NCCL_LIB_DIR);
#endif
  }
  if (const std::string bad = unknown_groups(); !bad.empty()) {
    fmt::print(stderr, "test suites outside the named groups (judge/names.hpp):{}\n", bad);
    return 2;
  }
  if (const std::string bad = unlisted_batched_tests(); !bad.empty()) {
    fmt::print(stderr, "tests to batch that no test is (chapter_test.cpp, batchable_tests):{}\n", bad);
    return 2;
  }
#ifdef GTEST_FLAG_GET
  if (GTEST_FLAG_GET(list_tests)) return RUN_ALL_TESTS();
#else
  if (::testing::GTEST_FLAG(list_tests)) return RUN_ALL_TESTS();
#endif
  results();  // takes the descriptors before anything else runs
  grant_fd();
  g_seed = pick_seed();
  std::string problem;
  if (!args->remote) {
    if (linked.empty()) {
      problem = "no implementation is linked into this judge: give it one with --runner=<runner>";
    } else {
      problem = check_registration(remote::registration_of(linked), chapter);
    }
  }
  std::string why;
  if (problem.empty() && !device_available(&why)) {
    results().send({{"event", channel::Event::begin},
                    {"chapter", chapter},
                    {"subject", g_subject},
                    {"seed", g_seed},
                    {"problem", ""}});
    fmt::print("SKIPPED: no CUDA device: {}. These tests need a GPU.\n", why);
    return kNoDeviceExit;
  }
  nlohmann::json sandbox = nullptr;
  const int out_of_memory_before_start = out_of_memory_count();
  if (problem.empty()) {
    // This process makes its CUDA context in a thread while the chapter's process starts (its
    // sandbox, its own context): the two were made one after the other, most of a chapter's 2 s
    // before its first test. The runner is forked from this thread, never the helper: the sandbox
    // dies with the thread that forked it (PR_SET_PDEATHSIG).
    int device = 0;
    WORKBOOK_CUDA_CHECK(cudaGetDevice(&device));
    std::string device_problem;
    std::thread making([&] {
      try {
        WORKBOOK_CUDA_CHECK(cudaSetDevice(device));
        const DeviceInfo info = device_info();
        fmt::print("device: {} ({} SMs, {} MB L2, {:.1f} GiB), driver CUDA {}, runtime {}\n", info.name,
                   info.multiprocessors, info.l2_bytes >> 20, info.global_bytes / 1073741824.0,
                   version_string(info.driver_version), version_string(info.runtime_version));
        WORKBOOK_CUDA_CHECK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
        fmt::print("[timing] the judge's device ready after {:.0f} ms\n", ms_since(started));
      } catch (const std::exception& e) {
        device_problem = e.what();
        if (device_problem.empty()) device_problem = "unknown";
      } catch (...) {  // nothing may leave a thread: that would end the judge without a word
        device_problem = "an exception that is not a std::exception";
      }
    });
    std::unique_ptr<RemoteSubject> remote;
    if (args->remote) {
      try {
        if (!SharedMemory::create(&why)) throw std::runtime_error(why);
        g_runner_options = args->runner;
        remote = begin_runner(args->runner);
        begin_tool_runs(*args);
        remote->await_ready();
        fmt::print("[timing] the chapter's process ready after {:.0f} ms\n", ms_since(started));
        fmt::print(
            "[order] its calls wait for the judge's inputs {}\n",
            remote->orders_on_gpu() && !order_on_host_asked()
                ? "on the GPU"
                : fmt::format("by a wait on the host{}",
                              remote->orders_on_gpu() ? fmt::format(" ({}=1)", names::kOrderOnHostVariable) : ""));
        tools_settled(false);  // says so here if they are ready already
      } catch (const std::exception& e) {
        remote.reset();  // a chapter's process that did not start is no implementation
        problem = e.what();
      }
    }
    making.join();
    if (!device_problem.empty()) {
      remote.reset();  // ends the chapter's process
      fmt::print("SKIPPED: the CUDA device cannot be used: {}\n", device_problem);
      return kNoDeviceExit;
    }
    if (remote) {
      sandbox = remote->sandbox();
      problem = check_registration(remote->registration(), chapter);
      g_implementation = std::move(remote);
    } else if (!args->remote) {
      g_implementation = local_subject(linked.front());
    }
  }
  const std::string where = g_implementation ? g_implementation->where() : "";
  results().send({{"event", channel::Event::begin},
                  {"chapter", chapter},
                  {"subject", g_subject},
                  {"seed", g_seed},
                  {"problem", problem},
                  // The chapter's process could not start for want of device memory: other processes
                  // may hold it, and the grader tests the chapter again with the GPU alone.
                  {"starved", !problem.empty() && out_of_memory_count() > out_of_memory_before_start},
                  {"where", where},
                  {"sandbox", sandbox}});
  if (!problem.empty()) {
    fmt::print(stderr, "NOT TESTED: {}\n", problem);
    g_implementation.reset();  // ends the runner while the memory it maps is still there
    return 2;
  }
  fmt::print("chapter {} ({}), testing the {} implementation {}, seed {} (set {}={} to repeat)\n", chapter,
             g_spec->version, g_subject, where, g_seed, names::kSeedVariable, g_seed);
  fmt::print("[timing] ready to test after {:.0f} ms (the device, the chapter's process)\n", ms_since(started));
  const auto tests_started = std::chrono::steady_clock::now();
  std::fflush(stdout);
  auto* reporter = new Reporter;
  ::testing::UnitTest::GetInstance()->listeners().Append(reporter);
  // The sanitized tests first, in the order the runs under compute-sanitizer take them: until the
  // sanitized runs end, their runners see the very calls this one sees, so no count or order of
  // calls tells a runner whether a tool watches it.
  int rc = 0;
  if (!args->sanitize_tools.empty()) {
#ifdef GTEST_FLAG_GET
    const std::string given = GTEST_FLAG_GET(filter);
#else
    const std::string given = ::testing::GTEST_FLAG(filter);
#endif
    set_filter(args->sanitized_tests);
    rc = RUN_ALL_TESTS() != 0;
    // Added to the filter's negative patterns, after its "-" where it has one.
    set_filter(given + (given.find('-') != std::string::npos ? ":" : "-") + args->sanitized_tests);
  }
  rc = RUN_ALL_TESTS() != 0 || rc != 0;
  // The timed tests, in the same process (its device, buffers and chapter's process kept), when
  // every other test passed: each prepares and checks its inputs beside the other test processes,
  // then asks for the GPU alone (take_gpu_alone) for its timed calls only.
  if (!args->alone_tests.empty() && rc == 0) {
    set_filter(args->alone_tests);
    rc = RUN_ALL_TESTS() != 0 || rc != 0;
  }
  fmt::print("[timing] the tests took {:.0f} ms\n", ms_since(tests_started));
  if (const auto* remote = dynamic_cast<const RemoteSubject*>(g_implementation.get())) {
    const RemoteSubject::Costs& c = remote->costs();
    fmt::print(
        "[timing] in the tests: {} runs of calls, {:.0f} ms waiting for their answers, {:.0f} ms mapping the "
        "judge's buffers into the chapter's process, {:.0f} ms asking NVML what it holds\n",
        c.runs, 1000 * c.answers_s, 1000 * c.mappings_s, 1000 * c.budget_s);
    fmt::print(
        "[timing] in the tests: {} buffers mapped into the chapter's process ({:.1f} GB), {} unmapped again in "
        "{:.0f} ms\n",
        c.mappings, c.mapped_gb, c.unmappings, 1000 * c.unmappings_s);
  }
  const TrialCosts& trials = trial_costs();
  fmt::print(
      "[timing] in the tests: {} single calls, {:.0f} ms preparing them (poison, the input's fingerprint), {:.0f} ms "
      "calling, {:.0f} ms checking them\n",
      trials.runs, 1000 * trials.prepare_s, 1000 * trials.call_s, 1000 * trials.check_s);
  fmt::print("[timing] in the tests: {} batches of {} calls in all, {:.0f} ms from their preparing to their checks\n",
             trials.batches, trials.batched_calls, 1000 * trials.batch_s);
  // Ends the chapter's process and says how it ended, in the event that closes its tests.
  const auto end_runner = [&](nlohmann::json& event, const std::vector<std::string>& wrapper) {
    if (auto* remote = dynamic_cast<RemoteSubject*>(g_implementation.get())) {
      const auto finishing = std::chrono::steady_clock::now();
      const int code = remote->finish();
      fmt::print("[timing] the chapter's process ended {:.0f} ms after the tests\n", ms_since(finishing));
      event["runner_exit"] = code;
      event["output_bytes"] = remote->output_bytes();
      event["output_kept"] = remote->output_kept();
      if (remote->gpu_bytes_peak()) {
        event["gpu_bytes"] = *remote->gpu_bytes_peak();
        fmt::print("[memory] the chapter's processes held at most {:.2f} GiB of GPU memory (NVML)\n",
                   *remote->gpu_bytes_peak() / 1073741824.0);
      }
      if (channel::writes_findings(wrapper)) event["findings"] = remote->findings();
      if (code != 0) {
        fmt::print("the chapter's process{} exited with status {}{}\n",
                   wrapper.empty() ? "" : " (under " + wrapper.front() + ")", code,
                   code == channel::kSanitizerFoundErrors ? ": compute-sanitizer found errors" : "");
      }
    }
    results().send(event);
    g_implementation.reset();  // before the static buffers and the shared memory go
  };
  nlohmann::json end = {{"event", Event::end}, {"ran", reporter->ran()}};
  end_runner(end, args->runner.wrapper);
  // The sanitized tests under each tool, in this process too (its device and buffers kept): a new
  // chapter's process under the tool for each, once the grader grants it (a chapter that failed a
  // test, or whose last tool found something, is not granted).
  for (std::size_t i = 0; i < args->sanitize_tools.size(); ++i) {
    const std::string& tool = args->sanitize_tools[i];
    if (!granted({{"event", Event::sanitize}, {"tool", tool}})) break;
    const auto started_tool = std::chrono::steady_clock::now();
    const RunnerOptions options = tool_options(*args, tool);
    nlohmann::json done = {{"event", Event::sanitized}, {"tool", tool}, {"problem", ""}};
    const int out_of_memory_before = out_of_memory_count();
    try {
      std::unique_ptr<RemoteSubject> remote = std::move(g_tool_runners[i]);
      if (!remote) throw std::runtime_error(g_tool_problems[i]);
      remote->await_ready();
      done["problem"] = check_registration(remote->registration(), chapter);
      g_implementation = std::move(remote);
    } catch (const std::exception& e) {
      done["problem"] = e.what();
      if (out_of_memory_count() > out_of_memory_before) done["starved"] = true;  // as the begin event says
    }
    fmt::print("[timing] under {} {}: ready to test after {:.0f} ms more\n", args->sanitizer, tool,
               ms_since(started_tool));
    if (done["problem"] == "") {
      const int before = reporter->ran();
      set_filter(args->sanitized_tests);
      rc = RUN_ALL_TESTS() != 0 || rc != 0;
      done["ran"] = reporter->ran() - before;
    }
    end_runner(done, options.wrapper);
    if (done["problem"] != "") break;
  }
  return rc;
}
