#include "report_view.hpp"

#include <fmt/format.h>

#include "judge/names.hpp"
#include "text.hpp"

using nlohmann::json;

namespace grader::view {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

Kind kind_of(const Status& status) {
  switch (status.outcome()) {
    case Outcome::passed: return Kind::passed;
    case Outcome::failed: return Kind::failed;
    case Outcome::error: return Kind::error;
    case Outcome::skipped:
    case Outcome::untested:
    case Outcome::unknown: return Kind::not_graded;
  }
  return Kind::failed;
}

namespace {

// A report's text as the formats may show it. A report is read back from a file (merged, written
// by an older grader, edited by hand), and much of it quotes the learner's code: every string is
// made visible here, once for every format: a name or a word as one line, a detail or a
// message as a block of lines.
void make_visible(ReportDocument& doc) {
  const auto line = [](std::string& s) { s = visible_line(s); };
  const auto block = [](std::string& s) { s = bounded_text(s); };
  for (std::string* s : {&doc.grader_version, &doc.id, &doc.name, &doc.source, &doc.chapters_dir, &doc.fingerprint,
                         &doc.date, &doc.not_graded_reason, &doc.isolation}) {
    line(*s);
  }
  if (doc.device) {
    for (std::string* s : {&doc.device->name, &doc.device->driver_cuda, &doc.device->runtime_cuda}) line(*s);
  }
  for (ChapterReport& c : doc.chapters) {
    for (std::string* s : {&c.slug, &c.version, &c.title, &c.isolation, &c.output_note}) line(*s);
    block(c.detail);
    for (ReportRefusal& f : c.refusals) line(f.check), block(f.reason);
    for (ReportIdea& n : c.idea) line(n.what), block(n.evidence);
    for (ReportTest& t : c.tests) line(t.name);
    for (ReportFailure& f : c.failed) line(f.name), block(f.message);
    for (ReportHint& h : c.hints) line(h.group), block(h.text);
  }
}

}  // namespace

Report report_of(const json& r) {
  Report rep;
  static_cast<ReportDocument&>(rep) = r.get<ReportDocument>();
  make_visible(rep);
  if (rep.device) {
    rep.device_text = rep.device->name;
    std::vector<std::string> parts;
    if (rep.device->multiprocessors) parts.push_back(fmt::format("{} multiprocessors", *rep.device->multiprocessors));
    if (!rep.device->driver_cuda.empty()) parts.push_back("driver CUDA " + rep.device->driver_cuda);
    if (!rep.device->runtime_cuda.empty()) parts.push_back("runtime CUDA " + rep.device->runtime_cuda);
    if (!parts.empty()) {
      rep.device_text += " (";
      for (std::size_t i = 0; i < parts.size(); ++i) rep.device_text += (i ? ", " : "") + parts[i];
      rep.device_text += ")";
    }
  } else {
    rep.device_text = "no GPU";
  }
  for (const ChapterReport& c : rep.chapters) rep.views.emplace_back(c);
  return rep;
}

std::string not_graded_line(const Report& r) {
  return r.not_graded_reason.empty() ? "Not graded." : "Not graded: " + r.not_graded_reason;
}

std::string points_text(double v) { return fmt::format("{:g}", v); }

std::string bandwidth_text(const Chapter& c) {
  std::string s;
  if (c.learner_gbps) s = fmt::format("{:.0f} GB/s", *c.learner_gbps);
  if (c.reference_gbps) s += fmt::format("{}the reference: {:.0f} GB/s", s.empty() ? "" : "; ", *c.reference_gbps);
  if (c.bandwidth_ratio) {
    s += fmt::format("{}{:.1f}% of the reference's bandwidth (each as a share of its own ceiling)",
                     s.empty() ? "" : "; ", 100 * *c.bandwidth_ratio);
  }
  if (c.required_fraction) s += fmt::format("{}{:.0f}% needed", s.empty() ? "" : "; ", 100 * *c.required_fraction);
  return s;
}

std::string unmeasured_reason(const Chapter& c) {
  if (!c.graded()) return "Not measured (" + c.status.word_or("no status") + ").";
  if (c.kind == Kind::error) return "Not measured: the chapter's tests " + c.status.word() + ".";
  if (!c.correctness_passed) return "Not measured: performance counts once every correctness test passes.";
  return "";
}

std::string correctness_report(const Chapter& c, std::size_t max_failed) {
  std::string s = c.status.word_or("no status");
  s += "\n";
  if (!c.detail.empty()) s += c.detail + (c.detail.back() == '\n' ? "" : "\n");
  if (c.detail.empty() && c.tests_total > 0) {
    s += fmt::format("{} of {} correctness tests passed.\n", c.tests_passed, c.tests_total);
  }
  for (std::size_t i = 0; i < c.failed.size() && i < max_failed; ++i) {
    s += "\nx " + c.failed[i].name + "\n" + indent(c.failed[i].message, 4);
  }
  if (c.failed.size() > max_failed) s += fmt::format("... and {} more failed tests\n", c.failed.size() - max_failed);
  if (!c.hints.empty()) s += "\n";
  for (const ReportHint& h : c.hints) s += "Hint (" + h.group + "): " + h.text + "\n";
  return s;
}

std::string performance_report(const Chapter& c) {
  const std::string why = unmeasured_reason(c);
  const std::string numbers = c.graded() ? bandwidth_text(c) : "";
  std::string s = why.empty() ? (c.bandwidth_passed ? "Fast enough.\n" : "Not fast enough yet.\n") : why + "\n";
  if (!numbers.empty()) s += numbers + "\n";
  return s;
}

}  // namespace grader::view
