#include "judge/manifest.hpp"

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "judge/names.hpp"

namespace workbook {

const ChapterSpec* Manifest::find(const std::string& slug) const {
  for (const ChapterSpec& c : chapters) {
    if (c.slug == slug) return &c;
  }
  return nullptr;
}

namespace {

// The chapter's stepped hints: two or three, each a non-empty hint and the lesson section that
// explains it.
std::vector<ChapterSpec::HintStep> load_steps(const nlohmann::json& chapter, const std::string& slug) {
  constexpr std::size_t min_steps = 2, max_steps = 3;
  if (!chapter.contains("steps") || !chapter.at("steps").is_array()) {
    throw std::runtime_error(fmt::format("chapter {}: steps must be a list of {} or {} {{\"hint\", \"lesson\"}}", slug,
                                         min_steps, max_steps));
  }
  const nlohmann::json& list = chapter.at("steps");
  if (list.size() < min_steps || list.size() > max_steps) {
    throw std::runtime_error(fmt::format("chapter {}: {} step{}, expected {} or {}", slug, list.size(),
                                         list.size() == 1 ? "" : "s", min_steps, max_steps));
  }
  std::vector<ChapterSpec::HintStep> steps;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const nlohmann::json& s = list[i];
    const auto text = [&](const char* field) {
      if (!s.is_object() || !s.contains(field) || !s.at(field).is_string()) {
        throw std::runtime_error(fmt::format("chapter {}: step {} has no \"{}\" text", slug, i + 1, field));
      }
      std::string value = s.at(field).get<std::string>();
      if (value.find_first_not_of(" \t\n") == std::string::npos) {
        throw std::runtime_error(fmt::format("chapter {}: step {} has an empty \"{}\"", slug, i + 1, field));
      }
      return value;
    };
    steps.push_back({text("hint"), text("lesson")});
  }
  return steps;
}

}  // namespace

namespace {

// "sm_90" -> 90; 0 for anything else.
int required_compute_capability(const std::string& feature) {
  if (feature.size() < 5 || feature.compare(0, 3, "sm_") != 0) return 0;
  if (!std::all_of(feature.begin() + 3, feature.end(), [](char c) { return c >= '0' && c <= '9'; })) return 0;
  return std::stoi(feature.substr(3));
}

}  // namespace

// "gpus_2" -> 2; 0 for anything else.
int required_gpus(const std::string& feature) {
  if (feature.size() < 6 || feature.compare(0, 5, "gpus_") != 0) return 0;
  if (!std::all_of(feature.begin() + 5, feature.end(), [](char c) { return c >= '0' && c <= '9'; })) return 0;
  return std::stoi(feature.substr(5));
}

int gpus_needed(const ChapterSpec& spec) {
  int most = 1;
  for (const std::string& feature : spec.requires_features) most = std::max(most, required_gpus(feature));
  return most;
}

Unmet unmet_requirement(const ChapterSpec& spec, const Capabilities& have) {
  using Need = Unmet::Need;
  for (const std::string& feature : spec.requires_features) {
    if (feature == "cooperative_launch" && !have.cooperative_launch) return {Need::cooperative_launch, feature};
    if (feature == "nccl" && !have.nccl) return {Need::nccl, "NCCL"};
    const int cc = required_compute_capability(feature);
    if (cc > 0 && have.compute_capability < cc) return {Need::compute_capability, feature};
    const int gpus = required_gpus(feature);
    if (gpus > 0 && have.gpus < gpus) return {Need::gpus, fmt::format("{} GPUs", gpus)};
  }
  return {};
}

std::string given_problem(const std::string& file) {
  const std::filesystem::path rel(file);
  bool parent = false;
  for (const std::filesystem::path& part : rel) parent = parent || part == "..";
  if (rel.is_absolute() || parent || file.rfind("workbook/", 0) != 0 || file == "workbook/chapter.cuh" ||
      file == "workbook/contract.hpp") {
    return fmt::format(
        "'{}': expected a header of the harness, workbook/<name> (not chapter.cuh or contract.hpp, "
        "which every chapter may include), without ..",
        file);
  }
  return "";
}

