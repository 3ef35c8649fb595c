#include "tester.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "judge/channel.hpp"
#include "judge/names.hpp"
#include "run.hpp"
#include "score.hpp"
#include "text.hpp"

namespace fs = std::filesystem;

namespace grader {
namespace {

namespace names = workbook::names;
using workbook::channel::Result;

// The longest test takes about a second alone on the GPU (H200, 2026-11-30); a call of the
// chapter's code that takes longer than channel::kCallLimitSeconds is a hang, which the judge reports
// itself, and a judge that reports nothing for kSilenceLimit is ended.
constexpr double kCallLimit = workbook::channel::kCallLimitSeconds;
constexpr double kSilenceLimit = 15;

// A Bandwidth test's figures: the subject's GB/s and the ceiling's, when it measured them.
std::optional<double> subject_gbps(const TestRecord& t) {
  return t.bandwidth ? std::optional<double>(t.bandwidth->subject_gbps) : std::nullopt;
}
std::optional<double> ceiling_gbps(const TestRecord& t) {
  return t.bandwidth ? std::optional<double>(t.bandwidth->ceiling_gbps) : std::nullopt;
}

void add_failure(ChapterResult& r, const std::string& name, const std::string& message) {
  r.failed.push_back({name, message});
  const std::string group(names::group_of(name));
  if (std::find(r.failed_groups.begin(), r.failed_groups.end(), group) == r.failed_groups.end()) {
    r.failed_groups.push_back(group);
  }
}

void interrupt(ChapterResult& r) {
  r.status = Status::interrupted;
  r.detail = "the grader was interrupted while grading this chapter";
}

// The name of the test that was running when a process stopped: the first
// expected test it did not report.
std::string running_test(const TestRun& t, const std::vector<std::string>& expected) {
  for (const std::string& name : expected) {
    if (!t.find(name)) return name;
  }
  return "";
}

// Checks that a run reported exactly the expected tests; "" if it did.
std::string incomplete(const TestRun& t, const std::vector<std::string>& expected) {
  std::set<std::string> seen;
  for (const TestRecord& rec : t.tests) {
    if (!std::count(expected.begin(), expected.end(), rec.name)) {
      return fmt::format("it reported a test the grader did not ask for: {}", rec.name);
    }
    if (!seen.insert(rec.name).second) return fmt::format("it reported test {} twice", rec.name);
  }
  if (t.unreadable_lines) return fmt::format("{} of its result lines were unreadable", t.unreadable_lines);
  if (t.process.channel_overflowed) return "it sent more results than any test run can";
  if (seen.size() != expected.size() || !t.ended) {
    return fmt::format("it reported {} of the {} tests{}", seen.size(), expected.size(),
                       t.ended ? "" : " and never said it had finished");
  }
  return "";
}

// The run ended for want of time: the process past its limit, or a call the judge saw hang.
bool out_of_time(const TestRun& t) { return t.process.timed_out || !t.hang.empty(); }

bool any_failed(const TestRun& t) {
  return std::any_of(t.tests.begin(), t.tests.end(), [](const TestRecord& x) { return x.result == Result::failed; });
}

// A run (the tests, or one tool's) that reported every expected test, none failed, and (a tool's)
// whose chapter's process ended well: what the next part of a chapter waits for.
bool clean(const TestRun& t, const std::vector<std::string>& expected) {
  return t.problem.empty() && !any_failed(t) && incomplete(t, expected).empty() &&
         (t.tool.empty() || t.runner_exit == 0);
}

std::string process_end(const ProcessResult& p) {
  if (p.signal) return fmt::format("died of signal {} ({})", p.signal, strsignal(p.signal));
  return fmt::format("exited with status {}", p.exit_code);
}

// Sets the chapter's status where a test process did not run to its end as it
// must; true if it did.
bool ran_to_the_end(const TestRun& t, const std::vector<std::string>& expected, int limit_s, const std::string& log,
                    ChapterResult& r) {
  if (t.process.interrupted) {
    interrupt(r);
    return false;
  }
  if (t.process.timed_out) {
    const std::string test = !t.started.empty() && !t.find(t.started) ? t.started : running_test(t, expected);
    r.status = Status::timed_out;
    r.detail = fmt::format(
        "{}{}: a kernel that never finishes (a __syncthreads() some threads never "
        "reach, or a loop that never ends)",
        t.process.silent ? fmt::format("no result for {:.0f} s", kSilenceLimit)
                         : fmt::format("no result after {} s", limit_s),
        test.empty() ? "" : ", in test " + test);
    return false;
  }
  if (!t.hang.empty()) {
    r.status = Status::timed_out;
    r.detail =
        fmt::format("in test {} (a __syncthreads() some threads never reach, or a loop that never ends)", t.hang);
    return false;
  }
  if (!t.context_lost.empty()) {
    r.status = Status::crashed;
    r.detail = t.judge_broke ? fmt::format(
                                   "in test {}: the judge's own CUDA context broke, not the chapter's process (its "
                                   "code runs in a process of its own); no later test could run",
                                   t.context_lost)
                             : fmt::format(
                                   "in test {}; no later test could run (typically an out-of-bounds or misaligned "
                                   "access broke the CUDA context)",
                                   t.context_lost);
    return false;
  }
  if (t.process.signal) {
    r.status = Status::crashed;
    r.detail = fmt::format("the test process {} during test {}; the last lines it printed:\n{}", process_end(t.process),
                           running_test(t, expected), quoted_block(tail_of(log, 6)));
    return false;
  }
  if (!t.problem.empty()) {
    r.status = Status::failed;
    r.detail = t.problem;
    return false;
  }
  if (!t.began) {
    r.status = Status::crashed;
    r.detail = fmt::format("the test process {} before it reported anything; the last lines it printed:\n{}",
                           process_end(t.process), quoted_block(tail_of(log, 6)));
    return false;
  }
  if (const std::string why = incomplete(t, expected); !why.empty()) {
    r.status = Status::incomplete;
    r.detail = fmt::format(
        "the test process {}, and {}: a run that stops early or skips tests is "
        "not graded (last test started: {})",
        process_end(t.process), why, running_test(t, expected));
    return false;
  }
  return true;
}

// Counts the tests: every test that ran and was not skipped is a correctness
// test, the timed test's checks of its calls included.
void tally(const TestRun& t, ChapterResult& r) {
  if (!t.where.empty() && r.isolation.empty()) {
    r.isolation = t.where;
    r.sandboxed = t.sandboxed;
  }
  r.starved = r.starved || t.starved();
  r.judge_broke = r.judge_broke || t.judge_broken();
  r.output_bytes = std::max(r.output_bytes, t.output_bytes);
  r.output_kept = std::max(r.output_kept, t.output_kept);
  for (const TestRecord& rec : t.tests) {
    r.tests.push_back({rec.name, rec.result});
    if (rec.group == "Bandwidth") {
      r.learner_gbps = subject_gbps(rec);
      r.learner_ceiling_gbps = ceiling_gbps(rec);
    }
    if (rec.result == Result::skipped) continue;
    ++r.tests_total;
    if (rec.result == Result::passed) {
      ++r.tests_passed;
      continue;
    }
    std::string message;
    for (const std::string& f : rec.failures) message += f + "\n";
    add_failure(r, rec.name, message);
  }
}

// A turn on the GPU for the scope: alone (a timed run) or beside other test processes.
struct Turn {
  TimingGate& g;
  const bool alone;
  Turn(TimingGate& gate, bool a) : g(gate), alone(a) { alone ? g.lock() : g.lock_shared(); }
  ~Turn() { alone ? g.unlock() : g.unlock_shared(); }
};

// A process's row in the timeline, from when the GPU was granted to the end of the scope.
struct Entry {
  Timeline& timeline;
  std::string submission, chapter, what;
  int gpu;
  Timeline::Clock::time_point asked, started = Timeline::Clock::now();
  Entry(Timeline& t, std::string s, std::string c, std::string w, int g, Timeline::Clock::time_point a)
      : timeline(t), submission(std::move(s)), chapter(std::move(c)), what(std::move(w)), gpu(g), asked(a) {}
  ~Entry() { timeline.add(submission, chapter, what, gpu, asked, started); }
};

// The log of one run of a chapter's tests: `what` is "test", "alone" or a tool's name.
fs::path run_log(const std::string& log_dir, const std::string& slug, std::string_view what) {
  return fs::path(log_dir) / fmt::format("{}.{}.log", slug, what);
}

// Every kind of run that writes a log (run_log).
std::vector<std::string> run_log_kinds() {
  std::vector<std::string> whats = {"test", "alone"};
  for (std::string_view tool : names::kSanitizerTools) whats.emplace_back(tool);
  return whats;
}

// Before a chapter is tested again alone, its first run's logs move aside (<slug>.first.<what>.log),
// so that its report's logs still say what that run lacked; the new run writes the usual names.
void keep_first_run_logs(const std::string& log_dir, const std::string& slug) {
  for (const std::string& what : run_log_kinds()) {
    std::error_code ec;
    if (fs::exists(run_log(log_dir, slug, what), ec)) {
      fs::rename(run_log(log_dir, slug, what), run_log(log_dir, slug, "first." + what), ec);
    }
  }
}

// The logs that keep_first_run_logs moved aside in an earlier grading into the same folder.
void remove_first_run_logs(const std::string& log_dir, const std::string& slug) {
  for (const std::string& what : run_log_kinds()) {
    std::error_code ec;
    fs::remove(run_log(log_dir, slug, "first." + what), ec);
  }
}

}  // namespace

// A feature the chapter needs that this GPU lacks ("" if none). Cooperative launch is
// left to the test process, which asks the device; every current GPU has it. A chapter over
// several GPUs has this GPU and every other one the grader tests on.
workbook::Unmet GpuTester::unmet(const workbook::ChapterSpec& spec) const {
  workbook::Capabilities have;
  have.compute_capability = gpu_.requirement_cc;
  have.gpus = 1 + static_cast<int>(gpu_.peers.size());
  have.nccl = WORKBOOK_HAVE_NCCL != 0;
  return workbook::unmet_requirement(spec, have);
}

// The test processes' environment: the seed, and the GPUs they see: this one alone, or for a
// chapter over several GPUs this one first (its rank 0, where its timed test runs) and then the
// others. Those ranks' tests are correctness tests on small shards, outside the other GPUs'
// timing gates.
std::map<std::string, std::string> GpuTester::env(const workbook::ChapterSpec& spec) const {
  std::map<std::string, std::string> e = {{names::kSeedVariable, std::to_string(session_.options().seed)}};
  if (!gpu_.visible.empty()) {
    std::string visible = gpu_.visible;
    if (workbook::gpus_needed(spec) > 1) {
      for (const std::string& peer : gpu_.peers) visible += "," + peer;
    }
    e["CUDA_VISIBLE_DEVICES"] = visible;
  }
  return e;
}

std::vector<std::string> GpuTester::judge_command(const workbook::ChapterSpec& spec, const std::string& subject,
                                                  const std::string& runner, const std::string& filter,
                                                  const std::vector<std::string>& wrap) const {
  // A run under a tool gets one hardware queue, as the runs a single judge begins do.
  const int queues = wrap.empty() ? session_.options().chapter_hardware_queues : names::kOneStreamHardwareQueues;
  std::vector<std::string> argv = {
      session_.judge(),
      "--chapter=" + spec.slug,
      "--subject=" + subject,
      "--runner=" + runner,
      "--sandbox=" + session_.sandbox_helper(),
      fmt::format("--call-timeout={:.0f}",
                  wrap.empty() ? kCallLimit : workbook::channel::kSanitizerTimeFactor * kCallLimit),
      fmt::format("--cpu-seconds={}", 4 * session_.limit(spec)),
      fmt::format("{}={}", names::kHardwareQueuesFlag, queues)};
  for (const std::string& w : wrap) argv.push_back("--wrap=" + w);
  // The learner's ceiling is measured with the shape its reference's was, without a screen of its own.
  const auto reference = reference_.find(spec.slug);
  if (subject == "learner" && reference != reference_.end() && reference->second.ceiling_shape.known()) {
    argv.push_back(std::string(names::kCeilingShapeFlag) + "=" +
                   nlohmann::json(reference->second.ceiling_shape).dump());
  }
  argv.push_back("--gtest_filter=" + filter);
  return argv;
}

bool GpuTester::measure_references(const std::string& log_dir) {
  Turn alone(gate_, true);
  for (const workbook::ChapterSpec* spec : session_.chosen()) {
    if (!unmet(*spec).met()) continue;  // the chapter is skipped on this GPU
    const std::string log =
        (fs::path(log_dir) / fmt::format("{}.reference.gpu{}.log", spec->slug, gpu_.index)).string();
    Entry entry(session_.timeline(), kReferenceRow, spec->slug, "alone", gpu_.index, Timeline::Clock::now());
    const TestRun t = run_tests(judge_command(*spec, "reference", session_.reference_runner(spec->slug),
                                              gtest_filter(session_.alone_tests(spec->slug))),
                                log, session_.limit(*spec), env(*spec), kSilenceLimit);
    if (t.process.interrupted) return false;
    ReferenceBandwidth m;
    for (const TestRecord& rec : t.tests) {
      if (rec.group == "Bandwidth" && rec.result == Result::passed && rec.bandwidth) {
        m = {subject_gbps(rec), ceiling_gbps(rec), rec.bandwidth->ceiling_shape};
      }
    }
    if (!m.gbps) {
      fmt::print(stderr, "grader: the reference of {} could not be measured on GPU {} (log: {})\n", spec->slug,
                 gpu_.index, log);
    }
    reference_[spec->slug] = m;
  }
  return true;
}

bool test_again_alone(const ChapterResult& r) {
  return (r.starved || r.crowded || r.judge_broke) && !(r.status.is_pending() && r.correct()) &&
         r.status.code() != Status::interrupted;
}

std::string retest_note(const ChapterResult& first, const ChapterResult& again) {
  // Starved again with the GPU to itself, the chapter asks for more device memory than the GPU has.
  if (again.starved) {
    return "(tested again with the GPU alone, and still out of GPU memory: the chapter asks for more than the GPU "
           "has, e.g. a huge stack frame or __device__ array)";
  }
  if (first.starved) {
    return "(tested again with the GPU alone: the first time, another process held the device memory its tests "
           "needed)";
  }
  if (first.judge_broke) {
    return again.judge_broke ? "(the judge's own CUDA context broke beside other test processes, and again with the "
                               "GPU alone: a fault of the grader's machine, not of this code; ask for a regrade)"
                             : "(tested again with the GPU alone: the first time, the judge's own CUDA context broke "
                               "beside other test processes)";
  }
  return again.status.code() == Status::timed_out
             ? "(out of time beside other test processes, and again with the GPU alone)"
             : "(tested again with the GPU alone: the first time, it ran out of time beside other test processes)";
}

std::vector<std::string> tests_to_report(const std::vector<std::string>& shared, const std::vector<std::string>& alone,
                                         bool granted_alone, const TestRun& so_far) {
  std::vector<std::string> names = shared;
  if (granted_alone ||
      std::any_of(alone.begin(), alone.end(), [&](const std::string& name) { return so_far.find(name); })) {
    names.insert(names.end(), alone.begin(), alone.end());
  }
  return names;
}

void GpuTester::test_chapter(const std::string& submission, const std::string& runner, const std::string& log_dir,
                             const std::string& slot_dir, ChapterResult& r, Place& place) {
  if (const workbook::Unmet unmet = this->unmet(*r.spec); !unmet.met()) {
    using Need = workbook::Unmet::Need;
    skip(r, unmet,
         unmet.need == Need::nccl ? kBuildWithoutNccl
         : unmet.need == Need::gpus
             ? fmt::format("the grader tests on {} GPU{}", 1 + gpu_.peers.size(), gpu_.peers.empty() ? "" : "s")
             : fmt::format("GPU {} is sm_{}", gpu_.index, gpu_.requirement_cc));
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  remove_first_run_logs(log_dir, r.spec->slug);
  const auto it = reference_.find(r.spec->slug);
  if (it != reference_.end()) {
    r.reference_gbps = it->second.gbps;
    r.reference_ceiling_gbps = it->second.ceiling_gbps;
  }
  const auto run_all = [&](ChapterResult& result, bool alone_only) {
    place.take();
    const Run run{submission, runner, log_dir, slot_dir, place, alone_only};
    if (!session_.options().separate_judges) {
      run_in_one_judge(run, result);
    } else {
      run_part(run, result, false);
      if (result.status.is_pending() && result.correct()) run_part(run, result, true);
      place.give_back();
      if (result.status.is_pending() && result.correct() && session_.options().sanitize) sanitize(run, result);
    }
  };
  run_all(r, false);
  // A test that could not have the device memory it needed, which another process held, is no fault
  // of this chapter; nor is a slow but finite kernel's running out of time while other processes
  // (a neighbour's hang among them) had their turns on the GPU; nor a break of the judge's own CUDA
  // context, which the chapter's process cannot reach. Either way the chapter is tested
  // again, every process of it alone on the GPU, and graded by that: a kernel that never ends costs
  // its limit once more, alone, which is the price of not failing a correct one.
  if (test_again_alone(r)) {
    ChapterResult again;
    again.spec = r.spec;
    again.refusals = r.refusals;
    again.idea = r.idea;
    again.reference_gbps = r.reference_gbps;
    again.reference_ceiling_gbps = r.reference_ceiling_gbps;
    keep_first_run_logs(log_dir, r.spec->slug);
    run_all(again, true);
    again.tested_alone = true;
    const std::string note = retest_note(r, again);
    r = std::move(again);
    r.detail += std::string(r.detail.empty() ? "" : " ") + note;
  }
  if (r.status.is_pending()) score(r);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void GpuTester::run_part(const Run& run, ChapterResult& r, bool alone) {
  const workbook::ChapterSpec& spec = *r.spec;
  const std::string log = run_log(run.log_dir, spec.slug, alone ? "alone" : "test").string();
  const std::string filter = (alone ? "" : "-") + gtest_filter(session_.alone_tests(spec.slug));
  TestRun t;
  {
    const auto asked = Timeline::Clock::now();
    Turn turn(gate_, alone || run.alone_only);
    Entry entry(session_.timeline(), run.submission, spec.slug, alone ? "alone" : "tests", gpu_.index, asked);
    t = run_tests(judge_command(spec, "learner", run.runner, filter), log, session_.limit(spec), env(spec),
                  kSilenceLimit);
  }
  tally(t, r);
  r.crowded = r.crowded || (out_of_time(t) && !alone && !run.alone_only);
  ran_to_the_end(t, alone ? session_.alone_tests(spec.slug) : session_.shared_tests(spec.slug), session_.limit(spec),
                 log, r);
}

void GpuTester::run_in_one_judge(const Run& run, ChapterResult& r) {
  using workbook::channel::Event;
  using Grant = ProcessOptions::Grant;
  const workbook::ChapterSpec& spec = *r.spec;
  const std::string log = run_log(run.log_dir, spec.slug, "test").string();
  const std::string alone_filter = gtest_filter(session_.alone_tests(spec.slug));
  std::vector<std::string> argv = judge_command(spec, "learner", run.runner, "-" + alone_filter);
  argv.insert(argv.end() - 1, "--alone-tests=" + alone_filter);
  if (session_.options().drain_between_tests) argv.insert(argv.end() - 1, "--yield-between-tests");
  const std::string sanitizer = session_.options().sanitize ? find_tool("compute-sanitizer") : "";
  const std::size_t tools = sanitizer.empty() ? 0 : names::kSanitizerTools.size();
  if (tools) {
    argv.insert(argv.end() - 1, {"--sanitizer=" + sanitizer, "--sanitized-tests=" + sanitizer_filter()});
    for (std::string_view tool : names::kSanitizerTools) argv.insert(argv.end() - 1, "--sanitize=" + std::string(tool));
  }
  // What this process holds of the GPU, and its timeline row: a place beside others (the tests,
  // then each tool's run), or the GPU alone (the timed tests).
  enum class Holds { shared, alone, nothing } holds = Holds::shared;
  std::string row = "tests";
  bool timed_ran = false;
  const auto expected = [&](const TestRun& so_far) {
    return tests_to_report(session_.shared_tests(spec.slug), session_.alone_tests(spec.slug), timed_ran, so_far);
  };
  auto asked = Timeline::Clock::now();
  if (run.alone_only) {
    gate_.lock();
    holds = Holds::alone;
  } else {
    gate_.lock_shared();
  }
  auto started = Timeline::Clock::now();
  const auto leave = [&] {
    if (holds == Holds::nothing) return;
    holds == Holds::alone ? gate_.unlock() : gate_.unlock_shared();
    session_.timeline().add(run.submission, spec.slug, row, gpu_.index, asked, started);
    holds = Holds::nothing;
  };
  const auto take = [&](Holds h, std::string what) {
    asked = Timeline::Clock::now();
    if (run.alone_only) h = Holds::alone;
    h == Holds::alone ? gate_.lock() : gate_.lock_shared();
    started = Timeline::Clock::now();
    holds = h;
    row = std::move(what);
    return Grant::grant;
  };
  // The judge's requests, as they come. The timed tests are refused to a chapter with a failed
  // test (they would not count), as run_part does; each tool's run to a chapter that is not
  // clean so far (a failed or missing test, or an earlier tool's finding), as sanitize does.
  const auto on_event = [&](Event event, const TestRun& so_far) {
    if (event == Event::between) {
      // Between two tests: where a timed test waits for the GPU alone, this judge waits here for it
      // (its place beside the others given back and taken again; at once when nothing waits).
      if (holds == Holds::shared) {
        gate_.unlock_shared();
        gate_.lock_shared();
      }
      return Grant::grant;
    }
    if (event == Event::alone) {
      leave();
      if (any_failed(so_far)) return Grant::refuse;
      timed_ran = true;
      return take(Holds::alone, "alone");
    }
    if (event != Event::sanitize) return Grant::none;
    // The chapter's tests are done and its process has ended: its tools' runs hold little of the
    // GPU's memory, and the next chapter's tests may begin beside them.
    run.place.give_back();
    leave();
    bool go = timed_ran && clean(so_far, expected(so_far));
    for (std::size_t i = 0; i + 1 < so_far.sanitized.size(); ++i) {
      go = go && clean(so_far.sanitized[i], session_.sanitized_tests(spec.slug));
    }
    return go ? take(Holds::shared, so_far.sanitized.back().tool) : Grant::refuse;
  };
  const double limit = session_.limit(spec) * (1 + workbook::channel::kSanitizerTimeFactor * double(tools));
  const TestRun t = run_tests(argv, log, limit, env(spec), kSilenceLimit, on_event);
  const bool beside_others = holds != Holds::alone;  // where it was when it ended
  leave();
  tally(t, r);
  r.crowded = r.crowded ||
              (beside_others && (out_of_time(t) || std::any_of(t.sanitized.begin(), t.sanitized.end(), out_of_time)));
  if (!ran_to_the_end(t, expected(t), session_.limit(spec), log, r) || !r.correct() || !tools) return;
  for (const TestRun& tool_run : t.sanitized) {
    if (tool_run.process.interrupted) return interrupt(r);
    if (!judge_sanitizer_run(tool_run, log, run.slot_dir, r)) return;
  }
  if (t.sanitized.size() < tools) {
    r.status = Status::incomplete;
    r.detail = fmt::format("the test process {} after {} of the {} compute-sanitizer runs (log: {})",
                           process_end(t.sanitized.empty() ? t.process : t.sanitized.back().process),
                           t.sanitized.size(), tools, log);
  }
}

// Runs the sanitized tests under each tool, a judge for each; a finding fails the chapter's
// correctness, with the tool's first lines as the reason.
void GpuTester::sanitize(const Run& run, ChapterResult& r) {
  const workbook::ChapterSpec& spec = *r.spec;
  const std::string sanitizer = find_tool("compute-sanitizer");
  if (sanitizer.empty()) return;
  // One tool after another, not the three at once, which was slower on the H200
  // (2026-12-02, book/results/grading.md): processes on one GPU share it by time slices, so more of
  // them at once overlap only their CPU work. A tool that finds something ends the chapter's checks.
  for (std::string_view tool_name : names::kSanitizerTools) {
    const std::string tool(tool_name);
    const std::string log = run_log(run.log_dir, spec.slug, tool).string();
    TestRun t;
    {
      const auto asked = Timeline::Clock::now();
      Turn shared(gate_, run.alone_only);
      Entry entry(session_.timeline(), run.submission, spec.slug, tool, gpu_.index, asked);
      t = run_tests(judge_command(spec, "learner", run.runner, sanitizer_filter(),
                                  workbook::channel::sanitizer_wrapper(sanitizer, tool, !spec.ranks)),
                    log, workbook::channel::kSanitizerTimeFactor * session_.limit(spec), env(spec),
                    workbook::channel::kSanitizerTimeFactor * kSilenceLimit);
    }
    if (t.process.interrupted) return interrupt(r);
    t.tool = tool;
    r.crowded = r.crowded || (out_of_time(t) && !run.alone_only);
    if (!judge_sanitizer_run(t, log, run.slot_dir, r)) return;
  }
}

// One tool's run of the sanitized tests (t.tool), counted as one more correctness test: true if
// it passed; otherwise the chapter's failure, with the tool's findings from `log`.
bool GpuTester::judge_sanitizer_run(const TestRun& t, const std::string& log, const std::string& slot_dir,
                                    ChapterResult& r) {
  const std::string& tool = t.tool;
  ++r.tests_total;
  std::string what;
  if (out_of_time(t)) {
    what = "timed out under compute-sanitizer " + tool;
  } else if (t.runner_exit == workbook::channel::kSanitizerFoundErrors) {
    what = "compute-sanitizer " + tool + " reports errors";
  } else if (!t.problem.empty()) {
    what = fmt::format("under compute-sanitizer {} the chapter's process did not start: {}", tool, t.problem);
  } else if (const std::string why = incomplete(t, session_.sanitized_tests(r.spec->slug)); !why.empty()) {
    what = fmt::format("under compute-sanitizer {} the test process {}, and {}", tool, process_end(t.process), why);
  } else if (t.process.exit_code != 0 || t.runner_exit != 0 || any_failed(t)) {
    what = fmt::format(
        "tests fail under compute-sanitizer {} (the judge {}, the chapter's process under the tool "
        "exited with status {})",
        tool, process_end(t.process), t.runner_exit);
  } else {
    ++r.tests_passed;
    r.tests.push_back({"Sanitizer." + tool, Result::passed});
    return true;
  }
  r.tests.push_back({"Sanitizer." + tool, Result::failed});
  // The tool's findings, from its own descriptor (never the chapter's output, which the log mixes
  // in), with the slot's path cut so they name "03_idle_threads/kernel.cu:42".
  std::string findings;
  int kept = 0;
  for (std::string line : t.findings) {
    if (kept >= 10) break;
    if (line.rfind("=========", 0) == 0 && line.size() > 10) {
      for (std::size_t at; (at = line.find(slot_dir + "/")) != std::string::npos;) line.erase(at, slot_dir.size() + 1);
      findings += visible_line(line, 512) + "\n";
      ++kept;
    }
  }
  add_failure(r, "Sanitizer." + tool,
              fmt::format("{} on tests {} (log: {})\n{}", what, sanitizer_filter(), log, quoted_block(findings)));
  // What the tool's finding usually means; a run that did not end or failed otherwise says so alone.
  const bool finding = t.runner_exit == workbook::channel::kSanitizerFoundErrors;
  r.detail = what + (!finding              ? ""
                     : tool == "racecheck" ? ": a shared-memory data race (threads of one warp are not in lockstep on "
                                             "Volta and later: order their accesses with __syncwarp())"
                     : tool == "synccheck" ? ": a barrier that not every thread of the block (or warp) reaches"
                                           : ": an out-of-bounds or misaligned memory access");
  return false;
}

}  // namespace grader
