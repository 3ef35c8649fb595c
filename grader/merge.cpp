#include "merge.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "exit_status.hpp"
#include "formats.hpp"
#include "report.hpp"
#include "text.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {

int merge_class(const std::string& out_dir, const workbook::Manifest& manifest, const std::string& ids_file,
                const std::vector<std::string>& slugs) {
  std::map<std::string, std::string> ids;
  if (!ids_file.empty()) {
    std::string error;
    ids = read_id_mapping(read_bounded(ids_file, std::size_t(64) << 20), &error);
    if (!error.empty()) {
      fmt::print(stderr, "grader: {}: {}\n", ids_file, error);
      return code(Exit::cannot);
    }
  }
  std::vector<json> reports;
  std::vector<std::string> unreadable;
  std::vector<fs::path> dirs;
  std::error_code ec;
  for (auto it = fs::directory_iterator(out_dir, ec); !ec && it != fs::end(it); it.increment(ec)) {
    if (it->is_directory(ec) && fs::exists(it->path() / "report.json", ec)) dirs.push_back(it->path());
  }
  std::sort(dirs.begin(), dirs.end());
  for (const fs::path& dir : dirs) {
    try {
      std::ifstream in(dir / "report.json");
      json doc = json::parse(in);
      if (const int schema = doc.get<ReportDocument>().schema; schema != kReportSchema) {
        unreadable.push_back(fmt::format("{}: report schema {} (this grader writes {}; grade it again)",
                                         dir.filename().string(), schema, kReportSchema));
        continue;
      }
      reports.push_back(std::move(doc));
    } catch (const std::exception& e) {
      unreadable.push_back(fmt::format("{}: unreadable report ({})", dir.filename().string(), e.what()));
    }
  }
  for (const auto& [submission, student] : ids) {
    if (!std::any_of(reports.begin(), reports.end(), [&](const json& r) {
          const ReportDocument d = r.get<ReportDocument>();
          return d.id == submission || d.name == submission;
        })) {
      fmt::print("  note: {} maps {}, which has no report\n", ids_file, submission);
    }
  }
  std::vector<std::string> columns = slugs;
  if (columns.empty()) {
    for (const workbook::ChapterSpec& c : manifest.chapters) columns.push_back(c.slug);
  }
  std::string summary = class_summary(reports, columns);
  for (const std::string& u : unreadable) summary += "  " + u + "\n";
  const fs::path out = out_dir;
  std::vector<std::string> problems;
  for (const auto& [name, text] :
       {std::pair<std::string, std::string>{"gradebook.csv", gradebook_csv(reports, columns, ids)},
        {"junit.xml", junit_xml(reports)},
        {"summary.txt", summary}}) {
    const std::string why = write_atomically((out / name).string(), text);
    if (!why.empty()) problems.push_back(why);
  }
  fmt::print("\n{}\n", summary);
  for (const std::string& p : problems) fmt::print(stderr, "grader: {}\n", p);
  if (!problems.empty()) return code(Exit::cannot);
  fmt::print("class reports of {} submission{}: {}/gradebook.csv, junit.xml, summary.txt\n", reports.size(),
             reports.size() == 1 ? "" : "s", out_dir);
  return code(Exit::ok);
}

}  // namespace grader