Manifest load_manifest(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error(fmt::format("cannot open the manifest {}", path));
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(file);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}: {}", path, e.what()));
  }
  return manifest_from_json(doc, path);
}

Manifest manifest_from_json(const nlohmann::json& doc, const std::string& path) {
  Manifest manifest;
  try {
    for (const auto& c : doc.at("chapters")) {
      ChapterSpec spec;
      spec.slug = c.at("slug").get<std::string>();
      spec.version = c.at("version").get<std::string>();
      spec.title = c.at("title").get<std::string>();
      spec.kind = c.at("kind").get<std::string>();
      spec.correctness_points = c.at("points").at("correctness").get<int>();
      spec.performance_points = c.at("points").at("performance").get<int>();
      spec.bandwidth_fraction = c.at("bandwidth_fraction").get<double>();
      spec.timeout_s = c.at("timeout_s").get<int>();
      if (c.contains("limits")) {
        const nlohmann::json& l = c.at("limits");
        constexpr double kGiB = 1073741824.0;
        if (l.contains("host_memory_gib"))
          spec.host_memory_bytes = static_cast<std::uint64_t>(l.at("host_memory_gib").get<double>() * kGiB);
        if (l.contains("gpu_memory_gib"))
          spec.gpu_memory_bytes = static_cast<std::uint64_t>(l.at("gpu_memory_gib").get<double>() * kGiB);
      }
      spec.deterministic = c.value("deterministic", true);
      spec.tuned = c.value("tuned", false);
      spec.generic = c.value("generic", false);
      spec.ranks = c.value("ranks", false);
      spec.requires_features = c.value("requires", std::vector<std::string>{});
      for (const std::string& feature : spec.requires_features) {
        if (feature != "cooperative_launch" && feature != "nccl" && required_compute_capability(feature) == 0 &&
            required_gpus(feature) < 2) {
          throw std::runtime_error(fmt::format(
              "chapter {}: requires '{}', which is none of cooperative_launch, sm_NN, gpus_N (N >= 2) and nccl",
              spec.slug, feature));
        }
      }
      spec.given = c.value("given", std::vector<std::string>{});
      for (std::size_t k = 0; k < spec.given.size(); ++k) {
        if (const std::string why = given_problem(spec.given[k]); !why.empty()) {
          throw std::runtime_error(
              fmt::format("manifest: chapters[{}].given[{}] ({}): {}", manifest.chapters.size(), k, spec.slug, why));
        }
      }
      spec.hints = c.at("hints").get<std::map<std::string, std::string>>();
      if (spec.kind != "block_pass" && spec.kind != "full") {
        throw std::runtime_error(fmt::format("chapter {}: kind must be block_pass or full", spec.slug));
      }
      if (spec.tuned && spec.kind != "full") {
        throw std::runtime_error(fmt::format("chapter {}: only a full chapter can be tuned", spec.slug));
      }
      if (spec.generic && (spec.kind != "full" || spec.tuned)) {
        throw std::runtime_error(fmt::format("chapter {}: a generic chapter is a full chapter, not tuned", spec.slug));
      }
      if (spec.ranks && (spec.kind != "full" || spec.tuned || spec.generic || gpus_needed(spec) < 2 ||
                         std::find(spec.requires_features.begin(), spec.requires_features.end(), "nccl") ==
                             spec.requires_features.end())) {
        throw std::runtime_error(fmt::format(
            "chapter {}: a chapter over several GPUs is a full chapter, neither tuned nor generic, and requires "
            "gpus_N (N >= 2) and nccl",
            spec.slug));
      }
      for (const auto& [group, hint] : spec.hints) {
        if (!names::is_group(group)) {
          throw std::runtime_error(fmt::format(
              "chapter {}: a hint for '{}', which is no test group (judge/names.hpp lists them)", spec.slug, group));
        }
      }
      if (spec.bandwidth_fraction <= 0 || spec.bandwidth_fraction > 1.5) {
        throw std::runtime_error(fmt::format("chapter {}: bandwidth_fraction out of range", spec.slug));
      }
      spec.steps = load_steps(c, spec.slug);
      manifest.chapters.push_back(std::move(spec));
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}: {}", path, e.what()));
  }
  return manifest;
}

}  // namespace workbook
