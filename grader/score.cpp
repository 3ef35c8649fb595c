#include "score.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "judge/names.hpp"

namespace grader {
namespace {

namespace names = workbook::names;

int group_rank(const std::string& group) {
  const auto it = std::find(names::kGroups.begin(), names::kGroups.end(), group);
  return int(it - names::kGroups.begin());
}

}  // namespace

void score(ChapterResult& r) {
  std::stable_sort(r.failed.begin(), r.failed.end(), [](const FailedTest& a, const FailedTest& b) {
    return group_rank(std::string(names::group_of(a.name))) < group_rank(std::string(names::group_of(b.name)));
  });
  std::stable_sort(r.failed_groups.begin(), r.failed_groups.end(),
                   [](const std::string& a, const std::string& b) { return group_rank(a) < group_rank(b); });
  const bool correct = r.correct();
  if (correct && r.learner_gbps && r.learner_ceiling_gbps && r.reference_gbps && r.reference_ceiling_gbps &&
      *r.learner_ceiling_gbps > 0 && *r.reference_gbps > 0 && *r.reference_ceiling_gbps > 0) {
    r.bandwidth_ratio = (*r.learner_gbps / *r.learner_ceiling_gbps) / (*r.reference_gbps / *r.reference_ceiling_gbps);
    r.bandwidth_passed = *r.bandwidth_ratio >= r.spec->bandwidth_fraction;
  }
  r.points = (correct ? r.spec->correctness_points : 0) + (r.bandwidth_passed ? r.spec->performance_points : 0);
  r.status = correct && r.bandwidth_passed ? Status::passed : Status::failed;
  if (r.status == Status::failed && r.detail.empty()) {
    if (!correct) {
      r.detail = fmt::format("{} of {} correctness tests failed", r.tests_total - r.tests_passed, r.tests_total);
    } else if (r.bandwidth_ratio) {
      r.detail = fmt::format(
          "correct, but below the chapter's bandwidth threshold: {:.0f} GB/s is "
          "{:.0f}% of the reference's {:.0f} GB/s (each as a fraction of the "
          "streaming-read ceiling measured beside it); the chapter asks for {:.0f}%",
          *r.learner_gbps, 100 * *r.bandwidth_ratio, *r.reference_gbps, 100 * r.spec->bandwidth_fraction);
      r.failed_groups.push_back("Bandwidth");
    } else {
      r.detail = "correct, but the bandwidth could not be compared with the reference's";
    }
  }
}

}  // namespace grader
