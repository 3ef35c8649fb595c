// A student's progress through the chapters: each chapter's last result, and
// how many of its stepped hints were shown. Kept in the grader's build tree,
// written by every grading run of one submission (never by hand), one entry per
// chapters/ tree.
#pragma once

#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "result.hpp"

namespace grader {

struct ChapterProgress {
  Status status;
  std::string detail, date;
  double points = 0;
  int max_points = 0;
  std::optional<double> learner_gbps, bandwidth_ratio;
  double required_fraction = 0;
};
//! As the progress file holds it; reading never throws (a field of another type gets its fallback).
void to_json(nlohmann::json& j, const ChapterProgress& c);
void from_json(const nlohmann::json& j, ChapterProgress& c);

struct Progress {
  std::map<std::string, ChapterProgress> chapters;  // by slug
  std::map<std::string, int> hints_shown;           // by slug
};

//! Where the progress file is (in the grader's build tree).
std::string progress_path();

//! The progress of `chapters_dir`; empty if it was never graded.
Progress load_progress(const std::string& chapters_dir);

//! Records a grading run's results for its chapters/ tree. "" or why not.
std::string record_progress(const GradingRun& run);

//! Records that `shown` stepped hints of `slug` have been shown. "" or why not.
std::string record_hints(const std::string& chapters_dir, const std::string& slug, int shown);

}  // namespace grader
