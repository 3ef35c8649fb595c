// The grader's manifest (grader/manifest.json): chapters, points, thresholds, hints, hint steps.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace workbook {

struct ChapterSpec {
  std::string slug;     // "03_idle_threads"
  std::string version;  // "V3"
  std::string title;
  std::string kind;  // "block_pass" or "full"
  int correctness_points = 0;
  int performance_points = 0;
  //! The learner's GB/s must reach this fraction of the reference's, timed
  //! side by side in one process.
  double bandwidth_fraction = 0;
  int timeout_s = 0;  // for the chapter's whole test process
  //! Same input, same bits, every run (false where atomics order the adds).
  bool deterministic = true;
  //! Device features the chapter needs, e.g. "cooperative_launch".
  std::vector<std::string> requires_features;
  std::map<std::string, std::string> hints;  // test suite -> hint
  //! Hints shown one at a time to a student who asks, from a nudge to nearly the answer (two or
  //! three); each names the `## ` section of the chapter's lesson.md that explains it.
  struct HintStep {
    std::string hint, lesson;
  };
  std::vector<HintStep> steps;
};

struct Manifest {
  std::vector<ChapterSpec> chapters;
  const ChapterSpec* find(const std::string& slug) const;
};

//! Reads and validates the manifest; throws std::runtime_error naming the
//! file and the field on any problem.
Manifest load_manifest(const std::string& path);

}  // namespace workbook
