#include "progress.hpp"

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "report.hpp"
#include "text.hpp"
#include "workbook/names.hpp"

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

std::optional<double> number(const json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number()) return std::nullopt;
  return j[key].get<double>();
}

std::string save(json doc) {
  doc["schema"] = kSchema;
  return write_atomically(progress_path(), doc.dump(2) + "\n");
}

}  // namespace

std::string progress_path() { return (fs::path(WORKBOOK_BINARY_DIR) / "progress.json").string(); }

Progress load_progress(const std::string& chapters_dir) {
  Progress p;
  const json all = load_all();
  const json trees = all.value("trees", json::object());
  const json tree = trees.value(key_of(chapters_dir), json::object());
  const json chapters = tree.value("chapters", json::object());
  const json hints = tree.value("hints", json::object());
  for (const auto& [slug, c] : chapters.items()) {
    ChapterProgress cp;
    cp.status = c.value("status", "");
    cp.detail = c.value("detail", "");
    cp.date = c.value("date", "");
    cp.points = c.value("points", 0.0);
    cp.max_points = c.value("max_points", 0);
    cp.learner_gbps = number(c, "learner_gbps");
    cp.bandwidth_ratio = number(c, "bandwidth_ratio");
    cp.required_fraction = c.value("required_fraction", 0.0);
    p.chapters[slug] = cp;
  }
  for (const auto& [slug, n] : hints.items()) {
    if (n.is_number_integer()) p.hints_shown[slug] = n.get<int>();
  }
  return p;
}

std::string record_progress(const GradingRun& run) {
  json all = load_all();
  json& tree = all["trees"][key_of(run.chapters_dir)];
  for (const ChapterResult& r : run.chapters) {
    // A chapter the run never got to keeps its last result.
    if (workbook::names::status::outcome_of(r.status) == workbook::names::status::Outcome::unknown) continue;
    json c = {{"status", r.status}, {"detail", first_lines(valid_utf8(r.detail), 1)}, {"date", run.date},
              {"points", r.points}, {"max_points", r.max_points()}, {"required_fraction", r.spec->bandwidth_fraction}};
    c["learner_gbps"] = r.learner_gbps ? json(*r.learner_gbps) : json(nullptr);
    c["bandwidth_ratio"] = r.bandwidth_ratio ? json(*r.bandwidth_ratio) : json(nullptr);
    tree["chapters"][r.spec->slug] = c;
  }
  return save(all);
}

std::string record_hints(const std::string& chapters_dir, const std::string& slug, int shown) {
  json all = load_all();
  all["trees"][key_of(chapters_dir)]["hints"][slug] = shown;
  return save(all);
}

}  // namespace grader
