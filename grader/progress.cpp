#include "progress.hpp"

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "json_fields.hpp"
#include "judge/names.hpp"
#include "report.hpp"
#include "text.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {
namespace {

constexpr int kSchema = 1;

json load_all() {
  std::ifstream in(progress_path());
  if (!in) return json::object();
  try {
    json doc = json::parse(in);
    if (doc.is_object() && doc.value("schema", 0) == kSchema) return doc;
  } catch (const std::exception&) {
  }
  return json::object();  // unreadable or older: start again rather than fail
}

std::string key_of(const std::string& chapters_dir) {
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(chapters_dir, ec);
  return ec ? chapters_dir : p.string();
}

std::string save(json doc) {
  doc["schema"] = kSchema;
  return write_atomically(progress_path(), json_text(doc));
}

}  // namespace

void to_json(json& j, const ChapterProgress& c) {
  j = {{"detail", c.detail},
       {"date", c.date},
       {"points", c.points},
       {"max_points", c.max_points},
       {"required_fraction", c.required_fraction},
       {"learner_gbps", c.learner_gbps ? json(*c.learner_gbps) : json(nullptr)},
       {"bandwidth_ratio", c.bandwidth_ratio ? json(*c.bandwidth_ratio) : json(nullptr)}};
  put_status(j, c.status);
}

void from_json(const json& j, ChapterProgress& c) {
  using namespace json_fields;
  c = ChapterProgress{};
  c.status = status_of(j);
  c.detail = text(j, "detail");
  c.date = text(j, "date");
  c.points = number(j, "points").value_or(0);
  c.max_points = static_cast<int>(number(j, "max_points").value_or(0));
  c.learner_gbps = number(j, "learner_gbps");
  c.bandwidth_ratio = number(j, "bandwidth_ratio");
  c.required_fraction = number(j, "required_fraction").value_or(0);
}

std::string progress_path() { return (fs::path(WORKBOOK_BINARY_DIR) / "progress.json").string(); }

Progress load_progress(const std::string& chapters_dir) {
  Progress p;
  using json_fields::member;
  const json all = load_all();
  const json& tree = member(member(all, "trees"), key_of(chapters_dir).c_str());
  const json& chapters = member(tree, "chapters");
  if (chapters.is_object()) {
    for (const auto& [slug, c] : chapters.items()) p.chapters[slug] = c.get<ChapterProgress>();
  }
  const json& hints = member(tree, "hints");
  if (hints.is_object()) {
    for (const auto& [slug, n] : hints.items()) {
      if (n.is_number_integer()) p.hints_shown[slug] = n.get<int>();
    }
  }
  return p;
}

std::string record_progress(const GradingRun& run) {
  json all = load_all();
  json& tree = all["trees"][key_of(run.chapters_dir)];
  for (const ChapterResult& r : run.chapters) {
    // A chapter the run never got to keeps its last result.
    if (r.status.outcome() == Outcome::unknown) continue;
    tree["chapters"][r.spec->slug] = ChapterProgress{r.status,          first_lines(valid_utf8(r.detail), 1),
                                                     run.date,          r.points,
                                                     r.max_points(),    r.learner_gbps,
                                                     r.bandwidth_ratio, r.spec->bandwidth_fraction};
  }
  return save(all);
}

std::string record_hints(const std::string& chapters_dir, const std::string& slug, int shown) {
  json all = load_all();
  all["trees"][key_of(chapters_dir)]["hints"][slug] = shown;
  return save(all);
}

}  // namespace grader
