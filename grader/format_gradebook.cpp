// The gradebook CSV and the id mapping, from a report (formats.hpp).
#include "formats.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>

#include <fmt/format.h>

#include "report_view.hpp"
#include "text.hpp"

using nlohmann::json;

namespace grader {
using namespace view;

namespace {

// One RFC 4180 field: valid UTF-8; a leading = + - @ tab or CR (a formula to
// a spreadsheet) behind an apostrophe; quoted when it holds , " CR or LF.
std::string csv_field(const std::string& raw) {
  std::string v = valid_utf8(raw);  // drops CR, so a leading CR is looked for in `raw`
  const bool formula = (!raw.empty() && raw.front() == '\r') ||
                       (!v.empty() && std::string_view("=+-@\t").find(v.front()) != std::string_view::npos);
  if (formula) v = "'" + v;
  if (v.find_first_of(",\"\r\n") == std::string::npos) return v;
  std::string quoted = "\"";
  for (const char ch : v) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return quoted + "\"";
}

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

std::string trim(const std::string& s) {
  const std::size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

}  // namespace

std::string gradebook_csv(const std::vector<json>& reports, const std::vector<std::string>& slugs,
                          const std::map<std::string, std::string>& ids) {
  std::string out = "student";
  for (const std::string& slug : slugs) out += "," + csv_field(slug);
  out += ",total,max_points,status\r\n";
  std::vector<std::pair<std::string, std::string>> rows;  // student, the rest of the row
  for (const json& one : reports) {
    const Report r = report_of(one);
    // The mapping names a submission as it was handed in, or by its folder-safe id.
    auto mapped = ids.find(r.name);
    if (mapped == ids.end()) mapped = ids.find(r.id);
    const std::string student = mapped != ids.end() ? mapped->second : r.name;
    std::string row;
    for (const std::string& slug : slugs) {
      const auto c = std::find_if(r.views.begin(), r.views.end(), [&](const Chapter& ch) { return ch.slug == slug; });
      row += ",";
      if (r.graded && c != r.views.end() && c->graded()) row += csv_field(points_text(c->points));
    }
    row += "," + (r.graded ? csv_field(points_text(r.points)) : "");
    row += "," + csv_field(points_text(r.max_points));
    const std::string status = !r.graded
                                   ? (r.not_graded_reason.empty() ? "not graded" : "not graded: " + r.not_graded_reason)
                               : !r.complete || r.interrupted ? "incomplete"
                                                              : "graded";
    row += "," + csv_field(status);
    rows.emplace_back(student, row);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [student, row] : rows) out += csv_field(student) + row + "\r\n";
  return out;
}

std::map<std::string, std::string> read_id_mapping(const std::string& csv_text, std::string* error) {
  using Mapping = std::map<std::string, std::string>;
  Mapping ids;
  std::map<std::string, std::size_t> listed_on;
  const auto fail = [&](std::size_t line, const std::string& why) -> Mapping {
    if (error) *error = valid_utf8(fmt::format("line {}: {}", line, why));
    return {};
  };
  std::string_view s = csv_text;
  if (starts_with(s, "\xEF\xBB\xBF")) s.remove_prefix(3);  // a byte order mark, as spreadsheets write
  std::size_t pos = 0, line = 1;
  bool header = false;
  while (pos < s.size()) {
    const std::size_t record_line = line;
    std::vector<std::string> fields;
    for (;;) {
      std::string field;
      if (pos < s.size() && s[pos] == '"') {
        for (++pos;; ++pos) {
          if (pos >= s.size()) return fail(record_line, "a quoted field is not closed");
          if (s[pos] == '"') {
            if (pos + 1 < s.size() && s[pos + 1] == '"') {
              field += '"';
              ++pos;
              continue;
            }
            ++pos;
            break;
          }
          if (s[pos] == '\n') ++line;
          field += s[pos];
        }
        if (pos < s.size() && s[pos] != ',' && s[pos] != '\r' && s[pos] != '\n') {
          return fail(line, "text after the closing quote of a field");
        }
      } else {
        for (; pos < s.size() && s[pos] != ',' && s[pos] != '\r' && s[pos] != '\n'; ++pos) {
          if (s[pos] == '"') return fail(line, "a quote inside a field that does not start with one");
          field += s[pos];
        }
        field = trim(field);
      }
      fields.push_back(field);
      if (pos < s.size() && s[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < s.size() && s[pos] == '\r') ++pos;
      if (pos < s.size() && s[pos] == '\n') ++pos;
      ++line;
      break;
    }
    if (fields.size() == 1 && fields[0].empty()) continue;  // a blank line
    if (!header) {
      if (fields.size() != 2 || lower(fields[0]) != "submission" || lower(fields[1]) != "student") {
        return fail(record_line, "the first line must be the header 'submission,student'");
      }
      header = true;
      continue;
    }
    if (fields.size() != 2) {
      return fail(record_line, fmt::format("{} fields; a line is 'submission,student'", fields.size()));
    }
    if (fields[0].empty() || fields[1].empty()) return fail(record_line, "an empty submission or student");
    const auto [it, added] = listed_on.emplace(fields[0], record_line);
    if (!added) {
      return fail(record_line,
                  fmt::format("submission '{}' is listed twice (first on line {})", fields[0], it->second));
    }
    ids[fields[0]] = fields[1];
  }
  if (!header) return fail(1, "the file is empty; its first line must be the header 'submission,student'");
  if (error) error->clear();
  return ids;
}

}  // namespace grader
