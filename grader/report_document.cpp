#include "report_document.hpp"

#include <algorithm>
#include <cmath>

#include "json_fields.hpp"

using nlohmann::json;

namespace grader {
namespace {

using namespace json_fields;

json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// Points as integers where they are whole (they mostly are): 7, not 7.0.
json points(double v) {
  return std::floor(v) == v && std::fabs(v) < 9007199254740992.0 ? json(static_cast<long long>(v)) : json(v);
}

// A test's result word, as the channel names it; none for any other value.
std::optional<workbook::channel::Result> test_result(const json& t) {
  const json word = text(t, "result");
  const auto r = word.get<workbook::channel::Result>();
  return json(r) == word ? std::optional(r) : std::nullopt;
}

}  // namespace

void to_json(json& j, const ChapterReport& c) {
  j = {{"slug", c.slug},
       {"version", c.version},
       {"title", c.title},
       {"detail", c.detail},
       {"tests_passed", c.tests_passed},
       {"tests_total", c.tests_total},
       {"correctness_passed", c.correctness_passed},
       {"correctness_points", points(c.correctness_points)},
       {"max_correctness_points", points(c.max_correctness)},
       {"bandwidth_passed", c.bandwidth_passed},
       {"performance_points", points(c.performance_points)},
       {"max_performance_points", points(c.max_performance)},
       {"points", points(c.points)},
       {"max_points", points(c.max_points)},
       {"required_fraction", optional_number(c.required_fraction)},
       {"seconds", c.seconds},
       {"learner_gbps", optional_number(c.learner_gbps)},
       {"learner_ceiling_gbps", optional_number(c.learner_ceiling_gbps)},
       {"reference_gbps", optional_number(c.reference_gbps)},
       {"reference_ceiling_gbps", optional_number(c.reference_ceiling_gbps)},
       {"bandwidth_ratio", optional_number(c.bandwidth_ratio)},
       {"isolation", c.isolation},
       {"sandboxed", c.sandboxed},
       {"output_bytes", c.output_bytes},
       {"output_kept", c.output_kept}};
  put_status(j, c.status);
  if (!c.output_note.empty()) j["output_note"] = c.output_note;
  j["refusals"] = json::array();
  for (const ReportRefusal& f : c.refusals) j["refusals"].push_back({{"check", f.check}, {"reason", f.reason}});
  j["idea"] = json::array();
  for (const ReportIdea& n : c.idea)
    j["idea"].push_back({{"what", n.what}, {"shown", n.shown}, {"evidence", n.evidence}});
  j["tests"] = json::array();
  for (const ReportTest& t : c.tests) {
    j["tests"].push_back({{"name", t.name}, {"result", t.result ? json(*t.result) : json(nullptr)}});
  }
  j["failed_tests"] = json::array();
  for (const ReportFailure& f : c.failed) j["failed_tests"].push_back({{"name", f.name}, {"message", f.message}});
  j["hints"] = json::array();
  for (const ReportHint& h : c.hints) j["hints"].push_back({{"group", h.group}, {"text", h.text}});
}

void from_json(const json& j, ChapterReport& c) {
  c = ChapterReport{};
  c.slug = text(j, "slug", c.slug);
  c.version = text(j, "version");
  c.title = text(j, "title");
  c.status = status_of(j);
  c.detail = text(j, "detail");
  c.tests_passed = static_cast<int>(number(j, "tests_passed").value_or(0));
  c.tests_total = static_cast<int>(number(j, "tests_total").value_or(0));
  c.correctness_passed = flag(j, "correctness_passed", c.status.code() == Status::passed);
  c.bandwidth_passed = flag(j, "bandwidth_passed", false);
  c.points = number(j, "points").value_or(0);
  c.max_points = number(j, "max_points").value_or(0);
  // Reports before schema 3 have the chapter's points only: all of them count as correctness.
  c.performance_points = number(j, "performance_points").value_or(0);
  c.max_performance = number(j, "max_performance_points").value_or(0);
  c.correctness_points = number(j, "correctness_points").value_or(c.points - c.performance_points);
  c.max_correctness = number(j, "max_correctness_points").value_or(c.max_points - c.max_performance);
  c.required_fraction = number(j, "required_fraction");
  c.learner_gbps = number(j, "learner_gbps");
  c.learner_ceiling_gbps = number(j, "learner_ceiling_gbps");
  c.reference_gbps = number(j, "reference_gbps");
  c.reference_ceiling_gbps = number(j, "reference_ceiling_gbps");
  c.bandwidth_ratio = number(j, "bandwidth_ratio");
  c.seconds = std::max(0.0, number(j, "seconds").value_or(0));
  c.isolation = text(j, "isolation");
  c.sandboxed = flag(j, "sandboxed", false);
  c.output_bytes = count(j, "output_bytes");
  c.output_kept = count(j, "output_kept");
  c.output_note = text(j, "output_note");
  for (const json* f : objects(j, "refusals")) c.refusals.push_back({text(*f, "check"), text(*f, "reason")});
  for (const json* n : objects(j, "idea")) {
    c.idea.push_back({text(*n, "what"), flag(*n, "shown", false), text(*n, "evidence")});
  }
  for (const json* t : objects(j, "tests")) c.tests.push_back({text(*t, "name"), test_result(*t)});
  for (const json* f : objects(j, "failed_tests")) c.failed.push_back({text(*f, "name"), text(*f, "message")});
  for (const json* h : objects(j, "hints")) c.hints.push_back({text(*h, "group"), text(*h, "text")});
}

void to_json(json& j, const ReportDocument& r) {
  json device = nullptr;
  if (r.device) {
    device = {{"name", r.device->name},
              {"multiprocessors", r.device->multiprocessors ? json(*r.device->multiprocessors) : json(nullptr)},
              {"compute_capability", r.device->compute_capability},
              {"driver_cuda", r.device->driver_cuda},
              {"runtime_cuda", r.device->runtime_cuda}};
  }
  j = {{"schema", r.schema},
       {"grader_version", r.grader_version},
       {"submission",
        {{"id", r.id},
         {"name", r.name},
         {"source", r.source},
         {"chapters_dir", r.chapters_dir},
         {"fingerprint", r.fingerprint}}},
       {"seed", r.seed},
       {"date", r.date},
       {"seconds", optional_number(r.seconds)},
       {"device", device},
       {"graded", r.graded},
       {"not_graded_reason", r.not_graded_reason},
       {"interrupted", r.interrupted},
       {"sanitized", r.sanitized},
       {"isolation", r.isolation},
       {"complete", r.complete},
       {"points", points(r.points)},
       {"max_points", points(r.max_points)},
       {"chapters", r.chapters}};
}

void from_json(const json& j, ReportDocument& r) {
  r = ReportDocument{};
  r.schema = static_cast<int>(number(j, "schema").value_or(0));
  r.grader_version = text(j, "grader_version");
  const json& s = member(j, "submission");
  r.id = text(s, "id", r.id);
  r.name = text(s, "name", r.id);
  r.source = text(s, "source");
  r.chapters_dir = text(s, "chapters_dir");
  r.fingerprint = text(s, "fingerprint");
  r.seed = count(j, "seed");
  r.date = text(j, "date");
  r.seconds = number(j, "seconds");
  const json& d = member(j, "device");
  if (d.is_object()) {
    r.device =
        ReportDevice{text(d, "name", "a GPU"), text(d, "driver_cuda"), text(d, "runtime_cuda"),
                     number(d, "multiprocessors") ? std::optional<int>(static_cast<int>(*number(d, "multiprocessors")))
                                                  : std::nullopt,
                     static_cast<int>(number(d, "compute_capability").value_or(0))};
  }
  r.graded = flag(j, "graded", true);
  r.not_graded_reason = text(j, "not_graded_reason");
  r.interrupted = flag(j, "interrupted", false);
  r.sanitized = flag(j, "sanitized", false);
  r.isolation = text(j, "isolation");
  r.complete = flag(j, "complete", true);
  r.points = number(j, "points").value_or(0);
  r.max_points = number(j, "max_points").value_or(0);
  for (const json* c : objects(j, "chapters")) r.chapters.push_back(c->get<ChapterReport>());
}

std::string json_text(const nlohmann::json& doc) {
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace grader
