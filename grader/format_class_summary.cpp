// The class summary, from a report (formats.hpp).
#include "formats.hpp"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "report_view.hpp"
#include "text.hpp"

using nlohmann::json;

namespace grader {
using namespace view;

std::string class_summary(const std::vector<json>& reports, const std::vector<std::string>& slugs) {
  struct Counts {
    int passed = 0, failed = 0, not_graded = 0;
  };
  std::vector<Counts> counts(slugs.size());
  std::vector<std::string> not_graded;
  int graded = 0, incomplete = 0;
  for (const json& one : reports) {
    const Report r = report_of(one);
    if (!r.graded) {
      not_graded.push_back(r.name + ": " + (r.not_graded_reason.empty() ? "no reason given" : r.not_graded_reason));
    } else {
      ++graded;
      if (!r.complete || r.interrupted) ++incomplete;
    }
    for (std::size_t i = 0; i < slugs.size(); ++i) {
      const auto c =
          std::find_if(r.views.begin(), r.views.end(), [&](const Chapter& ch) { return ch.slug == slugs[i]; });
      if (c == r.views.end() || !r.graded || !c->graded()) {
        ++counts[i].not_graded;  // absent from the report counts as not graded
      } else if (c->kind == Kind::passed) {
        ++counts[i].passed;
      } else {
        ++counts[i].failed;
      }
    }
  }
  std::size_t width = 7;
  for (const std::string& slug : slugs) width = std::max(width, slug.size());
  std::string out = fmt::format("{} reports: {} graded, {} not graded; {} of the graded ones incomplete.\n\n",
                                reports.size(), graded, not_graded.size(), incomplete);
  out += fmt::format("{:<{}}  {:>6}  {:>6}  {:>16}\n", "chapter", width, "passed", "failed", "could not grade");
  for (std::size_t i = 0; i < slugs.size(); ++i) {
    out += fmt::format("{:<{}}  {:>6}  {:>6}  {:>16}\n", slugs[i], width, counts[i].passed, counts[i].failed,
                       counts[i].not_graded);
  }
  if (!not_graded.empty()) {
    out += fmt::format("\nNot graded ({}):\n", not_graded.size());
    for (std::size_t i = 0; i < not_graded.size() && i < kNotGradedListed; ++i) out += "  " + not_graded[i] + "\n";
    if (not_graded.size() > kNotGradedListed) {
      out += fmt::format("  ... and {} more\n", not_graded.size() - kNotGradedListed);
    }
  }
  out += fmt::format("\nIncomplete reports (graded, but the run did not finish): {}\n", incomplete);
  return valid_utf8(out);
}

}  // namespace grader
