#include "grade.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <deque>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>

#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compile.hpp"
#include "judge/names.hpp"
#include "merge.hpp"
#include "pool.hpp"
#include "progress.hpp"
#include "report.hpp"
#include "session.hpp"
#include "submissions.hpp"
#include "tester.hpp"
#include "text.hpp"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace grader {
namespace {

std::string timestamp() {
  const std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

std::string duration(double s) {
  if (s < 90) return fmt::format("{:.0f} s", s);
  if (s < 5400) return fmt::format("{:.0f} min", s / 60);
  return fmt::format("{:.1f} h", s / 3600);
}

// A submission between its build and its report.
struct InFlight {
  Submission submission;
  int slot = -1;
  std::string log_dir;
  ReportPaths paths;
  GradingRun run;
  Clock::time_point start;
  std::atomic<int> remaining{0};
};

// The built submissions waiting for a GPU, in order.
class ReadyQueue {
 public:
  void push(std::shared_ptr<InFlight> s) {
    std::lock_guard<std::mutex> l(m_);
    q_.push_back(std::move(s));
    cv_.notify_all();
  }
  void close() {
    std::lock_guard<std::mutex> l(m_);
    closed_ = true;
    cv_.notify_all();
  }
  //! The next one; null once closed and empty, or interrupted.
  std::shared_ptr<InFlight> pop() {
    std::unique_lock<std::mutex> l(m_);
    while (q_.empty() && !closed_) {
      if (interrupted()) return nullptr;
      cv_.wait_for(l, std::chrono::milliseconds(200));
    }
    if (q_.empty()) return nullptr;
    std::shared_ptr<InFlight> s = std::move(q_.front());
    q_.pop_front();
    return s;
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<InFlight>> q_;
  bool closed_ = false;
};

// The grading build's slots: a submission holds one from its build to its report.
class Slots {
 public:
  explicit Slots(int n) {
    for (int i = 0; i < n; ++i) free_.push_back(i);
  }
  int take() {
    std::unique_lock<std::mutex> l(m_);
    while (free_.empty()) {
      if (interrupted()) return -1;
      cv_.wait_for(l, std::chrono::milliseconds(200));
    }
    const int s = free_.front();
    free_.pop_front();
    return s;
  }
  //! A free slot, or -1 if none is free now.
  int try_take() {
    std::lock_guard<std::mutex> l(m_);
    if (free_.empty()) return -1;
    const int s = free_.front();
    free_.pop_front();
    return s;
  }
  void give(int s) {
    std::lock_guard<std::mutex> l(m_);
    free_.push_back(s);
    cv_.notify_all();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<int> free_;
};

class Run {
 public:
  Run(const Options& opt, const workbook::Manifest& manifest, std::map<std::string, Status>* statuses)
      : opt_(opt), manifest_(manifest), statuses_(statuses) {
    for (const workbook::ChapterSpec& spec : manifest_.chapters) {
      if (opt_.only.empty() || std::count(opt_.only.begin(), opt_.only.end(), spec.slug)) chosen_.push_back(&spec);
    }
  }

  int run() {
    const bool class_mode = !opt_.submissions_dir.empty();
    std::string why;
    gpus_ = find_gpus(opt_.gpus, &why);  // the grader's own finding, never a child's
    if (gpus_.empty()) no_gpu_ = "no GPU: " + why;
    const std::vector<Submission> todo = class_mode ? class_list() : std::vector<Submission>{single()};
    if (class_mode && none_found_) {
      fmt::print(stderr,
                 "grader: --submissions {}: no submission in it (each is a folder holding a chapters/ tree, "
                 "or a .zip, .tar.gz or .tgz of one)\n",
                 opt_.submissions_dir);
      return code(Exit::cannot);
    }
    if (class_mode) {
      fmt::print("Grading {} submission{} of {}{} into {}\n", todo.size(), todo.size() == 1 ? "" : "s",
                 opt_.submissions_dir, opt_.shards > 1 ? fmt::format(" (shard {} of {})", opt_.shard, opt_.shards) : "",
                 opt_.out_dir);
    } else {
      fmt::print("Grading {}\n", opt_.chapters_dir);
    }
    fmt::print("  build: {}\n  seed: {} (--seed {} repeats this run)\n", opt_.build_dir, opt_.seed, opt_.seed);
    for (const Gpu& g : gpus_) {
      fmt::print("  GPU {}: {}, {} SMs, driver CUDA {}\n", g.index, g.summary.name, g.summary.multiprocessors,
                 g.summary.driver_cuda);
    }
    if (gpus_.empty()) {
      fmt::print(
          "\nGrading needs a CUDA device, and none can be used here ({}).\nEvery chapter is "
          "still built and checked, so compile errors and refused files are reported; no "
          "test runs, and nothing is graded. No NVIDIA GPU of your own: docs/no-gpu.md (Google "
          "Colab's free T4 with notebooks/workbook-colab.ipynb, a course server, a cluster node).\n",
          why);
    }
    fmt::print("\n");
    bool merge_failed = false;
    if (!todo.empty()) {
      const int workers = std::max<int>(1, static_cast<int>(gpus_.size()));
      const int slots = class_mode ? std::min<int>(3 * workers + 2, static_cast<int>(todo.size())) : 1;
      Session session(opt_, manifest_, chosen_);
      const bool prepared = session.prepare(slots, architectures(gpus_));
      // The grader's own set-up, once per grading build: configuring it, the harness and the references.
      session.timeline().add(kGraderRow, "", "setup", -1, session.timeline().start(), session.timeline().start());
      if (!prepared) {
        // One submission still gets its report: not graded, and why.
        if (!class_mode)
          unstarted(todo.front(), interrupted() ? "the grader was interrupted before grading began"
                                                : "the grader could not build its own parts");
        return interrupted() ? interrupted_status() : code(Exit::cannot);
      }
      fmt::print("\n");
      pipeline(session, todo, slots);
      if (!opt_.timeline.empty()) {
        if (const std::string why = session.timeline().write(opt_.timeline); !why.empty()) {
          fmt::print(stderr, "grader: {}\n", why);
          write_failed_ = true;
        }
      }
    }
    if (class_mode && opt_.shards == 1 && !interrupted()) {
      merge_failed = merge_class(opt_.out_dir, manifest_, opt_.ids_file, chosen_slugs()) != 0;
    }
    if (interrupted()) return interrupted_status();
    if (write_failed_ || merge_failed) return code(Exit::cannot);  // a report that could not be written
    if (gpus_.empty()) return code(any_failed_ ? Exit::not_graded_failed : Exit::not_graded);
    return code(any_failed_ ? Exit::some_failed : Exit::ok);
  }

 private:
  static int interrupted_status() {
    int sig = 0;
    interrupted(&sig);
    return interrupted_code(sig);
  }

  std::vector<std::string> chosen_slugs() const {
    std::vector<std::string> slugs;
    for (const workbook::ChapterSpec* c : chosen_) slugs.push_back(c->slug);
    return slugs;
  }

  void unstarted(const Submission& s, const std::string& why) {
    GradingRun run;
    run.id = s.id;
    run.name = s.name;
    run.source = s.source;
    run.fingerprint = s.fingerprint;
    run.chapters_dir = opt_.chapters_dir;
    run.seed = opt_.seed;
    run.date = timestamp();
    run.sanitized = opt_.sanitize;
    run.interrupted = interrupted();
    run.not_graded_reason = why;
    for (const workbook::ChapterSpec* spec : chosen_) {
      ChapterResult r;
      r.spec = spec;
      r.status = Status::not_graded;
      r.detail = why;
      run.chapters.push_back(r);
    }
    ReportPaths paths = opt_.paths;
    if (paths.report.empty()) paths.report = (fs::path(opt_.build_dir) / "report.json").string();
    for (const std::string& p : write_reports(run, paths, report_options(), true))
      fmt::print(stderr, "grader: {}\n", p);
  }

  Submission single() const {
    Submission s;
    const fs::path dir = opt_.chapters_dir;
    const std::string name =
        dir.filename() == "chapters" ? dir.parent_path().filename().string() : dir.filename().string();
    name_submission(s, name);
    s.source = opt_.chapters_dir;
    s.fingerprint = tree_fingerprint(opt_.chapters_dir, manifest_);
    return s;
  }

  std::vector<Submission> class_list() {
    std::vector<std::string> ignored;
    const std::vector<Submission> all = find_submissions(opt_.submissions_dir, manifest_, &ignored);
    for (const std::string& i : ignored) fmt::print("  ignored: {}\n", i);
    none_found_ = all.empty();
    std::vector<Submission> mine = shard_of(all, opt_.shard, opt_.shards);
    std::vector<Submission> todo;
    for (const Submission& s : mine) {
      if (!opt_.regrade &&
          report_to_keep((fs::path(opt_.out_dir) / s.id / "report.json").string(), s, opt_.sanitize, chosen_slugs())) {
        ++kept_;
        continue;
      }
      todo.push_back(s);
    }
    total_ = mine.size();
    if (kept_)
      fmt::print("  kept: {} complete report{} of an earlier run (--regrade grades them again)\n", kept_,
                 kept_ == 1 ? "" : "s");
    return todo;
  }

  void pipeline(Session& session, const std::vector<Submission>& todo, int slot_count) {
    Slots slots(slot_count);
    ReadyQueue ready;
    start_ = Clock::now();
    pending_ = todo.size();
    std::vector<std::unique_ptr<GpuTester>> testers;
    for (const Gpu& g : gpus_) testers.push_back(std::make_unique<GpuTester>(session, g, timed_policy()));
    std::vector<std::thread> workers;
    for (auto& tester : testers) {
      workers.emplace_back(
          [this, &session, &ready, &slots, t = tester.get()] { gpu_worker(session, *t, ready, slots); });
    }
    // The builder, ahead of the GPUs: a few submissions at once, their files in one
    // parallel build on every CPU core, while free slots last. The first batch holds
    // one submission per GPU, so the GPUs start on it while the rest build (a first
    // batch of five kept one H200 idle for 52 s); later ones two per GPU, so that one
    // is built before the GPUs run out of work (a batch of four took 57 s beside the
    // tests and left one H200 idle for 23 s; grading.md).
    // It runs at a lower CPU priority, and so does all it starts (compilers, checks, links): a timed
    // run's host side beside it must not wait for a core (on an H100 machine, 3 of a class's 4 timed
    // runs short of their thresholds began within 0.4 s of a build's start, 2026-12-05).
    std::exception_ptr failed;
    std::thread builder([&] {
      lower_to_builder_priority();
      try {
        const std::size_t per_gpu = std::max<std::size_t>(1, gpus_.size());
        for (std::size_t next = 0; next < todo.size() && !interrupted();) {
          std::vector<int> taken = {slots.take()};
          if (taken.front() < 0) break;
          const std::size_t most = next == 0 ? per_gpu : 2 * per_gpu;
          while (next + taken.size() < todo.size() && taken.size() < most) {
            const int more = slots.try_take();
            if (more < 0) break;
            taken.push_back(more);
          }
          std::vector<std::shared_ptr<InFlight>> jobs;
          for (int slot : taken) {
            auto job = std::make_shared<InFlight>();
            job->submission = todo[next++];
            job->slot = slot;
            job->start = Clock::now();
            jobs.push_back(std::move(job));
          }
          compile(session, jobs);
          for (auto& job : jobs) {
            if (testers.empty()) {
              for (ChapterResult& r : job->run.chapters) {
                if (r.status.is_pending()) {
                  r.status = Status::no_gpu;
                  r.detail = "built and checked: ready for a GPU (grading runs it on one)";
                }
              }
              finish(job, slots);
            } else {
              ready.push(job);
            }
          }
        }
      } catch (...) {
        failed = std::current_exception();
      }
      ready.close();
    });
    builder.join();
    for (std::thread& w : workers) w.join();
    if (failed) std::rethrow_exception(failed);
    if (!opt_.submissions_dir.empty()) finish_progress();
  }

  // Unpacks and finds each submission's tree, then compiles them all at once.
  void compile(Session& session, std::vector<std::shared_ptr<InFlight>>& jobs) {
    std::vector<SlotWork> batch;
    std::string built;  // the batch's submissions, for its one row in the timeline
    for (auto& job : jobs) {
      if (!locate(*job)) continue;
      batch.push_back({job->slot, job->run.chapters_dir, job->log_dir, &job->run.chapters});
      built += (built.empty() ? "" : " ") + job->run.id;
    }
    if (!batch.empty()) {
      const auto start = Timeline::Clock::now();
      compile_submissions(session, batch);
      session.timeline().add(built, "", "build", -1, start, start);
    }
    std::error_code ec;
    for (auto& job : jobs) {
      if (job->submission.archive) fs::remove_all(unpacked_dir(job->slot), ec);
    }
  }

  fs::path unpacked_dir(int slot) const { return fs::path(opt_.build_dir) / "unpacked" / std::to_string(slot); }

  // The submission's chapters/ tree, unpacked if it is an archive; false, with
  // every chapter's result set, when there is none to compile.
  bool locate(InFlight& job) {
    const Submission& s = job.submission;
    const bool class_mode = !opt_.submissions_dir.empty();
    job.log_dir = class_mode ? (fs::path(opt_.out_dir) / s.id / "logs").string()
                             : (fs::path(opt_.build_dir) / "logs" / s.id).string();
    std::error_code ec;
    fs::remove_all(job.log_dir, ec);
    fs::create_directories(job.log_dir, ec);
    if (class_mode) {
      const fs::path dir = fs::path(opt_.out_dir) / s.id;
      job.paths = {(dir / "report.json").string(), (dir / "feedback.md").string(), (dir / "results.json").string(),
                   (dir / "prairielearn.json").string(), (dir / "junit.xml").string()};
    } else {
      job.paths = opt_.paths;
      if (job.paths.report.empty()) job.paths.report = (fs::path(opt_.build_dir) / "report.json").string();
    }
    GradingRun& run = job.run;
    run.id = s.id;
    run.name = s.name;
    run.source = s.source;
    run.fingerprint = s.fingerprint;
    run.seed = opt_.seed;
    run.date = timestamp();
    run.sanitized = opt_.sanitize;
    // An archive is unpacked where only the grader writes; a folder is read in place.
    const fs::path unpacked = unpacked_dir(job.slot);
    fs::remove_all(unpacked, ec);
    std::string refused, tree = s.source;
    if (s.archive) {
      fs::create_directories(unpacked.parent_path(), ec);
      refused = unpack(s.source, unpacked.string(), (fs::path(job.log_dir) / "unpack.log").string());
      tree = unpacked.string();
    }
    if (refused.empty()) tree = class_mode ? locate_chapters(tree, manifest_) : tree;
    run.chapters_dir = tree;
    if (refused.empty() && !tree.empty()) return true;
    for (const workbook::ChapterSpec* spec : chosen_) {
      ChapterResult r;
      r.spec = spec;
      if (!refused.empty()) {
        reject(r, {Refusal{"archive", "the archive is refused: " + refused}});
      } else {
        r.status = Status::missing;
        r.detail = fmt::format(
            "no chapters/ tree in {}: expected folders such as {}/kernel.cu, at the top or "
            "inside one folder",
            fs::path(s.source).filename().string(), chosen_.empty() ? "" : chosen_.front()->slug);
      }
      run.chapters.push_back(r);
    }
    return false;
  }

  // One GPU: its references first, then its share of the chapters, several at a time.
  void gpu_worker(Session& session, GpuTester& tester, ReadyQueue& ready, Slots& slots) {
    if (!tester.measure_references(session.build().log(""))) return;
    PoolTasks<InFlight> tasks;
    tasks.fetch = [&] { return ready.pop(); };
    tasks.chapters = [&](InFlight& s) {
      s.run.device = tester.gpu().summary;
      std::vector<std::size_t> todo;
      for (std::size_t i = 0; i < s.run.chapters.size(); ++i) {
        if (s.run.chapters[i].status.is_pending()) todo.push_back(i);
      }
      return todo;
    };
    Places places(jobs_per_gpu());
    tasks.test = [&](InFlight& s, std::size_t chapter) {
      ChapterResult& r = s.run.chapters[chapter];
      Place place(places);
      tester.test_chapter(s.run.id, session.slot_runner(s.slot, r.spec->slug), s.log_dir, session.slot_dir(s.slot), r,
                          place);
      if (opt_.submissions_dir.empty()) {
        std::lock_guard<std::mutex> p(print_);
        fmt::print("  {:<18} {} ({:.1f} s)\n", r.spec->slug, r.status, r.seconds);
        std::fflush(stdout);
      }
    };
    tasks.finish = [&](const std::shared_ptr<InFlight>& s) { finish(s, slots); };
    run_pool(jobs_per_gpu() + tool_runs_per_gpu(), tasks);
  }

  // A submission's last chapter is done: its reports, its slot back, the progress.
  void finish(const std::shared_ptr<InFlight>& job, Slots& slots) {
    if (!job) return;
    GradingRun& run = job->run;
    for (ChapterResult& r : run.chapters) {
      if (r.status.is_pending()) r.status = interrupted() ? Status::interrupted : Status::failed;
    }
    run.interrupted = interrupted();
    run.graded = !gpus_.empty() && std::any_of(run.chapters.begin(), run.chapters.end(),
                                               [](const ChapterResult& r) { return r.status.was_tested(); });
    if (gpus_.empty()) run.not_graded_reason = no_gpu_;
    if (run.interrupted) run.not_graded_reason = "the grader was interrupted";
    run.seconds = std::chrono::duration<double>(Clock::now() - job->start).count();
    slots.give(job->slot);
    const bool class_mode = !opt_.submissions_dir.empty();
    std::error_code ec;
    if (class_mode) fs::create_directories(fs::path(job->paths.report).parent_path(), ec);
    std::lock_guard<std::mutex> l(print_);
    if (!class_mode) {
      print_table(run);
      print_idea_notes(run);
      fmt::print("\n");
    }
    std::vector<std::string> problems = write_reports(run, job->paths, report_options(), !class_mode);
    if (!class_mode && statuses_ != nullptr) {
      for (const ChapterResult& r : run.chapters) (*statuses_)[r.spec->slug] = r.status;
    }
    if (!class_mode) {  // the student's progress (grader/grade status)
      const std::string why = record_progress(run);
      if (!why.empty()) fmt::print(stderr, "grader: {} (progress not recorded)\n", why);
    }
    for (const std::string& p : problems) fmt::print(stderr, "grader: {}\n", p);
    if (!problems.empty()) write_failed_ = true;
    if (std::any_of(run.chapters.begin(), run.chapters.end(),
                    [](const ChapterResult& r) { return r.status.counts_as_failure(); })) {
      any_failed_ = true;
    }
    if (class_mode) progress(run);
  }

  // Test processes at once on one GPU: half the cores per GPU, 2 to 8. They share the GPU by time
  // slices, so running more at once overlaps only their CPU work (process and tool start); on the
  // H200, 8 at once (about 5 running on average) graded faster than 24 (book/results/grading.md).
  int jobs_per_gpu() const {
    if (opt_.jobs_per_gpu > 0) return opt_.jobs_per_gpu;
    const int cores = static_cast<int>(std::thread::hardware_concurrency());
    return std::clamp(cores / (2 * std::max<int>(1, static_cast<int>(gpus_.size()))), 2, 8);
  }

  // Chapters on one GPU in their tools' runs, beyond those in their tests (--tool-runs-per-gpu): a
  // chapter whose tests are done gives its place to the next one's tests (pool.hpp), and its tools'
  // runs, which hold little device memory (the timed tests' inputs are freed), go on beside them. A
  // chapter's three runs take about a fifth of its time in a class (memcheck, racecheck and synccheck
  // 0.3, 1.3 and 0.9 s against 7.6 s for its tests; H100, 2026-12-05, book/results/grading.md). None
  // by default: with 4, every test process was slower for the more beside it, and a class of six
  // cost 25.6 s a submission against 23.6 s on the same H100 machine (CUDA 13.0, 2026-12-05).
  int tool_runs_per_gpu() const { return opt_.tool_runs_per_gpu; }

  // Timed runs served together once the shared test processes have drained: one by default. A
  // timed run waiting for its batch holds its test slot idle; with batches of half the slots a
  // lone submission took 117 s against 92 s one by one, and a class of passing submissions gained
  // nothing (H200, 2026-12-02, book/results/grading.md).
  TimingGate::Policy timed_policy() const { return {opt_.timed_batch, opt_.timed_patience_s}; }

  GradescopeOptions report_options() const {
    GradescopeOptions o;
    o.visibility = opt_.gradescope_visibility;
    o.leaderboard = opt_.leaderboard;
    return o;
  }

  // One line per submission graded; on a terminal, a status line under them.
  void progress(const GradingRun& run) {
    ++done_;
    if (run.complete()) ++complete_;
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    const double per = elapsed / static_cast<double>(done_);
    const std::size_t left = pending_ - done_;
    const std::string points = fmt::format("{:g}/{}", run.points(), run.max_points());
    const bool tty = isatty(STDOUT_FILENO);
    fmt::print("{}[{}/{}] {:<24} {:>9}  {:>6}{}\n", tty ? "\r\033[K" : "", done_ + kept_, total_, run.name,
               run.graded ? points : "not graded", duration(run.seconds), run.interrupted ? "  (interrupted)" : "");
    if (tty && left > 0) {
      fmt::print("{} of {} graded, {:.1f} per minute, about {} left", done_ + kept_, total_, 60.0 / per,
                 duration(per * static_cast<double>(left)));
    }
    std::fflush(stdout);
  }

  void finish_progress() {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    if (interrupted()) {
      fmt::print(
          "{}interrupted after {}: {} of {} submission{} graded in full; the reports of the others say "
          "which chapters were not graded, and a run again grades only those\n",
          isatty(STDOUT_FILENO) ? "\r\033[K" : "", duration(elapsed), complete_, total_, total_ == 1 ? "" : "s");
    } else if (done_ > 0) {
      fmt::print("{}graded {} submission{} in {} ({} per submission, builds included)\n",
                 isatty(STDOUT_FILENO) ? "\r\033[K" : "", done_, done_ == 1 ? "" : "s", duration(elapsed),
                 duration(elapsed / static_cast<double>(done_)));
    }
  }

  const Options& opt_;
  const workbook::Manifest& manifest_;
  std::map<std::string, Status>* statuses_;  // a single submission's chapters, for watch mode
  std::vector<const workbook::ChapterSpec*> chosen_;
  std::vector<Gpu> gpus_;
  std::string no_gpu_;
  std::mutex print_;
  Clock::time_point start_;
  std::size_t done_ = 0, kept_ = 0, total_ = 0, pending_ = 0;
  std::size_t complete_ = 0;  // of done_: graded in full (not interrupted)
  bool none_found_ = false;   // the submissions folder holds none
  bool write_failed_ = false, any_failed_ = false;
};

}  // namespace

int grade(const Options& opt, const workbook::Manifest& manifest, std::map<std::string, Status>* statuses) {
  return Run(opt, manifest, statuses).run();
}

}  // namespace grader
