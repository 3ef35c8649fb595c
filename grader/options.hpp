// What the command line asks for; every path absolute.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "judge/names.hpp"
#include "timing_gate.hpp"

namespace grader {

//! Where one submission's reports go (each may be empty: not written).
struct ReportPaths {
  std::string report, feedback, gradescope, prairielearn, junit;
};

struct Options {
  // What to grade: one chapters/ tree, or a folder of submissions.
  std::string chapters_dir;
  std::string submissions_dir;  // class mode when set
  std::string out_dir;          // class mode: <out>/<id>/ per submission, class reports in <out>
  int shard = 1, shards = 1;    // --shard K/N: the K-th of N slices of the submissions
  bool regrade = false;         // class mode: grade again even where a complete report exists
  std::string merge_dir;        // --merge: only write the class reports of <merge_dir>
  std::string ids_file;         // submission folder -> student id, for the gradebook

  std::vector<std::string> only;  // chapter slugs; empty: every chapter of the manifest
  std::string build_dir;          // the grading build, shared by every submission of a run
  ReportPaths paths;              // one submission's reports (not class mode)
  std::string gradescope_visibility = "visible";
  bool leaderboard = true;
  std::vector<int> gpus;                      // indices of visible GPUs to use; empty: all
  int jobs_per_gpu = 0;                       // test processes at once on one GPU (0: from the CPU cores)
  int tool_runs_per_gpu = 0;                  // chapters in their tools' runs beyond those (grade.cpp)
  int timed_batch = 1;                        // timed runs served together once the shared tests drain
  double timed_patience_s = kTimedPatienceS;  // the longest a timed run waits for its batch
  bool separate_judges = false;               // a judge for each part of a chapter, not one for all (tester.hpp)
  bool drain_between_tests = true;            // a timed test waits for one test of each other judge, not all
                                              // their tests (--drain-whole-parts turns it off)
  // The hardware queues of a chapter's process in its tests (0: the driver's default).
  int chapter_hardware_queues = workbook::names::kChapterHardwareQueues;
  std::uint64_t seed = 0;
  bool seed_given = false;
  double build_timeout_s = 900;
  int timeout_s = 0;  // 0: each chapter's own limit from the manifest
  bool sanitize = true;
  bool device_debug = false;  // the grading build compiles learners' files with -G
  std::string timeline;       // --timeline: a CSV of every process of the run
};

}  // namespace grader
