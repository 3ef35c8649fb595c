// Where a grading run's time goes: one row per process the grader started for a chapter
// (its tests, its timed run, each sanitizer tool) and per build, with the time it waited
// for the GPU and the time it ran. Written as CSV with --timeline FILE; the maintainers'
// throughput check (grader/verify-both-ways throughput) reads it.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

namespace grader {

//! The submission column of the rows that are no submission's, in parentheses (grader/timeline-summary
//! counts no such row in a submission): the grader's set-up, and its references measured alone.
inline constexpr const char* kGraderRow = "(grader)";
inline constexpr const char* kReferenceRow = "(reference)";

class Timeline {
 public:
  using Clock = std::chrono::steady_clock;

  //! One process: `what` (tests, alone: the timed run, memcheck, racecheck, synccheck; build,
  //! one row per batch of submissions built together, their ids separated by spaces; or setup,
  //! the grader's grading build configured and its harness and references built) for
  //! `chapter` of `submission` on `gpu` (-1: none); asked for at `asked`, started at `started`,
  //! ended now.
  void add(const std::string& submission, const std::string& chapter, const std::string& what, int gpu,
           Clock::time_point asked, Clock::time_point started);

  //! When the run began: the rows' zero.
  Clock::time_point start() const { return start_; }
  //! Writes the rows as CSV (seconds from the run's start); "" or why it could not.
  std::string write(const std::string& path) const;

 private:
  struct Row {
    std::string submission, chapter, what;
    int gpu;
    double asked, started, ended;
  };
  Clock::time_point start_ = Clock::now();
  mutable std::mutex m_;
  std::vector<Row> rows_;
};

}  // namespace grader
